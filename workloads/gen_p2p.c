/* gen_p2p.c -- point-to-point workloads: the hot-spot gather, sparse neighbours,
 * master/worker with wildcards, and point-to-point mixed with collectives. */
#include "gen_internal.h"

#include "vmatch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const order_names[] = {"reverse", "random", "rr", NULL};
static const char *const topo_names[] = {"stencil", "random", NULL};

/* ---- hot-spot gather (the FDS pattern) ----
 * P-1 peers each send m messages (tags 0..m-1) to rank 0, peer after peer in rank order.
 * Rank 0 posts one receive per message in another order: reverse (the exact reverse of the
 * arrivals: every search runs to the far end), random, or rr (per-peer round robin: tag 0
 * of every peer, then tag 1, ...).  `early` percent of the messages arrive before the first
 * receive is posted; the rest arrive after all receives are posted (interleave=0) or mixed
 * at random with the posts (interleave=1).  The gather repeats `iters` times, as FDS gathers
 * at every time step (the order is drawn again each time); an iteration ends with both
 * queues empty. */
enum { GA_P, GA_M, GA_ORDER, GA_EARLY, GA_INTERLEAVE, GA_ITERS, GA_SEED, GA_N };
static const wl_pdef_t gather_params[GA_N] = {
    [GA_P] = {"P", 256, 2, 1 << 20, NULL},           [GA_M] = {"m", 8, 1, 100000, NULL},
    [GA_ORDER] = {"order", 1, 0, 2, order_names},    [GA_EARLY] = {"early", 0, 0, 100, NULL},
    [GA_INTERLEAVE] = {"interleave", 1, 0, 1, NULL}, [GA_ITERS] = {"iters", 1, 1, 1000, NULL},
    [GA_SEED] = {"seed", 1, 0, 1LL << 62, NULL},
};

static int gen_gather(wl_gen_ctx_t *g, const wl_gen_t *self, const long long *v, char *err,
                      size_t errlen)
{
    (void)self;
    uint32_t P = (uint32_t)v[GA_P], m = (uint32_t)v[GA_M];
    uint64_t n = (uint64_t)(P - 1) * m, iters = (uint64_t)v[GA_ITERS];
    if (2 * n * iters > VM_WL_MAX_OPS) {
        snprintf(err, errlen, "gather: (P-1)*m*iters = %llu messages is too many",
                 (unsigned long long)(n * iters));
        return VMATCH_EINVAL;
    }
    int rc = wl_setup(g, (uint64_t)v[GA_SEED], P);
    if (rc)
        return rc;
    /* Message i of the arrival order is (peer 1 + i / m, tag i % m); post order holds the
     * message index each receive is for. */
    uint32_t *order = malloc(n * sizeof *order);
    if (!order)
        return VMATCH_ENOMEM;
    vm_trace_t *t = g->t;
    for (uint64_t it = 0; it < iters; it++) {
        for (uint32_t i = 0; i < n; i++) {
            switch (v[GA_ORDER]) {
            case 0: /* reverse */
                order[i] = (uint32_t)(n - 1 - i);
                break;
            case 2: /* round robin: receive i is for tag i / (P-1) of peer 1 + i % (P-1) */
                order[i] = (i % (P - 1)) * m + i / (P - 1);
                break;
            default:
                order[i] = i;
                break;
            }
        }
        if (v[GA_ORDER] == 1)
            wl_shuffle(g, order, n);
        uint64_t early = (n * (uint64_t)v[GA_EARLY] + 50) / 100, a = 0, p = 0;
        for (; a < early; a++)
            vm_trace_arrive(t, 0, (int32_t)(1 + a / m), (int32_t)(a % m), 0);
        while (a < n || p < n) {
            /* Interleaved: the next event is an arrival with probability (arrivals left) /
             * (events left); otherwise every receive goes first. */
            int arrival =
                p == n || (v[GA_INTERLEAVE] &&
                           wl_below(g, (uint32_t)(2 * n - a - p)) < (uint32_t)(n - a));
            if (arrival) {
                vm_trace_arrive(t, 0, (int32_t)(1 + a / m), (int32_t)(a % m), 0);
                a++;
            } else {
                uint32_t i = order[p++];
                vm_trace_post(t, 0, (int32_t)(1 + i / m), (int32_t)(i % m), 0);
            }
        }
    }
    free(order);
    return 0;
}

