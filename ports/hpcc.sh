# shellcheck shell=bash disable=SC2154 # (the variables of the script that sources it)
# ports/hpcc.sh -- the HPC Challenge suite (hpcc 1.5.0) of ports/programs and ports/hosts:
# sourced by them, with lib.sh's variables (port, work, jobs).  Under UCX Debian's hpcc (built
# against Open MPI) runs over either UCX; under MPICH each MPICH build gets its own, built
# with its mpicc, as IMB does (ports/imb.sh).

# hpcc_prepare: under UCX Debian's hpcc; under MPICH its source built with each build's
# mpicc ($work/programs/hpcc-BUILD/hpcc), from HPL's template for a Fortran BLAS.
hpcc_prepare() {
    vmatch_deps hpcc libblas-dev
    [ "$port" = mpich ] || return 0
    local top=$work/programs orig b dir
    orig=$top/hpcc_1.5.0.orig.tar.gz
    mkdir -p "$top"
    if [ ! -s "$orig" ]; then
        ensure_deb_src
        # the mirror may serve the upstream tarball and the .dsc but not Debian's own part:
        # only the tarball is needed, and the .dsc's checksum says it is Debian's
        (cd "$top" && apt-get source -qq --download-only hpcc >/dev/null 2>&1) || true
        grep -q "$(sha256sum "$orig" 2>/dev/null | cut -d' ' -f1) .* hpcc_1.5.0.orig.tar.gz" \
            "$top"/hpcc_1.5.0-*.dsc 2>/dev/null || {
            echo "ports/${0##*/}: no hpcc_1.5.0.orig.tar.gz matching Debian's .dsc" >&2
            return 1
        }
    fi
    for b in stock patched; do
        dir=$top/hpcc-$b
        [ "$dir/hpcc" -nt "$work/$b/install/lib/libmpi.so" ] && continue
        log "building hpcc with the $b MPICH's mpicc ($dir/build.log)"
        rm -rf "$dir" && mkdir -p "$dir"
        tar xzf "$orig" -C "$dir" --strip-components=1
        sed -e "s|^MPdir .*|MPdir =|; s|^MPinc .*|MPinc =|; s|^MPlib .*|MPlib =|" \
            -e "s|^LAdir .*|LAdir =|; s|^LAlib .*|LAlib = -lblas|" \
            -e "s|^CC .*|CC = $work/$b/install/bin/mpicc|; s|^LINKER .*|LINKER = \$(CC)|" \
            -e "s|^CCFLAGS .*|CCFLAGS = \$(HPL_DEFS) -O2 -fcommon|" \
            "$dir/hpl/setup/Make.Linux_PII_FBLAS" >"$dir/hpl/Make.vmatch"
        nice make -C "$dir" arch=vmatch -j"$jobs" >"$dir/build.log" 2>&1 || true
        if [ ! -x "$dir/hpcc" ]; then # (its make ignores some errors of its own)
            echo "ports/${0##*/}: hpcc did not build ($dir/build.log)" >&2
            return 1
        fi
    done
}

hpcc_setup() {
    sed "s/^2 *Ps/1            Ps/; s/^2 *Qs/$2            Qs/" \
        /usr/share/doc/hpcc/examples/_hpccinf.txt >"$1/hpccinf.txt"
}
hpcc_cmd() { [ "$port" = ucx ] && echo hpcc || echo "$work/programs/hpcc-$1/hpcc"; }
hpcc_summary() { sed -n '/Begin of Summary section/,/End of Summary section/p' "$1/hpccoutf.txt"; }
hpcc_check() {
    local f=$1/hpccoutf.txt
    [ -s "$f" ] || { echo "no hpccoutf.txt" && return; }
    hpcc_summary "$1" | grep -q '^Success=1$' || { echo "Success is not 1" && return; }
    if grep -q '[1-9][0-9]* tests completed and failed residual checks' "$f"; then
        echo "a residual check failed" && return
    fi
    if hpcc_summary "$1" | grep -q '^MPIRandomAccess\(_LCG\)\?_Errors=[^0]'; then
        echo "RandomAccess errors" && return
    fi
    echo ok
}
hpcc_figures() {
    # (the latencies in microseconds; -1 at one process)
    hpcc_summary "$1" | awk -F= '/^(AvgPingPongLatency_usec|RandomlyOrderedRingLatency_usec|MPIRandomAccess_GUPs|HPL_Tflops)=/ {
        sub(/_usec$/, "_us", $1); sub(/^AvgPingPong/, "PingPong", $1); sub(/^RandomlyOrderedRing/, "Ring", $1)
        printf "%s=%s ", $1, $2 }'
}
