// vmatch_report.cc -- the workload report of scripts/bench: every generated workload replayed
// on every library engine and every baseline, time per operation as a ratio to the
// MPICH-style baseline, bytes per queued entry, raw results as JSON and a plot; then the pnp
// section: partner / non-partner queues (policy=pnp, pnp-static) against the targets of
// their issue -- the hot-spot gather at P=2048, m=10 repeated 5 times (the FDS time steps)
// for several pnp.threshold / pnp.cap / pnp.move, its first iteration and the later ones
// timed apart; pnp / single on sparse and short-queue workloads; bytes and queues at N = 1024
// and 4096; then the tag-perf section: n receives with distinct tags matched in reverse
// order, n = 1 .. 8192, expected and unexpected, after UCX's test_ucp_tag_perf, and the
// growth of the time per doubling of n (report_tagperf.cc).
//
//   vmatch_report [--full] [--out DIR] [--reps N] [--only TEXT] [--engines L1,L2,...]
//                 [--no-pnp | --pnp-only] [--no-tagperf | --tagperf-only] [--log FILE]
//                 [--summary FILE]
//   vmatch_report --machine | --list
//
// Method.  Each workload is generated once (workloads/gen.h) and replayed first on the
// reference model (tests/ref.c) to get the correct outcome of every operation.  Each engine
// then makes an untimed pass that records its outcomes (they must equal the reference's,
// or its cells say WRONG) and samples its memory at the peak.  The timed repetitions follow:
// in each repetition the engines run in a fresh random order, each on a new instance, the
// same replay loop for all (workloads/replay.c), repeated until at least --min-ms have been
// timed.  Cells are medians over the repetitions; the ratio to mpich is taken within each
// repetition, so a noisy moment slows both sides, and the spread is the interquartile range
// of those per-repetition ratios.  A sweep of the hot-spot gather over P gives the plot.
// The pnp section runs the same way, with its own engines per part (see report_pnp.cc);
// its pnp-static engines read a profile recorded from the same workload just before.  A
// workload that repeats (iters=N) is timed in two parts per replay, its first iteration and
// the rest; there the slow yardstick may replay the first iteration alone and run in fewer
// repetitions than the others (the gather part does both; the table says so).
//
// Output.  Progress, the tables with their legends and the targets (one line each: the
// verdict, what is asked, the figure with its spread) go to stdout, or with --log to that
// file, the terminal then keeping a line per section and the bare tables.  --out DIR gets
// table.txt (the machine, the tables with their legends, the targets), results.json and
// the plot.  The exit status is 1 when a workload or a file failed or an engine matched
// wrongly, never because a target was missed.
//
// The headline (report_inline.cc) sets the default engine through vmatch_inline.h against
// the ob1 and UCX designs, all three compiled into the replay loop (the tables' baselines are
// called through a virtual call per operation), on the rows of the table and the gathers.
//
// Files: this one (options, main), report_common (what the parts share), report_run (the
// runs), report_inline (the inline contenders and the headline), report_workloads (the table),
// report_pnp and report_pnp_gather (the pnp section), report_tagperf (the tag-perf section),
// report_cluster and report_unified (the cluster and unified sections), report_parts (what the
// pnp, cluster and unified sections share), report_lean (the lean targets: small queues and
// lean calls, judged on the table and the pnp section), report_hash (the hash targets:
// policy=hash, judged on the table, the pnp section and the tag-perf section), report_files
// (results.json, the plot).
#include "report_sections.h"

#include "cli.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sys/stat.h>

using namespace vmr;

