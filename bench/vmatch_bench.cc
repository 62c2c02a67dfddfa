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
// benchmark with an error, so a wrong engine is never timed.
//
// Engines: kEngines (ll, lla, llv with each kernel; a kernel this CPU lacks is left out and
// the table says so), the fuzzy512 baseline (bench/baseline_fuzzy.cc) on every row, the
// MPICH-, ob1- and UCX-style baselines (bench/baseline_*.cc) on the queue/ rows, and the
// engines of --vmatch_specs / VMATCH_BENCH_SPECS.
//
// Rows and repetitions.  The default grid runs middle and forward searches at fewer lengths
// than reverse ones.  With up to 9 repetitions (scripts/bench's default) every row gets them
// all, about a minute and a half on a 2-core machine.  With more (scripts/bench --full: 25),
// only the rows the targets are judged on get every repetition -- forward 1 and 8, reverse
// 4096 and 32768, probe 4096 and 32768, the wildcard mix at 4096, for ll, the fastest llv
// kernel and fuzzy, forward 1 and 8 for every baseline, and their stream references -- and
// the others a third (at least 9),
// which keeps the run near 3 minutes.  --vmatch_rows=full runs every row at every length
// with every repetition.
//
// Targets: with --vmatch_table, after the table, each target of llv (its issue) is judged on
// these rows, one line each: the ratio of the row medians, the range between the quartiles,
// and met or missed (bench_table.cc lists them; the table itself is made there too); and
// issue 11's: llv at forward 1 and 8 against the fastest baseline of each row.
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
#include "bench_table.h"
#include "stats.h"
#include "vmatch.h"

#include <benchmark/benchmark.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <ostream>
#include <set>
#include <string>
#include <unistd.h>
#include <vector>

using namespace vmb;

