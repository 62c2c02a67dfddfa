// bench_rows.h -- the timed rows of vmatch_bench (bench_rows.cc): one queue kept at a length
// and searched in one order (queue/), the wildcard mix (wild/), the probe of the tail
// (probe/), on a vmatch engine or a baseline, and the memory-bandwidth reference (stream/).
// vmatch_bench.cc's head comment describes each; vmatch_bench.cc registers them.
#pragma once

#include "baseline.h"
#include "bench_table.h"

#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>

namespace vmb
{

// The engines benchmarked: a label (used in the benchmark names) and a vmatch_create spec,
// or a baseline.  vmatch_bench.cc lists them.
struct Engine {
    std::string label, spec;
    const vmb::BaselineInfo *base = nullptr; // a comparator instead of a vmatch engine
    bool orders_only = false;                // only the queue/ rows (the three search orders)
};

// "what: the error text of rc (vmatch_last_error)".
std::string error_text(const char *what, int rc);

// One queue/, wild/ or probe/ row of eng (kind, side, order, length).
void bench_engine(benchmark::State &st, const Engine &eng, Kind kind, Side side, Order order,
                  uint64_t len);

// The stream reference: a plain read of bytes, as wide as stream_isa() says.
void bench_stream(benchmark::State &st, uint64_t bytes);

// Bytes an llv search reads on its way to the tail of a full queue of len entries, rounded
// up to the stream granule (the stream reference of an llv row).
uint64_t llv_search_bytes(Kind kind, Side side, uint64_t len);

} // namespace vmb
