/* gen_coll.c -- collective algorithms as the receive queues of one rank see them (the
 * point-to-point patterns of Pjesivac-Grbovic 2007, section 4.1.2, and the recursive
 * multiplying schedules of Ruefenacht et al. 2017 / Ruefenacht 2020, ch. 4-5).
 *
 * Each algorithm schedules one call at the chosen rank: the receives it posts, in its
 * program order and where it waits, and the messages its peers send it.  Peer q's messages
 * of step j leave q at the call's start plus q's offset plus j steps and arrive a latency
 * later; the rank moves to its next step when the message it waits for has arrived.
 * Back-to-back calls start where the previous one ended, so a peer that runs ahead may
 * already send for the next call.  All traffic is on the collective context with the tag
 * of the operation (MPI libraries use one tag per collective), so matching relies on order.
 */
#include "gen_internal.h"

#include "vmatch.h"

#include <stdio.h>

/** The time a message peer q sends at its step j reaches the rank. */
static int64_t sent_at(const wl_coll_t *c, int64_t T, uint32_t q, int64_t step)
{
    return T + wl_offset(c->g, c->call, q, c->skew) + step * WL_STEP + WL_LAT;
}

/** Post a receive from q at time t and wait for q's message sent at its step j; returns
 * when the rank may go on. */
static int64_t recv_wait(wl_coll_t *c, int64_t t, int64_t T, uint32_t q, int64_t step)
{
    wl_post(c->g, t, VM_WL_CTX_COLL, (int32_t)q, c->tag, c->cls);
    int64_t at =
        wl_arrive(c->g, sent_at(c, T, q, step), VM_WL_CTX_COLL, (int32_t)q, c->tag, c->cls);
    return wl_max(t + WL_POST, at) + WL_WORK;
}

static uint32_t log2_floor(uint32_t x)
{
    uint32_t l = 0;
    while (x >>= 1)
        l++;
    return l;
}

/* ---- gather ---- */

/* Linear (without synchronization): the root posts a receive for every other rank, in rank
 * order, then waits for all; the others only send. */
int64_t wl_gather_linear(wl_coll_t *c, int64_t T)
{
    if (c->rank != 0)
        return T + WL_STEP;
    int64_t end = T;
    for (uint32_t q = 1; q < c->P; q++) {
        wl_post(c->g, T + (int64_t)q * WL_POST, VM_WL_CTX_COLL, (int32_t)q, c->tag, c->cls);
        end = wl_max(end, wl_arrive(c->g, sent_at(c, T, q, 0), VM_WL_CTX_COLL, (int32_t)q,
                                    c->tag, c->cls));
    }
    return wl_max(end, T + (int64_t)c->P * WL_POST) + WL_WORK;
}

/* Binomial (root 0): a rank receives from its children r + 2^k, k rising, each child
 * sending once its own subtree (k levels) is gathered; blocking receives in that order. */
static int64_t gather_binomial(wl_coll_t *c, int64_t T)
{
    int64_t t = T;
    for (uint32_t mask = 1, k = 0; mask < c->P; mask <<= 1, k++) {
        if (c->rank & mask)
            break; /* the rank sends to its parent and is done */
        if (c->rank + mask < c->P)
            t = recv_wait(c, t, T, c->rank + mask, k);
    }
    return t;
}

/* ---- broadcast ---- */

/* Binomial (root 0): the rank receives once from its parent r - lowbit(r), which got the
 * data popcount(parent) hops from the root; the receive is posted when the call starts. */
static int64_t bcast_binomial_impl(wl_coll_t *c, int64_t T)
{
    if (c->rank == 0)
        return T + WL_STEP;
    uint32_t parent = c->rank & (c->rank - 1);
    return recv_wait(c, T, T, parent, __builtin_popcount(parent) + 1);
}

int64_t wl_bcast_binomial(wl_coll_t *c, int64_t T)
{
    return bcast_binomial_impl(c, T);
}

/* Pipelined (a chain 0 -> 1 -> ... -> P-1): the data travels in segments of `seg` bytes;
 * the rank keeps one receive ahead: it posts segment 0 and 1, and posts segment i+1 once it
 * has waited for segment i-1.  Its predecessor's segments follow each other a quarter step
 * apart. */
