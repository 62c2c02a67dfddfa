/* blocklist.h -- the list of blocks behind the lla and llv storages: how a queue's blocks
 * grow, how a removal moves a block's edges, when a block is given back or kept.
 *
 * A queue is a list of blocks, head first.  A block keeps its entries in queue order in
 * slots [head, tail), a live bitmap (one bit a slot, VM_BLK_WORD slots a word) marking the
 * ones not yet removed.  Appends go at the tail of the last block; a removal clears the
 * slot's bit (a hole), and a hole at either edge moves that edge to the next live slot.
 *
 * Block sizes (measured in docs/storages.md, "Block sizes"): a queue starts with a block of
 * `first` slots; while it has one block, a full block is replaced by a copy holding its live
 * entries, compacted, in a block of the size of the sequence first, 2 first, 4 first, ... (at
 * most `large`) that holds twice them, or compacted in place when that size is its own.
 * Once that block is a `large` one more than half full, further `large` blocks are linked
 * behind it, so a queue of several blocks has `large` blocks only.  A block that empties is
 * given back, the last one too, unless it is a first block and the engine lets one more
 * empty queue keep its block (VM_MEM_KEPT): the kept count of the engine is then one more,
 * until the queue's next append or its end.
 *
 * What this header does not know is left to the storage: what a slot holds, where the
 * bitmap lies in its block (its offset is passed in), the bytes of a block of a size, how to
 * copy entries (vm_blk_ops_t).  Everything here is static inline: the find, take and append
 * paths of lla and llv run through it, and compile to within an instruction or two per call
 * of what their own copies did (callgrind on replayed traces).
 */
#ifndef VM_BLOCKLIST_H
#define VM_BLOCKLIST_H

#include "list.h"
#include "pool.h"
#include "vmatch.h"

#include <stdint.h>

/* Slots per word of a block's live bitmap. */
#define VM_BLK_WORD 64

/* The part of a block the list manages; a storage's block struct starts with it. */
typedef struct vm_blk {
    vm_link_t link;      /* in the queue's list of blocks */
    uint32_t head, tail; /* the live slots lie in [head, tail) */
    uint32_t live;       /* live slots */
    uint32_t slots;      /* slots of the block */
} vm_blk_t;

/* The block whose link is at l (its first member), or NULL when l is NULL. */
static inline vm_blk_t *vm_blk_of(vm_link_t *l)
{
    return (vm_blk_t *)l;
}

/* ---- the live bitmap ---- */

/* Words of the live bitmap of a block of `slots` slots. */
static inline uint32_t vm_blk_words(uint32_t slots)
{
    return (slots + VM_BLK_WORD - 1) / VM_BLK_WORD;
}

/* Mark slot i of bitmap map live. */
static inline void vm_blk_mark(uint64_t *map, uint32_t i)
{
    map[i / VM_BLK_WORD] |= (uint64_t)1 << (i % VM_BLK_WORD);
}

/* The live bitmap of b, which lies map_off bytes into b's block, as an array: indexed as an
 * array and not through a pointer, each access folds the offset into its address as the
 * storage's own b->map[w] would, and no pointer to the bitmap is kept in a register. */
#define VM_BLK_MAP(b, map_off) (*(uint64_t(*)[])(void *)((char *)(b) + (map_off)))

/* The first live slot at or after slot i of b (bitmap at map_off), which has one there. */
static inline uint32_t vm_blk_next_live(vm_blk_t *b, size_t map_off, uint32_t i)
{
    uint32_t w = i / VM_BLK_WORD;
    uint64_t m = VM_BLK_MAP(b, map_off)[w] & (~(uint64_t)0 << (i % VM_BLK_WORD));
    while (!m)
        m = VM_BLK_MAP(b, map_off)[++w];
    return w * VM_BLK_WORD + (uint32_t)__builtin_ctzll(m);
}

/* The last live slot before slot i (> 0) of b (bitmap at map_off), which has one there. */
static inline uint32_t vm_blk_prev_live(vm_blk_t *b, size_t map_off, uint32_t i)
{
    uint32_t w = (i - 1) / VM_BLK_WORD;
    uint64_t m =
        VM_BLK_MAP(b, map_off)[w] & (~(uint64_t)0 >> (VM_BLK_WORD - 1 - (i - 1) % VM_BLK_WORD));
    while (!m)
        m = VM_BLK_MAP(b, map_off)[--w];
    return w * VM_BLK_WORD + VM_BLK_WORD - 1 - (uint32_t)__builtin_clzll(m);
}

