# shellcheck shell=bash disable=SC2154
# ports/lib.sh -- what the scripts of the ports (ports/NAME/build, check-patches, bench,
# test) share, written once.  A script sets
#   here          its own folder, ports/NAME (an absolute path)
#   port          NAME, Debian's source package: mpich, ucx
#   port_name     the name its messages give: MPICH, UCX
#   port_version  the upstream version of Debian's package: 4.0.2, 1.13.1
# and sources this file, which sets the paths below and defines functions; it runs nothing
# else.  The functions use these variables; what differs between the ports comes in as
# arguments or, for the bench, as functions the bench defines.

repo=$(cd "$here/../.." && pwd)
# The work directory of all ports (everything goes there, nothing into the repository)
ports=${VMATCH_PORTS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/vmatch-ports}
[[ $ports == /* ]] || ports=$PWD/$ports # a relative one: the scripts change directory
work=$ports/$port              # this port's
src=$work/$port-$port_version  # the source apt-get source unpacks
vm=$work/vmatch                # vmatch's install prefix
jobs=${VMATCH_JOBS:-2}         # make -j: the builds share the machine

# shellcheck source=scripts/deps.sh
. "$repo/scripts/deps.sh"

log() { printf '== %s\n' "$*"; }

# check_arg ARG CHOICE...: returns when ARG is one of the CHOICEs, else prints the usage
# line and exits 2.
check_arg() {
    local arg=$1 c
    shift
    for c in "$@"; do
        [ "$arg" != "$c" ] || return 0
    done
    local IFS='|'
    echo "usage: $0 [$*]" >&2
    exit 2
}

# ---- build ----

# build_deps PACKAGE...: installs what is missing of vmatch's build, dpkg-dev (apt-get
# source), patch and the port's own PACKAGEs.
build_deps() {
    # shellcheck disable=SC2086
    vmatch_deps $VMATCH_BUILD_DEPS dpkg-dev patch "$@"
}

# ensure_deb_src: unless apt knows the port's source package, a deb-src entry for bookworm
# main (as root), in its own file so the machine's list stays as it is.
ensure_deb_src() {
    if apt-cache showsrc "$port" 2>/dev/null | grep -q "^Version: $port_version"; then
        return 0
    fi
    if [ "$(id -u)" -ne 0 ]; then
        echo "ports/$port: no deb-src entry for $port $port_version; add one as root" >&2
        return 1
    fi
    log "adding /etc/apt/sources.list.d/vmatch-deb-src.sources"
    cat >/etc/apt/sources.list.d/vmatch-deb-src.sources <<'EOF'
# Added by vmatch ports/*/build: source packages for apt-get source.
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
    apt-get update -qq
}

# fetch_source FILE: apt-get source into $work (dpkg-source applies Debian's patches),
# unless $src/FILE, a program of the unpacked source, is there already.
fetch_source() {
    [ ! -x "$src/$1" ] || return 0
    ensure_deb_src
    log "apt-get source $port ($work)"
    mkdir -p "$work"
    (cd "$work" && apt-get source -qq "$port" >/dev/null)
    [ -x "$src/$1" ] || {
        echo "ports/$port: apt-get source did not give $src" >&2
        return 1
    }
}

# build_vmatch NOTE: vmatch from this repository, Release without tests or benchmarks,
# installed into $vm.  VMATCH_REV: a git revision (default HEAD), or "worktree" for the
# working tree as it is.  NOTE is logged when the installed vmatch.h changed.
build_vmatch() {
    local note=$1 vsrc=$repo rev=${VMATCH_REV:-HEAD}
    if [ "$rev" != worktree ] && git -C "$repo" rev-parse --verify -q "$rev^{commit}" >/dev/null; then
        vsrc=$work/vmatch-src
        rm -rf "$vsrc" && mkdir -p "$vsrc"
        git -C "$repo" archive "$rev" | tar -x -C "$vsrc"
        rev=$(git -C "$repo" rev-parse --short "$rev")
    fi
    log "vmatch $rev -> $vm"
    # git archive dates the files at their commit, so after another revision's build the
    # objects can be newer than the sources and make would keep them (an older revision
    # links the newer objects; going back fails with multiple definitions): a build
    # directory per revision
    if [ "$(cat "$work/vmatch-build/.vmatch-rev" 2>/dev/null)" != "$vsrc $rev" ]; then
        rm -rf "$work/vmatch-build"
    fi
    cmake -S "$vsrc" -B "$work/vmatch-build" -DCMAKE_BUILD_TYPE=Release \
        -DVMATCH_BUILD_TESTS=OFF -DVMATCH_BUILD_BENCH=OFF >/dev/null
    nice -n 19 cmake --build "$work/vmatch-build" -j "$jobs" >/dev/null
    echo "$vsrc $rev" >"$work/vmatch-build/.vmatch-rev"
    # git archive dates every file at its commit, so each new revision would install the
    # headers with a newer time even when they are unchanged, and make would recompile the
    # port's files that include them.  An unchanged header keeps its old time.
    local hdr old=$work/vmatch-headers.installed
    rm -rf "$old" && mkdir -p "$old"
    for hdr in "$vm"/include/vmatch*.h; do
        [ -f "$hdr" ] && cp -p "$hdr" "$old/"
    done
    cmake --install "$work/vmatch-build" --prefix "$vm" >/dev/null
    for hdr in "$vm"/include/vmatch*.h; do
        if [ -f "$old/${hdr##*/}" ] && cmp -s "$hdr" "$old/${hdr##*/}"; then
            touch -r "$old/${hdr##*/}" "$hdr"
        elif [ -n "$(ls -A "$old")" ]; then
            log "${hdr##*/} changed: $note"
        fi
    done
    rm -rf "$old"
}

# vmatch_headers_newer PREFIX: true when a vmatch header in $vm is newer than the port's
# install in PREFIX.  The patched ports include vmatch.h and compile vmatch_inline.h's
# calls into their own code, so either one changed means a rebuild.
vmatch_headers_newer() {
    local hdr
    for hdr in "$vm"/include/vmatch*.h; do
        [ "$hdr" -nt "$1/.vmatch-installed" ] && return 0
    done
    return 1
}

# The configure environment that brings vmatch in, so that no build file is patched; the
# rpath lets the port's library find libvmatch.so at run time.
# shellcheck disable=SC2034
vmatch_env=(CPPFLAGS="-I$vm/include" LDFLAGS="-L$vm/lib -Wl,-rpath,$vm/lib" LIBS="-lvmatch")

# series_hash [PATCHES]: a hash of the patch series in PATCHES (default $here/patches), to
# know when the patched tree must be made again.
series_hash() {
    # shellcheck disable=SC2046
    (cd "${1:-$here/patches}" && cat series $(cat series)) | sha256sum | cut -c1-16
}

# prepare_patched_source [PATCHES SRC DIR]: DIR/src (default $work/patched/src), a fresh copy
# of SRC (default $src) with the series in PATCHES (default $here/patches) applied, unless
# the series is unchanged since the last copy.  The build directory stays: make then remakes
# only what the patches changed.
prepare_patched_source() {
    local pd=${1:-$here/patches} from=${2:-$src} dir=${3:-$work/patched} h p
    h=$(series_hash "$pd")
    if [ -f "$dir/src/.vmatch-series" ] && [ "$(cat "$dir/src/.vmatch-series")" = "$h" ]; then
        return 0
    fi
    log "applying ${pd#"$repo"/} to a copy of $from"
    rm -rf "$dir/src"
    mkdir -p "$dir"
    cp -a "$from" "$dir/src"
    while read -r p; do
        case $p in '' | '#'*) continue ;; esac
        patch -d "$dir/src" -p1 -s --no-backup-if-mismatch <"$pd/$p"
    done <"$pd/series"
    echo "$h" >"$dir/src/.vmatch-series"
}

