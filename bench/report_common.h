// report_common.h -- what the parts of vmatch_report share: options, engines, results, the
// Report class that generates, checks and times workloads, the machine, the statistics of
// the tables and the target lines of the closing summary.  vmatch_report.cc describes the
// method; each report_*.cc is one section of the output.
#pragma once

#include "baseline.h"
#include "replay.h"
#include "stats.h"
#include "trace.h"
#include "vmatch.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace vmr
{

using vmb::median;
using vmb::quantile;

// A generated workload: a row label and its generator spec (workloads/gen.h).
struct Workload {
    const char *name, *spec;
};

// The baseline every ratio of the workload table is taken against.
constexpr const char *kYardstick = "mpich";

// The hashed vector queues (policy=hash).  Each section runs them when this build has them.
constexpr const char *kHashLabel = "hash";
constexpr const char *kHashSpec = "policy=hash storage=llv";

// Records the profiles the profiled (pnp-static) engines read: any policy records the same
// per-source insertion counts.
constexpr const char *kRecorderSpec = "policy=single storage=llv profile.record=on";

// The contenders compiled into the replay loop (report_inline.cc): the default engine
// through vmatch_inline.h, the ob1 and UCX designs called as their classes (the libraries'
// request objects modelled), and the same algorithms written compactly (match fields in
// pooled nodes).  The headline compares the first with the fastest of the four peers, row
// by row, and with the faster of the two faithful ones.
constexpr const char *kHashInlineLabel = "hash-inl";
constexpr const char *kOb1InlineLabel = "ob1-inl";
constexpr const char *kUcxInlineLabel = "ucx-inl";
constexpr const char *kOb1CompactLabel = "ob1-compact";
constexpr const char *kUcxCompactLabel = "ucx-compact";

// ---- engines ----

// A contender whose calls are compiled into the replay loop (replay_inline.h): one virtual
// call per replayed range, none per operation.
class InlineReplay
{
  public:
    virtual ~InlineReplay() = default;
    // Replay operations [from, to) of p as vm_wl_run does.
    virtual int run(const vm_wl_prep_t *p, size_t from, size_t to, uint32_t *out, char *err,
                    size_t errlen) = 0;
    // The same calls behind function pointers, for preparing and the untimed pass.
    vm_wl_backend_t b{};
};

struct InlineInfo {
    const char *label, *models;
    // A new contender for trace t, or nullptr with err.
    std::unique_ptr<InlineReplay> (*make)(const vm_trace_t &t, std::string &err);
    // A peer's design (nullptr for hash-inl): a new one in another layout than the default
    // (vmatch_rank replays recorded traces in their own layout).
    std::unique_ptr<InlineReplay> (*design)(const vmb::Layout &l, uint32_t nprocs);
};

// The inline contenders, in table order (report_inline.cc).
const std::vector<InlineInfo> &inline_engines();
// The spec of hash-inl's engine (--inline-spec; "" is the default engine): false with why
// when vmatch_create refuses it.
bool set_inline_spec(const std::string &spec, std::string &why);
// That spec ("": the default engine).
const std::string &inline_spec();

struct Engine {
    std::string label, spec, resolved, note;
    const vmb::BaselineInfo *base = nullptr; // a baseline, else a vmatch spec
    const InlineInfo *inl = nullptr;         // or a contender compiled into the loop
    // pnp-static: a profile of the same workload is recorded first (an untimed replay with
    // profile.record=on) and the engine gets "profile=FILE" after its spec.
    bool profiled = false;
    // On a workload that repeats (a generator's iters=N > 1, each iteration ending with both
    // queues empty): replay the first iteration only, in the untimed pass and when timed,
    // for 1/N of the cost.  Not run on other workloads, unless it is the yardstick.  A list
    // keeps no queue state between iterations, but its later iterations can still be
    // slower (free lists hand objects back scattered): its time is then understated.
    bool first_iter = false;
};

// One live instance of an engine, with its replay backend.
struct Instance {
    vm_wl_backend_t b{};
    vmatch_engine_t *e = nullptr;
    std::unique_ptr<vmb::Baseline> bl;
    std::unique_ptr<InlineReplay> ir; // an inline contender: b is its ir->b
    ~Instance() { vmatch_destroy(e); }
};

// A backend over self through Calls, with the default layout (the library engines' too, so
// that every implementation is handed the same match bits).
template <class Calls> void fill_backend(vm_wl_backend_t &b, void *self)
{
    vmb::Layout l;
    b.self = self;
    b.ctx_bits = l.ctx_bits;
    b.src_bits = l.src_bits;
    b.tag_bits = l.tag_bits;
    b.post = Calls::post;
    b.arrive = Calls::arrive;
    b.probe = Calls::probe;
    b.cancel = Calls::cancel;
    b.remove = Calls::remove;
}

// A new instance for trace t, or nullptr with err.  profile: the file a profiled engine reads.
std::unique_ptr<Instance> make_instance(const Engine &en, const vm_trace_t &t, std::string &err,
                                        const std::string &profile = "");

// A baseline or an inline contender by its label: en's label, base or inl and resolved set;
// false when there is none of that name (report_inline.cc).
bool named_engine(const std::string &label, Engine &en);

// The engine that records the profiles the profiled engines read (kRecorderSpec).
Engine recorder_engine();

// A new empty temporary file (TMPDIR, else /tmp) whose name starts with prefix: its path, or
// "" with why.
std::string temp_file(const char *prefix, std::string &why);

// Whether vmatch_create takes spec; resolved gets vmatch_describe's text, or why the reason.
bool check_spec(const std::string &spec, std::string &resolved, std::string &why);

// An engine of a section's table: a vmatch spec, or (spec nullptr) the baseline named label;
// profiled: it reads a profile recorded from the same workload (pnp-static, cluster).
struct SectionSpec {
    const char *label, *spec;
    bool profiled;
};

// The engines of specs this build and machine run; each one left out adds a note
// "SECTION section: LABEL (\"SPEC\") left out: WHY".
std::vector<Engine> section_engines(const char *section, const std::vector<SectionSpec> &specs,
                                    std::vector<std::string> &notes);

// ---- results ----

struct Cell {
    std::vector<double> ns; // ns per operation, one per repetition (NaN: not run)
    // A repeating workload (Row::iter_ops > 0): ns per operation over its first iteration
    // and over the later ones, timed in the same replays as ns (NaN: not run).
    std::vector<double> ns_first, ns_later;
    vm_wl_measure_t m{};
    bool wrong = false, ok = false;
    size_t diff_at = 0;
    std::string error;
    vmatch_stats_t end{}; // vmatch engines: vmatch_stats after the untimed pass
    // and their policy's figures then (vmatch_stat; 0 when the policy keeps none): pnp's
    // partners, and the levels of pnp (extraction rounds) and unified (collective levels)
    uint64_t end_partners = 0, end_levels = 0;
    bool has_end = false;
};

struct Row {
    std::string name, spec, desc;
    bool sweep = false;
    size_t ops = 0;
    // Repeating workloads: the iterations, and the operations of one (0: not split).
    unsigned iters = 1;
    size_t iter_ops = 0;
    // Receives, probes and improbes with MPI_ANY_SOURCE or MPI_ANY_TAG in the trace.
    size_t wild = 0;
    vm_wl_measure_t ref{};
    double gen_s = 0;
    std::vector<Cell> cells; // one per engine
};

struct Options {
    bool full = false, machine_only = false, list = false;
    bool pnp = true, main_suite = true; // --no-pnp, --pnp-only
    bool tagperf = true;                // --no-tagperf (--tagperf-only: the others off)
    bool cluster = true;                // --no-cluster (--cluster-only: the others off)
    bool unified = true;                // --no-unified (--unified-only: the others off)
    bool memory = true;                 // --no-memory (--memory-only: the others off)
    bool reps_given = false;
    int reps = 0; // 0: the default of the mode
    // The yardstick (mpich) runs in only this many of the repetitions, spread evenly over
    // them (0: in all); the ratios to it are taken over those.
    int yard_reps = 0;
    // A new instance for every timed replay, for every engine: an adaptive design (pnp)
    // would otherwise start a second replay of a workload with what it learnt in the first.
    bool fresh = false;
    double min_ms = 5, budget_s = 20;
    std::string out, only, engines, inline_spec;
    // --log FILE: the progress of every workload and the tables with their legends go there,
    // and the terminal keeps a line per section and the tables alone.
    FILE *log = stdout;
    std::string summary; // --summary FILE: the target lines are appended there
    // --traces DIR: the directories of recorded traces the headline's real-trace rows read
    // ("": the source tree's workloads/traces); --no-traces: none.
    std::string traces;
    bool trace_rows = true;
};

// ---- the machine ----

struct Machine {
    std::string cpu, kernels, chosen, default_spec, os;
    long cpus = 0;
    int numa_nodes = 0;
    bool virt = false;
};

Machine probe_machine();
void print_machine(FILE *f, const Machine &m);

// ---- running ----

std::string fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));

