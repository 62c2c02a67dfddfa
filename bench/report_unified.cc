// report_unified.cc -- the unified section of the report: policy=unified, each collective
// class profiled in a shared queue, then given levels of queues by source rank,
// point-to-point traffic in its own structure (thesis chapter 5).
//
// Three parts, run like the workload report (reference check, untimed pass, interleaved
// timed repetitions with a new instance each, so every timed replay pays for the profiling
// call, ratios within each repetition):
//   collectives  a linear gather of P = 2048 repeated 20 times (target: unified+llv /
//                single+llv <= 0.3), and short-queue collectives, recursive doubling
//                P = 64, ring and Bruck (unified / single <= 1.05, over llv); unified over
//                ll against single over ll shows the thesis's setting (linked lists);
//   mixed        the report's point-to-point mix and a P = 1024 mix with a linear gather
//                every 10 steps and a linear alltoall every 20 among the neighbour
//                exchanges: unified (unified.p2p = hash, pnp, single) against the best of
//                single, pnp, hash and cluster over llv (target <= 1.0);
//   memory       bytes and queues at the peak against ob1 at N = 1024 and 4096: linear
//                gathers (collective classes) and the pnp section's rows (every peer with 4
//                point-to-point receives pending); target bytes <= 1.0 x ob1.

#include "report_sections.h"

#include <cmath>
#include <cstring>