# installed PREFIX KEY SRCDIR: true when PREFIX holds an install made with KEY (the
# configure arguments) after the series was last applied to SRCDIR.
installed() {
    [ -f "$1/.vmatch-installed" ] && [ "$(cat "$1/.vmatch-installed")" = "$2" ] &&
        [ ! "$3/.vmatch-series" -nt "$1/.vmatch-installed" ]
}

# configure_once LABEL BUILD KEY COMMAND...: runs COMMAND (configure and its arguments,
# at nice 19) in BUILD, emptied first, its output in BUILD/configure.log; not again while
# KEY stays the same.
configure_once() {
    local label=$1 build=$2 key=$3
    shift 3
    if [ -f "$build/.vmatch-configured" ] && [ "$(cat "$build/.vmatch-configured")" = "$key" ]; then
        return 0
    fi
    log "$label: configure (log: $build/configure.log)"
    rm -rf "$build" && mkdir -p "$build"
    (cd "$build" && nice -n 19 "$@" >configure.log 2>&1) || {
        tail -20 "$build/configure.log" >&2
        return 1
    }
    echo "$key" >"$build/.vmatch-configured"
}

# logged DIR LOG COMMAND...: runs COMMAND in DIR, its output in DIR/LOG; when it fails, the
# first 20 error lines of the log go to stderr.
logged() {
    local dir=$1 log=$1/$2
    shift 2
    (cd "$dir" && "$@") >"$log" 2>&1 || {
        grep -E 'error|Error' "$log" | head -20 >&2
        return 1
    }
}

