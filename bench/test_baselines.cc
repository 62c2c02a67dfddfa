// test_baselines.cc -- differential test of every comparator (baselines.cc) against the
// reference model (tests/ref.c) on random MPI operation streams.
//
// A baseline that matched wrongly would make every ratio of the report meaningless, so each
// one runs long streams of post / arrive / probe / improbe / cancel / remove-unexpected with
// exact, MPI_ANY_TAG, MPI_ANY_SOURCE and doubly wild receives over several contexts, in
// phases that grow the PRQ, grow the UMQ, hold steady and drain, under three layouts.  Tags
// are drawn so that different (source, tag) pairs often share a fuzzy512 key (src ^ tag)
// and a UCX hash bucket, which only the verification step may tell apart.  The fuzzy
// baseline runs once with its AVX-512BW compare (when the CPU has it) and once scalar.
//
// The ob1 and UCX designs run twice: behind the virtual calls (the baselines ob1, ucx) and
// as their classes called directly (ob1-inl, ucx-inl, the report's inline baselines); so do
// their compact forms (ob1-compact, ucx-compact).
//
// Environment: VMATCH_SEED (base seed), VMATCH_DIFF_OPS (operations per run, default
// 50000).  A mismatch prints the baseline, the layout, the seed and the operation index.
#include "baseline.h"
#include "baseline_ob1.h"
#include "baseline_ob1_compact.h"
#include "baseline_ucx.h"
#include "baseline_ucx_compact.h"

extern "C" {
#include "ref.h"
}

