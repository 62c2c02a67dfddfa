/* queue.h -- the two replaceable layers under the engine: storage and policy.
 *
 * A storage is one ordered queue (src/ll, src/lla, ...).  A policy spreads the entries of one
 * side (PRQ or UMQ) over storage queues and searches them in an order that gives the
 * single-list answer (src/single, src/pnp, ...).  Each is a table of functions
 * plus its own state; a module (module.h) provides them with their spec keys, and registry.c
 * lists the modules.
 */
#ifndef VM_QUEUE_H
#define VM_QUEUE_H

#include "pool.h"
#include "vmatch.h"
#include "vmatch_inline.h"

#include <stddef.h>
#include <stdint.h>

enum vm_side_index { VM_PRQ = 0, VM_UMQ = 1 };

#define VM_MAX_POOLS 8

typedef struct vm_storage vm_storage_t;
typedef int vm_each_fn(void *arg, vmatch_bits_t bits, vmatch_bits_t care, void *payload,
                       uint64_t seq);
typedef struct vm_policy vm_policy_t;

/* Room for the configs of every module (module.h), packed in registry order: the modules of
 * today take 64 bytes; every engine carries this area, so it is kept small. */
#define VM_MODULE_CFG_BYTES 128

/* The named layouts (spec key layout): where an MPI library puts <context, source, tag> in
 * the 64 match bits.  docs/layout.md describes them. */
enum vm_layout { VM_LAYOUT_DEFAULT, VM_LAYOUT_OMPI_UCX, VM_LAYOUT_MPICH_UCX };

/* What the spec sets: the engine's own keys, and each module's config in mod[] (module.h,
 * vm_module_cfg).  README.md lists the keys. */
typedef struct vm_config {
    const vm_policy_t *policy;
    const vm_storage_t *storage;
    uint32_t ctx_bits, src_bits, tag_bits;
    uint32_t layout;                          /* enum vm_layout */
    uint32_t ctx_shift, src_shift, tag_shift; /* each field's lowest bit, from the layout */
    uint32_t nprocs;                          /* 0: not given */
    int numa;                                 /* VM_NUMA_OFF, VM_NUMA_LOCAL or a node */
    uint32_t simd; /* enum vm_simd (simd.h), never VM_SIMD_AUTO once parsed */
    uint32_t profile_record;
    uint32_t profile_program; /* 0: refuse a profile of another program; 1: any */
    uint32_t trace_record, trace_cap;
    uint32_t threads, inbox; /* enum vm_threads_mode (threads.h); slots per inbox buffer */
    int64_t rank;            /* for %r in paths; -1: not given */
    /* Paths (owned: vm_spec_free; NULL when not given): the profile the static designs read,
     * and the files vmatch_save_recordings writes. */
    char *profile, *profile_out, *trace_out;
    _Alignas(16) unsigned char mod[VM_MODULE_CFG_BYTES];
} vm_config_t;

/* A collective class (vmatch_coll_class): its id is its index in vm_env_t.classes + 1. */
typedef struct vm_class {
    uint32_t op, comm_size;
    uint32_t size_class;
} vm_class_t;

/* The (context, source) key of match bits: (ctx << src_bits) | src wherever the layout puts
 * the two fields.  Profiles count by it and the source-aware policies route by it. */
typedef struct vm_source_key {
    uint64_t ctx_mask, src_mask; /* each field's width, in the low bits */
    unsigned ctx_shift, src_shift, src_bits;
    vmatch_bits_t care; /* both fields in place: a care mask covering them names a source */
} vm_source_key_t;

static inline vm_source_key_t vm_source_key_of(const vm_config_t *c)
{
    vm_source_key_t k = {.ctx_mask = c->ctx_bits ? (1ull << c->ctx_bits) - 1 : 0,
                         .src_mask = (1ull << c->src_bits) - 1, /* src_bits <= 63 */
                         .ctx_shift = c->ctx_shift,
                         .src_shift = c->src_shift,
                         .src_bits = c->src_bits};
    k.care = k.ctx_mask << k.ctx_shift | k.src_mask << k.src_shift;
    return k;
}

static inline uint64_t vm_source_key(const vm_source_key_t *k, vmatch_bits_t bits)
{
    return ((bits >> k->ctx_shift) & k->ctx_mask) << k->src_bits |
           ((bits >> k->src_shift) & k->src_mask);
}

/* What a storage or policy gets from its engine: the config, the memory, the classes.  The
 * engine's counts (lengths, sequence numbers, entries inspected) are not here: the engine
 * keeps them and hands a policy what a call needs as arguments (vm_call_t). */