/* ---- sparse neighbours (AMG2006 / LAMMPS-like halo exchange) ---- */

/** The partners of rank r: the 6, 18 or 26 neighbours in a periodic 3-D grid of P ranks
 * (dimensions as close to a cube as P allows), or k distinct random ranks.  Duplicates and
 * r itself are dropped (small grids wrap onto the same rank).  Returns the count. */
static uint32_t partners_of(wl_gen_ctx_t *g, uint32_t P, uint32_t r, int topo, uint32_t k,
                            uint32_t *out)
{
    uint32_t n = 0;
    if (topo == 1) { /* random */
        if (k > P - 1)
            k = P - 1;
        while (n < k) {
            uint32_t q = wl_below(g, P), dup = q == r;
            for (uint32_t i = 0; i < n && !dup; i++)
                dup = out[i] == q;
            if (!dup)
                out[n++] = q;
        }
        return n;
    }
    uint32_t best[3] = {1, 1, P};
    for (uint32_t a = 1; a * a * a <= P; a++) {
        if (P % a)
            continue;
        for (uint32_t b = a; a * b * b <= P; b++)
            if ((P / a) % b == 0) {
                uint32_t c = P / a / b;
                if (c - a < best[2] - best[0]) {
                    best[0] = a;
                    best[1] = b;
                    best[2] = c;
                }
            }
    }
    int x = (int)(r % best[0]), y = (int)(r / best[0] % best[1]),
        z = (int)(r / best[0] / best[1]);
    for (int dz = -1; dz <= 1; dz++)
        for (int dy = -1; dy <= 1; dy++)
            for (int dx = -1; dx <= 1; dx++) {
                int nz = (dx != 0) + (dy != 0) + (dz != 0);
                /* 6: faces (one coordinate moves), 18: and edges, 26: and corners. */
                if (nz == 0 || (k == 6 && nz > 1) || (k == 18 && nz > 2))
                    continue;
                uint32_t qx = (uint32_t)(x + dx + (int)best[0]) % best[0];
                uint32_t qy = (uint32_t)(y + dy + (int)best[1]) % best[1];
                uint32_t qz = (uint32_t)(z + dz + (int)best[2]) % best[2];
                uint32_t q = qx + best[0] * (qy + best[1] * qz), dup = q == r;
                for (uint32_t i = 0; i < n && !dup; i++)
                    dup = out[i] == q;
                if (!dup)
                    out[n++] = q;
            }
    return n;
}

/** One halo-exchange step starting at T: the rank posts msgs receives per partner (tags
 * 0..msgs-1, partner by partner) and every partner's messages arrive, the partner running
 * ahead or behind by its offset for this step.  Returns the time the step ends. */
static int64_t halo_step(wl_gen_ctx_t *g, int64_t T, const uint32_t *partners, uint32_t np,
                         uint32_t msgs, uint64_t step, int64_t skew)
{
    int64_t t = T, end = T;
    for (uint32_t i = 0; i < np; i++)
        for (uint32_t j = 0; j < msgs; j++) {
            wl_post(g, t, VM_WL_CTX_P2P, (int32_t)partners[i], (int32_t)j, 0);
            t += WL_POST;
        }
    for (uint32_t i = 0; i < np; i++) {
        int64_t at = T + WL_LAT + wl_offset(g, step, partners[i], skew);
        for (uint32_t j = 0; j < msgs; j++)
            end = wl_max(end, wl_arrive(g, at + (int64_t)j * WL_POST, VM_WL_CTX_P2P,
                                        (int32_t)partners[i], (int32_t)j, 0));
    }
    return wl_max(end, t) + WL_WORK;
}

