// report_files.cc -- the files of the report folder besides table.txt: results.json (every
// repetition of every cell, of the workload table, the pnp and the tag-perf section) and the
// plot (plot.dat and the gnuplot script plot.gp that draws plot.png).
#include "report_sections.h"

#include <cmath>

namespace vmr
{

namespace
{

std::string json_str(const std::string &s)
{
    std::string o = "\"";
    for (char ch : s) {
        if (ch == '"' || ch == '\\')
            o += '\\', o += ch;
        else if ((unsigned char)ch < 0x20)
            o += fmt("\\u%04x", ch);
        else
            o += ch;
    }
    return o + "\"";
}

std::string json_num(double x)
{
    return std::isnan(x) || std::isinf(x) ? "null" : fmt("%.6g", x);
}

// The engines of a report as a JSON array (ind: the indentation of the array's lines).
void write_json_engines(FILE *f, const Report &rep, const char *ind)
{
    const std::vector<Engine> &en = rep.engines();
    fprintf(f, "[\n");
    for (size_t i = 0; i < en.size(); i++)
        fprintf(f,
                "%s  {\"label\": %s, \"kind\": %s, \"spec\": %s, \"resolved\": %s, "
                "\"first_iteration_only\": %s}%s\n",
                ind, json_str(en[i].label).c_str(),
                en[i].base  ? "\"baseline\""
                : en[i].inl ? "\"inline\""
                            : "\"vmatch\"",
                json_str(en[i].base ? en[i].base->models
                                    : en[i].spec + (en[i].profiled ? " profile=FILE" : ""))
                    .c_str(),
                json_str(en[i].resolved).c_str(), en[i].first_iter ? "true" : "false",
                i + 1 < en.size() ? "," : "");
    fprintf(f, "%s]", ind);
}

// The workloads of a report as a JSON array: every repetition of every cell, the ratios to the
// yardstick (null when the report has none), memory, and vmatch_stats after the untimed pass.
void write_json_workloads(FILE *f, const Report &rep, const char *ind)
{
    const std::vector<Engine> &en = rep.engines();
    const std::vector<Row> &rows = rep.rows();
    bool have_yard = rep.yard() < en.size();
    fprintf(f, "[\n");
    for (size_t w = 0; w < rows.size(); w++) {
        const Row &r = rows[w];
        fprintf(f,
                "%s  {\"name\": %s, \"spec\": %s, \"sweep\": %s, \"ops\": %zu, "
                "\"searches\": %llu, \"max_prq\": %llu, \"max_umq\": %llu, \"max_pending\": "
                "%llu, \"mean_search_len\": %s, \"iters\": %u, \"iteration_ops\": %zu, "
                "\"results\": {\n",
                ind, json_str(r.name).c_str(), json_str(r.desc).c_str(),
                r.sweep ? "true" : "false", r.ops, (unsigned long long)r.ref.searches,
                (unsigned long long)r.ref.max_prq, (unsigned long long)r.ref.max_umq,
                (unsigned long long)r.ref.max_pending, json_num(r.ref.mean_search_len).c_str(),
                r.iters, r.iter_ops);
        for (size_t i = 0; i < en.size(); i++) {
            const Cell &c = r.cells[i];
            auto arr = [](const std::vector<double> &v) {
                std::string a = "[";
                for (size_t k = 0; k < v.size(); k++)
                    a += (k ? ", " : "") + json_num(v[k]);
                return a + "]";
            };
            std::string ns = arr(c.ns);
            // Repeating workloads: the same replays, split into the first iteration and the
            // later ones.
            if (r.iter_ops)
                ns += ", \"ns_per_op_first_iteration\": " + arr(c.ns_first) +
                      ", \"ns_per_op_later_iterations\": " + arr(c.ns_later);
            std::vector<double> rr;
            if (have_yard)
                rr = rep_ratios(c, r.cells[rep.yard()]);
            std::string end = "null";
            if (c.has_end)
                end = fmt("{\"partners\": %llu, \"levels\": %llu, \"queues\": %llu, "
                          "\"bytes\": %llu, \"searches\": %llu, \"inspected\": %llu}",
                          (unsigned long long)c.end_partners, (unsigned long long)c.end_levels,
                          (unsigned long long)c.end.queues, (unsigned long long)c.end.bytes,
                          (unsigned long long)c.end.searches,
                          (unsigned long long)c.end.inspected);
            fprintf(f,
                    "%s    %s: {\"ok\": %s, \"wrong\": %s, \"error\": %s, \"ns_per_op\": %s, "
                    "\"ratio_median\": %s, \"ratio_q1\": %s, \"ratio_q3\": %s, "
                    "\"inspected_per_search\": %s, \"bytes_empty\": %llu, \"bytes_peak\": "
                    "%llu, \"queues_peak\": %llu, \"bytes_per_entry\": %s, \"stats_end\": "
                    "%s}%s\n",
                    ind, json_str(en[i].label).c_str(), c.ok ? "true" : "false",
                    c.wrong ? "true" : "false", json_str(c.error).c_str(), ns.c_str(),
                    json_num(median(rr)).c_str(), json_num(quantile(rr, 0.25)).c_str(),
                    json_num(quantile(rr, 0.75)).c_str(),
                    json_num(c.m.searches ? (double)c.m.inspected / (double)c.m.searches : NAN)
                        .c_str(),
                    (unsigned long long)c.m.bytes_empty, (unsigned long long)c.m.bytes_peak,
                    (unsigned long long)c.m.queues_peak, json_num(bytes_per_entry(c)).c_str(),
                    end.c_str(), i + 1 < en.size() ? "," : "");
        }
        fprintf(f, "%s  }}%s\n", ind, w + 1 < rows.size() ? "," : "");
    }
    fprintf(f, "%s]", ind);
}

// The tag-perf section: per engine and side, ns per match of every repetition at each n.
void write_json_tagperf(FILE *f, const TagPerf &t)
{
    fprintf(f, ",\n  \"tag_perf\": {\"repetitions\": %d, \"clock_ns\": %s, \"n\": [", t.reps,
            json_num(t.clock_ns).c_str());
    for (size_t k = 0; k < t.sizes.size(); k++)
        fprintf(f, "%s%u", k ? ", " : "", t.sizes[k]);
    fprintf(f, "],\n    \"engines\": [");
    for (size_t e = 0; e < t.engines.size(); e++) {
        const TagPerfEngine &te = t.engines[e];
        fprintf(f,
                "%s\n      {\"label\": %s, \"kind\": %s, \"resolved\": %s, \"max_n\": %u, "
                "\"error\": %s",
                e ? "," : "", json_str(te.en.label).c_str(),
                te.en.base ? "\"baseline\"" : "\"vmatch\"", json_str(te.en.resolved).c_str(),
                te.max_n, json_str(te.error).c_str());
        for (int side = 0; side < 2; side++) {
            double g = NAN, q1, q3;
            tagperf_growth(t, e, side, g, q1, q3);
            fprintf(f, ",\n       %s: {\"growth\": %s, \"ns_per_match\": [",
                    side ? "\"unexpected\"" : "\"expected\"", json_num(g).c_str());
            for (size_t k = 0; k < te.ns[side].size(); k++) {
                fprintf(f, "%s[", k ? ", " : "");
                for (size_t r = 0; r < te.ns[side][k].size(); r++)
                    fprintf(f, "%s%s", r ? ", " : "", json_num(te.ns[side][k][r]).c_str());
                fprintf(f, "]");
            }
            fprintf(f, "]}");
        }
        fprintf(f, "}");
    }
    fprintf(f, "%s]}", t.engines.empty() ? "" : "\n    ");
}

} // namespace

bool write_json(const std::string &path, const Report &rep, const Machine &m, const Options &o,
                const std::vector<std::string> &notes, const std::vector<JsonPart> &pnp,
                const TagPerf *tp)
{
    FILE *f = fopen(path.c_str(), "w");
    if (!f)
        return false;
    fprintf(f,
            "{\n  \"machine\": {\"cpu\": %s, \"cpus\": %ld, \"numa_nodes\": %d, "
            "\"virtual\": %s, \"kernels\": %s, \"chosen\": %s, \"default_spec\": %s, "
            "\"system\": %s},\n",
            json_str(m.cpu).c_str(), m.cpus, m.numa_nodes, m.virt ? "true" : "false",
            json_str(m.kernels).c_str(), json_str(m.chosen).c_str(),
            json_str(m.default_spec).c_str(), json_str(m.os).c_str());
    fprintf(f, "  \"mode\": %s, \"repetitions\": %d, \"min_ms\": %g, \"yardstick\": %s,\n",
            o.full ? "\"full\"" : "\"default\"", o.reps, o.min_ms,
            json_str(kYardstick).c_str());
    fprintf(f, "  \"notes\": [");
    for (size_t i = 0; i < notes.size(); i++)
        fprintf(f, "%s%s", i ? ", " : "", json_str(notes[i]).c_str());
    fprintf(f, "],\n  \"engines\": ");
    write_json_engines(f, rep, "  ");
    fprintf(f, ",\n  \"workloads\": ");
    write_json_workloads(f, rep, "  ");
    // The pnp section: one object per part, each with its own engines and repetitions.
    fprintf(f, ",\n  \"pnp\": {");
    for (size_t k = 0; k < pnp.size(); k++) {
        fprintf(f,
                "%s\n    %s: {\"repetitions\": %d, \"min_ms\": %g, \"engines\": ", k ? "," : "",
                json_str(pnp[k].key).c_str(), pnp[k].rep->options().reps,
                pnp[k].rep->options().min_ms);
        write_json_engines(f, *pnp[k].rep, "      ");
        fprintf(f, ",\n      \"workloads\": ");
        write_json_workloads(f, *pnp[k].rep, "      ");
        fprintf(f, "}");
    }
    fprintf(f, "%s}", pnp.empty() ? "" : "\n  ");
    if (tp && tp->ran)
        write_json_tagperf(f, *tp);
    fprintf(f, "\n}\n");
    return fclose(f) == 0;
}

// The plot: data (one column per engine) and a gnuplot script writing plot.png.  Library
// engines are solid lines, baselines dashed; every engine has its own colour.
bool write_plot(const std::string &dir, const Report &rep, const Machine &m)
{
    // One colour per line: past the palette's end a line would look like an earlier one
    // (ob1-inl was drawn as ll), so the palette is longer than the report's engines and,
    // past it, the dash pattern changes too.
    static const char *const colours[] = {
        "#1f77b4", "#2ca02c", "#d62728", "#ff7f0e", "#9467bd", "#000000", "#8c564b",
        "#e377c2", "#17becf", "#7f7f7f", "#bcbd22", "#393b79", "#637939", "#8c6d31",
        "#843c39", "#7b4173", "#3182bd", "#e6550d", "#31a354", "#756bb1"};
    const size_t ncol = sizeof colours / sizeof *colours;
    const std::vector<Engine> &en = rep.engines();
    // Dashed: every design that is not vmatch's, the inline peers (ob1-inl, ...) too.
    auto dash = [&](size_t i) {
        bool peer = en[i].base || (en[i].inl && en[i].inl->design);
        return (peer ? 2 : 1) + 2 * (int)(i / ncol);
    };
    FILE *d = fopen((dir + "/plot.dat").c_str(), "w");
    if (!d)
        return false;
    fprintf(d, "# hot-spot gather, P-1 peers x 4 messages, receives pre-posted in random "
               "order:\n# entries queued at the peak, then ns per operation of each engine\n"
               "# queued");
    for (const Engine &e : en)
        fprintf(d, " %s", e.label.c_str());
    fprintf(d, "\n");
    for (const Row &r : rep.rows()) {
        if (!r.sweep)
            continue;
        fprintf(d, "%llu", (unsigned long long)r.ref.max_pending);
        for (size_t i = 0; i < en.size(); i++) {
            const Cell &c = r.cells[i];
            std::vector<double> ok;
            for (double x : c.ns)
                if (!std::isnan(x))
                    ok.push_back(x);
            fprintf(d, " %s", c.ok && !ok.empty() ? fmt("%.3f", median(ok)).c_str() : "NaN");
        }
        fprintf(d, "\n");
    }
    fclose(d);
    FILE *g = fopen((dir + "/plot.gp").c_str(), "w");
    if (!g)
        return false;
    fprintf(g,
            "# gnuplot plot.gp (in this folder) writes plot.png\n"
            "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
            "  set terminal pngcairo size 1200,760 font 'Sans,11'\n"
            "} else {\n"
            "  set terminal png size 1200,760\n"
            "}\n"
            "set output 'plot.png'\n"
            "set title \"Hot-spot gather (FDS pattern), receives pre-posted in random "
            "order: time per operation against queue length\\n%s\"\n"
            "set xlabel 'entries queued (P-1 peers x 4 messages)'\n"
            "set ylabel 'ns per operation (median of the repetitions)'\n"
            "set logscale xy\n"
            "set grid xtics ytics mxtics mytics lc rgb '#dddddd'\n"
            "set key top left box opaque title 'solid: vmatch, dashed: baselines'\n"
            "set datafile missing 'NaN'\n",
            m.cpu.c_str());
    fprintf(g, "plot ");
    for (size_t i = 0; i < en.size(); i++)
        fprintf(g,
                "%s'plot.dat' using 1:%zu with linespoints title '%s' lw 2 pt %zu lc rgb '%s' "
                "dt %d",
                i ? ", \\\n     " : "", i + 2, en[i].label.c_str(), (i % 14) + 1,
                colours[i % ncol], dash(i));
    fprintf(g, "\n");
    return fclose(g) == 0;
}

} // namespace vmr