# print_prefixes PROGRAM WIDTH BUILD...: "BUILD PORT_NAME:  prefix" for each BUILD
# installed (its bin/PROGRAM exists), the first column WIDTH wide.
print_prefixes() {
    local prog=$1 width=$2 b
    shift 2
    for b in "$@"; do
        [ -x "$work/$b/install/bin/$prog" ] && printf '%-*s %s\n' "$width" "$b $port_name:" "$work/$b/install"
    done
    return 0
}

# ---- check-patches ----

# check_patches CANDIDATE [PATCHES]: checks that the series in PATCHES (default
# $here/patches) applies cleanly, in order, to the port's source: CANDIDATE (a source tree
# or a .dsc file; the script's VMATCH_*_SRC), else the tree the build fetched, else a .dsc
# with its tarballs in $work.  Nothing is downloaded or built.  Without a source, or without
# patch or dpkg-source, it says so and exits 0 (a skip); it exits 1 when a patch does not
# apply or applies only with offsets or fuzz.
check_patches() {
    local cand=$1 pd=${2:-$here/patches} c tree dsc out p f series n
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    if [ -z "$cand" ]; then
        for c in "$src" "$work/${port}_$port_version"-*.dsc; do
            [ -e "$c" ] && { cand=$c; break; }
        done
    fi
    if [ -z "$cand" ] || [ ! -e "$cand" ]; then
        echo "ports/$port: skipped, no local $port_name $port_version source (ports/$port/build fetches it into $work)"
        exit 0
    fi
    command -v patch >/dev/null || {
        echo "ports/$port: skipped, the patch program is missing (apt-get install patch)"
        exit 0
    }
    tree=$cand
    if [ -f "$cand" ]; then
        # an unpacked copy of the cached source package (dpkg-source applies Debian's patches)
        command -v dpkg-source >/dev/null || {
            echo "ports/$port: skipped, $cand found but dpkg-source (dpkg-dev) is missing"
            exit 0
        }
        dsc=$(realpath "$cand") # dpkg-source runs in $tmp
        if ! out=$(cd "$tmp" && dpkg-source -q -x "$dsc" src 2>&1); then
            echo "ports/$port: dpkg-source cannot unpack $cand:" >&2
            echo "$out" >&2
            exit 1
        fi
        tree=$tmp/src
    fi

    # Only the files the series touches are copied, then every patch is applied for real
    # in order (a later patch may build on an earlier one in the same file).
    mkdir -p "$tmp/tree"
    series=$(grep -v '^\s*\(#\|$\)' "$pd/series")
    for p in $series; do
        sed -n 's|^--- a/\([^\t ]*\).*|\1|p' "$pd/$p"
    done | sort -u | while read -r f; do
        [ -f "$tree/$f" ] || continue # a file the series creates
        mkdir -p "$tmp/tree/$(dirname "$f")"
        cp "$tree/$f" "$tmp/tree/$f"
    done
    for p in $series; do
        if ! out=$(patch -d "$tmp/tree" -p1 -N --no-backup-if-mismatch -F0 <"$pd/$p" 2>&1); then
            echo "${pd#"$repo"/}/$p does not apply to $cand:" >&2
            echo "$out" >&2
            exit 1
        fi
        if echo "$out" | grep -qi 'offset\|fuzz'; then
            echo "${pd#"$repo"/}/$p applies only with offsets to $cand:" >&2
            echo "$out" >&2
            exit 1
        fi
    done
    n=$(echo "$series" | wc -w)
    echo "${pd#"$repo"/}: $n $([ "$n" = 1 ] && echo patch applies || echo patches apply) cleanly to $cand"
    rm -rf "$tmp"
    trap - EXIT
}