enum { NB_P, NB_K, NB_TOPO, NB_MSGS, NB_STEPS, NB_SKEW, NB_RANK, NB_SEED, NB_N };
static const wl_pdef_t nb_params[NB_N] = {
    [NB_P] = {"P", 512, 2, 1 << 20, NULL},
    [NB_K] = {"k", 26, 1, 64, NULL},
    [NB_TOPO] = {"topo", 0, 0, 1, topo_names},
    [NB_MSGS] = {"msgs", 2, 1, 64, NULL},
    [NB_STEPS] = {"steps", 100, 1, 1000000, NULL},
    [NB_SKEW] = {"skew", 50, 0, 1000, NULL},
    [NB_RANK] = {"rank", -1, -1, (1 << 20) - 1, NULL},
    [NB_SEED] = {"seed", 1, 0, 1LL << 62, NULL},
};

/** Check k against the topology and the rank against P. */
static int nb_check(const char *name, const long long *v, int kk, int ktopo, int krank,
                    char *err, size_t errlen)
{
    if (v[ktopo] == 0 && v[kk] != 6 && v[kk] != 18 && v[kk] != 26) {
        snprintf(err, errlen, "%s: topo=stencil takes k=6, 18 or 26 (got %lld)", name, v[kk]);
        return VMATCH_EINVAL;
    }
    if (v[krank] >= v[0]) {
        snprintf(err, errlen, "%s: rank %lld is not below P=%lld", name, v[krank], v[0]);
        return VMATCH_EINVAL;
    }
    return 0;
}

static int gen_neighbours(wl_gen_ctx_t *g, const wl_gen_t *self, const long long *v, char *err,
                          size_t errlen)
{
    int rc = nb_check(self->name, v, NB_K, NB_TOPO, NB_RANK, err, errlen);
    uint32_t P = (uint32_t)v[NB_P], partners[64];
    if (rc || (rc = wl_setup(g, (uint64_t)v[NB_SEED], P)))
        return rc;
    uint32_t r = v[NB_RANK] < 0 ? P / 2 : (uint32_t)v[NB_RANK];
    uint32_t np = partners_of(g, P, r, (int)v[NB_TOPO], (uint32_t)v[NB_K], partners);
    int64_t T = WL_T0, skew = v[NB_SKEW] * WL_STEP / 100;
    uint64_t steps = (uint64_t)v[NB_STEPS];
    for (uint64_t s = 0; s < steps && !wl_over_budget(g, s, steps); s++)
        T = halo_step(g, T, partners, np, (uint32_t)v[NB_MSGS], s, skew);
    return 0;
}

/* ---- master/worker with wildcards ----
 * Rank 0 hands out tasks to P-1 workers and keeps `depth` receives posted for their
 * replies: RESULT messages (tag 1) and now and then STATUS messages (tag 2).  Its receives
 * are (ANY_SOURCE, RESULT), (ANY_SOURCE, ANY_TAG), (worker, ANY_TAG) when it waits for one
 * worker, or exact; it reposts as receives complete, and sometimes polls with MPI_Iprobe
 * (ANY_SOURCE, ANY_TAG) or takes a STATUS message with MPI_Improbe.  Replies come from
 * random workers, faster than the master posts at times, so both queues move.  At the end
 * the master cancels its outstanding receives, receives the RESULTs still unexpected and
 * drops the stale STATUS messages (remove).  A small model of the queues decides which
 * receives are still outstanding. */
