// report_workloads.cc -- the workload table: the generated suite (and the sweep of the
// plot) on every library engine and every baseline, time per operation as a ratio to the
// MPICH-style baseline and bytes per queued entry.
#include "report_sections.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <sstream>

namespace vmr
{

namespace
{

// ---- the suite ----

// Queue depth (the headline's targets name them), in both suites: an exact pair on queues of
// 1 and 8 entries of one source, forward; 4096 exact entries matched in reverse (tag-perf's
// n = 4096).
#define VMR_QUEUE_ROWS                                                                         \
    {"forward 1 posted", "queue depth=1 side=posted order=forward rounds=20000"},              \
        {"forward 1 unexpected", "queue depth=1 side=unexpected order=forward rounds=20000"},  \
        {"forward 8 posted", "queue depth=8 side=posted order=forward rounds=2500"},           \
        {"forward 8 unexpected", "queue depth=8 side=unexpected order=forward rounds=2500"},   \
        {"reverse PRQ 4096", "queue depth=4096 side=posted order=reverse rounds=2"},           \
    {                                                                                          \
        "reverse UMQ 4096", "queue depth=4096 side=unexpected order=reverse rounds=2"          \
    }

// Moderate sizes: the whole default report takes a couple of minutes on two cores.
const Workload kSuite[] = {
    {"gather P=1024 m=4 reverse", "gather P=1024 m=4 order=reverse interleave=0"},
    {"gather P=1024 m=4 random", "gather P=1024 m=4 order=random early=25"},
    {"gather P=1024 m=4 rr", "gather P=1024 m=4 order=rr early=50"},
    {"neighbours 26 x2", "neighbours P=512 k=26 msgs=2 steps=200"},
    {"neighbours 6 random x4", "neighbours P=512 k=6 topo=random msgs=4 steps=400"},
    {"master/worker", "master P=256 tasks=20000 depth=32"},
    {"gather-linear", "gather-linear P=256 calls=40"},
    {"gather-binomial", "gather-binomial P=256 calls=1000"},
    {"bcast-binomial", "bcast-binomial P=256 calls=4000"},
    {"bcast-pipeline", "bcast-pipeline P=64 bytes=1048576 calls=40"},
    {"allreduce-rd P=200", "allreduce-rd P=200 calls=1000"},
    {"allreduce-ring", "allreduce-ring P=64 calls=80"},
    {"allreduce-rab", "allreduce-rab P=256 calls=500"},
    {"allreduce-rm k=7", "allreduce-rm P=256 k=7 calls=500 skew=200"},
    {"allgather-bruck", "allgather-bruck P=256 calls=1000"},
    {"allgather-ring", "allgather-ring P=256 calls=40"},
    {"alltoall-linear", "alltoall-linear P=256 calls=40"},
    {"alltoall-pairwise", "alltoall-pairwise P=256 calls=40"},
    {"barrier-flat", "barrier-flat P=256 calls=40"},
    {"mixed", "mixed P=512 k=26 steps=200"},
    VMR_QUEUE_ROWS,
};

// --full: the large sizes (list designs take seconds per replay here).
const Workload kFullSuite[] = {
    {"gather P=4096 m=16 reverse", "gather P=4096 m=16 order=reverse interleave=0"},
    {"gather P=4096 m=16 random", "gather P=4096 m=16 order=random early=25"},
    {"gather P=1024 m=100 rr", "gather P=1024 m=100 order=rr early=50"},
    {"neighbours 26 x4", "neighbours P=4096 k=26 msgs=4 steps=1000"},
    {"neighbours 26 random x8", "neighbours P=4096 k=26 topo=random msgs=8 steps=500"},
    {"master/worker", "master P=4096 tasks=200000 depth=256"},
    {"gather-linear", "gather-linear P=4096 calls=20"},
    {"gather-binomial", "gather-binomial P=4096 calls=2000"},
    {"bcast-binomial", "bcast-binomial P=4096 calls=20000"},
    {"bcast-pipeline", "bcast-pipeline P=1024 bytes=16777216 calls=20"},
    {"allreduce-rd P=4000", "allreduce-rd P=4000 calls=2000"},
    {"allreduce-ring", "allreduce-ring P=1024 calls=40"},
    {"allreduce-rab", "allreduce-rab P=4096 calls=1000"},
    {"allreduce-rm k=8", "allreduce-rm P=4096 k=8 calls=1000 skew=300"},
    {"allgather-bruck", "allgather-bruck P=4096 calls=2000"},
    {"allgather-ring", "allgather-ring P=4096 calls=10"},
    {"alltoall-linear", "alltoall-linear P=4096 calls=10"},
    {"alltoall-pairwise", "alltoall-pairwise P=4096 calls=10"},
    {"barrier-flat", "barrier-flat P=4096 calls=10"},
    {"mixed", "mixed P=4096 k=26 steps=1000"},
    VMR_QUEUE_ROWS,
};

// The plot: hot-spot gathers, receives pre-posted in random order, over P.
const unsigned kSweepP[] = {4, 16, 64, 256, 1024};
const unsigned kFullSweepP[] = {4, 16, 64, 256, 1024, 4096};

// Library engines, as data: an engine vmatch_create rejects on this build or machine is left
// out with a note; one whose resolved spec equals an earlier one's is shown once.
struct LibSpec {
    const char *label, *spec;
};
const LibSpec kLibSpecs[] = {
    {"ll", "policy=single storage=ll"},
    {"lla", "policy=single storage=lla"},
    {"llv", "policy=single storage=llv"},
    {"llv-avx512", "policy=single storage=llv simd=avx512"},
    {"llv-avx2", "policy=single storage=llv simd=avx2"},
    {"llv-scalar", "policy=single storage=llv simd=scalar"},
    // Partner / non-partner queues over llv with the defaults (pnp.threshold=100, pnp.cap=1);
    // the pnp section below varies them.  It needs nprocs, which every generated trace gives.
    {"pnp", "policy=pnp storage=llv"},
    // Hashed vector queues (policy=hash): left out, with a note, where the build lacks them.
    {kHashLabel, kHashSpec},
    // The default engine (vmatch_create("")): shown under the label of the engine above it
    // resolves to (llv now), its own column otherwise; the lean targets are judged on it.
    {"default", ""},
};

} // namespace

// The engines: library specs (deduplicated by resolved spec, left out when rejected),
// extra specs from the environment, then the baselines, then the inline contenders.
std::vector<Engine> collect_engines(const Options &o, std::vector<std::string> &notes)
{
    std::vector<std::pair<std::string, std::string>> specs;
    for (const LibSpec &l : kLibSpecs)
        specs.push_back({l.label, l.spec});
    if (const char *env = getenv("VMATCH_REPORT_SPECS")) {
        std::stringstream ss(env);
        std::string item;
        while (std::getline(ss, item, ';')) {
            size_t eq = item.find('=');
            if (eq == std::string::npos || eq == 0) {
                notes.push_back("VMATCH_REPORT_SPECS: '" + item + "' is not label=spec");
                continue;
            }
            specs.push_back({item.substr(0, eq), item.substr(eq + 1)});
        }
    }
    auto wanted = [&](const std::string &label) {
        if (o.engines.empty() || label == kYardstick)
            return true;
        std::string list = "," + o.engines + ",";
        return list.find("," + label + ",") != std::string::npos;
    };
    std::vector<Engine> out;
    for (auto &s : specs) {
        if (!wanted(s.first))
            continue;
        Engine en;
        en.label = s.first;
        en.spec = s.second;
        std::string why;
        if (!check_spec(en.spec, en.resolved, why)) {
            notes.push_back(fmt("%s (\"%s\") left out: %s", s.first.c_str(), s.second.c_str(),
                                why.c_str()));
            continue;
        }
        bool dup = false;
        for (const Engine &x : out)
            if (!x.base && x.resolved == en.resolved) {
                notes.push_back(
                    fmt("%s is the same engine as %s here", en.label.c_str(), x.label.c_str()));
                dup = true;
            }
        if (!dup)
            out.push_back(en);
    }
    for (const vmb::BaselineInfo &b : vmb::baselines()) {
        if (!wanted(b.name))
            continue;
        Engine en;
        en.label = b.name;
        en.base = &b;
        en.resolved = b.models;
        out.push_back(en);
    }
    // The inline contenders last: the headline compares them (report_inline.cc).
    for (const InlineInfo &x : inline_engines()) {
        Engine en;
        if (wanted(x.label) && named_engine(x.label, en))
            out.push_back(en);
    }
    return out;
}

namespace
{

// The widths of the table's columns: the workload, and each engine.
const int kNameW = 27, kCellW = 11;

void column_heads(FILE *f, const std::vector<Engine> &en, const char *ops)
{
    fprintf(f, "%-*s %8s %6s", kNameW, "workload", ops, "max q");
    for (const Engine &e : en)
        fprintf(f, " %*s", kCellW, e.label.c_str());
    fprintf(f, "\n");
}

std::string cell_text(const Cell &c, const Cell &y, bool is_yard)
{
    if (c.wrong)
        return "WRONG";
    if (!c.error.empty() || c.ns.empty())
        return "error";
    std::vector<double> ok;
    for (double x : c.ns)
        if (!std::isnan(x))
            ok.push_back(x);
    if (ok.empty())
        return "-";
    if (is_yard)
        return fmt("%.1fns", median(ok));
    std::vector<double> r = rep_ratios(c, y);
    if (r.empty())
        return "-";
    double m = median(r), spread = 100 * (quantile(r, 0.75) - quantile(r, 0.25)) / 2 / m;
    // Two decimals, or two significant digits for ratios below 0.1 (0.0034, not 0.00).
    std::string v = m >= 0.1 ? fmt("%.2f", m) : fmt("%.2g", m);
    return r.size() > 1 ? v + fmt("±%.0f", spread) : v;
}

} // namespace

std::vector<Job> workload_jobs(const Options &o)
{
    std::vector<Job> jobs;
    if (!o.main_suite)
        return jobs;
    const Workload *suite = o.full ? kFullSuite : kSuite;
    size_t nsuite =
        o.full ? sizeof kFullSuite / sizeof *kFullSuite : sizeof kSuite / sizeof *kSuite;
    for (size_t i = 0; i < nsuite; i++)
        if (o.only.empty() || strstr(suite[i].name, o.only.c_str()))
            jobs.push_back({suite[i].name, suite[i].spec, false});
    const unsigned *sp = o.full ? kFullSweepP : kSweepP;
    size_t nsp =
        o.full ? sizeof kFullSweepP / sizeof *kFullSweepP : sizeof kSweepP / sizeof *kSweepP;
    if (o.only.empty() || std::string("sweep").find(o.only) != std::string::npos)
        for (size_t i = 0; i < nsp; i++)
            jobs.push_back({fmt("sweep: gather P=%u m=4", sp[i]),
                            fmt("gather P=%u m=4 order=random interleave=0", sp[i]), true});
    return jobs;
}

void print_engines(FILE *f, const std::vector<Engine> &en, const char *heading)
{
    fputs(heading, f);
    for (const Engine &e : en)
        fprintf(f, "  %-11s %s%s\n", e.label.c_str(), e.inl ? "inline: " : "",
                e.base ? e.base->models : e.resolved.c_str());
}

void print_tables(FILE *f, const Report &rep, bool legend)
{
    const std::vector<Engine> &en = rep.engines();
    size_t y = rep.yard();
    if (legend) {
        fprintf(f,
                "\nTime per operation as a ratio to the MPICH-style baseline (%s column: its "
                "ns per operation).\n",
                kYardstick);
        fprintf(f,
                "Below 1 is faster than %s.  A cell is the median over %d repetitions of the "
                "ratio measured\nwithin each repetition, ±half its interquartile range in "
                "percent; WRONG: the engine\nmatched differently from the reference model.\n\n",
                kYardstick, rep.options().reps);
    } else {
        fprintf(f,
                "\nworkloads: time per operation / %s's (%s: ns per operation), median of %d "
                "repetitions ±half IQR %%; below 1 is faster\n",
                kYardstick, kYardstick, rep.options().reps);
    }
    column_heads(f, en, "ops");
    std::vector<std::vector<double>> logs(en.size());
    for (const Row &row : rep.rows()) {
        if (row.sweep)
            continue;
        fprintf(f, "%-*s %8zu %6llu", kNameW, row.name.c_str(), row.ops,
                (unsigned long long)row.ref.max_pending);
        for (size_t i = 0; i < en.size(); i++) {
            fprintf(f, " %s",
                    pad(cell_text(row.cells[i], row.cells[y], i == y), kCellW).c_str());
            std::vector<double> r = rep_ratios(row.cells[i], row.cells[y]);
            if (!r.empty() && !row.cells[i].wrong)
                logs[i].push_back(std::log(median(r)));
        }
        fprintf(f, "\n");
    }
    fprintf(f, "%-*s %8s %6s", kNameW, "geometric mean", "", "");
    for (size_t i = 0; i < en.size(); i++) {
        double s = 0;
        for (double l : logs[i])
            s += l;
        double g = logs[i].empty() ? NAN : std::exp(s / (double)logs[i].size());
        std::string c = i == y          ? "1"
                        : std::isnan(g) ? "-"
                        : g >= 0.1      ? fmt("%.2f", g)
                                        : fmt("%.2g", g);
        fprintf(f, " %*s", kCellW, c.c_str());
    }
    if (legend)
        fprintf(f, "\n\nBytes held per queued entry at the peak: (bytes at the peak - bytes of "
                   "the empty engine) /\nentries queued then.  Where few entries are queued "
                   "this is the first allocation (vmatch:\na first pool slab); baselines "
                   "count what matching adds beyond MPI's request objects\n(see "
                   "bench/baseline_*.cc).\n\n");
    else
        fprintf(f, "\n\nworkloads: bytes held per queued entry at the peak\n");
    column_heads(f, en, "");
    for (const Row &row : rep.rows()) {
        if (row.sweep)
            continue;
        fprintf(f, "%-*s %8s %6llu", kNameW, row.name.c_str(), "",
                (unsigned long long)row.ref.max_pending);
        for (size_t i = 0; i < en.size(); i++) {
            double b = bytes_per_entry(row.cells[i]);
            std::string c = row.cells[i].ok && !std::isnan(b) ? fmt("%.1f", b) : "-";
            fprintf(f, " %*s", kCellW, c.c_str());
        }
        fprintf(f, "\n");
    }
    if (legend) {
        print_engines(f, en, "\nengines:\n");
        // Which rows the hash targets' wildcard one reads (report_hash.cc): those whose traces
        // post wildcard receives or probe with wildcards.
        std::string wild;
        for (const Row &row : rep.rows())
            if (!row.sweep && row.wild)
                wild += (wild.empty() ? "" : ", ") + row.name;
        fprintf(f,
                "\nThe hash targets judged on this table (the \"hash:\" lines at the end): "
                "%s on every workload\nagainst the fastest baseline of the row, the geometric "
                "means of the two, and %s / ucx\non the workloads with wildcard receives, the "
                "master/worker and wildcard rows: %s.\n",
                kHashLabel, kHashLabel, wild.empty() ? "none here" : wild.c_str());
    }
    for (const Row &row : rep.rows())
        for (size_t i = 0; i < en.size(); i++) {
            const Cell &c = row.cells[i];
            if (c.wrong)
                fprintf(f, "WRONG: %s on %s: first differs at operation %zu%s%s\n",
                        en[i].label.c_str(), row.name.c_str(), c.diff_at,
                        c.error.empty() ? "" : ": ", c.error.c_str());
            else if (!c.error.empty())
                fprintf(f, "error: %s on %s: %s\n", en[i].label.c_str(), row.name.c_str(),
                        c.error.c_str());
        }
}

} // namespace vmr
