#!/bin/sh
# tools/vmatch-cluster end to end: a hand-written profile whose clusters are worked out below
# by hand (Algorithm 3.1 and K-means), the errors, and the picture (a PNG when gnuplot is
# installed, else the .dat and .gp it leaves and exit status 3).
# Usage: tool_cluster.sh PATH_OF_VMATCH_CLUSTER
set -eu
. "$(dirname "$0")/tool_lib.sh"

# PRQ counts 3 6 1 3 3 of ranks 1..5 among 8: E = 16/8 = 2, SD^2 = (1+16+1+1+1 + 3*4)/8 = 4,
# E + SD = 4.  Ascending: the three absent ranks, rank 3 (1) and rank 1 (3) total exactly 4
# and stay in cluster 0; ranks 4 and 5 (3 each) and rank 2 (6) would each pass 4 and are
# alone.  UMQ: one insertion each, E = 5/8, SD^2 = (5 * 9/64 + 3 * 25/64)/8 = 15/64.
cat >h.prof <<'P'
vmatch-profile 1
layout 16 24 24
nprocs 8
0 1 3 1
0 2 6 1
0 3 1 1
0 4 3 1
0 5 3 1
P
"$tool" h.prof --algo heuristic --cap 0 >h.txt
has h.txt "PRQ: 5 sources with insertions, population 8 (nprocs 8 x 1 context(s)); heuristic: E = 2, SD = 2, E + SD = 4, cap 0: 4 cluster(s)"
has h.txt "       0        5            4   25.0%  0:1 0:3, 3 not in the profile"
has h.txt "       1        1            3   18.8%  0:4"
has h.txt "       2        1            3   18.8%  0:5"
has h.txt "       3        1            6   37.5%  0:2"
has h.txt "UMQ: 5 sources with insertions, population 8 (nprocs 8 x 1 context(s)); heuristic: E = 0.625, SD = 0.484123, E + SD = 1.10912, cap 0: 5 cluster(s)"

# cap 1: at most about 1 * floor(sqrt(8)) = 2 clusters, each allowed max(E + SD, total / 2).
# PRQ: total 16, so 8: the zeros, 0:3, 0:1 and 0:4 carry 7, 0:5 would make 10; 0:5 then 0:2
# would make 9.  UMQ: total 5, so 2.5: the counts of 1 go two by two.
"$tool" h.prof --algo heuristic --cap 1 >c.txt
has c.txt "PRQ: 5 sources with insertions, population 8 (nprocs 8 x 1 context(s)); heuristic: E = 2, SD = 2, E + SD = 4, cap 1: 3 cluster(s)"
has c.txt "       0        6            7   43.8%  0:1 0:3 0:4, 3 not in the profile"
has c.txt "       1        1            3   18.8%  0:5"
has c.txt "       2        1            6   37.5%  0:2"
has c.txt "UMQ: 5 sources with insertions, population 8 (nprocs 8 x 1 context(s)); heuristic: E = 0.625, SD = 0.484123, E + SD = 1.10912, cap 1: 3 cluster(s)"
has c.txt "       1        2            2   40.0%  0:3 0:4"

# K-means, k = 2 on the PRQ: points 0 (x3), 1, 3 (x3), 6; seeds 0 and 6 (farthest); 3 is as
# far from both and goes to the lower; centres 10/7 and 6, and nothing moves again.
# SSE = 3 (10/7)^2 + (3/7)^2 + 3 (11/7)^2 = 672/49 = 13.7143.  On the UMQ the counts are 0
# and 1 only: a cluster each, no iteration.
"$tool" h.prof --algo kmeans --k 2 >k.txt
has k.txt "PRQ: 5 sources with insertions, population 8 (nprocs 8 x 1 context(s)); kmeans k=2: 2 cluster(s), 2 iteration(s), SSE 13.7143"
has k.txt "       0        7           10   62.5%  0:1 0:3 0:4 0:5, 3 not in the profile"
has k.txt "       1        1            6   37.5%  0:2"
has k.txt "UMQ: 5 sources with insertions, population 8 (nprocs 8 x 1 context(s)); kmeans k=2: 2 cluster(s), 0 iteration(s), SSE 0"
has k.txt "       0        3            0    0.0%  3 not in the profile"

# ---- usage and errors ----
"$tool" --help >help.txt
has help.txt "usage: vmatch-cluster PROFILE --algo heuristic|kmeans [--k K] [--cap C] [--nprocs N]"
expect_fail 1 "bad value for --cap: 1025" "$tool" h.prof --algo heuristic --cap 1025
expect_fail 1 "--algo heuristic|kmeans is required" "$tool" h.prof
expect_fail 1 "bad value for --algo: dbscan" "$tool" h.prof --algo dbscan
expect_fail 1 "bad value for --k: 0" "$tool" h.prof --algo kmeans --k 0
expect_fail 1 "bad value for --k: 4097" "$tool" h.prof --algo kmeans --k 4097
expect_fail 1 "no PROFILE" "$tool" --algo kmeans
expect_fail 1 "cannot open" "$tool" missing.prof --algo heuristic
expect_fail 1 "--nprocs 9 differs" "$tool" h.prof --algo heuristic --nprocs 9
printf 'vmatch-profile 1\nlayout 16 24 24\nnprocs 0\n0 1 3 1\n' >n.prof
expect_fail 2 "give --nprocs N" "$tool" n.prof --algo heuristic
"$tool" n.prof --algo heuristic --nprocs 4 >n.txt
has n.txt "PRQ: 1 sources with insertions, population 4 (nprocs 4 x 1 context(s)); heuristic: E = 0.75, SD = 1.29904, E + SD = 2.04904, cap 2: 2 cluster(s)"
printf 'vmatch-profile 1\nlayout 16 24 24\nnprocs 8\n0 1 3\n' >bad.prof
expect_fail 1 "bad.prof:4" "$tool" bad.prof --algo heuristic

# ---- the picture ----
rc=0
"$tool" h.prof --algo heuristic --png pic.png >pic.txt 2>pic.err || rc=$?
[ -s pic.dat ] && [ -s pic.gp ] || fail "pic.dat or pic.gp missing"
[ "$(grep -cv '^#' pic.dat | tr -d ' ')" -ge 10 ] || fail "pic.dat lacks the 10 points"
if command -v gnuplot >/dev/null 2>&1; then
    [ "$rc" -eq 0 ] || fail "--png exited $rc: $(cat pic.err)"
    png pic.png
    has pic.txt "wrote pic.png (data pic.dat, script pic.gp)"
else
    [ "$rc" -eq 3 ] || fail "--png without gnuplot exited $rc, not 3"
    grep -qF "gnuplot not found" pic.err || fail "no 'gnuplot not found' message"
fi
echo "tool_cluster: all checks passed"
