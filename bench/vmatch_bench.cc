// vmatch_bench.cc -- search benchmarks of the vmatch storages and kernels (Google Benchmark).
//
// queue/<label>/<side>/<order>/<L>
//   The three search orders of section 6.4.3 of the Ghazimirsaeed thesis: the match is at the
//   head (forward), in the middle (middle) or at the tail (reverse) of a queue kept at length
//   L, on the posted-receive queue (prq) and on the unexpected-message queue (umq).  One
//   iteration is one match plus the re-append that keeps the length:
//     prq: post L exact receives (tags 0..L-1); each iteration a message arrives for the
//          target receive (removing it) and the same receive is posted again (tail).
//     umq: L messages arrive (tags 0..L-1); each iteration a receive is posted for the target
//          message (removing it) and the same message arrives again (PRQ empty: UMQ tail).
// wild/<label>/<side>/<L>
//   Reverse search with wildcards, after the thesis's wildcard experiment (Fig. 6.8): 50% of
//   the receives are MPI_ANY_TAG and 10% MPI_ANY_SOURCE.
//     prq: of the L posted receives, counted back from the tail, 4 in 10 are exact (source
//          0), 5 are ANY_TAG from other sources, 1 is ANY_SOURCE with a tag no message
//          carries; the message for the tail receive must pass all of them.
//     umq: L messages from distinct sources with distinct tags; the receive for the tail
//          message is ANY_TAG (its source), ANY_SOURCE (its tag) or exact, in that 5:1:4 mix.
// probe/<label>/umq/<L>
//   Search time alone: L messages queued (tags 0..L-1); each iteration probes (MPI_Iprobe,
//   nothing removed) for the tail message.  The queue never changes.
// stream/<bytes>
//   The memory-bandwidth reference: a plain vector read (512-bit loads when the CPU has
//   AVX-512F, else 256-bit) of a buffer of that many bytes, as many bytes as the llv search of
//   a row reads (llv_search_bytes); the table divides the row's time by it.
//
// Every match is checked against the expected request or message; a wrong answer stops the
// benchmark with an error, so a wrong engine is never timed.  The timed loops are in
// bench_rows.cc; this file picks the engines and rows, registers and runs them.
//
// Engines: kEngines (ll, lla, llv with each kernel; a kernel this CPU lacks is left out and
// the table says so; hash, policy=hash over llv, where the build has it), the fuzzy512 baseline
// (bench/baseline_fuzzy.cc) on every row, the MPICH-, ob1- and UCX-style baselines
// (bench/baseline_*.cc) on the queue/ rows, and the engines of --vmatch_specs /
// VMATCH_BENCH_SPECS.
//
// Rows and repetitions.  The default grid runs middle and forward searches at fewer lengths
// than reverse ones.  With up to 9 repetitions (scripts/bench's default) every row gets them
// all, about a minute and a half on a 2-core machine.  With more (scripts/bench --full: 25),
// only the rows the targets are judged on get every repetition -- forward 1 and 8, reverse
// 4096 and 32768, probe 4096 and 32768, the wildcard mix at 4096, for ll, the fastest llv
// kernel and fuzzy, forward 1 and 8 for every baseline, reverse 32768 for hash and ucx, and
// their stream references -- and the others a third (at least 9), which keeps the run near
// 3 minutes.  --vmatch_rows=full runs every row at every length
// with every repetition.
//
// Targets: with --vmatch_table, after the table, each target of llv (its issue) is judged on
// these rows, one line each: the ratio of the row medians, the range between the quartiles,
// and met or missed (bench_table.cc lists them; the table itself is made there too);
// the lean target: llv at forward 1 and 8 against the fastest baseline of each row; and the
// hash target: hash against ucx at reverse 32768 ("not measured" where the build lacks hash).
//
// Counters: insp/match, entries compared per iteration (vmatch_stats inspected; both calls
// of an iteration count their searches, the re-append searches an empty queue);
// bytes/entry, bytes held / queued entries at the end of the run; net_bytes/entry, the same
// without the bytes of the empty engine.
//
// Flags of this program (the rest go to Google Benchmark, see --help):
//   --vmatch_table            print a table at the end (with repetitions the console then
//                             shows only the aggregates; the table and --benchmark_out
//                             still get every repetition)
//   --vmatch_specs=L=S;L=S    extra engines, label=spec pairs (also VMATCH_BENCH_SPECS)
//   --vmatch_baseline=LABEL   the engine the ratios compare against (default ll)
//   --vmatch_rows=default|full  which rows (see above)
//   --vmatch_lengths=N,N,...  queue lengths of every row, instead of the grid's
//   --vmatch_log=FILE         with --vmatch_table: Google Benchmark's console output and
//                             the table go to FILE (appended); the terminal gets a compact
//                             table, a line per row, PRQ and UMQ side by side per engine
//   --vmatch_summary=FILE     append the lines of the targets (met / missed) to FILE
//                             instead of printing them after the table

