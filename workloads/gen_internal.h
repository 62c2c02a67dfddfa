/* gen_internal.h -- what the generator files share: parameters, the random source, the
 * clock and the event scheduler. */
#ifndef VM_WL_GEN_INTERNAL_H
#define VM_WL_GEN_INTERNAL_H

#include "gen.h"
#include "trace.h"

#include <stddef.h>
#include <stdint.h>

/* The clock, in ticks.  Only ratios matter: a step is a message latency plus the sender's
 * and receiver's work, receives are posted a few ticks apart, segments of a pipeline follow
 * each other at a quarter step. */
#define WL_STEP    1000               /* one step of an algorithm */
#define WL_LAT     500                /* from send to arrival */
#define WL_POST    10                 /* between two receives (or sends) the rank issues */
#define WL_WORK    200                /* local work after a step completes */
#define WL_SEGMENT 250                /* between two segments of a pipeline */
#define WL_T0      ((int64_t)1 << 40) /* start of the clock: offsets never make it negative */

/* A parameter of a generator: integer (min..max), or one of `names` (value = index). */
typedef struct wl_pdef {
    const char *key;
    long long def, min, max;
    const char *const *names; /* NULL-terminated, or NULL for a number */
} wl_pdef_t;

/* An event on the clock, emitted into the trace in time order. */
typedef struct wl_ev {
    int64_t time;
    uint32_t seq; /* insertion order: breaks ties, so equal times keep program order */
    uint8_t kind; /* VM_TRACE_POST or VM_TRACE_ARRIVE */
    uint16_t cls;
    uint32_t ctx;
    int32_t src, tag;
} wl_ev_t;

typedef struct wl_gen_ctx {
    vm_trace_t *t;
    uint64_t seed, rng;
    wl_ev_t *ev;
    size_t nev, evcap;
    int64_t *last_arrival; /* per source: arrivals from one source keep their order */
    uint32_t nsrc;
    int failed;  /* out of memory */
    int too_big; /* more than VM_WL_MAX_OPS events */
} wl_gen_ctx_t;

/* Start a generator: seed the random source, declare P processes in the trace and size the
 * per-source arrival clock.  Returns 0 or VMATCH_ENOMEM. */
int wl_setup(wl_gen_ctx_t *g, uint64_t seed, uint32_t P);

/* After `done` of `total` iterations of a generator's loop: 1 (and g->too_big) when the
 * whole trace would pass VM_WL_MAX_OPS at the rate so far, so the generator stops early
 * instead of filling memory first. */
int wl_over_budget(wl_gen_ctx_t *g, uint64_t done, uint64_t total);

/* ---- random numbers (splitmix64) ---- */
uint64_t wl_rand(wl_gen_ctx_t *g);
/* Uniform in [0, n), n > 0. */
uint32_t wl_below(wl_gen_ctx_t *g, uint32_t n);
/* A deterministic offset in [-span, span] for (call, peer): how far peer runs ahead (< 0)
 * or behind its schedule in that call.  The same arguments give the same offset. */
int64_t wl_offset(const wl_gen_ctx_t *g, uint64_t call, uint32_t peer, int64_t span);
/* Shuffle v[0..n) in place. */
void wl_shuffle(wl_gen_ctx_t *g, uint32_t *v, size_t n);

/* ---- the event scheduler ---- */
/* Schedule a receive posted at `time`. */
void wl_post(wl_gen_ctx_t *g, int64_t time, uint32_t ctx, int32_t src, int32_t tag,
             uint16_t cls);
/* Schedule a message arriving at `time` (or just after the previous message from src, if
 * that is later: messages from one source are not reordered).  Returns the arrival time. */
int64_t wl_arrive(wl_gen_ctx_t *g, int64_t time, uint32_t ctx, int32_t src, int32_t tag,
                  uint16_t cls);
/* Append the scheduled events to the trace in time order and clear the schedule. */
void wl_emit(wl_gen_ctx_t *g);

static inline int64_t wl_max(int64_t a, int64_t b)
{
    return a > b ? a : b;
}

/* ---- collectives (gen_coll.c), reused by the mixed workload ---- */

/* One collective call at the chosen rank. */
typedef struct wl_coll {
    wl_gen_ctx_t *g;
    uint32_t P, rank;
    uint64_t bytes;
    uint16_t cls;
    int32_t tag;
    uint64_t call; /* index of the call: peers' offsets differ per call */
    int64_t skew;  /* offset span in ticks */
    uint32_t seg;  /* segment bytes (pipelined broadcast) */
    uint32_t k;    /* peers per stage (recursive multiplying) */
} wl_coll_t;

/* A collective algorithm: schedule one call that starts at the chosen rank at time T and
 * return the time it ends there. */
typedef int64_t (*wl_coll_fn)(wl_coll_t *c, int64_t T);

int64_t wl_allreduce_rd(wl_coll_t *c, int64_t T);
int64_t wl_gather_linear(wl_coll_t *c, int64_t T); /* the rank is the root when rank 0 */
int64_t wl_alltoall_linear(wl_coll_t *c, int64_t T);
int64_t wl_bcast_binomial(wl_coll_t *c, int64_t T);

/* ---- generator entry points ---- */
typedef struct wl_gen wl_gen_t;

/* Generate into g->t; v holds the values of self's parameter table, in its order.  Returns
 * 0 or VMATCH_EINVAL with err (parameters that do not fit together). */
typedef int (*wl_gen_fn)(wl_gen_ctx_t *g, const wl_gen_t *self, const long long *v, char *err,
                         size_t errlen);

struct wl_gen {
    const char *name, *models;
    const wl_pdef_t *params;
    size_t nparams;
    wl_gen_fn run;
    const void *data; /* generator-specific (the collective algorithm) */
};

/* The tables of gen_p2p.c, gen_coll.c and gen_queue.c. */
extern const wl_gen_t wl_p2p_gens[];
extern const size_t wl_n_p2p_gens;
extern const wl_gen_t wl_coll_gens[];
extern const size_t wl_n_coll_gens;
extern const wl_gen_t wl_queue_gens[];
extern const size_t wl_n_queue_gens;

#endif