# ---- bench: queue-depth ping-pong, stock against patched in lockstep pairs ----
# The bench sets depths, iters, batches, reps (VMATCH_QDEPTH...), out (its results folder)
# and, optionally, lockstep (1, the default: the two runs of a pair take turns batch by
# batch; else one after the other), and defines two functions:
#   run_bg BUILD ARGS...      execs one MPI job of qdepth (ports/mpich/qdepth.c) over
#                             BUILD with ARGS, rank 0's output on stdout; the bench runs it
#                             as "run_bg ... &", so $! is the job's pid.  When it keeps the
#                             job's stderr in $tmp/BUILD.err, a failed pair shows its end.
#   check_affinity BUILD LINE prints the CPUs of qdepth's "# affinity" LINE (pinned_cpus),
#                             or stops the bench.

# bench_check: stops the bench (exit 2) unless $reps, $group, $iters and $batches are
# positive integers and $reps holds at least one group.
bench_check() {
    local v
    for v in reps group iters batches; do
        [[ ${!v} =~ ^[1-9][0-9]*$ ]] || {
            echo "ports/$port/bench: $v must be a positive integer, not '${!v}'" >&2
            exit 2
        }
    done
    [ "$reps" -ge "$group" ] || {
        echo "ports/$port/bench: VMATCH_QDEPTH_REPS ($reps) must be at least VMATCH_QDEPTH_GROUP ($group)" >&2
        exit 2
    }
}

# bench_tmp: $tmp, removed at exit, with the named pipes of lockstep runs.
bench_tmp() {
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    mkfifo "$tmp/first-0" "$tmp/first-1" "$tmp/second-0" "$tmp/second-1"
}

# bench_pair FIRST SECOND MODE: one run of each build, FIRST taking the first turn
# (lockstep) or running first; their outputs in $tmp/FIRST and $tmp/SECOND.
bench_pair() {
    local a=$1 b=$2 mode=$3 pa pb ended other rc=0
    if [ "${lockstep:-1}" != 1 ]; then
        (run_bg "$a" "$mode" "$depths" "$iters" "$batches") >"$tmp/$a"
        (run_bg "$b" "$mode" "$depths" "$iters" "$batches") >"$tmp/$b"
        return
    fi
    run_bg "$a" "$mode" "$depths" "$iters" "$batches" "$tmp" first >"$tmp/$a" &
    pa=$!
    run_bg "$b" "$mode" "$depths" "$iters" "$batches" "$tmp" second >"$tmp/$b" &
    pb=$!
    # A job that fails before opening its pipes leaves the other blocked in open(): when
    # the first job to end failed, end the other one (mpiexec takes its ranks along).
    wait -n -p ended "$pa" "$pb" || rc=$? # bash >= 5.1
    if [ "$rc" != 0 ]; then
        other=$([ "$ended" = "$pa" ] && echo "$pb" || echo "$pa")
        kill "$other" 2>/dev/null || true
        wait "$other" 2>/dev/null || true
        if [ -f "$tmp/$a.err" ]; then
            echo "ports/$port/bench: a $mode run failed (pair $a, $b):" >&2
            tail -n 5 "$tmp/$a.err" "$tmp/$b.err" >&2
        else
            echo "ports/$port/bench: a $mode run failed (pair $a, $b)" >&2
        fi
        exit 1
    fi
    wait "$pa" || rc=$?
    wait "$pb" || rc=$?
    [ "$rc" = 0 ] || {
        echo "ports/$port/bench: a $mode run failed (pair $a, $b)" >&2
        exit 1
    }
}

