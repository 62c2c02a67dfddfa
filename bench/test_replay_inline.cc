// test_replay_inline.cc -- the report's inline replay loop (replay_inline.h) against the
// reference model on random traces with every kind of operation.
//
// The generated workloads of the report post, arrive and nothing else, so the loop's probe,
// cancel and remove cases and its wildcard receives would otherwise run untested.  Each
// trace (exact, MPI_ANY_SOURCE and MPI_ANY_TAG receives, arrivals, probes, improbes, cancels
// and removals, over two contexts) is replayed on the reference model with vm_wl_run for the
// correct outcomes, then with replay_inline on each inline contender of the report -- the ob1
// and UCX classes and the default engine through vmatch_inline.h -- in slices of random
// length (the report replays a repeating workload in two).
//
// Environment: VMATCH_SEED (base seed), VMATCH_DIFF_OPS (operations per trace, default 20000).
#include "baseline_ob1.h"
#include "baseline_ob1_compact.h"
#include "baseline_ucx.h"
#include "baseline_ucx_compact.h"
#include "replay_inline.h"

extern "C" {
#include "ref.h"
}

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace
{

unsigned g_failed;

struct Rng {
    uint64_t s;
    uint32_t below(uint32_t n)
    {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        return (uint32_t)(((s >> 32) * n) >> 32);
    }
};

// The reference model as Calls.
struct RefCalls {
    ref_model_t *r;
    int post(uint64_t bits, uint64_t care, uint32_t, void *req, void **msg)
    {
        return ref_post(r, bits, care, req, msg);
    }
    int arrive(uint64_t bits, uint32_t, void *msg, void **req)
    {
        return ref_arrive(r, bits, msg, req);
    }
    int probe(uint64_t bits, uint64_t care, uint32_t, int remove, void **msg)
    {
        return ref_probe(r, bits, care, remove, msg);
    }
    int cancel(void *req) { return ref_cancel(r, req); }
    int remove(void *msg) { return ref_remove_unexpected(r, msg); }
};

// A backend over Calls c with the default layout (the engine's too).
template <class Calls> vm_wl_backend_t backend_of(Calls *c)
{
    vmb::Layout l;
    vm_wl_backend_t b{};
    b.self = c;
    b.ctx_bits = l.ctx_bits;
    b.src_bits = l.src_bits;
    b.tag_bits = l.tag_bits;
    b.post = vmb::BackendOf<Calls>::post;
    b.arrive = vmb::BackendOf<Calls>::arrive;
    b.probe = vmb::BackendOf<Calls>::probe;
    b.cancel = vmb::BackendOf<Calls>::cancel;
    b.remove = vmb::BackendOf<Calls>::remove;
    return b;
}

// A random trace of n operations over nprocs sources.
void make_trace(vm_trace_t &t, Rng &g, size_t n, uint32_t nprocs)
{
    vm_trace_init(&t);
    t.nprocs = nprocs;
    for (size_t i = 0; i < n; i++) {
        uint32_t ctx = g.below(4) == 0, k = g.below(100);
        int32_t src = (int32_t)g.below(nprocs), tag = (int32_t)g.below(6);
        if (k < 38) {
            unsigned w = g.below(10);
            vm_trace_post(&t, ctx, w == 0 ? VM_TRACE_ANY : src, w == 1 ? VM_TRACE_ANY : tag, 0);
        } else if (k < 80) {
            vm_trace_arrive(&t, ctx, src, tag, 0);
        } else if (k < 90) {
            unsigned w = g.below(4);
            vm_trace_probe(&t, ctx, w == 0 ? VM_TRACE_ANY : src, w == 1 ? VM_TRACE_ANY : tag, 0,
                           g.below(2));
        } else if (k < 95 && t.nreq) {
            vm_trace_cancel(&t, t.nreq - 1 - g.below(t.nreq < 16 ? t.nreq : 16));
        } else if (t.nmsg) {
            vm_trace_remove(&t, t.nmsg - 1 - g.below(t.nmsg < 16 ? t.nmsg : 16));
        }
    }
}

// Replays t on c through replay_inline in random slices and compares with want.
template <class Calls>
void check(const char *name, const vm_trace_t &t, Calls &c, vm_wl_backend_t b,
           const std::vector<uint32_t> &want, Rng &g)
{
    vm_wl_prep_t p;
    char err[256];
    std::vector<uint32_t> got(t.n, VM_WL_NONE);
    if (vm_wl_prepare(&p, &t, &b, err, sizeof err)) {
        fprintf(stderr, "test_replay_inline: %s: prepare: %s\n", name, err);
        g_failed++;
        return;
    }
    int rc = 0;
    for (size_t i = 0; i < t.n && rc == 0;) {
        size_t to = i + 1 + g.below(2000);
        to = to < t.n ? to : t.n;
        rc = vmb::replay_inline(&p, c, i, to, got.data(), err, sizeof err);
        i = to;
    }
    vm_wl_prep_free(&p);
    size_t at = rc ? t.n : vm_wl_first_difference(want.data(), got.data(), t.n);
    bool ok = rc == 0 && at == t.n;
    printf("test_replay_inline: %-8s %zu ops, %s\n", name, t.n, ok ? "ok" : "FAILED");
    if (!ok) {
        if (rc)
            fprintf(stderr, "test_replay_inline: %s: %s\n", name, err);
        else
            fprintf(stderr, "test_replay_inline: %s: operation %zu: %u, reference %u\n", name,
                    at, got[at], want[at]);
        g_failed++;
    }
}

template <class Q>
void check_design(const char *name, const vm_trace_t &t, const std::vector<uint32_t> &want,
                  Rng &g)
{
    Q q(vmb::Layout(), t.nprocs);
    vmb::QueueCalls<Q> c{q};
    check(name, t, c, backend_of(&c), want, g);
}

void check_engine(const vm_trace_t &t, const std::vector<uint32_t> &want, Rng &g)
{
    vmatch_engine_t *e = nullptr;
    if (vmatch_inline_create("", &e) < 0) {
        fprintf(stderr, "test_replay_inline: vmatch_inline_create: %s\n", vmatch_last_error());
        g_failed++;
        return;
    }
    vmb::InlineEngineCalls c{e};
    vm_wl_backend_t b;
    vm_wl_vmatch_backend(e, &b); // its layout and class ids; the loop makes the calls
    check("hash-inl", t, c, b, want, g);
    vmatch_destroy(e);
}

} // namespace

