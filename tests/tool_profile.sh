#!/bin/sh
# tools/vmatch-profile end to end: record a profile from a generated workload and check its
# counts, show a hand-written profile whose partner sets are worked out below by hand, the
# errors, and the plots (a PNG when gnuplot is installed, else the .dat it leaves).
# Usage: tool_profile.sh PATH_OF_VMATCH_PROFILE
set -eu
. "$(dirname "$0")/tool_lib.sh"
# sum FILE: the sum of the third column of a plot's .dat (comment lines skipped).
sum() { awk '!/^#/ { s += $3 } END { print s + 0 }' "$1"; }

# ---- usage ----
"$tool" --help >help.txt
has help.txt "       vmatch-profile show PROFILE [--top N] [--nprocs N] [--alpha A] [--cap C]"
expect_fail 1 "no command" "$tool"
expect_fail 1 "unknown command frob" "$tool" frob
expect_fail 1 "show does not take --bins" "$tool" show x.prof --bins 3
expect_fail 1 "bad value for --side" "$tool" heatmap x.prof -o x.png --side left
expect_fail 1 "heatmap needs -o FILE" "$tool" heatmap x.prof

# ---- record: the gather has (P-1)*m = 63*8 = 504 messages, one per (source 1..63, tag),
# each matched by exactly one receive, so exactly one of the two is queued: PRQ + UMQ = 504,
# 8 per source, and source 0 (the root) never appears. ----
gather="gather P=64 m=8 order=reverse"
"$tool" record "$gather" -o g.prof >rec.txt
has rec.txt "recorded $gather: 1008 operations; wrote g.prof"
"$tool" show g.prof >g.txt
has g.txt "nprocs: 64"
has g.txt "keys: 63 (context, source) in 1 context(s)"
prq=$(sed -n 's/^insertions: PRQ \([0-9]*\), UMQ \([0-9]*\)$/\1/p' g.txt)
umq=$(sed -n 's/^insertions: PRQ \([0-9]*\), UMQ \([0-9]*\)$/\2/p' g.txt)
[ -n "$prq" ] && [ $((prq + umq)) -eq 504 ] || fail "PRQ $prq + UMQ $umq is not 504"
awk '/^[0-9]/ && ($1 != 0 || $2 < 1 || $2 > 63 || $3 + $4 != 8) { exit 1 }' g.prof ||
    fail "g.prof: a key other than (0, 1..63) with 8 insertions"

# The replay of the timeline counts queued posts and arrivals itself: it must agree.
trc=0
"$tool" timeline "$gather" -o t.png --bins 50 >t.txt 2>t.err || trc=$?
grep -qF "insertions PRQ $prq, UMQ $umq (0 ANY_SOURCE" t.txt || fail "timeline: $(cat t.txt)"
[ "$(sum t.dat)" -eq 504 ] || fail "t.dat holds $(sum t.dat) insertions, not 504"

# Every receive posted before any message (interleave=0): all 504 on the PRQ.  Population
# 64 x 1 context: 1 zero (the root) and 63 eights.  Average 504/64 = 7.875 < 8: all 63
# sources.  Median (rank 31.5) 8, Q1 (15.75) = Q3 (47.25) = 8, fence 8: none, since a
# partner must exceed the edge.
"$tool" record "$gather interleave=0" -o g0.prof >/dev/null
"$tool" show g0.prof --top 1 >g0.txt
has g0.txt "insertions: PRQ 504, UMQ 0"
has g0.txt "       0          1            8     1.6%"
has g0.txt "PRQ average edge 7.875, partners 63: ctx 0: src 1-63"
has g0.txt "PRQ median  edge 8.000, partners 0: none"
has g0.txt "PRQ fence   edge 8.000, partners 0: none"
has g0.txt "UMQ average edge 0.000, partners 0: none"
# Every message first (early=100): all on the UMQ.
"$tool" record "$gather early=100 interleave=0" -o g1.prof >/dev/null
"$tool" show g1.prof >g1.txt
has g1.txt "insertions: PRQ 0, UMQ 504"

