#!/bin/sh
# plot_styles.sh VMATCH_REPORT -- the picture of scripts/bench (plot.gp) tells every line
# apart and keeps its key's promise: no two engines share a colour and dash pattern (with 16
# engines and 12 colours, ob1-inl was drawn as ll), vmatch's designs are solid and every
# other design, the inline peers too, dashed.
set -eu
# shellcheck source=tool_lib.sh
. "$(dirname "$0")/tool_lib.sh"
report=$tool
"$report" --only sweep --no-pnp --no-tagperf --no-cluster --no-unified --no-memory \
    --no-traces --reps 1 --min-ms 0 --out "$tmp" >/dev/null || fail "vmatch_report failed"
[ -s "$tmp/plot.gp" ] || fail "no plot.gp"
# label colour dash, one line per engine drawn
sed -n "s/.*using 1:[0-9]* with linespoints title '\([^']*\)'.* lc rgb '\([^']*\)' dt \([0-9]*\).*/\1 \2 \3/p" \
    "$tmp/plot.gp" >"$tmp/styles"
n=$(wc -l <"$tmp/styles")
[ "$n" -ge 2 ] || fail "plot.gp draws $n lines"
dup=$(cut -d ' ' -f 2,3 "$tmp/styles" | sort | uniq -d)
[ -z "$dup" ] || fail "engines drawn alike (colour dash): $dup; $(tr '\n' ';' <"$tmp/styles")"
"$report" --list >"$tmp/list"
while read -r label colour dash; do
    if grep -q "^  $label  *\(inline: \)\{0,1\}policy=" "$tmp/list"; then
        [ $((dash % 2)) -eq 1 ] || fail "$label, a vmatch design, is dashed (dt $dash)"
    else
        [ $((dash % 2)) -eq 0 ] || fail "$label, not vmatch's design, is solid (dt $dash)"
    fi
done <"$tmp/styles"
echo "$n lines, each its own colour and dash; vmatch solid, the others dashed"
echo "PASS (plot styles)"
