// bench_table.h -- the rows of vmatch_bench and what --vmatch_table makes of their results:
// the queue table, a compact form of it for the terminal, and the targets of llv judged on
// the rows (bench_table.cc).  vmatch_bench.cc registers the rows and runs them.
#pragma once

#include <benchmark/benchmark.h>

#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace vmb
{

enum Kind { kQueue, kWild, kProbe, kStream };
enum Side { kPrq, kUmq };
enum Order { kForward, kMiddle, kReverse };
inline const char *const kKindName[] = {"queue", "wild", "probe", "stream"};
inline const char *const kSideName[] = {"prq", "umq"};
inline const char *const kOrderName[] = {"forward", "middle", "reverse"};

// One benchmark of the table, and its results as the reporter collects them.
struct Row {
    std::string label, name;
    Kind kind = kQueue;
    Side side = kPrq;
    Order order = kForward;
    uint64_t len = 0;       // entries; bytes for a stream row
    uint64_t stream = 0;    // bytes of the stream reference of this row, 0: none
    std::vector<double> ns; // CPU ns per match of each repetition
    double agg_median = -1, agg_cv = -1;
    double insp = -1, bytes = -1, net_bytes = -1;
    std::string error;
};

// The rows in the order they were registered, by benchmark name, and the engines' resolved
// specs (label, spec or why it was left out).
inline std::vector<Row> g_rows;
inline std::map<std::string, size_t> g_row_of;
inline std::vector<std::pair<std::string, std::string>> g_described;

std::string bench_name(Kind k, const std::string &label, Side s, Order o, uint64_t len);
double min_of(const std::vector<double> &v);
// The vector width of the stream reference's read (vmatch_bench.cc).
const char *stream_isa();

struct TableOptions {
    std::string baseline = "ll"; // the engine the ratios compare against
    std::string fast_llv;        // the llv kernel the targets are judged on ("": none)
    // The terminal, when the console output and the full table go to a log: it then gets
    // the compact table (and the targets, unless summary is set).  nullptr: no log.
    std::ostream *terminal = nullptr;
    std::string summary; // append the target lines there instead of printing them
};

// The console part of --vmatch_table: Google Benchmark's console output, but with
// repetitions only the aggregates are shown (every repetition still goes to the table and
// to --benchmark_out).  At the end, the table and the targets.
class TableReporter : public benchmark::ConsoleReporter
{
  public:
    TableReporter(OutputOptions opts, TableOptions t) : ConsoleReporter(opts), t_(std::move(t))
    {
    }
    void ReportRuns(const std::vector<Run> &runs) override;
    void Finalize() override;
    // False when the summary file could not be written.
    bool ok() const { return ok_; }

  private:
    TableOptions t_;
    bool ok_ = true;

    void collect(const Run &r);
    void print_table();
    void print_compact(std::ostream &os) const;
    void print_targets(std::ostream &os, const std::vector<std::string> &lines) const;
    std::vector<std::string> targets() const;
    std::string lean_target() const; // "lean: ...", "" when its rows were not run
    std::string hash_target() const; // "hash: ...", "" when its rows were not run
    void line(const char *fmt, ...) __attribute__((format(printf, 2, 3)));
};

} // namespace vmb
