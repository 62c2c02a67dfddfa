// report_traces.cc -- the headline's real-trace rows: each directory of recorded traces (one
// file per rank, trace.RANK.gz as the ports' recordings are kept in the tree, or trace.RANK)
// replayed the way vmatch_rank replays a run (rank.h: the traces' nprocs and layout agreed,
// every rank on its own engine, the reference model's outcomes checked, interleaved timed
// repetitions), on hash-inl and the four inline peers.  A row's time per operation is the
// sum over the ranks of a replay's time divided by the sum of their operations.
//
// Decompression: zlib's gzread into a temporary file, which the trace reader then loads.
// zlib rather than spawning gzip: no dependence on a program in PATH or on a shell, and a
// damaged file is an error return with zlib's message instead of an exit status to decode.
#include "rank.h"
#include "report_sections.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef VMATCH_TRACES_DIR
#define VMATCH_TRACES_DIR "workloads/traces"
#endif

namespace vmr
{

namespace
{

// The engines of the rows: hash-inl and the four peers.
const std::vector<SectionSpec> kTraceSpecs = {
    {kHashInlineLabel, nullptr, false}, {kOb1InlineLabel, nullptr, false},
    {kUcxInlineLabel, nullptr, false},  {kOb1CompactLabel, nullptr, false},
    {kUcxCompactLabel, nullptr, false},
};

bool is_dir(const std::string &p)
{
    struct stat st;
    return stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// The names in dir, sorted; false when it cannot be read.
bool list_dir(const std::string &dir, std::vector<std::string> &names)
{
    DIR *d = opendir(dir.c_str());
    if (!d)
        return false;
    while (struct dirent *e = readdir(d))
        if (e->d_name[0] != '.')
            names.push_back(e->d_name);
    closedir(d);
    std::sort(names.begin(), names.end());
    return true;
}

// Whether name is trace.RANK.gz or trace.RANK (RANK decimal digits).
bool trace_name(const std::string &name, bool &gz)
{
    if (name.rfind("trace.", 0) != 0)
        return false;
    std::string rest = name.substr(6);
    gz = rest.size() > 3 && rest.compare(rest.size() - 3, 3, ".gz") == 0;
    if (gz)
        rest.resize(rest.size() - 3);
    return !rest.empty() && rest.find_first_not_of("0123456789") == std::string::npos;
}

// gz decompressed into a new temporary file: its path, or "" with why.
std::string gunzip(const std::string &gz, std::string &why)
{
    std::string out = temp_file("vmatch-trace", why);
    if (out.empty())
        return "";
    gzFile in = gzopen(gz.c_str(), "rb");
    FILE *f = fopen(out.c_str(), "wb");
    bool ok = in && f;
    char buf[65536];
    int n = 0;
    while (ok && (n = gzread(in, buf, sizeof buf)) > 0)
        ok = fwrite(buf, 1, (size_t)n, f) == (size_t)n;
    if (ok && n < 0) {
        int code;
        why = gz + ": " + gzerror(in, &code);
        ok = false;
    } else if (!ok) {
        why = gz + ": " + (in ? "cannot write " + out : std::string(strerror(errno)));
    }
    if (in)
        gzclose(in);
    if (f && fclose(f) != 0 && ok) {
        why = "cannot write " + out;
        ok = false;
    }
    if (!ok) {
        unlink(out.c_str());
        return "";
    }
    return out;
}

// A candidate's results as a row's cell: ns per operation per repetition.
Cell cell_of(const vrk::Candidate &c, double ops)
{
    Cell cell;
    cell.wrong = c.wrong;
    cell.error = c.error;
    cell.ok = c.error.empty();
    for (double ms : c.total)
        cell.ns.push_back(std::isnan(ms) || !cell.ok ? NAN : ms * 1e6 / ops);
    return cell;
}

// One directory as a row; false with why when it could not be run (no row then).
bool run_dir(const Options &o, const std::vector<Engine> &engines, const std::string &dir,
             const std::string &name, Row &row, std::string &why)
{
    std::vector<std::string> files, temps, sources; // sources[k]: what temps[k] holds
    list_dir(dir, files);
    vrk::Options ro;
    for (const std::string &f : files) {
        bool gz;
        if (!trace_name(f, gz))
            continue;
        std::string path = dir + "/" + f;
        if (gz && (path = gunzip(path, why)).empty())
            break;
        if (gz) {
            temps.push_back(path);
            sources.push_back(dir + "/" + f);
        }
        ro.traces.push_back(path);
    }
    bool ok = why.empty() && !ro.traces.empty();
    if (ok) {
        ro.reps = o.reps;
        ro.min_ms = o.min_ms;
        ro.budget_s = o.budget_s;
        std::vector<vrk::RankTrace> tr;
        vrk::RunShape shape;
        std::vector<std::string> notes;
        ok = vrk::load_traces(ro, tr, shape, notes, why) && vrk::prepare_traces(shape, tr, why);
        if (ok) {
            std::vector<vrk::Candidate> cands;
            for (const Engine &en : engines) {
                vrk::Candidate c;
                c.en = en;
                c.peer = en.label != kHashInlineLabel;
                cands.push_back(c);
            }
            vrk::run_candidates(ro, shape, tr, cands, false);
            double ops = 0;
            for (const vrk::RankTrace &r : tr) {
                ops += (double)r.t.n;
                row.ref.max_pending = std::max(row.ref.max_pending, r.ref.max_pending);
            }
            row.name = "trace " + name;
            row.spec = dir;
            row.desc = fmt("%zu ranks, %.0f operations", tr.size(), ops);
            row.ops = (size_t)ops;
            for (const vrk::Candidate &c : cands)
                row.cells.push_back(cell_of(c, ops));
        }
        vrk::release(tr);
    } else if (why.empty()) {
        why = "no trace.RANK.gz or trace.RANK file";
    }
    // The reader's messages name the decompressed copies: name the files instead.
    for (size_t k = 0; k < temps.size(); k++)
        for (size_t at; (at = why.find(temps[k])) != std::string::npos;)
            why.replace(at, temps[k].size(), sources[k]);
    for (const std::string &t : temps)
        unlink(t.c_str());
    return ok;
}

} // namespace

std::string default_traces_dir()
{
    return VMATCH_TRACES_DIR;
}

TraceRows run_trace_rows(const Options &o)
{
    TraceRows tr;
    tr.ran = true;
    tr.dir = o.traces.empty() ? default_traces_dir() : o.traces;
    tr.engines = section_engines("traces", kTraceSpecs, tr.notes);
    std::vector<std::string> names;
    if (!is_dir(tr.dir) || !list_dir(tr.dir, names))
        return tr;
    std::vector<std::string> dirs;
    for (const std::string &n : names)
        if (is_dir(tr.dir + "/" + n) &&
            (o.only.empty() || ("trace " + n).find(o.only) != std::string::npos))
            dirs.push_back(n);
    if (dirs.empty())
        return tr;
    section_line(o, fmt("== real traces: %zu directories of %s x %zu engines", dirs.size(),
                        tr.dir.c_str(), tr.engines.size()));
    for (const std::string &n : dirs) {
        Row row;
        std::string why;
        uint64_t t0 = vm_wl_now_ns();
        if (run_dir(o, tr.engines, tr.dir + "/" + n, n, row, why))
            tr.rows.push_back(std::move(row));
        else
            tr.notes.push_back(fmt("traces %s left out: %s", n.c_str(), why.c_str()));
        fprintf(o.log, "  trace %-28s %5.1f s\n", n.c_str(),
                (double)(vm_wl_now_ns() - t0) / 1e9);
        fflush(o.log);
    }
    return tr;
}

} // namespace vmr
