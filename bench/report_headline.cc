// report_headline.cc -- the headline: hash-inl (the default engine through vmatch_inline.h)
// against the fastest of the four inline peers on every row, and the targets of issue 35
// judged on it ("headline: ..." lines).
//
// The peers, all compiled into the replay loop (report_inline.cc): ob1-inl and ucx-inl (the
// libraries' designs with their request objects modelled: the faithful comparison), and
// ob1-compact and ucx-compact (the same algorithms with the match fields in small pooled
// nodes: what a new library with those algorithms would cost).  The rows: the workload
// table's (the queue-depth rows among them), the pnp section's part (a), and one per
// directory of recorded traces (report_traces.cc).  Per row the fastest peer is the one with
// the lowest median time; the ratios are taken within each repetition (the engines run
// interleaved), median ±half the interquartile range.
#include "report_sections.h"

#include <algorithm>
#include <cmath>

namespace vmr
{

namespace
{

const double kGeoBound = 0.9;     // geometric mean of hash-inl / the fastest of the four
const double kRowBound = 1.1;     // every row
const double kForwardBound = 1.0; // the forward rows at queue length 1 and 8
const double kGatherBound = 1.0;  // the rank-order gather, against ob1-compact
const double kShortBound = 1.0;   // collectives with queues of 1-2 entries
const double kTraceBound = 1.0;   // each real-trace row
const char *const kGatherRow = "gather P=2048 m=10 rr x5";
const char *const kForwardPrefix = "forward ";

// Rows and the engines of their columns: the workload table, a section's part, the traces.
struct Source {
    const std::vector<Engine> *en;
    const std::vector<Row> *rows;
    bool main, trace;
};

size_t column(const std::vector<Engine> &en, const char *label)
{
    for (size_t i = 0; i < en.size(); i++)
        if (en[i].label == label)
            return i;
    return (size_t)-1;
}

bool has_figure(const Row &row, size_t i)
{
    return i < row.cells.size() && cell_problem(row.cells[i]).empty() &&
           !std::isnan(median_ns(row.cells[i]));
}

// One row: the columns of hash-inl, the four peers and the default engine's library calls
// (npos: not in this source), the fastest of the four (best) and of the faithful two (faith),
// and hash-inl / each (NaN: no figure).
struct Line {
    const Source *src;
    const Row *row;
    size_t h, peer[4], d, best = (size_t)-1, faith = (size_t)-1;
    double inl = NAN, old = NAN, call = NAN;
    std::string inl_text = "-", old_text = "-", call_text = "-";
};

const char *const kPeers[4] = {kOb1InlineLabel, kUcxInlineLabel, kOb1CompactLabel,
                               kUcxCompactLabel};

size_t fastest_of(const Row &row, const size_t *cols, size_t n)
{
    size_t best = (size_t)-1;
    for (size_t k = 0; k < n; k++)
        if (has_figure(row, cols[k]) &&
            (best == (size_t)-1 || median_ns(row.cells[cols[k]]) < median_ns(row.cells[best])))
            best = cols[k];
    return best;
}

std::vector<Line> lines_of(const std::vector<Source> &srcs)
{
    std::vector<Line> out;
    for (const Source &s : srcs) {
        Line proto{&s, nullptr, column(*s.en, kHashInlineLabel), {}, (size_t)-1};
        bool any = false;
        for (int k = 0; k < 4; k++)
            any |= (proto.peer[k] = column(*s.en, kPeers[k])) != (size_t)-1;
        if (proto.h == (size_t)-1 || !any)
            continue;
        for (const Row &row : *s.rows) {
            if (row.sweep)
                continue;
            Line l = proto;
            l.row = &row;
            l.best = fastest_of(row, l.peer, 4);
            l.faith = fastest_of(row, l.peer, 2);
            l.inl_text = time_ratio(row, l.h, l.best, &l.inl);
            l.old_text = time_ratio(row, l.h, l.faith, &l.old);
            l.call_text = time_ratio(row, l.d, l.best, &l.call);
            out.push_back(l);
        }
    }
    return out;
}

// The default engine's library-call column of the workload table: collect_engines shows it
// under the label of the engine it resolves to, so look for the resolved spec instead.
void find_call_columns(std::vector<Line> &lines, const Report *rep)
{
    if (!rep)
        return;
    size_t d = default_engine(*rep);
    for (Line &l : lines)
        if (l.src->main && l.src->en == &rep->engines()) {
            l.d = d;
            l.call_text = time_ratio(*l.row, l.d, l.best, &l.call);
        }
}

std::vector<Source> sources(const Report *rep, const Section *pnp, const TraceRows *tr)
{
    std::vector<Source> s;
    if (rep)
        s.push_back({&rep->engines(), &rep->rows(), true, false});
    if (pnp && pnp->a)
        s.push_back({&pnp->a->engines(), &pnp->a->rows(), false, false});
    if (tr && tr->ran)
        s.push_back({&tr->engines, &tr->rows, false, true});
    return s;
}

std::string ns_text(const Line &l, size_t i)
{
    return has_figure(*l.row, i) ? fmt("%.1f", median_ns(l.row->cells[i])) : "-";
}

std::string label_of(const Line &l, size_t i)
{
    return i == (size_t)-1 ? "-" : (*l.src->en)[i].label;
}

// hash-inl / column `of` (best or faith) within repetition r, NaN without both figures.
double rep_ratio(const Line &l, size_t of, size_t r)
{
    if (of == (size_t)-1)
        return NAN;
    const std::vector<double> &a = l.row->cells[l.h].ns, &b = l.row->cells[of].ns;
    return r < a.size() && r < b.size() && b[r] > 0 ? a[r] / b[r] : NAN;
}

// The geometric mean over the rows of the ratio to the fastest (faithful: to the faster of
// the two faithful peers), as the median over the repetitions of the geometric mean within
// each repetition (a row without a figure in repetition r gives its median ratio), with
// half the interquartile range in percent; n: the rows with a figure.
double geo_mean(const std::vector<Line> &lines, bool faithful, double &spread, size_t &n)
{
    size_t reps = 0;
    n = 0;
    for (const Line &l : lines)
        if (!std::isnan(faithful ? l.old : l.inl)) {
            n++;
            reps = std::max(reps, l.row->cells[l.h].ns.size());
        }
    std::vector<double> g;
    for (size_t r = 0; r < reps && n; r++) {
        double s = 0;
        for (const Line &l : lines) {
            double med = faithful ? l.old : l.inl;
            if (std::isnan(med))
                continue;
            double x = rep_ratio(l, faithful ? l.faith : l.best, r);
            s += std::log(std::isnan(x) ? med : x);
        }
        g.push_back(std::exp(s / (double)n));
    }
    if (g.empty())
        return NAN;
    double m = median(g);
    spread = 100 * (quantile(g, 0.75) - quantile(g, 0.25)) / 2 / m;
    return m;
}

std::string geo_text(const std::vector<Line> &lines, bool faithful)
{
    double sp = 0;
    size_t n;
    double g = geo_mean(lines, faithful, sp, n);
    return std::isnan(g) ? "-" : fmt("%.3f±%.0f%%", g, sp);
}

void legend_text(FILE *f)
{
    fprintf(f,
            "\nHeadline: vmatch's embedding path against the peers as they would run.  %s is "
            "the default\nengine through vmatch_inline.h; the peers are %s and %s (the ob1 and "
            "UCX designs with the\nlibraries' request objects modelled) and %s and %s (the "
            "same algorithms with the match\nfields in small pooled nodes, per-source heads "
            "indexed by source: what a new library would\nwrite); all are compiled into the "
            "replay loop.  fastest: the peer with the lowest median time\non the row.  "
            "inl/fastest: %s's time / the fastest's; inl/faithful: / the faster of %s\nand "
            "%s (issue 24's comparison); call/fastest: the default engine through vmatch.h's "
            "library\ncalls / the fastest.  Each the median of the ratio within each "
            "repetition (the engines\ninterleaved) ±half its interquartile range; the "
            "geometric means are the median over the\nrepetitions of the geometric mean "
            "within each.  Rows \"trace DIR\": a directory of recorded\ntraces, one per "
            "rank, each rank replayed on its own engine, the time summed over the ranks.\n\n",
            kHashInlineLabel, kOb1InlineLabel, kUcxInlineLabel, kOb1CompactLabel,
            kUcxCompactLabel, kHashInlineLabel, kOb1InlineLabel, kUcxInlineLabel);
}

} // namespace

void print_headline(FILE *f, const Report *rep, const Section *pnp, const TraceRows *tr,
                    bool legend)
{
    std::vector<Source> srcs = sources(rep, pnp, tr);
    std::vector<Line> lines = lines_of(srcs);
    find_call_columns(lines, rep);
    if (lines.empty() && !(tr && tr->ran))
        return;
    if (legend)
        legend_text(f);
    else
        fprintf(f,
                "\nheadline: %s / the fastest of the four inline peers, ns per operation "
                "and ratios (median ±half IQR)\n",
                kHashInlineLabel);
    if (!inline_spec().empty())
        fprintf(f, "%s is not the default engine here: its spec is \"%s\" (--inline-spec).\n",
                kHashInlineLabel, inline_spec().c_str());
    fprintf(f, "%-28s %6s %8s %8s %8s %8s %8s %-11s %11s %12s %12s\n", "workload", "max q",
            kHashInlineLabel, kOb1InlineLabel, kUcxInlineLabel, "ob1-cmp", "ucx-cmp", "fastest",
            "inl/fastest", "inl/faithful", "call/fastest");
    for (const Line &l : lines)
        fprintf(f, "%-28s %6llu %8s %8s %8s %8s %8s %-11s %s %s %s\n", l.row->name.c_str(),
                (unsigned long long)l.row->ref.max_pending, ns_text(l, l.h).c_str(),
                ns_text(l, l.peer[0]).c_str(), ns_text(l, l.peer[1]).c_str(),
                ns_text(l, l.peer[2]).c_str(), ns_text(l, l.peer[3]).c_str(),
                label_of(l, l.best).c_str(), pad(l.inl_text, 11).c_str(),
                pad(l.old_text, 12).c_str(), pad(l.call_text, 12).c_str());
    fprintf(f, "%-28s %6s %8s %8s %8s %8s %8s %-11s %s %s\n", "geometric mean", "", "", "", "",
            "", "", "", pad(geo_text(lines, false), 11).c_str(),
            pad(geo_text(lines, true), 12).c_str());
    if (tr && tr->ran && tr->rows.empty())
        fprintf(f, "real traces: none in %s\n", tr->dir.c_str());
    if (tr)
        for (const std::string &n : tr->notes)
            fprintf(f, "note: %s\n", n.c_str());
}

std::vector<Target> headline_targets(const Report *rep, const Section *pnp, const TraceRows *tr)
{
    std::vector<Target> out;
    std::vector<Source> srcs = sources(rep, pnp, tr);
    std::vector<Line> lines = lines_of(srcs);
    if (lines.empty() && !(tr && tr->ran))
        return out;
    std::vector<Judged> all, fwd, shorts, traces;
    std::vector<std::string> none, fwd_none, short_none, trace_none;
    for (const Line &l : lines) {
        bool is_fwd = l.row->name.rfind(kForwardPrefix, 0) == 0;
        bool is_short =
            l.src->main && l.row->ref.max_pending <= kShortQueue && !queue_depth_row(*l.row);
        bool is_trace = l.src->trace;
        if (std::isnan(l.inl)) {
            none.push_back(l.row->name);
            if (is_fwd)
                fwd_none.push_back(l.row->name);
            if (is_short)
                short_none.push_back(l.row->name);
            if (is_trace)
                trace_none.push_back(l.row->name);
            continue;
        }
        Judged j{l.row->name, l.inl, l.inl_text + " (vs " + label_of(l, l.best) + ")"};
        all.push_back(j);
        if (is_fwd)
            fwd.push_back(j);
        if (is_short)
            shorts.push_back(j);
        if (is_trace)
            traces.push_back(j);
    }
    double sp = 0;
    size_t n;
    double g = geo_mean(lines, false, sp, n);
    Target geo;
    geo.what = fmt("headline: geometric mean over the rows of %s / the fastest of the four "
                   "inline peers <= %.1f",
                   kHashInlineLabel, kGeoBound);
    geo.figure = std::isnan(g) ? "-" : fmt("%.3f±%.0f%% over %zu rows", g, sp, n);
    geo.verdict = verdict(g > kGeoBound, std::isnan(g) || n < lines.size());
    out.push_back(geo);
    summarize(out,
              fmt("headline: every row: %s / the fastest inline peer <= %.1f", kHashInlineLabel,
                  kRowBound),
              all, none, kRowBound);
    summarize(out,
              fmt("headline: forward search at queue length 1 and 8 (posted and unexpected): "
                  "%s / the fastest inline peer <= %.1f",
                  kHashInlineLabel, kForwardBound),
              fwd, fwd_none, kForwardBound);
    for (const Line &l : lines)
        if (l.row->name == kGatherRow)
            out.push_back(ratio_at_most(fmt("headline: %s: %s / %s <= %.1f", kGatherRow,
                                            kHashInlineLabel, kOb1CompactLabel, kGatherBound),
                                        *l.row, l.h, l.peer[2], kGatherBound));
    summarize(out,
              fmt("headline: collectives with queues of 1-2 entries (max q <= %llu): %s / the "
                  "fastest inline peer <= %.1f on every one",
                  (unsigned long long)kShortQueue, kHashInlineLabel, kShortBound),
              shorts, short_none, kShortBound);
    if (tr && tr->ran && tr->rows.empty()) {
        out.push_back({fmt("headline: real-trace rows: %s / the fastest inline peer <= %.1f",
                           kHashInlineLabel, kTraceBound),
                       "real traces: none in " + tr->dir, "not measured"});
    } else {
        summarize(out,
                  fmt("headline: real-trace rows: %s / the fastest inline peer <= %.1f",
                      kHashInlineLabel, kTraceBound),
                  traces, trace_none, kTraceBound);
    }
    return out;
}

} // namespace vmr
