/* llv.h -- storage=llv internals shared by the queue (llv.c) and its search kernels.
 *
 * A block holds its slots (8 to llv.block, block.c) as separate lanes, each a 64-byte aligned
 * array:
 *
 *     header   next/prev, head/tail/start, counts, then one 64-bit word per group of 64
 *              slots: the live bitmap, and on the PRQ side the wild bitmap
 *     fp[]     16-bit fingerprint of each slot (vm_llv_fp)
 *     bits[]   the 64 match bits
 *     care[]   PRQ only: the receive's care mask (a message has no wildcards)
 *     payload[], seq[]
 *
 * A search compares fingerprints first, 16 or 32 slots per instruction, and verifies each
 * candidate against bits[] (and care[]) of the same block, never through a pointer.
 *
 * Fingerprint classes (`fpc` in the code; unrelated to the collective class of the API).
 * An exact entry's fingerprint is that of its bits (class 0).  A
 * wildcard receive matches on bits & care only, so its fingerprint is that of bits & care,
 * and a search for message bits m compares it with the fingerprint of m & care.  That works
 * when the search knows the care masks: each PRQ queue keeps a small table of them (MPI has
 * three shapes per layout: ANY_SOURCE, ANY_TAG, both), a class per entry, and each block a
 * mask of the classes it holds; a search computes one key fingerprint per class in use and
 * compares each class present in a block.  A receive whose care mask finds no room in the
 * table cannot be found through a fingerprint: its bit in the block's wild bitmap makes the
 * kernels compare it on the full lanes, ((key ^ bits) & care) == 0.  A UMQ search with a
 * wildcard care compares the full bits lane.  Whatever the path, the answer is the first
 * live slot in queue order that matches, exactly as a list walk would give.
 */
#ifndef VM_LLV_H
#define VM_LLV_H

#include "blocklist.h"
#include "queue.h"
#include "simd.h"

#include <stdint.h>

/* Slots per bitmap word.  A group's fingerprints are 128 bytes (two cache lines) and its
 * 64-bit lanes 512 bytes, whole vectors for every kernel. */
#define VM_LLV_GROUP 64
_Static_assert(VM_LLV_GROUP == VM_BLK_WORD, "a group is a word of the block list's bitmap");

/* The llv keys (llv.c). */
typedef struct vm_llv_config {
    uint32_t block; /* llv.block: slots per large block, a multiple of VM_LLV_GROUP */
} vm_llv_config_t;

/* Where the lanes of a block are.  A queue's blocks grow from VM_LLV_FIRST slots to llv.block
 * (block.c); one shared table holds the geometry of every size, and each block keeps what its
 * searches need of it (slots, lanes) in its header. */
typedef struct vm_llv_geom {
    uint32_t slots, groups;
    uint32_t fp, bits, care, payload, seq; /* byte offsets in the block; care 0 on the UMQ */
    uint32_t size;                         /* bytes per block, a multiple of 64 */
    int has_wild;                          /* PRQ: map + groups is the wild bitmap */
} vm_llv_geom_t;

typedef struct vm_llv_block {
    vm_blk_t blk; /* links, [head, tail), live and slots count (blocklist.h) */
    /* The geometry of the block's size, in the header itself (blk.slots, lanes): a search
     * of a short queue reads the head entry's lanes one load after the block pointer, not
     * two. */
    uint32_t lanes;   /* byte offset of bits[]; care[] (PRQ), payload[], seq[] follow it */
    uint32_t start;   /* first group a search reads, blk.head / VM_LLV_GROUP: the thesis's
                         start pointer, which here moves with every head removal */
    uint32_t wild;    /* live slots with a wild bit (PRQ) */
    uint16_t classes; /* bit k: a slot of fingerprint class k was appended since the block
                         was set up (may outlive the slot: it only costs a compare) */
    uint16_t prq;     /* 1 on the PRQ side: a care lane and a wild bitmap */
    uint64_t map[];   /* live bitmap (groups words), then on the PRQ the wild bitmap */
} vm_llv_block_t;
_Static_assert(offsetof(vm_llv_block_t, blk) == 0, "a block is its list link (blocklist.h)");

/* The block of list link n (its first member), or NULL. */
static inline vm_llv_block_t *vm_llv_block(vm_link_t *n)
{
    return (vm_llv_block_t *)n;
}

/* The block after b in its queue, or NULL. */
static inline vm_llv_block_t *vm_llv_next(const vm_llv_block_t *b)
{
    return vm_llv_block(b->blk.link.next);
}

