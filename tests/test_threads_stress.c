/* test_threads_stress.c -- linearizability of threads=mutex and threads=multi engines.
 *
 * For every registered policy and storage, and for threads=mutex, threads=multi and
 * threads=multi with a one-slot inbox (so arrivals overflow it all the time), several
 * arrival threads and several posting threads (posts with wildcards, probes, improbes,
 * cancels, removals; one context point-to-point, one a collective class) run on one engine
 * for a bounded time.  The engine's test hook
 * (vm_threads_set_hook) runs at the moment each operation takes effect, with the engine
 * held; it gives the operation an order token from one atomic counter.  Afterwards the whole
 * history, sorted by token, is replayed on the reference model (ref.c): every result must
 * be the model's, each thread's tokens must grow in its program order, and every deferred
 * arrival must have taken effect before the threads were joined (nothing left in the inbox).
 *
 * Environment: VMATCH_SEED (each thread's operations; printed, so a failing stream can be
 * rerun, though the interleaving of the threads is the scheduler's), VMATCH_THREADS_MS
 * (milliseconds per engine, default 120).
 */
/* clock_gettime and sched_yield are POSIX, outside strict C11. */
#define _POSIX_C_SOURCE 200809L

#include "check.h"
#include "module.h"
#include "ref.h"
#include "threads.h"
#include "vmatch.h"

#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { NARRIVE = 3, NPOSTER = 2, NTHREADS = NARRIVE + NPOSTER };
enum { MAX_OPS = 60000 };               /* per thread */
enum { NCTX = 2, NSRC = 64, NTAG = 6 }; /* many sources, tags that collide */
enum { BACKLOG = 600 }; /* arrivals ahead of posts (either way) before a side waits */
enum { OP_POST, OP_ARRIVE, OP_PROBE, OP_CANCEL, OP_REMOVE };

typedef struct rec {
    int kind, remove;
    vmatch_bits_t bits, care;
    void *target;   /* cancel: the post's record; remove: a message */
    int rc;         /* what the call returned */
    void *out;      /* its handle, when MATCHED */
    uint64_t token; /* written by the hook, with the engine held */
    int cb_rc;      /* a deferred arrival: what the callback said (0: nothing) */
    void *cb_req;
} rec_t;

typedef struct worker {
    struct shared *sh;
    int id;
    uint64_t seed;
    rec_t *recs;
    size_t n;
    pthread_t th;
} worker_t;

typedef struct shared {
    vmatch_engine_t *e;
    _Atomic uint64_t clock;  /* the order tokens */
    _Atomic int64_t backlog; /* arrivals minus posts */
    _Atomic int stop;
    uint32_t cls[NCTX]; /* context 1 carries a collective class, as MPI keeps them apart */
    worker_t w[NTHREADS];
} shared_t;

static _Thread_local rec_t *current; /* the calling thread's operation, for the hook */

static void hook(void *arg, void *deferred_msg)
{
    shared_t *sh = arg;
    rec_t *r = deferred_msg ? deferred_msg : current;
    r->token = atomic_fetch_add_explicit(&sh->clock, 1, memory_order_relaxed);
}

static void on_match(void *arg, int rc, void *msg, void *req)
{
    (void)arg;
    rec_t *r = msg;
    r->cb_rc = rc;
    r->cb_req = req;
}

