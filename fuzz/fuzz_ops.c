/* fuzz_ops.c -- the bytes choose an engine and a stream of calls, and every answer is
 * checked against the reference model (tests/ref.h).
 *
 * Layout of an input: three bytes choose the spec (policy single, pnp, pnp-static or hash
 * over ll, lla or llv, each kernel the machine has, small blocks, small pnp thresholds and
 * caps, hash tables of 1 to 64 buckets or growing with loads of 0.5 to 4 (and shrinking after
 * quiet windows of 8, 32 or 4096 operations, or never; short vectors of 0, 1, 3 or 8
 * entries), profile recording,
 * a collective class for context 1), then each operation is one
 * byte (its kind in the low three bits) and, for most kinds, one argument byte.  Contexts
 * 0-1, sources 0-5 and tags 0-2 (and the wildcards) make receives and messages meet often.
 * A receive or probe with bit 3 of its kind byte set takes one more byte, which clears
 * care bits of its source and tag fields: masks no MPI packing makes, which the API
 * allows.  Classes never meet: each context keeps one class, as MPI promises.
 *
 * Allocation failures are injected through the engine's test hook (engine.h): a call that
 * returns VMATCH_ENOMEM while one is armed must have changed nothing, so the model is not
 * told of it, the memory and queues in vmatch_stats and the policy's own figures
 * (vmatch_stat: pnp's partners and levels, hash's buckets and overflow queues) must be as
 * before, and every later answer still has to agree.  VMATCH_ENOMEM at any other time is a
 * finding. */
#include "fuzz.h"

#include "hooks.h"
#include "ref.h"
#include "vmatch_inline.h"

#include <string.h>

enum { OP_POST, OP_ARRIVE, OP_PROBE, OP_IMPROBE, OP_CANCEL, OP_REMOVE, OP_FAIL, OP_PRESSURE };

/* nprocs of every engine, and the sources and tags the operations use. */
enum { NPROCS = 16, NSRC = 6, NTAG = 3 };

typedef struct run {
    const uint8_t *p; /* the bytes not yet used */
    size_t left;
    vmatch_engine_t *e;
    ref_model_t ref;
    char spec[256];
    uint32_t cls1;     /* the class of context 1 (0, or a collective class) */
    unsigned tag_bits; /* the layout's tag width, for odd care masks */
    uint64_t next_id;  /* payload ids handed out */
    size_t op;         /* index of the operation, for messages */
    int pressure;      /* every call runs with a failure armed (OP_PRESSURE) */
    int64_t fail_next; /* armed for the next call only (OP_FAIL), or -1 */
    unsigned kept;     /* bit i: the engine keeps figure figure_keys[i] */
} run_t;

/* The policies' figures a failed call must leave as they were (those the engine keeps). */
static const char *const figure_keys[] = {"pnp.partners",   "pnp.levels", "hash.table_buckets",
                                          "hash.overflows", "hash.flat",  "hash.shrinks"};
#define NFIG (sizeof figure_keys / sizeof figure_keys[0])

/* What a failed call must not change: vmatch_stats and the figures the engine keeps. */
typedef struct snapshot {
    vmatch_stats_t st;
    uint64_t fig[NFIG];
} snapshot_t;

/* The next byte, 0 once the input is used up. */
static unsigned take(run_t *r)
{
    if (!r->left)
        return 0;
    r->left--;
    return *r->p++;
}

/* A unique, non-NULL payload pointer for id. */
static void *payload_of(uint64_t id)
{
    return (void *)(uintptr_t)(id * 8 + 8);
}

/* The path of a profile for pnp-static: sources 0-3 of both contexts carry most traffic,
 * so each metric finds partners.  Written once per process into an in-memory file. */
static const char *profile_path(void)
{
    static char path[64];
    static int made;
    if (!made) {
        char text[1024];
        int n = snprintf(text, sizeof text, "vmatch-profile 1\nlayout 16 24 24\nnprocs %d\n",
                         NPROCS);
        for (int ctx = 0; ctx < 2; ctx++)
            for (int src = 0; src < NPROCS; src++)
                n += snprintf(text + n, sizeof text - (size_t)n, "%d %d %d %d\n", ctx, src,
                              src < 4 ? 40 + src : 1, src < 4 ? 30 : src % 3);
        FUZZ_CHECK(fuzz_memfile((const uint8_t *)text, (size_t)n, path, sizeof path) >= 0,
                   "cannot make the profile");
        made = 1;
    }
    return path;
}

/* Build the spec from the first three bytes and create the engine; 0 when it cannot run
 * here (every spec built is valid, so anything but a missing kernel is a finding). */