static void usage(FILE *f)
{
    fprintf(
        f,
        "usage: vmatch_report [--full] [--out DIR] [--reps N] [--min-ms MS] [--budget S]\n"
        "                     [--only TEXT] [--engines L1,L2,...] [--inline-spec SPEC]\n"
        "                     [--no-pnp | --pnp-only]\n"
        "                     [--no-tagperf | --tagperf-only] [--log FILE] [--summary FILE]\n"
        "                     [--traces DIR] [--no-traces | --traces-only]\n"
        "       vmatch_report --machine | --list\n"
        "  --full        the large sizes (slow: list designs take seconds per replay), and a\n"
        "                longer pnp section (one-shot gathers, more thresholds, pnp.move=off\n"
        "                at c=8, mpich over every iteration, N = 16384)\n"
        "  --out DIR     write results.json, table.txt, plot.dat and plot.gp there\n"
        "  --reps N      timed repetitions (default 7, --full 3; pnp section: its gathers 7,\n"
        "                mpich in 4 of them, --full 9; its short-queue part 15, --full 27;\n"
        "                given: N, and 3N for the short-queue part; tag-perf section 5,\n"
        "                --full 9, given: N)\n"
        "  --min-ms MS   time at least MS per repetition, replaying again (default 5)\n"
        "  --budget S    an engine whose replay takes longer gets one repetition\n"
        "  --only TEXT   only the workloads whose name contains TEXT (pnp section too; the\n"
        "                tag-perf section runs when \"tag-perf\" contains TEXT)\n"
        "  --engines L   only these columns (mpich is always kept; not the pnp and tag-perf\n"
        "                sections)\n"
        "  --inline-spec SPEC  hash-inl (the headline's vmatch column) is the engine of SPEC\n"
        "                through vmatch_inline.h instead of the default engine, as an MPI\n"
        "                library embedding vmatch with that spec (hash.load=50, say)\n"
        "  --no-pnp      leave out the pnp section; --pnp-only: run only the pnp section\n"
        "  --no-tagperf  leave out the tag-perf section; --tagperf-only: run only it\n"
        "  --no-cluster  leave out the cluster section (policy=cluster); --cluster-only:\n"
        "                run only it\n"
        "  --no-unified  leave out the unified section (policy=unified); --unified-only:\n"
        "                run only it\n"
        "  --no-memory   leave out the memory section (bytes created, at a burst's peak,\n"
        "                drained and after quiet traffic); --memory-only: run only it\n"
        "  --traces DIR  the headline's real-trace rows: each directory in DIR holding\n"
        "                trace.RANK.gz files (one per rank) is a row (default: the source\n"
        "                tree's workloads/traces); --no-traces: none; --traces-only: only\n"
        "                those rows\n"
        "  --log FILE    the progress of every workload and the tables with their legends go\n"
        "                to FILE; the terminal gets a line per section and the bare tables\n"
        "  --summary FILE  append the target lines (met / missed) to FILE instead of printing\n"
        "                them at the end\n"
        "The pnp section (after the workload table; about 30 s of CPU) compares policy=pnp\n"
        "and policy=pnp-static with single and the baselines: (a) the hot-spot gather at\n"
        "P=2048, m=10, repeated 5 times (iters=5), against mpich and single+llv for several\n"
        "pnp.threshold / pnp.cap / pnp.move, over all iterations and over the first alone\n"
        "and the later ones, with pnp.partners, pnp.levels (vmatch_stat), queues and which\n"
        "settings meet the target; mpich replays the first iteration alone, in 4 of the 7\n"
        "repetitions, so x mpich is a lower bound (--full: all iterations and repetitions);\n"
        "(b) sparse neighbour and short-queue workloads, pnp / single over ll, lla, llv;\n"
        "(c) bytes and queues at the peak of a gather with N = 1024 and 4096 peers\n"
        "pending, against the ob1- and UCX-style baselines.  hash joins (a) and (c).\n"
        "The tag-perf section (last; about 6 s of CPU), after UCX's test_ucp_tag_perf: for\n"
        "n = 1, 2, 4, ... 8192 distinct tags with full masks, (a) n receives posted, then n\n"
        "messages arriving in the reverse order, (b) n messages, then n receives in the\n"
        "reverse order; ns per match for hash, single+llv, ucx, ob1 and mpich, and the mean\n"
        "growth of the time per doubling of n for n >= 16.\n"
        "The headline (after the pnp section): hash-inl, the default engine through\n"
        "vmatch_inline.h, against the fastest of four peers compiled into the same loop:\n"
        "ob1-inl and ucx-inl (the ob1 and UCX designs with their request objects) and\n"
        "ob1-compact and ucx-compact (the same algorithms with compact pooled nodes); the\n"
        "faster of ob1-inl and ucx-inl is a second column.  Rows: the workload table (its\n"
        "queue-depth rows among them), the pnp gathers and the real traces (\"headline:\n"
        "...\" targets).\n"
        "The engine hash (policy=hash storage=llv) joins every section where this build has\n"
        "it; the hash targets (\"hash: ...\") are judged on it, or say \"not measured\".\n"
        "Environment: VMATCH_REPORT_SPECS='label=spec;...' adds library engines;\n"
        "TMPDIR: where pnp-static's recorded profiles are written (and removed).\n");
}