int main()
{
    const char *s = getenv("VMATCH_SEED");
    const char *o = getenv("VMATCH_DIFF_OPS");
    uint64_t seed = s ? strtoull(s, nullptr, 0) : 0x5eed2024u;
    size_t nops = o ? strtoull(o, nullptr, 0) : 20000;
    printf("test_replay_inline: seed 0x%" PRIx64 "\n", seed);
    for (uint32_t nprocs : {4u, 64u}) {
        Rng g{seed + nprocs};
        vm_trace_t t;
        make_trace(t, g, nops, nprocs);
        ref_model_t ref;
        ref_init(&ref);
        RefCalls rc{&ref};
        std::vector<uint32_t> want(t.n, VM_WL_NONE);
        vm_wl_prep_t p;
        char err[256];
        vm_wl_backend_t b = backend_of(&rc);
        if (vm_wl_prepare(&p, &t, &b, err, sizeof err) ||
            vm_wl_run(&p, &b, 0, t.n, want.data(), err, sizeof err)) {
            fprintf(stderr, "test_replay_inline: reference: %s\n", err);
            return 1;
        }
        vm_wl_prep_free(&p);
        ref_fini(&ref);
        check_design<vmb::Ob1Queue>("ob1-inl", t, want, g);
        check_design<vmb::UcxQueue>("ucx-inl", t, want, g);
        check_design<vmb::Ob1Compact>("ob1-compact", t, want, g);
        check_design<vmb::UcxCompact>("ucx-compact", t, want, g);
        check_engine(t, want, g);
        vm_trace_free(&t);
    }
    printf("test_replay_inline: %s\n", g_failed ? "FAILED" : "all ok");
    return g_failed ? 1 : 0;
}
