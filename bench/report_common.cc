// report_common.cc -- the machine block, the statistics the tables share, engine spec checks
// and the target lines of the closing summary.
#include "report_common.h"

#include <cerrno>
#include <cmath>
#include <cstdarg>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

namespace vmr
{

// ---- the machine ----

static std::string read_file(const char *path)
{
    std::ifstream f(path);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

Machine probe_machine()
{
    Machine m;
    std::string info = read_file("/proc/cpuinfo");
    size_t p = info.find("model name");
    if (p != std::string::npos) {
        size_t c = info.find(':', p), e = info.find('\n', p);
        if (c != std::string::npos && c < e)
            m.cpu = info.substr(c + 2, e - c - 2);
    }
    if (m.cpu.empty())
        m.cpu = "unknown CPU";
    m.virt = info.find(" hypervisor") != std::string::npos;
    m.cpus = sysconf(_SC_NPROCESSORS_ONLN);
    for (int n = 0; n < 4096; n++) {
        char path[64];
        snprintf(path, sizeof path, "/sys/devices/system/node/node%d", n);
        struct stat st;
        if (stat(path, &st) == 0)
            m.numa_nodes++;
        else if (n > 64 && m.numa_nodes)
            break;
    }
    for (const char *k : {"avx512", "avx2", "scalar"})
        if (vmatch_simd_available(k))
            m.kernels += std::string(m.kernels.empty() ? "" : " ") + k;
    if (m.kernels.empty())
        m.kernels = "none";
    vmatch_engine_t *e = nullptr;
    if (vmatch_create("", &e) == 0) {
        m.default_spec = vmatch_describe(e);
        m.chosen = vmatch_kernel(e);
        vmatch_destroy(e);
    }
    // The kernel storage=llv would choose, when the default engine has none (ll, lla).
    if (m.chosen == "none") {
        if (vmatch_create("storage=llv", &e) == 0) {
            m.chosen = std::string("none for the default storage; storage=llv picks ") +
                       vmatch_kernel(e);
            vmatch_destroy(e);
        } else {
            m.chosen = "none (the default storage has no vector kernel, and this build no "
                       "storage=llv)";
        }
    }
    struct utsname u;
    if (uname(&u) == 0)
        m.os = std::string(u.sysname) + " " + u.release;
    return m;
}

void print_machine(FILE *f, const Machine &m)
{
    fprintf(f, "machine: %s, %ld CPUs online, %d NUMA node%s%s\n", m.cpu.c_str(), m.cpus,
            m.numa_nodes, m.numa_nodes == 1 ? "" : "s", m.virt ? ", virtual machine" : "");
    fprintf(f, "vector kernels this CPU and build offer: %s; vmatch chose: %s\n",
            m.kernels.c_str(), m.chosen.empty() ? "?" : m.chosen.c_str());
    fprintf(f, "default engine: %s\n", m.default_spec.c_str());
    fprintf(f, "system: %s\n", m.os.c_str());
}

std::string fmt(const char *f, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, f);
    vsnprintf(buf, sizeof buf, f, ap);
    va_end(ap);
    return buf;
}

void section_line(const Options &o, const std::string &text)
{
    printf("\n%s\n", text.c_str());
    fflush(stdout);
    if (o.log != stdout) {
        fprintf(o.log, "\n%s\n", text.c_str());
        fflush(o.log);
    }
}

// ---- engines ----

// Whether vmatch_create takes spec; resolved gets vmatch_describe's text, or why the reason.
// Some policies (pnp) need nprocs, which the replay adds from the trace: such a spec is tried
// again with a stand-in nprocs, and resolved then says "nprocs=P (the trace's)".
Engine recorder_engine()
{
    Engine rec;
    rec.label = "recorder";
    rec.spec = kRecorderSpec;
    return rec;
}

std::string temp_file(const char *prefix, std::string &why)
{
    const char *tmp = getenv("TMPDIR");
    std::string path = std::string(tmp && *tmp ? tmp : "/tmp") + "/" + prefix + "-XXXXXX";
    std::vector<char> name(path.begin(), path.end());
    name.push_back('\0');
    int fd = mkstemp(name.data());
    if (fd < 0) {
        why = fmt("cannot create %s: %s", path.c_str(), strerror(errno));
        return "";
    }
    close(fd);
    return name.data();
}

bool check_spec(const std::string &spec, std::string &resolved, std::string &why)
{
    vmatch_engine_t *e = nullptr;
    int rc = vmatch_create(spec.c_str(), &e);
    if (rc < 0) {
        why = fmt("%s (%s)", vmatch_strerror(rc), vmatch_last_error());
        const std::string standin = "nprocs=4096";
        if (spec.find("nprocs=") != std::string::npos ||
            vmatch_create((standin + " " + spec).c_str(), &e) < 0)
            return false;
        resolved = vmatch_describe(e);
        size_t at = resolved.find(standin);
        if (at != std::string::npos)
            resolved.replace(at, standin.size(), "nprocs=P (the trace's)");
    } else {
        resolved = vmatch_describe(e);
    }
    vmatch_destroy(e);
    return true;
}

// ---- statistics of the tables ----

// Ratio of an engine's time to the yardstick's within each repetition.
std::vector<double> rep_ratios(const Cell &c, const Cell &y)
{
    std::vector<double> v;
    for (size_t r = 0; r < c.ns.size() && r < y.ns.size(); r++)
        if (!std::isnan(c.ns[r]) && !std::isnan(y.ns[r]) && y.ns[r] > 0)
            v.push_back(c.ns[r] / y.ns[r]);
    return v;
}

double bytes_per_entry(const Cell &c)
{
    if (!c.m.max_pending)
        return NAN;
    return ((double)c.m.bytes_peak - (double)c.m.bytes_empty) / (double)c.m.max_pending;
}

// s right-aligned in w columns; UTF-8 continuation bytes (of the ±) take no column.
std::string pad(const std::string &s, int w)
{
    int cols = 0;
    for (unsigned char ch : s)
        cols += (ch & 0xc0) != 0x80;
    return std::string(cols < w ? (size_t)(w - cols) : 0, ' ') + s;
}
// Median of a/b over the repetitions both ran, and half the interquartile range in percent.
bool rep_speedup(const Cell &a, const Cell &b, double &med, double &spread)
{
    std::vector<double> r = rep_ratios(a, b);
    if (r.empty() || a.wrong || b.wrong)
        return false;
    med = median(r);
    spread = 100 * (quantile(r, 0.75) - quantile(r, 0.25)) / 2 / med;
    return true;
}

std::string ratio_text(const Cell &a, const Cell &b, const char *unit)
{
    double m, sp;
    if (!rep_speedup(a, b, m, sp))
        return "-";
    std::string v = m >= 0.1 ? fmt("%.2f", m) : fmt("%.2g", m);
    return v + unit + fmt("±%.0f%%", sp);
}

double median_ns(const Cell &c)
{
    std::vector<double> ok;
    for (double x : c.ns)
        if (!std::isnan(x))
            ok.push_back(x);
    return ok.empty() ? NAN : median(ok);
}

size_t find_engine(const Report &rep, const std::string &label)
{
    for (size_t i = 0; i < rep.engines().size(); i++)
        if (rep.engines()[i].label == label)
            return i;
    return (size_t)-1;
}

size_t default_engine(const Report &rep)
{
    std::string resolved, why;
    if (!check_spec("", resolved, why))
        return (size_t)-1;
    for (size_t i = 0; i < rep.engines().size(); i++) {
        const Engine &en = rep.engines()[i];
        if (!en.base && !en.inl && en.resolved == resolved)
            return i;
    }
    return (size_t)-1;
}

// Why a cell shows no figure (or the empty string when it has one).
std::string cell_problem(const Cell &c)
{
    if (c.wrong)
        return "WRONG";
    if (!c.ok || !c.error.empty())
        return "error";
    return "";
}

// Median and quartiles of a[r] / b[r] over the repetitions where both are numbers.
bool vec_ratio(const std::vector<double> &a, const std::vector<double> &b, double &med,
               double &q1, double &q3)
{
    std::vector<double> r;
    for (size_t k = 0; k < a.size() && k < b.size(); k++)
        if (!std::isnan(a[k]) && !std::isnan(b[k]) && b[k] > 0)
            r.push_back(a[k] / b[k]);
    return vmb::quartiles(r, med, q1, q3);
}

// ---- the closing summary ----

void print_targets(FILE *f, const std::vector<Target> &t)
{
    for (const Target &x : t)
        if (x.verdict == "not measured")
            fprintf(f, "%s %s (%s)\n", x.verdict.c_str(), x.what.c_str(), x.figure.c_str());
        else
            fprintf(f, "%-9s %s: %s\n", x.verdict.c_str(), x.what.c_str(), x.figure.c_str());
}

// "N workloads, M above B: worst NAME FIG, best NAME FIG" from the judged rows, into out;
// nothing when no workload was selected (--only).
void summarize(std::vector<Target> &out, const std::string &what,
               const std::vector<Judged> &rows, const std::vector<std::string> &without,
               double bound)
{
    if (rows.empty() && without.empty())
        return;
    Target t;
    t.what = what;
    size_t above = 0;
    const Judged *worst = nullptr, *best = nullptr;
    for (const Judged &j : rows) {
        above += j.value > bound;
        worst = !worst || j.value > worst->value ? &j : worst;
        best = !best || j.value < best->value ? &j : best;
    }
    t.figure = fmt("%zu workload%s, %zu above %.2g", rows.size(), rows.size() == 1 ? "" : "s",
                   above, bound);
    if (worst)
        t.figure += "; worst " + worst->name + " " + worst->text;
    if (best && best != worst)
        t.figure += ", best " + best->name + " " + best->text;
    for (const std::string &w : without)
        t.figure += "; no figure: " + w;
    t.verdict = verdict(above > 0, !without.empty());
    out.push_back(t);
}

std::string verdict(bool missed, bool missing)
{
    return missed ? "missed" : missing ? "no figure" : "met";
}

Target ratio_at_most(const std::string &what, const Row &row, size_t a, size_t b, double bound)
{
    double m = NAN;
    Target t;
    t.what = what;
    t.figure = time_ratio(row, a, b, &m);
    t.verdict = verdict(m > bound, std::isnan(m));
    return t;
}

std::vector<Engine> section_engines(const char *section, const std::vector<SectionSpec> &specs,
                                    std::vector<std::string> &notes)
{
    std::vector<Engine> out;
    for (const SectionSpec &sp : specs) {
        Engine en;
        en.label = sp.label;
        if (!sp.spec) {
            if (named_engine(sp.label, en))
                out.push_back(en);
            continue;
        }
        en.spec = sp.spec;
        en.profiled = sp.profiled;
        std::string why;
        if (en.profiled) {
            en.resolved = en.spec + " profile=FILE (recorded from the same workload with " +
                          kRecorderSpec + ")";
        } else if (!check_spec(en.spec, en.resolved, why)) {
            notes.push_back(fmt("%s section: %s (\"%s\") left out: %s", section, sp.label,
                                sp.spec, why.c_str()));
            continue;
        }
        out.push_back(en);
    }
    return out;
}

std::string time_ratio(const Row &row, size_t a, size_t b, double *med)
{
    if (a >= row.cells.size() || b >= row.cells.size())
        return "-";
    std::string bad = cell_problem(row.cells[a]);
    if (bad.empty())
        bad = cell_problem(row.cells[b]);
    double m, sp;
    if (!bad.empty() || !rep_speedup(row.cells[a], row.cells[b], m, sp))
        return bad.empty() ? "-" : bad;
    if (med)
        *med = m;
    return fmt("%.3f±%.0f%%", m, sp);
}

void run_rows(Report &rep, const std::vector<Workload> &list, const Options &o)
{
    std::vector<Workload> keep;
    for (const Workload &x : list)
        if (o.only.empty() || strstr(x.name, o.only.c_str()))
            keep.push_back(x);
    for (size_t i = 0; i < keep.size(); i++)
        rep.run(keep[i].name, keep[i].spec, false, i + 1, keep.size());
}

} // namespace vmr