static bool make_dir(const std::string &d)
{
    if (mkdir(d.c_str(), 0755) == 0 || errno == EEXIST)
        return true;
    return false;
}

// Opens --log's file (append: scripts/bench gives the report folder's report.log).
static FILE *open_log(const char *path)
{
    FILE *f = fopen(path, "a");
    if (!f)
        fprintf(stderr, "vmatch_report: cannot open %s: %s\n", path, strerror(errno));
    return f;
}

// The sections --no-NAME leaves out and --NAME-only runs alone (without the workload table).
static const struct {
    const char *name;
    bool Options::*on;
} kSections[] = {{"pnp", &Options::pnp},         {"tagperf", &Options::tagperf},
                 {"cluster", &Options::cluster}, {"unified", &Options::unified},
                 {"memory", &Options::memory},   {"traces", &Options::trace_rows}};

// --no-NAME or --NAME-only of kSections: o set, true; else false.
static bool section_arg(const std::string &a, Options &o)
{
    for (const auto &s : kSections) {
        if (a == std::string("--no-") + s.name) {
            o.*s.on = false;
            return true;
        }
        if (a == std::string("--") + s.name + "-only") {
            o.main_suite = false;
            for (const auto &other : kSections)
                o.*other.on = (&other == &s);
            return true;
        }
    }
    return false;
}

// The value of a numeric option, or false with a message that names the option and its
// range (a value outside it is refused, not replaced by a default).
static bool numeric_arg(const std::string &a, const char *val, Options &o)
{
    long n;
    double x;
    if (a == "--reps" && vmcli::whole(val, 1, 1000, n)) {
        o.reps = (int)n;
        o.reps_given = true;
    } else if (a == "--min-ms" && vmcli::real(val, 0, 60000, x)) {
        o.min_ms = x;
    } else if (a == "--budget" && vmcli::real(val, 1e-3, 1e6, x)) {
        o.budget_s = x;
    } else {
        fprintf(stderr, "vmatch_report: %s '%s': %s\n", a.c_str(), val,
                a == "--reps"     ? "a whole number from 1 to 1000"
                : a == "--min-ms" ? "a number of milliseconds from 0 to 60000"
                                  : "a number of seconds from 0.001 to 1000000");
        return false;
    }
    return true;
}

// An option that takes a value: o set, or false with a message.
static bool value_arg(const std::string &a, const char *val, Options &o)
{
    if (a == "--reps" || a == "--min-ms" || a == "--budget")
        return numeric_arg(a, val, o);
    if (!*val) {
        fprintf(stderr, "vmatch_report: %s needs a value, not an empty one\n", a.c_str());
        return false;
    }
    if (a == "--out")
        o.out = val;
    else if (a == "--only")
        o.only = val;
    else if (a == "--traces")
        o.traces = val;
    else if (a == "--inline-spec")
        o.inline_spec = val;
    else if (a == "--engines")
        o.engines = val;
    else if (a == "--log")
        return (o.log = open_log(val)) != nullptr;
    else if (a == "--summary")
        o.summary = val;
    return true;
}

