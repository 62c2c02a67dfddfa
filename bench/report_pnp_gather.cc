// report_pnp_gather.cc -- part (a) of the pnp section: the hot-spot gather, repeated, on
// pnp settings against mpich and single+llv, and the targets it is judged on.
#include "report_sections.h"

#include <cmath>
#include <cstring>

namespace vmr
{

namespace
{

// Whether the targets judge en: a pnp setting over llv.
bool pnp_judged(const Engine &en)
{
    return en.spec.rfind("policy=pnp storage=llv ", 0) == 0;
}

// "t=100 c=46 move=on": the pnp keys of a resolved spec.
std::string pnp_setting(const std::string &resolved)
{
    auto val = [&](const char *key) {
        size_t at = resolved.find(std::string(" ") + key + "=");
        if (at == std::string::npos)
            return std::string("?");
        at += strlen(key) + 2;
        return resolved.substr(at, resolved.find(' ', at) - at);
    };
    return "t=" + val("pnp.threshold") + " c=" + val("pnp.cap") + " move=" + val("pnp.move");
}

// The explanation of part (a)'s table, for table.txt and the log.  yard_note: in how many
// repetitions mpich runs, when not in all.
void gather_legend(FILE *f, const Report &rep, const std::string &yard_note)
{
    const std::vector<Engine> &en = rep.engines();
    const Options &o = rep.options();
    size_t y = rep.yard();
    bool yard_first = y < en.size() && en[y].first_iter;
    fprintf(f,
            "\npnp (a): hot-spot gather, P-1 = 2047 peers x m = 10 messages to rank 0, "
            "repeated (xN: iters=N,\nthe FDS time steps; every iteration ends with both "
            "queues empty).  pnp finds its partners and\nmakes their queues in the first "
            "iteration and gains in the later ones.\n"
            "  ns/op: median CPU ns per operation over all iterations, %d repetition%s, each "
            "replay on a\n  new instance.  x mpich, x single+llv: how many times faster "
            "than that engine (above 1:\n  faster), the median of the ratio taken within "
            "each repetition, ±half its interquartile\n  range.  it.1 | 2-N: x single+llv "
            "over the first iteration alone | over the later ones\n  (medians, the same "
            "replays timed in two parts).\n",
            o.reps, o.reps == 1 ? "" : "s");
    if (yard_first)
        fprintf(f,
                "  %s replays the first iteration alone%s.\n  x %s divides its ns/op there by "
                "the engine's over all iterations in the same\n  repetition.  A lower bound: "
                "mpich's later iterations are slower than its first (its\n  request pool "
                "hands cells back in scrambled order, so its list walks jump in memory);\n  "
                "--full times every iteration, with the first-iteration mpich next to it.\n",
                kYardstick, yard_note.c_str(), kYardstick);
    else if (!yard_note.empty())
        fprintf(f,
                "  %s runs in %d of the %d repetitions; the ratios to it are taken over "
                "those.\n",
                kYardstick, o.yard_reps, o.reps);
    for (size_t i = 0; i < en.size(); i++)
        if (i != y && en[i].first_iter)
            fprintf(f,
                    "  %s: replays the first iteration alone (the default run's shortcut for "
                    "%s); its\n  x %s says how much faster per operation that is than all "
                    "iterations.\n",
                    en[i].label.c_str(), kYardstick, kYardstick);
    fprintf(
        f,
        "  inspected: entries a list walk would compare per search.  partners, levels "
        "(extraction\n  rounds that took partners; vmatch_stat pnp.*), queues: vmatch_stats "
        "after one "
        "replay (the untimed one);\n  KiB: bytes held at the peak.  t = pnp.threshold, "
        "c = pnp.cap, pnp.move on unless the\n  label says move=off (the thesis's "
        "levels); static: policy=pnp-static with a profile\n  recorded from the same "
        "workload.\n  hash: policy=hash over llv (judged against ob1).  The targets (pnp+llv "
        ">= 28x faster\n  than mpich and faster than single+llv; hash <= ob1) are judged in "
        "the summary at the\n  end.\n");
}

} // namespace

void print_pnp_gather(FILE *f, const Report &rep, bool legend)
{
    const std::vector<Engine> &en = rep.engines();
    const Options &o = rep.options();
    size_t y = rep.yard(), sl = find_engine(rep, "single+llv");
    bool yard_first = y < en.size() && en[y].first_iter;
    int yard_reps = o.yard_reps > 0 && o.yard_reps < o.reps ? o.yard_reps : o.reps;
    bool fewer = yard_reps < o.reps;
    std::string yard_note =
        fewer ? fmt(", in %d of the %d repetitions", yard_reps, o.reps) : std::string();
    if (!legend) {
        fprintf(f,
                "\npnp (a): hot-spot gather; x mpich, x single+llv: times faster, median "
                "±half IQR;\n  it.1 | 2-N: x single+llv over the first iteration | the later "
                "ones%s\n",
                yard_first ? fmt(";\n  %s: the first iteration alone%s (a lower bound)",
                                 kYardstick, yard_note.c_str())
                                 .c_str()
                           : "");
    } else {
        gather_legend(f, rep, yard_note);
    }
    for (const Row &row : rep.rows()) {
        std::string iters =
            row.iter_ops ? fmt(" (%u iterations of %zu)", row.iters, row.iter_ops) : "";
        if (legend)
            fprintf(f,
                    "\n%s  (%s)\n  %zu ops%s, longest PRQ %llu, UMQ %llu, %llu entries at "
                    "the peak\n",
                    row.name.c_str(), row.desc.c_str(), row.ops, iters.c_str(),
                    (unsigned long long)row.ref.max_prq, (unsigned long long)row.ref.max_umq,
                    (unsigned long long)row.ref.max_pending);
        else
            fprintf(f, "\n%s: %zu ops%s, %llu entries at the peak\n", row.name.c_str(), row.ops,
                    iters.c_str(), (unsigned long long)row.ref.max_pending);
        fprintf(f, "  %-23s %8s %12s %12s %11s %9s %8s %6s %6s %6s\n", "engine", "ns/op",
                "x mpich", "x single+llv", row.iter_ops ? "it.1 | 2-N" : "", "inspected",
                "partners", "levels", "queues", "KiB");
        for (size_t i = 0; i < en.size(); i++) {
            const Cell &c = row.cells[i];
            if (en[i].first_iter && !row.iter_ops && i != y)
                continue; // a first-iteration column on a workload that does not repeat
            if (print_no_figure(f, 23, en[i].label, c))
                continue;
            double ns = median_ns(c);
            std::string xm = i == y          ? "1"
                             : y < en.size() ? ratio_text(row.cells[y], c, "x")
                                             : "-";
            std::string xs = i == sl          ? "1"
                             : sl < en.size() ? ratio_text(row.cells[sl], c, "x")
                                              : "-";
            std::string split;
            if (row.iter_ops && sl < en.size() && !en[i].first_iter) {
                double m1, m2, lo, hi;
                bool a1 = vec_ratio(row.cells[sl].ns_first, c.ns_first, m1, lo, hi);
                bool a2 = vec_ratio(row.cells[sl].ns_later, c.ns_later, m2, lo, hi);
                split = (a1 ? fmt("%.2f", m1) : std::string("-")) + " | " +
                        (a2 ? fmt("%.2f", m2) : std::string("-"));
            } else if (row.iter_ops) {
                split = "-";
            }
            std::string part = "-", lev = "-", q = "-";
            if (c.has_end) {
                part = fmt("%llu", (unsigned long long)c.end_partners);
                lev = fmt("%llu", (unsigned long long)c.end_levels);
                q = fmt("%llu", (unsigned long long)c.end.queues);
            } else if (en[i].base || en[i].inl) {
                q = fmt("%llu", (unsigned long long)c.m.queues_peak);
            }
            fprintf(f, "  %-23s %8s %s %s %11s %9.1f %8s %6s %6s %6.0f\n", en[i].label.c_str(),
                    std::isnan(ns) ? "-" : fmt("%.1f", ns).c_str(), pad(xm, 12).c_str(),
                    pad(xs, 12).c_str(), split.c_str(),
                    c.m.searches ? (double)c.m.inspected / (double)c.m.searches : NAN,
                    part.c_str(), lev.c_str(), q.c_str(), (double)c.m.bytes_peak / 1024);
        }
    }
}

// The target: pnp+llv >= 28x faster than mpich and faster than single+llv, per operation
// over the whole workload; each (t, c, move) setting is judged on each gather, and last,
// whether some setting meets it on every gather.
std::vector<Target> pnp_gather_targets(const Report &rep)
{
    const std::vector<Engine> &en = rep.engines();
    size_t y = rep.yard(), sl = find_engine(rep, "single+llv");
    std::vector<Target> out;
    std::vector<bool> met_all(en.size(), true), noisy(en.size(), false);
    for (const Row &row : rep.rows())
        for (size_t i = 0; i < en.size(); i++) {
            if (!pnp_judged(en[i]))
                continue;
            Target t;
            t.what = "pnp (a) " + row.name + ", " + pnp_setting(en[i].resolved) +
                     ": >= 28x mpich, > 1x single+llv";
            double m = NAN, msp = 0, v = NAN, vlo = NAN, vhi = NAN, m1 = NAN, lo, hi;
            bool hm = y < en.size() && rep_speedup(row.cells[y], row.cells[i], m, msp);
            bool hv = sl < en.size() && !row.cells[i].wrong && !row.cells[sl].wrong &&
                      vec_ratio(row.cells[sl].ns, row.cells[i].ns, v, vlo, vhi);
            if (row.iter_ops && y < en.size())
                vec_ratio(row.cells[y].ns_first, row.cells[i].ns_first, m1, lo, hi);
            if (!hm || !hv) {
                met_all[i] = false;
                t.verdict = "no figure";
                t.figure = cell_problem(row.cells[i]) + " " + row.cells[i].error;
                out.push_back(t);
                continue;
            }
            bool ok = m >= 28 && v > 1;
            met_all[i] = met_all[i] && ok;
            // "noise": met on the medians, but the lower quartile of x single+llv is not
            // above 1.
            noisy[i] = noisy[i] || (ok && vlo <= 1);
            t.verdict = ok ? "met" : "missed";
            t.figure = fmt("%.0fx mpich ±%.0f%%, %.2fx single+llv ±%.0f%% (quartiles "
                           "%.2f-%.2f)%s",
                           m, msp, v, 100 * (vhi - vlo) / 2 / v, vlo, vhi,
                           ok && vlo <= 1 ? " noise" : "");
            if (!std::isnan(m1))
                t.figure += fmt("; it.1: %.0fx mpich", m1);
            out.push_back(t);
        }
    if (rep.rows().size() > 1) {
        Target all;
        all.what = "pnp (a) a pnp+llv setting meets both on every gather above";
        for (size_t i = 0; i < en.size(); i++)
            if (pnp_judged(en[i]) && met_all[i])
                all.figure += (all.figure.empty() ? "" : ", ") + pnp_setting(en[i].resolved) +
                              (noisy[i] ? " (noise on some rows)" : "");
        all.verdict = all.figure.empty() ? "missed" : "met";
        if (all.figure.empty())
            all.figure = "none";
        out.push_back(all);
    }
    return out;
}

} // namespace vmr