/* Slots of a queue's first block: the fewest that keep every 64-bit lane a whole cache line,
 * so a vector of 8 lanes never straddles two (measured in docs/storages.md). */
#define VM_LLV_FIRST 8

/* Lay out blocks of `slots` slots for side: VM_LLV_FIRST times a power of two below
 * VM_LLV_GROUP, or a multiple of VM_LLV_GROUP.  A block of fewer than VM_LLV_GROUP slots has
 * one partial group: the kernels still read a whole group of fingerprints (128 bytes), which
 * the layout keeps inside the block (the lanes after it), and its bitmap word discards the
 * slots past the end. */
void vm_llv_geom_init(vm_llv_geom_t *g, uint32_t slots, int side);

/* The shared geometry of blocks of `slots` slots (as for vm_llv_geom_init, at most 4096). */
const vm_llv_geom_t *vm_llv_geom(uint32_t slots, int side);

/* The geometry of b (the shared table entry of its size and side). */
static inline const vm_llv_geom_t *vm_llv_geo(const vm_llv_block_t *b)
{
    return vm_llv_geom(b->blk.slots, b->prq ? VM_PRQ : VM_UMQ);
}

/* The 64-bit lane k of b: 0 bits, then care on the PRQ, payload, seq. */
static inline uint64_t *vm_llv_lane(const vm_llv_block_t *b, uint32_t k)
{
    return (uint64_t *)((char *)b + b->lanes) + (size_t)k * b->blk.slots;
}

static inline uint64_t *vm_llv_bits(const vm_llv_block_t *b)
{
    return vm_llv_lane(b, 0);
}

/* The care lane of a PRQ block; NULL on the UMQ. */
static inline uint64_t *vm_llv_care(const vm_llv_block_t *b)
{
    return b->prq ? vm_llv_lane(b, 1) : NULL;
}

static inline uint64_t *vm_llv_payload(const vm_llv_block_t *b)
{
    return vm_llv_lane(b, 1u + b->prq);
}

static inline uint64_t *vm_llv_seq(const vm_llv_block_t *b)
{
    return vm_llv_lane(b, 2u + b->prq);
}

/* Bytes of the fingerprint lane of a block of s slots: whole cache lines, which lie just
 * before its bits lane (block.c). */
static inline uint32_t vm_llv_fp_bytes(uint32_t s)
{
    return (2u * s + 63u) / 64u * 64u;
}

static inline uint16_t *vm_llv_fps(const vm_llv_block_t *b)
{
    return (uint16_t *)((char *)b + b->lanes - vm_llv_fp_bytes(b->blk.slots));
}

/* Bitmap words of one kind in b: one per group. */
static inline uint32_t vm_llv_groups(const vm_llv_block_t *b)
{
    return vm_blk_words(b->blk.slots);
}

/* The wild bitmap of b, or NULL when b has no wild slot (always on the UMQ). */
static inline const uint64_t *vm_llv_wild(const vm_llv_block_t *b)
{
    return b->wild ? b->map + vm_llv_groups(b) : NULL;
}

/* One past the last group holding live slots. */
static inline uint32_t vm_llv_end(const vm_llv_block_t *b)
{
    return vm_blk_words(b->blk.tail);
}

/* The 16-bit fingerprint of match bits: the top bits of a Fibonacci hash, to which every bit
 * of the input contributes (a tag or a source differing in one low bit changes it). */
static inline uint32_t vm_llv_fp(uint64_t bits)
{
    return (uint32_t)((bits * 0x9E3779B97F4A7C15ull) >> 48);
}

/* Fingerprint classes per PRQ queue: class 0 (exact entries) and up to three care masks,
 * the three wildcard shapes of an MPI layout.  Each class in use costs a compare per group
 * of the blocks holding it, so the table stays small; other care masks go to the wild
 * bitmap. */
#define VM_LLV_CLASSES 4

/* What a find_key search looks for. */
typedef struct vm_llv_probe {
    uint64_t key;
    unsigned classes;            /* bit k: class k is in use in the queue */
    uint32_t fp[VM_LLV_CLASSES]; /* fp[k]: vm_llv_fp(key & care of class k) */
} vm_llv_probe_t;

/* Where a kernel found a slot, and how many live slots it passed in the blocks before. */
typedef struct vm_llv_pos {
    vm_llv_block_t *block;
    uint32_t slot;
    uint64_t passed; /* live slots of the blocks passed over (all of them when not found) */
} vm_llv_pos_t;

/* The 64-bit lanes a find_masked search can compare. */
enum vm_llv_lane_id { VM_LLV_BITS, VM_LLV_PAYLOAD };

