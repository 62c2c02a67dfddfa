// vmatch_bench.cc -- search-order benchmarks of the vmatch storages (Google Benchmark).
//
// The three search orders of section 6.4.3 of the Ghazimirsaeed thesis: the match is at the
// head (forward), in the middle (middle) or at the tail (reverse) of a queue that is kept at
// length L, for every storage, on the posted-receive queue (prq) and on the
// unexpected-message queue (umq).  Benchmark names are queue/<label>/<side>/<order>/<L>.
//
// One iteration is one match plus the re-append that keeps the length:
//   prq: post L exact receives (tags 0..L-1); each iteration a message arrives for the
//        target receive (removing it) and the same receive is posted again (tail).
//   umq: L messages arrive (tags 0..L-1); each iteration a receive is posted for the target
//        message (removing it) and the same message arrives again (PRQ empty: UMQ tail).
// Every match is checked against the expected request or message; a wrong answer stops the
// benchmark with an error, so a wrong engine is never timed.
//
// Counters: insp/match, entries compared per iteration (vmatch_stats inspected; both calls
// of an iteration count their searches, the re-append searches an empty queue);
// bytes/entry, vmatch_stats bytes / queued entries at the end of the run; net_bytes/entry,
// the same without the bytes of the empty engine.
//
// Flags of this program (the rest go to Google Benchmark, see --help):
//   --vmatch_table           print a table storage x side x order x length at the end (with
//                            repetitions the console then shows only the aggregates; the
//                            table and --benchmark_out still get every repetition)
//   --vmatch_specs=L=S;L=S   extra engines, label=spec pairs (also VMATCH_BENCH_SPECS)
//   --vmatch_baseline=LABEL  the engine the ratios compare against (default ll)

#include "vmatch.h"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <unistd.h>
#include <vector>

