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