// The line that says a section starts: on the terminal, and in the log too when that is a
// file, so that each reads on its own.
void section_line(const Options &o, const std::string &text);

class Report
{
  public:
    Report(const Options &o, std::vector<Engine> engines);

    // Generate, check and time one workload (idx of total, for the progress line).
    void run(const std::string &name, const std::string &spec, bool sweep, size_t idx,
             size_t total);

    bool failed() const { return failed_; }
    const std::vector<Row> &rows() const { return rows_; }
    const std::vector<Engine> &engines() const { return engines_; }
    size_t yard() const { return yard_; }
    const Options &options() const { return o_; }

  private:
    bool yard_runs(int r) const;
    bool record_profile(const vm_trace_t &t, char *err, size_t errlen);
    double timed(const Engine &en, const vm_trace_t &t, vm_wl_prep_t &p, bool reusable,
                 size_t split, const std::vector<uint32_t> &want, std::vector<uint32_t> &got,
                 Cell &c, double &ns1, double &ns2);

    Options o_;
    std::vector<Engine> engines_;
    std::vector<Row> rows_;
    size_t yard_ = (size_t)-1;
    std::mt19937_64 rng_{20260101};
    bool failed_ = false;
    // The profile file of the workload being run, for profiled engines ("-": none was made).
    std::string profile_;
};

