#!/bin/sh
# test_traces.sh CASE VMATCH_REPORT VMATCH_REPLAY DIR -- one ctest case of the headline's
# real-trace rows (report_traces.cc) on a trace directory made here, into DIR (created
# afresh): vmatch-replay generates one trace per rank, gzip compresses them as the traces of
# workloads/traces are kept.  These are generated stand-ins for the test only; the rows run
# short (--reps 1 --min-ms 0).
#   run      two ranks' traces: the row "trace demo" on hash-inl and the four inline peers,
#            every match checked (WRONG fails), and the real-trace target judged
#   none     no directory: "real traces: none in DIR", not measured, exit status 0
#   damaged  a trace.0.gz that is not gzip data: the directory is left out with a note
set -u
case_=$1 report=$2 replay=$3 dir=$4
rm -rf "$dir" && mkdir -p "$dir/traces" && cd "$dir" || exit 1

fail() {
    echo "FAIL ($case_): $*"
    echo "--- output:"
    cat out.txt 2>/dev/null
    exit 1
}

has() { # PATTERN: out.txt holds it (grep -E)
    grep -Eq "$1" out.txt || fail "no line matches: $1"
}

report() { # STATUS ARGS...
    want=$1
    shift
    "$report" --traces-only --reps 1 --min-ms 0 "$@" >out.txt 2>&1
    got=$?
    [ "$got" -eq "$want" ] || fail "exit status $got, expected $want"
}

case $case_ in
run)
    mkdir traces/demo
    for r in 0 1; do
        "$replay" --gen "neighbours P=8 k=6 msgs=2 steps=20 rank=$r" \
            --write "traces/demo/trace.$r" >/dev/null || fail "vmatch-replay"
        gzip "traces/demo/trace.$r" || fail "gzip"
    done
    echo "not a trace" >traces/demo/notes.txt # other files are left alone
    report 0 --traces traces
    has '^trace demo +[0-9]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ (ob1|ucx)-'
    has 'headline: real-trace rows: hash-inl / the fastest inline peer <= 1.0: 1 workload'
    grep -q 'WRONG' out.txt && fail "a wrong match"
    ;;
none)
    report 0 --traces traces/missing
    has 'real traces: none in traces/missing'
    has '^not measured headline: real-trace rows'
    ;;
damaged)
    mkdir traces/bad
    echo "not gzip data" >traces/bad/trace.0.gz
    report 0 --traces traces
    has 'note: traces bad left out: '
    has 'real traces: none in traces'
    ;;
*)
    fail "unknown case"
    ;;
esac
echo "PASS ($case_)"
