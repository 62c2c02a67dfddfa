# shellcheck shell=bash disable=SC2154 # (the variables of ports/programs, which sources it)
# ports/imb.sh -- the Intel MPI Benchmarks of ports/programs (imb, imbp2p): sourced by it,
# with its variables (port, work, jobs, np, pdir).  Under UCX one build of IMB with Debian's
# mpicc (Open MPI) runs over either UCX; under MPICH each MPICH build gets its own, made with
# its mpicc, as hpcc does.

# imb_dir BUILD: the folder of IMB-MPI1 and IMB-P2P for BUILD (stock or patched): under UCX
# one for both, $work/programs/imb; under MPICH $work/programs/imb-BUILD.
imb_dir() {
    local d=$work/programs/imb
    [ "$port" = ucx ] || d+=-$1
    echo "$d/mpi-benchmarks-IMB-v2021.9.1"
}

# imb_prepare: IMB-MPI1 and IMB-P2P from $VMATCH_PEERS_DIR's tarball.  Under UCX built once
# with Debian's mpicc (Open MPI: the same binaries run over either UCX); under MPICH with
# each build's mpicc, and for IMB-MPI1's C++ sources the same wrapper driving g++ (-cc=g++:
# the ports' MPICH has no mpicxx), again when that MPICH was rebuilt.  Open MPI's C++
# bindings fail IMB's -Werror, and IMB does not use them: OMPI_SKIP_MPICXX.
imb_prepare() {
    local tar=${VMATCH_PEERS_DIR:-}/mpi-benchmarks-IMB-v2021.9.1.tar.gz b ib cc cxx
    if [ -z "${VMATCH_PEERS_DIR:-}" ] || [ ! -s "$tar" ]; then
        echo "ports/programs: imb needs the Intel MPI Benchmarks' release tarball:" \
            "set VMATCH_PEERS_DIR to the folder holding mpi-benchmarks-IMB-v2021.9.1.tar.gz" >&2
        return 2
    fi
    vmatch_deps gnuplot
    for b in $([ "$port" = ucx ] && echo stock || echo stock patched); do
        ib=$(imb_dir "$b") cc=mpicc cxx=mpicxx
        if [ "$port" = mpich ]; then
            cc=$work/$b/install/bin/mpicc cxx="$cc -cc=g++"
            [ "$ib/IMB-MPI1" -nt "$work/$b/install/lib/libmpi.so" ] && [ -x "$ib/IMB-P2P" ] && continue
        else
            [ -x "$ib/IMB-MPI1" ] && [ -x "$ib/IMB-P2P" ] && continue
        fi
        rm -rf "${ib%/*}" && mkdir -p "${ib%/*}"
        tar xzf "$tar" -C "${ib%/*}"
        log "building IMB-MPI1 and IMB-P2P with $(command -v "${cc%% *}") ($ib/build.log)"
        nice make -C "$ib" CC="$cc" CXX="$cxx" CPPFLAGS=-DOMPI_SKIP_MPICXX=1 -j"$jobs" IMB-MPI1 IMB-P2P \
            >"$ib/build.log" 2>&1 || { echo "ports/programs: IMB did not build ($ib/build.log)" >&2 && return 1; }
    done
}
imbp2p_prepare() { imb_prepare; }
imb_setup() { :; }
imbp2p_setup() { :; }
imb_cmd() {
    echo "$(imb_dir "$1")/IMB-MPI1 -npmin $np -msglog 0:20 -iter_policy off -iter 200" \
        "PingPong PingPing Sendrecv Exchange Allreduce Alltoall Gather Bcast"
}
imbp2p_cmd() { echo "$(imb_dir "$1")/IMB-P2P -msglog 20 -iter 200"; }
imb_check() {
    grep -q '^# All processes entering MPI_Finalize' "$1/output.txt" && echo ok ||
        echo "IMB did not reach MPI_Finalize"
}
imbp2p_check() { imb_check "$@"; } # (Stencil2D and 3D say they are invalid for 2 processes)
imb_figures() { :; }
imbp2p_figures() { :; }