static int64_t bcast_pipeline(wl_coll_t *c, int64_t T)
{
    if (c->rank == 0)
        return T + WL_STEP;
    uint64_t seg = c->seg ? c->seg : 1, nseg = c->bytes / seg + (c->bytes % seg != 0);
    if (nseg == 0)
        nseg = 1;
    uint32_t q = c->rank - 1;
    int64_t first = T + wl_offset(c->g, c->call, q, c->skew) + (int64_t)c->rank * WL_LAT;
    int64_t t = T, done = T;
    for (uint64_t i = 0; i < nseg; i++) {
        wl_post(c->g, t, VM_WL_CTX_COLL, (int32_t)q, c->tag, c->cls);
        int64_t at = wl_arrive(c->g, first + (int64_t)i * WL_SEGMENT, VM_WL_CTX_COLL,
                               (int32_t)q, c->tag, c->cls);
        /* The next receive goes out right away for segment 1, later after a wait. */
        t = i == 0 ? t + WL_POST : wl_max(t + WL_POST, done);
        done = wl_max(done, at) + WL_POST;
    }
    return done + WL_WORK;
}

/* ---- allreduce ---- */

/* MPICH's fold to a power of two: with rem = P - pof2, ranks below 2*rem pair up, the even
 * one hands its data to the odd one and waits for the result at the end.  Returns the
 * rank's id among the pof2 (-1: folded away); *t advances past the pre-step. */
static int32_t fold_pre(wl_coll_t *c, int64_t *t, int64_t T, uint32_t pof2)
{
    uint32_t rem = c->P - pof2;
    if (c->rank >= 2 * rem)
        return (int32_t)(c->rank - rem);
    if (c->rank % 2 == 0)
        return -1;
    *t = recv_wait(c, *t, T, c->rank - 1, 0);
    return (int32_t)(c->rank / 2);
}

/** The real rank of id `v` among the pof2 after the fold. */
static uint32_t fold_real(const wl_coll_t *c, uint32_t pof2, uint32_t v)
{
    uint32_t rem = c->P - pof2;
    return v < rem ? 2 * v + 1 : v + rem;
}

/* The post-step: an even rank folded away receives the result from rank + 1. */
static int64_t fold_post(wl_coll_t *c, int64_t t, int64_t T, int32_t id, int64_t steps)
{
    if (id >= 0)
        return t;
    return recv_wait(c, t + WL_POST, T, c->rank + 1, steps);
}

/* Recursive doubling: at step k exchange with id ^ 2^k. */
int64_t wl_allreduce_rd(wl_coll_t *c, int64_t T)
{
    uint32_t pof2 = 1u << log2_floor(c->P), pre = c->P != pof2;
    int64_t t = T;
    int32_t id = fold_pre(c, &t, T, pof2);
    int64_t step = pre;
    for (uint32_t mask = 1; id >= 0 && mask < pof2; mask <<= 1, step++)
        t = recv_wait(c, t, T, fold_real(c, pof2, (uint32_t)id ^ mask), step);
    return fold_post(c, t, T, id, (int64_t)log2_floor(pof2) + 1);
}

/* Rabenseifner: a reduce-scatter by recursive halving (partners id ^ 1, ^ 2, ...), then an
 * allgather by recursive doubling (partners id ^ pof2/2, ..., ^ 1). */
static int64_t allreduce_rab(wl_coll_t *c, int64_t T)
{
    uint32_t pof2 = 1u << log2_floor(c->P), pre = c->P != pof2;
    int64_t t = T;
    int32_t id = fold_pre(c, &t, T, pof2);
    int64_t step = pre;
    for (uint32_t mask = 1; id >= 0 && mask < pof2; mask <<= 1, step++)
        t = recv_wait(c, t, T, fold_real(c, pof2, (uint32_t)id ^ mask), step);
    for (uint32_t mask = pof2 >> 1; id >= 0 && mask > 0; mask >>= 1, step++)
        t = recv_wait(c, t, T, fold_real(c, pof2, (uint32_t)id ^ mask), step);
    return fold_post(c, t, T, id, 2 * (int64_t)log2_floor(pof2) + 1);
}

/* Ring: 2(P-1) steps, each receiving a block from the left neighbour. */
static int64_t allreduce_ring(wl_coll_t *c, int64_t T)
{
    uint32_t left = (c->rank + c->P - 1) % c->P;
    int64_t t = T;
    for (int64_t j = 0; j < 2 * (int64_t)(c->P - 1); j++)
        t = recv_wait(c, t, T, left, j);
    return t;
}

