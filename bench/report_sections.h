// report_sections.h -- the sections of vmatch_report's output, as main runs them: the
// workload table (report_workloads.cc), the pnp section (report_pnp.cc, its gather part in
// report_pnp_gather.cc), the tag-perf section (report_tagperf.cc), the cluster and unified
// sections (report_cluster.cc, report_unified.cc), what the three sections in parts share
// (report_parts.cc), the lean targets (small queues and lean calls, report_lean.cc) and the
// hash targets (policy=hash, report_hash.cc) judged on the others' figures, and the files of
// the report folder (report_files.cc).
#pragma once

#include "report_common.h"

namespace vmr
{

// ---- the workload table ----

// A workload of the table, or of the sweep the plot draws (sweep: not in the table).
struct Job {
    std::string name, spec;
    bool sweep;
};

// The workloads of the mode (--full, --only, --pnp-only: none).
std::vector<Job> workload_jobs(const Options &o);

// The engines: library specs (deduplicated by resolved spec, left out when rejected),
// extra specs from VMATCH_REPORT_SPECS, then the baselines.  notes: what was left out.
std::vector<Engine> collect_engines(const Options &o, std::vector<std::string> &notes);

// "label  resolved spec" per engine, after heading.
void print_engines(FILE *f, const std::vector<Engine> &en, const char *heading);

// The time and the bytes tables; legend: with the paragraphs that explain them and the
// engines, else a title line per table.
void print_tables(FILE *f, const Report &rep, bool legend);

// ---- the sections in three parts: pnp, cluster, unified ----

// A section whose tables are its parts (a), (b) and (c), each a Report of its own engines and
// rows: in the pnp and cluster sections the hot-spot gather, sparse and short-queue rows and
// the memory at the peak; in the unified section collectives, point-to-point traffic mixed
// with collectives and the memory at the peak.  A section not run has no parts.
struct Section {
    std::unique_ptr<Report> a, b, c;
    std::vector<std::string> notes; // the engines left out, and why
    std::vector<const Report *> parts() const { return {a.get(), b.get(), c.get()}; }
};

// Each section: runs its three parts, a line on stdout as each starts; prints its tables
// (legend: with their explanations, and the notes); gives the targets it judges, in the
// order of its tables; lists its workloads (--list).
Section run_pnp_section(const Options &o);
void print_pnp_section(FILE *f, const Section &s, bool legend);
std::vector<Target> pnp_targets(const Section &s);
void list_pnp_workloads(FILE *f, const Options &o);

Section run_cluster_section(const Options &o);
void print_cluster_section(FILE *f, const Section &s, bool legend);
std::vector<Target> cluster_targets(const Section &s); // "cluster: ..." lines
void list_cluster_workloads(FILE *f, const Options &o);

Section run_unified_section(const Options &o);
void print_unified_section(FILE *f, const Section &s, bool legend);
std::vector<Target> unified_targets(const Section &s); // "unified: ..." lines
void list_unified_workloads(FILE *f, const Options &o);

// The pnp section's part (a) (report_pnp_gather.cc): the table, and its targets, pnp+llv
// >= 28x mpich and faster than single+llv, judged on every pnp setting over llv.
void print_pnp_gather(FILE *f, const Report &gather, bool legend);
std::vector<Target> pnp_gather_targets(const Report &gather);

// The pnp section's rows, which the cluster and unified sections run too: the repeated
// hot-spot gathers of part (a) (not --full's one-shot ones), the rows of part (b) and those
// of part (c) (with --full's).
std::vector<Workload> pnp_gather_workloads();
std::vector<Workload> pnp_sparse_workloads();
std::vector<Workload> pnp_memory_workloads(const Options &o);

// ---- what the sections in parts share (report_parts.cc) ----

// The repetitions of part (b) of the pnp and cluster sections, whose ratios are judged
// against 1.05: three times 5 (--full 9, or --reps).
int sparse_reps(const Options &o);

// Part (b) of the pnp and cluster sections sets POLICY against single over each storage
// (ll, lla, llv), the engines labelled "single+ST" and "POLICY+ST" (profiled: POLICY reads
// a profile recorded from the same workload).
std::vector<Engine> versus_single_engines(const char *section, const char *policy,
                                          bool profiled, std::vector<std::string> &notes);
// Its table: per row the most entries queued, POLICY+llv's vmatch_stats field stat (headed
// stat_name) after one replay, then per storage single's median ns per operation and
// POLICY / single within each repetition (median ±half the interquartile range).
void print_versus_single(FILE *f, const Report &rep, const char *policy, const char *stat_name,
                         uint64_t (*stat)(const Cell &));
// Its targets: on each row, POLICY / single at most bound over every storage, "PREFIX ROW:
// POLICY/single <= BOUND".
std::vector<Target> versus_single_targets(const Report &rep, const char *policy,
                                          const std::string &prefix, double bound);

// Part (c)'s table: per row and engine the entries, bytes at the peak, bytes / ob1's,
// bytes per entry and queues; pnp_stats: also bytes per queue, partners and levels.
void print_memory(FILE *f, const Report &rep, bool pnp_stats);

// An engine's line for a cell without a figure, "  LABEL  WRONG|error  ERROR" with the label
// in w columns; false (nothing printed) when the cell has its figure.
bool print_no_figure(FILE *f, int w, const std::string &label, const Cell &c);
// "note: ..." per note, each text once (an engine left out of two parts says so once).
void print_notes(FILE *f, const std::vector<std::string> &notes);
// "  NAME  SPEC" per workload, for --list.
void list_workloads(FILE *f, const std::vector<Workload> &w);

// ---- the lean targets: small queues and lean calls ----

// The targets judged on the workload table (rep) and on part (a) of the pnp section (pnp);
// either may be null (not run).  report_lean.cc.
std::vector<Target> lean_targets(const Report *rep, const Section *pnp);

// ---- the headline: vmatch's embedding path against the inline peers ----

// The real-trace rows (report_traces.cc): every directory under dir (--traces, default the
// source tree's workloads/traces) holding trace.RANK.gz (or trace.RANK) files is one row,
// "trace DIR", its time the sum over the ranks, each rank replayed on its own engine in the
// traces' layout and nprocs (as vmatch_rank does), on hash-inl and the four inline peers.
struct TraceRows {
    bool ran = false;
    std::string dir;
    std::vector<Engine> engines;
    std::vector<Row> rows;
    std::vector<std::string> notes; // directories left out, and why
};
TraceRows run_trace_rows(const Options &o);
// The directory run_trace_rows reads without --traces.
std::string default_traces_dir();

// The table of hash-inl (the default engine through vmatch_inline.h) against the fastest
// of the four inline peers (ob1-inl, ucx-inl, ob1-compact, ucx-compact), and against the
// faster of ob1-inl and ucx-inl, on each row of the workload table (rep), of the pnp
// section's part (a) (pnp) and of the real traces (tr); any may be null.  Nothing when none
// has the inline contenders.  report_headline.cc.
void print_headline(FILE *f, const Report *rep, const Section *pnp, const TraceRows *tr,
                    bool legend);
// Its targets, "headline: ..." lines.
std::vector<Target> headline_targets(const Report *rep, const Section *pnp,
                                     const TraceRows *tr);

// ---- the tag-perf section ----

// An engine of the tag-perf section and its figures: ns[side][k][r], ns per matching
// operation (side 0: expected, 1: unexpected; k: the index of n in TagPerf::sizes; r: the
// repetition), NaN where not run.
struct TagPerfEngine {
    Engine en;
    unsigned max_n = 0; // the largest n it runs
    std::vector<std::vector<double>> ns[2];
    std::string error; // the first failure or wrong match ("": none); no figures after it
};

struct TagPerf {
    std::vector<unsigned> sizes; // n = 1, 2, 4, ...
    std::vector<TagPerfEngine> engines;
    int reps = 0;
    double clock_ns = 0; // the cost of a pair of clock readings, subtracted from each run
    double wall_s = 0, cpu_s = 0;
    std::vector<std::string> notes; // engines left out, and why
    bool ran = false;
};

// Runs the section, a line on stdout as it starts.  report_tagperf.cc.
TagPerf run_tagperf(const Options &o);
// Its table (legend: with the explanation and the engines).
void print_tagperf(FILE *f, const TagPerf &t, bool legend);
// Engine e's growth of the time per doubling of n on side (0: expected, 1: unexpected):
// the median and quartiles over the repetitions of the geometric mean of t(2n) / t(n) for
// n >= 16 (ucx_style: UCX's own figure, the arithmetic mean of t(n) / t(n/2), n >= 16).
bool tagperf_growth(const TagPerf &t, size_t e, int side, double &med, double &q1, double &q3,
                    bool ucx_style = false);
size_t tagperf_engine(const TagPerf &t, const std::string &label);

// ---- the hash targets: policy=hash, hashed vector queues ----

// "" when policy=hash (kHashSpec) can be created here, else the note "hash left out: WHY"
// that each section prints.  report_hash.cc.
std::string hash_left_out_note();

// The targets judged on the workload table (rep), the pnp section's gather and memory parts
// (pnp) and the tag-perf section (tp); any may be null (not run).
std::vector<Target> hash_targets(const Report *rep, const Section *pnp, const TagPerf *tp);

// ---- the report folder ----

// A part of the pnp section, for the JSON file.
struct JsonPart {
    std::string key;
    const Report *rep;
};

// tp: the tag-perf section (null or not run: no "tag_perf" key).
bool write_json(const std::string &path, const Report &rep, const Machine &m, const Options &o,
                const std::vector<std::string> &notes, const std::vector<JsonPart> &pnp,
                const TagPerf *tp);

// plot.dat and plot.gp (gnuplot draws plot.png) from the sweep rows of rep.
bool write_plot(const std::string &dir, const Report &rep, const Machine &m);

// ---- the memory section (report_memory.cc) ----

// One engine on one case: bytes created, at the peak of the burst (entries queued then),
// drained, after the quiet traffic; error: why it did not run; wrong: a match was wrong.
struct MemCell {
    uint64_t created = 0, peak = 0, entries = 0, drained = 0, quiet = 0;
    bool ran = false, wrong = false;
    std::string error;
};

struct MemRow {
    std::string label, spec; // spec: the library engine's (of the first case)
    bool baseline = false;
    std::vector<MemCell> cells; // per case
};

struct MemorySection {
    bool ran = false;
    std::vector<std::string> cases, notes;
    std::vector<MemRow> rows;
};

MemorySection run_memory_section(const Options &o);
void print_memory_section(FILE *f, const MemorySection &m, bool legend);
std::vector<Target> memory_targets(const MemorySection &m); // "memory: ..." lines

} // namespace vmr
