// vmatch_rank.cc -- which matching design suits my application?  vmatch_rank replays the
// traces of one run (one per rank, recorded by the MPICH and UCX ports with
// MPIR_CVAR_CH4_VMATCH_TRACE_OUT / UCX_VMATCH_TRACE_OUT, or written by vmatch-replay --gen)
// on every vmatch design and on the peers' designs, ranks them by time and prints the spec
// to give the port.
//
//   vmatch_rank TRACE... [--reps N] [--min-ms MS] [--budget S] [--spec SPEC]...
//               [--profiles PATTERN] [--port mpich|ucx]
//
// Method (vmatch_report's, over the ranks of a run).  Every trace is replayed on the
// reference model (tests/ref.c) for the correct outcomes; every candidate then makes an
// untimed pass over every rank (its outcomes must equal the reference's, or it is marked
// WRONG and not ranked; entries inspected and bytes at the peak are sampled there).  In each
// timed repetition the candidates run in a new random order, each replaying every rank's
// trace until at least --min-ms of CPU time per rank are timed; a candidate's time in a
// repetition is the sum of its ranks' times.  Figures are medians over the repetitions; the
// ratio to the fastest peer is taken within each repetition, its spread is half the
// interquartile range of those ratios.  The profiled designs (pnp-static, cluster) read a
// profile recorded from the same rank's trace (profile.record=on, vmatch_profile_save).
// Every engine gets the run's nprocs and layout, the peers a vmb::Layout of its widths.
//
// Files: this one (options, the table, the verdict), rank_load.cc (the traces, the
// candidates), rank_run.cc (preparing, profiles, checking and timing); rank.h.
#include "cli.h"
#include "rank.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

using namespace vrk;
using vmr::fmt;
using vmr::pad;