#include "baseline.h"
#include "bench_rows.h"
#include "bench_table.h"
#include "vmatch.h"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <ostream>
#include <string>
#include <unistd.h>
#include <vector>

using namespace vmb;

namespace
{

// The engines benchmarked (bench_rows.h).  Add a row here to benchmark a new storage.
const Engine kEngines[] = {
    {"ll", "policy=single storage=ll"},
    {"lla", "policy=single storage=lla"},
    {"llv-avx512", "policy=single storage=llv simd=avx512"},
    {"llv-avx2", "policy=single storage=llv simd=avx2"},
    {"llv-scalar", "policy=single storage=llv simd=scalar"},
    // The hashed vector queues; left out, with a note, where the build lacks them.
    {"hash", "policy=hash storage=llv"},
};
// The baselines, from vmb::baselines(): fuzzy on every row; mpich, ob1 and ucx on the three
// search orders only (the lean target judges llv against the fastest baseline at forward 1
// and 8).
struct BaselineRows {
    const char *name;
    bool orders_only;
};
const BaselineRows kBaselines[] = {
    {"fuzzy", false}, {"mpich", true}, {"ob1", true}, {"ucx", true}};

// The default grid: lengths per order (reverse is the long-queue case of every target).
const std::vector<uint64_t> kForwardLengths = {1, 8, 64, 4096};
const std::vector<uint64_t> kMiddleLengths = {64, 4096, 32768};
const std::vector<uint64_t> kReverseLengths = {1, 8, 64, 512, 4096, 32768, 65536};
const std::vector<uint64_t> kWildLengths = {64, 4096, 32768};
const std::vector<uint64_t> kProbeLengths = {64, 4096, 32768, 65536};
const std::vector<uint64_t> kFullLengths = {1, 8, 64, 512, 4096, 32768, 65536};

// "label=spec;label=spec" -> engines.  Returns false with a message on a bad entry.
bool parse_specs(const char *text, std::vector<Engine> &out, std::string &err)
{
    std::string s = text;
    size_t pos = 0;
    while (pos <= s.size()) {
        size_t end = s.find(';', pos);
        if (end == std::string::npos)
            end = s.size();
        std::string item = s.substr(pos, end - pos);
        pos = end + 1;
        size_t b = item.find_first_not_of(" \t"), e = item.find_last_not_of(" \t");
        if (b == std::string::npos)
            continue;
        item = item.substr(b, e - b + 1);
        size_t eq = item.find('=');
        std::string label = item.substr(0, eq);
        if (eq == std::string::npos || label.empty() ||
            label.find_first_of("/ \t") != std::string::npos) {
            err = "bad engine '" + item + "': want label=spec, label without '/' or blanks";
            return false;
        }
        out.push_back({label, item.substr(eq + 1)});
    }
    return true;
}

// "1,8,64" -> lengths.  False on anything else.
bool parse_lengths(const char *text, std::vector<uint64_t> &out)
{
    out.clear();
    for (const char *p = text; *p;) {
        char *end;
        unsigned long long v = strtoull(p, &end, 10);
        if (end == p || v == 0 || v > (1u << 20) || (*end && *end != ','))
            return false;
        out.push_back(v);
        p = *end ? end + 1 : end;
    }
    return !out.empty();
}

void usage()
{
    printf(
        "vmatch_bench flags (the others go to Google Benchmark):\n"
        "  --vmatch_table             print a table at the end (the console then shows\n"
        "                             only the aggregates)\n"
        "  --vmatch_specs=L=S;L=S     extra engines as label=spec pairs (also the\n"
        "                             environment variable VMATCH_BENCH_SPECS)\n"
        "  --vmatch_baseline=LABEL    engine the table's ratios compare against (default "
        "ll)\n"
        "  --vmatch_rows=default|full default: above 9 repetitions, only the target rows\n"
        "                             get them all; full: every row and length, all\n"
        "  --vmatch_lengths=N,N,...   queue lengths of every row\n"
        "  --vmatch_log=FILE          with --vmatch_table: the console output and the table\n"
        "                             go to FILE, the terminal gets a compact table\n"
        "  --vmatch_summary=FILE      append the target lines (met / missed) to FILE\n\n");
}

// What gets registered and how often it runs.
struct Plan {
    bool full = false;
    std::vector<uint64_t> lengths; // --vmatch_lengths, empty: the grid
    int reps = 1;                  // --benchmark_repetitions
    std::string fast_llv;          // the fastest llv kernel row available ("" if none)

