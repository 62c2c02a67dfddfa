#!/bin/sh
# The installed package moves: its CMake files and pkg-config file name no path of the
# machine that built it (libnuma included: vmatchConfig.cmake finds it where the consumer's
# system keeps it), so a prefix copied elsewhere, or to another distribution, still serves
# find_package(vmatch) and pkg-config.  Then the commands docs/packages.md gives for a
# prefix outside the linker's paths run as written (with that prefix put for /opt/vmatch),
# and a program built without them does not find libvmatch.so at run time.
# Usage: install_relocatable.sh SOURCE_DIR BUILD_DIR (CMAKE and CC in the environment).
set -eu
src=$1 build=$2 tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$CMAKE" --install "$build" --prefix "$tmp/built" >/dev/null
cmakedir=$(dirname "$(find "$tmp/built" -name vmatchConfig.cmake)")
pcfile=$(find "$tmp/built" -name vmatch.pc)
# Only CMake's own "/usr move" check may name an absolute path (the prefix it was made for).
if grep -nE '(^|[";= ])/[A-Za-z0-9_.+-]+/' "$cmakedir"/*.cmake "$pcfile" | grep -v '_realOrig\|_IMPORT_PREFIX "/' |
    grep -v '^[^:]*:[0-9]*:#'; then
    echo "the installed CMake or pkg-config files above name an absolute path" >&2
    exit 1
fi
grep -q 'LINK_ONLY:vmatch::numa' "$cmakedir/vmatchTargets.cmake" ||
    ! grep -q 'VMATCH_HAVE_NUMA ON' "$cmakedir/vmatchConfig.cmake" || {
    echo "vmatch_static does not name libnuma as vmatch::numa" >&2
    exit 1
}
echo "installed CMake and pkg-config files name no absolute path"

mv "$tmp/built" "$tmp/moved"
prefix=$tmp/moved
libdir=$(dirname "$(find "$prefix" -name 'libvmatch.so' | head -1)")
mkdir -p "$tmp/consumer/examples"
cp "$src/examples/example.c" "$tmp/consumer/examples/"
cat >"$tmp/consumer/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.25)
project(consumer C)
find_package(vmatch 0.2 REQUIRED)
add_executable(app_static examples/example.c)
target_link_libraries(app_static PRIVATE vmatch::vmatch_static)
CM
"$CMAKE" -S "$tmp/consumer" -B "$tmp/consumer/build" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
"$CMAKE" --build "$tmp/consumer/build" >/dev/null
"$tmp/consumer/build/app_static" | grep -q "matched message 20"
echo "find_package(vmatch) from the moved prefix: the static consumer runs"

# The commands of docs/packages.md's "A prefix of your own", as a user pastes them.
awk '/<!-- run: tests\/install_relocatable.sh -->/{grab=1; next} grab && /^```sh/{on=1; next}
     on && /^```/{exit} on{print}' "$src/docs/packages.md" | sed "s|/opt/vmatch/lib|$libdir|g" >"$tmp/block.sh"
grep -q pkg-config "$tmp/block.sh" || {
    echo "docs/packages.md has no block marked for this test" >&2
    exit 1
}
out=$(cd "$tmp/consumer" && env -u LD_LIBRARY_PATH sh -eu "$tmp/block.sh")
# the last program built is the one with the rpath: it loads the prefix's library
(cd "$tmp/consumer" && env -u LD_LIBRARY_PATH ldd ./example) | grep libvmatch | grep -qF "$libdir" || {
    echo "the program built with docs/packages.md's rpath does not load $libdir/libvmatch.so" >&2
    exit 1
}
[ "$(echo "$out" | grep -c "matched request 1")" = 2 ] || {
    echo "docs/packages.md's commands did not run the example twice:" >&2
    echo "$out" >&2
    exit 1
}
echo "docs/packages.md's commands for a prefix of your own run"

# Without the library path or the rpath the program does not load the prefix's library
# (it is not found, or another copy is, say a package's): what the docs say.
# shellcheck disable=SC2046
(cd "$tmp/consumer" && "$CC" -o plain examples/example.c $(PKG_CONFIG_PATH=$libdir/pkgconfig pkg-config --cflags --libs vmatch))
if (cd "$tmp/consumer" && env -u LD_LIBRARY_PATH ldd ./plain | grep 'libvmatch' | grep -qF "$libdir"); then
    echo "a program built without an rpath loads the prefix's libvmatch.so: docs/packages.md is wrong" >&2
    exit 1
fi
echo "without an rpath or LD_LIBRARY_PATH the program does not load the prefix's libvmatch.so"
