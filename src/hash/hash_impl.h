/* hash_impl.h -- the state of policy=hash, shared by hash.c (the policy), table.c (the
 * bucket table) and arrival.c (the two modes of the unexpected messages).  Not for use
 * outside src/hash.  The design is in docs/hash.md. */
#ifndef VM_HASH_IMPL_H
#define VM_HASH_IMPL_H

#include "line.h"
#include "module.h"

#include <stdint.h>

extern const vm_module_t vm_hash_module;
extern const vm_policy_t vm_hash_policy;

/* The hash.* keys (hash.c). */
typedef struct vm_hash_config {
    uint32_t buckets;  /* a fixed bucket count; 0: the table grows with the load */
    uint32_t load;     /* growing table: entries per 100 buckets above which it doubles */
    uint32_t small;    /* the same while it has at most VM_HASH_SMALL buckets */
    uint32_t shrink;   /* growing table: operations per window (shrink.c); 0: never shrinks */
    uint32_t shortcap; /* entries of the short vector (short.c); 0: none */
} vm_hash_config_t;

/* A bucket is a line (line.h) holding its first VM_LINE_WAYS entries; the entries that
 * collide there beyond them go on in overflow lines of the bucket's own, chained through the
 * lines' queue field (table.c).  An exact match then reads one line, unless its bucket has
 * overflowed, and then its chain, at one entry per bucket mostly one line. */

typedef struct vm_hash {
    vm_side_t base;
    /* The short vector (short.c), right after the published part of base, where
     * vmatch_inline.h finds it (vmatch_short_vec). */
    vmatch_short_entry_t vec[VMATCH_SHORT_MAX];
    const vm_hash_config_t *hc;
    /* The side's table is in base (vm_side_t's published part, vmatch_inline.h): table, nb
     * buckets (NULL until the side's first entry), count (the side's entries: on the PRQ the
     * exact receives -- care all ones -- in the table and the wildcard receives in the
     * vector and wild; on the UMQ every message), slow and room (below). */
    uint32_t nover;   /* overflow lines held (table.c) */
    vm_pool_t *lines; /* the engine's pool they come from; NULL until the first */
    vm_queue_t *wild; /* PRQ: the receives with any other care mask; NULL until one */
    /* UMQ, flat: every message in arrival order, the table empty; NULL while hashed. */
    vm_queue_t *flat;
    uint64_t cost;   /* UMQ: search work the other mode would have saved, since the switch */
    int want_switch; /* UMQ: switch at the next call allowed to take memory */
    uint64_t grow;   /* count above which the table doubles; UINT64_MAX: fixed */
    /* Giving memory back (shrink.c).  A growing table above VM_HASH_MIN buckets is watched
     * in windows of operations (sequence numbers): a window in which the side's count
     * stayed below mark is quiet, and after two quiet windows in a row the table shrinks.  end:
     * the sequence number at which the window ends (0: one starts at the next check;
     * UINT64_MAX: none runs).  The published check (base.check) is the earlier end of the two
     * sides, so that either side's append reaches the library for both. */
    uint64_t end;
    uint64_t mark;    /* count at which the window is busy; 0 while not watched */
    uint32_t busy;    /* the count reached mark in this window */
    uint32_t quiet;   /* quiet windows in a row */
    uint64_t shrinks; /* tables given back (hash.shrinks) */

    /* base.slow is non-zero while exact calls cannot take the fast path: a flat UMQ, a
     * switch being weighed, wildcard receives in wild; VMATCH_SLOW_WILD while the PRQ's
     * only wildcard receives are the vector's base.nwild (vec[0 .. nwild - 1], oldest
     * first, while wild is empty: so they are older than wild's), which the inline calls
     * search with the line.  base.room is grow while the fast path may append (slow clear
     * or VMATCH_SLOW_WILD, a table made), else 0: the appends of the fast paths check
     * count < room alone.  vm_hash_sync keeps both. */
} vm_hash_t;

_Static_assert(offsetof(vm_hash_t, vec) == sizeof(vm_side_t),
               "the short vector follows the side's published part (vmatch_short_vec)");

/* Recompute h->base.slow and h->base.room after a call off the fast path or a change of
 * the table. */
static inline void vm_hash_sync(vm_hash_t *h)
{
    int slow = h->flat || h->cost || h->want_switch || (h->wild && h->wild->len);
    h->base.slow = slow ? 1 : h->base.nwild ? VMATCH_SLOW_WILD : 0;
    if (h->mark && h->base.count >= h->mark)
        h->busy = 1;
    /* while watched and not yet busy, the append that reaches mark is the library's */
    uint64_t room = h->mark && !h->busy && h->mark < h->grow ? h->mark : h->grow;
    h->base.room = slow || !h->base.table ? 0 : room;
}

/* The PRQ's wildcard receives: the vector's and wild's. */
static inline uint64_t vm_hash_wildcards(const vm_hash_t *h)
{
    return h->base.nwild + (h->wild ? h->wild->len : 0);
}

