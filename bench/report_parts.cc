// report_parts.cc -- what the sections in three parts (pnp, cluster, unified) share: part (b)
// of the pnp and cluster sections, a policy against single over each storage, with its table
// and its targets; part (c)'s memory table; the lines of cells without a figure, the notes
// and the workload lists.
#include "report_sections.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace vmr
{

namespace
{

// The storages part (b) compares over.
const char *const kStorages[] = {"ll", "lla", "llv"};

std::string on(const char *policy, const char *storage)
{
    return std::string(policy) + "+" + storage;
}

} // namespace

int sparse_reps(const Options &o)
{
    return 3 * (o.reps_given ? o.reps : o.full ? 9 : 5);
}

std::vector<Engine> versus_single_engines(const char *section, const char *policy,
                                          bool profiled, std::vector<std::string> &notes)
{
    std::vector<std::string> text; // the strings the specs point into
    for (const char *st : kStorages)
        for (const char *p : {"single", policy}) {
            text.push_back(on(p, st));
            text.push_back(std::string("policy=") + p + " storage=" + st);
        }
    std::vector<SectionSpec> specs;
    for (size_t i = 0; i < text.size(); i += 2)
        specs.push_back({text[i].c_str(), text[i + 1].c_str(), profiled && i % 4 == 2});
    return section_engines(section, specs, notes);
}

void print_versus_single(FILE *f, const Report &rep, const char *policy, const char *stat_name,
                         uint64_t (*stat)(const Cell &))
{
    std::string ratio = std::string(policy) + "/single";
    int sw = (int)strlen(stat_name), rw = std::max(13, (int)ratio.size());
    fprintf(f, "  %-27s %6s %*s", "workload", "max q", sw, stat_name);
    for (const char *st : kStorages)
        fprintf(f, " %9s %*s", fmt("%s ns", st).c_str(), rw, ratio.c_str());
    fprintf(f, "\n");
    size_t judged = find_engine(rep, on(policy, "llv"));
    for (const Row &row : rep.rows()) {
        std::string n = judged < row.cells.size() && row.cells[judged].has_end
                            ? fmt("%llu", (unsigned long long)(stat(row.cells[judged])))
                            : "-";
        fprintf(f, "  %-27s %6llu %*s", row.name.c_str(),
                (unsigned long long)row.ref.max_pending, sw, n.c_str());
        for (const char *st : kStorages) {
            size_t a = find_engine(rep, on("single", st)), b = find_engine(rep, on(policy, st));
            double sn = a < row.cells.size() ? median_ns(row.cells[a]) : NAN;
            fprintf(f, " %9s %s", std::isnan(sn) ? "-" : fmt("%.1f", sn).c_str(),
                    pad(time_ratio(row, b, a), rw).c_str());
        }
        fprintf(f, "\n");
    }
}

std::vector<Target> versus_single_targets(const Report &rep, const char *policy,
                                          const std::string &prefix, double bound)
{
    std::vector<Target> out;
    for (const Row &row : rep.rows()) {
        Target t;
        t.what = prefix + row.name + fmt(": %s/single <= %.2f", policy, bound);
        bool missed = false, missing = false;
        for (const char *st : kStorages) {
            double m = NAN;
            std::string r = time_ratio(row, find_engine(rep, on(policy, st)),
                                       find_engine(rep, on("single", st)), &m);
            t.figure += (t.figure.empty() ? "" : ", ") + std::string(st) + " " + r;
            missed = missed || m > bound;
            missing = missing || std::isnan(m);
        }
        t.verdict = verdict(missed, missing);
        out.push_back(t);
    }
    return out;
}

void print_memory(FILE *f, const Report &rep, bool pnp_stats)
{
    const std::vector<Engine> &en = rep.engines();
    int w = 6; // the engine column: the longest label and a space
    for (const Engine &e : en)
        w = std::max(w, (int)e.label.size() + 1);
    fprintf(f, "  %-15s %-*s %8s %11s %7s %8s %7s", "workload", w, "engine", "entries", "bytes",
            "x ob1", "B/entry", "queues");
    if (pnp_stats)
        fprintf(f, " %9s %8s %6s", "B/queue", "partners", "levels");
    fprintf(f, "\n");
    size_t ob1 = find_engine(rep, "ob1");
    for (const Row &row : rep.rows()) {
        double ob1_bytes =
            ob1 < en.size() && row.cells[ob1].ok ? (double)row.cells[ob1].m.bytes_peak : NAN;
        for (size_t i = 0; i < en.size(); i++) {
            const Cell &c = row.cells[i];
            std::string bad = cell_problem(c);
            if (!bad.empty()) {
                fprintf(f, "  %-15s %-*s %s %s\n", row.name.c_str(), w, en[i].label.c_str(),
                        bad.c_str(), c.error.c_str());
                continue;
            }
            fprintf(f, "  %-15s %-*s %8llu %11llu %7.2f %8.1f %7llu", row.name.c_str(), w,
                    en[i].label.c_str(), (unsigned long long)c.m.max_pending,
                    (unsigned long long)c.m.bytes_peak, (double)c.m.bytes_peak / ob1_bytes,
                    bytes_per_entry(c), (unsigned long long)c.m.queues_peak);
            if (pnp_stats) {
                std::string part =
                    c.has_end ? fmt("%llu", (unsigned long long)c.end_partners) : "-";
                std::string lev =
                    c.has_end ? fmt("%llu", (unsigned long long)c.end_levels) : "-";
                fprintf(f, " %9.0f %8s %6s",
                        c.m.queues_peak ? (double)c.m.bytes_peak / (double)c.m.queues_peak
                                        : NAN,
                        part.c_str(), lev.c_str());
            }
            fprintf(f, "\n");
        }
    }
}

bool print_no_figure(FILE *f, int w, const std::string &label, const Cell &c)
{
    std::string bad = cell_problem(c);
    if (bad.empty())
        return false;
    fprintf(f, "  %-*s %8s  %s\n", w, label.c_str(), bad.c_str(), c.error.c_str());
    return true;
}

void print_notes(FILE *f, const std::vector<std::string> &notes)
{
    for (size_t i = 0; i < notes.size(); i++)
        if (std::find(notes.begin(), notes.begin() + (long)i, notes[i]) ==
            notes.begin() + (long)i)
            fprintf(f, "note: %s\n", notes[i].c_str());
}

void list_workloads(FILE *f, const std::vector<Workload> &w)
{
    for (const Workload &x : w)
        fprintf(f, "  %-30s %s\n", x.name, x.spec);
}

} // namespace vmr
