/* diff_stream.h -- the random operation stream of test_diff: the traffic's shape, one
 * pair's run state and the operations it drives on an engine and the reference model
 * together (diff_stream.c).  test_diff.c makes the engines and runs the pairs. */
#ifndef VM_DIFF_STREAM_H
#define VM_DIFF_STREAM_H

#include "ref.h"
#include "vmatch.h"

#include <stdint.h>

/* Traffic shape.  Few contexts and a small tag range make receives and messages collide
 * often; a handful of hot sources carry most traffic, as in halo exchanges and
 * master/worker codes, while the long tail keeps per-source queues short and numerous. */
enum { NCTX = 3, NSRC = 200, NHOT = 4, NTAG = 8 };
/* Runs that route by class (unified) spread the collective share of the traffic over more
 * contexts, each its own class. */
enum { NCTX_MAX = 8 };
extern const int32_t hot_src[NHOT];

/* Hard pressure fails every allocation, so a queue stays pinned at a slab or block edge and
 * failures meet it in many states; soft pressure lets one in ten through, so growth goes on
 * in small steps, each met by failures. */
enum pressure { PR_NONE, PR_SOFT, PR_HARD };

enum op_kind { OP_POST, OP_ARRIVE, OP_PROBE, OP_IMPROBE, OP_CANCEL, OP_REMOVE, NOPS };

enum phase { PH_GROW_PRQ, PH_GROW_UMQ, PH_STEADY, PH_DRAIN, NPHASES };

/* splitmix64: tiny, full-period and good enough to drive test streams. */
typedef struct rng {
    uint64_t s;
} rng_t;

/** State of one pair's run. */
typedef struct run {
    const char *pair; /* "policy/storage" */
    const char *spec; /* the engine's spec: the pair, the variant and the kernel */
    const char *simd; /* the kernel (storages with kernels), else NULL */
    unsigned ops_div; /* this variant runs VMATCH_DIFF_OPS / ops_div operations */
    uint64_t seed;    /* base seed, as the user gives it */
    vmatch_engine_t *e;
    ref_model_t ref;
    rng_t g;
    uint64_t op;      /* index of the operation being run */
    uint64_t next_id; /* payload ids handed out so far; payloads are never reused */
    uint32_t cls[NCTX_MAX];
    unsigned nctx;   /* contexts in use: NCTX, or up to NCTX_MAX (their classes in cls[]) */
    int class_stats; /* check vmatch_class_stats: level queues within their cap */
    uint64_t max_coll_queues, n_profiled; /* of the collective classes, at most / at the end */
    unsigned ctx_bits, src_bits, tag_bits;
    unsigned ctx_shift, src_shift, tag_shift; /* where the layout puts each field */
    vmatch_bits_t outside; /* the bits the layout leaves out (above the context) */
    int32_t max_src, max_tag;
    int inject; /* an allocation failure is armed for this operation */
    enum phase ph;
    uint64_t ph_left;       /* operations left in the phase */
    enum pressure pressure; /* allocation failures armed in this phase */
    uint64_t last_searches, last_inspected;
    uint64_t partner_bound, max_partners, max_levels; /* stats: partners never pass the bound */
    unsigned figures; /* figure k (diff_stream.c): bit 2k + 1 once asked, 2k when kept */
    uint64_t n_enomem, n_matched, max_prq, max_umq, n_ops[NOPS];
} run_t;

/* Start a random phase of random length, maybe under memory pressure. */
void next_phase(run_t *r);
/* Before each operation: drain when a side reaches the cap, move on when a drain has emptied
 * the queues or a phase has run its length. */
void steer(run_t *r);
/* Choose and run one operation on the engine and the model: 1 when they agree, 0 on a
 * mismatch (with a message naming the spec, the seed and the operation). */
int step(run_t *r);
/* Remove everything left, through cancel and remove_unexpected in a random order, and check
 * that the engine ends empty: 1, or 0 on a mismatch. */
int drain_all(run_t *r);

#endif
