// report_inline.cc -- the contenders compiled into the replay loop, and the headline they
// give the report.
//
// The baselines of the tables (baseline.h) are called through a function pointer and a
// virtual call per operation, as vmatch's library calls are: the tables compare designs at
// the same call cost.  UCX and Open MPI do not pay that cost: UCX inlines its bucket walk
// (ucp/tag/tag_match.inl) and ob1 its per-peer lists into their receive paths.  The inline
// contenders replay a workload with their calls compiled into the loop (replay_inline.h):
//   ob1-inl, ucx-inl  the classes of baseline_ob1.h and baseline_ucx.h, the same code as the
//                     baselines ob1 and ucx, called directly (so the same bytes too);
//   hash-inl          the default engine (vmatch_create(""), or --inline-spec's) through
//                     vmatch_inline.h: an exact post or arrival that hits a bucket line
//                     runs in the loop, the rest is the library's call, as an MPI library
//                     embedding vmatch runs it.
// The headline table sets hash-inl against the faster of ob1-inl and ucx-inl on every row
// of the workload table and of the pnp section's gathers, and the targets of issue 24 are
// judged on it ("headline: ..." lines).
#include "replay_calls.h"
#include "replay_inline.h"
#include "report_sections.h"

#include "baseline_ob1.h"
#include "baseline_ob1_compact.h"
#include "baseline_ucx.h"
#include "baseline_ucx_compact.h"

#include <cmath>

namespace vmr
{

namespace
{

const double kRowBound = 1.1;    // hash-inl / the fastest inline baseline, on every row
const double kGeoBound = 0.8;    // the same, geometric mean over the rows
const double kGatherBound = 1.0; // hash-inl / ob1-inl on the P=2048 m=10 gathers
const double kShortBound = 1.0;  // hash-inl / the fastest, collectives of 1-2 entries
// The pnp section's gathers the target names: receives per peer in rank order, and random.
const char *const kGatherRows[] = {"gather P=2048 m=10 rr x5", "gather P=2048 m=10 random x5"};

template <class Q> std::unique_ptr<InlineReplay> make_design(const vm_trace_t &t, std::string &)
{
    return std::unique_ptr<InlineReplay>(new DesignReplay<Q>(vmb::Layout(), t.nprocs));
}

template <class Q>
std::unique_ptr<InlineReplay> make_design_in(const vmb::Layout &l, uint32_t nprocs)
{
    return std::unique_ptr<InlineReplay>(new DesignReplay<Q>(l, nprocs));
}

// The default engine through vmatch_inline.h (its classes, statistics and memory are the
// library engine's: vm_wl_vmatch_backend's, with the inline post and arrival).
class EngineReplay final : public InlineReplay
{
  public:
    explicit EngineReplay(vmatch_engine_t *e) : calls_{e}
    {
        vm_wl_vmatch_backend(e, &b);
        b.post = post;
        b.arrive = arrive;
    }
    ~EngineReplay() override { vmatch_destroy(calls_.e); }

    int run(const vm_wl_prep_t *p, size_t from, size_t to, uint32_t *out, char *err,
            size_t errlen) override
    {
        return vmb::replay_inline(p, calls_, from, to, out, err, errlen);
    }

  private:
    static int post(void *self, uint64_t bits, uint64_t care, uint32_t cls, void *req,
                    void **msg)
    {
        return vmatch_inline_post(static_cast<vmatch_engine_t *>(self), bits, care, cls, req,
                                  msg);
    }
    static int arrive(void *self, uint64_t bits, uint32_t cls, void *msg, void **req)
    {
        return vmatch_inline_arrive(static_cast<vmatch_engine_t *>(self), bits, cls, msg, req);
    }