// Options from the command line; false (with a message naming the option) on a bad one.
// help: --help seen.
static bool parse_args(int argc, char **argv, Options &o, bool &help)
{
    static const char *const kValued[] = {"--out",     "--reps",   "--min-ms", "--budget",
                                          "--only",    "--traces", "--log",    "--inline-spec",
                                          "--engines", "--summary"};
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        if (section_arg(a, o))
            continue;
        bool valued = false;
        for (const char *v : kValued)
            valued |= a == v;
        if (valued) {
            if (i + 1 >= argc) {
                fprintf(stderr, "vmatch_report: %s needs a value\n", a.c_str());
                return false;
            }
            if (!value_arg(a, argv[++i], o))
                return false;
        } else if (a == "--full") {
            o.full = true;
        } else if (a == "--machine") {
            o.machine_only = true;
        } else if (a == "--list") {
            o.list = true;
        } else if (a == "--help" || a == "-h") {
            help = true;
        } else {
            fprintf(stderr, "vmatch_report: unknown option %s (vmatch_report --help)\n",
                    a.c_str());
            return false;
        }
    }
    if (!o.reps_given)
        o.reps = o.full ? 3 : 7;
    return true;
}

// Every label of --engines names an engine of this run, or one this build left out (a note
// says why); else false with a message.  A misspelt label would otherwise run the mpich
// column alone.
static bool check_engines(const Options &o, const std::vector<Engine> &engines,
                          const std::vector<std::string> &notes)
{
    std::string list = o.engines + ",";
    for (size_t at = 0, comma; (comma = list.find(',', at)) != std::string::npos;
         at = comma + 1) {
        std::string label = list.substr(at, comma - at);
        bool known = false;
        for (const Engine &e : engines)
            known |= e.label == label;
        for (const std::string &n : notes)
            known |= n.rfind(label + " ", 0) == 0;
        if (!known) {
            fprintf(stderr,
                    "vmatch_report: --engines '%s': no engine is called '%s' (vmatch_report "
                    "--list names them)\n",
                    o.engines.c_str(), label.c_str());
            return false;
        }
    }
    return true;
}

// The targets: appended to --summary's file, or printed at the end; in the log and in
// table.txt (tf, may be null) in any case.
static bool report_targets(const Options &o, const std::vector<Target> &targets, FILE *tf)
{
    if (targets.empty())
        return true;
    const char *head = "\ntargets (median ±half the interquartile range):\n";
    if (tf) {
        fputs(head, tf);
        print_targets(tf, targets);
    }
    if (o.log != stdout) {
        fputs(head, o.log);
        print_targets(o.log, targets);
    }
    if (o.summary.empty()) {
        if (o.log == stdout) {
            fputs(head, stdout);
            print_targets(stdout, targets);
        }
        return true;
    }
    FILE *f = fopen(o.summary.c_str(), "a");
    if (!f)
        return false;
    print_targets(f, targets);
    return fclose(f) == 0;
}

// Runs a section in three parts if o asks for it, prints its tables (the log with their
// legends, the terminal the bare tables when they differ) and, in the log, its time.
static Section run_section(const Options &o, bool on, const char *name,
                           Section (*run)(const Options &),
                           void (*print)(FILE *, const Section &, bool))
{
    if (!on)
        return Section();
    uint64_t w0 = vm_wl_now_ns(), c0 = vm_wl_cpu_ns();
    Section s = run(o);
    print(o.log, s, true);
    if (o.log != stdout)
        print(stdout, s, false);
    // CPU time too: on a shared machine the wall time says more about the neighbours.
    fprintf(o.log, "%s section time: %.0f s (%.0f s of CPU)\n", name,
            (double)(vm_wl_now_ns() - w0) / 1e9, (double)(vm_wl_cpu_ns() - c0) / 1e9);
    return s;
}

