// rank.h -- what the parts of vmatch_rank share: the traces of one run (one per rank), the
// candidates (vmatch designs and the peers' designs), their results, and the steps main runs.
// vmatch_rank.cc describes the method; rank_load.cc reads the traces and makes the candidate
// list, rank_run.cc checks and times the candidates.
#pragma once

#include "report_common.h"

#include <cstdint>
#include <string>
#include <vector>

namespace vrk
{

// The match-bit layout and process count every engine of the run gets.
struct RunShape {
    vmb::Layout layout;           // the traces' `layout` line, else 16/24/24
    bool layout_declared = false; // some trace has a `layout` line
    uint32_t nprocs = 0;          // the traces' `nprocs`, else the largest source + 1
    bool nprocs_declared = false;
};

// One rank's trace, prepared for the replays.
struct RankTrace {
    std::string path;
    vm_trace_t t{};    // given the run's nprocs and layout once they are agreed (load_traces)
    int64_t rank = -1; // the `rank` line (t.rank), else the file's position
    bool rank_declared = false; // the trace has a `rank` line
    std::vector<uint32_t> want; // the reference model's outcome of every operation
    vm_wl_measure_t ref{};      // queue figures of the reference's replay
    // Two preparations of the trace, in the run's layout: `plain` with class 0 everywhere
    // (the reference and the peers' designs, which ignore classes), `vm` with the class ids
    // of a vmatch engine (every new engine must give the same ones: vm_wl_rebind).
    vm_wl_prep_t plain{}, vm{};
    bool prepared = false;
    std::string profile; // the profile its profiled engines read (recorded from this trace)
    bool temp_profile = false;
};

// A design that is ranked: a vmatch engine (library calls, or hash-inl through
// vmatch_inline.h) or a peer (mpich, ob1, ucx and the ob1 and UCX designs inline).
struct Candidate {
    vmr::Engine en;        // label, spec (vm_wl_engine_spec adds nprocs and layout), kind
    std::string design;    // the design keys for the verdict (no layout, nprocs, rank)
    bool peer = false;     // a peer's design: the yardstick, never the spec to use
    bool dflt = false;     // the default engine (hash, and hash-inl through vmatch_inline.h)
    std::string user_prof; // --spec with profile=PATH: that path (%r: the rank)
    // Results.  Per repetition: the sum of the ranks' times (ms), NaN when not run.
    std::vector<double> total;
    std::vector<std::vector<double>> rank_ms; // [trace][repetition], ms
    uint64_t inspected = 0, searches = 0;     // over every rank, in the untimed pass
    uint64_t bytes_peak = 0;                  // largest over the ranks
    bool over_budget = false;                 // a repetition took over --budget: no more
    bool wrong = false;                       // a match differs from the reference's
    std::string error;                        // why it has no figure (empty: it has)
};

struct Options {
    std::vector<std::string> traces, specs;
    int reps = 7;
    double min_ms = 5;
    double budget_s = 20; // a candidate whose replays of a repetition take longer: no more
    std::string profiles; // --profiles PATTERN ("": temporary files)
    bool mpich = true, ucx = true; // --port
    std::string designs;           // --designs L1,L2: only these library designs ("": all)
};

// Read the traces (exit status 1 on failure, with the message in err): every file must be a
// trace with operations; they must agree on nprocs and layout where they declare them and
// name distinct ranks.  notes: what the output should say about them (cut traces, ...).
bool load_traces(const Options &o, std::vector<RankTrace> &tr, RunShape &shape,
                 std::vector<std::string> &notes, std::string &err);

// The candidates: the library designs, each --spec, hash-inl and the peers.  False with err
// when a --spec is refused (checked on rank 0's trace, in the run's shape; profiled ones with
// its profile, so after record_profiles).
bool make_candidates(const Options &o, const std::vector<RankTrace> &tr,
                     std::vector<Candidate> &cands, std::vector<std::string> &notes,
                     std::string &err);

// Whether a spec's policy reads a profile (pnp-static, cluster) and names none itself.
bool needs_profile(const std::string &spec);

// The path of rank r's profile from --profiles' pattern (%r: the rank).
std::string profile_path(const std::string &pattern, int64_t rank);
// Whether pattern is usable (no blank, no % but %r, %r present when ranks > 1); else why.
bool check_pattern(const std::string &pattern, size_t ranks, std::string &why);

// Record every rank's profile (into --profiles' pattern, or temporary files).  False with err.
bool record_profiles(const Options &o, std::vector<RankTrace> &tr, std::string &err);
// Remove the temporary profiles, free the traces and their preparations.
void release(std::vector<RankTrace> &tr);

// The reference outcomes and both preparations of every trace.  False with err ("FILE: ...").
bool prepare_traces(const RunShape &shape, std::vector<RankTrace> &tr, std::string &err);

// The untimed pass (outcomes against the reference, entries inspected, bytes), then reps
// timed repetitions, candidates in a new random order each time, each replaying every rank's
// trace for at least min_ms of CPU time per rank.  progress: a line per repetition to stderr.
void run_candidates(const Options &o, const RunShape &shape, std::vector<RankTrace> &tr,
                    std::vector<Candidate> &cands, bool progress);

} // namespace vrk