/* What a removal did to its block (vm_blk_remove). */
enum vm_blk_removal {
    VM_BLK_EMPTIED, /* no live slot left: the caller keeps the block or drops it */
    VM_BLK_INSIDE,  /* a hole between live slots: the edges stay */
    VM_BLK_HEAD,    /* it was the head: head moved to the next live slot */
    VM_BLK_TAIL     /* it was the last: tail moved past the live slot before it */
};

/* Remove live slot i of b: clear its bit, count it out, and trim the edge it was at.
 * b: the block; map_off: where its live bitmap lies in the block (offsetof the storage's
 * map member); i: the slot, live.
 * Returns what happened (enum vm_blk_removal); the edges of an emptied block are stale.
 * (Head and tail at once would have emptied the block.)  lla and llv count their queue's
 * length down just before the call: of the orders tried, that one compiled to the fewest
 * instructions on llv's take (callgrind). */
static inline enum vm_blk_removal vm_blk_remove(vm_blk_t *b, size_t map_off, uint32_t i)
{
    VM_BLK_MAP(b, map_off)[i / VM_BLK_WORD] &= ~((uint64_t)1 << (i % VM_BLK_WORD));
    if (--b->live == 0)
        return VM_BLK_EMPTIED;
    if (i == b->head) {
        b->head = vm_blk_next_live(b, map_off, i);
        return VM_BLK_HEAD;
    }
    if (i + 1 == b->tail) {
        b->tail = vm_blk_prev_live(b, map_off, i) + 1;
        return VM_BLK_TAIL;
    }
    return VM_BLK_INSIDE;
}

/* ---- sizes and growth ---- */

/* The size of the sequence first, 2 first, 4 first, ... that holds n slots, at most large.
 * first: a queue's first block size; large: the largest block size (first <= large). */
static inline uint32_t vm_blk_fit(uint64_t n, uint32_t first, uint32_t large)
{
    uint32_t s = first;
    while (s < n && s < large)
        s *= 2;
    return s < large ? s : large;
}

/* Live entries up to which a full block with holes is replaced by one of four times them,
 * not two: a queue of 8 moving through a 16-slot llv block was compacted every 8 appends,
 * 14% more instructions per match at 8 entries (callgrind) than with fixed 64-slot blocks. */
enum { VM_BLK_SLACK_SHORT = 16 };

/* How room for one append at the tail is made (vm_blk_room). */
enum vm_blk_room {
    VM_BLK_NEW,     /* no block: a first one */
    VM_BLK_COMPACT, /* the only block, full: compact it in place */
    VM_BLK_MOVE,    /* the only block, full: move its live entries to a new block */
    VM_BLK_LINK     /* link a new `large` block behind the tail */
};

/* The growth rule (top of the file): how to make room at the tail of a queue whose tail
 * block is full, or that has none.
 * blocks: the queue's blocks; first, large: the smallest and largest block sizes;
 * *slots: set to the size of the block to allocate (NEW, MOVE, LINK).
 * Returns the step (enum vm_blk_room). */
static inline enum vm_blk_room vm_blk_room(const vm_list_t *blocks, uint32_t first,
                                           uint32_t large, uint32_t *slots)
{
    const vm_blk_t *t = vm_blk_of(blocks->tail);
    if (!t) {
        *slots = vm_blk_fit(1, first, large);
        return VM_BLK_NEW;
    }
    if (blocks->head == blocks->tail && (t->slots < large || t->live <= large / 2)) {
        /* Twice its live entries' worth, so at least as many appends as there are entries
         * pass before the next copy (the copies cost O(1) per append); four times for a
         * short queue with holes (one moving through its block), whose copies cost more
         * than the few hundred bytes that saves. */
        uint64_t live = t->live;
        *slots = vm_blk_fit(live * (live < t->slots && live <= VM_BLK_SLACK_SHORT ? 4 : 2),
                            first, large);
        return *slots == t->slots ? VM_BLK_COMPACT : VM_BLK_MOVE;
    }
    *slots = large;
    return VM_BLK_LINK;
}

/* Put new block b where step how (not COMPACT) of vm_blk_room said: the queue's only block
 * for NEW and MOVE (the caller has moved the live entries and gives the old block back),
 * behind the tail for LINK. */
static inline void vm_blk_place(vm_list_t *blocks, vm_blk_t *b, enum vm_blk_room how)
{
    if (how != VM_BLK_LINK)
        *blocks = (vm_list_t){NULL, NULL};
    vm_list_push_tail(blocks, &b->link);
}