typedef struct vm_env {
    const vm_config_t *cfg;
    vm_mem_t mem;
    uint32_t nclasses, classes_cap;
    vm_class_t *classes;           /* the classes vmatch_coll_class handed out, in id order */
    vm_pool_t pools[VM_MAX_POOLS]; /* one per object size, made on demand */
    unsigned npools;
    uint32_t classes_closed; /* 1 once the class table could not grow: it takes no new
                                class again (vmatch_coll_class) */
    /* The two sides of a policy whose sides look after each other (policy=hash: each checks
     * the other's table for shrinking), set by the policy's create; NULL otherwise. */
    struct vm_side *paired[2];
} vm_env_t;

/* The pool of objects of obj_size bytes, or NULL when VM_MAX_POOLS sizes are in use. */
vm_pool_t *vm_env_pool(vm_env_t *env, size_t obj_size);
/* vm_pool_trim on every pool of env. */
void vm_env_trim(vm_env_t *env);

/* The slabs each pool of an engine holds, so that a call that fails with VMATCH_ENOMEM
 * after taking objects from new slabs, and gave the objects back, can give those slabs back
 * too and leave the engine's bytes as they were (vm_env_undo). */
typedef struct vm_env_mark {
    uint64_t nslabs[VM_MAX_POOLS];
    unsigned npools;
} vm_env_mark_t;
void vm_env_mark(const vm_env_t *env, vm_env_mark_t *m);
void vm_env_undo(vm_env_t *env, const vm_env_mark_t *m);

/* ---- storage: one ordered queue ---- */

/* Common head of every storage queue; a storage embeds it first in its own struct. */
typedef struct vm_queue {
    const vm_storage_t *ops; /* the queue's calls: the registry's table of its storage, or one
                                the storage's create picked for the side (llv compiles its
                                calls once per side); a registry table needs only name,
                                simd and create */
    vm_env_t *env;
    int side;     /* VM_PRQ: entries carry a care mask; VM_UMQ: searches carry one */
    uint64_t len; /* entries queued */
} vm_queue_t;

/* A found entry and where it is, valid until the queue next changes. */
typedef struct vm_hit {
    void *payload;
    uint64_t seq;
    void *where;   /* storage-private: node or block */
    uint32_t slot; /* storage-private: index in the block */
} vm_hit_t;

struct vm_storage {
    const char *name;
    int simd; /* 1: runs the vector kernel cfg->simd names (vmatch_kernel reports it) */
    /* Make an empty queue for side.  VMATCH_OK or VMATCH_ENOMEM. */
    int (*create)(vm_env_t *env, int side, vm_queue_t **out);
    void (*destroy)(vm_queue_t *q);
    /* Append at the tail.  VMATCH_OK or VMATCH_ENOMEM (queue unchanged). */
    int (*append)(vm_queue_t *q, vmatch_bits_t bits, vmatch_bits_t care, void *payload,
                  uint64_t seq);
    /* First entry in queue order that matches: on the PRQ ((key ^ bits) & care) == 0 and
     * keycare is unused; on the UMQ ((bits ^ key) & keycare) == 0.  Adds the entries
     * compared to *inspected.  Returns 1 with *hit filled, or 0. */
    int (*find)(vm_queue_t *q, vmatch_bits_t key, vmatch_bits_t keycare, vm_hit_t *hit,
                uint64_t *inspected);
    /* First entry whose payload is `payload`; same returns as find. */
    int (*find_payload)(vm_queue_t *q, const void *payload, vm_hit_t *hit, uint64_t *inspected);
    /* Remove the entry a find just returned. */
    void (*remove)(vm_queue_t *q, const vm_hit_t *hit);
    /* Optional: find and remove in one walk (find's rules), with the payload in *payload, on
     * a queue that is not empty (vm_queue_match checks).  Returns 1, or 0 when nothing
     * matches.  NULL: find, then remove. */
    int (*take)(vm_queue_t *q, vmatch_bits_t key, vmatch_bits_t keycare, void **payload,
                uint64_t *inspected);
    /* Call fn(arg, bits, care, payload, seq) for every entry, in queue order (care all ones
     * on the UMQ), until fn returns non-zero.  For policies that look at what a queue holds
     * (pnp's partner extraction). */
    void (*each)(vm_queue_t *q, vm_each_fn *fn, void *arg);
};

/* A storage's table from its calls named PREFIX_create, PREFIX_destroy, PREFIX_append,
 * PREFIX_find, PREFIX_find_payload, PREFIX_remove and PREFIX_each; .name and the optional
 * .take go beside it. */
#define VM_STORAGE_CALLS(p)                                                                    \
    .create = p##_create, .destroy = p##_destroy, .append = p##_append, .find = p##_find,      \
    .find_payload = p##_find_payload, .remove = p##_remove, .each = p##_each

/* The first entry of q that matches (storage find rules), removed when remove is set:
 * returns 1 with *payload, or 0.  A policy's match on one queue. */
