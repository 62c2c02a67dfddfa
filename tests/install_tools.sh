#!/bin/sh
# install_tools.sh -- the installed tools run from the prefix, away from the build and source
# trees: vmatch-replay writes traces, vmatch-profile reads them and records a profile,
# vmatch-cluster clusters it and vmatch_rank ranks the designs on the traces.  Also: the
# headers installed are the ones README.md's "Embedding" names, no more, no fewer.
#   install_tools.sh SOURCE_DIR BUILD_DIR   (CMAKE in the environment)
set -eu
src=$1
build=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() {
    echo "FAIL: $*" >&2
    exit 1
}

"$CMAKE" --install "$build" --prefix "$tmp/prefix" >/dev/null
bin=$tmp/prefix/bin
for t in vmatch-replay vmatch-profile vmatch-cluster; do
    [ -x "$bin/$t" ] || fail "$t is not installed in the prefix's bin/"
done
cd "$tmp"
# The tools find nothing of the trees they were built in (a copy of the prefix elsewhere).
mv prefix moved
bin=$tmp/moved/bin
PATH=$bin:/usr/bin:/bin
export PATH

for r in 0 1 2 3; do
    vmatch-replay --gen "mixed P=4 k=2 topo=random steps=20 rank=$r" --write "trace.$r" >/dev/null ||
        fail "vmatch-replay --gen ... --write trace.$r"
done
vmatch-profile summary trace.0 trace.1 >summary.txt || fail "vmatch-profile summary"
grep -q 'operations' summary.txt || fail "vmatch-profile summary printed no operations"
vmatch-profile record "gather P=16 m=4" -o gather.prof >/dev/null || fail "vmatch-profile record"
vmatch-profile show gather.prof >show.txt || fail "vmatch-profile show"
vmatch-cluster gather.prof --algo heuristic >cluster.txt || fail "vmatch-cluster"
grep -qi 'cluster' cluster.txt || fail "vmatch-cluster printed no cluster"
echo "vmatch-replay, vmatch-profile and vmatch-cluster run from the prefix"

if [ -x "$bin/vmatch_rank" ]; then
    vmatch_rank trace.0 trace.1 trace.2 trace.3 --reps 1 --min-ms 0 --designs hash,single \
        >rank.txt 2>rank.err || fail "vmatch_rank: $(cat rank.err)"
    grep -q 'spec' rank.txt || fail "vmatch_rank printed no spec to use"
    echo "vmatch_rank runs from the prefix"
elif grep -q '^vmatch_rank_BINARY_DIR\|vmatch_rank' "$build/CMakeCache.txt" 2>/dev/null &&
    [ -e "$build/bench/vmatch_rank" ]; then
    fail "vmatch_rank is built ($build/bench/vmatch_rank) but not installed"
else
    echo "vmatch_rank: not built here (bench/ needs zlib and C++17), not installed"
fi

# README's list of installed headers: the words `*.h` of its sentence "vmatch installs ...".
said=$(awk '/^vmatch installs /{on=1} on{print} on && /:$/{exit}' "$src/README.md" |
    grep -o '`[a-z_]*\.h`' | tr -d '`' | sort | tr '\n' ' ')
have=$(ls "$tmp/moved/include" | sort | tr '\n' ' ')
[ "$said" = "$have" ] || fail "README.md says the headers are '$said'; installed: '$have'"
echo "README.md names the installed headers: $have"
echo "PASS (installed tools)"
