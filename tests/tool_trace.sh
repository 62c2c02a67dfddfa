#!/bin/sh
# tools/vmatch-profile on traces end to end: summary, depth, inspected, matrix, timeline,
# heatmap and all on generated traces, every figure checked against what is known without the
# tool (the generators' counts, sums worked out below by hand, the trace text counted with
# awk, vmatch-replay's and vmatch-cluster's own figures, the real policy=single storage=ll
# engine), the pictures' .dat (gnuplot may be missing: then exit 3), and bad input.
# Usage: tool_trace.sh VMATCH_PROFILE VMATCH_REPLAY VMATCH_CLUSTER
set -eu
replay=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
cluster=$(cd "$(dirname "$3")" && pwd)/$(basename "$3")
. "$(dirname "$0")/tool_lib.sh"
# col N FILE: the sum of column N of a .dat (comment lines skipped).
col() { awk -v c="$1" '!/^#/ { s += $c } END { printf "%.0f\n", s }' "$2"; }
# value PATTERN FILE: the first number after PATTERN on the line that has it.
value() { sed -n "s/.*$1 \([0-9.]*\).*/\1/p" "$2" | head -n 1; }
if command -v gnuplot >/dev/null 2>&1; then drawn=0; else drawn=3; fi
# draws CMD...: CMD exits 0 with gnuplot, 3 without.
draws() {
    rc=0
    "$@" >draw.out 2>draw.err || rc=$?
    [ "$rc" -eq "$drawn" ] || fail "'$*' exited $rc, not $drawn: $(cat draw.err)"
}

# ---- the gather, every receive first: P = 64, m = 8, order=reverse, interleave=0 ----
# 63 peers x 8 messages: 504 posts queue (UMQ empty), then 504 arrivals each take one.  The
# PRQ climbs to 504 and falls back: depths 1..504 then 503..0, mean (504*505/2 + 503*504/2) /
# 1008 = 252.  The receives were posted in reverse, so each arrival's receive is the last of
# the list: a single list walks 504, 503, ..., 1 entries = 504*505/2 = 127260, 126.25 a search.
g0="gather P=64 m=8 order=reverse interleave=0"
"$replay" --gen "$g0" --write g0.trace >/dev/null
"$tool" summary g0.trace >s0.txt
has s0.txt "rank 0 (g0.trace; no rank line: its place among the traces)"
has s0.txt "  nprocs 64"
has s0.txt "  operations 1008: post 504, arrive 504, probe 0, improbe 0, cancel 0, remove 0"
has s0.txt "  receives 504: ANY_SOURCE 0, ANY_TAG 0, both 0 (wildcards 0.0%)"
has s0.txt "  arrivals 504: 0 unexpected (0.0%)"
has s0.txt "  PRQ depth: longest 504, mean 252.00"
has s0.txt "  UMQ depth: longest 0, mean 0.00"
grep -qF "inspected per search (1008 searches): single list 126.25 (127260 entries)" s0.txt ||
    fail "s0.txt: single list not 127260 entries: $(grep inspected s0.txt)"
has s0.txt "  sources: 63 distinct; the busiest:"
has s0.txt "           1          8    1.6%          0"
# pnp-static: 63 eights among 64 (average 7.875), cap floor(1 * sqrt(64)) = 8, ties by
# source: 1-8.  cluster (heuristic, cap 2): a cluster carries up to max(E + SD, 504 / (2 *
# 8)) = 31.5, three eights; the zero and sources 1-3, then threes: 21 clusters.
has s0.txt "  partners of pnp-static (average, cap 8): PRQ 8: ctx 0: src 1-8"
has s0.txt "  partners of pnp-static (average, cap 8): UMQ 0: none"
has s0.txt "  clusters of policy=cluster (heuristic, cap 2): PRQ 21 for 63 sources, UMQ 1 for 0 sources"
"$tool" record "$g0" -o g0.prof >/dev/null
"$cluster" g0.prof --algo heuristic >c0.txt
grep -qF "cap 2: 21 cluster(s)" c0.txt || fail "vmatch-cluster: $(head -2 c0.txt)"

# depth and inspected, an operation per column: the depths sum to 252 x 1008 = 254016 and the
# single list's entries to 127260.
draws "$tool" depth g0.trace -o d0.png --bins 1008
[ "$(grep -vc '^#' d0.dat)" -eq 1008 ] || fail "d0.dat: not 1008 rows"
[ "$(col 2 d0.dat)" -eq 254016 ] || fail "d0.dat: PRQ depths sum to $(col 2 d0.dat)"
[ "$(col 3 d0.dat)" -eq 0 ] || fail "d0.dat: UMQ depths sum to $(col 3 d0.dat)"
awk '!/^#/ && $2 > m { m = $2 } END { exit m != 504 }' d0.dat || fail "d0.dat: PRQ peak not 504"
draws "$tool" inspected g0.trace -o i0.png --bins 1008
[ "$(col 2 i0.dat)" -eq 127260 ] || fail "i0.dat: single list sums to $(col 2 i0.dat)"
[ "$(col 4 i0.dat)" -eq 1008 ] || fail "i0.dat: $(col 4 i0.dat) searches, not 1008"

