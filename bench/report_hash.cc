// report_hash.cc -- the hash targets (policy=hash, hashed vector queues) that the report
// judges, one line each with the prefix "hash:", on figures the same run measured:
// the workload table (hash against the fastest baseline of each workload, the geometric
// mean over the table, and ucx on the workloads with wildcard receives), the pnp section
// (the repeated gather at P = 2048 against ob1; the bytes at the peak of the gather with
// every one of N = 4096 peers pending, against ucx) and the tag-perf section (the growth
// of the time per doubling of the queue).  Its other target, the queue microbenchmark's
// reverse search at 32768 against ucx, is judged by vmatch_bench (bench_table.cc).  A build
// without policy=hash gets "not measured" lines that say so, and every section a note.
#include "report_sections.h"

#include <cmath>
#include <cstring>

namespace vmr
{

namespace
{

const double kWorkloadBound = 1.0; // hash / the fastest baseline, on every workload
const double kGeoBound = 0.7;      // the same of the geometric means over the table
const double kWildBound = 0.33;    // hash / ucx on the workloads with wildcard receives
const double kGatherBound = 1.0;   // hash / ob1 on the pnp gathers
const double kGrowthBound = 1.2;   // tag-perf growth per doubling (strictly below)
const double kBytesBound = 1.5;    // bytes at the peak / ucx's, N = 4096 peers x 4 receives
const char *const kMemoryRow = "memory N=4096";

// Why hash was not created here ("" when it was): for the figures of "not measured" lines.
std::string hash_missing()
{
    static const std::string why = [] {
        vmatch_engine_t *e = nullptr;
        int rc = vmatch_create(kHashSpec, &e);
        vmatch_destroy(e);
        if (rc == 0)
            return std::string();
        std::string err = vmatch_last_error();
        if (err.find("unknown policy") != std::string::npos)
            return std::string("policy=hash not in this build");
        return fmt("%s not created here: %s (%s)", kHashSpec, vmatch_strerror(rc), err.c_str());
    }();
    return why;
}

Target not_measured(const std::string &what)
{
    return {what, hash_missing(), "not measured"};
}

std::string ratio_fig(double m, double spread)
{
    return (m >= 0.1 ? fmt("%.2f", m) : fmt("%.2g", m)) + fmt("±%.0f%%", spread);
}

// The baseline of row with the lowest median time (npos when none has a figure).
size_t fastest_baseline(const Report &rep, const Row &row)
{
    size_t best = (size_t)-1;
    for (size_t i = 0; i < rep.engines().size(); i++) {
        const Cell &c = row.cells[i];
        if (!rep.engines()[i].base || !cell_problem(c).empty() || std::isnan(median_ns(c)))
            continue;
        if (best == (size_t)-1 || median_ns(c) < median_ns(row.cells[best]))
            best = i;
    }
    return best;
}

// Every workload of the table: hash's time / the fastest baseline's, within each repetition.
Target every_workload(const Report &rep, size_t h)
{
    Target t;
    t.what = fmt("hash: every workload of the report: hash time / the fastest baseline's "
                 "(ucx, ob1, mpich, fuzzy) <= %.1f",
                 kWorkloadBound);
    if (!hash_missing().empty())
        return not_measured(t.what);
    size_t n = 0, meet = 0;
    double worst = NAN, best = NAN;
    std::string worst_t, best_t, without;
    for (const Row &row : rep.rows()) {
        if (row.sweep)
            continue;
        size_t b = fastest_baseline(rep, row);
        double m, sp;
        if (b == (size_t)-1 || !cell_problem(row.cells[h]).empty() ||
            !rep_speedup(row.cells[h], row.cells[b], m, sp)) {
            std::string bad = cell_problem(row.cells[h]);
            without += "; no figure: " + row.name + (bad.empty() ? "" : " (" + bad + ")");
            continue;
        }
        n++;
        meet += m <= kWorkloadBound;
        std::string text =
            row.name + " " + ratio_fig(m, sp) + " (vs " + rep.engines()[b].label + ")";
        if (std::isnan(worst) || m > worst)
            worst = m, worst_t = text;
        if (std::isnan(best) || m < best)
            best = m, best_t = text;
    }
    if (!n && without.empty())
        return {};
    t.figure = fmt("%zu of %zu workloads meet it", meet, n);
    if (n)
        t.figure += "; worst " + worst_t;
    if (n > 1)
        t.figure += ", best " + best_t;
    t.figure += without;
    t.verdict = verdict(meet < n, !without.empty());
    return t;
}

// The geometric mean over the table: hash / the baseline whose geometric mean (of the
// median times) is lowest, as the geometric mean of their ratios within each repetition.
Target geometric_mean(const Report &rep, size_t h)
{
    Target t;
    t.what = fmt("hash: geometric mean over the report: hash / the fastest baseline's "
                 "geometric mean <= %.1f",
                 kGeoBound);
    if (!hash_missing().empty())
        return not_measured(t.what);
    const std::vector<Engine> &en = rep.engines();
    // The workloads where hash and every baseline have a figure.
    std::vector<const Row *> rows;
    for (const Row &row : rep.rows()) {
        bool all = !row.sweep && cell_problem(row.cells[h]).empty();
        for (size_t i = 0; i < en.size() && all; i++)
            all = !en[i].base ||
                  (cell_problem(row.cells[i]).empty() && !std::isnan(median_ns(row.cells[i])));
        if (all)
            rows.push_back(&row);
    }
    size_t best = (size_t)-1;
    double best_g = NAN;
    for (size_t i = 0; i < en.size() && !rows.empty(); i++) {
        if (!en[i].base)
            continue;
        double s = 0;
        for (const Row *r : rows)
            s += std::log(median_ns(r->cells[i]));
        double g = std::exp(s / (double)rows.size());
        if (best == (size_t)-1 || g < best_g)
            best = i, best_g = g;
    }
    std::vector<double> per_rep;
    for (size_t r = 0; best != (size_t)-1 && r < (size_t)rep.options().reps; r++) {
        double s = 0;
        size_t k = 0;
        for (const Row *row : rows) {
            const Cell &a = row->cells[h], &b = row->cells[best];
            if (r < a.ns.size() && r < b.ns.size() && !std::isnan(a.ns[r]) &&
                !std::isnan(b.ns[r]) && a.ns[r] > 0 && b.ns[r] > 0)
                s += std::log(a.ns[r] / b.ns[r]), k++;
        }
        if (k == rows.size())
            per_rep.push_back(std::exp(s / (double)k));
    }
    if (per_rep.empty()) {
        if (rep.rows().empty())
            return {};
        t.verdict = "no figure";
        t.figure = "no workload where hash and every baseline have figures in a repetition";
        return t;
    }
    double m = median(per_rep),
           sp = 100 * (quantile(per_rep, 0.75) - quantile(per_rep, 0.25)) / 2 / m;
    t.verdict = verdict(m > kGeoBound, false);
    t.figure = fmt("%s over %zu workloads (vs %s, the baseline with the lowest geometric mean)",
                   ratio_fig(m, sp).c_str(), rows.size(), en[best].label.c_str());
    return t;
}

// The workloads with wildcard receives (master/worker and mixed in the report's suites):
// hash / ucx on each.
Target wildcard_rows(const Report &rep, size_t h)
{
    Target t;
    size_t u = find_engine(rep, "ucx");
    std::string names, fig;
    bool missed = false, missing = false;
    for (const Row &row : rep.rows()) {
        if (row.sweep || !row.wild)
            continue;
        names += (names.empty() ? "" : ", ") + row.name;
        double m, sp;
        bool has = h != (size_t)-1 && u != (size_t)-1 &&
                   rep_speedup(row.cells[h], row.cells[u], m, sp);
        fig += (fig.empty() ? "" : ", ") + row.name + " " + (has ? ratio_fig(m, sp) : "-");
        missed = missed || (has && m > kWildBound);
        missing = missing || !has;
    }
    if (names.empty())
        return {};
    t.what = fmt("hash: master/worker and wildcard rows (the workloads with wildcard "
                 "receives: %s): hash time / ucx <= %.2f",
                 names.c_str(), kWildBound);
    if (!hash_missing().empty())
        return not_measured(t.what);
    t.figure = fig;
    t.verdict = verdict(missed, missing);
    return t;
}

// Part (a) of the pnp section: hash / ob1 on each repeated gather (P = 2048, m = 10).
Target pnp_gather(const Report &rep)
{
    Target t;
    t.what = fmt("hash: pnp gather P=2048 m=10 iters=5: hash time / ob1 <= %.1f", kGatherBound);
    if (!hash_missing().empty())
        return not_measured(t.what);
    size_t h = find_engine(rep, kHashLabel), ob1 = find_engine(rep, "ob1");
    bool missed = false, missing = false;
    for (const Row &row : rep.rows()) {
        if (row.name.find(" x5") == std::string::npos)
            continue; // --full's one-shot gathers: not the target's
        double m, q1, q3;
        bool has = h != (size_t)-1 && ob1 != (size_t)-1 && !row.cells[h].wrong &&
                   !row.cells[ob1].wrong &&
                   vec_ratio(row.cells[h].ns, row.cells[ob1].ns, m, q1, q3);
        t.figure += (t.figure.empty() ? "" : ", ") + row.name + " " +
                    (has ? ratio_fig(m, 100 * (q3 - q1) / 2 / m) : "-");
        missed = missed || (has && m > kGatherBound);
        missing = missing || !has;
    }
    if (t.figure.empty())
        return {};
    t.verdict = verdict(missed, missing);
    return t;
}

// Part (c) of the pnp section, N = 4096: hash's bytes at the peak / ucx's.
Target memory_row(const Report &rep)
{
    Target t;
    t.what = fmt("hash: memory, every peer of N = 4096 with 4 receives pending: bytes at the "
                 "peak hash / ucx <= %.1f",
                 kBytesBound);
    if (!hash_missing().empty())
        return not_measured(t.what);
    size_t h = find_engine(rep, kHashLabel), u = find_engine(rep, "ucx");
    for (const Row &row : rep.rows()) {
        if (row.name != kMemoryRow)
            continue;
        bool has = h != (size_t)-1 && u != (size_t)-1 && row.cells[h].ok && row.cells[u].ok &&
                   row.cells[u].m.bytes_peak > 0;
        if (!has) {
            t.verdict = "no figure";
            t.figure = h == (size_t)-1 || u == (size_t)-1
                           ? "hash or ucx not among the engines"
                           : cell_problem(row.cells[h]) + " " + row.cells[h].error;
            return t;
        }
        double a = (double)row.cells[h].m.bytes_peak, b = (double)row.cells[u].m.bytes_peak;
        t.verdict = verdict(a / b > kBytesBound, false);
        t.figure =
            fmt("%.2f (%.0f / %.0f KiB; one pass: no spread)", a / b, a / 1024, b / 1024);
        return t;
    }
    return {};
}

// The tag-perf section: hash's growth per doubling, expected and unexpected, ucx alongside.
Target tagperf_growth_target(const TagPerf &tp)
{
    Target t;
    t.what = fmt("hash: tag-perf (after test_ucp_tag_perf), mean growth of the time per "
                 "doubling of n, n >= 16, expected and unexpected: hash < %.1f",
                 kGrowthBound);
    if (!hash_missing().empty())
        return not_measured(t.what);
    size_t h = tagperf_engine(tp, kHashLabel), u = tagperf_engine(tp, "ucx");
    bool missed = false, missing = false;
    std::string ucx;
    for (int side = 0; side < 2; side++) {
        const char *name = side ? "unexpected" : "expected";
        double m, q1, q3;
        bool has = tagperf_growth(tp, h, side, m, q1, q3);
        t.figure += fmt("%s%s ", side ? ", " : "", name) +
                    (has ? ratio_fig(m, 100 * (q3 - q1) / 2 / m) : std::string("-"));
        missed = missed || (has && m >= kGrowthBound);
        missing = missing || !has;
        ucx += (side ? ", " : "") +
               (tagperf_growth(tp, u, side, m, q1, q3) ? fmt("%.2f", m) : std::string("-"));
    }
    t.figure += " (ucx " + ucx + ")";
    if (h < tp.engines.size() && !tp.engines[h].error.empty())
        t.figure += "; " + tp.engines[h].error;
    t.verdict = verdict(missed, missing);
    return t;
}

void add(std::vector<Target> &out, const Target &t)
{
    if (!t.what.empty())
        out.push_back(t);
}

} // namespace

std::string hash_left_out_note()
{
    static const std::string note = [] {
        vmatch_engine_t *e = nullptr;
        int rc = vmatch_create(kHashSpec, &e);
        vmatch_destroy(e);
        return rc == 0 ? std::string()
                       : fmt("%s left out: %s", kHashLabel, vmatch_last_error());
    }();
    return note;
}

std::vector<Target> hash_targets(const Report *rep, const Section *pnp, const TagPerf *tp)
{
    // A build without policy=hash gets each target as "not measured", with the reason.
    std::vector<Target> out;
    bool table = false;
    if (rep)
        for (const Row &row : rep->rows())
            table |= !row.sweep;
    if (table) {
        size_t h = find_engine(*rep, kHashLabel);
        if (hash_missing().empty() && h == (size_t)-1) {
            out.push_back({"hash: the workload table", "hash not among its engines (--engines)",
                           "no figure"});
        } else {
            add(out, every_workload(*rep, h));
            add(out, geometric_mean(*rep, h));
            add(out, wildcard_rows(*rep, h));
        }
    }
    if (pnp && pnp->a && !pnp->a->rows().empty())
        add(out, pnp_gather(*pnp->a));
    if (tp && tp->ran)
        add(out, tagperf_growth_target(*tp));
    if (pnp && pnp->c && !pnp->c->rows().empty())
        add(out, memory_row(*pnp->c));
    return out;
}

} // namespace vmr
