#!/bin/sh
# Installs the build into a scratch prefix and builds the example program against it the
# two ways a user would: find_package(vmatch) and pkg-config.  Also checks that the example
# printed in README.md is examples/example.c, so the README never shows code that does not
# build.  Usage: install_test.sh SOURCE_DIR BUILD_DIR (CMAKE and CC in the environment).
set -eu
src=$1
build=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$CMAKE" --install "$build" --prefix "$tmp/prefix" >/dev/null
pcdir=$(dirname "$(find "$tmp/prefix" -name vmatch.pc)")
libdir=$(dirname "$pcdir")

mkdir "$tmp/consumer"
cp "$src/examples/example.c" "$tmp/consumer/"
cat >"$tmp/consumer/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.25)
project(consumer C)
find_package(vmatch 0.2 REQUIRED)
add_executable(app_shared example.c)
target_link_libraries(app_shared PRIVATE vmatch::vmatch)
add_executable(app_static example.c)
target_link_libraries(app_static PRIVATE vmatch::vmatch_static)
CM
"$CMAKE" -S "$tmp/consumer" -B "$tmp/consumer/build" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
"$CMAKE" --build "$tmp/consumer/build" >/dev/null
LD_LIBRARY_PATH="$libdir" "$tmp/consumer/build/app_shared" | grep -q "matched request 1"
"$tmp/consumer/build/app_static" | grep -q "matched message 20"
echo "find_package(vmatch): shared and static consumers run"

PKG_CONFIG_PATH="$pcdir" pkg-config --exists vmatch
# shellcheck disable=SC2046
"$CC" -o "$tmp/app_pc" "$src/examples/example.c" $(PKG_CONFIG_PATH="$pcdir" pkg-config --cflags --libs vmatch)
LD_LIBRARY_PATH="$libdir" "$tmp/app_pc" | grep -q "matched request 1"
echo "pkg-config vmatch: consumer runs"

# Only the public API leaves the shared library.
if nm -D --defined-only "$libdir"/libvmatch.so | awk '$2 != "A" {print $3}' | grep -v '^vmatch_' | grep -q .; then
    echo "libvmatch.so exports symbols outside vmatch_:" >&2
    nm -D --defined-only "$libdir"/libvmatch.so | awk '$2 != "A" {print $3}' | grep -v '^vmatch_' >&2
    exit 1
fi
echo "libvmatch.so exports only vmatch_ symbols"

awk '/<!-- example: examples\/example.c -->/{grab=1; next} grab && /^```c/{on=1; next}
     on && /^```/{exit} on{print}' "$src/README.md" >"$tmp/readme_example.c"
if ! diff -u "$src/examples/example.c" "$tmp/readme_example.c"; then
    echo "README.md's example differs from examples/example.c" >&2
    exit 1
fi
echo "README example is examples/example.c"