# ---- the gather in random order, mixed: vmatch-replay's figures ----
"$replay" --gen "gather P=64 m=8" --write g.trace >/dev/null
"$replay" g.trace --spec "policy=single storage=ll" --spec "" --reps 1 >r.txt
"$tool" summary g.trace >s.txt
for q in PRQ UMQ; do
    want=$(sed -n "s/^longest $q  *\([0-9]*\) .*/\1/p" r.txt)
    has s.txt "  $q depth: longest $want, mean $(value "$q depth: longest $want, mean" s.txt)"
done
list=$(awk '/^inspected per search/ { print $4, $5 }' r.txt)
# from the summary's entry counts, rounded as vmatch-replay rounds (its 2-decimal figures,
# rounded again, can differ: 0.748 prints 0.75, then 0.8)
mine=$(awk '/^  inspected per search/ { gsub(/\(/, ""); printf "%.1f %.1f", $9 / $4, $14 / $4 }' s.txt)
[ "$list" = "$mine" ] || fail "inspected per search: vmatch-replay '$list', summary '$mine'"
# Exactly one of each (receive, message) pair is queued: PRQ + UMQ insertions are 504.
draws "$tool" heatmap g.trace -o h.png
[ "$(col 3 h.dat)" -eq 504 ] || fail "h.dat: $(col 3 h.dat) insertions, not 504"
unexp=$(value "arrivals 504:" s.txt)
draws "$tool" heatmap g.trace -o hu.png --side umq
[ "$(col 3 hu.dat)" -eq "$unexp" ] || fail "hu.dat: UMQ $(col 3 hu.dat), summary $unexp"
# The heat map of the trace is that of the profile its workload records.
"$tool" record "gather P=64 m=8" -o g.prof >/dev/null
draws "$tool" heatmap g.prof -o hp.png
cmp -s h.dat hp.dat || fail "heatmap of g.trace differs from that of g.prof"
# The timeline of the trace is that of its workload.
draws "$tool" timeline g.trace -o t.png --bins 50
draws "$tool" timeline "gather P=64 m=8" -o tw.png --bins 50
cmp -s t.dat tw.dat || fail "timeline of g.trace differs from that of its workload"
[ "$(col 3 t.dat)" -eq 504 ] || fail "t.dat: $(col 3 t.dat) insertions, not 504"