int main(int argc, char **argv)
{
    Options o;
    bool help = false;
    if (!parse_args(argc, argv, o, help))
        return 1;
    if (help) {
        usage(stdout);
        return 0;
    }
    std::string why;
    if (!set_inline_spec(o.inline_spec, why)) {
        fprintf(stderr, "vmatch_report: --inline-spec '%s': %s\n", o.inline_spec.c_str(),
                why.c_str());
        return 1;
    }
    Machine m = probe_machine();
    if (o.machine_only) {
        print_machine(stdout, m);
        return 0;
    }
    std::vector<std::string> notes;
    std::vector<Engine> engines = collect_engines(o, notes);
    if (!o.engines.empty() && !check_engines(o, engines, notes))
        return 1;
    bool have_yard = false;
    for (const Engine &e : engines)
        have_yard |= e.label == kYardstick;
    if (!have_yard) {
        fprintf(stderr, "vmatch_report: the %s baseline is missing\n", kYardstick);
        return 1;
    }
    std::vector<Job> work = workload_jobs(o);

    if (o.list) {
        print_engines(stdout, engines, "engines:\n");
        for (const std::string &n : notes)
            printf("  note: %s\n", n.c_str());
        printf("workloads:\n");
        for (const Job &j : work)
            printf("  %-30s %s\n", j.name.c_str(), j.spec.c_str());
        if (o.pnp)
            list_pnp_workloads(stdout, o);
        if (o.cluster)
            list_cluster_workloads(stdout, o);
        if (o.unified)
            list_unified_workloads(stdout, o);
        if (o.tagperf)
            printf("tag-perf section: n = 1, 2, 4, ... 8192 distinct tags, expected and "
                   "unexpected (vmatch_report --help)\n");
        return 0;
    }

    // With --log, everything goes to the log in full and the terminal gets the bare tables.
    bool brief = o.log != stdout;
    uint64_t t0 = vm_wl_now_ns();
    Report rep(o, engines);
    if (o.main_suite) {
        section_line(o,
                     fmt("== workload report (%s sizes, %d repetitions): %zu workloads x "
                         "%zu engines",
                         o.full ? "large" : "moderate", o.reps, work.size(), engines.size()));
        for (const std::string &n : notes)
            fprintf(o.log, "  note: %s\n", n.c_str());
        fflush(o.log);
        for (size_t i = 0; i < work.size(); i++)
            rep.run(work[i].name, work[i].spec, work[i].sweep, i + 1, work.size());
        print_tables(o.log, rep, true);
        if (brief) {
            print_tables(stdout, rep, false);
            std::string hn = hash_left_out_note();
            if (!hn.empty())
                printf("note: %s\n", hn.c_str());
        }
        for (const std::string &n : notes)
            fprintf(o.log, "note: %s\n", n.c_str());
        fprintf(o.log, "report time: %.0f s\n", (double)(vm_wl_now_ns() - t0) / 1e9);
    }
    Section pnp = run_section(o, o.pnp, "pnp", run_pnp_section, print_pnp_section);
    std::vector<JsonPart> parts;
    std::vector<Target> targets;
    if (o.pnp) {
        parts = {{"gather", pnp.a.get()}, {"sparse", pnp.b.get()}, {"memory", pnp.c.get()}};
        targets = pnp_targets(pnp);
    }
    // The headline: the workload table's rows and part (a) of the pnp section's, inline.
    const Report *main_rep = o.main_suite ? &rep : nullptr;
    const Section *pnp_sec = o.pnp ? &pnp : nullptr;
    TraceRows trace_rows;
    if (o.trace_rows)
        trace_rows = run_trace_rows(o);
    print_headline(o.log, main_rep, pnp_sec, &trace_rows, true);
    if (brief)
        print_headline(stdout, main_rep, pnp_sec, &trace_rows, false);
    std::vector<Target> head = headline_targets(main_rep, pnp_sec, &trace_rows);
    targets.insert(targets.begin(), head.begin(), head.end());
    TagPerf tp;
    if (o.tagperf &&
        (o.only.empty() || std::string("tag-perf").find(o.only) != std::string::npos)) {
        tp = run_tagperf(o);
        print_tagperf(o.log, tp, true);
        if (brief)
            print_tagperf(stdout, tp, false);
        fprintf(o.log, "tag-perf section time: %.0f s (%.0f s of CPU)\n", tp.wall_s, tp.cpu_s);
    }
    Section cl =
        run_section(o, o.cluster, "cluster", run_cluster_section, print_cluster_section);
    Section un =
        run_section(o, o.unified, "unified", run_unified_section, print_unified_section);
    MemorySection mem;
    if (o.memory) {
        mem = run_memory_section(o);
        print_memory_section(o.log, mem, true);
        if (brief)
            print_memory_section(stdout, mem, false);
    }
    std::vector<Target> lean =
        lean_targets(o.main_suite ? &rep : nullptr, o.pnp ? &pnp : nullptr);
    targets.insert(targets.end(), lean.begin(), lean.end());
    std::vector<Target> hash = hash_targets(o.main_suite ? &rep : nullptr,
                                            o.pnp ? &pnp : nullptr, tp.ran ? &tp : nullptr);
    targets.insert(targets.end(), hash.begin(), hash.end());
    if (o.cluster) {
        std::vector<Target> ct = cluster_targets(cl);
        targets.insert(targets.end(), ct.begin(), ct.end());
    }
    if (o.unified) {
        std::vector<Target> ut = unified_targets(un);
        targets.insert(targets.end(), ut.begin(), ut.end());
    }
    std::vector<Target> mt = memory_targets(mem);
    targets.insert(targets.end(), mt.begin(), mt.end());
    fflush(stdout);
    FILE *tf = nullptr;
    if (!o.out.empty()) {
        if (!make_dir(o.out)) {
            fprintf(stderr, "vmatch_report: cannot create %s: %s\n", o.out.c_str(),
                    strerror(errno));
            return 1;
        }
        tf = fopen((o.out + "/table.txt").c_str(), "w");
        bool plot = false;
        for (const Row &r : rep.rows())
            plot |= r.sweep;
        if (tf) {
            print_machine(tf, m);
            if (o.main_suite)
                print_tables(tf, rep, true);
            for (const std::string &n : notes)
                fprintf(tf, "note: %s\n", n.c_str());
            if (o.pnp)
                print_pnp_section(tf, pnp, true);
            print_headline(tf, main_rep, pnp_sec, &trace_rows, true);
            if (tp.ran)
                print_tagperf(tf, tp, true);
            if (o.cluster)
                print_cluster_section(tf, cl, true);
            if (o.unified)
                print_unified_section(tf, un, true);
            print_memory_section(tf, mem, true);
        }
        if (!tf || !write_json(o.out + "/results.json", rep, m, o, notes, parts, &tp) ||
            (plot && !write_plot(o.out, rep, m))) {
            fprintf(stderr, "vmatch_report: cannot write into %s: %s\n", o.out.c_str(),
                    strerror(errno));
            return 1;
        }
    }
    bool written = report_targets(o, targets, tf);
    if (!written)
        fprintf(stderr, "vmatch_report: cannot write %s: %s\n", o.summary.c_str(),
                strerror(errno));
    if (tf && fclose(tf) != 0) {
        fprintf(stderr, "vmatch_report: cannot write %s/table.txt\n", o.out.c_str());
        written = false;
    }
    if (o.log != stdout)
        fclose(o.log);
    bool wrong = false, failed = rep.failed() || !written;
    std::vector<const Report *> all = {&rep};
    for (const Section *s : {&pnp, &cl, &un})
        for (const Report *r : s->parts())
            if (r) // a section not run
                all.push_back(r);
    for (const Report *r : all) {
        failed |= r->failed();
        for (const Row &row : r->rows())
            for (const Cell &c : row.cells)
                wrong |= c.wrong;
    }
    size_t rows = trace_rows.rows.size() + (tp.ran ? 1 : 0);
    for (const Report *r : all)
        rows += r->rows().size();
    if (!o.only.empty() && rows == 0) {
        // The memory section takes no --only; every other section ran no row.
        fprintf(stderr,
                "vmatch_report: --only '%s': no workload's name contains it (vmatch_report "
                "--list names them)\n",
                o.only.c_str());
        failed = true;
    }
    for (const Row &row : trace_rows.rows)
        for (const Cell &c : row.cells)
            wrong |= c.wrong;
    for (const MemRow &row : mem.rows)
        for (const MemCell &c : row.cells)
            wrong |= c.wrong;
    for (const TagPerfEngine &te : tp.engines)
        wrong |= !te.error.empty(); // a wrong match or a failed call
    return failed || wrong ? 1 : 0;
}