/* 32 well-mixed bits of the match bits, and their bucket among nb: vmatch_inline.h's
 * vmatch_line_mix and vmatch_line_bucket, which the callers' inline calls use too.  The
 * bucket is multiply-shift (no division), so that doubling nb splits bucket i into 2i and
 * 2i + 1.  The top bits of one product bits * C are not enough: MPI keys differ in a few
 * low bits of two fields, and on some of their patterns (strided tags, strided sources)
 * they pile the keys up, a third of the entries overflowing.  The two halves of the 128-bit
 * product folded together spread them at least as random keys would: over 40 structured
 * key sets at one entry per bucket, 6.8% of the entries overflow on average and 10.6% at
 * worst, against 10.4% and 10.9% for multiply, fold, multiply (which it replaced: 4
 * instructions instead of 8) and 4.2% and 32.6% for one product's top bits (docs/hash.md).
 * The top 32 bits of the fold, not its bottom ones, which pile small keys (tags 0, 1, 2...)
 * into a few buckets of a small table.  The multiplier differs from llv's fingerprint hash (the
 * top 16 bits of bits times the golden ratio), so the entries of one bucket keep distinct
 * fingerprints. An exchange mixes the bits once for the tables of both sides. */

/* The bucket of match bits among nb. */
static inline uint32_t vm_hash_index(vmatch_bits_t bits, uint32_t nb)
{
    return vmatch_line_bucket(vmatch_line_mix(bits), nb);
}

/* Tables of up to this many buckets (32 KiB of lines) grow at hash.small_load (default half
 * an entry per bucket), larger ones at hash.load (default one).  Small tables hold the short
 * and middling queues of collectives and neighbour exchanges, where a collision costs a
 * second line and a call of the library while the lines fit the first-level cache either
 * way; large ones hold bursts, where the lines are the memory: hash.load=200 holds a burst
 * in 40 to 48 bytes an entry instead of 66 to 68, and takes 1.2 to 1.7 times the time on
 * the bursts' rows, as more entries go on past their line (docs/hash.md#table-size). */
#define VM_HASH_SMALL 512

/* The entries above which a growing table of nb buckets doubles. */
static inline uint64_t vm_hash_grow_at(const vm_hash_t *h, uint32_t nb)
{
    return (uint64_t)nb * (nb <= VM_HASH_SMALL ? h->hc->small : h->hc->load) / 100;
}

/* Whether a growing table should double because bucket i's line overflowed: tables of up to
 * VM_HASH_SMALL buckets do while they hold at least one entry for every 4 buckets and no
 * wildcard receive.  A key set that crowds a bucket at one size rarely does at the next (the
 * report's neighbours 6 random x4 put the same 2 of 24 entries into overflow at every step),
 * the bound stops equal keys, which share a bucket at every size, and a PRQ with wildcard
 * receives queued (master/worker) is left alone: there the doublings cost more cache misses
 * than the overflow (docs/hash.md#table-size). */
static inline int vm_hash_crowded(const vm_hash_t *h, uint32_t i)
{
    return h->grow != UINT64_MAX && h->base.nb <= VM_HASH_SMALL &&
           h->base.table[i].fill >= VMATCH_LINE_OVER1 && h->base.count * 4 >= h->base.nb &&
           !vm_hash_wildcards(h);
}

/* ---- table.c ---- */

/* Append to bucket i.  VMATCH_OK, or VMATCH_ENOMEM with the table as it was. */
int vm_hash_slot_append(vm_hash_t *h, uint32_t i, vmatch_bits_t bits, vmatch_bits_t care,
                        void *payload, uint64_t seq);
/* The oldest entry of bucket i with exactly these bits (on the PRQ: an exact receive for
 * them).  Returns 1 with *hit (hit->where NULL: way hit->slot of the line), or 0. */
int vm_hash_slot_find(vm_hash_t *h, uint32_t i, vmatch_bits_t bits, vm_hit_t *hit,
                      uint64_t *inspected);
/* Remove the entry of bucket i that a find just returned. */
void vm_hash_slot_remove(vm_hash_t *h, uint32_t i, const vm_hit_t *hit);
/* vm_hash_slot_take past the line: bucket i's overflow lines. */
int vm_hash_over_take(vm_hash_t *h, uint32_t i, vmatch_bits_t bits, void **payload,
                      uint64_t *inspected);
/* The oldest entry of the table that matches ((bits ^ key) & keycare) == 0, or whose
 * payload is `payload` when that is not NULL: 1 with *hit and its bucket in *bucket, or 0.
 * Every line and every overflow line is searched. */
int vm_hash_scan(vm_hash_t *h, vmatch_bits_t key, vmatch_bits_t keycare, const void *payload,
                 vm_hit_t *hit, uint32_t *bucket, uint64_t *inspected);
/* Make the empty table of nb buckets.  OK or ENOMEM. */
int vm_hash_table_make(vm_hash_t *h);
/* Double the table (best effort: on ENOMEM it stays as it was). */
void vm_hash_grow(vm_hash_t *h);
/* Destroy every queue, the table and its overflow lines. */
void vm_hash_table_free(vm_hash_t *h);
/* Empty every bucket, giving back the overflow lines (their entries live elsewhere now). */
void vm_hash_table_clear(vm_hash_t *h);
/* Fill the (empty) table with the entries of q, in its order, first growing it to the
 * load of q's entries.  VMATCH_OK, or ENOMEM with the table empty again. */