/* What the block list asks of a storage; q is the storage's queue.  A storage passes a
 * static const table of its own static functions, so once vm_blk_grow is inlined the calls
 * are direct. */
typedef struct vm_blk_ops {
    /* A new empty block of `slots` slots, unlinked, or NULL when memory runs out. */
    vm_blk_t *(*alloc)(void *q, uint32_t slots);
    /* Copy the live entries of src, in order, to slots 0, 1, ... of dst, and set dst's
     * edges and counts; dst == src compacts the block in place. */
    void (*move)(void *q, vm_blk_t *dst, vm_blk_t *src);
    /* Give block b, unlinked or about to be, back to where it came from. */
    void (*release)(void *q, vm_blk_t *b);
} vm_blk_ops_t;

/* Make room for one append at the tail of a queue whose tail block is full, or that has
 * none, by the growth rule (vm_blk_room).
 * blocks: the queue's blocks; first, large: its smallest and largest block sizes; ops, q:
 * the storage's calls and its queue.
 * Returns VMATCH_OK, or VMATCH_ENOMEM with nothing changed. */
static inline int vm_blk_grow(vm_list_t *blocks, uint32_t first, uint32_t large,
                              const vm_blk_ops_t *ops, void *q)
{
    vm_blk_t *t = vm_blk_of(blocks->tail), *b;
    uint32_t slots;
    enum vm_blk_room how = vm_blk_room(blocks, first, large, &slots);
    if (how == VM_BLK_COMPACT) {
        ops->move(q, t, t);
        return VMATCH_OK;
    }
    if (!(b = ops->alloc(q, slots)))
        return VMATCH_ENOMEM;
    if (how == VM_BLK_MOVE) {
        ops->move(q, b, t);
        ops->release(q, t);
    }
    vm_blk_place(blocks, b, how);
    return VMATCH_OK;
}

/* ---- blocks kept by empty queues ---- */

/* Whether a queue of len entries holding blocks is empty and so keeps its only block: the
 * one place the rule is spelled (the kept block is counted in mem->kept). */
static inline int vm_blk_kept(const vm_list_t *blocks, uint64_t len)
{
    return blocks->tail && !len;
}

/* The queue's kept block is in use again (an append) or goes (the queue's end): count it
 * out of the engine's. */
static inline void vm_blk_unkeep(vm_mem_t *mem)
{
    mem->kept--;
}

/* Block b has just emptied (VM_BLK_EMPTIED): keep it for the next append when it is the
 * queue's only block, a first block, and the engine has room (VM_MEM_KEPT, for the engine's
 * 1-entry queues that empty and refill on every match); its edges are then reset.
 * mem: the engine's memory; first: the first block size.
 * Returns 1 when kept, 0 when the caller unlinks it and gives it back. */
static inline int vm_blk_keep(vm_mem_t *mem, vm_blk_t *b, uint32_t first)
{
    if (b->link.prev || b->link.next || b->slots != first || !vm_mem_may_keep(mem))
        return 0;
    mem->kept++;
    b->head = b->tail = 0;
    return 1;
}

/* ---- where blocks come from ---- */

/* A block of `bytes` bytes from pool, or from malloc (on a cache line, accounted) when pool
 * is NULL: the middle sizes of a queue, one block per queue at most, do not fill a slab.
 * Returns the block, uninitialised, or NULL when memory runs out. */
static inline void *vm_blk_alloc(vm_mem_t *mem, vm_pool_t *pool, size_t bytes)
{
    return pool ? vm_pool_get(pool) : vm_mem_alloc_line(mem, bytes);
}

/* Give back block b of `bytes` bytes, from pool (NULL: from malloc), as vm_blk_alloc. */
static inline void vm_blk_free(vm_mem_t *mem, vm_pool_t *pool, void *b, size_t bytes)
{
    if (pool)
        vm_pool_put(pool, b);
    else
        vm_mem_free_line(mem, b, bytes);
}

/* The end of a queue of len entries: count its kept block out, and give every block back
 * with ops->release(q, b); the list is left empty. */
static inline void vm_blk_free_all(vm_list_t *blocks, uint64_t len, vm_mem_t *mem,
                                   const vm_blk_ops_t *ops, void *q)
{
    if (vm_blk_kept(blocks, len))
        vm_blk_unkeep(mem);
    for (vm_link_t *n = blocks->head, *next; n; n = next) {
        next = n->next;
        ops->release(q, vm_blk_of(n));
    }
    *blocks = (vm_list_t){NULL, NULL};
}

#endif