enum { MW_P, MW_TASKS, MW_DEPTH, MW_STATUS, MW_PROBE, MW_RATE, MW_SEED, MW_N };
static const wl_pdef_t mw_params[MW_N] = {
    [MW_P] = {"P", 64, 2, 1 << 20, NULL},
    [MW_TASKS] = {"tasks", 20000, 1, 4000000, NULL},
    [MW_DEPTH] = {"depth", 16, 1, 4096, NULL},
    [MW_STATUS] = {"status", 10, 0, 100, NULL},
    [MW_PROBE] = {"probe", 10, 0, 100, NULL},
    [MW_RATE] = {"rate", 45, 1, 99, NULL},
    [MW_SEED] = {"seed", 1, 0, 1LL << 62, NULL},
};

enum { TAG_RESULT = 1, TAG_STATUS = 2 };

/* The model: one ordered list per side, MPI terms, one context. */
typedef struct mw_entry {
    int32_t src, tag;
    uint32_t id;
} mw_entry_t;
typedef struct mw_list {
    mw_entry_t *v;
    size_t n, cap;
} mw_list_t;

static int mw_push(mw_list_t *l, int32_t src, int32_t tag, uint32_t id)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 64;
        mw_entry_t *v = realloc(l->v, cap * sizeof *v);
        if (!v)
            return -1;
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = (mw_entry_t){src, tag, id};
    return 0;
}

/** Index of the first entry a receive (src, tag) and a message (msrc, mtag) match in. */
static size_t mw_find(const mw_list_t *l, int32_t src, int32_t tag, int recv_side)
{
    for (size_t i = 0; i < l->n; i++) {
        int32_t rs = recv_side ? l->v[i].src : src, rt = recv_side ? l->v[i].tag : tag;
        int32_t ms = recv_side ? src : l->v[i].src, mt = recv_side ? tag : l->v[i].tag;
        if ((rs == ms || rs == VM_TRACE_ANY) && (rt == mt || rt == VM_TRACE_ANY))
            return i;
    }
    return l->n;
}

static void mw_erase(mw_list_t *l, size_t i)
{
    memmove(&l->v[i], &l->v[i + 1], (l->n - i - 1) * sizeof *l->v);
    l->n--;
}

static int gen_master(wl_gen_ctx_t *g, const wl_gen_t *self, const long long *v, char *err,
                      size_t errlen)
{
    (void)self, (void)err, (void)errlen;
    uint32_t P = (uint32_t)v[MW_P];
    int rc = wl_setup(g, (uint64_t)v[MW_SEED], P);
    if (rc)
        return rc;
    vm_trace_t *t = g->t;
    mw_list_t prq = {0}, umq = {0};
    uint64_t arrived = 0;
    /* At most about three operations per task: tasks <= 4M keeps it below VM_WL_MAX_OPS. */
    while (arrived < (uint64_t)v[MW_TASKS] && !t->failed) {
        if (wl_below(g, 100) < (uint32_t)v[MW_RATE]) {
            int32_t w = (int32_t)(1 + wl_below(g, P - 1));
            int32_t tag = wl_below(g, 100) < (uint32_t)v[MW_STATUS] ? TAG_STATUS : TAG_RESULT;
            uint32_t id = vm_trace_arrive(t, 0, w, tag, 0);
            size_t i = mw_find(&prq, w, tag, 1);
            if (i < prq.n)
                mw_erase(&prq, i);
            else if (mw_push(&umq, w, tag, id))
                goto oom;
            arrived++;
        } else if (prq.n < (size_t)v[MW_DEPTH]) {
            uint32_t u = wl_below(g, 100);
            int32_t w = (int32_t)(1 + wl_below(g, P - 1));
            int32_t src = u < 70 ? VM_TRACE_ANY : w;
            int32_t tag = u < 45 || u >= 85 ? TAG_RESULT : VM_TRACE_ANY;
            uint32_t id = vm_trace_post(t, 0, src, tag, 0);
            size_t i = mw_find(&umq, src, tag, 0);
            if (i < umq.n)
                mw_erase(&umq, i);
            else if (mw_push(&prq, src, tag, id))
                goto oom;
        } else if (wl_below(g, 100) < (uint32_t)v[MW_PROBE]) {
            int improbe = wl_below(g, 2);
            int32_t tag = improbe ? TAG_STATUS : VM_TRACE_ANY;
            vm_trace_probe(t, 0, VM_TRACE_ANY, tag, 0, improbe);
            size_t i = mw_find(&umq, VM_TRACE_ANY, tag, 0);
            if (improbe && i < umq.n)
                mw_erase(&umq, i);
        }
    }
    /* Shutdown: cancel what is still posted, then take or drop what is still unexpected. */
    for (size_t i = 0; i < prq.n; i++)
        vm_trace_cancel(t, prq.v[i].id);
    while (umq.n) {
        if (umq.v[0].tag == TAG_STATUS) {
            vm_trace_remove(t, umq.v[0].id);
            mw_erase(&umq, 0);
        } else {
            /* An exact receive takes the oldest RESULT of that worker: the head. */
            vm_trace_post(t, 0, umq.v[0].src, TAG_RESULT, 0);
            mw_erase(&umq, mw_find(&umq, umq.v[0].src, TAG_RESULT, 0));
        }
    }
    free(prq.v);
    free(umq.v);
    return 0;
oom:
    free(prq.v);
    free(umq.v);
    return VMATCH_ENOMEM;
}