/* A search kernel.  Each walks blocks from b on, group by group from b->start, and returns 1
 * with *pos at the first live slot in queue order that matches, or 0 (pos->passed set). */
typedef struct vm_llv_kernel {
    /* First: the engine's view of it, the simd= value that picks it and the CPU features it
     * needs (simd.h; the module lists it, kernels.c). */
    vm_kernel_t kernel;
    /* Slots that match p->key: ((key ^ bits) & care) == 0 on the PRQ (care all ones for
     * class 0), bits == key on the UMQ. */
    int (*find_key)(vm_llv_block_t *b, const vm_llv_probe_t *p, vm_llv_pos_t *pos);
    /* Slots whose lane value v satisfies ((v ^ key) & care) == 0: a UMQ search with a
     * wildcard care (VM_LLV_BITS), or a payload (VM_LLV_PAYLOAD, care all ones). */
    int (*find_masked)(vm_llv_block_t *b, enum vm_llv_lane_id lane, uint64_t key, uint64_t care,
                       vm_llv_pos_t *pos);
} vm_llv_kernel_t;

extern const vm_llv_kernel_t vm_llv_scalar;
#ifdef VM_SIMD_X86
extern const vm_llv_kernel_t vm_llv_avx2, vm_llv_avx512;
#endif

/* kernels.c: the kernels of this build, NULL-terminated, as the module lists them. */
extern const vm_kernel_t *const vm_llv_kernels[];

/* The kernel of this build for simd= value simd (enum vm_simd, resolved), or NULL when there
 * is none.  Whether the CPU runs it is the spec parser's check (vm_simd_available). */
const vm_llv_kernel_t *vm_llv_kernel(int simd);

/* The name of kernel k, its simd= value. */
static inline const char *vm_llv_kernel_name(const vm_llv_kernel_t *k)
{
    return vm_simd_name(k->kernel.simd);
}

/* PRQ fingerprint classes: the care mask of each (class 0 is all ones), and its live entries;
 * a class without live entries is free for the next new care mask.  Made at a queue's first
 * wildcard receive, so a queue that never sees one (the UMQ, pnp's partner queues) does not
 * carry it. */
typedef struct vm_llv_classes {
    uint64_t care[VM_LLV_CLASSES];
    uint64_t live[VM_LLV_CLASSES];
} vm_llv_classes_t;

/* One llv queue: 72 bytes, all an empty queue costs (pnp keeps thousands). */
typedef struct vm_llv {
    vm_queue_t base;
    vm_list_t blocks; /* of vm_llv_block_t; an empty queue holds none but a kept one */
    const vm_llv_kernel_t *kern;
    vm_llv_classes_t *fpc;          /* NULL until the first wildcard receive */
    uint32_t large;                 /* llv.block */
    uint8_t pool_first, pool_large; /* env->pools of first and llv.block blocks */
} vm_llv_t;

/* The first block of l, or NULL. */
static inline vm_llv_block_t *vm_llv_first(const vm_llv_t *l)
{
    return vm_llv_block(l->blocks.head);
}

/* The last block of l, or NULL. */
static inline vm_llv_block_t *vm_llv_last(const vm_llv_t *l)
{
    return vm_llv_block(l->blocks.tail);
}

/* block.c: the blocks of a queue. */
/* Set up the pools of l's blocks (no memory is taken): VMATCH_OK, or VMATCH_ENOMEM when the
 * engine has no pool sizes left. */
int vm_llv_pools(vm_llv_t *l);
/* Make room for one append at the tail of l as the block list's growth rule says
 * (vm_blk_room): a first block, a larger or compacted copy of a full only block, or a new
 * llv.block block.  VMATCH_OK, or VMATCH_ENOMEM with l unchanged. */
int vm_llv_room(vm_llv_t *l);
/* Unlink block b of l and give it back. */
void vm_llv_drop(vm_llv_t *l, vm_llv_block_t *b);

/* Block b has emptied: keep it as the block list's rule says (vm_blk_keep), else drop it.
 * Inline: a queue of one entry comes here on every match. */
static inline void vm_llv_emptied(vm_llv_t *l, vm_llv_block_t *b)
{
    if (vm_blk_keep(&l->base.env->mem, &b->blk, VM_LLV_FIRST)) {
        b->start = 0;
        b->classes = 0;
        return;
    }
    vm_llv_drop(l, b);
}
/* Give back every block of l. */
void vm_llv_drop_all(vm_llv_t *l);

#endif