    vmb::InlineEngineCalls calls_;
};

std::string g_inline_spec; // --inline-spec

std::unique_ptr<InlineReplay> make_engine(const vm_trace_t &t, std::string &err)
{
    char spec[1024];
    vmatch_engine_t *e = nullptr;
    int rc = vmatch_inline_create(
        vm_wl_engine_spec(&t, g_inline_spec.c_str(), spec, sizeof spec), &e);
    if (rc < 0) {
        err = std::string(vmatch_strerror(rc)) + " (" + vmatch_last_error() + ")";
        return nullptr;
    }
    return std::unique_ptr<InlineReplay>(new EngineReplay(e));
}

} // namespace

bool set_inline_spec(const std::string &spec, std::string &why)
{
    std::string resolved;
    if (!check_spec(spec, resolved, why))
        return false;
    g_inline_spec = spec;
    return true;
}

const std::vector<InlineInfo> &inline_engines()
{
    static const std::vector<InlineInfo> list = {
        {kHashInlineLabel,
         "the default engine through vmatch_inline.h, compiled into the replay loop",
         make_engine, nullptr},
        {kOb1InlineLabel, "ob1's design (baseline_ob1.h) compiled into the replay loop",
         make_design<vmb::Ob1Queue>, make_design_in<vmb::Ob1Queue>},
        {kUcxInlineLabel, "ucx's design (baseline_ucx.h) compiled into the replay loop",
         make_design<vmb::UcxQueue>, make_design_in<vmb::UcxQueue>},
        {kOb1CompactLabel,
         "ob1's algorithm with compact pooled nodes (baseline_ob1_compact.h), in the loop",
         make_design<vmb::Ob1Compact>, make_design_in<vmb::Ob1Compact>},
        {kUcxCompactLabel,
         "UCX's algorithm with compact pooled nodes (baseline_ucx_compact.h), in the loop",
         make_design<vmb::UcxCompact>, make_design_in<vmb::UcxCompact>},
    };
    return list;
}

bool named_engine(const std::string &label, Engine &en)
{
    en.label = label;
    for (const vmb::BaselineInfo &b : vmb::baselines())
        if (label == b.name) {
            en.base = &b;
            en.resolved = b.models;
            return true;
        }
    for (const InlineInfo &x : inline_engines())
        if (label == x.label) {
            std::string why;
            en.inl = &x;
            en.resolved = x.models;
            if (label == kHashInlineLabel && check_spec(g_inline_spec, en.resolved, why))
                en.resolved += " (vmatch_inline.h)";
            return true;
        }
    return false;
}

// ---- the headline ----

namespace
{

// One row of the headline: the contenders' columns in its report, the faster inline baseline
// (npos: neither has a figure), and hash-inl / it and the library call's / it.
struct Line {
    const Report *rep;
    const Row *row;
    size_t h, o, u, d, best;
    double inl = NAN, call = NAN;
    std::string inl_text = "-", call_text = "-";
};

std::vector<Line> headline_lines(const Report *rep, const Section *pnp)
{
    std::vector<const Report *> reps = {rep, pnp ? pnp->a.get() : nullptr};
    std::vector<Line> out;
    for (const Report *r : reps) {
        if (!r)
            continue;
        size_t h = find_engine(*r, kHashInlineLabel), o = find_engine(*r, kOb1InlineLabel),
               u = find_engine(*r, kUcxInlineLabel), d = default_engine(*r);
        if (h == (size_t)-1 || (o == (size_t)-1 && u == (size_t)-1))
            continue;
        for (const Row &row : r->rows()) {
            if (row.sweep)
                continue;
            Line l{r, &row, h, o, u, d, (size_t)-1};
            for (size_t b : {o, u})
                if (b < row.cells.size() && cell_problem(row.cells[b]).empty() &&
                    !std::isnan(median_ns(row.cells[b])) &&
                    (l.best == (size_t)-1 ||
                     median_ns(row.cells[b]) < median_ns(row.cells[l.best])))
                    l.best = b;
            l.inl_text = time_ratio(row, h, l.best, &l.inl);
            l.call_text = time_ratio(row, d, l.best, &l.call);
            out.push_back(l);
        }
    }
    return out;
}

std::string ns_text(const Line &l, size_t i)
{
    double ns = i < l.row->cells.size() && cell_problem(l.row->cells[i]).empty()
                    ? median_ns(l.row->cells[i])
                    : NAN;
    return std::isnan(ns) ? "-" : fmt("%.1f", ns);
}

// The geometric mean of the figures that are numbers, and how many there are.
double geomean(const std::vector<double> &v, size_t &n)
{
    double s = 0;
    n = 0;
    for (double x : v)
        if (!std::isnan(x) && x > 0)
            s += std::log(x), n++;
    return n ? std::exp(s / (double)n) : NAN;
}

} // namespace

void print_headline(FILE *f, const Report *rep, const Section *pnp, bool legend)
{
    std::vector<Line> lines = headline_lines(rep, pnp);
    if (lines.empty())
        return;
    if (legend)
        fprintf(f,
                "\nHeadline: vmatch's embedding path against the peers as they really run.  "
                "%s is the default\nengine through vmatch_inline.h, %s and %s the ob1 and "
                "UCX designs as classes; all three are\ncompiled into the replay loop (no "
                "call per operation, as UCX and ob1 inline their matching).\nFastest: the "
                "inline baseline with the lower median time on the row.  inl / fastest: %s's\n"
                "time / the fastest's, call / fastest: the default engine through vmatch.h's "
                "library calls\n(the table's hash column) / the same, each the median of the "
                "ratio within each repetition\n(the engines interleaved) ±half its "
                "interquartile range.  The other tables' baselines (mpich,\nob1, ucx, fuzzy) "
                "are called through a virtual call per operation; the inline baselines hold\n"
                "the bytes of ob1 and ucx (the same classes).\n\n",
                kHashInlineLabel, kOb1InlineLabel, kUcxInlineLabel, kHashInlineLabel);
    if (!g_inline_spec.empty())
        fprintf(f, "%s is not the default engine here: its spec is \"%s\" (--inline-spec).\n",
                kHashInlineLabel, g_inline_spec.c_str());
    if (!legend)
        fprintf(f,
                "\nheadline: %s / the fastest inline baseline (%s, %s), ns per operation "
                "and ratios (median ±half IQR)\n",
                kHashInlineLabel, kOb1InlineLabel, kUcxInlineLabel);
    fprintf(f, "%-29s %6s %9s %9s %9s %8s %12s %12s\n", "workload", "max q", kHashInlineLabel,
            kOb1InlineLabel, kUcxInlineLabel, "fastest", "inl/fastest", "call/fastest");
    std::vector<double> inl, call;
    for (const Line &l : lines) {
        fprintf(f, "%-29s %6llu %9s %9s %9s %8s %s %s\n", l.row->name.c_str(),
                (unsigned long long)l.row->ref.max_pending, ns_text(l, l.h).c_str(),
                ns_text(l, l.o).c_str(), ns_text(l, l.u).c_str(),
                l.best == (size_t)-1 ? "-" : l.rep->engines()[l.best].label.c_str(),
                pad(l.inl_text, 12).c_str(), pad(l.call_text, 12).c_str());
        inl.push_back(l.inl);
        call.push_back(l.call);
    }
    size_t ni, nc;
    double gi = geomean(inl, ni), gc = geomean(call, nc);
    fprintf(f, "%-29s %6s %9s %9s %9s %8s %12s %12s\n", "geometric mean", "", "", "", "", "",
            std::isnan(gi) ? "-" : fmt("%.3f", gi).c_str(),
            std::isnan(gc) ? "-" : fmt("%.3f", gc).c_str());
    if (legend && ni < lines.size())
        fprintf(f, "(the geometric means are over the %zu rows with a figure)\n", ni);
}

std::vector<Target> headline_targets(const Report *rep, const Section *pnp)
{
    std::vector<Target> out;
    std::vector<Line> lines = headline_lines(rep, pnp);
    if (lines.empty())
        return out;
    std::vector<Judged> rows, short_rows;
    std::vector<std::string> without, short_without;
    std::vector<double> all;
    for (const Line &l : lines) {
        bool is_short = l.rep == rep && l.row->ref.max_pending <= kShortQueue;
        std::string label =
            l.best == (size_t)-1 ? std::string("-") : l.rep->engines()[l.best].label;
        if (std::isnan(l.inl)) {
            without.push_back(l.row->name);
            if (is_short)
                short_without.push_back(l.row->name);
            continue;
        }
        Judged j{l.row->name, l.inl, l.inl_text + " (vs " + label + ")"};
        rows.push_back(j);
        if (is_short)
            short_rows.push_back(j);
        all.push_back(l.inl);
    }
    summarize(out,
              fmt("headline: every row: %s / the fastest inline baseline (%s, %s) <= %.1f",
                  kHashInlineLabel, kOb1InlineLabel, kUcxInlineLabel, kRowBound),
              rows, without, kRowBound);
    size_t n;
    double g = geomean(all, n);
    Target geo;
    geo.what = fmt("headline: geometric mean over the rows of %s / the fastest inline "
                   "baseline <= %.1f",
                   kHashInlineLabel, kGeoBound);
    geo.figure = std::isnan(g) ? "-" : fmt("%.3f over %zu rows", g, n);
    geo.verdict = verdict(g > kGeoBound, std::isnan(g) || !without.empty());
    out.push_back(geo);
    for (const char *name : kGatherRows)
        for (const Line &l : lines)
            if (l.row->name == name)
                out.push_back(
                    ratio_at_most(fmt("headline: %s: %s / %s <= %.1f", name, kHashInlineLabel,
                                      kOb1InlineLabel, kGatherBound),
                                  *l.row, l.h, l.o, kGatherBound));
    summarize(out,
              fmt("headline: collectives with queues of 1-2 entries (max q <= %llu): %s / the "
                  "fastest inline baseline <= %.1f on every one",
                  (unsigned long long)kShortQueue, kHashInlineLabel, kShortBound),
              short_rows, short_without, kShortBound);
    return out;
}

} // namespace vmr
