# deps.sh -- sourced by scripts/test and scripts/bench: installs the Debian packages the
# build needs when they are missing.  As root it runs apt-get; otherwise it names what to
# install and stops.
vmatch_deps() {
    local want="$*" missing="" p
    for p in $want; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
            missing="$missing $p"
    done
    [ -z "$missing" ] && return 0
    if [ "$(id -u)" -ne 0 ]; then
        echo "vmatch: missing Debian packages:$missing (install them as root)" >&2
        return 1
    fi
    echo "vmatch: installing$missing"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq && apt-get install -y -qq --no-install-recommends $missing >/dev/null
}

# Packages every build needs.
# zlib1g-dev: vmatch_report reads the compressed recorded traces of workloads/traces.
VMATCH_BUILD_DEPS="cmake make gcc g++ pkg-config libnuma-dev libbenchmark-dev zlib1g-dev"

# The ThreadSanitizer runtime of GCC 12 (scripts/test's pass over the threaded tests).
VMATCH_TSAN_DEPS="libtsan2"

# Packages scripts/fuzz needs: clang and its runtime with libFuzzer (libclang_rt.fuzzer).
VMATCH_FUZZ_DEPS="clang libclang-rt-14-dev"

# Packages scripts/deb needs to build vmatch's Debian packages (dpkg-buildpackage, dh).
VMATCH_DEB_DEPS="dpkg-dev debhelper fakeroot"

# The build trees of the scripts.  Each is named so that it is no folder of another build
# tree: the README's `cmake -S . -B build` owns build/bench, build/fuzz, build/tests,
# build/tools and build/workloads (the source's subfolders), so a script building there would
# overwrite that tree's files (tests/build_folders.sh checks the names and the two orders).
VMATCH_BENCH_DIR=build/script-bench # scripts/bench (Release), scripts/instr
VMATCH_FUZZ_DIR=build/script-fuzz   # scripts/fuzz (clang, libFuzzer, ASan + UBSan)
VMATCH_TEST_DIRS="build/test build/asan build/tsan" # scripts/test's three passes

# Configure the scripts' trees (also run by tests/build_folders.sh, so the test configures
# exactly what the scripts do).
vmatch_configure_bench() { # DIR
    cmake -S . -B "$1" -DCMAKE_BUILD_TYPE=Release -DVMATCH_BUILD_TESTS=OFF
}
vmatch_configure_fuzz() { # DIR
    CC=clang cmake -S . -B "$1" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DVMATCH_FUZZ=ON \
        -DVMATCH_SANITIZE=ON -DVMATCH_WERROR=ON -DVMATCH_BUILD_TESTS=OFF -DVMATCH_BUILD_BENCH=OFF
}

# vmatch_versions [TOP]: vmatch_version (CMakeLists.txt's, 0.2.0) and vmatch_inline_abi
# (vmatch_inline.h's VMATCH_INLINE_ABI, 5) of the tree at TOP (default .), which the Debian
# packages' version joins (0.2.0+inline5); empty when not found.
vmatch_versions() {
    local top=${1:-.}
    vmatch_version=$(sed -n 's/^project(vmatch VERSION \([0-9.]*\).*/\1/p' "$top/CMakeLists.txt")
    vmatch_inline_abi=$(sed -n 's/^#define VMATCH_INLINE_ABI \([0-9]*\)u$/\1/p' "$top/include/vmatch_inline.h")
}
