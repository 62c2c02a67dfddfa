#!/usr/bin/env bash
# build_folders.sh -- the scripts' build trees and the README's embedding build live side by
# side in one clone (issue 37: scripts/bench built in build/bench, the README's build's own
# bench folder, so `cmake --install build` then failed, and scripts/fuzz in build/fuzz).
#   build_folders.sh SOURCE_DIR names   the names only: no script's tree is a folder of the
#                                       README's tree (quick; ctest runs it)
#   build_folders.sh SOURCE_DIR steps   in a copy of the source: the scripts' trees
#                                       configured, then the README's embedding block run as
#                                       written (prefix aside) with no compiler warning, the
#                                       scripts' trees configured again, the README's install
#                                       again, and the installed tools run (scripts/test;
#                                       a Release build of everything, minutes)
set -euo pipefail
src=$(cd "$1" && pwd)
mode=$2
fail() {
    echo "FAIL: $*" >&2
    exit 1
}
# shellcheck source=../scripts/deps.sh
. "$src/scripts/deps.sh"
trees="$VMATCH_BENCH_DIR $VMATCH_FUZZ_DIR $VMATCH_TEST_DIRS"

# The README's tree is build/; its folders are the source's folders with a CMakeLists.txt.
for t in $trees; do
    case $t in build/*/*) continue ;; build/*) ;; *) fail "scripts' tree $t is not under build/" ;; esac
    [ ! -f "$src/${t#build/}/CMakeLists.txt" ] ||
        fail "scripts' tree $t is the README build's folder ${t#build/}/ (a CMake subfolder)"
done
grep -q 'run test \|run asan ' "$src/scripts/test" || fail "scripts/test names its trees otherwise"
for t in test asan tsan; do
    case " $VMATCH_TEST_DIRS " in *" build/$t "*) ;; *) fail "scripts/test's build/$t is not in VMATCH_TEST_DIRS" ;; esac
done
echo "the scripts' trees ($trees) are no folder of the README's build/"
if [ "$mode" = names ]; then
    echo "PASS (build folders)"
    exit 0
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
jobs=${VMATCH_JOBS:-$(nproc)}
export CMAKE_BUILD_PARALLEL_LEVEL=$jobs
(cd "$src" && git ls-files -z --cached --others --exclude-standard | xargs -0 cp --parents -t "$tmp/" 2>/dev/null) ||
    (cd "$src" && git ls-files -z | xargs -0 cp --parents -t "$tmp/")
cd "$tmp"
# The README's embedding block: the sh block after "## Embedding", with the prefix aside.
awk '/^## Embedding/{on=1} on && /^```sh/{grab=1; next} grab && /^```/{exit} grab{print}' \
    README.md | sed "s|/opt/vmatch|$tmp/prefix|g" >readme-steps.sh
grep -q 'cmake --install build' readme-steps.sh || fail "README.md's Embedding block not found"
configure_scripts() {
    vmatch_configure_bench "$VMATCH_BENCH_DIR" >scripts.log 2>&1 || fail "$(cat scripts.log)"
    if command -v clang >/dev/null; then
        vmatch_configure_fuzz "$VMATCH_FUZZ_DIR" >scripts.log 2>&1 || fail "$(cat scripts.log)"
    fi
}
configure_scripts
echo "== the README's embedding steps after the scripts' trees"
bash -e readme-steps.sh >readme.log 2>&1 || {
    tail -n 30 readme.log >&2
    fail "the README's embedding steps failed after the scripts' trees were configured"
}
if grep -n 'warning:' readme.log >&2; then
    fail "the README's Release build prints compiler warnings (above)"
fi
echo "== the scripts' trees after the README's build, then its install again"
configure_scripts
# (the target lists go to a file first: grep -q stops reading at its match, and under
# pipefail make's broken pipe would fail the check)
targets() { # DIR TARGET: DIR's build files have TARGET
    cmake --build "$1" --target help >targets.txt 2>&1 && grep -q "$2" targets.txt
}
targets "$VMATCH_BENCH_DIR" vmatch_report || fail "$VMATCH_BENCH_DIR does not build vmatch_report"
if [ -f "$VMATCH_FUZZ_DIR/CMakeCache.txt" ]; then
    targets "$VMATCH_FUZZ_DIR" fuzz_spec || fail "$VMATCH_FUZZ_DIR does not build fuzz_spec"
fi
cmake --install build --prefix "$tmp/prefix2" >install.log 2>&1 || {
    cat install.log >&2
    fail "cmake --install build failed after the scripts' trees were configured again"
}
"$tmp/prefix2/bin/vmatch-replay" --gen "gather P=8 m=2" >/dev/null ||
    fail "the installed vmatch-replay does not run"
echo "PASS (build folders)"