static uint64_t rng(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

static uint32_t below(uint64_t *s, uint32_t n)
{
    return (uint32_t)((rng(s) >> 32) * n >> 32);
}

/* A source: a few hot ones, the rest spread over NSRC. */
static int32_t pick_src(uint64_t *s)
{
    return below(s, 2) ? (int32_t)below(s, 4) : (int32_t)below(s, NSRC);
}

static void *run_arrivals(void *arg)
{
    worker_t *w = arg;
    shared_t *sh = w->sh;
    while (!atomic_load(&sh->stop) && w->n < MAX_OPS) {
        if (atomic_load_explicit(&sh->backlog, memory_order_relaxed) > BACKLOG) {
            sched_yield();
            continue;
        }
        rec_t *r = current = &w->recs[w->n++];
        r->kind = OP_ARRIVE;
        uint32_t ctx = below(&w->seed, NCTX);
        r->bits =
            vmatch_mpi_msg(sh->e, ctx, pick_src(&w->seed), (int32_t)below(&w->seed, NTAG));
        r->rc = vmatch_arrive(sh->e, r->bits, sh->cls[ctx], r, &r->out);
        atomic_fetch_add_explicit(&sh->backlog, 1, memory_order_relaxed);
    }
    return NULL;
}

/* The handle of an earlier queued post of this thread (it may have matched since). */
static rec_t *earlier_post(worker_t *w)
{
    for (int tries = 0; tries < 4 && w->n > 1; tries++) {
        rec_t *r = &w->recs[below(&w->seed, (uint32_t)(w->n - 1))];
        if (r->kind == OP_POST && r->rc == VMATCH_QUEUED)
            return r;
    }
    return NULL;
}

static void *run_posts(void *arg)
{
    worker_t *w = arg;
    shared_t *sh = w->sh;
    void *seen = NULL; /* a message an iprobe found, to remove later */
    while (!atomic_load(&sh->stop) && w->n < MAX_OPS) {
        if (atomic_load_explicit(&sh->backlog, memory_order_relaxed) < -BACKLOG) {
            sched_yield();
            continue;
        }
        rec_t *r = current = &w->recs[w->n++];
        uint32_t p = below(&w->seed, 100);
        int32_t src = below(&w->seed, 4) ? pick_src(&w->seed) : VMATCH_ANY_SOURCE;
        int32_t tag = below(&w->seed, 4) ? (int32_t)below(&w->seed, NTAG) : VMATCH_ANY_TAG;
        uint32_t ctx = below(&w->seed, NCTX), cls = sh->cls[ctx];
        vmatch_mpi_recv(sh->e, ctx, src, tag, &r->bits, &r->care);
        rec_t *old;
        if (p < 80) {
            r->kind = OP_POST;
            r->rc = vmatch_post(sh->e, r->bits, r->care, cls, r, &r->out);
            atomic_fetch_sub_explicit(&sh->backlog, 1, memory_order_relaxed);
        } else if (p < 90) {
            r->kind = OP_PROBE;
            r->remove = p < 85;
            r->rc = vmatch_probe(sh->e, r->bits, r->care, cls, r->remove, &r->out);
            if (r->rc == VMATCH_MATCHED && !r->remove)
                seen = r->out;
        } else if (p < 95 && (old = earlier_post(w)) != NULL) {
            r->kind = OP_CANCEL;
            r->target = old;
            r->rc = vmatch_cancel(sh->e, old);
        } else if (seen) {
            r->kind = OP_REMOVE;
            r->target = seen;
            r->rc = vmatch_remove_unexpected(sh->e, seen);
            seen = NULL;
        } else {
            w->n--; /* nothing to cancel or remove: no operation */
        }
    }
    return NULL;
}

static int by_token(const void *a, const void *b)
{
    uint64_t x = (*(rec_t *const *)a)->token, y = (*(rec_t *const *)b)->token;
    return x < y ? -1 : x > y;
}

/* Replay the history on the model; 1 when every result agrees. */
static int replay(shared_t *sh, const char *spec, uint64_t *deferred)
{
    size_t total = 0, k = 0;
    for (int i = 0; i < NTHREADS; i++) {
        worker_t *w = &sh->w[i];
        uint64_t last = 0;
        for (size_t j = 0; j < w->n; j++) {
            if (!w->recs[j].token) {
                fprintf(stderr, "%s: thread %d op %zu never took effect\n", spec, i, j);
                return 0;
            }
            if (w->recs[j].token <= last) {
                fprintf(stderr, "%s: thread %d op %zu took effect before its predecessor\n",
                        spec, i, j);
                return 0;
            }
            last = w->recs[j].token;
        }
        total += w->n;
    }
    rec_t **all = malloc((total ? total : 1) * sizeof *all);
    REQUIRE(all);
    for (int i = 0; i < NTHREADS; i++)
        for (size_t j = 0; j < sh->w[i].n; j++)
            all[k++] = &sh->w[i].recs[j];
    qsort(all, total, sizeof *all, by_token);
    ref_model_t m;
    ref_init(&m);
    int ok = 1;
    for (k = 0; k < total && ok; k++) {
        rec_t *r = all[k];
        void *out = NULL;
        int rc = 0, got = r->rc;
        void *got_out = r->out;
        switch (r->kind) {
        case OP_POST:
            rc = ref_post(&m, r->bits, r->care, r, &out);
            break;
        case OP_ARRIVE:
            rc = ref_arrive(&m, r->bits, r, &out);
            if (got == VMATCH_DEFERRED) { /* the callback's word, or queued */
                ++*deferred;
                got = r->cb_rc ? r->cb_rc : VMATCH_QUEUED;
                got_out = r->cb_req;
            }
            break;
        case OP_PROBE:
            rc = ref_probe(&m, r->bits, r->care, r->remove, &out);
            break;
        case OP_CANCEL:
            rc = ref_cancel(&m, r->target);
            break;
        case OP_REMOVE:
            rc = ref_remove_unexpected(&m, r->target);
            break;
        }
        if (rc != got || (rc == VMATCH_MATCHED && out != got_out)) {
            fprintf(stderr,
                    "%s: token %" PRIu64 " (kind %d): engine %d %p, serial order %d %p\n", spec,
                    r->token, r->kind, got, got_out, rc, out);
            ok = 0;
        }
    }
    vmatch_stats_t st;
    vmatch_stats(sh->e, &st);
    if (ok && (st.posted != ref_posted(&m) || st.unexpected != ref_unexpected(&m))) {
        fprintf(stderr, "%s: engine ends with %" PRIu64 "/%" PRIu64 " entries, model %zu/%zu\n",
                spec, st.posted, st.unexpected, ref_posted(&m), ref_unexpected(&m));
        ok = 0;
    }
    ref_fini(&m);
    free(all);
    return ok;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* One engine: the threads for ms milliseconds, then the replay. */
static void stress(const char *spec, int multi, uint64_t seed, unsigned ms)
{
    static shared_t sh;
    memset(&sh, 0, sizeof sh);
    atomic_init(&sh.clock, 1);
    int rc = vmatch_create(spec, &sh.e);
    if (rc == VMATCH_EUNSUPPORTED) {
        printf("test_threads_stress: %s skipped: %s\n", spec, vmatch_last_error());
        return;
    }
    if (rc != VMATCH_OK)
        fprintf(stderr, "%s: %s\n", spec, vmatch_last_error());
    REQUIRE(rc == VMATCH_OK);
    vm_threads_set_hook(sh.e, hook, &sh);
    sh.cls[1] = vmatch_coll_class(sh.e, VMATCH_COLL_ALLREDUCE, 4096, NSRC);
    if (multi)
        CHECK_EQ(vmatch_on_match(sh.e, on_match, NULL), VMATCH_OK);
    for (int i = 0; i < NTHREADS; i++) {
        worker_t *w = &sh.w[i];
        w->sh = &sh;
        w->id = i;
        w->seed = seed * 0x100000001b3u + (uint64_t)i;
        w->recs = calloc(MAX_OPS, sizeof *w->recs);
        REQUIRE(w->recs);
        REQUIRE(pthread_create(&w->th, NULL, i < NARRIVE ? run_arrivals : run_posts, w) == 0);
    }
    double t0 = now();
    struct timespec nap = {0, 1000000};
    while ((now() - t0) * 1000 < ms)
        nanosleep(&nap, NULL);
    atomic_store(&sh.stop, 1);
    for (int i = 0; i < NTHREADS; i++)
        pthread_join(sh.w[i].th, NULL);
    /* Every call has returned: the hand-off left nothing in the inbox. */
    if (multi)
        CHECK_EQ(vm_inbox_pending(&sh.e->threads->inbox), 0);
    uint64_t deferred = 0, ops = 0;
    int ok = replay(&sh, spec, &deferred);
    CHECK(ok);
    CHECK_EQ(vmatch_progress(sh.e), 0); /* the hand-off left nothing behind */
    for (int i = 0; i < NTHREADS; i++) {
        ops += sh.w[i].n;
        free(sh.w[i].recs);
    }
    printf("test_threads_stress: %-58s %s: %7" PRIu64 " ops, %6" PRIu64 " deferred\n", spec,
           ok ? "linearizable" : "NOT LINEARIZABLE", ops, deferred);
    vmatch_destroy(sh.e);
}

/* A profile with skewed counts over NSRC sources, for the policies that read one. */
static void write_profile(const char *path)
{
    FILE *f = fopen(path, "w");
    REQUIRE(f);
    fprintf(f, "vmatch-profile 1\nlayout 16 24 24\nnprocs %d\n", NSRC);
    for (int c = 0; c < NCTX; c++)
        for (int s = 0; s < NSRC; s++)
            fprintf(f, "%d %d %d %d\n", c, s, s < 4 ? 5000 : 10 + s, s < 4 ? 4000 : 5 + s);
    REQUIRE(fclose(f) == 0);
}

int main(void)
{
    const char *env = getenv("VMATCH_SEED");
    uint64_t seed = env ? strtoull(env, NULL, 0) : (uint64_t)time(NULL);
    env = getenv("VMATCH_THREADS_MS");
    unsigned ms = env ? (unsigned)strtoul(env, NULL, 0) : 120;
    printf("test_threads_stress: VMATCH_SEED=0x%" PRIx64 " VMATCH_THREADS_MS=%u\n", seed, ms);
    const char *profile = "test_threads_stress.profile";
    write_profile(profile);
    static const struct {
        const char *spec;
        int multi;
    } modes[] = {
        {"threads=mutex", 0}, {"threads=multi", 1}, {"threads=multi threads.inbox=1", 1}};
    const vm_policy_t *p;
    for (unsigned i = 0; (p = vm_policy_at(i)) != NULL; i++) {
        const vm_storage_t *s;
        for (unsigned j = 0; (s = vm_storage_at(j)) != NULL; j++)
            for (unsigned k = 0; k < sizeof modes / sizeof *modes; k++) {
                char spec[256];
                snprintf(spec, sizeof spec, "policy=%s storage=%s nprocs=%d profile=%s %s",
                         p->name, s->name, NSRC, profile, modes[k].spec);
                stress(spec, modes[k].multi, seed + i * 131 + j * 17 + k, ms);
            }
    }
    remove(profile);
    return check_report("test_threads_stress");
}
