// report_tagperf.cc -- the tag-perf section of the report: how the time of a match grows
// with the number of distinct tags queued, a scalability test in the manner of UCX's
// test_ucp_tag_perf (its gtest of the tag-matching queues: a few thousand receives with
// distinct tags and full masks, matched in the reverse order of their queueing, the mean
// growth of the time per operation per doubling of the count judged).
//
// For n = 1, 2, 4, ... 8192 and each engine:
//   (a) expected:   n exact receives are posted (tags 0 .. n-1), then n messages arrive in
//                   the reverse order (tags n-1 .. 0): each finds its receive last in post
//                   order.  The arrivals are timed.
//   (b) unexpected: n messages arrive (tags n-1 .. 0), then n exact receives are posted in
//                   the reverse order of the arrivals (tags 0 .. n-1).  The posts are timed.
// The tags are MPI match bits (context 1, source 0, tag i; the default layout) with full
// care masks.  One measurement is a fresh instance that repeats the pattern (both queues end
// empty, so the instance is reused, its pools warm) until at least kMinRuns runs and kMinMs
// are timed, or one run took kLongMs: each run's matching phase alone is timed with the
// time-stamp counter (x86-64; elsewhere the monotonic clock), converted to ns against the
// monotonic clock, the cost of reading it is subtracted, and the measurement is the mean
// run / n, leaving out the runs longer than twice the median and 100 ns (the runs a
// neighbour or an interrupt stopped).  Runs are short (tens of ns at n = 1): too short for
// the thread's CPU clock (a system call, hundreds of ns on a virtual machine).  Both the
// counter and the clock may step by 10 ns (they do on some virtual machines): a median of
// such readings keeps the step, their mean does not, as the runs start at every phase of
// it.  In each repetition the sizes go up in turn and at each size the engines run in a
// fresh random order, so a noisy moment hits several.  The cap on the list designs' O(n^2)
// work (ob1 and mpich take 10-200 ms a run from n = 2048 on) is kLongMs: one run per
// measurement there; max_n in kSpecs can cap them further.
// Growth: the geometric mean of t(2n) / t(n) over n = 16 .. 4096 (9 doublings, the first
// few sizes being left out as UCX leaves them out), taken within each repetition, then the
// median and quartiles over the repetitions.
#include "report_sections.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace vmr
{

namespace
{

const unsigned kMaxN = 8192, kGrowthFrom = 16;
const int kMinRuns = 3;
const double kMinMs = 1, kLongMs = 20;
const int kReps = 5, kFullReps = 9;

struct TagPerfSpec {
    const char *label, *spec; // spec nullptr: the baseline of that name
    unsigned max_n;           // the largest n it runs (list designs: O(n) per match)
};

const TagPerfSpec kSpecs[] = {
    {kHashLabel, kHashSpec, kMaxN}, {"llv", "policy=single storage=llv", kMaxN},
    {"ucx", nullptr, kMaxN},        {"ob1", nullptr, kMaxN},
    {"mpich", nullptr, kMaxN},
};

// The calls of a measurement on a library engine or on a baseline.
struct LibCalls {
    vmatch_engine_t *e;
    int post(uint64_t b, uint64_t c, void *req, void **out)
    {
        return vmatch_post(e, b, c, 0, req, out);
    }
    int arrive(uint64_t b, void *msg, void **out) { return vmatch_arrive(e, b, 0, msg, out); }
};
struct BaseCalls {
    vmb::Baseline *b;
    int post(uint64_t bits, uint64_t c, void *req, void **out)
    {
        return b->post(bits, c, req, out);
    }
    int arrive(uint64_t bits, void *msg, void **out) { return b->arrive(bits, msg, out); }
};

// What a measurement needs: the match bits of tags 0 .. kMaxN-1 and their payloads.
struct Tags {
    std::vector<uint64_t> bits;
    std::vector<char> tok;
    char other = 0; // the payload of the side that does not queue
    Tags() : bits(kMaxN), tok(kMaxN)
    {
        vmb::Layout l;
        for (unsigned i = 0; i < kMaxN; i++)
            bits[i] = (1ull << (l.tag_bits + l.src_bits)) | i;
    }
};

// The clock of the runs: the time-stamp counter where there is one, else the monotonic
// clock in ns.
inline uint64_t ticks()
{
#if defined(__x86_64__)
    return __rdtsc();
#else
    return vm_wl_now_ns();
#endif
}

// ns per tick of ticks(), measured against the monotonic clock over a few ms.
double ns_per_tick()
{
#if defined(__x86_64__)
    uint64_t n0 = vm_wl_now_ns(), k0 = ticks(), n1, k1;
    do {
        n1 = vm_wl_now_ns();
        k1 = ticks();
    } while (n1 - n0 < 5000000);
    return k1 > k0 ? (double)(n1 - n0) / (double)(k1 - k0) : 1;
#else
    return 1;
#endif
}

// The mean of v without the values above twice the median plus slack (interrupted runs).
double robust_mean(const std::vector<double> &v, double slack)
{
    double cut = 2 * median(v) + slack, sum = 0;
    size_t n = 0;
    for (double x : v)
        if (x <= cut)
            sum += x, n++;
    return n ? sum / (double)n : NAN;
}

// The cost of two back-to-back reads of ticks() (a robust mean of many), in ticks.
double clock_cost(double ns_per_tick)
{
    std::vector<double> d(2001);
    for (double &x : d) {
        uint64_t a = ticks();
        x = (double)(ticks() - a);
    }
    return robust_mean(d, 100 / ns_per_tick);
}

__attribute__((noinline, cold)) std::string wrong(const char *call, unsigned tag, int rc,
                                                  const void *got, const Tags &t)
{
    long long at = got ? (long long)((const char *)got - t.tok.data()) : -1;
    return fmt("%s of tag %u: rc %d, payload %lld (-1: none)", call, tag, rc, at);
}

// One run of the pattern on q: the ticks of its matching phase, or -1 with err.
template <class Q> double one_run(Q &q, bool expected, unsigned n, Tags &t, std::string &err)
{
    const uint64_t full = ~0ull;
    void *got = nullptr;
    int rc;
    uint64_t t0, t1;
    if (expected) {
        for (unsigned i = 0; i < n; i++)
            if ((rc = q.post(t.bits[i], full, &t.tok[i], &got)) != VMATCH_QUEUED) {
                err = wrong("post", i, rc, got, t);
                return -1;
            }
        t0 = ticks();
        for (unsigned i = n; i-- > 0;) {
            rc = q.arrive(t.bits[i], &t.other, &got);
            if (__builtin_expect(rc != VMATCH_MATCHED || got != &t.tok[i], 0)) {
                err = wrong("arrive", i, rc, got, t);
                return -1;
            }
        }
        t1 = ticks();
    } else {
        for (unsigned i = n; i-- > 0;)
            if ((rc = q.arrive(t.bits[i], &t.tok[i], &got)) != VMATCH_QUEUED) {
                err = wrong("arrive", i, rc, got, t);
                return -1;
            }
        t0 = ticks();
        for (unsigned i = 0; i < n; i++) {
            rc = q.post(t.bits[i], full, &t.other, &got);
            if (__builtin_expect(rc != VMATCH_MATCHED || got != &t.tok[i], 0)) {
                err = wrong("post", i, rc, got, t);
                return -1;
            }
        }
        t1 = ticks();
    }
    return (double)(t1 - t0);
}

// The clock of a section: ns per tick and the cost of a reading pair in ticks.
struct Clock {
    double ns_per_tick, cost;
};

// One measurement (see the head comment): ns per matching operation, or NaN with err.
template <class Q>
double measure(Q &q, bool expected, unsigned n, Tags &t, const Clock &c, std::string &err)
{
    std::vector<double> runs;
    double timed = 0;
    while (runs.size() < (size_t)kMinRuns || timed < kMinMs * 1e6) {
        double tk = one_run(q, expected, n, t, err);
        if (tk < 0)
            return NAN;
        double ns = tk * c.ns_per_tick;
        runs.push_back(ns);
        timed += ns;
        if (ns > kLongMs * 1e6)
            break;
    }
    return std::max(robust_mean(runs, 100) - c.cost * c.ns_per_tick, 0.0) / n;
}

// A measurement on a fresh instance of engine en.
double measure_engine(const Engine &en, bool expected, unsigned n, Tags &t, const Clock &clock,
                      std::string &err)
{
    if (en.base) {
        std::unique_ptr<vmb::Baseline> b = en.base->make(vmb::Layout(), 1);
        BaseCalls c{b.get()};
        return measure(c, expected, n, t, clock, err);
    }
    vmatch_engine_t *e = nullptr;
    int rc = vmatch_create(en.spec.c_str(), &e);
    if (rc < 0) {
        err = fmt("vmatch_create: %s (%s)", vmatch_strerror(rc), vmatch_last_error());
        return NAN;
    }
    LibCalls c{e};
    double ns = measure(c, expected, n, t, clock, err);
    vmatch_destroy(e);
    return ns;
}

} // namespace

size_t tagperf_engine(const TagPerf &t, const std::string &label)
{
    for (size_t i = 0; i < t.engines.size(); i++)
        if (t.engines[i].en.label == label)
            return i;
    return (size_t)-1;
}

TagPerf run_tagperf(const Options &o)
{
    TagPerf t;
    t.reps = o.reps_given ? o.reps : o.full ? kFullReps : kReps;
    for (unsigned n = 1; n <= kMaxN; n *= 2)
        t.sizes.push_back(n);
    for (const TagPerfSpec &s : kSpecs) {
        TagPerfEngine te;
        te.en.label = s.label;
        te.max_n = s.max_n;
        if (!s.spec) {
            for (const vmb::BaselineInfo &b : vmb::baselines())
                if (te.en.label == b.name) {
                    te.en.base = &b;
                    te.en.resolved = b.models;
                }
            if (!te.en.base)
                continue;
        } else {
            te.en.spec = s.spec;
            std::string why;
            if (!check_spec(te.en.spec, te.en.resolved, why)) {
                t.notes.push_back(
                    fmt("%s (\"%s\") left out: %s", s.label, s.spec, why.c_str()));
                continue;
            }
        }
        for (auto &side : te.ns)
            side.assign(t.sizes.size(), std::vector<double>((size_t)t.reps, NAN));
        t.engines.push_back(te);
    }
    section_line(o, fmt("== tag-perf section: n distinct tags, n = 1 .. %u, expected and "
                        "unexpected (%d repetitions)",
                        kMaxN, t.reps));
    uint64_t w0 = vm_wl_now_ns(), c0 = vm_wl_cpu_ns();
    Tags tags;
    std::mt19937_64 rng(20260102);
    std::vector<size_t> order(t.engines.size());
    for (size_t i = 0; i < order.size(); i++)
        order[i] = i;
    Clock clock;
    clock.ns_per_tick = ns_per_tick();
    clock.cost = clock_cost(clock.ns_per_tick);
    for (int r = 0; r < t.reps; r++) {
        clock.cost = std::min(clock.cost, clock_cost(clock.ns_per_tick));
        for (int side = 0; side < 2; side++)
            for (size_t k = 0; k < t.sizes.size(); k++) {
                std::shuffle(order.begin(), order.end(), rng);
                for (size_t i : order) {
                    TagPerfEngine &te = t.engines[i];
                    if (!te.error.empty() || t.sizes[k] > te.max_n)
                        continue;
                    std::string err;
                    double ns = measure_engine(te.en, side == 0, t.sizes[k], tags, clock, err);
                    if (std::isnan(ns))
                        te.error = fmt("%s, n = %u: %s", side ? "unexpected" : "expected",
                                       t.sizes[k], err.c_str());
                    te.ns[side][k][(size_t)r] = ns;
                }
            }
        fprintf(o.log, "  [%d/%d] repetition done, %.1f s\n", r + 1, t.reps,
                (double)(vm_wl_now_ns() - w0) / 1e9);
        fflush(o.log);
    }
    t.clock_ns = clock.cost * clock.ns_per_tick;
    t.wall_s = (double)(vm_wl_now_ns() - w0) / 1e9;
    t.cpu_s = (double)(vm_wl_cpu_ns() - c0) / 1e9;
    t.ran = true;
    return t;
}

// Growth per doubling within each repetition: the geometric mean of t(2n) / t(n) over
// n = kGrowthFrom .. the largest size the engine ran, then the median and quartiles over
// the repetitions.  ucx_style: UCX's own figure instead, the arithmetic mean of t(n) / t(n/2)
// over n >= 16.
bool tagperf_growth(const TagPerf &t, size_t e, int side, double &med, double &q1, double &q3,
                    bool ucx_style)
{
    if (e >= t.engines.size() || !t.engines[e].error.empty())
        return false;
    const TagPerfEngine &te = t.engines[e];
    std::vector<double> g;
    for (size_t r = 0; r < (size_t)t.reps; r++) {
        double sum = 0;
        int cnt = 0;
        bool ok = true;
        for (size_t k = 0; k + 1 < t.sizes.size(); k++) {
            unsigned from = ucx_style ? 2 * t.sizes[k] : t.sizes[k];
            if (from < kGrowthFrom || t.sizes[k + 1] > te.max_n)
                continue;
            double a = te.ns[side][k][r], b = te.ns[side][k + 1][r];
            if (std::isnan(a) || std::isnan(b) || a <= 0) {
                ok = false;
                break;
            }
            sum += ucx_style ? b / a : std::log(b / a);
            cnt++;
        }
        if (ok && cnt)
            g.push_back(ucx_style ? sum / cnt : std::exp(sum / cnt));
    }
    return vmb::quartiles(g, med, q1, q3);
}

void print_tagperf(FILE *f, const TagPerf &t, bool legend)
{
    const int w = 9;
    if (legend) {
        fprintf(f,
                "\ntag-perf: a scalability test in the manner of UCX's test_ucp_tag_perf.  For "
                "n = 1, 2, 4, ..., %u\ndistinct tags (context 1, source 0, tags 0 .. n-1, "
                "full care masks):\n"
                "  (a) expected:   n receives are posted, then n messages arrive in the "
                "reverse order\n                  (each finds its receive last in post "
                "order); the arrivals are timed;\n"
                "  (b) unexpected: n messages arrive, then n receives are posted in the "
                "reverse order of\n                  the arrivals; the posts are timed.\n"
                "A cell: ns per matching operation, the median over %d repetitions of one "
                "measurement each:\na fresh instance repeats the pattern (at least %d runs "
                "and %.0f ms timed, or one run of %.0f ms),\neach run's matching phase timed "
                "with the time-stamp counter (x86-64; elsewhere the monotonic\nclock) less its "
                "own cost (%.0f ns per reading pair), the "
                "mean run / n\n(without the runs above twice the median + 100 ns: "
                "interrupted).  In each repetition the sizes go up in turn, the engines\n"
                "in a fresh random order at each.  growth: the mean growth of the time per "
                "doubling of n,\nthe geometric mean of t(2n) / t(n) over n = %u .. %u (9 "
                "doublings: (t(%u) / t(%u))^(1/9)),\ntaken within each repetition; median "
                "±half the interquartile range.  An O(1) lookup stays\nnear 1, a search of "
                "the whole queue near 2.  ucx-style: UCX's own figure, the arithmetic\nmean "
                "of t(n) / t(n/2) over n >= 16, which its test holds below 1.5.  The "
                "target (hash's\ngrowth < 1.2 on both sides) is judged in the summary at the "
                "end.\n",
                kMaxN, t.reps, kMinRuns, kMinMs, kLongMs, t.clock_ns, kGrowthFrom, kMaxN / 2,
                kMaxN, kGrowthFrom);
        fprintf(f,
                "The list designs (ob1, all from one source: one list; mpich) search the "
                "whole queue:\nfrom n = 4096 on a run takes them over %.0f ms, and one run "
                "is their measurement there\n(the section's cap on their work).\n",
                kLongMs);
        for (const TagPerfEngine &te : t.engines)
            if (te.max_n < kMaxN)
                fprintf(f, "%s runs up to n = %u only (its growth is taken up to there).\n",
                        te.en.label.c_str(), te.max_n);
        fprintf(f, "\n");
    } else {
        fprintf(f,
                "\ntag-perf (after UCX's test_ucp_tag_perf): ns per match, median of %d "
                "repetitions; (a) expected: n receives\n  posted, then n messages arrive in "
                "the reverse order; (b) unexpected: n messages, then n receives in the\n  "
                "reverse order; growth: mean growth of the time per doubling of n, n >= %u, "
                "median ±half IQR\n",
                t.reps, kGrowthFrom);
    }
    fprintf(f, "%9s ", "");
    fprintf(f, " %-*s %s", w * (int)t.engines.size(), "(a) expected", "(b) unexpected");
    fprintf(f, "\n%9s ", "n");
    for (int side = 0; side < 2; side++) {
        fprintf(f, " ");
        for (const TagPerfEngine &te : t.engines)
            fprintf(f, "%*s", w, te.en.label.c_str());
    }
    fprintf(f, "\n");
    for (size_t k = 0; k < t.sizes.size(); k++) {
        fprintf(f, "%9u ", t.sizes[k]);
        for (int side = 0; side < 2; side++) {
            fprintf(f, " ");
            for (const TagPerfEngine &te : t.engines) {
                std::vector<double> ok;
                for (double x : te.ns[side][k])
                    if (!std::isnan(x))
                        ok.push_back(x);
                double m = ok.empty() ? NAN : median(ok);
                std::string c = std::isnan(m) ? (te.error.empty() ? "-" : "error")
                                : m < 100     ? fmt("%.1f", m)
                                              : fmt("%.0f", m);
                fprintf(f, "%*s", w, c.c_str());
            }
        }
        fprintf(f, "\n");
    }
    for (bool ucx : {false, true}) {
        fprintf(f, "%9s ", ucx ? "ucx-style" : "growth");
        for (int side = 0; side < 2; side++) {
            fprintf(f, " ");
            for (size_t e = 0; e < t.engines.size(); e++) {
                double m, q1, q3;
                std::string c = "-";
                if (tagperf_growth(t, e, side, m, q1, q3, ucx))
                    c = ucx ? fmt("%.2f", m) : fmt("%.2f±%.0f%%", m, 100 * (q3 - q1) / 2 / m);
                fprintf(f, " %s", pad(c, w - 1).c_str());
            }
        }
        fprintf(f, "\n");
    }
    if (legend)
        print_engines(
            f,
            [&] {
                std::vector<Engine> en;
                for (const TagPerfEngine &te : t.engines)
                    en.push_back(te.en);
                return en;
            }(),
            "\ntag-perf engines:\n");
    for (const TagPerfEngine &te : t.engines)
        if (!te.error.empty())
            fprintf(f, "error: %s: %s\n", te.en.label.c_str(), te.error.c_str());
    for (const std::string &n : t.notes)
        fprintf(f, "note: %s\n", n.c_str());
}

} // namespace vmr