int vm_hash_table_fill(vm_hash_t *h, vm_queue_t *q);
/* Call fn for every entry of the table (bucket by bucket; not in order). */
void vm_hash_table_each(vm_hash_t *h, vm_each_fn *fn, void *arg);

/* An entry of the table, copied out. */
typedef struct vm_hash_entry {
    vmatch_bits_t bits;
    void *payload;
    uint64_t seq;
} vm_hash_entry_t;

/* The table's n entries (lines and overflow lines; the caller knows n), oldest first, in
 * memory of the engine; NULL when n is 0 or memory ran out. */
vm_hash_entry_t *vm_hash_table_sorted(vm_hash_t *h, uint64_t n);
void vm_hash_entries_free(vm_hash_t *h, vm_hash_entry_t *v, uint64_t n);
/* Remake the table with nb buckets, its entries placed again in their order.  VMATCH_OK, or
 * VMATCH_ENOMEM with the table as it was. */
int vm_hash_resize(vm_hash_t *h, uint32_t nb);

/* Take the oldest entry with exactly these bits from bucket i: 1 with *payload, or 0. */
static inline int vm_hash_slot_take(vm_hash_t *h, uint32_t i, vmatch_bits_t bits,
                                    void **payload, uint64_t *inspected)
{
    vm_line_t *s = &h->base.table[i];
    unsigned compared;
    int found = vmatch_line_take(s, bits, payload, &compared);
    *inspected += compared;
    if (found) {
        h->base.count--;
        return 1;
    }
    return vm_line_over(s) ? vm_hash_over_take(h, i, bits, payload, inspected) : 0;
}

/* ---- shrink.c ---- */

/* The smallest table a growing side shrinks to: the one it starts with. */
#define VM_HASH_MIN 2

/* Link the two sides of an engine through env->paired (hash_create). */
void vm_hash_pair(vm_hash_t *h);
/* An append with sequence number seq above base.check: end the windows of both sides that
 * are due, shrink what stayed quiet, start the next windows. */
void vm_hash_check(vm_hash_t *h, uint64_t seq);
/* Start watching the table after it grew or was made (its next window starts at the next
 * check). */
void vm_hash_watch(vm_hash_t *h);

/* ---- short.c: the short vector, where a side with no table keeps its entries ---- */

/* Append to the vector of a short side that has (or, closed up, makes) room: 1 with the entry
 * there, else 0.  The callers count base.len, as for the other calls of a policy. */
int vm_hash_short_append(vm_hash_t *h, vmatch_bits_t bits, vmatch_bits_t care, void *payload,
                         uint64_t seq);
/* The vector's oldest entry that matches (key, keycare), removed when remove is set: 1 with
 * *payload, or 0.  Adds the entries compared to *inspected. */
int vm_hash_short_match(vm_hash_t *h, vmatch_bits_t key, vmatch_bits_t keycare, int remove,
                        void **payload, uint64_t *inspected);
/* Remove the vector's entry with this payload: 1, or 0. */
int vm_hash_short_remove(vm_hash_t *h, const void *payload, uint64_t *inspected);
/* The append that finds the vector full: its entries into a new table, in order, then this
 * one.  VMATCH_OK, or VMATCH_ENOMEM with the side as it was (the vector, no table). */
int vm_hash_to_table(vm_hash_t *h, vmatch_bits_t bits, vmatch_bits_t care, void *payload,
                     uint64_t seq);
/* A quiet table that holds at most hash.short entries, none in a wildcard or flat queue:
 * they go to the vector in order and the table is given back.  1 when done, 0 when not (or
 * out of memory: the table stays).  Called from an append (shrink.c), it moves the entry
 * just appended too: base.len, counted after, is then the vector's. */
int vm_hash_to_short(vm_hash_t *h);
/* An append to the table off its fast path (hash.c). */
int vm_hash_append_other(vm_hash_t *h, vmatch_bits_t bits, vmatch_bits_t care, void *payload,
                         uint64_t seq);

/* ---- arrival.c: the UMQ's search, removal and append off the fast path ---- */

int vm_hash_umq_match(vm_hash_t *h, vmatch_bits_t key, vmatch_bits_t keycare, int remove,
                      void **payload, uint64_t *inspected);
int vm_hash_umq_remove_payload(vm_hash_t *h, const void *payload, uint64_t *inspected);
/* Append a message off the fast path.  VMATCH_OK or ENOMEM (nothing changed). */
int vm_hash_umq_append(vm_hash_t *h, vmatch_bits_t bits, void *payload, uint64_t seq);
/* A flat UMQ's search and append, for a wildcard-heavy side: short of the calls above. */
int vm_hash_flat_match(vm_hash_t *h, vmatch_bits_t key, vmatch_bits_t keycare, int remove,
                       void **payload, uint64_t *inspected);
int vm_hash_flat_append(vm_hash_t *h, vmatch_bits_t bits, void *payload, uint64_t seq);

#endif