static inline int vm_queue_match(vm_queue_t *q, vmatch_bits_t key, vmatch_bits_t keycare,
                                 int remove, void **payload, uint64_t *inspected)
{
    if (!q->len) /* most queues of a process are empty most of the time */
        return 0;
    if (remove && q->ops->take)
        return q->ops->take(q, key, keycare, payload, inspected);
    vm_hit_t hit;
    if (!q->ops->find(q, key, keycare, &hit, inspected))
        return 0;
    if (remove)
        q->ops->remove(q, &hit);
    *payload = hit.payload;
    return 1;
}

/* The oldest first match across several queues (a policy that spreads one side over several
 * searches each queue that may hold a match and takes the lowest sequence number). */
typedef struct vm_best {
    vm_queue_t *q; /* the queue of the best match so far; NULL: none yet */
    vm_hit_t hit;
} vm_best_t;

/* Look at q (NULL or empty: nothing to see): its first match becomes the best when it is
 * older.  Returns 1 when q had a match. */
static inline int vm_best_consider(vm_best_t *b, vm_queue_t *q, vmatch_bits_t key,
                                   vmatch_bits_t keycare, uint64_t *inspected)
{
    vm_hit_t h;
    if (!q || !q->len || !q->ops->find(q, key, keycare, &h, inspected))
        return 0;
    if (!b->q || h.seq < b->hit.seq) {
        b->q = q;
        b->hit = h;
    }
    return 1;
}

/* The best match into *payload, removed when remove is set.  Returns 1, or 0 when there was
 * none. */
static inline int vm_best_take(const vm_best_t *b, int remove, void **payload)
{
    if (!b->q)
        return 0;
    if (remove)
        b->q->ops->remove(b->q, &b->hit);
    *payload = b->hit.payload;
    return 1;
}

/* q when it holds an entry with this payload (with *hit), else NULL (q may be NULL). */
static inline vm_queue_t *vm_queue_holding(vm_queue_t *q, const void *payload, vm_hit_t *hit,
                                           uint64_t *inspected)
{
    return q && q->len && q->ops->find_payload(q, payload, hit, inspected) ? q : NULL;
}

/* Append to *q, first making it (a queue of env's storage for side) when it is NULL: a
 * policy's queue made on first use, such as a wildcard queue.  A failed call leaves *q as it
 * was.  VMATCH_OK or an error. */
static inline int vm_queue_append_new(vm_env_t *env, int side, vm_queue_t **q,
                                      vmatch_bits_t bits, vmatch_bits_t care, void *payload,
                                      uint64_t seq)
{
    int made = !*q;
    if (made) {
        int rc = env->cfg->storage->create(env, side, q);
        if (rc < 0) {
            *q = NULL;
            return rc;
        }
    }
    int rc = (*q)->ops->append(*q, bits, care, payload, seq);
    if (rc < 0 && made) {
        (*q)->ops->destroy(*q);
        *q = NULL;
    }
    return rc;
}

/* ---- policy: which queue of a side an entry lives in ---- */

/* What a post or an arrival hands a policy beside its entry (bits, care and payload, which
 * go in registers): the call's class, the sequence number the entry takes should it be
 * queued, where a match goes, and the tally of entries compared, which the callee adds to
 * (vmatch_stats's inspected).  The engine keeps one and fills it for every call. */
typedef struct vm_call {
    uint64_t seq;
    uint64_t inspected;
    void **out;
    uint32_t cls;
    uint32_t abi; /* the engine's: its inline version (engine.h), in what would be padding */
} vm_call_t;

typedef struct vm_side {
    const vm_policy_t *ops;
    vm_env_t *env;
    int side;
    /* The side's one queue while the policy keeps exactly one (policy=single always, pnp
     * until it has partners): the engine then matches on it directly, without the policy's
     * call in between, and appends to it directly while the queue's length after the append
     * stays below sole_until (a policy that must see an append, pnp at its threshold, sets
     * it).  NULL otherwise. */
    vm_queue_t *sole;
    uint64_t sole_until;
    /* The part of the side that vmatch_inline.h publishes (hot: the same fields, as the
     * callers' inline calls see them), first of all its entries:
     * - len: whatever changes the side's entries from outside its match, append and remove
     *   keeps it with the helpers of policy.h: the engine's calls, a policy's exchange
     *   (vm_side_counted), a policy for a side it nests (unified's point-to-point side), the
     *   inline calls.  The engine reads it for its statistics; an empty side is not searched.
     * - the rest is a policy's whose vm_policy_t.hot is set (hash: its bucket lines, its own
     *   count, its growth point, its fast-path flag, when it checks its size, and the state
     *   of its short vector, which follows the side: the hot part is its last member); zero
     *   for the others. */
    union {
        vmatch_hot_side_t hot;
        struct {
            uint64_t len;
            struct vmatch_line *table;
            uint32_t nb;
            uint8_t slow, head, shortcap, nwild;
            uint64_t count;
            uint64_t room;
            uint64_t check;
        };
    };
} vm_side_t;