namespace
{

void usage(FILE *f)
{
    fprintf(
        f,
        "usage: vmatch_rank TRACE... [--reps N] [--min-ms MS] [--budget S] [--spec SPEC]...\n"
        "                   [--profiles PATTERN] [--port mpich|ucx]\n"
        "Ranks vmatch's matching designs on the traces of one run (one file per rank) and\n"
        "prints the spec to give the MPI library's port.\n"
        "  TRACE         a trace file (docs/workloads.md, \"Traces\"): recorded by a port\n"
        "                (MPIR_CVAR_CH4_VMATCH_TRACE_OUT=PATTERN under MPICH,\n"
        "                UCX_VMATCH_TRACE_OUT=PATTERN under Open MPI over UCX; %%r: the rank)\n"
        "                or written by vmatch-replay --gen ... --write; all of one run: the\n"
        "                same nprocs and layout where they declare them, each of another\n"
        "                rank (its `rank` line, else its position among the TRACE arguments)\n"
        "  --reps N      timed repetitions, all candidates interleaved (default 7)\n"
        "  --min-ms MS   time at least MS of CPU per rank and repetition, replaying again\n"
        "                (default 5; 0: one replay)\n"
        "  --budget S    a candidate whose replays of every rank take longer than S seconds\n"
        "                in a repetition runs in no more repetitions (default 20)\n"
        "  --spec SPEC   one more vmatch design to rank (vmatch_create's spec; repeatable);\n"
        "                policy=pnp-static or cluster without profile= reads the profile\n"
        "                recorded from each rank's trace, profile=PATH (%%r: the rank) reads\n"
        "                PATH\n"
        "  --profiles PATTERN  write each rank's profile there (%%r: the rank, needed for "
        "more\n"
        "                than one trace; no other %%, no blanks); the profiled designs read\n"
        "                them, and the spec to use names profile=PATTERN\n"
        "  --port mpich|ucx  print the spec as MPIR_CVAR_CH4_VMATCH_SPEC (MPICH) or\n"
        "                UCX_VMATCH_SPEC (UCX) only (default: both)\n"
        "  --designs L1,L2  only these library designs (labels below; the peers and each\n"
        "                --spec stay)\n"
        "Candidates: the library designs hash (policy=hash storage=llv, the default engine),\n"
        "hash-inl (the same through vmatch_inline.h, as the ports call it), single over ll,\n"
        "lla and llv, pnp, pnp-static and cluster (profiled), unified, each --spec; the "
        "peers:\n"
        "mpich, ob1 and ucx (MPICH's, Open MPI ob1's and UCX's designs, called per\n"
        "operation), ob1-inl and ucx-inl (compiled into the replay loop), and ob1-compact\n"
        "and ucx-compact (their algorithms with compact pooled nodes, in the loop).\n"
        "Output: a table sorted by the total time (the sum of the ranks' times, median over\n"
        "the repetitions, ±half the interquartile range), the ratio to the fastest peer\n"
        "within each repetition, the slowest rank, entries inspected per search, bytes at\n"
        "the peak (largest rank) and whether every match equals the reference model's\n"
        "(WRONG: never ranked); then the fastest design and the spec to use (design keys\n"
        "only: MPICH sets layout, nprocs and rank; UCX's line adds layout=ompi-ucx\n"
        "nprocs=N for a source-aware design on traces of Open MPI's layout, 20 20 24), or\n"
        "the default when it is within the spread of the fastest.\n"
        "Exit status: 0 ranked; 1 bad usage or input (an unreadable, malformed or empty\n"
        "trace, traces of different runs or of one rank, a --spec vmatch refuses, a\n"
        "--profiles pattern that cannot be used or written); 2 ranked, but a candidate\n"
        "matched wrongly or failed (it is left out), or no vmatch design could be ranked.\n"
        "Environment: TMPDIR, where the profiles go without --profiles (removed at exit).\n");
}

// Options from the command line; false with why (naming the option).  help: --help seen.
bool parse_args(int argc, char **argv, Options &o, bool &help, std::string &why)
{
    static const char *const kValued[] = {"--reps",     "--min-ms",  "--budget", "--spec",
                                          "--profiles", "--designs", "--port"};
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        if (a == "--help" || a == "-h") {
            help = true;
            return true;
        }
        if (a.rfind("--", 0) != 0 || a == "-") {
            o.traces.push_back(a);
            continue;
        }
        bool valued = false;
        for (const char *k : kValued)
            valued |= a == k;
        if (!valued) {
            why = "unknown option " + a;
            return false;
        }
        if (i + 1 >= argc) {
            why = a + " needs a value";
            return false;
        }
        const char *val = argv[++i];
        long n;
        double v;
        if (a == "--reps" && vmcli::whole(val, 1, 1000, n)) {
            o.reps = (int)n;
        } else if (a == "--min-ms" && vmcli::real(val, 0, 60000, v)) {
            o.min_ms = v;
        } else if (a == "--budget" && vmcli::real(val, 1e-3, 1e6, v)) {
            o.budget_s = v;
        } else if (a == "--spec" || a == "--profiles" || a == "--designs") {
            if (!*val && a != "--spec") { // --spec "": the default engine
                why = a + " needs a value, not an empty one";
                return false;
            }
            if (a == "--spec")
                o.specs.push_back(val);
            else
                (a == "--profiles" ? o.profiles : o.designs) = val;
        } else if (a == "--port" && (!strcmp(val, "mpich") || !strcmp(val, "ucx"))) {
            o.mpich = !strcmp(val, "mpich");
            o.ucx = !o.mpich;
        } else {
            why = fmt("%s '%s': %s", a.c_str(), val,
                      a == "--reps"     ? "a whole number from 1 to 1000"
                      : a == "--min-ms" ? "a number of milliseconds from 0 to 60000"
                      : a == "--budget" ? "a number of seconds from 0.001 to 1000000"
                                        : "mpich or ucx");
            return false;
        }
    }
    if (o.traces.empty()) {
        why = "no trace given";
        return false;
    }
    return true;
}

// ---- figures ----

double med(const std::vector<double> &v)
{
    std::vector<double> ok;
    for (double x : v)
        if (!std::isnan(x))
            ok.push_back(x);
    return ok.empty() ? NAN : vmb::median(ok);
}

// Half the interquartile range of v in percent of its median.
double spread(const std::vector<double> &v)
{
    std::vector<double> ok;
    for (double x : v)
        if (!std::isnan(x))
            ok.push_back(x);
    double m, q1, q3;
    return vmb::quartiles(ok, m, q1, q3) && m > 0 ? 100 * (q3 - q1) / 2 / m : NAN;
}

// a / b within each repetition: median and half the interquartile range (percent); false
// when no repetition has both.
bool ratio(const Candidate &a, const Candidate &b, double &m, double &sp)
{
    double q1, q3;
    if (!vmr::vec_ratio(a.total, b.total, m, q1, q3))
        return false;
    sp = m > 0 ? 100 * (q3 - q1) / 2 / m : 0;
    return true;
}

