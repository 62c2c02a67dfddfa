// report_sections.h -- the sections of vmatch_report's output, as main runs them: the
// workload table (report_workloads.cc), the pnp section (report_pnp.cc, its gather part in
// report_pnp_gather.cc), the tag-perf section (report_tagperf.cc), the targets of issues 11
// (report_lean.cc) and 12 (report_hash.cc), the cluster and unified sections
// (report_cluster.cc, report_unified.cc) and the files of the report folder
// (report_files.cc).
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

// ---- the pnp section ----

// What a pnp-section engine is for, in the verdicts.
enum PnpRole { kRoleOther, kRoleSingleLlv, kRolePnpLlv };

struct PnpSection {
    std::unique_ptr<Report> gather, sparse, memory;
    std::vector<PnpRole> gather_roles;
    std::vector<std::string> notes;
};

// Runs the three parts, a line on stdout as each starts.
PnpSection run_pnp_section(const Options &o);

// The section's tables (legend: with their explanations, the engines and the notes).
void print_pnp_section(FILE *f, const PnpSection &s, bool legend);

// The gather part's table, and its targets: pnp+llv >= 28x mpich and faster than single+llv.
void print_pnp_gather(FILE *f, const PnpSection &s, bool legend);
std::vector<Target> pnp_gather_targets(const PnpSection &s);

// Every target the section judges, in the order of its tables.
std::vector<Target> pnp_targets(const PnpSection &s);

// The section's workloads, for --list.
void list_pnp_workloads(FILE *f, const Options &o);
// The rows of part (b) and of part (c) (with --full's), which the cluster section runs too.
std::vector<Workload> pnp_sparse_workloads();
std::vector<Workload> pnp_memory_workloads(const Options &o);

// ---- the cluster section (issue 13), report_cluster.cc ----

struct ClusterSection {
    std::unique_ptr<Report> gather, sparse, memory;
    std::vector<std::string> notes;
};

// Runs the three parts, a line on stdout as each starts.
ClusterSection run_cluster_section(const Options &o);
// The section's tables (legend: with their explanations).
void print_cluster_section(FILE *f, const ClusterSection &s, bool legend);
// Its targets ("cluster: ..." lines).
std::vector<Target> cluster_targets(const ClusterSection &s);
void list_cluster_workloads(FILE *f, const Options &o);

// ---- the unified section (issue 14), report_unified.cc ----

struct UnifiedSection {
    std::unique_ptr<Report> coll, mixed, memory;
    std::vector<std::string> notes;
};

// Runs the three parts, a line on stdout as each starts.
UnifiedSection run_unified_section(const Options &o);
// The section's tables (legend: with their explanations).
void print_unified_section(FILE *f, const UnifiedSection &s, bool legend);
// Its targets ("unified: ..." lines).
std::vector<Target> unified_targets(const UnifiedSection &s);
void list_unified_workloads(FILE *f, const Options &o);

// ---- issue 11 ----

// The targets of issue 11 judged on the workload table (rep) and on part (a) of the pnp
// section (pnp); either may be null (not run).  report_lean.cc.
std::vector<Target> lean_targets(const Report *rep, const PnpSection *pnp);

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

// ---- issue 12 ----

// "" when policy=hash (kHashSpec) can be created here, else the note "hash left out: WHY"
// that each section prints.  report_hash.cc.
std::string hash_left_out_note();

// The targets of issue 12 judged on the workload table (rep), the pnp section's gather and
// memory parts (pnp) and the tag-perf section (tp); any may be null (not run).
std::vector<Target> hash_targets(const Report *rep, const PnpSection *pnp, const TagPerf *tp);

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

} // namespace vmr