namespace
{

// The engines benchmarked, one row per storage: a label (used in the benchmark names) and
// a vmatch_create spec.  Add a row here to benchmark a new storage.
struct Engine {
    std::string label, spec;
};
const Engine kEngines[] = {
    {"ll", "policy=single storage=ll"},
    {"lla", "policy=single storage=lla"},
};

const uint64_t kLengths[] = {1, 8, 64, 512, 4096, 32768};

enum Side { kPrq, kUmq };
enum Order { kForward, kMiddle, kReverse };
const char *const kSideName[] = {"prq", "umq"};
const char *const kOrderName[] = {"forward", "middle", "reverse"};

const uint32_t kCtx = 1;
const int32_t kSrc = 0;

// Where the target tag is.  The queue starts as tags 0..L-1 and every iteration removes the
// target and appends it again, so the target at iteration k is base + (k mod period):
//   forward: the head cycles through every tag: base 0, period L;
//   middle:  index m = L/2 is removed; the m tags before it never move and the L-m tags from
//            it on rotate by one each iteration: base m, period L-m;
//   reverse: the tail is removed and re-appended, the queue never changes: base L-1,
//            period 1.
struct Cursor {
    uint64_t base, period, k = 0;
    Cursor(Order o, uint64_t len)
        : base(o == kForward  ? 0
               : o == kMiddle ? len / 2
                              : len - 1),
          period(o == kForward  ? len
                 : o == kMiddle ? len - len / 2
                                : 1)
    {
    }
    uint64_t next()
    {
        uint64_t t = base + k;
        k = k + 1 == period ? 0 : k + 1;
        return t;
    }
};

struct EngineDeleter {
    void operator()(vmatch_engine_t *e) const { vmatch_destroy(e); }
};
using EnginePtr = std::unique_ptr<vmatch_engine_t, EngineDeleter>;

std::string error_text(const char *what, int rc)
{
    std::string s = std::string(what) + ": " + vmatch_strerror(rc);
    const char *detail = vmatch_last_error();
    if (detail && *detail)
        s += std::string(" (") + detail + ")";
    return s;
}

// Kept out of the timed loop.
__attribute__((noinline, cold)) void wrong_match(benchmark::State &st, const char *call, int rc,
                                                 const void *got, const char *tok, uint64_t tag,
                                                 uint64_t len)
{
    char buf[256];
    long long idx = got ? (long long)((const char *)got - tok) : -1;
    if (rc < 0) {
        st.SkipWithError(error_text(call, rc).c_str());
        return;
    }
    if (got && (idx < 0 || (uint64_t)idx >= len))
        snprintf(buf, sizeof buf, "%s for tag %llu: rc %d, a foreign payload %p", call,
                 (unsigned long long)tag, rc, got);
    else
        snprintf(buf, sizeof buf, "%s for tag %llu: rc %d, payload of tag %lld (-1: none)",
                 call, (unsigned long long)tag, rc, idx);
    st.SkipWithError(buf);
}

void bench_queue(benchmark::State &st, const std::string &spec, Side side, Order order,
                 uint64_t len)
{
    vmatch_engine_t *raw = nullptr;
    int rc = vmatch_create(spec.c_str(), &raw);
    if (rc < 0) {
        st.SkipWithError(error_text(("vmatch_create(\"" + spec + "\")").c_str(), rc).c_str());
        return;
    }
    EnginePtr e(raw);
    vmatch_stats_t empty, before, after;
    vmatch_stats(e.get(), &empty);

    // Match bits and payloads of every tag, prepared outside the timed loop.  The payload of
    // tag t (request on the PRQ, message on the UMQ) is &tok[t].
    std::vector<vmatch_bits_t> mbits(len), rbits(len), rcare(len);
    std::vector<char> tok(len);
    for (uint64_t t = 0; t < len; t++) {
        if ((rc = vmatch_mpi_pack(e.get(), kCtx, kSrc, (int32_t)t, &mbits[t], nullptr)) < 0 ||
            (rc = vmatch_mpi_pack(e.get(), kCtx, kSrc, (int32_t)t, &rbits[t], &rcare[t])) < 0) {
            st.SkipWithError(error_text("vmatch_mpi_pack of the tags", rc).c_str());
            return;
        }
    }
    char other = 0; // the handle of the side that does not queue
    void *got = nullptr;
    for (uint64_t t = 0; t < len; t++) {
        rc = side == kPrq ? vmatch_post(e.get(), rbits[t], rcare[t], 0, &tok[t], &got)
                          : vmatch_arrive(e.get(), mbits[t], 0, &tok[t], &got);
        if (rc != VMATCH_QUEUED) {
            wrong_match(st, side == kPrq ? "filling post" : "filling arrive", rc, got,
                        tok.data(), t, len);
            return;
        }
    }

    Cursor cur(order, len);
    vmatch_stats(e.get(), &before);
    if (side == kPrq) {
        for (auto _ : st) {
            uint64_t t = cur.next();
            got = nullptr;
            rc = vmatch_arrive(e.get(), mbits[t], 0, &other, &got);
            if (__builtin_expect(rc != VMATCH_MATCHED || got != &tok[t], 0)) {
                wrong_match(st, "vmatch_arrive", rc, got, tok.data(), t, len);
                break;
            }
            rc = vmatch_post(e.get(), rbits[t], rcare[t], 0, &tok[t], &got);
            if (__builtin_expect(rc != VMATCH_QUEUED, 0)) {
                wrong_match(st, "re-post", rc, got, tok.data(), t, len);
                break;
            }
        }
    } else {
        for (auto _ : st) {
            uint64_t t = cur.next();
            got = nullptr;
            rc = vmatch_post(e.get(), rbits[t], rcare[t], 0, &other, &got);
            if (__builtin_expect(rc != VMATCH_MATCHED || got != &tok[t], 0)) {
                wrong_match(st, "vmatch_post", rc, got, tok.data(), t, len);
                break;
            }
            rc = vmatch_arrive(e.get(), mbits[t], 0, &tok[t], &got);
            if (__builtin_expect(rc != VMATCH_QUEUED, 0)) {
                wrong_match(st, "re-arrive", rc, got, tok.data(), t, len);
                break;
            }
        }
    }
    if (st.error_occurred())
        return;
    vmatch_stats(e.get(), &after);
    uint64_t queued = after.posted + after.unexpected;
    if ((side == kPrq ? after.posted : after.unexpected) != len || queued != len) {
        char buf[160];
        snprintf(buf, sizeof buf,
                 "queue length not kept: posted %llu, unexpected %llu, want %llu",
                 (unsigned long long)after.posted, (unsigned long long)after.unexpected,
                 (unsigned long long)len);
        st.SkipWithError(buf);
        return;
    }
    double iters = (double)st.iterations();
    st.counters["insp/match"] =
        iters ? (double)(after.inspected - before.inspected) / iters : 0;
    st.counters["bytes/entry"] = (double)after.bytes / (double)len;
    st.counters["net_bytes/entry"] = ((double)after.bytes - (double)empty.bytes) / (double)len;
}

// ---- the table ----

struct Row {
    std::string label, name;
    Side side = kPrq;
    Order order = kForward;
    uint64_t len = 0;
    std::vector<double> ns; // CPU ns per match of each repetition
    double agg_median = -1, agg_cv = -1;
    double insp = -1, bytes = -1, net_bytes = -1;
    std::string error;
};

std::vector<Row> g_rows;
std::map<std::string, size_t> g_row_of; // benchmark name -> index in g_rows
std::vector<std::pair<std::string, std::string>> g_described; // label, resolved spec

std::string bench_name(const std::string &label, Side s, Order o, uint64_t len)
{
    return "queue/" + label + "/" + kSideName[s] + "/" + kOrderName[o] + "/" +
           std::to_string(len);
}

// The q-quantile of v (0 <= q <= 1), interpolating between neighbours.
double quantile(std::vector<double> v, double q)
{
    std::sort(v.begin(), v.end());
    double pos = q * (double)(v.size() - 1);
    size_t i = (size_t)pos;
    return i + 1 < v.size() ? v[i] + (pos - (double)i) * (v[i + 1] - v[i]) : v[i];
}

double median(const std::vector<double> &v)
{
    return quantile(v, 0.5);
}

double min_of(const std::vector<double> &v)
{
    return *std::min_element(v.begin(), v.end());
}

// The console part of --vmatch_table: Google Benchmark's console output, but with
// repetitions only the aggregates are shown (every repetition still goes to the table and
// to --benchmark_out).  At the end, the table.
class TableReporter : public benchmark::ConsoleReporter
{
  public:
    TableReporter(OutputOptions opts, std::string baseline)
        : ConsoleReporter(opts), baseline_(std::move(baseline))
    {
    }