# ---- show, a profile with known counts (nprocs 16) ----
# PRQ: context 0 only, population 16 x 1: sorted, 12 zeros then 1 1 90 100 (sum 192).
#   average 192/16 = 12                          -> sources 1, 2
#   median, rank 7.5: 0                          -> 1, 2, 3, 4
#   Q1 (rank 3.75) 0, Q3 (rank 11.25) 0.25*1 = 0.25; fence 0.25 + 1.5*0.25 = 0.625
#                                                -> 1, 2, 3, 4; alpha 4: 1.25 -> 1, 2
# UMQ: contexts 0 and 1 both have UMQ counts: population 16 x 2 = 32: 22 zeros, eight 10s
# (ctx 0 src 5..12), 12 (ctx 1 src 3), 200 (ctx 1 src 0); sum 292.
#   average 292/32 = 9.125                       -> all ten (with 16 it would be 18.25)
#   median, rank 15.5: 0                         -> all ten
#   Q1 (rank 7.75) 0, Q3 (rank 23.25) 10; fence 10 + 1.5*10 = 25  -> ctx 1 src 0
#                                                   alpha 4: 50   -> ctx 1 src 0
# Cap 0.5: floor(0.5 * sqrt(16)) = 2, the two highest counts.
cat >h.prof <<'EOF'
vmatch-profile 1
layout 16 24 24
nprocs 16
# ctx src prq umq
0 1 100 0
0 2 90 0
0 3 1 0
0 4 1 0
0 5 0 10
0 6 0 10
0 7 0 10
0 8 0 10
0 9 0 10
0 10 0 10
0 11 0 10
0 12 0 10
1 0 0 200
1 3 0 12
EOF
"$tool" show h.prof >h.txt
has h.txt "keys: 14 (context, source) in 2 context(s)"
has h.txt "insertions: PRQ 192, UMQ 292"
has h.txt "       0          1          100    52.1%"
has h.txt "       1          0          200    68.5%"
has h.txt "PRQ average edge 12.000, partners 2: ctx 0: src 1-2"
has h.txt "PRQ median  edge 0.000, partners 4: ctx 0: src 1-4"
has h.txt "PRQ fence   edge 0.625, partners 4: ctx 0: src 1-4"
has h.txt "UMQ average edge 9.125, partners 10: ctx 0: src 5-12; ctx 1: src 0,3"
has h.txt "UMQ median  edge 0.000, partners 10: ctx 0: src 5-12; ctx 1: src 0,3"
has h.txt "UMQ fence   edge 25.000, partners 1: ctx 1: src 0"
"$tool" show h.prof --alpha 4 >h4.txt
has h4.txt "PRQ fence   edge 1.250, partners 2: ctx 0: src 1-2"
has h4.txt "UMQ fence   edge 50.000, partners 1: ctx 1: src 0"
"$tool" show h.prof --cap 0.5 >hc.txt
has hc.txt "PRQ median  edge 0.000, partners 2: ctx 0: src 1-2"
has hc.txt "UMQ average edge 9.125, partners 2: ctx 1: src 0,3"

# The same counts without nprocs: exit 2 unless --nprocs gives it.
sed 's/^nprocs 16$/nprocs 0/' h.prof >z.prof
expect_fail 2 "give --nprocs N" "$tool" show z.prof
"$tool" show z.prof --nprocs 16 >z.txt
has z.txt "nprocs: 16 (from --nprocs)"
grep '^[PU][RM]Q [a-z]' h.txt >h.partners
grep '^[PU][RM]Q [a-z]' z.txt >z.partners
cmp -s h.partners z.partners || fail "--nprocs 16 chose other partners than nprocs 16"
expect_fail 1 "source 8 is not below --nprocs 8" "$tool" show z.prof --nprocs 8

# ---- bad input ----
printf 'vmatch-profile 1\nlayout 16 24 24\nnprocs 16\n0 1 2\n' >bad.prof
expect_fail x "bad.prof:4: expected 'CTX SRC PRQ UMQ'" "$tool" show bad.prof
expect_fail x "bad.prof:4" "$tool" heatmap bad.prof -o bad.png
expect_fail x "cannot open 'missing.prof'" "$tool" show missing.prof
expect_fail x "unknown workload 'nosuch'" "$tool" record nosuch -o n.prof
expect_fail x "gather: P must be" "$tool" timeline "gather P=1" -o n.png
expect_fail x "unknown key 'bogus'" "$tool" record "$gather" -o n.prof --spec bogus=1
[ ! -e n.prof ] || fail "a failed record wrote n.prof"

# ---- plots ----
# Without gnuplot on PATH: exit 3, and the .dat and .gp are there.
expect_fail 3 "gnuplot not found" env PATH=/nonexistent "$tool" heatmap h.prof -o np.png
[ -s np.gp ] && [ "$(sum np.dat)" -eq 484 ] || fail "np.dat/np.gp after exit 3"
if command -v gnuplot >/dev/null 2>&1; then
    "$tool" heatmap g.prof -o g.png >/dev/null
    png g.png
    "$tool" heatmap h.prof -o hp.png --side prq >/dev/null
    png hp.png
    [ "$trc" -eq 0 ] || fail "timeline exited $trc: $(cat t.err)"
    png t.png
else
    echo "gnuplot is not installed: checking the .dat files only"
    expect_fail 3 "gnuplot not found" "$tool" heatmap g.prof -o g.png
    expect_fail 3 "gnuplot not found" "$tool" heatmap h.prof -o hp.png --side prq
    [ "$trc" -eq 3 ] || fail "timeline exited $trc without gnuplot, not 3"
fi
[ "$(sum g.dat)" -eq 504 ] || fail "g.dat holds $(sum g.dat) insertions, not 504"
[ "$(sum hp.dat)" -eq 192 ] || fail "hp.dat holds $(sum hp.dat) PRQ insertions, not 192"
grep -qxF "1 0 100" hp.dat || fail "hp.dat lacks source 1, context row 0, 100 insertions"
echo "tool_profile: all checks passed"
