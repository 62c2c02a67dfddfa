// report_cluster.cc -- the cluster section of the report: policy=cluster, the sources
// grouped by a profile's counts with a queue per group (thesis chapter 3).
//
// Every cluster engine reads a profile recorded from the same workload just before (an
// untimed replay with profile.record=on: profile one replay, measure the next), as
// pnp-static does in the pnp section.  Three parts, run like the workload report (reference
// check, untimed pass, interleaved timed repetitions, ratios within each repetition):
//   gather  the hot-spot gather P = 2048, m = 10, iters=5, receives in rr and random order:
//           the heuristic (Algorithm 3.1) with cluster.cap 2 (the default), 0, 1 and 4 and
//           K-means with K = 2, 4, 16, 64, 128 over llv, the heuristic over ll, against
//           single+llv, ob1's per-peer lists, pnp-static (c = 46, every peer a partner) and
//           hash;
//   sparse  the pnp section's neighbour and short-queue rows: cluster / single over the same
//           storage (ll, lla, llv);
//   memory  the pnp section's memory rows (every peer with 4 receives pending, N = 1024 and
//           4096): bytes and queues at the peak against ob1, the caps of the gather too.
// Targets: gather cluster heuristic+llv / single+llv <= 0.5 and / ob1 <= 1.5 (an aim);
// sparse and short rows cluster / single <= 1.05; memory at N = 4096 cluster / ob1 <= 1.0.