/* Recursive multiplying (Ruefenacht et al.): the process count is folded to the largest
 * n <= P whose prime factors are all at most k+1 (MPICH's pairwise fold for the rest), n
 * is split into factors f <= k+1, and at a stage of factor f with stride s the rank
 * exchanges with the f-1 other members of its group: block + (id + i*s) mod (f*s).  It
 * sends to all of them, then receives from each in turn (blocking), so the peers' arrival
 * skew leaves some messages unexpected. */
static int64_t allreduce_rm(wl_coll_t *c, int64_t T)
{
    uint32_t fmax = c->k + 1, n = c->P;
    for (;; n--) { /* the largest (fmax)-smooth n: n >= pof2 >= P/2 always qualifies */
        uint32_t x = n;
        for (uint32_t p = 2; p <= fmax && x > 1; p++)
            while (x % p == 0)
                x /= p;
        if (x == 1)
            break;
    }
    /* Factors: the prime factors of n, largest first, packed into bins of product <= fmax
     * (first fit), which gives few stages of many peers. */
    uint32_t primes[32], np = 0, bins[32], nb = 0;
    for (uint32_t p = fmax, x = n; p >= 2; p--)
        while (x % p == 0 && np < 32) {
            int prime = 1;
            for (uint32_t d = 2; d * d <= p && prime; d++)
                prime = p % d != 0;
            if (!prime)
                break;
            primes[np++] = p;
            x /= p;
        }
    for (uint32_t i = 0; i < np; i++) {
        uint32_t b = 0;
        while (b < nb && bins[b] * primes[i] > fmax)
            b++;
        if (b == nb)
            bins[nb++] = 1;
        bins[b] *= primes[i];
    }
    uint32_t extra = c->P - n;
    int64_t t = T, step = extra != 0;
    int32_t id;
    if (c->rank >= 2 * extra) {
        id = (int32_t)(c->rank - extra);
    } else if (c->rank % 2 == 0) {
        id = -1;
    } else {
        t = recv_wait(c, t, T, c->rank - 1, 0);
        id = (int32_t)(c->rank / 2);
    }
    uint32_t stride = 1;
    for (uint32_t b = 0; id >= 0 && b < nb; b++, step++) {
        uint32_t f = bins[b], span = f * stride, block = (uint32_t)id / span * span;
        for (uint32_t i = 1; i < f; i++) {
            uint32_t v = block + ((uint32_t)id + i * stride) % span;
            uint32_t q = v < extra ? 2 * v + 1 : v + extra;
            t = recv_wait(c, t, T, q, step);
        }
        stride = span;
    }
    if (id < 0)
        t = recv_wait(c, t + WL_POST, T, c->rank + 1, (int64_t)nb + 1);
    return t;
}

/* ---- allgather ---- */

/* Bruck: ceil(log2 P) steps; at step k the rank receives from (r + 2^k) mod P. */
static int64_t allgather_bruck(wl_coll_t *c, int64_t T)
{
    int64_t t = T;
    for (uint32_t d = 1, k = 0; d < c->P; d <<= 1, k++)
        t = recv_wait(c, t, T, (c->rank + d) % c->P, k);
    return t;
}

/* Ring: P-1 steps, each receiving from the left neighbour. */
static int64_t allgather_ring(wl_coll_t *c, int64_t T)
{
    uint32_t left = (c->rank + c->P - 1) % c->P;
    int64_t t = T;
    for (int64_t j = 0; j < (int64_t)c->P - 1; j++)
        t = recv_wait(c, t, T, left, j);
    return t;
}

/* ---- alltoall ---- */

/* Linear: post P-1 receives first, from r+1, r+2, ... (wrapping), then send to r+1, r+2,
 * ...: peer q reaches the rank at position (r - q - 1) mod P of its sends, so the rank's
 * left neighbour, whose receive was posted last, sends first. */
int64_t wl_alltoall_linear(wl_coll_t *c, int64_t T)
{
    int64_t end = T;
    for (uint32_t i = 1; i < c->P; i++) {
        uint32_t q = (c->rank + i) % c->P;
        wl_post(c->g, T + (int64_t)i * WL_POST, VM_WL_CTX_COLL, (int32_t)q, c->tag, c->cls);
    }
    for (uint32_t i = 1; i < c->P; i++) {
        uint32_t q = (c->rank + c->P - i) % c->P; /* the i-th to send to this rank */
        int64_t at = T + wl_offset(c->g, c->call, q, c->skew) + WL_LAT + (int64_t)i * WL_POST;
        end = wl_max(end, wl_arrive(c->g, at, VM_WL_CTX_COLL, (int32_t)q, c->tag, c->cls));
    }
    return wl_max(end, T + (int64_t)c->P * WL_POST) + WL_WORK;
}