int timed_reps(const Candidate &c)
{
    int n = 0;
    for (double x : c.total)
        n += !std::isnan(x);
    return n;
}

bool ranked(const Candidate &c)
{
    return c.error.empty() && !std::isnan(med(c.total));
}

// A time with about four significant digits.
std::string num(double v)
{
    return fmt(v >= 1000 ? "%.0f" : v >= 100 ? "%.1f" : v >= 10 ? "%.2f" : "%.3f", v);
}

// The slowest rank by its median time: "0.123 (rank 3)".
std::string slowest(const Candidate &c, const std::vector<RankTrace> &tr, double unit)
{
    double worst = NAN;
    size_t at = 0;
    for (size_t k = 0; k < tr.size(); k++) {
        double m = med(c.rank_ms[k]);
        if (!std::isnan(m) && (std::isnan(worst) || m > worst))
            worst = m, at = k;
    }
    return std::isnan(worst) ? "-"
                             : num(worst * unit) + fmt(" (rank %lld)", (long long)tr[at].rank);
}

// The fastest ranked candidate among peers (peer) or vmatch designs (!peer), or npos.
size_t fastest(const std::vector<Candidate> &c, bool peer)
{
    size_t best = (size_t)-1;
    for (size_t i = 0; i < c.size(); i++)
        if (c[i].peer == peer && ranked(c[i]) &&
            (best == (size_t)-1 || med(c[i].total) < med(c[best].total)))
            best = i;
    return best;
}

std::string ranks_text(const std::vector<RankTrace> &tr)
{
    std::vector<int64_t> r;
    for (const RankTrace &t : tr)
        r.push_back(t.rank);
    std::sort(r.begin(), r.end());
    if (r.size() == 1)
        return fmt("rank %lld", (long long)r[0]);
    bool run = r.back() - r.front() + 1 == (int64_t)r.size();
    return run ? fmt("ranks %lld-%lld", (long long)r.front(), (long long)r.back())
               : fmt("%zu ranks", r.size());
}

// ---- output ----

void print_table(const Options &o, const RunShape &shape, const std::vector<RankTrace> &tr,
                 const std::vector<Candidate> &cands, size_t peer)
{
    size_t ops = 0;
    for (const RankTrace &r : tr)
        ops += r.t.n;
    printf("vmatch_rank: %zu trace%s (%s of %u processes), %zu operations, layout %u/%u/%u "
           "(ctx/src/tag bits%s)\n",
           tr.size(), tr.size() == 1 ? "" : "s", ranks_text(tr).c_str(), shape.nprocs, ops,
           shape.layout.ctx_bits, shape.layout.src_bits, shape.layout.tag_bits,
           shape.layout_declared ? "" : ", the default");
    std::vector<size_t> idx(cands.size());
    for (size_t i = 0; i < idx.size(); i++)
        idx[i] = i;
    std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) {
        if (ranked(cands[a]) != ranked(cands[b]))
            return ranked(cands[a]);
        return ranked(cands[a]) && med(cands[a].total) < med(cands[b].total);
    });
    // One unit for the table: microseconds when the fastest total is below a millisecond.
    double least = NAN;
    for (const Candidate &c : cands)
        if (ranked(c) && !(med(c.total) >= least))
            least = med(c.total);
    double unit = least < 1 ? 1e3 : 1;
    printf("%d repetition%s, at least %g ms of CPU per rank in each; times in %s, summed over "
           "the ranks\n\n",
           o.reps, o.reps == 1 ? "" : "s", o.min_ms, unit > 1 ? "us" : "ms");
    std::string vs = peer == (size_t)-1 ? "/ peer" : "/ " + cands[peer].en.label;
    printf("%3s  %-12s %-6s %9s %s %11s %17s %9s %9s  %s\n", "#", "design", "kind", "total",
           pad("±", 5).c_str(), vs.c_str(), "slowest rank", "insp/srch", "peak B", "matches");
    int n = 0;
    for (size_t i : idx) {
        const Candidate &c = cands[i];
        bool ok = ranked(c);
        double m, sp;
        std::string r = "-";
        if (ok && peer != (size_t)-1 && ratio(c, cands[peer], m, sp))
            r = fmt("%.2f±%.0f%%", m, sp);
        std::string state = c.wrong            ? "WRONG: " + c.error
                            : !c.error.empty() ? "error: " + c.error
                            : !ok              ? "not timed"
                                               : "ok";
        if (ok && c.over_budget)
            state +=
                fmt(" (timed in %d of %d repetitions: over --budget)", timed_reps(c), o.reps);
        printf("%3s  %-12s %-6s %9s %5s %11s %17s %9s %9s  %s\n",
               ok ? std::to_string(++n).c_str() : "-", c.en.label.c_str(),
               c.peer ? "peer" : "vmatch", ok ? num(med(c.total) * unit).c_str() : "-",
               ok ? pad(fmt("%.0f%%", spread(c.total)), 6).c_str() : "-", pad(r, 11).c_str(),
               ok ? slowest(c, tr, unit).c_str() : "-",
               ok && c.searches ? fmt("%.2f", (double)c.inspected / (double)c.searches).c_str()
                                : "-",
               ok ? std::to_string(c.bytes_peak).c_str() : "-", state.c_str());
    }
    printf("\n");
    for (const Candidate &c : cands)
        printf("  %-12s %s\n", c.en.label.c_str(),
               c.peer ? c.en.resolved.c_str()
                      : (c.design + (c.en.profiled ? " (reads a profile of each rank)"
                                     : c.en.inl    ? " through vmatch_inline.h, as the ports "
                                                     "call it"
                                     : c.dflt      ? " (the default engine)"
                                                   : ""))
                            .c_str());
}

