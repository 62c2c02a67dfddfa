#!/bin/sh
# core_layering.sh SRC -- the engine (src/core) knows no storage or policy: it includes only
# its own headers and the public one, and names no module's symbols.  Modules reach it
# through module.h and the one registry line in registry.c.
src=$1
status=0
for f in "$src"/src/core/*.c "$src"/src/core/*.h; do
    for h in $(sed -n 's/^#include "\(.*\)"/\1/p' "$f"); do
        if [ ! -f "$src/src/core/$h" ] && [ ! -f "$src/include/$h" ]; then
            echo "$f includes $h, which is not the engine's own header" >&2
            status=1
        fi
    done
done
# The modules: the names in the registry's VM_MODULES line (X(llv) X(lla) ...) and the
# folders of src/ other than core, so that a new module is checked without editing this
# (the line may go on over backslash-continued lines).
registry=$(awk '/^#define VM_MODULES\(X\)/ { on = 1; sub(/^#define VM_MODULES\(X\)/, "") }
                on { print; if (!/\\$/) exit }' "$src/src/core/registry.c" |
    grep -o 'X([A-Za-z_][A-Za-z0-9_]*)' | sed 's/^X(\(.*\))$/\1/')
if [ -z "$registry" ]; then
    echo "no module list found: expected '#define VM_MODULES(X) X(name) ...' in src/core/registry.c" >&2
    exit 1
fi
folders=$(for d in "$src"/src/*/; do basename "$d"; done | grep -vx core)
modules=$(printf '%s\n' "$registry" "$folders" | sed '/^$/d' | sort -u | tr '\n' '|' | sed 's/|$//')
# Symbols of a module (vm_NAME_*) outside the registry's module list.
if grep -nE "vm_($modules)_" "$src"/src/core/*.c "$src"/src/core/*.h |
    grep -v 'src/core/registry.c:.*VM_MODULES'; then
    echo "src/core names a module's symbols (above; modules: $modules)" >&2
    status=1
fi
# Calls go one way: the engine's private state (engine.h) and its calls stay inside the
# engine; modules, tools, tests and fuzzers reach src/core through its other headers.
for f in $(cd "$src" && git ls-files 2>/dev/null | grep -E '\.(c|h|cc)$' ||
    (cd "$src" && find src tools tests fuzz bench workloads -name '*.[ch]' -o -name '*.cc')); do
    case $f in
    src/core/engine.c | src/core/stats.c | src/core/threads.c | src/core/threads.h | src/core/profile.c | src/core/record.c) continue ;;
    esac
    if grep -q '^#include "engine.h"' "$src/$f"; then
        echo "$f includes engine.h, the engine's private state" >&2
        status=1
    fi
done
# Nor do the modules include the engine's other doors: its test hooks (hooks.h) and its
# threads (threads.h).  With engine.h out of reach, a module calls no function of engine.c.
for f in "$src"/src/*/*.c "$src"/src/*/*.h; do
    case $f in "$src"/src/core/*) continue ;; esac
    if grep -qE '^#include "(hooks|threads)\.h"' "$f"; then
        echo "${f#"$src"/} includes the engine's hooks.h or threads.h" >&2
        status=1
    fi
done
[ $status = 0 ] && echo "core_layering: src/core includes and names no module ($modules); engine.h stays in the engine"
exit $status