# pinned_cpus LINE: sets cpu0 and cpu1 to the CPUs rank 0 and rank 1 may run on, from
# qdepth's "# affinity 0:CPUS 1:CPUS" LINE; true when they are pinned: one CPU per rank,
# not the same one.
pinned_cpus() {
    cpu0=$(sed -n 's/^# affinity 0:\([^ ]*\) 1:.*/\1/p' <<<"$1")
    cpu1=$(sed -n 's/^# affinity 0:[^ ]* 1:\(.*\)$/\1/p' <<<"$1")
    [[ $cpu0 =~ ^[0-9]+$ && $cpu1 =~ ^[0-9]+$ && $cpu0 != "$cpu1" ]]
}

# bench_pairs MODES: $reps pairs per mode (MODES: comma-separated); which build goes first
# alternates from pair to pair and from mode to mode, so that neither build always has the
# first turn.  Writes $raw ($out/raw.txt), one line per run and depth: "build pair mode D"
# and qdepth's figures, and $batches_raw ($out/batches.txt), the same with every batch's
# latency; collects the CPUs of every run in $pins.  After each round (a pair of every
# mode) it says on stderr how long the rest will take.
bench_pairs() {
    local r m mode order b mode_list t0=$SECONDS
    IFS=, read -r -a mode_list <<<"$1"
    raw=$out/raw.txt batches_raw=$out/batches.txt
    : >"$raw"
    : >"$batches_raw"
    pins=""
    for r in $(seq "$reps"); do
        m=0
        for mode in "${mode_list[@]}"; do
            if [ $(((r + m) % 2)) = 1 ]; then order="stock patched"; else order="patched stock"; fi
            m=$((m + 1))
            # shellcheck disable=SC2086
            bench_pair $order "$mode"
            for b in stock patched; do
                pins="$pins$b:$(check_affinity "$b" "$(grep '^# affinity' "$tmp/$b" || true)")"$'\n'
                grep -v '^#' "$tmp/$b" | sed "s/^/$b $r /" >>"$raw"
                sed -n "s/^# batches /$b $r /p" "$tmp/$b" >>"$batches_raw"
            done
        done
        printf '== pair %d of %d done, %d s; about %d s to go\n' "$r" "$reps" \
            $((SECONDS - t0)) $(((SECONDS - t0) * (reps - r) / r)) >&2
    done
}

# bench_expect LAUNCH RT: prints the expected duration of bench_pairs.  A pair of runs
# side by side costs LAUNCH seconds (start-up, queue set-ups) plus, per depth, $batches
# batches of 1.1 x $iters round trips (with the warm-up) of each build at RT microseconds
# each (an average over the default depths and modes), the figures the bench measured on
# the 2-vCPU machine with another session compiling (load average 2-3).
bench_expect() {
    local nm nd
    nm=$(tr ',' '\n' <<<"$modes" | grep -c .)
    nd=$(tr ',' '\n' <<<"$depths" | grep -c .)
    awk -v l="$1" -v rt="$2" -v r="$reps" -v nm="$nm" -v nd="$nd" -v b="$batches" -v i="$iters" 'BEGIN {
        t = r * nm * (l + nd * b * 1.1 * i * 2 * rt * 1e-6)
        printf "expected duration: about %.0f s (%d pairs x %d modes x %d depths; longer under load)\n", t, r, nm, nd }'
}

# bench_pinning: one line per build and set of CPUs, how many runs had them.
bench_pinning() {
    printf '%s' "$pins" | sort | uniq -c | awk '{ split($2, a, ":")
        printf "pinning: %d %s runs: %s\n", $1, a[1],
            (a[2] == "unpinned" ? "NOT pinned (-bind-to none)" : "rank 0 on CPU " a[2] ", rank 1 on CPU " $3) }'
}

