#!/bin/sh
# tool_headers.sh SRC -- the command-line tools (tools/) include no policy's or storage's
# private header: only the public ones (include/), src/core's except the engine's own state
# (engine.h), workloads/, their own, and the module headers made for them: partners.h (the
# partner choice of policy=pnp) and cluster.h (the clustering of policy=cluster).
src=$1
status=0
for f in "$src"/tools/*.c "$src"/tools/*.h; do
    for h in $(sed -n 's/^#include "\(.*\)"/\1/p' "$f"); do
        case $h in
        partners.h | cluster.h) continue ;;
        engine.h) ;;
        *) [ -f "$src/tools/$h" ] || [ -f "$src/include/$h" ] || [ -f "$src/workloads/$h" ] ||
            [ -f "$src/src/core/$h" ] && continue ;;
        esac
        echo "FAIL: $f includes $h, a module's or the engine's private header" >&2
        status=1
    done
done
[ "$status" -eq 0 ] && echo "PASS (tool headers)"
exit $status