static int make_engine(run_t *r)
{
    static const char *const policies[] = {"single", "pnp", "pnp-static"};
    static const char *const storages[] = {"ll", "lla", "llv"};
    static const char *const metrics[] = {"average", "median", "fence"};
    static const char *const kernels[] = {"avx512", "avx2", "scalar"};
    unsigned b0 = take(r), b1 = take(r), b2 = take(r);
    const char *have[3];
    unsigned nhave = 0;
    for (unsigned i = 0; i < 3; i++)
        if (vmatch_simd_available(kernels[i]) == 1)
            have[nhave++] = kernels[i];
    /* The third byte is pnp's; with single, its bit 6 makes the engine hash instead. */
    static const unsigned buckets[] = {0, 1, 2, 7, 0, 3, 0, 64}, loads[] = {100, 50, 200, 400},
                          shrinks[] = {4096, 8, 32, 0}, /* windows: tables that shrink often */
        shorts[] = {8, 0, 1, 3};                        /* short vectors, and none */
    int hash = b0 % 3 == 0 && (b2 & 0x40);
    const char *policy = hash ? "hash" : policies[b0 % 3], *storage = storages[(b0 >> 2) % 3];
    int n = snprintf(r->spec, sizeof r->spec,
                     "policy=%s storage=%s nprocs=%d lla.block=%u llv.block=%u%s", policy,
                     storage, NPROCS, 4 + (b1 >> 2) % 8, 64 * (1 + (b1 >> 5) % 3),
                     b0 & 0x80 ? " profile.record=on" : "");
    if (strcmp(storage, "llv") == 0 && nhave)
        n += snprintf(r->spec + n, sizeof r->spec - (size_t)n, " simd=%s", have[b1 % nhave]);
    if (hash)
        n += snprintf(r->spec + n, sizeof r->spec - (size_t)n,
                      " hash.buckets=%u hash.load=%u hash.shrink=%u hash.short=%u",
                      buckets[b2 % 8], loads[(b2 >> 3) % 4],
                      shrinks[(b2 >> 5 & 1) | (b2 >> 6 & 2)], shorts[(b0 >> 4) & 3]);
    else if (strcmp(policy, "single") != 0)
        n += snprintf(r->spec + n, sizeof r->spec - (size_t)n,
                      " pnp.threshold=%u pnp.cap=%u pnp.move=%s pnp.metric=%s", 2 + b2 % 7,
                      1 + (b2 >> 3) % 4, b0 & 0x10 ? "off" : "on", metrics[(b0 >> 5) % 3]);
    if (strcmp(policy, "pnp-static") == 0)
        snprintf(r->spec + n, sizeof r->spec - (size_t)n, " profile=%s", profile_path());
    int rc = vmatch_create(r->spec, &r->e);
    FUZZ_CHECK(rc == VMATCH_OK || rc == VMATCH_EUNSUPPORTED, "'%s': create = %d (%s)", r->spec,
               rc, vmatch_last_error());
    if (rc != VMATCH_OK)
        return 0;
    vmatch_layout(r->e, NULL, NULL, &r->tag_bits);
    for (unsigned i = 0; i < NFIG; i++) {
        uint64_t v;
        rc = vmatch_stat(r->e, figure_keys[i], &v);
        FUZZ_CHECK(rc == VMATCH_OK || rc == VMATCH_EUNSUPPORTED, "'%s': vmatch_stat(%s) = %d",
                   r->spec, figure_keys[i], rc);
        r->kept |= (unsigned)(rc == VMATCH_OK) << i;
    }
    if (b2 & 0x80) {
        r->cls1 = vmatch_coll_class(r->e, VMATCH_COLL_ALLREDUCE, 8, NPROCS);
        FUZZ_CHECK(r->cls1 >= 1, "'%s': no collective class", r->spec);
    }
    return 1;
}

/* A receive from an argument byte: context, source (or ANY_SOURCE), tag (or ANY_TAG);
 * with odd set, one more byte clears care bits of the tag (bits 0-1, the tags used) and of
 * the source (bits 2-4), never of the context, so classes still cannot meet. */
static void recv_of(run_t *r, unsigned a, int odd, vmatch_bits_t *bits, vmatch_bits_t *care)
{
    unsigned s = (a >> 1) & 7, t = (a >> 4) & 3;
    vmatch_mpi_recv(r->e, a & 1, s < NSRC ? (int32_t)s : VMATCH_ANY_SOURCE,
                    t < NTAG ? (int32_t)t : VMATCH_ANY_TAG, bits, care);
    if (odd) {
        unsigned m = take(r);
        *care &= ~((vmatch_bits_t)(m & 3) | (vmatch_bits_t)((m >> 2) & 7) << r->tag_bits);
    }
}

