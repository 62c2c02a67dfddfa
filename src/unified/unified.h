/* unified.h -- the state of policy=unified (thesis chapter 5, Algorithms 5.1 and 5.2), shared
 * by unified.c (the policy, its keys and statistics), levels.c (profiling, levels, the
 * exchange) and buckets.c (the queues of one level).  docs/unified.md has the design.
 *
 * One side holds:
 *   - the point-to-point structure: a side of policy hash, pnp or single (unified.p2p), which
 *     class 0 goes to whole;
 *   - the profiling queue, shared by every collective class during its first call;
 *   - per collective operation, levels of queues: entries of a class that has been profiled
 *     go to the newest level of its operation, into queue (source mod nq), or the level's
 *     wildcard queue when the receive's care does not cover the source.
 * A class's entries enter the profiling queue, then level 1, 2, ... in time, never back, so
 * a search that walks the profiling queue, then the levels in order, meets them oldest
 * first (inside one level the wildcard queue and a queue of the level compare sequence
 * numbers).  Classes never match each other (the API's promise), so nothing else is
 * searched.
 */
#ifndef VM_UNIFIED_H
#define VM_UNIFIED_H

#include "line.h"
#include "module.h"
#include "vmatch_unified.h" /* VMATCH_MAX_LEVELS: the levels an operation may open */

enum vm_unified_p2p { VM_UNIFIED_HASH, VM_UNIFIED_PNP, VM_UNIFIED_SINGLE };

/* The unified.* keys. */
typedef struct vm_unified_config {
    uint32_t p2p; /* enum vm_unified_p2p */
    uint32_t kc;  /* collective levels hold at most kc * sqrt(nprocs) queues per side */
    uint32_t kp;  /* with p2p=pnp: at most kp * sqrt(nprocs) partners per side */
} vm_unified_config_t;

extern const vm_module_t vm_unified_module;
extern const vm_policy_t vm_unified_policy;
extern const char *const vm_unified_p2p_words[];

/* Class ids at or above this are not tracked: their entries stay in the profiling queue.
 * vmatch_coll_class hands out ids from 1 up, one per (operation, size class, communicator
 * size) a program uses; the bound keeps a made-up id from growing the class table (56 bytes
 * per id, so at most 224 KiB per side). */
#define VM_UNIFIED_MAX_CLASSES 4096u

enum vm_unified_state {
    UN_NEW,       /* no entry seen on this side */
    UN_PROFILING, /* its first call: entries go to the profiling queue, searches counted */
    UN_PROFILED,  /* the profile is taken; the next append places the class */
    UN_PLACED     /* entries go to the newest level of its operation (or, with none, the
                     profiling queue) */
};

typedef struct vm_unified_class {
    struct vm_unified_group *group; /* its operation's levels; NULL before it is placed */
    uint8_t state;                  /* enum vm_unified_state */
    uint32_t wanted;                /* queues its profile asks for */
    uint64_t in_profq;  /* its entries in the profiling queue (never fewer than there are) */
    uint64_t searches;  /* while profiling: searches of it in the profiling queue, */
    uint64_t inspected; /* the entries they compared, */
    uint64_t peak;      /* the most of its entries the queue held at once, */
    uint64_t appends;   /* and its entries appended there */
} vm_unified_class_t;

/* A queue of a level is a bucket line (line.h): its first VM_LINE_WAYS exact entries (every
 * message, receives whose care is all ones) in the line, the rest in the bucket's own
 * overflow queue of the storage (vm_line_t.queue), indexed here by source rank. */

/* Levels of at most this many queues keep their buckets when they drain (a short-queue
 * collective fills and drains its level at every call); larger ones give them back. */
#define VM_UNIFIED_KEEP 8

/* A level: nq queues (buckets), an entry in queue (source mod nq); receives whose care does
 * not cover the source in the wildcard queue.  NULL buckets: a drained level that gave them
 * back (bookkeeping alone). */