namespace vmr
{

namespace
{

const char *const kUnified = "unified+llv"; // the default unified (p2p=hash), judged

const std::vector<SectionSpec> kCollSpecs = {
    {"single+llv", "policy=single storage=llv", false},
    {kUnified, "policy=unified storage=llv", false},
    {"single+ll", "policy=single storage=ll", false},
    {"unified+ll", "policy=unified storage=ll", false},
    {kHashLabel, kHashSpec, false},
    {"ob1", nullptr, false},
    {"ucx", nullptr, false},
};

// The contenders of the mixed target first (kContenders of them), then the others.
const std::vector<SectionSpec> kMixSpecs = {
    {"single+llv", "policy=single storage=llv", false},
    {"pnp+llv", "policy=pnp storage=llv", false},
    {kHashLabel, kHashSpec, false},
    {"cluster+llv", "policy=cluster storage=llv", true},
    {kUnified, "policy=unified storage=llv", false},
    {"unified p2p=pnp", "policy=unified storage=llv unified.p2p=pnp", false},
    {"unified p2p=single", "policy=unified storage=llv unified.p2p=single", false},
    {"ob1", nullptr, false},
    {"ucx", nullptr, false},
};
const size_t kContenders = 4;

const std::vector<SectionSpec> kMemSpecs = {
    {"ob1", nullptr, false},
    {kUnified, "policy=unified storage=llv", false},
    {"single+llv", "policy=single storage=llv", false},
    {kHashLabel, kHashSpec, false},
};

const Workload kGatherRow = {"gather-linear P=2048 x20", "gather-linear P=2048 calls=20"};
const std::vector<Workload> kShortRows = {
    {"allreduce-rd P=64", "allreduce-rd P=64 calls=1000"},
    {"allreduce-ring P=64", "allreduce-ring P=64 calls=80"},
    {"allgather-bruck P=64", "allgather-bruck P=64 calls=1000"},
};
const std::vector<Workload> kMixRows = {
    {"mixed", "mixed P=512 k=26 steps=200"},
    {"mixed P=1024 gather+alltoall", "mixed P=1024 k=26 steps=200 gather=10 alltoall=20"},
};
const std::vector<Workload> kCollMemRows = {
    {"gather-linear P=1024", "gather-linear P=1024 calls=3"},
    {"gather-linear P=4096", "gather-linear P=4096 calls=3"},
};

const double kGatherTarget = 0.3, kShortTarget = 1.05, kMixTarget = 1.0, kMemTarget = 1.0;

// Part (c)'s rows: the linear gathers, then the pnp section's memory rows.
std::vector<Workload> memory_rows(const Options &o)
{
    std::vector<Workload> w = kCollMemRows, pnp = pnp_memory_workloads(o);
    w.insert(w.end(), pnp.begin(), pnp.end());
    return w;
}

// One table per row: every engine's ns/op, its time over ref's, entries inspected per
// search, queues and KiB at the peak.
void print_part(FILE *f, const Report &rep, const char *ref)
{
    const std::vector<Engine> &en = rep.engines();
    size_t r = find_engine(rep, ref);
    for (const Row &row : rep.rows()) {
        fprintf(f, "\n%s: %zu ops, %llu entries at the peak\n", row.name.c_str(), row.ops,
                (unsigned long long)row.ref.max_pending);
        fprintf(f, "  %-20s %8s %13s %9s %6s %8s %8s\n", "engine", "ns/op",
                fmt("/ %s", ref).c_str(), "inspected", "queues", "KiB", "max KiB");
        for (size_t i = 0; i < en.size(); i++) {
            const Cell &c = row.cells[i];
            if (print_no_figure(f, 20, en[i].label, c))
                continue;
            fprintf(f, "  %-20s %8.1f %s %9.1f %6llu %8.1f %8.1f\n", en[i].label.c_str(),
                    median_ns(c), pad(i == r ? "1" : time_ratio(row, i, r), 13).c_str(),
                    c.m.searches ? (double)c.m.inspected / (double)c.m.searches : NAN,
                    (unsigned long long)c.m.queues_peak, (double)c.m.bytes_peak / 1024,
                    (double)c.m.bytes_max / 1024);
        }
    }
}

} // namespace

Section run_unified_section(const Options &o)
{
    Section s;
    Options oc = o, om = o;
    oc.reps = o.reps_given ? o.reps : o.full ? 15 : 9;
    oc.fresh = true; // each timed replay profiles again
    om.reps = 0;     // memory: the untimed pass alone
    section_line(o, fmt("== unified section: collectives (%d repetitions)", oc.reps));
    s.a.reset(new Report(oc, section_engines("unified", kCollSpecs, s.notes)));
    std::vector<Workload> rows = {kGatherRow};
    rows.insert(rows.end(), kShortRows.begin(), kShortRows.end());
    run_rows(*s.a, rows, o);

    section_line(o, fmt("== unified section: point-to-point mixed with collectives (%d "
                        "repetitions)",
                        oc.reps));
    s.b.reset(new Report(oc, section_engines("unified", kMixSpecs, s.notes)));
    run_rows(*s.b, kMixRows, o);

    section_line(o, "== unified section: memory at the peak");
    s.c.reset(new Report(om, section_engines("unified", kMemSpecs, s.notes)));
    run_rows(*s.c, memory_rows(o), o);
    return s;
}

void print_unified_section(FILE *f, const Section &s, bool legend)
{
    if (legend) {
        fprintf(f, "\n== unified: collective classes in levels of queues, point-to-point "
                   "apart\n");
        fprintf(
            f,
            "ns/op: median CPU ns per operation over %d repetitions, each a new instance "
            "(so each\npays for its classes' profiling calls); / X: the engine's time over "
            "X's within each\nrepetition, median ±half the interquartile range; inspected: "
            "entries compared per search;\nqueues, KiB: vmatch_stats (the baselines' "
            "counts) when the most entries were queued;\nmax KiB: the most bytes, sampled "
            "at those peaks and every %d operations (the memory\ntarget's figure: unified's "
            "largest structures come after the profiling call).\nunified+llv is "
            "policy=unified with its defaults (unified.p2p=hash, unified.kc=32).\n",
            s.a->options().reps, VM_WL_SAMPLE_EVERY);
    }
    fprintf(f, "\nunified (a): collectives, against single over the same storage\n");
    print_part(f, *s.a, "single+llv");
    fprintf(f, "\nunified (b): point-to-point mixed with collectives\n");
    print_part(f, *s.b, kHashLabel);
    fprintf(f, "\nunified (c): memory at the peak (untimed)\n");
    print_part(f, *s.c, "ob1");
    print_notes(f, s.notes);
}

std::vector<Target> unified_targets(const Section &s)
{
    std::vector<Target> out;
    const Report &c = *s.a;
    size_t cu = find_engine(c, kUnified), cs = find_engine(c, "single+llv");
    for (const Row &row : c.rows()) {
        double bound = row.name == kGatherRow.name ? kGatherTarget : kShortTarget;
        out.push_back(ratio_at_most(
            fmt("unified: %s: %s / single+llv <= %.2f", row.name.c_str(), kUnified, bound), row,
            cu, cs, bound));
    }
    const Report &m = *s.b;
    size_t u = find_engine(m, kUnified);
    for (const Row &row : m.rows()) {
        // The fastest contender of this row by median time, then the ratio to it.
        size_t best = (size_t)-1;
        for (size_t i = 0; i < kContenders && i < kMixSpecs.size(); i++) {
            size_t k = find_engine(m, kMixSpecs[i].label);
            if (k < row.cells.size() && cell_problem(row.cells[k]).empty() &&
                (best == (size_t)-1 || median_ns(row.cells[k]) < median_ns(row.cells[best])))
                best = k;
        }
        Target t;
        double med = NAN;
        t.what =
            fmt("unified: %s: unified+llv / the best of single, pnp, hash, cluster <= %.2f",
                row.name.c_str(), kMixTarget);
        t.figure = best == (size_t)-1 ? "-" : time_ratio(row, u, best, &med);
        if (best != (size_t)-1)
            t.figure += " (vs " + m.engines()[best].label + ")";
        t.verdict = verdict(med > kMixTarget, std::isnan(med));
        out.push_back(t);
    }
    const Report &mr = *s.c;
    size_t mu = find_engine(mr, kUnified), mo = find_engine(mr, "ob1");
    for (const Row &row : mr.rows()) {
        Target t;
        t.what = fmt("unified: memory %s: unified+llv bytes / ob1 <= %.2f", row.name.c_str(),
                     kMemTarget);
        if (mu >= row.cells.size() || mo >= row.cells.size() || !row.cells[mu].ok ||
            !row.cells[mo].ok) {
            t.verdict = "no figure";
            t.figure = "-";
        } else {
            const Cell &a = row.cells[mu], &b = row.cells[mo];
            double r = (double)a.m.bytes_max / (double)b.m.bytes_max;
            t.figure =
                fmt("%.2f (%llu / %llu bytes at most; queues %llu / %llu)", r,
                    (unsigned long long)a.m.bytes_max, (unsigned long long)b.m.bytes_max,
                    (unsigned long long)a.m.queues_peak, (unsigned long long)b.m.queues_peak);
            t.verdict = r <= kMemTarget ? "met" : "missed";
        }
        out.push_back(t);
    }
    return out;
}

void list_unified_workloads(FILE *f, const Options &o)
{
    fprintf(f, "unified section:\n");
    list_workloads(f, {kGatherRow});
    list_workloads(f, kShortRows);
    list_workloads(f, kMixRows);
    list_workloads(f, memory_rows(o));
}

} // namespace vmr