/* The class of a receive or message on context ctx. */
static uint32_t cls_of(const run_t *r, unsigned ctx)
{
    return ctx ? r->cls1 : 0;
}

/* A message from an argument byte: context, source, tag, never wildcards. */
static vmatch_bits_t msg_of(const run_t *r, unsigned a)
{
    return vmatch_mpi_msg(r->e, a & 1, (int32_t)(((a >> 1) & 7) % NSRC),
                          (int32_t)(((a >> 4) & 3) % NTAG));
}

/* A handle for cancel / remove: mostly one queued on the side asked for, else any id
 * handed out so far or soon (queued on the other side, gone, or never used). */
static void *handle_of(const run_t *r, const ref_list_t *own, unsigned a)
{
    if (own->n && a < 192)
        return own->v[a % own->n].payload;
    return payload_of(a % (r->next_id + 2));
}

/* Compare one call's answer with the model's. */
static void agree(const run_t *r, const char *what, int got, const void *got_p, int want,
                  const void *want_p)
{
    FUZZ_CHECK(got == want && (want != VMATCH_MATCHED || got_p == want_p),
               "'%s' operation %zu (%s): engine %d %p, model %d %p", r->spec, r->op, what, got,
               got_p, want, want_p);
}

/* What the engine holds now, into *sn. */
static void snapshot(const run_t *r, snapshot_t *sn)
{
    vmatch_stats(r->e, &sn->st);
    for (unsigned i = 0; i < NFIG; i++) {
        sn->fig[i] = 0;
        if (r->kept >> i & 1)
            FUZZ_CHECK(vmatch_stat(r->e, figure_keys[i], &sn->fig[i]) == VMATCH_OK,
                       "'%s': vmatch_stat(%s) failed: %s", r->spec, figure_keys[i],
                       vmatch_last_error());
    }
}

/* After a call failed with VMATCH_ENOMEM: the engine holds what it held before, bytes and
 * queues included (the profile table a failed append grew goes back; pnp's wildcard queue a
 * failed post made is destroyed: both were found this way), and the policy's figures. */
static void unchanged(const run_t *r, const snapshot_t *before, const char *what)
{
    snapshot_t now;
    snapshot(r, &now);
    FUZZ_CHECK(now.st.bytes == before->st.bytes && now.st.queues == before->st.queues,
               "'%s' operation %zu (%s) failed with VMATCH_ENOMEM but changed the engine: "
               "bytes %llu -> %llu, queues %llu -> %llu",
               r->spec, r->op, what, (unsigned long long)before->st.bytes,
               (unsigned long long)now.st.bytes, (unsigned long long)before->st.queues,
               (unsigned long long)now.st.queues);
    for (unsigned i = 0; i < NFIG; i++)
        FUZZ_CHECK(now.fig[i] == before->fig[i],
                   "'%s' operation %zu (%s) failed with VMATCH_ENOMEM but changed %s: %llu -> "
                   "%llu",
                   r->spec, r->op, what, figure_keys[i], (unsigned long long)before->fig[i],
                   (unsigned long long)now.fig[i]);
}

/* Run the operation of kind byte c on the engine and, unless it failed as armed, on the
 * model. */
