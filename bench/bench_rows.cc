// bench_rows.cc -- the timed rows of vmatch_bench: one queue kept at a length and searched
// in one order, the wildcard mix and the probe, on a vmatch engine or a baseline behind the
// same calls, and the memory-bandwidth reference (what each row does: the head comment of
// vmatch_bench.cc).  Every match is checked; a wrong one stops the row with an error.
#include "bench_rows.h"

#include "vmatch.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

namespace vmb
{

namespace
{

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

} // namespace

std::string error_text(const char *what, int rc)
{
    std::string s = std::string(what) + ": " + vmatch_strerror(rc);
    const char *detail = vmatch_last_error();
    if (detail && *detail)
        s += std::string(" (") + detail + ")";
    return s;
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

} // namespace vmb
