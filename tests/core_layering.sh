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
# Symbols of a module (vm_ll_*, vm_lla_*, vm_llv_*, vm_pnp_*, vm_single_*, vm_hash_*)
# outside the registry's module list.
if grep -nE 'vm_(ll|lla|llv|pnp|single|hash)_' "$src"/src/core/*.c "$src"/src/core/*.h |
    grep -v 'src/core/registry.c:.*VM_MODULES'; then
    echo "src/core names a module's symbols (above)" >&2
    status=1
fi
[ $status = 0 ] && echo "core_layering: src/core includes and names no module"
exit $status