/* ---- mixed: point-to-point and collectives interleaved ----
 * Each step is a halo exchange with the neighbours (context 0), an MPI_Allreduce of `bytes`
 * by recursive doubling (context 1), every `bcast` steps an MPI_Bcast of 64 KiB down a
 * binomial tree, every `gather` steps a linear MPI_Gather of 8 bytes rooted at the rank,
 * every `alltoall` steps a linear MPI_Alltoall of 8 bytes, and in `any` percent of the steps
 * an MPI_ANY_SOURCE control receive that one partner answers: the unified design's case of
 * both kinds of traffic in one process. */
enum {
    MX_P,
    MX_K,
    MX_TOPO,
    MX_MSGS,
    MX_STEPS,
    MX_BYTES,
    MX_BCAST,
    MX_ANY,
    MX_GATHER,
    MX_ALLTOALL,
    MX_SKEW,
    MX_RANK,
    MX_SEED,
    MX_N
};
static const wl_pdef_t mx_params[MX_N] = {
    [MX_P] = {"P", 256, 2, 1 << 20, NULL},
    [MX_K] = {"k", 6, 1, 64, NULL},
    [MX_TOPO] = {"topo", 0, 0, 1, topo_names},
    [MX_MSGS] = {"msgs", 2, 1, 64, NULL},
    [MX_STEPS] = {"steps", 100, 1, 1000000, NULL},
    [MX_BYTES] = {"bytes", 8, 0, 1LL << 40, NULL},
    [MX_BCAST] = {"bcast", 5, 0, 1000000, NULL},
    [MX_ANY] = {"any", 20, 0, 100, NULL},
    [MX_GATHER] = {"gather", 0, 0, 1000000, NULL},
    [MX_ALLTOALL] = {"alltoall", 0, 0, 1000000, NULL},
    [MX_SKEW] = {"skew", 50, 0, 1000, NULL},
    [MX_RANK] = {"rank", -1, -1, (1 << 20) - 1, NULL},
    [MX_SEED] = {"seed", 1, 0, 1LL << 62, NULL},
};

enum { TAG_CONTROL = 99, BCAST_BYTES = 65536 };