    void ReportRuns(const std::vector<Run> &runs) override
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

    void Finalize() override
    {
        ConsoleReporter::Finalize();
        print_table();
    }

  private:
    std::string baseline_;
    int reps_ = 0;

    void collect(const Run &r)
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
        reps_ = std::max(reps_, (int)row.ns.size());
        auto get = [&](const char *k) {
            auto c = r.counters.find(k);
            return c == r.counters.end() ? -1.0 : c->second.value;
        };
        row.insp = get("insp/match");
        row.bytes = get("bytes/entry");
        row.net_bytes = get("net_bytes/entry");
    }

    const Row *baseline_of(const Row &row) const
    {
        auto it = g_row_of.find(bench_name(baseline_, row.side, row.order, row.len));
        return it == g_row_of.end() ? nullptr : &g_rows[it->second];
    }

    static double mid(const Row &r) { return r.ns.empty() ? r.agg_median : median(r.ns); }

    void line(const char *fmt, ...) __attribute__((format(printf, 2, 3)))
    {
        char buf[512];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(buf, sizeof buf, fmt, ap);
        va_end(ap);
        GetOutputStream() << buf << '\n';
    }

    void print_table()
    {
        bool any = false;
        for (const Row &r : g_rows)
            any |= !r.ns.empty() || r.agg_median >= 0 || !r.error.empty();
        if (!any)
            return;
        const char *b = baseline_.c_str();
        line("%s", "");
        line(
            "vmatch: ns per match, including the re-append that keeps the queue at its length");
        line("  ns/match  CPU time per match, median of %d repetition(s)", reps_);
        line("  spread    interquartile range / median of this row's repetitions");
        line("  vs %-6s %s time / this time, of the medians: > 1 is faster than %s", b, b, b);
        line("  best      the same ratio of the fastest repetitions (noise only slows down)");
        line("  range     the ratio between quartiles: %s q1 / this q3 - %s q3 / this q1", b,
             b);
        line("  insp      entries compared per match (vmatch_stats inspected / iterations)");
        line("  B/entry   vmatch_stats bytes / queued entries at the end of the run;");
        line("  net B/e   the same without the bytes of the empty engine");
        line("%s", "engines (label: resolved spec):");
        for (const auto &d : g_described)
            line("  %-9s %s", d.first.c_str(), d.second.c_str());
        line("%s", "");
        line("%-9s %-4s %-7s %6s %10s %7s %6s %6s %-12s %8s %8s %8s", "storage", "side",
             "order", "length", "ns/match", "spread", (std::string("vs ") + b).c_str(), "best",
             "range", "insp", "B/entry", "net B/e");
        const Row *prev = nullptr;
        for (const Row &r : g_rows) {
            double m = mid(r);
            if (m < 0 && r.error.empty())
                continue; // filtered out
            if (prev && (prev->label != r.label || prev->side != r.side))
                line("%s", "");
            prev = &r;
            if (!r.error.empty()) {
                line("%-9s %-4s %-7s %6llu  error: %s", r.label.c_str(), kSideName[r.side],
                     kOrderName[r.order], (unsigned long long)r.len, r.error.c_str());
                continue;
            }
            char spread[16] = "-", ratio[16] = "-", best[16] = "-", range[24] = "-";
            if (r.ns.size() > 1)
                snprintf(spread, sizeof spread, "%.0f%%",
                         100 * (quantile(r.ns, 0.75) - quantile(r.ns, 0.25)) / m);
            else if (r.agg_cv >= 0)
                snprintf(spread, sizeof spread, "cv%.0f%%", 100 * r.agg_cv);
            const Row *base = baseline_of(r);
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
            line("%-9s %-4s %-7s %6llu %10.1f %7s %6s %6s %-12s %8.1f %8.1f %8.1f",
                 r.label.c_str(), kSideName[r.side], kOrderName[r.order],
                 (unsigned long long)r.len, m, spread, ratio, best, range, r.insp, r.bytes,
                 r.net_bytes);
        }
    }
};