    const std::vector<uint64_t> &lengths_of(Kind k, Order o) const
    {
        if (!lengths.empty())
            return lengths;
        if (full)
            return kFullLengths;
        if (k == kWild)
            return kWildLengths;
        if (k == kProbe)
            return kProbeLengths;
        return o == kForward  ? kForwardLengths
               : o == kMiddle ? kMiddleLengths
                              : kReverseLengths;
    }

    // The rows the targets are judged on run every repetition; above 9, the rest a third
    // (0: the command line's count).  base: a baseline's row.
    int reps_of(const std::string &label, bool base, Kind k, Order o, uint64_t len) const
    {
        if (full || reps <= 9)
            return 0;
        bool judged = label == "ll" || label == fast_llv || base || label == "hash";
        bool row = k == kWild      ? len == 4096
                   : k == kProbe   ? len == 4096 || len == 32768
                   : o == kForward ? len == 1 || len == 8
                   : o == kReverse ? len == 4096 || len == 32768
                                   : false;
        // Baselines: every one at forward 1 and 8 (the lean target), fuzzy also at reverse
        // 32768, on the wildcard mix and on the probe rows, ucx and hash at reverse 32768 (the
        // hash target).
        if (base && k == kQueue)
            row = (o == kForward && (len == 1 || len == 8)) ||
                  ((label == "fuzzy" || label == "ucx") && o == kReverse && len == 32768);
        else if (base)
            row = row && label == "fuzzy";
        else if (label == "hash")
            row = k == kQueue && o == kReverse && len == 32768;
        return judged && row ? 0 : std::max(9, reps / 3);
    }
};

// The value of --benchmark_repetitions on the command line (the last one), or 1.
int repetitions_flag(int argc, char **argv)
{
    int reps = 1;
    for (int i = 1; i < argc; i++)
        if (!strncmp(argv[i], "--benchmark_repetitions=", 24))
            reps = atoi(argv[i] + 24);
    return std::max(reps, 1);
}

void add_row(const Engine *eng, Kind k, Side s, Order o, uint64_t len, int reps,
             uint64_t stream)
{
    std::string label = eng ? eng->label : "";
    std::string name = bench_name(k, label, s, o, len);
    if (g_row_of.count(name))
        return;
    g_row_of[name] = g_rows.size();
    Row row;
    row.label = label;
    row.name = name;
    row.kind = k;
    row.side = s;
    row.order = o;
    row.len = len;
    row.stream = stream;
    g_rows.push_back(row);
    benchmark::internal::Benchmark *b;
    if (k == kStream) {
        b = benchmark::RegisterBenchmark(
            name.c_str(), [len](benchmark::State &st) { bench_stream(st, len); });
    } else {
        b = benchmark::RegisterBenchmark(name.c_str(),
                                         [e = *eng, k, s, o, len](benchmark::State &st) {
                                             bench_engine(st, e, k, s, o, len);
                                         });
    }
    b->Unit(benchmark::kNanosecond)->ComputeStatistics("min", [](const std::vector<double> &v) {
        return min_of(v);
    });
    if (reps)
        b->Repetitions(reps);
}

} // namespace

