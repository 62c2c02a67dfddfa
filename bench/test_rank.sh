#!/bin/sh
# test_rank.sh CASE VMATCH_RANK VMATCH_REPLAY DIR -- one ctest case of vmatch_rank on traces
# that vmatch-replay generates into DIR (created afresh).  Each case checks the exit status
# and the lines the tool must print; the ranking runs short (--reps 1 --min-ms 0).
set -u
case_=$1 rank=$2 replay=$3 dir=$4
rm -rf "$dir" && mkdir -p "$dir" && cd "$dir" || exit 1

fail() {
    echo "FAIL ($case_): $*"
    echo "--- output:"
    cat out.txt 2>/dev/null
    exit 1
}

gen() { # SPEC FILE
    "$replay" --gen "$1" --write "$2" >/dev/null || fail "vmatch-replay --gen \"$1\""
}

# run_rank STATUS ARGS...: vmatch_rank ARGS into out.txt (stdout and stderr), which must
# exit with STATUS.
run_rank() {
    want=$1
    shift
    "$rank" "$@" >out.txt 2>&1
    got=$?
    [ "$got" -eq "$want" ] || fail "exit status $got, expected $want: vmatch_rank $*"
}

has() { # TEXT: out.txt holds TEXT (a grep -E pattern)
    grep -Eq -- "$1" out.txt || fail "no line matching '$1'"
}

# Three ranks of one halo exchange.
three() {
    for r in 0 1 2; do
        gen "neighbours P=16 k=6 steps=10 rank=$r" "n$r.trace"
    done
}

case $case_ in
run)
    three
    run_rank 0 n0.trace n1.trace n2.trace --reps 1 --min-ms 0
    has '^vmatch_rank: 3 traces \(ranks 0-2 of 16 processes\)'
    # Every design and peer is ranked, and each matched as the reference model does.
    for d in hash hash-inl single\\+ll single\\+lla single\\+llv pnp pnp-static cluster \
        unified mpich ob1 ucx ob1-inl ucx-inl; do
        has "^ +[0-9]+  $d +(vmatch|peer) .* ok$"
    done
    grep -Eq 'WRONG|error' out.txt && fail "an engine failed or matched wrongly"
    has '^fastest design: '
    has '^  MPIR_CVAR_CH4_VMATCH_SPEC="policy=[a-z-]+ storage=[a-z]+[^"]*"$'
    has '^  UCX_VMATCH_SPEC="policy='
    # The spec to use never names what the ports set.
    grep -E 'VMATCH_SPEC=' out.txt | grep -Eq 'layout|nprocs|rank=' && fail "a run key"
    ;;
profiles)
    # Two ranks of a mixed job; a profiled --spec; profiles written where --profiles says.
    gen "mixed P=16 k=6 steps=10 rank=0" m0.trace
    gen "mixed P=16 k=6 steps=10 rank=1" m1.trace
    run_rank 0 m0.trace m1.trace --reps 1 --min-ms 0 --port ucx \
        --spec "policy=pnp-static storage=ll" --profiles "prof.%r"
    for r in 0 1; do
        head -1 "prof.$r" | grep -q '^vmatch-profile' || fail "prof.$r is not a profile"
    done
    has '^ +[0-9]+  spec1 +vmatch .* ok$'
    has 'spec1 +policy=pnp-static storage=ll \(reads a profile of each rank\)'
    has '^  UCX_VMATCH_SPEC="policy='
    grep -q MPIR_CVAR out.txt && fail "--port ucx printed the MPICH variable"
    grep -Eq 'WRONG|error' out.txt && fail "an engine failed or matched wrongly"
    ;;
missing)
    three
    run_rank 1 n0.trace no-such.trace --reps 1 --min-ms 0
    has '^vmatch_rank: no-such.trace: cannot open'
    ;;
malformed)
    three
    printf 'vmatch-trace 1\nnprocs 16\npost 0 0 3 7 p2p\npost 1 0 x 7 p2p\n' >bad.trace
    run_rank 1 n0.trace bad.trace --reps 1 --min-ms 0
    has '^vmatch_rank: bad.trace:4: expected source'
    ;;
nprocs)
    gen "neighbours P=16 k=6 steps=10 rank=0" a.trace
    gen "neighbours P=32 k=6 steps=10 rank=1" b.trace
    run_rank 1 a.trace b.trace --reps 1 --min-ms 0
    has '^vmatch_rank: the traces disagree on nprocs: a.trace says 16, b.trace says 32'
    ;;
empty)
    three
    printf 'vmatch-trace 1\nnprocs 16\n' >empty.trace
    run_rank 1 n0.trace empty.trace --reps 1 --min-ms 0
    has '^vmatch_rank: empty.trace: the trace has no operations'
    ;;
usage)
    three
    run_rank 1
    has '^vmatch_rank: no trace given'
    run_rank 1 n0.trace --spec policy=nope --reps 1 --min-ms 0
    has '^vmatch_rank: --spec "policy=nope": VMATCH_EINVAL'
    run_rank 1 n0.trace n1.trace --profiles prof
    has "^vmatch_rank: --profiles 'prof': it needs %r"
    run_rank 1 n0.trace --reps 0
    has "^vmatch_rank: --reps '0'"
    run_rank 1 n0.trace --budget 0
    has "^vmatch_rank: --budget '0'"
    run_rank 1 n0.trace --port mvapich
    has "^vmatch_rank: --port 'mvapich': mpich or ucx"
    run_rank 0 --help
    has '^Exit status: 0 ranked; 1 bad usage or input'
    ;;
*)
    fail "unknown case"
    ;;
esac
echo "PASS ($case_)"
