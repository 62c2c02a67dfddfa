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
[ $status = 0 ] && echo "core_layering: src/core includes and names no module ($modules)"
exit $status