// "label=spec;label=spec" -> engines.  Returns false with a message on a bad entry.
bool parse_specs(const char *text, std::vector<Engine> &out, std::string &err)
{
    std::string s = text;
    size_t pos = 0;
    while (pos <= s.size()) {
        size_t end = s.find(';', pos);
        if (end == std::string::npos)
            end = s.size();
        std::string item = s.substr(pos, end - pos);
        pos = end + 1;
        size_t b = item.find_first_not_of(" \t"), e = item.find_last_not_of(" \t");
        if (b == std::string::npos)
            continue;
        item = item.substr(b, e - b + 1);
        size_t eq = item.find('=');
        std::string label = item.substr(0, eq);
        if (eq == std::string::npos || label.empty() ||
            label.find_first_of("/ \t") != std::string::npos) {
            err = "bad engine '" + item + "': want label=spec, label without '/' or blanks";
            return false;
        }
        out.push_back({label, item.substr(eq + 1)});
    }
    return true;
}

void usage()
{
    printf("vmatch_bench flags (the others go to Google Benchmark):\n"
           "  --vmatch_table            print a table storage x side x order x length at "
           "the end\n"
           "                            (the console then shows only the aggregates)\n"
           "  --vmatch_specs=L=S;L=S    extra engines as label=spec pairs (also the "
           "environment\n"
           "                            variable VMATCH_BENCH_SPECS)\n"
           "  --vmatch_baseline=LABEL   engine the table's ratios compare against (default "
           "ll)\n\n");
}

} // namespace