static int gen_mixed(wl_gen_ctx_t *g, const wl_gen_t *self, const long long *v, char *err,
                     size_t errlen)
{
    int rc = nb_check(self->name, v, MX_K, MX_TOPO, MX_RANK, err, errlen);
    uint32_t P = (uint32_t)v[MX_P], partners[64];
    if (rc || (rc = wl_setup(g, (uint64_t)v[MX_SEED], P)))
        return rc;
    uint32_t r = v[MX_RANK] < 0 ? P / 2 : (uint32_t)v[MX_RANK];
    uint32_t np = partners_of(g, P, r, (int)v[MX_TOPO], (uint32_t)v[MX_K], partners);
    int64_t T = WL_T0, skew = v[MX_SKEW] * WL_STEP / 100;
    wl_coll_t ar = {g, P, r, (uint64_t)v[MX_BYTES], 0, VMATCH_COLL_ALLREDUCE, 0, skew, 0, 0};
    wl_coll_t bc = {g, P, r, BCAST_BYTES, 0, VMATCH_COLL_BCAST, 0, skew, 0, 0};
    ar.cls = vm_trace_class(g->t, VMATCH_COLL_ALLREDUCE, ar.bytes, P);
    bc.cls = vm_trace_class(g->t, VMATCH_COLL_BCAST, bc.bytes, P);
    /* Rank 0 of the gather is its root: this rank, in the gather's own numbering. */
    wl_coll_t ga = {g, P, 0, 8, 0, VMATCH_COLL_GATHER, 0, skew, 0, 0};
    wl_coll_t aa = {g, P, r, 8, 0, VMATCH_COLL_ALLTOALL, 0, skew, 0, 0};
    if (v[MX_GATHER]) /* only then: the other traces keep their class tables */
        ga.cls = vm_trace_class(g->t, VMATCH_COLL_GATHER, ga.bytes, P);
    if (v[MX_ALLTOALL])
        aa.cls = vm_trace_class(g->t, VMATCH_COLL_ALLTOALL, aa.bytes, P);
    uint64_t steps = (uint64_t)v[MX_STEPS];
    for (uint64_t s = 0; s < steps && !wl_over_budget(g, s, steps); s++) {
        if (np && wl_below(g, 100) < (uint32_t)v[MX_ANY]) {
            uint32_t q = partners[wl_below(g, np)];
            wl_post(g, T, VM_WL_CTX_P2P, VM_TRACE_ANY, TAG_CONTROL, 0);
            wl_arrive(g, T + WL_LAT + wl_offset(g, s + (1u << 31), q, skew), VM_WL_CTX_P2P,
                      (int32_t)q, TAG_CONTROL, 0);
        }
        T = halo_step(g, T, partners, np, (uint32_t)v[MX_MSGS], s, skew);
        ar.call = s;
        T = wl_allreduce_rd(&ar, T);
        if (v[MX_BCAST] && s % (uint64_t)v[MX_BCAST] == 0) {
            bc.call = s;
            T = wl_bcast_binomial(&bc, T);
        }
        if (v[MX_GATHER] && s % (uint64_t)v[MX_GATHER] == 0) {
            ga.call = s;
            T = wl_gather_linear(&ga, T);
        }
        if (v[MX_ALLTOALL] && s % (uint64_t)v[MX_ALLTOALL] == 0) {
            aa.call = s;
            T = wl_alltoall_linear(&aa, T);
        }
    }
    return 0;
}

const wl_gen_t wl_p2p_gens[] = {
    {"gather",
     "hot-spot gather (FDS): P-1 peers send m messages each to rank 0, which posts "
     "its receives in another order",
     gather_params, GA_N, gen_gather, NULL},
    {"neighbours",
     "sparse neighbours (AMG2006, LAMMPS): halo exchanges with 6-26 partners, "
     "several messages each, step after step",
     nb_params, NB_N, gen_neighbours, NULL},
    {"master",
     "master/worker: replies taken with ANY_SOURCE, ANY_TAG or both, probes, "
     "cancels at shutdown",
     mw_params, MW_N, gen_master, NULL},
    {"mixed",
     "point-to-point halo exchanges interleaved with allreduce, bcast and wildcard "
     "control messages",
     mx_params, MX_N, gen_mixed, NULL},
};
const size_t wl_n_p2p_gens = sizeof wl_p2p_gens / sizeof *wl_p2p_gens;