// pattern as an absolute path: the application reads it from its own working directory.
std::string absolute(const std::string &pattern)
{
    char cwd[4096];
    if (pattern.empty() || pattern[0] == '/' || !getcwd(cwd, sizeof cwd))
        return pattern;
    return std::string(cwd) + "/" + pattern;
}

// The design keys to print for c: its design, and profile= for a profiled one.
std::string spec_to_use(const Options &o, const Candidate &c)
{
    if (!c.en.profiled)
        return c.design;
    if (!c.user_prof.empty())
        return c.design + " profile=" + absolute(c.user_prof);
    // Profiles vmatch_rank wrote name it as their program: the application takes them with
    // profile.program=any.
    return c.design + " profile=" + (o.profiles.empty() ? "PATTERN" : absolute(o.profiles)) +
           (o.profiles.empty() ? "" : " profile.program=any");
}

// The policy of a spec's words (the last policy=), or "".
std::string policy_of(const std::string &spec)
{
    size_t at = (" " + spec).rfind(" policy=");
    return at == std::string::npos ? "" : spec.substr(at + 7, spec.find(' ', at + 7) - at - 7);
}

void print_verdict(const Options &o, const RunShape &shape, const std::vector<Candidate> &cands,
                   size_t peer)
{
    size_t win = fastest(cands, false);
    if (win == (size_t)-1) {
        printf("no vmatch design could be ranked\n");
        return;
    }
    const Candidate &w = cands[win];
    double m, sp;
    std::string vs = peer != (size_t)-1 && ratio(w, cands[peer], m, sp)
                         ? fmt(", %.2fx the fastest peer's time (%s) ±%.0f%%", m,
                               cands[peer].en.label.c_str(), sp)
                         : "";
    printf("fastest design: %s (%s)%s\n", w.en.label.c_str(), w.design.c_str(), vs.c_str());
    // The default design as the ports run it: the faster of its two forms (hash-inl is
    // what they call; hash, its library calls, is what other designs pay).
    const Candidate *use = &w, *d = nullptr;
    for (const Candidate &c : cands)
        if (c.dflt && ranked(c) && (!d || med(c.total) < med(d->total)))
            d = &c;
    if (!d) {
        printf("the default design (%s) has no figure\n", vmr::kHashSpec);
    } else if (d->design == w.design) {
        printf("the fastest is the default design: keep the default\n");
    } else if (ratio(*d, w, m, sp) && m * (1 - sp / 100) <= 1) {
        printf("the default (%s, %s) is within the spread of the fastest: %.2fx its time "
               "±%.0f%%: keep the default\n",
               d->en.label.c_str(), d->design.c_str(), m, sp);
        use = d;
    } else {
        printf("the default (%s, %s) takes %.2fx the fastest's time ±%.0f%%\n",
               d->en.label.c_str(), d->design.c_str(), m, sp);
    }
    std::string spec = spec_to_use(o, *use), pol = policy_of(use->design);
    // Under UCX the tags are opaque: a policy that reads the MPI source from them needs the
    // MPI library's layout and nprocs in UCX_VMATCH_SPEC, which the patched UCX refuses
    // such a policy without (docs/ucx.md).  Traces of Open MPI's pml/ucx packing (what the
    // UCX port records under Open MPI) name that layout; MPICH sets both itself.
    bool src_aware = pol != "" && pol != "hash" && pol != "single";
    bool ompi_ucx = src_aware && shape.layout_declared && shape.layout.ctx_bits == 20 &&
                    shape.layout.src_bits == 20 && shape.layout.tag_bits == 24;
    std::string ucx_spec =
        spec + (ompi_ucx ? fmt(" layout=ompi-ucx nprocs=%u", shape.nprocs) : "");
    printf("the spec to use:\n");
    if (o.mpich)
        printf("  MPIR_CVAR_CH4_VMATCH_SPEC=\"%s\"\n", spec.c_str());
    if (o.ucx)
        printf("  UCX_VMATCH_SPEC=\"%s\"\n", ucx_spec.c_str());
    if (use->en.profiled && o.profiles.empty() && use->user_prof.empty()) {
        std::string vars = o.mpich && o.ucx
                               ? "MPIR_CVAR_CH4_VMATCH_PROFILE_OUT=PATTERN (MPICH) "
                                 "or\nUCX_VMATCH_PROFILE_OUT=PATTERN (Open MPI over "
                                 "UCX)"
                           : o.mpich ? "MPIR_CVAR_CH4_VMATCH_PROFILE_OUT=PATTERN"
                                     : "UCX_VMATCH_PROFILE_OUT=PATTERN";
        printf("%s reads a profile of each rank: record them with vmatch_rank ... --profiles "
               "PATTERN (each\nrank's profile written from its trace; %%r: the rank), or in a "
               "run of the application\nwith %s; PATTERN then goes into profile= above\n",
               use->en.label.c_str(), vars.c_str());
    }
    if (o.ucx && ompi_ucx && !shape.nprocs_declared)
        printf("nprocs=%u in UCX_VMATCH_SPEC is the traces' largest source or rank + 1 (no "
               "trace declares\nnprocs): give the job's process count\n",
               shape.nprocs);
    else if (o.ucx && src_aware && !ompi_ucx)
        printf("under UCX, policy=%s reads the MPI source from the tag: the patched UCX also "
               "needs\nthe MPI library's layout (layout=ompi-ucx under Open MPI, "
               "layout=mpich-ucx under MPICH\nch4:ucx) and nprocs=%u in UCX_VMATCH_SPEC "
               "(docs/ucx.md); the traces' layout, %u/%u/%u,\nis not Open MPI's (20/20/24)\n",
               pol.c_str(), shape.nprocs, shape.layout.ctx_bits, shape.layout.src_bits,
               shape.layout.tag_bits);
}

} // namespace