typedef struct vm_unified_level {
    vm_line_t *b;
    vm_queue_t *wild; /* PRQ: receives whose care does not cover the source */
    uint64_t len;
    uint64_t magic; /* for src mod nq without a division (Lemire's fastmod) */
    uint32_t nq;
    uint32_t over; /* entries in its buckets' overflow queues */
} vm_unified_level_t;

/* A collective operation's levels, oldest first (allocated one by one: classes point at
 * them; 648 bytes). */
typedef struct vm_unified_group {
    uint32_t op, nlevels;
    vm_unified_level_t level[VMATCH_MAX_LEVELS];
} vm_unified_group_t;

typedef struct vm_unified {
    vm_side_t base;
    vm_side_t *p2p;
    vm_queue_t *profq; /* the profiling queue, made by its first entry */
    vm_unified_class_t *cls;
    uint32_t ncls; /* entries of cls[] (index = class id) */
    vm_unified_group_t **groups;
    uint32_t ngroups, groups_cap;
    uint32_t queues, cap; /* queues of every level, and their cap */
    uint32_t profiling;   /* classes in UN_PROFILING */
    unsigned src_shift;
    uint64_t src_mask;      /* the source field, shifted down */
    vmatch_bits_t src_care; /* the same bits in place */
} vm_unified_t;

/* The bucket of bits in level l: source mod nq (x mod d for a 32-bit x by magic =
 * UINT64_MAX / d + 1: Lemire, Kaser and Kurz 2019, exact for every 32-bit x and d). */
static inline vm_line_t *vm_unified_bucket(const vm_unified_t *s, const vm_unified_level_t *l,
                                           vmatch_bits_t bits)
{
    uint32_t src = (uint32_t)((bits >> s->src_shift) & s->src_mask);
    return &l->b[(uint32_t)(((unsigned __int128)(l->magic * src) * l->nq) >> 64)];
}

/* A level's queues (buckets.c).  append: OK or an error (the level as it was); match and
 * remove: 1 with the payload, or 0; match_any handles what the inline fast paths of
 * levels.c leave: wildcard receives queued in the level, or a search that does not know the
 * source. */
int vm_unified_level_append(vm_unified_t *s, vm_unified_level_t *l, vmatch_bits_t bits,
                            vmatch_bits_t care, void *payload, uint64_t seq);
int vm_unified_level_match_any(vm_unified_t *s, vm_unified_level_t *l, vmatch_bits_t key,
                               vmatch_bits_t keycare, int remove, void **payload,
                               uint64_t *inspected);
int vm_unified_level_remove(vm_unified_t *s, vm_unified_level_t *l, const void *payload,
                            uint64_t *inspected);
/* After an entry left level l: a drained level of more than VM_UNIFIED_KEEP queues gives its
 * buckets back. */
void vm_unified_level_release(vm_unified_t *s, vm_unified_level_t *l);
void vm_unified_level_free(vm_unified_t *s, vm_unified_level_t *l);
/* Queues the level holds now: its buckets, their overflow queues and its wildcard queue. */
uint64_t vm_unified_level_queues(const vm_unified_level_t *l);

/* The collective part (levels.c).  Same contracts as the policy's append and match, for a
 * class other than 0. */
int vm_unified_append(vm_unified_t *s, vmatch_bits_t bits, vmatch_bits_t care, uint32_t cls,
                      void *payload, uint64_t seq);
int vm_unified_match(vm_unified_t *s, vmatch_bits_t key, vmatch_bits_t keycare, uint32_t cls,
                     int remove, void **payload, uint64_t *inspected);
/* The exchange (vm_policy_t) of an entry of a collective class: s is the side searched, q
 * the side of the entry. */
int vm_unified_exchange(vm_unified_t *s, vm_unified_t *q, vmatch_bits_t bits,
                        vmatch_bits_t care, void *payload, vm_call_t *c);
/* Remove the collective entry with this payload: 1, or 0 when there is none. */
int vm_unified_remove(vm_unified_t *s, const void *payload, uint64_t *inspected);
/* Free every level and group. */
void vm_unified_free_levels(vm_unified_t *s);

#endif
