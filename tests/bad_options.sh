#!/bin/sh
# bad_options.sh -- every tool's and script's bad options and values, from one table: each
# case must exit non-zero, without running anything, and say on stderr a text that names
# the option (or the value) at fault.  A tool that is not built here (no Google Benchmark:
# no vmatch_report; an empty path) has its rows skipped and counted, never passed.
#   bad_options.sh SOURCE_DIR REPORT RANK REPLAY PROFILE CLUSTER
# Each row: the program's key, the expected text, then the arguments (words split at '|').
set -eu
abs() { case $1 in /* | "") echo "$1" ;; *) echo "$PWD/$1" ;; esac }
src=$(cd "$1" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prog_report=$(abs "$2") prog_rank=$(abs "$3") prog_replay=$(abs "$4")
prog_profile=$(abs "$5") prog_cluster=$(abs "$6")
prog_bench=$src/scripts/bench prog_fuzz=$src/scripts/fuzz prog_test=$src/scripts/test
prog_hosts=$src/ports/hosts prog_programs=$src/ports/programs
# A one-operation trace, so that options are checked with a good operand beside them.
printf 'vmatch-trace 1\nnprocs 2\nlayout 16 24 24\npost 0 0 0 0 1 0\n' >"$tmp/t.trace"
printf 'vmatch-profile 1\nnprocs 2\n0 1 5 5\n' >"$tmp/p.prof"
# Inputs at the edges: a source of 2^31 - 1 and no nprocs line (vmatch_rank named a clamped
# nprocs as the cause), a profile whose counts sum past 2^64 - 1 (the tools printed a
# wrapped total), a folder given as a profile.
printf 'vmatch-trace 1\npost 0 0 2147483647 0 p2p\narrive 0 0 2147483647 0 p2p\n' >"$tmp/big.trace"
printf 'vmatch-profile 1\nlayout 16 24 24\nnprocs 8\n0 1 18446744073709551615 0\n0 2 18446744073709551615 0\n' >"$tmp/wrap.prof"
mkdir "$tmp/folder.prof"
t=$tmp/t.trace p=$tmp/p.prof big=$tmp/big.trace wrap=$tmp/wrap.prof folder=$tmp/folder.prof

table() {
    cat <<ROWS
report|--reps 'abc'|--reps|abc
report|--reps '0'|--reps|0
report|--reps '-3'|--reps|-3
report|--reps '1001'|--reps|1001
report|--reps '2x'|--reps|2x
report|--min-ms 'x'|--min-ms|x
report|--min-ms '0x10'|--min-ms|0x10
report|--budget '0'|--budget|0
report|--budget 'inf'|--budget|inf
report|--reps needs a value|--reps
report|--out needs a value|--out
report|--only needs a value, not an empty one|--only|
report|unknown option --bogus|--bogus
report|unknown option -x|-x
report|no engine is called 'bogus'|--engines|bogus,zz|--only|barrier|--no-pnp|--no-tagperf|--no-cluster|--no-unified|--no-memory|--no-traces|--reps|1|--min-ms|0
report|--only 'zzz': no workload|--only|zzz|--no-memory|--reps|1|--min-ms|0
report|--inline-spec 'policy=nope'|--inline-spec|policy=nope
rank|unknown option --bogus|$t|--bogus
rank|unknown option --bogus|--bogus|$t
rank|--reps needs a value|$t|--reps
rank|--reps 'abc'|$t|--reps|abc
rank|--reps '0'|$t|--reps|0
rank|--min-ms '1e99'|$t|--min-ms|1e99
rank|--budget '0'|$t|--budget|0
rank|--port 'openmpi'|$t|--port|openmpi
rank|--designs needs a value, not an empty one|$t|--designs|
rank|no trace given|--reps|3
rank|source or rank 2147483647, and no trace declares nprocs|$big|--reps|1
profile|PRQ counts sum past 2^64 - 1|show|$wrap
profile|is a directory, not a profile file|show|$folder
cluster|PRQ counts sum past 2^64 - 1|$wrap|--algo|heuristic
replay|--reps needs a value|$t|--reps
replay|--spec needs a value|$t|--spec
replay|--reps 'abc'|$t|--reps|abc
replay|--reps '0'|$t|--reps|0
replay|--reps '3x'|$t|--reps|3x
replay|unknown option --bogus|$t|--bogus
replay|--gen needs a value, not an empty one|--gen|
replay|no trace given|--reps|2
replay|a TRACE or --gen, not both|$t|--gen|barrier P=4
profile|bad value for --top: 'abc'|summary|$t|--top|abc
profile|bad value for --top: '0x10'|summary|$t|--top|0x10
profile|bad value for --alpha: 'inf'|show|$p|--alpha|inf
profile|--top needs a value|summary|$t|--top
profile|summary does not take --bogus|summary|$t|--bogus
profile|unknown command bogus|bogus
cluster|bad value for --k: abc|$p|--algo|kmeans|--k|abc
cluster|bad value for --algo: none|$p|--algo
cluster|unknown option --bogus|$p|--algo|kmeans|--bogus
bench|unknown option --memory-onyl|--memory-onyl
bench|--queues-only and --report-only|--queues-only|--report-only
bench|--ref needs a revision|--ref
bench|--benchmark_bogus: not an option of vmatch_bench|--benchmark_bogus=1
fuzz|unknown target or option 'zzz'|zzz
fuzz|unknown target or option '--bogus'|spec|--bogus
fuzz|no target|20
test|takes no arguments, not '--bogus'|--bogus
hosts|usage: ports/hosts|bogus
programs|usage: ports/programs ucx|bogus
ROWS
}

pass=0 skipped=0 failed=0
table >"$tmp/rows"
while IFS= read -r row; do
    key=${row%%|*} rest=${row#*|}
    want=${rest%%|*} args=${rest#*|}
    [ "$args" = "$rest" ] && args=""
    eval "prog=\$prog_$key"
    if [ -z "$prog" ] || [ ! -x "$prog" ]; then
        skipped=$((skipped + 1))
        continue
    fi
    # The arguments, split at '|' (an empty word stays one).
    set --
    old=$IFS
    IFS='|'
    for w in $args; do set -- "$@" "$w"; done
    case $args in *'|') set -- "$@" "" ;; esac
    IFS=$old
    rc=0
    (cd "$tmp" && VMATCH_FUZZ_SECONDS=0 timeout 120 "$prog" "$@") >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
    if [ "$rc" -eq 0 ] || [ "$rc" -eq 124 ] || ! grep -qF -- "$want" "$tmp/err"; then
        echo "FAIL: $key $*: exit $rc, stderr:" >&2
        sed 's/^/    /' "$tmp/err" >&2
        echo "    (wanted a non-zero exit and '$want')" >&2
        failed=$((failed + 1))
    else
        pass=$((pass + 1))
    fi
done <"$tmp/rows"
echo "bad options: $pass refused as they should, $failed not, $skipped rows of programs not built here"
[ "$failed" -eq 0 ] && [ "$pass" -gt 0 ] && echo "PASS (bad options)"