# imb_table PDIR: PDIR/imb-table.md, per process count, benchmark and size: each build's
# median latency and patched / stock, the median of the repetitions' ratios (min-max);
# PDIR/imb-NP.png, latency against size of PingPong, Exchange, Alltoall, Allreduce and
# IMB-P2P's random patterns, both builds (gnuplot).
imb_table() {
    local d=$1 run n
    for run in "$d"/run-*; do
        [ -f "$run/output.txt" ] || continue
        n=${run##*-np} n=${n%-*}
        imb_rows "$run" | sed "s/^/$n $(basename "$run" | sed 's/^run-\([a-z]*\).*-\([0-9]*\)$/\1 \2/') /"
    done >"$d/imb-rows.txt"
    awk -v medians="$d/imb-medians.txt" 'function med(v, n,    i, j, t) {
            for (i = 2; i <= n; i++) { t = v[i]; for (j = i - 1; j >= 1 && v[j] > t; j--) v[j + 1] = v[j]; v[j + 1] = t }
            return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2 }
        { k = $1 SUBSEP $4 SUBSEP $5; if (!(k in seen)) { seen[k] = 1; order[++nk] = k }
          lat[k, $2, $3] = $6; if ($3 > maxr) maxr = $3 }
        END {
            print "| np | benchmark | bytes | stock us | patched us | patched / stock (min-max) | pairs |"
            print "|---|---|---|---|---|---|---|"
            for (i = 1; i <= nk; i++) {
                k = order[i]; split(k, a, SUBSEP); ns = np_ = nr = 0; lo = hi = ""
                for (r = 1; r <= maxr; r++) {
                    if ((k, "stock", r) in lat) s[++ns] = lat[k, "stock", r]
                    if ((k, "patched", r) in lat) p[++np_] = lat[k, "patched", r]
                    if (((k, "stock", r) in lat) && ((k, "patched", r) in lat) && lat[k, "stock", r] > 0) {
                        x = lat[k, "patched", r] / lat[k, "stock", r]; q[++nr] = x
                        if (lo == "" || x < lo) lo = x; if (hi == "" || x > hi) hi = x }
                }
                printf "| %s | %s | %s | %.2f | %.2f | %s | %d |\n", a[1], a[2], a[3], ns ? med(s, ns) : 0,
                    np_ ? med(p, np_) : 0, nr ? sprintf("%.2f (%.2f-%.2f)", med(q, nr), lo, hi) : "-", nr
                print a[1], a[2], a[3], ns ? med(s, ns) : 0, np_ ? med(p, np_) : 0 >medians
            }
        }' "$d/imb-rows.txt" >"$d/imb-table.md"
    echo "== $d/imb-table.md ($(($(wc -l <"$d/imb-table.md") - 2)) rows)"
    command -v gnuplot >/dev/null || return 0
    # shellcheck disable=SC2013 # (numbers)
    for n in $(cut -d' ' -f1 "$d/imb-medians.txt" | sort -un); do
        awk -v n="$n" '$1 == n && $3 > 0' "$d/imb-medians.txt" >"$d/imb-$n.dat"
        local plots="" b
        # shellcheck disable=SC2013 # (benchmark names)
        for b in $(cut -d' ' -f2 "$d/imb-$n.dat" | awk '!s[$0]++' |
            grep -xE 'PingPong|Exchange|Alltoall|Allreduce|Unirandom|Birandom|Corandom'); do
            plots+="'< grep \" $b \" $d/imb-$n.dat' using 3:4 with linespoints title '$b stock', "
            plots+="'< grep \" $b \" $d/imb-$n.dat' using 3:5 with linespoints dashtype 2 title '$b patched', "
        done
        gnuplot -e "set terminal pngcairo size 1100,700; set output '$d/imb-$n.png'; set logscale xy;
            set xlabel 'message size (bytes)'; set ylabel 'latency (us, median)'; set key outside;
            set title 'IMB, $n processes, $over: stock (solid) and patched (dashed)'; plot ${plots%, }" ||
            echo "   (gnuplot failed: no imb-$n.png)"
    done
}