namespace
{

// The engines benchmarked: a label (used in the benchmark names) and a vmatch_create spec,
// or a baseline.  Add a row here to benchmark a new storage.
struct Engine {
    std::string label, spec;
    const vmb::BaselineInfo *base = nullptr; // a comparator instead of a vmatch engine
    bool orders_only = false;                // only the queue/ rows (the three search orders)
};
const Engine kEngines[] = {
    {"ll", "policy=single storage=ll"},
    {"lla", "policy=single storage=lla"},
    {"llv-avx512", "policy=single storage=llv simd=avx512"},
    {"llv-avx2", "policy=single storage=llv simd=avx2"},
    {"llv-scalar", "policy=single storage=llv simd=scalar"},
};
// The baselines, from vmb::baselines(): fuzzy on every row; mpich, ob1 and ucx on the three
// search orders only (issue 11 judges llv against the fastest baseline at forward 1 and 8).
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

const uint32_t kCtx = 1;
const int32_t kSrc = 0;

// Where the target tag is.  The queue starts as tags 0..L-1 and every iteration removes the
// target and appends it again, so the target at iteration k is base + (k mod period):
//   forward: the head cycles through every tag: base 0, period L;
//   middle:  index m = L/2 is removed; the m tags before it never move and the L-m tags from
//            it on rotate by one each iteration: base m, period L-m;
//   reverse: the tail is removed and re-appended, the queue never changes: base L-1,
//            period 1.
struct Cursor {
    uint64_t base, period, k = 0;
    Cursor(Order o, uint64_t len)
        : base(o == kForward  ? 0
               : o == kMiddle ? len / 2
                              : len - 1),
          period(o == kForward  ? len
                 : o == kMiddle ? len - len / 2
                                : 1)
    {
    }
    uint64_t next()
    {
        uint64_t t = base + k;
        k = k + 1 == period ? 0 : k + 1;
        return t;
    }
};

struct EngineDeleter {
    void operator()(vmatch_engine_t *e) const { vmatch_destroy(e); }
};
using EnginePtr = std::unique_ptr<vmatch_engine_t, EngineDeleter>;

std::string error_text(const char *what, int rc)
{
    std::string s = std::string(what) + ": " + vmatch_strerror(rc);
    const char *detail = vmatch_last_error();
    if (detail && *detail)
        s += std::string(" (") + detail + ")";
    return s;
}

// ---- the queues under test: a vmatch engine or a baseline, behind the same calls ----

struct Figures {
    uint64_t inspected = 0, bytes = 0, posted = 0, unexpected = 0;
    bool lengths = false; // posted / unexpected are known
};

struct VmatchQueues {
    EnginePtr e;
    int post(uint64_t b, uint64_t c, void *req, void **out)
    {
        return vmatch_post(e.get(), b, c, 0, req, out);
    }
    int arrive(uint64_t b, void *msg, void **out)
    {
        return vmatch_arrive(e.get(), b, 0, msg, out);
    }
    int probe(uint64_t b, uint64_t c, void **out)
    {
        return vmatch_probe(e.get(), b, c, 0, 0, out);
    }
    Figures figures() const
    {
        vmatch_stats_t s;
        vmatch_stats(e.get(), &s);
        return {s.inspected, s.bytes, s.posted, s.unexpected, true};
    }
};

struct BaselineQueues {
    std::unique_ptr<vmb::Baseline> b;
    int post(uint64_t bits, uint64_t c, void *req, void **out)
    {
        return b->post(bits, c, req, out);
    }
    int arrive(uint64_t bits, void *msg, void **out) { return b->arrive(bits, msg, out); }
    int probe(uint64_t bits, uint64_t c, void **out) { return b->probe(bits, c, 0, out); }
    Figures figures() const { return {b->inspected(), b->bytes(), 0, 0, false}; }
};

// Packs MPI fields with the default layout, which the baselines decode (vmb::Layout).
vmatch_engine_t *default_packer()
{
    static EnginePtr e = [] {
        vmatch_engine_t *raw = nullptr;
        vmatch_create("storage=ll", &raw);
        return EnginePtr(raw);
    }();
    return e.get();
}

// Kept out of the timed loop.
__attribute__((noinline, cold)) void wrong_match(benchmark::State &st, const char *call, int rc,
                                                 const void *got, const char *tok, uint64_t tag,
                                                 uint64_t len)
{
    char buf[256];
    long long idx = got ? (long long)((const char *)got - tok) : -1;
    if (rc < 0) {
        st.SkipWithError(error_text(call, rc).c_str());
        return;
    }
    if (got && (idx < 0 || (uint64_t)idx >= len))
        snprintf(buf, sizeof buf, "%s for entry %llu: rc %d, a foreign payload %p", call,
                 (unsigned long long)tag, rc, got);
    else
        snprintf(buf, sizeof buf, "%s for entry %llu: rc %d, payload of entry %lld (-1: none)",
                 call, (unsigned long long)tag, rc, idx);
    st.SkipWithError(buf);
}

// Receive bits/care and message bits of the entries of one benchmark, prepared outside the
// timed loop.  Entry t's payload (request on the PRQ, message on the UMQ) is &tok[t].
struct Entries {
    std::vector<vmatch_bits_t> mbits, rbits, rcare;
    std::vector<char> tok;
    explicit Entries(uint64_t n) : mbits(n), rbits(n), rcare(n), tok(n) {}
};

bool pack(benchmark::State &st, vmatch_engine_t *pk, int32_t src, int32_t tag,
          vmatch_bits_t *bits, vmatch_bits_t *care)
{
    int rc = vmatch_mpi_pack(pk, kCtx, src, tag, bits, care);
    if (rc < 0)
        st.SkipWithError(error_text("vmatch_mpi_pack", rc).c_str());
    return rc >= 0;
}

// Fill one side with every entry, in order; false (with the error set) on a failure.
template <class Q> bool fill(benchmark::State &st, Q &q, Side side, Entries &en)
{
    uint64_t len = en.tok.size();
    void *got = nullptr;
    for (uint64_t t = 0; t < len; t++) {
        int rc = side == kPrq ? q.post(en.rbits[t], en.rcare[t], &en.tok[t], &got)
                              : q.arrive(en.mbits[t], &en.tok[t], &got);
        if (rc != VMATCH_QUEUED) {
            wrong_match(st, side == kPrq ? "filling post" : "filling arrive", rc, got,
                        en.tok.data(), t, len);
            return false;
        }
    }
    return true;
}

// The counters of a run, and the check that the queue kept its length.
void finish(benchmark::State &st, const Figures &empty, const Figures &before,
            const Figures &after, Side side, uint64_t len)
{
    if (st.error_occurred())
        return;
    if (after.lengths && ((side == kPrq ? after.posted : after.unexpected) != len ||
                          after.posted + after.unexpected != len)) {
        char buf[160];
        snprintf(buf, sizeof buf,
                 "queue length not kept: posted %llu, unexpected %llu, want %llu",
                 (unsigned long long)after.posted, (unsigned long long)after.unexpected,
                 (unsigned long long)len);
        st.SkipWithError(buf);
        return;
    }
    double iters = (double)st.iterations();
    st.counters["insp/match"] =
        iters ? (double)(after.inspected - before.inspected) / iters : 0;
    st.counters["bytes/entry"] = (double)after.bytes / (double)len;
    st.counters["net_bytes/entry"] = ((double)after.bytes - (double)empty.bytes) / (double)len;
}

// queue/...: exact receives and messages, tags 0..L-1 from one source.
template <class Q>
void run_queue(benchmark::State &st, Q &q, vmatch_engine_t *pk, Side side, Order order,
               uint64_t len)
{
    Figures empty = q.figures();
    Entries en(len);
    for (uint64_t t = 0; t < len; t++)
        if (!pack(st, pk, kSrc, (int32_t)t, &en.mbits[t], nullptr) ||
            !pack(st, pk, kSrc, (int32_t)t, &en.rbits[t], &en.rcare[t]))
            return;
    if (!fill(st, q, side, en))
        return;
    char other = 0; // the handle of the side that does not queue
    void *got = nullptr;
    int rc;
    Cursor cur(order, len);
    Figures before = q.figures();
    if (side == kPrq) {
        for (auto _ : st) {
            uint64_t t = cur.next();
            got = nullptr;
            rc = q.arrive(en.mbits[t], &other, &got);
            if (__builtin_expect(rc != VMATCH_MATCHED || got != &en.tok[t], 0)) {
                wrong_match(st, "arrive", rc, got, en.tok.data(), t, len);
                break;
            }
            rc = q.post(en.rbits[t], en.rcare[t], &en.tok[t], &got);
            if (__builtin_expect(rc != VMATCH_QUEUED, 0)) {
                wrong_match(st, "re-post", rc, got, en.tok.data(), t, len);
                break;
            }
        }
    } else {
        for (auto _ : st) {
            uint64_t t = cur.next();
            got = nullptr;
            rc = q.post(en.rbits[t], en.rcare[t], &other, &got);
            if (__builtin_expect(rc != VMATCH_MATCHED || got != &en.tok[t], 0)) {
                wrong_match(st, "post", rc, got, en.tok.data(), t, len);
                break;
            }
            rc = q.arrive(en.mbits[t], &en.tok[t], &got);
            if (__builtin_expect(rc != VMATCH_QUEUED, 0)) {
                wrong_match(st, "re-arrive", rc, got, en.tok.data(), t, len);
                break;
            }
        }
    }
    finish(st, empty, before, q.figures(), side, len);
}

// wild/...: the wildcard mix (see the top of the file).  Entry L-1 is the target.
template <class Q>
void run_wild(benchmark::State &st, Q &q, vmatch_engine_t *pk, Side side, uint64_t len)
{
    Figures empty = q.figures();
    Entries en(len);
    // The searches of the UMQ case, cycling: 5 ANY_TAG, 1 ANY_SOURCE, 4 exact.
    enum { kMix = 10 };
    vmatch_bits_t sbits[kMix], scare[kMix];
    if (side == kPrq) {
        // Counted back from the tail: 0-3 exact from source 0 (tag = index, so only the
        // target matches the message), 4-8 ANY_TAG from sources 1.., 9 ANY_SOURCE with tags
        // beyond every message's.
        for (uint64_t t = 0; t < len; t++) {
            uint64_t k = (len - 1 - t) % kMix;
            int32_t src = k < 4 ? kSrc : k < 9 ? (int32_t)(1 + t % 4093) : VMATCH_ANY_SOURCE;
            int32_t tag = k < 4 ? (int32_t)t : k < 9 ? VMATCH_ANY_TAG : (int32_t)(len + t);
            if (!pack(st, pk, src, tag, &en.rbits[t], &en.rcare[t]))
                return;
        }
        if (!pack(st, pk, kSrc, (int32_t)(len - 1), &en.mbits[len - 1], nullptr))
            return;
    } else {
        // Message t from source t with tag t * 0x9E37 mod 2^16: distinct sources and tags,
        // and src ^ tag spread over 16 bits (the fuzzy key; equal src and tag would give
        // every message the same key).
        auto tag_of = [](uint64_t t) { return (int32_t)((t * 0x9E37u) & 0xFFFFu); };
        for (uint64_t t = 0; t < len; t++)
            if (!pack(st, pk, (int32_t)t, tag_of(t), &en.mbits[t], nullptr))
                return;
        int32_t src = (int32_t)(len - 1), tag = tag_of(len - 1);
        for (int k = 0; k < kMix; k++)
            if (!pack(st, pk,
                      k < 5   ? src
                      : k < 6 ? VMATCH_ANY_SOURCE
                              : src,
                      k < 5 ? VMATCH_ANY_TAG : tag, &sbits[k], &scare[k]))
                return;
    }
    if (!fill(st, q, side, en))
        return;
    char other = 0;
    void *got = nullptr, *want = &en.tok[len - 1];
    int rc, k = 0;
    Figures before = q.figures();
    for (auto _ : st) {
        got = nullptr;
        rc = side == kPrq ? q.arrive(en.mbits[len - 1], &other, &got)
                          : q.post(sbits[k], scare[k], &other, &got);
        if (__builtin_expect(rc != VMATCH_MATCHED || got != want, 0)) {
            wrong_match(st, side == kPrq ? "arrive" : "post", rc, got, en.tok.data(), len - 1,
                        len);
            break;
        }
        rc = side == kPrq ? q.post(en.rbits[len - 1], en.rcare[len - 1], want, &got)
                          : q.arrive(en.mbits[len - 1], want, &got);
        if (__builtin_expect(rc != VMATCH_QUEUED, 0)) {
            wrong_match(st, "re-append", rc, got, en.tok.data(), len - 1, len);
            break;
        }
        k = k + 1 == kMix ? 0 : k + 1;
    }
    finish(st, empty, before, q.figures(), side, len);
}

// probe/...: MPI_Iprobe of the tail of a UMQ of exact messages.
template <class Q> void run_probe(benchmark::State &st, Q &q, vmatch_engine_t *pk, uint64_t len)
{
    Figures empty = q.figures();
    Entries en(len);
    for (uint64_t t = 0; t < len; t++)
        if (!pack(st, pk, kSrc, (int32_t)t, &en.mbits[t], nullptr))
            return;
    vmatch_bits_t bits, care;
    if (!pack(st, pk, kSrc, (int32_t)(len - 1), &bits, &care) || !fill(st, q, kUmq, en))
        return;
    void *got = nullptr, *want = &en.tok[len - 1];
    Figures before = q.figures();
    for (auto _ : st) {
        got = nullptr;
        int rc = q.probe(bits, care, &got);
        if (__builtin_expect(rc != VMATCH_MATCHED || got != want, 0)) {
            wrong_match(st, "probe", rc, got, en.tok.data(), len - 1, len);
            break;
        }
    }
    finish(st, empty, before, q.figures(), kUmq, len);
}

// One benchmark of any engine.
void bench_engine(benchmark::State &st, const Engine &eng, Kind kind, Side side, Order order,
                  uint64_t len)
{
    if (eng.base) {
        BaselineQueues q{eng.base->make(vmb::Layout{}, 0)};
        if (kind == kQueue)
            run_queue(st, q, default_packer(), side, order, len);
        else if (kind == kProbe)
            run_probe(st, q, default_packer(), len);
        else
            run_wild(st, q, default_packer(), side, len);
        return;
    }
    vmatch_engine_t *raw = nullptr;
    int rc = vmatch_create(eng.spec.c_str(), &raw);
    if (rc < 0) {
        st.SkipWithError(
            error_text(("vmatch_create(\"" + eng.spec + "\")").c_str(), rc).c_str());
        return;
    }
    VmatchQueues q{EnginePtr(raw)};
    if (kind == kQueue)
        run_queue(st, q, raw, side, order, len);
    else if (kind == kProbe)
        run_probe(st, q, raw, len);
    else
        run_wild(st, q, raw, side, len);
}

// ---- the memory-bandwidth reference ----

#if defined(__x86_64__)
__attribute__((target("avx512f"))) uint64_t read_avx512(const char *p, size_t n)
{
    // Four accumulators, so the loads (two 64-byte loads a cycle on current cores) never
    // wait for an OR.
    __m512i a = _mm512_setzero_si512(), b = a, c = a, d = a;
    for (size_t i = 0; i < n; i += 256) {
        a = _mm512_or_si512(a, _mm512_load_si512(p + i));
        b = _mm512_or_si512(b, _mm512_load_si512(p + i + 64));
        c = _mm512_or_si512(c, _mm512_load_si512(p + i + 128));
        d = _mm512_or_si512(d, _mm512_load_si512(p + i + 192));
    }
    __m512i x = _mm512_or_si512(_mm512_or_si512(a, b), _mm512_or_si512(c, d));
    return (uint64_t)_mm512_test_epi64_mask(x, x); // depends on every byte read
}

__attribute__((target("avx2"))) uint64_t read_avx2(const char *p, size_t n)
{
    __m256i a = _mm256_setzero_si256(), b = a, c = a, d = a;
    for (size_t i = 0; i < n; i += 128) {
        a = _mm256_or_si256(a, _mm256_load_si256((const __m256i *)(p + i)));
        b = _mm256_or_si256(b, _mm256_load_si256((const __m256i *)(p + i + 32)));
        c = _mm256_or_si256(c, _mm256_load_si256((const __m256i *)(p + i + 64)));
        d = _mm256_or_si256(d, _mm256_load_si256((const __m256i *)(p + i + 96)));
    }
    __m256i x = _mm256_or_si256(_mm256_or_si256(a, b), _mm256_or_si256(c, d));
    return (uint64_t)_mm256_extract_epi64(x, 0) | (uint64_t)_mm256_extract_epi64(x, 1) |
           (uint64_t)_mm256_extract_epi64(x, 2) | (uint64_t)_mm256_extract_epi64(x, 3);
}
#endif

uint64_t read_plain(const char *p, size_t n)
{
    uint64_t a = 0;
    for (size_t i = 0; i < n; i += sizeof a) {
        uint64_t w;
        memcpy(&w, p + i, sizeof w);
        a |= w;
    }
    return a;
}

// The stream granule: 256 bytes, four 512-bit loads per step of read_avx512.
const uint64_t kStreamStep = 256;

void bench_stream(benchmark::State &st, uint64_t bytes)
{
    void *raw = std::aligned_alloc(64, bytes);
    if (!raw) {
        st.SkipWithError("out of memory");
        return;
    }
    std::unique_ptr<char, void (*)(void *)> buf(static_cast<char *>(raw), std::free);
    memset(buf.get(), 1, bytes);
    auto read = read_plain;
#if defined(__x86_64__)
    if (!strcmp(stream_isa(), "avx512"))
        read = read_avx512;
    else if (!strcmp(stream_isa(), "avx2"))
        read = read_avx2;
#endif
    for (auto _ : st)
        benchmark::DoNotOptimize(read(buf.get(), bytes));
    st.counters["GB/s"] =
        benchmark::Counter((double)bytes, benchmark::Counter::kIsIterationInvariantRate,
                           benchmark::Counter::kIs1000);
}

// Bytes an llv search reads on its way to the tail of a full queue of len entries (reverse
// search; blocks full, no holes), which the stream reference reads: the fingerprint lane of
// every group (2 bytes a slot) for an exact search, and also on the PRQ holding wildcard
// receives, whose three care masks each have a fingerprint class (the lane is compared once
// per class, read once); for the UMQ wildcard mix, 6 in 10 searches compare the full match
// bits (8 bytes a slot) and 4 the fingerprints.  Headers and the verified candidates add a
// cache line or two per block, left out.  Rounded up to the stream granule.
uint64_t llv_search_bytes(Kind kind, Side side, uint64_t len)
{
    uint64_t slots = (len + 63) / 64 * 64, b;
    if (kind != kWild || side == kPrq)
        b = slots * 2;
    else
        b = slots * (6 * 8 + 4 * 2) / 10;
    return (b + kStreamStep - 1) / kStreamStep * kStreamStep;
}

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
        bool judged = label == "ll" || label == fast_llv || base;
        bool row = k == kWild      ? len == 4096
                   : k == kProbe   ? len == 4096 || len == 32768
                   : o == kForward ? len == 1 || len == 8
                   : o == kReverse ? len == 4096 || len == 32768
                                   : false;
        // Baselines: every one at forward 1 and 8 (issue 11), fuzzy also at reverse 32768,
        // on the wildcard mix and on the probe rows.
        if (base && k == kQueue)
            row = (o == kForward && (len == 1 || len == 8)) ||
                  (label == "fuzzy" && o == kReverse && len == 32768);
        else if (base)
            row = row && label == "fuzzy";
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
        for (Side s : {kPrq, kUmq}) {
            for (Order o : {kForward, kMiddle, kReverse})
                for (uint64_t len : plan.lengths_of(kQueue, o)) {
                    uint64_t bytes = llv && o == kReverse && len >= 64
                                         ? llv_search_bytes(kQueue, s, len)
                                         : 0;
                    add_row(en, kQueue, s, o, len,
                            plan.reps_of(en->label, en->base, kQueue, o, len), bytes);
                }
            if (en->orders_only)
                continue;
            for (uint64_t len : plan.lengths_of(kWild, kReverse))
                add_row(en, kWild, s, kReverse, len,
                        plan.reps_of(en->label, en->base, kWild, kReverse, len),
                        llv && len >= 64 ? llv_search_bytes(kWild, s, len) : 0);
        }
        if (en->orders_only)
            continue;
        for (uint64_t len : plan.lengths_of(kProbe, kReverse))
            add_row(en, kProbe, kUmq, kReverse, len,
                    plan.reps_of(en->label, en->base, kProbe, kReverse, len),
                    llv && len >= 64 ? llv_search_bytes(kProbe, kUmq, len) : 0);
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