/* Pairwise exchange: P-1 steps; at step k receive from r - k, send to r + k. */
static int64_t alltoall_pairwise(wl_coll_t *c, int64_t T)
{
    int64_t t = T;
    for (uint32_t k = 1; k < c->P; k++)
        t = recv_wait(c, t, T, (c->rank + c->P - k) % c->P, k - 1);
    return t;
}

/* ---- barrier ---- */

/* Flat tree (fan-in, fan-out) rooted at 0: the root receives from ranks 1..P-1 in order
 * with blocking receives, then releases everyone; any other rank sends and waits for the
 * release. */
static int64_t barrier_flat(wl_coll_t *c, int64_t T)
{
    if (c->rank != 0)
        return recv_wait(c, T + WL_POST, T, 0, 1 + (int64_t)c->P * WL_POST / WL_STEP);
    int64_t t = T;
    for (uint32_t q = 1; q < c->P; q++)
        t = recv_wait(c, t, T, q, 0);
    return t + (int64_t)c->P * WL_POST;
}

/* ---- the generators ---- */

/* Which rank a collective generator describes unless told: the root where only the root
 * receives much, the last rank of a chain, else rank 1. */
enum { RANK_ROOT, RANK_LAST, RANK_ONE };

typedef struct coll_algo {
    wl_coll_fn fn;
    uint32_t op;
    int rank_rule;
} coll_algo_t;

enum { CO_P, CO_BYTES, CO_CALLS, CO_SKEW, CO_RANK, CO_SEED, CO_SEG, CO_K, CO_N };

#define COLL_PARAMS(name, P, bytes, calls)                                                     \
    static const wl_pdef_t name[CO_N] = {                                                      \
        [CO_P] = {"P", P, 2, 1 << 20, NULL},                                                   \
        [CO_BYTES] = {"bytes", bytes, 0, 1LL << 40, NULL},                                     \
        [CO_CALLS] = {"calls", calls, 1, 10000000, NULL},                                      \
        [CO_SKEW] = {"skew", 50, 0, 1000, NULL},                                               \
        [CO_RANK] = {"rank", -1, -1, (1 << 20) - 1, NULL},                                     \
        [CO_SEED] = {"seed", 1, 0, 1LL << 62, NULL},                                           \
        [CO_SEG] = {"seg", 8192, 1, 1LL << 30, NULL},                                          \
        [CO_K] = {"k", 7, 1, 8, NULL},                                                         \
    }
COLL_PARAMS(small_params, 64, 8, 16);
COLL_PARAMS(large_params, 64, 1 << 20, 4);
COLL_PARAMS(block_params, 64, 4096, 8);

static int gen_coll(wl_gen_ctx_t *g, const wl_gen_t *self, const long long *v, char *err,
                    size_t errlen)
{
    const coll_algo_t *a = self->data;
    uint32_t P = (uint32_t)v[CO_P];
    if (v[CO_RANK] >= (long long)P) {
        snprintf(err, errlen, "%s: rank %lld is not below P=%u", self->name, v[CO_RANK], P);
        return VMATCH_EINVAL;
    }
    int rc = wl_setup(g, (uint64_t)v[CO_SEED], P);
    if (rc)
        return rc;
    uint32_t rank = v[CO_RANK] >= 0             ? (uint32_t)v[CO_RANK]
                    : a->rank_rule == RANK_ROOT ? 0
                    : a->rank_rule == RANK_LAST ? P - 1
                                                : 1;
    wl_coll_t c = {g,
                   P,
                   rank,
                   (uint64_t)v[CO_BYTES],
                   vm_trace_class(g->t, a->op, (uint64_t)v[CO_BYTES], P),
                   (int32_t)a->op,
                   0,
                   v[CO_SKEW] * WL_STEP / 100,
                   (uint32_t)v[CO_SEG],
                   (uint32_t)v[CO_K]};
    int64_t T = WL_T0;
    uint64_t calls = (uint64_t)v[CO_CALLS];
    for (c.call = 0; c.call < calls && !wl_over_budget(g, c.call, calls); c.call++)
        T = a->fn(&c, T) + WL_WORK;
    return 0;
}

