#!/usr/bin/env bash
# tests/packages.sh -- vmatch's Debian packages (scripts/deb): builds them (without the
# ctest suite, which scripts/test runs anyway), lintian reports nothing unexplained, then
# unpacks them with dpkg -x into a scratch root (nothing is installed on the machine) and
# checks what a user and a dependent package rely on: the package name carries the
# library's soname and the version the project's and vmatch_inline.h's (a tree of another
# inline version without its changelog entry is refused), the files are where pkg-config and
# find_package look, examples/example.c builds and runs against the root through both, and
# the tools run.  Skipped, saying so, without dpkg-buildpackage, debhelper or lintian (as
# root they are installed first).  About 3 minutes on 2 loaded cores.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/deps.sh
# shellcheck disable=SC2086
[ "$(id -u)" -ne 0 ] || vmatch_deps $VMATCH_DEB_DEPS lintian
for c in dpkg-buildpackage dh lintian; do
    command -v $c >/dev/null || {
        echo "packages: skipped, $c is missing (apt-get install $VMATCH_DEB_DEPS lintian)"
        exit 0
    }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() {
    echo "packages: $*" >&2
    exit 1
}

vmatch_versions
version=$vmatch_version inline_abi=$vmatch_inline_abi
debversion=$(dpkg-parsechangelog -l packaging/debian/changelog -S Version)
abi=${version%.*}

# The version carries the inline version (0.2.0+inline5-1): a tree whose vmatch_inline.h
# is at another one is refused by scripts/deb, naming the changelog entry it needs, and by
# debian/rules (a build of packaging/debian without scripts/deb), before anything is built.
git ls-files -z | tar --null -T - --ignore-failed-read -cf - | (mkdir -p "$tmp/next" && tar -x -C "$tmp/next")
next=$((inline_abi + 1))
sed -i "s/^#define VMATCH_INLINE_ABI $inline_abi""u\$/#define VMATCH_INLINE_ABI $next""u/" "$tmp/next/include/vmatch_inline.h"
grep -q "^#define VMATCH_INLINE_ABI $next""u$" "$tmp/next/include/vmatch_inline.h" || fail "no VMATCH_INLINE_ABI to change"
# refused WHAT MESSAGE COMMAND...: COMMAND fails in the copy, printing MESSAGE, and makes no .deb.
refused() {
    local what=$1 msg=$2
    shift 2
    if (cd "$tmp/next" && "$@") >"$tmp/next.log" 2>&1 || ! grep -qF "$msg" "$tmp/next.log" ||
        [ -n "$(find "$tmp" -maxdepth 2 -name '*.deb')" ]; then
        fail "$what does not refuse a changelog of another inline version: $(cat "$tmp/next.log")"
    fi
}
refused scripts/deb "dch -c packaging/debian/changelog -v $version+inline$next-1" scripts/deb --out "$tmp/next-deb"
cp -a packaging/debian "$tmp/next/debian"
refused debian/rules "the upstream version must end in +inline$next" make -s -f debian/rules clean
echo "   a vmatch_inline.h of inline version $next without its changelog entry: refused"

scripts/deb --lintian --out "$tmp/deb" | sed 's/^/   /'
[ "${debversion%-*}" = "$version+inline$inline_abi" ] ||
    fail "the packages' version $debversion is not $version+inline$inline_abi-N"
ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
lib=libvmatch$abi root=$tmp/root libdir=$tmp/root/usr/lib/$ma
for p in "$lib" libvmatch-dev vmatch-tools; do
    deb=$tmp/deb/${p}_${debversion}_$(dpkg-architecture -qDEB_HOST_ARCH).deb
    [ -f "$deb" ] || fail "scripts/deb made no $deb"
    dpkg -x "$deb" "$root"
done