# bench_table COL MODES [TARGETS]: the table of $raw, a row per mode and depth, from each
# run's figure in column COL (5 median, 6 best): each build's median over its runs and its
# spread, the interquartile range over the median; the ratio patched / stock within each
# pair, its median and Q1-Q3 over the pairs; the same over the medians of $group
# consecutive pairs (a trailing incomplete group left out), on which the verdict rests;
# how many pairs; the preempted fraction; and a verdict in the cells of the TARGETS.
# TARGETS (whitespace-separated) are MODE:D:BOUND, for patched / stock <= BOUND at that
# cell: "met" when the grouped Q3 <= BOUND, "missed" when the grouped Q1 > BOUND, else
# "undecided".  After the table, each mode's latency growth from the first depth to the
# last, and one line per target (starting "D=", for bench_verdicts); a target whose cell
# was not run says so.
bench_table() {
    awk -v depths="$depths" -v col="$1" -v modes="$2" -v targets="${3:-}" -v group="${group:-1}" '
    function sort(v, n,    i, j, t) {
        for (i = 2; i <= n; i++) {
            t = v[i]
            for (j = i - 1; j >= 1 && v[j] > t; j--) v[j + 1] = v[j]
            v[j + 1] = t
        }
    }
    # the p-quantile of the sorted v[1..n], interpolated between order statistics
    # (Hyndman and Fan type 7, as R and numpy by default): p = 0.5 is the median
    function quant(v, n, p,    h, lo) {
        if (n == 0) return 0
        h = (n - 1) * p + 1; lo = int(h)
        return lo >= n ? v[n] : v[lo] + (h - lo) * (v[lo + 1] - v[lo])
    }
    # statistics of the list k into the globals N, M (median), Q1, Q3 and SP (the
    # spread, (Q3 - Q1) / M)
    function cell(k,    i, v) {
        N = cnt[k]
        for (i = 1; i <= N; i++) v[i] = val[k, i]
        sort(v, N)
        M = quant(v, N, 0.5); Q1 = quant(v, N, 0.25); Q3 = quant(v, N, 0.75)
        SP = M > 0 ? (Q3 - Q1) / M : 0
    }
    {
        b = $1; r = $2; mode = $3; d = $4
        k = b " " mode " " d; val[k, ++cnt[k]] = $col + 0
        k = "pre " mode " " d; val[k, ++cnt[k]] = $7 + 0
        run[b, r, mode, d] = $col + 0; if (r > maxr) maxr = r
    }
    END {
        n = split(depths, dd, ","); nm = split(modes, mm, ",")
        nt = split(targets, tt, " ")
        for (t = 1; t <= nt; t++) {
            split(tt[t], f, ":"); bound[f[1], f[2] + 0] = f[3]
        }
        print "| queue | D | stock: median (spread) | patched: median (spread) | patched / stock, pairs: median (Q1-Q3) | medians of " group ": median (Q1-Q3) | pairs | preempted | verdict |"
        print "|---|---|---|---|---|---|---|---|---|"
        for (m = 1; m <= nm; m++) {
            mode = mm[m]
            for (i = 1; i <= n; i++) {
                d = dd[i] + 0
                cell("stock " mode " " d); sm = M; ssp = SP
                cell("patched " mode " " d); pm = M; psp = SP
                cell("pre " mode " " d); pre = M
                # the pair ratios, and the median of each group of consecutive pairs
                k = "ratio " mode " " d; kg = "group " mode " " d; ng = 0
                for (r = 1; r <= maxr; r++) {
                    if (!((("stock", r, mode, d) in run) && (("patched", r, mode, d) in run) &&
                          run["stock", r, mode, d] > 0)) continue
                    x = run["patched", r, mode, d] / run["stock", r, mode, d]
                    val[k, ++cnt[k]] = x; g[++ng] = x
                    if (ng == group) {
                        sort(g, ng); val[kg, ++cnt[kg]] = quant(g, ng, 0.5); ng = 0
                    }
                }
                cell(k); rm = M; r1 = Q1; r3 = Q3; np = N
                cell(kg)
                v = "-"
                if ((mode, d) in bound) {
                    bd = bound[mode, d]
                    v = N == 0 ? "no pairs" : Q3 <= bd + 0 ? "met" : Q1 > bd + 0 ? "missed" : "undecided"
                    line[mode, d] = sprintf("D=%d %s: patched/stock %.3f (Q1-Q3 %.3f-%.3f, %d pairs); medians of %d pairs %.3f (Q1-Q3 %.3f-%.3f, %d groups); spread stock %.0f%%, patched %.0f%% - %s target <= %s",
                        d, mode, rm, r1, r3, np, group, M, Q1, Q3, N, 100 * ssp, 100 * psp,
                        v == "undecided" ? "undecided (IQR straddles the bound)" : v, bd)
                    v = v " (<= " bd ")"
                }
                printf "| %s | %d | %.3f (%.0f%%) | %.3f (%.0f%%) | %.3f (%.3f-%.3f) | %.3f (%.3f-%.3f) | %d | %.0f%% | %s |\n",
                    mode, d, sm, 100 * ssp, pm, 100 * psp, rm, r1, r3, M, Q1, Q3, np, 100 * pre, v
                med_s[mode, d] = sm; med_p[mode, d] = pm
            }
        }
        print ""
        print "spread: interquartile range / median of a build'"'"'s runs.  patched / stock: the ratio"
        print "within each pair, its median and quartiles over the pairs, and over the medians of"
        print group " consecutive pairs.  verdict (patched / stock <= bound), from the latter: met when"
        print "Q3 <= bound, missed when Q1 > bound, else undecided."
        print "preempted: median fraction of batches in which a rank had its CPU < 90% of the time."
        for (m = 1; m <= nm && n > 1; m++) {
            mode = mm[m]
            s0 = med_s[mode, dd[1]]; p0 = med_p[mode, dd[1]]
            sn = med_s[mode, dd[n]]; pn = med_p[mode, dd[n]]
            printf "%s: D=%d / D=%d latency (medians): stock %.2fx, patched %.2fx\n", mode,
                dd[n], dd[1], (s0 > 0 ? sn / s0 : 0), (p0 > 0 ? pn / p0 : 0)
        }
        if (nt) print ""
        for (t = 1; t <= nt; t++) {
            split(tt[t], f, ":")
            if ((f[1], f[2] + 0) in line) print line[f[1], f[2] + 0]
            else printf "D=%d %s: not run (D or mode not in this run) - not measured target <= %s\n", f[2], f[1], f[3]
        }
    }' "$raw"
}