# ---- master/worker: wildcards, probes, cancels, removes ----
"$replay" --gen "master" --write m.trace >/dev/null
"$tool" summary m.trace >sm.txt
ops=$(awk '$1 ~ /^(post|arrive|probe|improbe|cancel|remove)$/ { n[$1]++; all++ }
    END { printf "  operations %d: post %d, arrive %d, probe %d, improbe %d, cancel %d, remove %d",
          all, n["post"], n["arrive"], n["probe"], n["improbe"], n["cancel"], n["remove"] }' m.trace)
has sm.txt "$ops"
# post REQ CTX SRC TAG CLASS; probe CTX SRC TAG CLASS.
wild=$(awk '$1 == "post" { n++; s = $4 == "*"; t = $5 == "*"; a += s && !t; b += t && !s; c += s && t }
    END { printf "  receives %d: ANY_SOURCE %d, ANY_TAG %d, both %d", n, a, b, c }' m.trace)
grep -qF "$wild (wildcards" sm.txt || fail "sm.txt lacks '$wild': $(grep receives sm.txt)"
wild=$(awk '$1 ~ /probe$/ { n++; s = $3 == "*"; t = $4 == "*"; a += s && !t; b += t && !s; c += s && t }
    END { printf "  probes %d: ANY_SOURCE %d, ANY_TAG %d, both %d", n, a, b, c }' m.trace)
grep -qF "$wild (wildcards" sm.txt || fail "sm.txt lacks '$wild': $(grep probes sm.txt)"
srcs=$(awk '$1 == "arrive" { s[$4] = 1 } END { print length(s) }' m.trace)
has sm.txt "  sources: $srcs distinct; the busiest:"
# The single list is worked out from the outcomes; the real one walks its lists: the same
# entries in every column of operations.
draws "$tool" inspected m.trace -o im.png --spec "policy=single storage=ll" --spec "" --bins 500
awk '!/^#/ && $2 != $3 { exit 1 }' im.dat || fail "im.dat: single list and storage=ll differ"
total=$(value "  operations" sm.txt)
step=$(((total + 499) / 500))
[ "$(grep -vc '^#' im.dat)" -eq $(((total + step - 1) / step)) ] ||
    fail "im.dat: not a row per $step operations"
"$replay" m.trace --spec "policy=single storage=ll" --reps 1 >rm.txt
want=$(awk '/^inspected per search/ { print $4 }' rm.txt)
mine=$(awk '/^  inspected per search/ { printf "%.1f", $8 }' sm.txt)
[ "$want" = "$mine" ] || fail "master: vmatch-replay's list $want, summary's $mine"

# ---- several ranks: totals and the matrix ----
"$tool" summary g0.trace m.trace >s2.txt
has s2.txt "all 2 ranks"
has s2.txt "  PRQ depth: longest 504 (rank 0), mean $(value "PRQ depth: longest 504 (rank 0), mean" s2.txt)"
n=$(awk '$1 == "arrive"' m.trace | wc -l)
has s2.txt "  arrivals $((504 + n)): $(value "arrivals $n:" sm.txt) unexpected ($(sed -n "s/^  arrivals $((504 + n)): [0-9]* unexpected (\(.*\))$/\1/p" s2.txt))"
draws "$tool" matrix g0.trace m.trace -o mx.png
awk '!/^#/ && $2 == 0 && $3 != 8 { exit 1 }' mx.dat || fail "mx.dat: a gather source without 8"
[ "$(awk '!/^#/ && $2 == 0' mx.dat | wc -l)" -eq 63 ] || fail "mx.dat: row 0 has not 63 sources"
[ "$(awk '!/^#/ && $2 == 1 { s += $3 } END { print s }' mx.dat)" -eq "$n" ] ||
    fail "mx.dat: row 1 does not sum to the $n arrivals of m.trace"
draws "$tool" matrix g0.trace m.trace -o mu.png --count unexpected
"$tool" record master -o m.prof >/dev/null
draws "$tool" heatmap m.prof -o mh.png --side umq
[ "$(col 3 mu.dat)" -eq "$(col 3 mh.dat)" ] || fail "mu.dat: $(col 3 mu.dat) unexpected, the profile $(col 3 mh.dat)"

# ---- all: the summary and every picture ----
draws "$tool" all g0.trace m.trace -o run
"$tool" summary g0.trace m.trace >s2.txt
cmp -s s2.txt run/summary.txt || fail "run/summary.txt is not the summary"
for r in r0 r1; do
    for p in depth inspected timeline heatmap; do
        [ -s run/$r-$p.dat ] && [ -s run/$r-$p.gp ] || fail "run/$r-$p.dat or .gp missing"
        [ "$drawn" -eq 3 ] || png run/$r-$p.png
    done
done
cmp -s run/r0.prof g0.prof || fail "run/r0.prof is not the profile of the workload"
cmp -s run/matrix.dat mx.dat || fail "run/matrix.dat is not matrix's"
# Without gnuplot: one line, exit 3, every .dat and .gp written all the same.
expect_fail 3 "gnuplot not found" env PATH=/nonexistent "$tool" all g0.trace m.trace -o nogp
[ "$(ls nogp/*.gp | wc -l)" -eq 9 ] && [ "$(ls nogp/*.dat | wc -l)" -eq 9 ] ||
    fail "nogp: not 9 .dat and .gp files: $(ls nogp)"
cmp -s nogp/summary.txt s2.txt || fail "nogp/summary.txt is not the summary"

# ---- what a recording adds: the layout, the rank, the trailer's cut ----
awk '{ print } /^nprocs 64$/ { print "layout 8 8 16"; print "rank 5" }' g0.trace |
    sed 's/^end 1008$/end 1008 cut 77/' >g5.trace
"$tool" summary g5.trace >s5.txt
has s5.txt "rank 5 (g5.trace)"
has s5.txt "  layout: ctx 8, src 8, tag 16 bits"
has s5.txt "  cut: the recording stopped at trace.cap; 77 more operations were not recorded, and the figures below leave them out"
# The same figures as g0.trace but the default engine's entries (another layout hashes
# otherwise).
sed -n '/^  operations/,$p' s0.txt | sed 's/, default engine .*//' >s0.fig
sed -n '/^  operations/,$p' s5.txt | sed 's/, default engine .*//' >s5.fig
cmp -s s0.fig s5.fig || fail "g5.trace's figures differ from g0.trace's"
"$tool" summary g5.trace m.trace >s51.txt
has s51.txt "  cut: 77 operations were not recorded (trace.cap of 1 trace(s))"
has s51.txt "  PRQ depth: longest 504 (rank 5), mean $(value "PRQ depth: longest 504 (rank 5), mean" s51.txt)"
has s51.txt "rank 1 (m.trace; no rank line: its place among the traces)"
draws "$tool" matrix g5.trace m.trace -o m5.png
[ "$(awk '!/^#/ && $2 == 5' m5.dat | wc -l)" -eq 63 ] || fail "m5.dat: row 5 has not 63 sources"
[ "$(awk '!/^#/ && $2 == 1 { s += $3 } END { print s }' m5.dat)" -eq "$n" ] ||
    fail "m5.dat: row 1 is not m.trace's"
# all names the files by rank, and the profile it replays carries the trace's layout and rank.
draws "$tool" all g5.trace m.trace g5.trace -o lr
for f in r5-depth r5-inspected r5-timeline r5-heatmap r1-depth r5-2-depth; do
    [ -s lr/$f.dat ] || fail "lr/$f.dat is missing: $(ls lr)"
done
has lr/r5.prof "layout 8 8 16"
has lr/r5.prof "rank 5"
# An engine given another layout: the first operation that does not fit, by number.
expect_fail 1 "g5.trace: operation 0 (post): context 0, source 63 or tag 7 does not fit the layout (ctx 8, src 4, tag 16 bits)" \
    "$tool" inspected g5.trace -o e.png --spec "layout.src=4 nprocs=16"

# ---- bad input: one line naming the file (and line), exit 1 ----
: >empty.trace
printf 'vmatch-trace 1\nnprocs 4\n' >hdr.trace
printf 'vmatch-trace 1\nnprocs 4\npost 0 0 1 2 p2p\narrive 0 0 x 2 p2p\n' >bad.trace
expect_fail 1 "missing.trace: cannot open" "$tool" summary g0.trace missing.trace
expect_fail 1 "bad.trace:4: expected source" "$tool" summary bad.trace
expect_fail 1 "bad.trace:4: expected source" "$tool" all bad.trace -o badrun
expect_fail 1 "empty.trace:1: expected the header" "$tool" depth empty.trace -o e.png
expect_fail 1 "g0.prof:1: expected the header 'vmatch-trace 1'" "$tool" matrix g0.prof -o e.png
expect_fail 1 "hdr.trace: no operations to draw" "$tool" depth hdr.trace -o e.png
expect_fail 1 "hdr.trace: no operations to draw" "$tool" inspected hdr.trace -o e.png
expect_fail 1 "no messages to draw" "$tool" matrix hdr.trace -o e.png
expect_fail 1 "depth: one argument" "$tool" depth g0.trace m.trace -o e.png
expect_fail 1 "bad value for --count" "$tool" matrix g0.trace -o e.png --count some
expect_fail 1 "all needs -o DIR" "$tool" all g0.trace
expect_fail 1 "empty.trace is not a folder" "$tool" all g0.trace -o empty.trace
expect_fail 1 "unknown key 'bogus'" "$tool" inspected g0.trace -o e.png --spec bogus=1
expect_fail 1 "at most 7 --spec" "$tool" inspected g0.trace -o e.png --spec "" --spec "" \
    --spec "" --spec "" --spec "" --spec "" --spec "" --spec ""
expect_fail 1 "nosuch: neither a file nor a workload" "$tool" timeline nosuch -o e.png
# A trace whose own layout line is too narrow for its sources: the reader says where.
awk '{ print } /^nprocs 64$/ { print "layout 8 4 16" }' g0.trace >g4.trace
expect_fail 1 "g4.trace:5: context 0, source 63 or tag 7 does not fit the layout 8 4 16" \
    "$tool" summary g4.trace
# A source past the default layout's 24 bits.
printf 'vmatch-trace 1\narrive 0 0 16777216 0 p2p\n' >wide.trace
expect_fail 1 "wide.trace: operation 0 (arrive): context 0, source 16777216" "$tool" summary wide.trace
# The header alone is an empty trace: its summary is all zeros.
"$tool" summary hdr.trace >sh.txt
has sh.txt "  operations 0: post 0, arrive 0, probe 0, improbe 0, cancel 0, remove 0"
has sh.txt "  sources: 0 distinct"

# ---- a million operations in bounded time: the single list is worked out, not walked
# (524032 receives in reverse, then their messages: 524032 x 524033 / 2 entries) ----
start=$(date +%s)
"$replay" --gen "gather P=2048 m=256 order=reverse interleave=0" --write big.trace >/dev/null
"$tool" summary big.trace >sb.txt
has sb.txt "  operations 1048064: post 524032, arrive 524032, probe 0, improbe 0, cancel 0, remove 0"
grep -qF "single list 131008.25 (137305030528 entries)" sb.txt || fail "sb.txt: $(grep inspected sb.txt)"
[ $(($(date +%s) - start)) -lt 120 ] || fail "a million operations took over 2 minutes"
echo "tool_trace: all checks passed"