int main(int argc, char **argv)
{
    Options o;
    bool help = false;
    std::string why;
    if (!parse_args(argc, argv, o, help, why)) {
        fprintf(stderr, "vmatch_rank: %s\n", why.c_str());
        usage(stderr);
        return 1;
    }
    if (help) {
        usage(stdout);
        return 0;
    }
    if (!o.profiles.empty() && !check_pattern(o.profiles, o.traces.size(), why)) {
        fprintf(stderr, "vmatch_rank: --profiles '%s': %s\n", o.profiles.c_str(), why.c_str());
        return 1;
    }
    std::vector<RankTrace> tr;
    std::vector<Candidate> cands;
    std::vector<std::string> notes;
    RunShape shape;
    bool ok = load_traces(o, tr, shape, notes, why) && prepare_traces(shape, tr, why) &&
              record_profiles(o, tr, why) && make_candidates(o, tr, cands, notes, why);
    if (!ok) {
        fprintf(stderr, "vmatch_rank: %s\n", why.c_str());
        release(tr);
        return 1;
    }
    run_candidates(o, shape, tr, cands, isatty(2));
    size_t peer = fastest(cands, true);
    print_table(o, shape, tr, cands, peer);
    printf("\n");
    for (const std::string &n : notes)
        printf("note: %s\n", n.c_str());
    if (!o.profiles.empty())
        printf("note: each rank's profile was written to %s (%%r: the rank)\n",
               o.profiles.c_str());
    print_verdict(o, shape, cands, peer);
    int rc = fastest(cands, false) == (size_t)-1 ? 2 : 0;
    for (const Candidate &c : cands)
        if (!c.error.empty())
            rc = 2;
    release(tr);
    return rc;
}
