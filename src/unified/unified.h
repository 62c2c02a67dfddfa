/* unified.h -- the state of policy=unified (thesis chapter 5, Algorithms 5.1 and 5.2), shared
 * by unified.c (the policy, its keys and statistics) and levels.c (profiling and levels).
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

#include "module.h"

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

/* Class ids at or above this are not tracked: their entries stay in the profiling queue. */
#define VM_UNIFIED_MAX_CLASSES 65536u

enum vm_unified_state {
    UN_NEW,       /* no entry seen on this side */
    UN_PROFILING, /* its first call: entries go to the profiling queue, searches counted */
    UN_PROFILED,  /* the profile is taken; the next append places the class */
    UN_PLACED     /* entries go to the newest level of its operation (or, with none, the
                     profiling queue) */
};

typedef struct vm_unified_class {
    uint8_t state;      /* enum vm_unified_state */
    uint32_t group;     /* its operation's index in groups[] + 1; 0 before it is placed */
    uint32_t wanted;    /* queues its profile asks for */
    uint64_t in_pq;     /* its entries in the profiling queue (never fewer than there are) */
    uint64_t searches;  /* while profiling: searches of it in the profiling queue, */
    uint64_t inspected; /* and the entries they compared */
} vm_unified_class_t;

/* A level: nq queues, each made by its first entry and destroyed when it empties; the queue
 * array itself only while the level holds entries, so a drained level is bookkeeping. */
typedef struct vm_unified_level {
    vm_queue_t **q;
    vm_queue_t *wild; /* PRQ: receives whose care does not cover the source */
    uint64_t len;
    uint64_t magic; /* for src mod nq without a division (Lemire's fastmod) */
    uint32_t nq;
} vm_unified_level_t;

/* A collective operation's levels, oldest first. */
typedef struct vm_unified_group {
    uint32_t op, nlevels;
    vm_unified_level_t level[VMATCH_MAX_LEVELS];
} vm_unified_group_t;

typedef struct vm_unified {
    vm_pq_t base;
    vm_pq_t *p2p;
    vm_queue_t *pq; /* the profiling queue, made by its first entry */
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

/* The collective part (levels.c).  Same contracts as the policy's append and match, for a
 * class other than 0. */
int vm_unified_append(vm_unified_t *s, vmatch_bits_t bits, vmatch_bits_t care, uint32_t cls,
                      void *payload, uint64_t seq);
int vm_unified_match(vm_unified_t *s, vmatch_bits_t key, vmatch_bits_t keycare, uint32_t cls,
                     int remove, void **payload, uint64_t *inspected);
/* Remove the collective entry with this payload: 1, or 0 when there is none. */
int vm_unified_remove(vm_unified_t *s, const void *payload, uint64_t *inspected);
/* Free every level and group. */
void vm_unified_free_levels(vm_unified_t *s);

#endif