# bench_verdicts TABLE: $out/verdicts.txt, dated, with the target lines of TABLE (the
# output of bench_table): "D=... MODE: ... - met|missed|undecided ... target <= BOUND".
bench_verdicts() {
    {
        echo "# ports/$port/bench $(date -u '+%Y-%m-%d %H:%M UTC'), vmatch $(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown)"
        grep '^D=' "$1" || true
    } >"$out/verdicts.txt"
}

# ---- test ----

# read_specs ARRAY VAR DEFAULT...: ARRAY gets the engine specs in the environment variable
# VAR, ';'-separated, when VAR is set ("" stands for vmatch's default spec, and so does an
# empty VAR); else the DEFAULTs.
read_specs() {
    local -n specs_out=$1
    local var=$2
    shift 2
    if [ -n "${!var+set}" ]; then
        IFS=';' read -r -a specs_out <<<"${!var}"
        [ ${#specs_out[@]} -gt 0 ] || specs_out=("")
    else
        specs_out=("$@")
    fi
}

# label SPEC: SPEC as a file name part, one per spec: "default" for the empty spec; a spec
# of letters, digits and . , : % = / and blanks with '=' as '-', blanks as '_' and '/' as
# '+' ("policy=single storage=llv": policy-single_storage-llv); any other spec with every
# other character as '_' and "@" and 8 hex digits of its hash after it, so that two specs
# never share a name (pnp-static: policy-pnp_static@...).
label() {
    [ -n "$1" ] || { echo default && return; }
    local l=$1
    l=${l//=/-} l=${l// /_} l=${l//\//+}
    [[ $1 =~ ^[A-Za-z0-9.,:%=/\ ]+$ ]] && echo "$l" ||
        echo "${l//[^A-Za-z0-9.,:%+_-]/_}@$(printf '%s' "$1" | sha256sum | cut -c1-8)"
}

# openmpi_deps: Debian's Open MPI (mpicc, mpirun), for the MPI programs over UCX.
openmpi_deps() {
    command -v mpicc >/dev/null && command -v mpirun >/dev/null && return 0
    vmatch_deps openmpi-bin libopenmpi-dev
}

# ---- Intel MPI Benchmarks' output (ports/programs imb, ports/hosts) ----

# imb_rows DIR: "benchmark bytes latency_us" for every row of IMB's tables in DIR/output.txt
# (the t[usec] column, or t_avg[usec]).
imb_rows() {
    awk '/^# Benchmarking / { b = $3 }
        /^ *#bytes/ { c = 0; for (i = 1; i <= NF; i++) if ($i == "t[usec]" || $i == "t_avg[usec]") c = i; next }
        /^ *[0-9]+ +[0-9]+ / && b != "" && c { print b, $1, $c }
        /^$/ { c = 0 }' "$1/output.txt"
}

# ---- test suites' results (runtests' TAP summaries) ----

# tap_results TAP: "program np #k" -> ok|fail|skip for each test of a TAP summary, sorted;
# k counts the runs of one program (other arguments or environment).  A skipped test (TAP's
# "# SKIP", e.g. MPICH's xfail tests, which runtests does not run) is "skip", not "ok".
tap_results() {
    awk '/^(not )?ok / { r = $1 == "ok" ? "ok" : "fail"; if (/# *SKIP/) r = "skip"
        sub(/^(not )?ok +[0-9]* *- */, ""); sub(/ +#.*$/, "")
        printf "%s #%d\t%s\n", $0, ++k[$0], r }' "$1" | LC_ALL=C sort
}

# tap_compare STOCK_TAP TAP NAME WHAT: the results of NAME (TAP) against stock's.  Fails
# when NAME fails a test that stock passes, when it did not run a test that stock passed,
# when the two have no test in common, or when stock passed none: a comparison of nothing
# proves nothing.
tap_compare() {
    local name=$3 d=$4
    LC_ALL=C join -t $'\t' -a 1 -a 2 -e none -o 0,1.2,2.2 <(tap_results "$1") <(tap_results "$2") |
        awk -F'\t' -v n="$name" -v d="$d" '
            $2 != "none" && $3 != "none" { common++ }
            $2 == "ok" { stock_ok++ }
            $2 == "ok" && $3 == "fail" { printf "   differs: %s: stock ok, %s fails\n", $1, n; bad = 1 }
            $2 == "fail" && $3 == "ok" { printf "   differs: %s: stock fails, %s ok\n", $1, n }
            $2 == "ok" && $3 == "none" { if (++skipped <= 10) missing = missing "\n      " $1; bad = 1 }
            $2 == "none" { only++ }
            $2 == "skip" && $3 == "skip" { nskip++; skips = skips " " $1 }
            $2 == "skip" && $3 != "skip" && $3 != "none" { printf "   differs: %s: skipped on stock, %s on %s\n", $1, $3, n }
            END {
                if (!common) { printf "   %s: FAILED: no test in common between stock and %s\n", d, n; exit 1 }
                if (!stock_ok) { printf "   %s: FAILED: no test passed on stock: nothing to compare\n", d; exit 1 }
                if (skipped) printf "   %s: %d tests that stock passed were not run on %s:%s%s\n", d,
                    skipped, n, missing, (skipped > 10 ? "\n      ..." : "")
                printf "   %s: %s against stock: %d tests in common%s\n", d, n, common,
                    only ? sprintf(", %d run on %s only", only, n) : ""
                if (nskip) printf "   %s: %d of them skipped on both, not run (not counted as passed):%s\n", d, nskip, skips
                exit bad
            }'
}