// Run the workloads of list whose name contains --only's text, in order.
void run_rows(Report &rep, const std::vector<Workload> &list, const Options &o);

// ---- statistics of the tables ----

// a / b of the times within each repetition of row as "0.42±3%" (med: the median), or why
// there is none ("-" when an index is out of range).
std::string time_ratio(const Row &row, size_t a, size_t b, double *med = nullptr);

// Ratio of an engine's time to the yardstick's within each repetition.
std::vector<double> rep_ratios(const Cell &c, const Cell &y);
// Median of a/b over the repetitions both ran, and half the interquartile range in percent.
bool rep_speedup(const Cell &a, const Cell &b, double &med, double &spread);
// Median and quartiles of a[r] / b[r] over the repetitions where both are numbers.
bool vec_ratio(const std::vector<double> &a, const std::vector<double> &b, double &med,
               double &q1, double &q3);
// "2.31x±4%": rep_speedup as text, "-" without a figure.
std::string ratio_text(const Cell &a, const Cell &b, const char *unit);
double median_ns(const Cell &c);
double bytes_per_entry(const Cell &c);
// Why a cell shows no figure (or the empty string when it has one).
std::string cell_problem(const Cell &c);
size_t find_engine(const Report &rep, const std::string &label);
// The column of the default engine through the library's calls: the one whose resolved spec
// is vmatch_create("")'s (collect_engines shows an engine once, under its first label).
size_t default_engine(const Report &rep);
// s right-aligned in w columns; UTF-8 continuation bytes (of the ±) take no column.
std::string pad(const std::string &s, int w);

// ---- the closing summary ----

// One target the run judges: what it asks, the measured figure with its spread, and the
// verdict ("met", "missed", "no figure" when an engine failed to give one, or "not
// measured" when this build lacks the engine: the figure then says why, in parentheses).
struct Target {
    std::string what, figure, verdict;
};

void print_targets(FILE *f, const std::vector<Target> &t);

// "missed" when a figure misses the target, else "no figure" when one is missing, else "met".
std::string verdict(bool missed, bool missing);

// A workload a target judges: its figure and that figure as printed.
struct Judged {
    std::string name;
    double value;
    std::string text;
};

// The target what, met when no row's value is above bound: "N workloads, M above B; worst
// NAME FIG, best NAME FIG" and the rows without a figure, into out; nothing when there are
// no rows (--only).
void summarize(std::vector<Target> &out, const std::string &what,
               const std::vector<Judged> &rows, const std::vector<std::string> &without,
               double bound);

// A workload whose max q is at most this: a collective whose queues hold one or two entries
// (the lean and headline targets judge these apart).
constexpr uint64_t kShortQueue = 2;
// A row of the queue generator (the queue-depth rows): not a collective, whatever its max q.
inline bool queue_depth_row(const Row &row)
{
    return row.spec.rfind("queue ", 0) == 0;
}

// what, met when the median of a's time over b's within each repetition of row (time_ratio,
// the figure) is at most bound.
Target ratio_at_most(const std::string &what, const Row &row, size_t a, size_t b, double bound);

} // namespace vmr