#include <algorithm>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace
{

unsigned g_passed, g_failed;

// splitmix64: small, seeded and good enough for test streams.
struct Rng {
    uint64_t s;
    uint64_t next()
    {
        uint64_t z = (s += 0x9e3779b97f4a7c15u);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
        return z ^ (z >> 31);
    }
    uint32_t below(uint32_t n) { return (uint32_t)(((next() >> 32) * (uint64_t)n) >> 32); }
    bool pct(unsigned p) { return below(100) < p; }
};

enum Op { kPost, kArrive, kProbe, kImprobe, kCancel, kRemove, kNops };
const char *const kOpName[kNops] = {"post",    "arrive", "probe",
                                    "improbe", "cancel", "remove_unexpected"};
enum Phase { kGrowPrq, kGrowUmq, kSteady, kDrain, kNphases };
const unsigned kMix[kNphases][kNops] = {
    {50, 22, 8, 4, 8, 8},
    {22, 50, 8, 4, 8, 8},
    {36, 36, 10, 6, 6, 6},
    {26, 26, 6, 14, 14, 14},
};

enum { kNctx = 3, kNprocs = 64, kQueueCap = 2500 };

struct Case {
    const char *name;
    vmb::Layout layout;
};
const Case kLayouts[] = {
    {"16/24/24", {16, 24, 24}},
    {"8/12/12", {8, 12, 12}}, // 32 bits: an exact receive's care is not all ones
    {"2/31/31", {2, 31, 31}}, // the widest sources and tags
};

void *payload_of(uint64_t id)
{
    return (void *)(uintptr_t)(id * 8 + 8);
}

struct Run {
    const char *baseline, *layout_name, *variant;
    vmb::Layout l;
    uint64_t seed, op = 0;
    bool ok = true;

    void fail(const char *fmt, ...) __attribute__((format(printf, 2, 3)))
    {
        va_list ap;
        fprintf(stderr,
                "test_baselines: MISMATCH %s%s layout %s seed 0x%" PRIx64 " op %" PRIu64 ": ",
                baseline, variant, layout_name, seed, op);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
        ok = false;
    }

    uint64_t pack(uint32_t ctx, int32_t src, int32_t tag, uint64_t *care) const
    {
        uint64_t m = vmb::Layout::mask(l.tag_bits), s = vmb::Layout::mask(l.src_bits),
                 c = vmb::Layout::mask(l.ctx_bits);
        uint64_t bits = ((uint64_t)ctx & c) << (l.tag_bits + l.src_bits);
        uint64_t cr = c << (l.tag_bits + l.src_bits);
        if (src != VMATCH_ANY_SOURCE) {
            bits |= ((uint64_t)src & s) << l.tag_bits;
            cr |= s << l.tag_bits;
        }
        if (tag != VMATCH_ANY_TAG) {
            bits |= (uint64_t)tag & m;
            cr |= m;
        }
        if (care)
            *care = cr;
        return bits;
    }
};

// A tag: mostly a small range, sometimes one whose fuzzy key equals that of another source
// (src ^ tag fixed), sometimes the widest the layout holds.
int32_t pick_tag(Rng &g, const vmb::Layout &l, int32_t src)
{
    int32_t max_tag = (int32_t)vmb::Layout::mask(l.tag_bits < 31 ? l.tag_bits : 31);
    unsigned p = g.below(100);
    if (p < 70)
        return (int32_t)g.below(8);
    if (p < 95)
        return (int32_t)(((uint32_t)src ^ 5u) & (uint32_t)max_tag); // key src^tag == 5
    return max_tag - (int32_t)g.below(2);
}

int32_t pick_src(Rng &g, const vmb::Layout &l)
{
    (void)l;
    unsigned p = g.below(100);
    if (p < 50)
        return (int32_t)g.below(4); // hot sources
    if (p < 99)
        return (int32_t)g.below(kNprocs);
    return kNprocs - 1; // the last rank
}

// One random stream on b (a Baseline, or a design's class called directly: Q is its type).
template <class Q>
bool run_one(Q *b, const char *name, const Case &cs, const char *variant, uint64_t seed,
             uint64_t nops)
{
    Run r{name, cs.name, variant, cs.layout, seed};
    ref_model_t ref;
    ref_init(&ref);
    Rng g{seed ^ std::hash<std::string>()(std::string(name) + cs.name + variant)};
    uint64_t next_id = 0, last_insp = 0;
    std::vector<uint64_t> posted, arrived; // payload ids handed out, for cancel / remove
    Phase ph = kSteady;
    uint64_t ph_left = 0, n_matched = 0, max_prq = 0, max_umq = 0;
    for (r.op = 0; r.op < nops && r.ok; r.op++) {
        if (ph_left == 0) {
            ph = (Phase)g.below(kNphases);
            ph_left = 200 + g.below(3000);
        }
        ph_left--;
        if (ph == kDrain && ref_posted(&ref) < 8 && ref_unexpected(&ref) < 8)
            ph_left = 0;
        unsigned p = g.below(100), acc = 0;
        int op = 0;
        for (; op < kNops - 1; op++)
            if (p < (acc += kMix[ph][op]))
                break;
        if (op == kPost && ref_posted(&ref) > kQueueCap)
            op = kArrive;
        if (op == kArrive && ref_unexpected(&ref) > kQueueCap)
            op = kPost;
        uint32_t ctx = g.below(100) < 60 ? 0 : g.below(kNctx);
        int32_t src = pick_src(g, cs.layout), tag = pick_tag(g, cs.layout, src);
        void *got = nullptr, *want = nullptr;
        int rc = 0, wrc = 0;
        switch (op) {
        case kPost:
        case kProbe:
        case kImprobe: {
            unsigned w = g.below(100);
            int32_t rs = w < 15 || (w >= 25 && w < 30) ? VMATCH_ANY_SOURCE : src;
            int32_t rt = w >= 15 && w < 30 ? VMATCH_ANY_TAG : tag;
            uint64_t care, bits = r.pack(ctx, rs, rt, &care);
            if (op == kPost) {
                void *pl = payload_of(next_id++);
                posted.push_back((uint64_t)(uintptr_t)pl);
                rc = b->post(bits, care, pl, &got);
                wrc = ref_post(&ref, bits, care, pl, &want);
            } else {
                int rm = op == kImprobe;
                rc = b->probe(bits, care, rm, &got);
                wrc = ref_probe(&ref, bits, care, rm, &want);
            }
            break;
        }
        case kArrive: {
            void *pl = payload_of(next_id++);
            arrived.push_back((uint64_t)(uintptr_t)pl);
            uint64_t bits = r.pack(ctx, src, tag, nullptr);
            rc = b->arrive(bits, pl, &got);
            wrc = ref_arrive(&ref, bits, pl, &want);
            break;
        }
        case kCancel:
        case kRemove: {
            std::vector<uint64_t> &v = op == kCancel ? posted : arrived;
            // Mostly recent handles (likely still queued), sometimes any, sometimes unknown.
            void *h = payload_of(next_id + 1000);
            if (!v.empty() && !g.pct(5)) {
                size_t n = v.size(), k = g.pct(70) ? n - 1 - g.below(n < 64 ? (uint32_t)n : 64)
                                                   : g.below((uint32_t)n);
                h = (void *)(uintptr_t)v[k];
            }
            rc = op == kCancel ? b->cancel(h) : b->remove_unexpected(h);
            wrc = op == kCancel ? ref_cancel(&ref, h) : ref_remove_unexpected(&ref, h);
            break;
        }
        }
        if (rc != wrc || (wrc == VMATCH_MATCHED && got != want)) {
            r.fail("%s ctx %u src %d tag %d: rc %d payload %p, reference rc %d payload %p",
                   kOpName[op], ctx, src, tag, rc, got, wrc, want);
            break;
        }
        n_matched += wrc == VMATCH_MATCHED;
        uint64_t insp = b->inspected();
        if (insp < last_insp) {
            r.fail("inspected() went down: %" PRIu64 " -> %" PRIu64, last_insp, insp);
            break;
        }
        last_insp = insp;
        max_prq = std::max<uint64_t>(max_prq, ref_posted(&ref));
        max_umq = std::max<uint64_t>(max_umq, ref_unexpected(&ref));
    }
    if (r.ok && (ref_posted(&ref) + ref_unexpected(&ref) > 0) && b->bytes() == 0)
        r.fail("bytes() is 0 with %zu entries queued", ref_posted(&ref) + ref_unexpected(&ref));
    printf("test_baselines: %-7s%-8s layout %-8s %" PRIu64 " ops, %" PRIu64
           " matched, max prq %" PRIu64 " umq %" PRIu64 ", %.1f inspected/op, %s\n",
           name, variant, cs.name, r.op, n_matched, max_prq, max_umq,
           r.op ? (double)b->inspected() / (double)r.op : 0.0, r.ok ? "ok" : "FAILED");
    ref_fini(&ref);
    return r.ok;
}

// Fixed cases the random streams could miss: order across wildcard and exact receives,
// fuzzy-key collisions, probes that must not remove, unknown handles.
// b: as for run_one, made with the default layout.
template <class Q> void run_fixed(Q *b, const char *name)
{
    vmb::Layout l;
    Run r{name, "16/24/24", "", l, 0};
    int tok[8];
    void *got = nullptr;
    uint64_t care, any_care;
    auto expect = [&](bool cond, const char *what) {
        if (cond) {
            g_passed++;
        } else {
            g_failed++;
            fprintf(stderr, "test_baselines: %s: fixed case failed: %s\n", name, what);
        }
    };
    // A wildcard posted before an exact receive wins; the exact one then takes the next.
    uint64_t wild = r.pack(0, VMATCH_ANY_SOURCE, 3, &any_care);
    uint64_t exact = r.pack(0, 1, 3, &care);
    expect(b->post(wild, any_care, &tok[0], &got) == VMATCH_QUEUED, "wild post queues");
    expect(b->post(exact, care, &tok[1], &got) == VMATCH_QUEUED, "exact post queues");
    expect(b->arrive(r.pack(0, 1, 3, nullptr), &tok[2], &got) == VMATCH_MATCHED &&
               got == &tok[0],
           "the older wildcard takes the message");
    expect(b->arrive(r.pack(0, 1, 3, nullptr), &tok[3], &got) == VMATCH_MATCHED &&
               got == &tok[1],
           "then the exact receive");
    // (src 1, tag 4) and (src 4, tag 1) share the key 5: only verification tells them apart.
    expect(b->arrive(r.pack(0, 4, 1, nullptr), &tok[4], &got) == VMATCH_QUEUED, "msg queues");
    expect(b->probe(r.pack(0, 1, 4, &care), care, 1, &got) == VMATCH_ENOTFOUND,
           "a colliding key does not match");
    expect(b->probe(r.pack(0, 4, 1, &care), care, 0, &got) == VMATCH_MATCHED && got == &tok[4],
           "iprobe finds it");
    expect(b->probe(r.pack(0, 4, 1, &care), care, 1, &got) == VMATCH_MATCHED && got == &tok[4],
           "improbe finds it again (iprobe did not remove it)");
    expect(b->remove_unexpected(&tok[4]) == VMATCH_ENOTFOUND, "improbe removed it");
    // Another context never matches.
    expect(b->post(r.pack(1, 2, 2, &care), care, &tok[5], &got) == VMATCH_QUEUED, "ctx 1 post");
    expect(b->arrive(r.pack(0, 2, 2, nullptr), &tok[6], &got) == VMATCH_QUEUED,
           "ctx 0 message does not take the ctx 1 receive");
    expect(b->cancel(&tok[5]) == VMATCH_OK, "cancel");
    expect(b->cancel(&tok[5]) == VMATCH_ENOTFOUND, "cancel twice");
    expect(b->remove_unexpected(&tok[6]) == VMATCH_OK, "remove_unexpected");
    expect(b->remove_unexpected(&tok[7]) == VMATCH_ENOTFOUND, "unknown message");
    expect(b->cancel(&tok[7]) == VMATCH_ENOTFOUND, "unknown request");
}

void count(bool ok)
{
    if (ok)
        g_passed++;
    else
        g_failed++;
}

// A design's class called directly, as the report's inline baselines call it (the same
// class is behind the baseline's virtual calls, but a bug in the forwarding or a difference
// of inlining would show only here).
template <class Q> void run_inline(const char *name, uint64_t seed, uint64_t nops)
{
    {
        Q q(vmb::Layout(), 16);
        run_fixed(&q, name);
    }
    for (const Case &cs : kLayouts) {
        Q q(cs.layout, kNprocs);
        count(run_one(&q, name, cs, "", seed, nops));
    }
}

} // namespace