# The package that holds the library is named after its soname (Debian policy 8.1), which
# dependent packages' shlibs dependencies name.
soname=$(objdump -p "$libdir/libvmatch.so.$version" | awk '$1 == "SONAME" {print $2}')
[ "$soname" = "libvmatch.so.$abi" ] || fail "soname $soname, the package $lib says libvmatch.so.$abi"
shlibs=$(dpkg-deb --ctrl-tarfile "$tmp/deb/${lib}_${debversion}"_*.deb | tar -xO ./shlibs)
[ "$shlibs" = "libvmatch $abi $lib (>= ${debversion%-*})" ] || fail "$lib's shlibs is '$shlibs'"
# ... and provides the version of vmatch_inline.h's layouts, which a package that compiles
# the header's calls in depends on (the library's own answer is checked below).
provides=$(dpkg-deb -f "$tmp/deb/${lib}_${debversion}"_*.deb Provides)
[ "$provides" = "libvmatch-inline-abi$inline_abi" ] || fail "$lib provides '$provides', not libvmatch-inline-abi$inline_abi"
dpkg-deb -f "$tmp/deb"/libvmatch-dev_*.deb Depends | grep -qF "$lib (= $debversion)" ||
    fail "libvmatch-dev does not depend on $lib (= $debversion)"
for f in usr/include/vmatch.h usr/include/vmatch_unified.h usr/include/vmatch_inline.h \
    usr/include/vmatch_hot.h \
    "usr/lib/$ma/libvmatch.a" "usr/lib/$ma/pkgconfig/vmatch.pc" "usr/lib/$ma/cmake/vmatch/vmatchConfig.cmake"; do
    [ -f "$root/$f" ] || fail "libvmatch-dev has no /$f"
done
echo "   $lib (soname libvmatch.so.$abi), libvmatch-dev and vmatch-tools $debversion"

# examples/example.c against the root: pkg-config (the .pc file finds its prefix from its
# own place), then find_package with the shared and the static library.
# shellcheck disable=SC2046
cc -o "$tmp/app_pc" examples/example.c $(PKG_CONFIG_PATH=$libdir/pkgconfig pkg-config --cflags --libs vmatch)
LD_LIBRARY_PATH=$libdir "$tmp/app_pc" | grep -q "matched request 1" || fail "the pkg-config build does not run"
printf '#include <stdio.h>\n#include <vmatch_inline.h>\nint main(void) { printf("%%u\\n", vmatch_inline_abi()); }\n' \
    >"$tmp/abi.c"
# shellcheck disable=SC2046
cc -o "$tmp/abi" "$tmp/abi.c" $(PKG_CONFIG_PATH=$libdir/pkgconfig pkg-config --cflags --libs vmatch)
[ "$(LD_LIBRARY_PATH=$libdir "$tmp/abi")" = "$inline_abi" ] || fail "the library's inline version is not $inline_abi"
mkdir -p "$tmp/consumer"
cat >"$tmp/consumer/CMakeLists.txt" <<CM
cmake_minimum_required(VERSION 3.25)
project(consumer C)
find_package(vmatch $abi REQUIRED)
add_executable(app_shared $PWD/examples/example.c)
target_link_libraries(app_shared PRIVATE vmatch::vmatch)
add_executable(app_static $PWD/examples/example.c)
target_link_libraries(app_static PRIVATE vmatch::vmatch_static)
CM
cmake -S "$tmp/consumer" -B "$tmp/consumer/build" -DCMAKE_PREFIX_PATH="$root/usr" >/dev/null
cmake --build "$tmp/consumer/build" >/dev/null
LD_LIBRARY_PATH=$libdir "$tmp/consumer/build/app_shared" | grep -q "matched request 1" ||
    fail "the find_package build (shared) does not run"
"$tmp/consumer/build/app_static" | grep -q "matched message 20" || fail "the find_package build (static) does not run"
if grep -n '/[^ ]*libnuma' "$libdir"/cmake/vmatch/*.cmake; then
    fail "the CMake package names libnuma by this machine's path"
fi
echo "   examples/example.c builds and runs against the packages (pkg-config, find_package shared and static)"

# The tools: a generated trace replayed and written, summarized, ranked; vmatch-cluster's usage.
bin=$root/usr/bin
"$bin/vmatch-replay" --gen "gather P=8 m=2" --write "$tmp/t.trace" --reps 1 | grep -q "matches as #1 *yes" ||
    fail "vmatch-replay does not replay a generated workload"
"$bin/vmatch-profile" summary "$tmp/t.trace" | grep -q "operations 28" || fail "vmatch-profile summary"
"$bin/vmatch_rank" "$tmp/t.trace" --reps 1 --budget 2 | grep -q "^fastest design" || fail "vmatch_rank"
"$bin/vmatch-cluster" --help 2>&1 | grep -q "^usage: vmatch-cluster" || fail "vmatch-cluster --help"
echo "   vmatch-replay, vmatch-profile, vmatch_rank and vmatch-cluster run"