#define VM_SIDE_HOT_AT(f)                                                                      \
    (offsetof(vm_side_t, f) == offsetof(vm_side_t, hot) + offsetof(vmatch_hot_side_t, f))
_Static_assert(VM_SIDE_HOT_AT(len) && VM_SIDE_HOT_AT(table) && VM_SIDE_HOT_AT(nb) &&
                   VM_SIDE_HOT_AT(slow) && VM_SIDE_HOT_AT(count) && VM_SIDE_HOT_AT(room) &&
                   VM_SIDE_HOT_AT(check) && VM_SIDE_HOT_AT(head) && VM_SIDE_HOT_AT(shortcap) &&
                   VM_SIDE_HOT_AT(nwild) && sizeof(vmatch_hot_side_t) == 48 &&
                   sizeof(vm_side_t) == offsetof(vm_side_t, hot) + sizeof(vmatch_hot_side_t),
               "vm_side_t's published part is vmatch_hot_side_t");

struct vm_policy {
    const char *name;
    /* Make the queues of one side over env->cfg->storage.  VMATCH_OK or an error. */
    int (*create)(vm_env_t *env, int side, vm_side_t **out);
    void (*destroy)(vm_side_t *p);
    /* Queue an entry; seq grows with every append of the engine.  VMATCH_OK or ENOMEM. */
    int (*append)(vm_side_t *p, vmatch_bits_t bits, vmatch_bits_t care, uint32_t cls,
                  void *payload, uint64_t seq);
    /* The oldest matching entry (storage find rules), removed when remove is set.
     * Returns 1 with *payload, or 0. */
    int (*match)(vm_side_t *p, vmatch_bits_t key, vmatch_bits_t keycare, uint32_t cls,
                 int remove, void **payload, uint64_t *inspected);
    /* Optional: a post's or an arrival's whole exchange in one call, for a policy that can
     * do it with less work than a match, then an append (hash: the bits hashed once for the
     * tables of both sides, no frame on its fast path).  search is the other side and queue
     * the side of the entry (bits, care, payload; care is all ones for a message, and is
     * the search's keycare).  When search holds a match (search->len counts its entries),
     * take the oldest into *call->out and return VMATCH_MATCHED; otherwise append the entry
     * to queue with call->seq and return VMATCH_QUEUED; or return the append's error with
     * both sides as they were.  Entries compared are added to call->inspected, and the
     * result is counted on the sides' len (vm_side_counted, policy.h).  The engine tail-calls
     * it for every post and arrival while profile.record is off, and returns its result as
     * it is.  NULL: the engine takes vm_exchange's steps (policy.h).  The arguments come in
     * the order in which vmatch_post already holds its own in registers (the engine, whose
     * first member is its vm_call_t, then bits, care, ..., the payload), so that the
     * engine's jump to it moves almost nothing. */
    int (*exchange)(vm_call_t *call, vmatch_bits_t bits, vmatch_bits_t care, vm_side_t *search,
                    void *payload, vm_side_t *queue);
    /* Remove the entry with this payload.  Returns 1, or 0 when there is none. */
    int (*remove_payload)(vm_side_t *p, const void *payload, uint64_t *inspected);
    /* Add this side's queues to acc->queues (the engine fills the other fields). */
    void (*stats)(const vm_side_t *p, vmatch_stats_t *acc);
    /* Optional: this side's part of one of the policy's own figures (vmatch_stat,
     * vmatch_stat_struct), by key: a key of a module's stat_keys (module.h), the whole key
     * ("pnp.partners").  A number (the key's size 0): add it to *(uint64_t *)out.  A struct
     * of an extension header: fill this side's part of it (index p->side) at out, which the
     * engine zeroed, for arg (unified.class: the class).  Returns 1, or 0 when the policy
     * keeps no such figure (a key of another module, or of a part it was not built with).
     * NULL: it keeps none (vmatch_stat says VMATCH_EUNSUPPORTED). */
    int (*stat)(const vm_side_t *p, const char *key, uint32_t arg, void *out);
    /* Set when the policy keeps the published part of its sides (vm_side_t.hot) as
     * vmatch_inline.h reads it: exact entries in bucket lines the inline calls may take from
     * and put into while slow is 0, counting len and count as the policy does. */
    int hot;
};

/* A policy's table from its calls named PREFIX_destroy, PREFIX_append, PREFIX_match,
 * PREFIX_remove_payload and PREFIX_stats; .name, .create and the optional calls (exchange,
 * stat) go beside it. */
#define VM_POLICY_CALLS(p)                                                                     \
    .destroy = p##_destroy, .append = p##_append, .match = p##_match,                          \
    .remove_payload = p##_remove_payload, .stats = p##_stats

#endif
