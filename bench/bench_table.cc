// bench_table.cc -- the table of vmatch_bench --vmatch_table, its compact form for the
// terminal, and the targets of llv judged on its rows.
#include "bench_table.h"
#include "stats.h"

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <fstream>

namespace vmb
{

std::string bench_name(Kind k, const std::string &label, Side s, Order o, uint64_t len)
{
    if (k == kStream)
        return "stream/" + std::to_string(len);
    std::string n = std::string(kKindName[k]) + "/" + label + "/" + kSideName[s] + "/";
    if (k == kQueue)
        n += std::string(kOrderName[o]) + "/";
    return n + std::to_string(len);
}

// The widest read the CPU has (the stream reference's kernel).
const char *stream_isa()
{
#if defined(__x86_64__)
    if (__builtin_cpu_supports("avx512f"))
        return "avx512";
    if (__builtin_cpu_supports("avx2"))
        return "avx2";
#endif
    return "scalar";
}

double min_of(const std::vector<double> &v)
{
    return *std::min_element(v.begin(), v.end());
}

namespace
{

const Row *find(const std::string &name)
{
    auto it = g_row_of.find(name);
    return it == g_row_of.end() ? nullptr : &g_rows[it->second];
}

double mid(const Row &r)
{
    return r.ns.empty() ? r.agg_median : median(r.ns);
}

bool shown(const Row &r)
{
    return mid(r) >= 0 || !r.error.empty();
}

} // namespace

void TableReporter::ReportRuns(const std::vector<Run> &runs)
{
    std::vector<Run> shown;
    for (const Run &r : runs) {
        collect(r);
        if (r.run_type == Run::RT_Aggregate || r.repetitions <= 1 || r.error_occurred)
            shown.push_back(r);
    }
    if (!shown.empty())
        ConsoleReporter::ReportRuns(shown);
}

void TableReporter::Finalize()
{
    ConsoleReporter::Finalize();
    print_table();
    std::vector<std::string> lines = targets();
    if (t_.terminal) {
        print_compact(*t_.terminal);
        if (t_.summary.empty())
            print_targets(*t_.terminal, lines);
    }
    print_targets(GetOutputStream(), lines);
    if (!t_.summary.empty()) {
        std::ofstream f(t_.summary, std::ios::app);
        for (const std::string &l : lines)
            f << l << '\n';
        f.close();
        ok_ = !f.fail();
    }
}

void TableReporter::collect(const Run &r)
{
    auto it = g_row_of.find(r.run_name.function_name);
    if (it == g_row_of.end())
        return;
    Row &row = g_rows[it->second];
    double to_ns = 1e9 / benchmark::GetTimeUnitMultiplier(r.time_unit);
    if (r.error_occurred) {
        row.error = r.error_message;
        return;
    }
    if (r.run_type == Run::RT_Aggregate) {
        if (r.aggregate_name == "median")
            row.agg_median = r.GetAdjustedCPUTime() * to_ns;
        else if (r.aggregate_name == "cv")
            row.agg_cv = r.GetAdjustedCPUTime();
        return;
    }
    row.ns.push_back(r.GetAdjustedCPUTime() * to_ns);
    auto get = [&](const char *k) {
        auto c = r.counters.find(k);
        return c == r.counters.end() ? -1.0 : c->second.value;
    };
    row.insp = get("insp/match");
    row.bytes = get("bytes/entry");
    row.net_bytes = get("net_bytes/entry");
}

void TableReporter::line(const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    GetOutputStream() << buf << '\n';
}

void TableReporter::print_table()
{
    bool any = false;
    for (const Row &r : g_rows)
        any |= shown(r);
    if (!any)
        return;
    const char *b = t_.baseline.c_str();
    line("%s", "");
    line("vmatch: ns per match, including the re-append that keeps the queue at its length");
    line("  ns/match  CPU time per match, median of the row's repetitions (reps)");
    line("  spread    interquartile range / median of this row's repetitions");
    line("  vs %-6s %s time / this time, of the medians: > 1 is faster than %s", b, b, b);
    line("  best      the same ratio of the fastest repetitions (noise only slows down)");
    line("  range     the ratio between quartiles: %s q1 / this q3 - %s q3 / this q1", b, b);
    line("  /stream   this time / the time of a plain %s read of the bytes the llv search",
         stream_isa());
    line("            reads (2 per entry for an exact search; see llv_search_bytes)");
    line("  insp      entries compared per match (inspected / iterations)");
    line("  B/entry   bytes held / queued entries at the end of the run;");
    line("  net B/e   the same without the bytes of the empty engine");
    line("%s", "engines (label: resolved spec):");
    for (const auto &d : g_described)
        line("  %-11s %s", d.first.c_str(), d.second.c_str());
    line("%s", "");
    line("%-5s %-11s %-4s %-7s %6s %10s %4s %7s %6s %6s %-12s %7s %8s %8s %8s", "kind",
         "storage", "side", "order", "length", "ns/match", "reps", "spread",
         (std::string("vs ") + b).c_str(), "best", "range", "/stream", "insp", "B/entry",
         "net B/e");
    const Row *prev = nullptr;
    for (const Row &r : g_rows) {
        if (r.kind == kStream || !shown(r))
            continue;
        if (prev && (prev->label != r.label || prev->side != r.side || prev->kind != r.kind))
            line("%s", "");
        prev = &r;
        const char *order = r.kind == kQueue ? kOrderName[r.order] : "reverse";
        if (!r.error.empty()) {
            line("%-5s %-11s %-4s %-7s %6llu  error: %s", kKindName[r.kind], r.label.c_str(),
                 kSideName[r.side], order, (unsigned long long)r.len, r.error.c_str());
            continue;
        }
        double m = mid(r);
        char spread[16] = "-", ratio[16] = "-", best[16] = "-", range[24] = "-",
             stream[16] = "-";
        if (r.ns.size() > 1)
            snprintf(spread, sizeof spread, "%.0f%%",
                     100 * (quantile(r.ns, 0.75) - quantile(r.ns, 0.25)) / m);
        else if (r.agg_cv >= 0)
            snprintf(spread, sizeof spread, "cv%.0f%%", 100 * r.agg_cv);
        const Row *base = find(bench_name(r.kind, t_.baseline, r.side, r.order, r.len));
        double bm = base ? mid(*base) : -1;
        if (bm > 0 && m > 0) {
            snprintf(ratio, sizeof ratio, "%.2f", bm / m);
            if (!base->ns.empty() && !r.ns.empty()) {
                snprintf(best, sizeof best, "%.2f", min_of(base->ns) / min_of(r.ns));
                snprintf(range, sizeof range, "%.2f-%.2f",
                         quantile(base->ns, 0.25) / quantile(r.ns, 0.75),
                         quantile(base->ns, 0.75) / quantile(r.ns, 0.25));
            }
        }
        const Row *s =
            r.stream ? find(bench_name(kStream, "", kPrq, kForward, r.stream)) : nullptr;
        if (s && mid(*s) > 0)
            snprintf(stream, sizeof stream, "%.2f", m / mid(*s));
        line("%-5s %-11s %-4s %-7s %6llu %10.1f %4zu %7s %6s %6s %-12s %7s %8.1f %8.1f "
             "%8.1f",
             kKindName[r.kind], r.label.c_str(), kSideName[r.side], order,
             (unsigned long long)r.len, m, r.ns.size(), spread, ratio, best, range, stream,
             r.insp, r.bytes, r.net_bytes);
    }
    line("%s", "");
    line("stream reference (plain %s read, the buffer warm in cache as the queue is):",
         stream_isa());
    line("%10s %10s %4s %7s %8s", "bytes", "ns", "reps", "spread", "GB/s");
    for (const Row &r : g_rows) {
        if (r.kind != kStream || !shown(r))
            continue;
        double m = mid(r);
        char spread[16] = "-";
        if (r.ns.size() > 1)
            snprintf(spread, sizeof spread, "%.0f%%",
                     100 * (quantile(r.ns, 0.75) - quantile(r.ns, 0.25)) / m);
        line("%10llu %10.1f %4zu %7s %8.1f", (unsigned long long)r.len, m, r.ns.size(), spread,
             m > 0 ? (double)r.len / m : 0);
    }
}

// ---- the compact table ----

namespace
{

// A ratio in three significant figures at most (0.98, 12.3, 64).
std::string ratio_text(double r)
{
    char b[32];
    snprintf(b, sizeof b, r < 10 ? "%.2f" : r < 100 ? "%.1f" : "%.0f", r);
    return b;
}

// The rows of the compact table: (kind, order, length) in the order first registered; the
// two queues are side by side.
struct Key {
    Kind kind;
    Order order;
    uint64_t len;
    bool operator==(const Key &k) const
    {
        return kind == k.kind && order == k.order && len == k.len;
    }
};

// A cell of the compact table: the baseline's ns per match, the others' ratio to it.
std::string compact_cell(const Key &k, Side side, const std::string &label,
                         const std::string &baseline)
{
    const Row *r = find(bench_name(k.kind, label, side, k.order, k.len));
    if (!r || !shown(*r))
        return "";
    if (!r->error.empty())
        return "error";
    const Row *base = find(bench_name(k.kind, baseline, side, k.order, k.len));
    double m = mid(*r), bm = base && base->error.empty() ? mid(*base) : -1;
    if (m > 0 && label == baseline)
        return ratio_text(m) + "ns";
    return m > 0 && bm > 0 ? ratio_text(bm / m) : "-";
}

} // namespace

// One line per row of the table and two columns per engine, PRQ and UMQ, so that it fits a
// terminal.
void TableReporter::print_compact(std::ostream &os) const
{
    std::vector<std::string> labels;
    std::vector<Key> keys;
    for (const Row &r : g_rows) {
        if (r.kind == kStream || !shown(r))
            continue;
        if (std::find(labels.begin(), labels.end(), r.label) == labels.end())
            labels.push_back(r.label);
        Key k{r.kind, r.kind == kQueue ? r.order : kReverse, r.len};
        if (std::find(keys.begin(), keys.end(), k) == keys.end())
            keys.push_back(k);
    }
    if (keys.empty())
        return;
    const char *b = t_.baseline.c_str();
    char buf[256];
    os << "\nqueues: " << b << ": ns per match; the others: " << b
       << " time / theirs (above 1: faster), medians\n";
    // Kernels this CPU lacks are named; another engine left out (hash, on a build without
    // it) gets its reason too.
    std::string out;
    for (const auto &d : g_described)
        if (d.second.rfind("left out", 0) == 0 && d.first.rfind("llv-", 0) == 0)
            out += " " + d.first;
    if (!out.empty())
        os << "left out (this CPU or build lacks them; why: the log):" << out << '\n';
    for (const auto &d : g_described)
        if (d.second.rfind("left out", 0) == 0 && d.first.rfind("llv-", 0) != 0)
            os << "note: " << d.first << ' ' << d.second << '\n';
    // Columns: 8 wide for the baseline's ns, 6 for the ratios (at most 5 characters).
    auto width = [&](const std::string &l) { return l == t_.baseline ? 8 : 6; };
    snprintf(buf, sizeof buf, "%-5s %-7s %6s", "", "", "");
    os << buf;
    for (const std::string &l : labels) {
        snprintf(buf, sizeof buf, " %*s", 2 * width(l) + 1, l.c_str());
        os << buf;
    }
    snprintf(buf, sizeof buf, "\n%-5s %-7s %6s", "kind", "order", "length");
    os << buf;
    for (const std::string &l : labels) {
        snprintf(buf, sizeof buf, " %*s %*s", width(l), "prq", width(l), "umq");
        os << buf;
    }
    os << '\n';
    const Key *prev = nullptr;
    for (const Key &k : keys) {
        if (prev && prev->kind != k.kind)
            os << '\n';
        prev = &k;
        snprintf(buf, sizeof buf, "%-5s %-7s %6llu", kKindName[k.kind], kOrderName[k.order],
                 (unsigned long long)k.len);
        os << buf;
        for (const std::string &l : labels) {
            snprintf(buf, sizeof buf, " %*s %*s", width(l),
                     compact_cell(k, kPrq, l, t_.baseline).c_str(), width(l),
                     compact_cell(k, kUmq, l, t_.baseline).c_str());
            os << buf;
        }
        os << '\n';
    }
}

// ---- the targets ----

namespace
{

// The targets of llv, from its issue, judged on the fastest llv kernel of this CPU.  A ratio
// is the other engine's time / llv's (stream: llv's time / the plain read's), of the row
// medians; its spread is the range between the quartiles, as in the table.
struct QueueTarget {
    const char *what;
    Kind kind;
    Order order;
    std::vector<Side> sides;
    std::vector<uint64_t> lens;
    const char *versus; // "ll", "fuzzy", or "stream": the bytes read plainly
    double bound;       // the ratio must reach it (stream: stay at or below it)
    bool strict;        // "faster than": above the bound, not at it
};

const QueueTarget kTargets[] = {
    {"forward search, 1 and 8 entries: llv no slower than ll (ratio at least 0.91)",
     kQueue,
     kForward,
     {kPrq, kUmq},
     {1, 8},
     "ll",
     0.91,
     false},
    {"reverse search, UMQ, 4096 / 32768: llv at least 20x faster than ll",
     kQueue,
     kReverse,
     {kUmq},
     {4096, 32768},
     "ll",
     20,
     false},
    {"reverse search, UMQ, 4096 / 32768: llv within 2x of a plain read of the bytes searched",
     kQueue,
     kReverse,
     {kUmq},
     {4096, 32768},
     "stream",
     2,
     false},
    {"wildcard mix, 4096: llv at least 10x faster than ll",
     kWild,
     kReverse,
     {kPrq, kUmq},
     {4096},
     "ll",
     10,
     false},
    {"reverse search, 32768: llv at least 1.5x faster than fuzzy",
     kQueue,
     kReverse,
     {kPrq, kUmq},
     {32768},
     "fuzzy",
     1.5,
     false},
    {"wildcard mix, 4096: llv faster than fuzzy",
     kWild,
     kReverse,
     {kPrq, kUmq},
     {4096},
     "fuzzy",
     1,
     true},
};

// num / den of the row medians, and the range between the quartiles (num q1 / den q3 to
// num q3 / den q1); false when a row is missing or has no figure.
bool row_ratio(const Row *num, const Row *den, double &r, double &lo, double &hi)
{
    if (!num || !den || !num->error.empty() || !den->error.empty() || mid(*num) <= 0 ||
        mid(*den) <= 0)
        return false;
    r = mid(*num) / mid(*den);
    lo = hi = r;
    if (!num->ns.empty() && !den->ns.empty()) {
        lo = quantile(num->ns, 0.25) / quantile(den->ns, 0.75);
        hi = quantile(num->ns, 0.75) / quantile(den->ns, 0.25);
    }
    return true;
}

// The ratio of a target on one row, with the quartile range; false when a row is missing.
// stream divides llv by the read, the others divide the other engine by llv.
bool target_ratio(const QueueTarget &t, const Row &llv, double &r, double &lo, double &hi)
{
    if (!strcmp(t.versus, "stream"))
        return row_ratio(&llv, find(bench_name(kStream, "", kPrq, kForward, llv.stream)), r, lo,
                         hi);
    return row_ratio(find(bench_name(t.kind, t.versus, llv.side, llv.order, llv.len)), &llv, r,
                     lo, hi);
}

// A target line: the verdict, then what and the figure.
std::string target_line(bool missed, bool missing, const std::string &text)
{
    char head[16];
    snprintf(head, sizeof head, "%-9s ", missed ? "missed" : missing ? "no figure" : "met");
    return head + text;
}

// The lean target (lean calls and small queues): forward search at 1 and 8 entries, the
// fastest llv kernel's time / the fastest baseline's on the same row (the lowest median of
// mpich, ob1, ucx and fuzzy), at most this.
const double kLeanForwardBound = 1.2;

// The hash target (policy=hash): reverse search at 32768 on both queues, hash's time / ucx's,
// of the row medians (the range between the quartiles), at most this.
const double kHashReverseBound = 1.0;

} // namespace

std::string TableReporter::lean_target() const
{
    std::vector<std::string> bases;
    for (const auto &d : g_described)
        if (d.second.rfind("baseline: ", 0) == 0)
            bases.push_back(d.first);
    std::string fig;
    bool missed = false, missing = false, any = false;
    for (Side s : {kPrq, kUmq})
        for (uint64_t len : {1, 8}) {
            const Row *llv = find(bench_name(kQueue, t_.fast_llv, s, kForward, len)),
                      *best = nullptr;
            for (const std::string &b : bases) {
                const Row *r = find(bench_name(kQueue, b, s, kForward, len));
                if (r && r->error.empty() && mid(*r) > 0 && (!best || mid(*r) < mid(*best)))
                    best = r;
            }
            fig += std::string(fig.empty() ? "" : ", ") + kSideName[s] + "/" +
                   std::to_string(len) + " ";
            double r, lo, hi;
            any = any || (llv && shown(*llv));
            if (!row_ratio(llv, best, r, lo, hi)) {
                missing = true;
                fig += "-";
                continue;
            }
            missed = missed || r > kLeanForwardBound;
            fig += ratio_text(r) + " (" + ratio_text(lo) + "-" + ratio_text(hi) + ") vs " +
                   best->label;
        }
    if (!any)
        return ""; // its rows were not run (--benchmark_filter): not judged
    return target_line(missed, missing,
                       "lean: queues, forward search 1 and 8: llv time / the fastest "
                       "baseline's <= 1.2 (" +
                           t_.fast_llv + "): " + fig);
}

std::string TableReporter::hash_target() const
{
    std::string what = "hash: queues, reverse search 32768: hash time / ucx <= 1.0";
    bool ucx_ran = false;
    for (Side s : {kPrq, kUmq}) {
        const Row *u = find(bench_name(kQueue, "ucx", s, kReverse, 32768));
        ucx_ran = ucx_ran || (u && shown(*u));
    }
    for (const auto &d : g_described)
        if (ucx_ran && d.first == "hash" && d.second.rfind("left out", 0) == 0) {
            std::string why = d.second.find("unknown policy") != std::string::npos
                                  ? "policy=hash not in this build"
                                  : "hash " + d.second;
            return "not measured " + what + " (" + why + ")";
        }
    std::string fig;
    bool missed = false, missing = false, any = false;
    for (Side s : {kPrq, kUmq}) {
        const Row *h = find(bench_name(kQueue, "hash", s, kReverse, 32768)),
                  *u = find(bench_name(kQueue, "ucx", s, kReverse, 32768));
        fig += std::string(fig.empty() ? "" : ", ") + kSideName[s] + " ";
        any = any || (h && shown(*h));
        double r, lo, hi;
        if (!row_ratio(h, u, r, lo, hi)) {
            missing = true;
            fig += "-";
            continue;
        }
        missed = missed || r > kHashReverseBound;
        fig += ratio_text(r) + " (" + ratio_text(lo) + "-" + ratio_text(hi) + ")";
    }
    if (!any)
        return ""; // its rows were not run (--benchmark_filter): not judged
    return target_line(missed, missing, what + ": " + fig);
}

std::vector<std::string> TableReporter::targets() const
{
    std::vector<std::string> out;
    for (const QueueTarget &t : kTargets) {
        std::string fig;
        bool missed = false, missing = false, any = false;
        for (Side s : t.sides)
            for (uint64_t len : t.lens) {
                const Row *llv = find(bench_name(t.kind, t_.fast_llv, s, t.order, len));
                std::string at = std::string(kSideName[s]) + "/" + std::to_string(len) + " ";
                double r, lo, hi;
                fig += fig.empty() ? "" : ", ";
                if (!llv || !shown(*llv) || !target_ratio(t, *llv, r, lo, hi)) {
                    missing = true;
                    any = any || (llv && shown(*llv));
                    fig += at + "-";
                    continue;
                }
                any = true;
                bool stream = !strcmp(t.versus, "stream");
                bool ok = stream ? r <= t.bound : t.strict ? r > t.bound : r >= t.bound;
                missed = missed || !ok;
                fig += at + ratio_text(r) + "x (" + ratio_text(lo) + "-" + ratio_text(hi) + ")";
            }
        if (!any)
            continue; // its rows were not run (--benchmark_filter): not judged
        out.push_back(
            target_line(missed, missing,
                        std::string("queues: ") + t.what + " (" + t_.fast_llv + "): " + fig));
    }
    std::string lean = lean_target();
    if (!lean.empty())
        out.push_back(lean);
    std::string hash = hash_target();
    if (!hash.empty())
        out.push_back(hash);
    return out;
}

void TableReporter::print_targets(std::ostream &os, const std::vector<std::string> &lines) const
{
    if (lines.empty())
        return;
    os << "\ntargets (ratio of the medians, and between the quartiles):\n";
    for (const std::string &l : lines)
        os << l << '\n';
}

} // namespace vmb