int main(int argc, char **argv)
{
    bool table = false;
    std::string baseline = "ll", err;
    std::vector<Engine> engines(std::begin(kEngines), std::end(kEngines));
    const char *env = getenv("VMATCH_BENCH_SPECS");
    if (env && !parse_specs(env, engines, err)) {
        fprintf(stderr, "vmatch_bench: VMATCH_BENCH_SPECS: %s\n", err.c_str());
        return 1;
    }
    int n = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--vmatch_table")) {
            table = true;
        } else if (!strncmp(a, "--vmatch_specs=", 15)) {
            if (!parse_specs(a + 15, engines, err)) {
                fprintf(stderr, "vmatch_bench: --vmatch_specs: %s\n", err.c_str());
                return 1;
            }
        } else if (!strncmp(a, "--vmatch_baseline=", 18)) {
            baseline = a + 18;
        } else {
            if (!strcmp(a, "--help"))
                usage();
            argv[n++] = argv[i];
        }
    }
    argc = n;
    argv[argc] = nullptr;

    for (size_t i = 0; i < engines.size(); i++)
        for (size_t j = 0; j < i; j++)
            if (engines[i].label == engines[j].label) {
                fprintf(stderr, "vmatch_bench: engine label '%s' given twice\n",
                        engines[i].label.c_str());
                return 1;
            }

    for (const Engine &en : engines) {
        // An engine this build or machine cannot make is left out, with a note.
        vmatch_engine_t *e = nullptr;
        int rc = vmatch_create(en.spec.c_str(), &e);
        if (rc < 0) {
            std::string why = error_text(("vmatch_create(\"" + en.spec + "\")").c_str(), rc);
            fprintf(stderr, "vmatch_bench: %s left out: %s\n", en.label.c_str(), why.c_str());
            g_described.push_back({en.label, "left out: " + why});
            continue;
        }
        g_described.push_back({en.label, vmatch_describe(e)});
        vmatch_destroy(e);
        for (Side s : {kPrq, kUmq})
            for (Order o : {kForward, kMiddle, kReverse})
                for (uint64_t len : kLengths) {
                    std::string name = bench_name(en.label, s, o, len);
                    g_row_of[name] = g_rows.size();
                    Row row;
                    row.label = en.label;
                    row.name = name;
                    row.side = s;
                    row.order = o;
                    row.len = len;
                    g_rows.push_back(row);
                    benchmark::RegisterBenchmark(
                        name.c_str(),
                        [spec = en.spec, s, o, len](benchmark::State &st) {
                            bench_queue(st, spec, s, o, len);
                        })
                        ->Unit(benchmark::kNanosecond)
                        ->ComputeStatistics(
                            "min", [](const std::vector<double> &v) { return min_of(v); });
                }
    }

    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv))
        return 1;
    if (table) {
        int opts = benchmark::ConsoleReporter::OO_Tabular;
        const char *term = getenv("TERM");
        if (isatty(STDOUT_FILENO) && term && strcmp(term, "dumb"))
            opts |= benchmark::ConsoleReporter::OO_Color;
        TableReporter rep((benchmark::ConsoleReporter::OutputOptions)opts, baseline);
        benchmark::RunSpecifiedBenchmarks(&rep);
    } else {
        benchmark::RunSpecifiedBenchmarks();
    }
    benchmark::Shutdown();
    return 0;
}