int main()
{
    const char *s = getenv("VMATCH_SEED");
    uint64_t seed = s ? strtoull(s, nullptr, 0) : 0x5eed2024u;
    const char *o = getenv("VMATCH_DIFF_OPS");
    uint64_t nops = o ? strtoull(o, nullptr, 0) : 50000;
    printf("test_baselines: seed 0x%" PRIx64 ", %" PRIu64 " ops per run\n", seed, nops);
    std::vector<vmb::BaselineInfo> all = vmb::baselines();
    for (const vmb::BaselineInfo &bi : vmb::compact_baselines())
        all.push_back(bi);
    for (const vmb::BaselineInfo &bi : all) {
        run_fixed(bi.make(vmb::Layout(), 16).get(), bi.name);
        bool fuzzy = !strcmp(bi.name, "fuzzy");
        for (const Case &cs : kLayouts) {
            for (int scalar = 0; scalar <= (fuzzy ? 1 : 0); scalar++) {
                if (fuzzy)
                    setenv("VMB_FUZZY_KERNEL", scalar ? "scalar" : "auto", 1);
                count(run_one(bi.make(cs.layout, kNprocs).get(), bi.name, cs,
                              scalar ? "/scalar" : "", seed, nops));
            }
        }
        if (fuzzy)
            unsetenv("VMB_FUZZY_KERNEL");
    }
    run_inline<vmb::Ob1Queue>("ob1-inl", seed, nops);
    run_inline<vmb::UcxQueue>("ucx-inl", seed, nops);
    run_inline<vmb::Ob1Compact>("ob1-compact inline", seed, nops);
    run_inline<vmb::UcxCompact>("ucx-compact inline", seed, nops);
    printf("test_baselines: %u passed, %u failed\n", g_passed, g_failed);
    return g_failed ? 1 : 0;
}