#define ALGO(id, f, op, rule) static const coll_algo_t id = {f, op, rule}
ALGO(a_gather_linear, wl_gather_linear, VMATCH_COLL_GATHER, RANK_ROOT);
ALGO(a_gather_binomial, gather_binomial, VMATCH_COLL_GATHER, RANK_ROOT);
ALGO(a_bcast_binomial, bcast_binomial_impl, VMATCH_COLL_BCAST, RANK_LAST);
ALGO(a_bcast_pipeline, bcast_pipeline, VMATCH_COLL_BCAST, RANK_LAST);
ALGO(a_allreduce_rd, wl_allreduce_rd, VMATCH_COLL_ALLREDUCE, RANK_ONE);
ALGO(a_allreduce_ring, allreduce_ring, VMATCH_COLL_ALLREDUCE, RANK_ONE);
ALGO(a_allreduce_rab, allreduce_rab, VMATCH_COLL_ALLREDUCE, RANK_ONE);
ALGO(a_allreduce_rm, allreduce_rm, VMATCH_COLL_ALLREDUCE, RANK_ONE);
ALGO(a_allgather_bruck, allgather_bruck, VMATCH_COLL_ALLGATHER, RANK_ONE);
ALGO(a_allgather_ring, allgather_ring, VMATCH_COLL_ALLGATHER, RANK_ONE);
ALGO(a_alltoall_linear, wl_alltoall_linear, VMATCH_COLL_ALLTOALL, RANK_ONE);
ALGO(a_alltoall_pairwise, alltoall_pairwise, VMATCH_COLL_ALLTOALL, RANK_ONE);
ALGO(a_barrier_flat, barrier_flat, VMATCH_COLL_BARRIER, RANK_ROOT);

const wl_gen_t wl_coll_gens[] = {
    {"gather-linear", "MPI_Gather, linear: the root posts P-1 receives, then waits",
     small_params, CO_N, gen_coll, &a_gather_linear},
    {"gather-binomial", "MPI_Gather, binomial tree: receives from children 1, 2, 4, ...",
     small_params, CO_N, gen_coll, &a_gather_binomial},
    {"bcast-binomial", "MPI_Bcast, binomial tree: one receive from the parent per call",
     small_params, CO_N, gen_coll, &a_bcast_binomial},
    {"bcast-pipeline", "MPI_Bcast, pipelined chain: a stream of segments from the left",
     large_params, CO_N, gen_coll, &a_bcast_pipeline},
    {"allreduce-rd", "MPI_Allreduce, recursive doubling (MPICH's fold for non-powers of 2)",
     small_params, CO_N, gen_coll, &a_allreduce_rd},
    {"allreduce-ring", "MPI_Allreduce, ring: 2(P-1) steps from the left neighbour",
     block_params, CO_N, gen_coll, &a_allreduce_ring},
    {"allreduce-rab", "MPI_Allreduce, Rabenseifner: recursive halving, then doubling",
     block_params, CO_N, gen_coll, &a_allreduce_rab},
    {"allreduce-rm", "MPI_Allreduce, recursive multiplying: up to k peers per stage, skewed",
     small_params, CO_N, gen_coll, &a_allreduce_rm},
    {"allgather-bruck", "MPI_Allgather, Bruck: log2 P steps from r + 2^k", small_params, CO_N,
     gen_coll, &a_allgather_bruck},
    {"allgather-ring", "MPI_Allgather, ring: P-1 steps from the left neighbour", block_params,
     CO_N, gen_coll, &a_allgather_ring},
    {"alltoall-linear", "MPI_Alltoall, linear: P-1 receives posted first, sends r+1, r+2...",
     block_params, CO_N, gen_coll, &a_alltoall_linear},
    {"alltoall-pairwise", "MPI_Alltoall, pairwise exchange: step k from r - k", block_params,
     CO_N, gen_coll, &a_alltoall_pairwise},
    {"barrier-flat", "MPI_Barrier, flat tree: the root receives from 1..P-1 in order",
     small_params, CO_N, gen_coll, &a_barrier_flat},
};
const size_t wl_n_coll_gens = sizeof wl_coll_gens / sizeof *wl_coll_gens;