int main(int argc, char **argv)
{
    bool table = false;
    std::string err, log;
    TableOptions topt;
    Plan plan;
    std::vector<Engine> engines(std::begin(kEngines), std::end(kEngines));
    for (const BaselineRows &br : kBaselines)
        for (const vmb::BaselineInfo &bi : vmb::baselines())
            if (!strcmp(bi.name, br.name))
                engines.push_back({bi.name, "", &bi, br.orders_only});
    const char *env = getenv("VMATCH_BENCH_SPECS");
    if (env && !parse_specs(env, engines, err)) {
        fprintf(stderr, "vmatch_bench: VMATCH_BENCH_SPECS: %s\n", err.c_str());
        return 1;
    }
    plan.reps = repetitions_flag(argc, argv);
    int n = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--vmatch_table")) {
            table = true;
        } else if (!strncmp(a, "--vmatch_specs=", 15)) {
            if (!parse_specs(a + 15, engines, err)) {
                fprintf(stderr, "vmatch_bench: --vmatch_specs: %s\n", err.c_str());
                return 1;
            }
        } else if (!strncmp(a, "--vmatch_baseline=", 18)) {
            topt.baseline = a + 18;
        } else if (!strncmp(a, "--vmatch_log=", 13)) {
            log = a + 13;
        } else if (!strncmp(a, "--vmatch_summary=", 17)) {
            topt.summary = a + 17;
        } else if (!strncmp(a, "--vmatch_rows=", 14)) {
            plan.full = !strcmp(a + 14, "full");
            if (!plan.full && strcmp(a + 14, "default")) {
                fprintf(stderr, "vmatch_bench: --vmatch_rows: default or full\n");
                return 1;
            }
        } else if (!strncmp(a, "--vmatch_lengths=", 17)) {
            if (!parse_lengths(a + 17, plan.lengths)) {
                fprintf(stderr,
                        "vmatch_bench: --vmatch_lengths: numbers 1 .. 2^20, by commas\n");
                return 1;
            }
        } else {
            if (!strcmp(a, "--help"))
                usage();
            argv[n++] = argv[i];
        }
    }
    argc = n;
    argv[argc] = nullptr;

    for (size_t i = 0; i < engines.size(); i++)
        for (size_t j = 0; j < i; j++)
            if (engines[i].label == engines[j].label) {
                fprintf(stderr, "vmatch_bench: engine label '%s' given twice\n",
                        engines[i].label.c_str());
                return 1;
            }

    // An engine this build or machine cannot make is left out, with a note.
    std::vector<const Engine *> usable;
    for (const Engine &en : engines) {
        if (en.base) {
            g_described.push_back({en.label, std::string("baseline: ") + en.base->models});
            usable.push_back(&en);
            continue;
        }
        vmatch_engine_t *e = nullptr;
        int rc = vmatch_create(en.spec.c_str(), &e);
        if (rc < 0) {
            std::string why = error_text(("vmatch_create(\"" + en.spec + "\")").c_str(), rc);
            fprintf(stderr, "vmatch_bench: %s left out: %s\n", en.label.c_str(), why.c_str());
            g_described.push_back({en.label, "left out: " + why});
            continue;
        }
        g_described.push_back({en.label, vmatch_describe(e)});
        if (plan.fast_llv.empty() && en.label.rfind("llv-", 0) == 0)
            plan.fast_llv = en.label; // kEngines lists the kernels fastest first
        vmatch_destroy(e);
        usable.push_back(&en);
    }

    for (const Engine *en : usable) {
        bool llv = en->label.rfind("llv", 0) == 0;
        // The rows of one kind, side and order at the plan's lengths; llv's reverse searches
        // of 64 entries or more with the bytes they read (for the stream reference).
        auto rows = [&](Kind kind, Side s, Order o) {
            for (uint64_t len : plan.lengths_of(kind, o))
                add_row(en, kind, s, o, len, plan.reps_of(en->label, en->base, kind, o, len),
                        llv && o == kReverse && len >= 64 ? llv_search_bytes(kind, s, len) : 0);
        };
        for (Side s : {kPrq, kUmq}) {
            for (Order o : {kForward, kMiddle, kReverse})
                rows(kQueue, s, o);
            if (!en->orders_only)
                rows(kWild, s, kReverse);
        }
        if (!en->orders_only)
            rows(kProbe, kUmq, kReverse);
    }
    // The stream references the rows asked for; those of judged rows run every repetition.
    std::map<uint64_t, int> streams;
    for (const Row &r : g_rows)
        if (r.stream) {
            int reps = plan.reps_of(r.label, false, r.kind, r.order, r.len);
            auto it = streams.find(r.stream);
            streams[r.stream] = it == streams.end() ? reps : std::min(it->second, reps);
        }
    for (const auto &st : streams)
        add_row(nullptr, kStream, kPrq, kReverse, st.first, st.second, 0);

    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv))
        return 1;
    bool ok = true;
    if (table) {
        int opts = benchmark::ConsoleReporter::OO_Tabular;
        const char *term = getenv("TERM");
        if (log.empty() && isatty(STDOUT_FILENO) && term && strcmp(term, "dumb"))
            opts |= benchmark::ConsoleReporter::OO_Color;
        // --vmatch_log: Google Benchmark's console output and the full table go to the file,
        // the terminal gets the compact table.
        std::ofstream logf;
        if (!log.empty()) {
            logf.open(log, std::ios::app);
            if (!logf) {
                fprintf(stderr, "vmatch_bench: cannot open %s\n", log.c_str());
                return 1;
            }
            topt.terminal = &std::cout;
        }
        topt.fast_llv = plan.fast_llv;
        TableReporter rep((benchmark::ConsoleReporter::OutputOptions)opts, topt);
        if (!log.empty()) {
            rep.SetOutputStream(&logf);
            rep.SetErrorStream(&logf);
        }
        benchmark::RunSpecifiedBenchmarks(&rep);
        ok = rep.ok();
        if (!ok)
            fprintf(stderr, "vmatch_bench: cannot write %s\n", topt.summary.c_str());
    } else {
        benchmark::RunSpecifiedBenchmarks();
    }
    benchmark::Shutdown();
    return ok ? 0 : 1;
}