static void step(run_t *r, unsigned c, int armed)
{
    static const char *const names[] = {"post",    "arrive", "probe",
                                        "improbe", "cancel", "remove_unexpected"};
    /* path (posts, arrivals, probes): 0 the library's calls, 1 vmatch_inline.h's, 2 its
     * split calls (a removing probe then an enqueue for a post, a take of a posted receive
     * then an enqueue for an arrival); they run inline on the default engine, and fall
     * through elsewhere */
    unsigned k = c & 7, a = take(r), path = ((c >> 4) & 3) % 3;
    snapshot_t before;
    snapshot(r, &before);
    uint32_t cls = cls_of(r, a & 1);
    vmatch_bits_t bits, care;
    void *got = NULL, *want = NULL;
    int rc, wrc;
    if (k == OP_POST || k == OP_PROBE || k == OP_IMPROBE)
        recv_of(r, a, (c >> 3) & 1, &bits, &care);
    if (k == OP_POST) {
        void *req = payload_of(r->next_id++);
        if (path == 2) { /* the split calls, as UCX makes them */
            rc = vmatch_inline_probe(r->e, bits, care, cls, 1, &got);
            if (rc == VMATCH_ENOTFOUND)
                rc = vmatch_inline_enqueue_posted(r->e, bits, care, cls, req);
        } else {
            rc = path ? vmatch_inline_post(r->e, bits, care, cls, req, &got)
                      : vmatch_post(r->e, bits, care, cls, req, &got);
        }
        if (armed && rc == VMATCH_ENOMEM) {
            unchanged(r, &before, names[k]);
            return;
        }
        wrc = ref_post(&r->ref, bits, care, req, &want);
    } else if (k == OP_ARRIVE) {
        void *msg = payload_of(r->next_id++);
        bits = msg_of(r, a);
        if (path == 2) { /* the split calls, as UCX makes them */
            rc = vmatch_inline_match_posted(r->e, bits, cls, &got);
            if (rc == VMATCH_ENOTFOUND)
                rc = vmatch_inline_enqueue_unexpected(r->e, bits, cls, msg);
        } else {
            rc = path ? vmatch_inline_arrive(r->e, bits, cls, msg, &got)
                      : vmatch_arrive(r->e, bits, cls, msg, &got);
        }
        if (armed && rc == VMATCH_ENOMEM) {
            unchanged(r, &before, names[k]);
            return;
        }
        wrc = ref_arrive(&r->ref, bits, msg, &want);
    } else if (k == OP_PROBE || k == OP_IMPROBE) {
        rc = path ? vmatch_inline_probe(r->e, bits, care, cls, k == OP_IMPROBE, &got)
                  : vmatch_probe(r->e, bits, care, cls, k == OP_IMPROBE, &got);
        if (armed && rc == VMATCH_ENOMEM) {
            unchanged(r, &before, names[k]);
            return;
        }
        wrc = ref_probe(&r->ref, bits, care, k == OP_IMPROBE, &want);
    } else {
        int umq = k == OP_REMOVE;
        void *h = handle_of(r, umq ? &r->ref.umq : &r->ref.prq, a);
        rc = umq ? vmatch_remove_unexpected(r->e, h) : vmatch_cancel(r->e, h);
        if (armed && rc == VMATCH_ENOMEM) {
            unchanged(r, &before, names[k]);
            return;
        }
        wrc = umq ? ref_remove_unexpected(&r->ref, h) : ref_cancel(&r->ref, h);
    }
    agree(r, names[k], rc, got, wrc, want);
}

/* The engine's queue lengths are the model's. */
static void check_stats(const run_t *r)
{
    vmatch_stats_t st;
    vmatch_stats(r->e, &st);
    FUZZ_CHECK(st.posted == ref_posted(&r->ref) && st.unexpected == ref_unexpected(&r->ref),
               "'%s' after operation %zu: stats %llu posted, %llu unexpected; model %zu, %zu",
               r->spec, r->op, (unsigned long long)st.posted, (unsigned long long)st.unexpected,
               ref_posted(&r->ref), ref_unexpected(&r->ref));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    run_t r = {.p = data, .left = size, .fail_next = -1};
    if (size < 3 || !make_engine(&r))
        return 0;
    ref_init(&r.ref);
    while (r.left) {
        unsigned c = take(&r), k = c & 7;
        if (k == OP_FAIL) { /* the next call meets a failure after 0-31 allocations */
            r.fail_next = (int64_t)(c >> 3);
            continue;
        }
        if (k == OP_PRESSURE) { /* on: calls fail at once (or after one allocation) */
            r.pressure = r.pressure ? 0 : 1 + (int)((c >> 3) & 1);
            continue;
        }
        int armed = r.pressure || r.fail_next >= 0;
        if (armed)
            vm_engine_mem(r.e)->fail_after = r.pressure ? r.pressure - 1 : r.fail_next;
        step(&r, c, armed);
        vm_engine_mem(r.e)->fail_after = -1;
        r.fail_next = -1;
        check_stats(&r);
        r.op++;
    }
    /* Empty both queues by handle; the engine must end empty. */
    while (ref_posted(&r.ref)) {
        void *h = r.ref.prq.v[0].payload;
        agree(&r, "final cancel", vmatch_cancel(r.e, h), NULL, ref_cancel(&r.ref, h), NULL);
    }
    while (ref_unexpected(&r.ref)) {
        void *h = r.ref.umq.v[0].payload;
        agree(&r, "final remove", vmatch_remove_unexpected(r.e, h), NULL,
              ref_remove_unexpected(&r.ref, h), NULL);
    }
    check_stats(&r);
    ref_fini(&r.ref);
    vmatch_destroy(r.e);
    return 0;
}