#include "report_sections.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace vmr
{

namespace
{

struct ClusterSpec {
    const char *label, *spec; // spec nullptr: the baseline of that name
    bool profiled;
    bool memory; // also in part (c)
};

const char *const kClusterLabel = "cluster+llv"; // the heuristic over llv, judged

// Every engine of part (a); memory: also one of part (c)'s.
const ClusterSpec kSpecs[] = {
    {"ob1", nullptr, false, true},
    {"single+llv", "policy=single storage=llv", false, true},
    {kHashLabel, kHashSpec, false, true},
    {"static+llv c=46", "policy=pnp-static storage=llv pnp.cap=46", true, true},
    {kClusterLabel, "policy=cluster storage=llv", true, true},
    {"cap=0 (no bound)", "policy=cluster storage=llv cluster.cap=0", true, true},
    {"cap=1", "policy=cluster storage=llv cluster.cap=1", true, true},
    {"cap=4", "policy=cluster storage=llv cluster.cap=4", true, true},
    {"cluster+ll", "policy=cluster storage=ll", true, true},
    {"kmeans K=2", "policy=cluster storage=llv cluster.algo=kmeans cluster.k=2", true, false},
    {"kmeans K=4", "policy=cluster storage=llv cluster.algo=kmeans cluster.k=4", true, false},
    {"kmeans K=16", "policy=cluster storage=llv cluster.algo=kmeans cluster.k=16", true, true},
    {"kmeans K=64", "policy=cluster storage=llv cluster.algo=kmeans cluster.k=64", true, false},
    {"kmeans K=128", "policy=cluster storage=llv cluster.algo=kmeans cluster.k=128", true,
     false},
};

const double kGatherTarget = 0.5, kOb1Aim = 1.5, kSparseTarget = 1.05, kMemoryTarget = 1.0;

// The engines of kSpecs (memory: only those marked for part (c)).
std::vector<Engine> engines(bool memory, std::vector<std::string> &notes)
{
    std::vector<SectionSpec> keep;
    for (const ClusterSpec &s : kSpecs)
        if (!memory || s.memory)
            keep.push_back({s.label, s.spec, s.profiled});
    return section_engines("cluster", keep, notes);
}

void print_gather(FILE *f, const Report &rep, bool legend)
{
    const std::vector<Engine> &en = rep.engines();
    size_t sl = find_engine(rep, "single+llv"), ob1 = find_engine(rep, "ob1");
    if (legend)
        fprintf(
            f,
            "\ncluster (a): hot-spot gather, 2047 peers x m = 10 messages to rank 0, "
            "iters=5.  Each cluster\nengine reads a profile recorded from the same "
            "workload.  ns/op: median CPU ns per operation,\n%d repetitions, a new "
            "instance each; / single+llv, / ob1: the engine's time over theirs\nwithin each "
            "repetition, median ±half the interquartile range (below 1: faster);\n"
            "inspected: entries compared per search; queues: vmatch_stats after one replay; "
            "KiB: bytes\nat the peak.  cluster+llv: cluster.algo=heuristic (Algorithm 3.1) "
            "with the default\ncluster.cap=2; cap=C: the same with cluster.cap=C (0: no "
            "bound); kmeans K: cluster.algo=kmeans\ncluster.k=K, over llv; static+llv c=46: "
            "pnp-static with every peer a partner.\n",
            rep.options().reps);
    else
        fprintf(f, "\ncluster (a): hot-spot gather; engine time / single+llv and / ob1, median "
                   "±half IQR\n");
    for (const Row &row : rep.rows()) {
        fprintf(f, "\n%s: %zu ops, %llu entries at the peak\n", row.name.c_str(), row.ops,
                (unsigned long long)row.ref.max_pending);
        fprintf(f, "  %-17s %8s %13s %13s %9s %6s %7s\n", "engine", "ns/op", "/ single+llv",
                "/ ob1", "inspected", "queues", "KiB");
        for (size_t i = 0; i < en.size(); i++) {
            const Cell &c = row.cells[i];
            if (print_no_figure(f, 17, en[i].label, c))
                continue;
            std::string q = c.has_end ? fmt("%llu", (unsigned long long)c.end.queues)
                                      : fmt("%llu", (unsigned long long)c.m.queues_peak);
            fprintf(f, "  %-17s %8.1f %s %s %9.1f %6s %7.0f\n", en[i].label.c_str(),
                    median_ns(c), pad(i == sl ? "1" : time_ratio(row, i, sl), 13).c_str(),
                    pad(i == ob1 ? "1" : time_ratio(row, i, ob1), 13).c_str(),
                    c.m.searches ? (double)c.m.inspected / (double)c.m.searches : NAN,
                    q.c_str(), (double)c.m.bytes_peak / 1024);
        }
    }
}

} // namespace

Section run_cluster_section(const Options &o)
{
    Section s;
    Options og = o, os = o, om = o;
    og.reps = o.reps_given ? o.reps : 7;
    og.fresh = true;
    os.reps = sparse_reps(o); // judged against 1.05: more repetitions, as the pnp section's
    om.reps = 0;              // memory: the untimed pass alone
    section_line(o, fmt("== cluster section: hot-spot gather (%d repetitions)", og.reps));
    s.a.reset(new Report(og, engines(false, s.notes)));
    run_rows(*s.a, pnp_gather_workloads(), o);

    section_line(o, fmt("== cluster section: sparse neighbours and short queues (%d "
                        "repetitions)",
                        os.reps));
    s.b.reset(new Report(os, versus_single_engines("cluster", "cluster", true, s.notes)));
    run_rows(*s.b, pnp_sparse_workloads(), o);

    section_line(o, "== cluster section: memory at the peak");
    s.c.reset(new Report(om, engines(true, s.notes)));
    run_rows(*s.c, pnp_memory_workloads(o), o);
    return s;
}

void print_cluster_section(FILE *f, const Section &s, bool legend)
{
    if (legend)
        fprintf(f, "\n== cluster: a queue per cluster of sources\n");
    print_gather(f, *s.a, legend);

    if (legend)
        fprintf(
            f,
            "\ncluster (b): the pnp section's sparse neighbour and short-queue rows: "
            "cluster (heuristic,\nprofiled from the same workload) against single over the "
            "same storage.  single: its median ns\nper operation; cluster/single: their "
            "times within each of %d repetitions, median ±half the\ninterquartile range "
            "(target: at most %.2f); queues: cluster+llv's vmatch_stats after one replay.\n\n",
            s.b->options().reps, kSparseTarget);
    else
        fprintf(f, "\ncluster (b): cluster / single over the same storage, median ±half IQR\n");
    print_versus_single(f, *s.b, "cluster", "queues",
                        [](const Cell &c) { return c.end.queues; });

    if (legend)
        fprintf(f, "\ncluster (c): memory at the peak of a gather whose every peer has m = 4 "
                   "receives pending\n(the pnp section's rows).  bytes: vmatch_stats bytes "
                   "(the baselines' bytes()) at the peak;\nx ob1: bytes / ob1's; queues: "
                   "vmatch_stats queues.\n\n");
    else
        fprintf(f, "\ncluster (c): memory at the peak, every peer with 4 receives pending\n");
    print_memory(f, *s.c, false);
    print_notes(f, s.notes);
}

std::vector<Target> cluster_targets(const Section &s)
{
    std::vector<Target> out;
    const Report &g = *s.a;
    size_t c = find_engine(g, kClusterLabel), sl = find_engine(g, "single+llv"),
           ob1 = find_engine(g, "ob1");
    for (const Row &row : g.rows()) {
        out.push_back(ratio_at_most(
            "cluster: " + row.name + fmt(": cluster+llv / single+llv <= %.2f", kGatherTarget),
            row, c, sl, kGatherTarget));
        out.push_back(ratio_at_most("cluster: " + row.name +
                                        fmt(": cluster+llv / ob1 <= %.2f (aim)", kOb1Aim),
                                    row, c, ob1, kOb1Aim));
    }
    std::vector<Target> sp = versus_single_targets(*s.b, "cluster", "cluster: ", kSparseTarget);
    out.insert(out.end(), sp.begin(), sp.end());
    const Report &mr = *s.c;
    size_t mc = find_engine(mr, kClusterLabel), mo = find_engine(mr, "ob1");
    for (const Row &row : mr.rows()) {
        if (row.name.find("4096") == std::string::npos)
            continue;
        Target t;
        t.what =
            "cluster: " + row.name + fmt(": cluster+llv bytes / ob1 <= %.2f", kMemoryTarget);
        if (mc >= row.cells.size() || mo >= row.cells.size() || !row.cells[mc].ok ||
            !row.cells[mo].ok) {
            t.verdict = "no figure";
            t.figure = "-";
        } else {
            double r = (double)row.cells[mc].m.bytes_peak / (double)row.cells[mo].m.bytes_peak;
            t.figure = fmt("%.2f (%llu / %llu bytes)", r,
                           (unsigned long long)row.cells[mc].m.bytes_peak,
                           (unsigned long long)row.cells[mo].m.bytes_peak);
            t.verdict = r <= kMemoryTarget ? "met" : "missed";
        }
        out.push_back(t);
    }
    return out;
}

void list_cluster_workloads(FILE *f, const Options &o)
{
    fprintf(f, "cluster section:\n");
    list_workloads(f, pnp_gather_workloads());
    list_workloads(f, pnp_sparse_workloads());
    list_workloads(f, pnp_memory_workloads(o));
}

} // namespace vmr
