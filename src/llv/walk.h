/* walk.h -- the block walk every llv kernel shares.  Each kernel file supplies the compares
 * over one group of 64 slots; these walkers are always inlined into the kernel's own
 * function, which carries its target attribute, so the compares (known functions once
 * inlined) are inlined too and their broadcasts stay in registers.  The generic code never
 * names an instruction set.
 */
#ifndef VM_LLV_WALK_H
#define VM_LLV_WALK_H

#include "llv.h"

#include <stddef.h>

#define VM_LLV_INLINE static inline __attribute__((always_inline))

/* The compares a kernel supplies.  ctx is the kernel's own state (its broadcasts of the
 * probe); fp, lane, bits and care point at the first slot of a group.
 *   any:   1 when a fingerprint of the n groups from fp (n is 1 or 2, a constant once
 *          inlined) equals that of a class in fpc (a bit set), dead slots included;
 *   mask:  the slots whose fingerprint equals that of a class in fpc, dead slots included;
 *   wild:  the first slot of want, in order, with ((key ^ bits) & care) == 0, or
 *          VM_LLV_GROUP;
 *   first: the first slot of want, in order, whose lane value v has ((v ^ key) & care) == 0
 *          (find_masked), or VM_LLV_GROUP. */
typedef int (*vm_llv_any_fn)(const void *ctx, const uint16_t *fp, unsigned fpc, unsigned n);
typedef uint64_t (*vm_llv_mask_fn)(const void *ctx, const uint16_t *fp, unsigned fpc);
typedef uint32_t (*vm_llv_wild_fn)(const void *ctx, const uint64_t *bits, const uint64_t *care,
                                   uint64_t want);
typedef uint32_t (*vm_llv_first_fn)(const void *ctx, const uint64_t *lane, uint64_t want);

/* Record a hit at slot `o + s` of b; returns 1. */
VM_LLV_INLINE int vm_llv_at(vm_llv_pos_t *pos, vm_llv_block_t *b, size_t o, uint32_t s,
                            uint64_t passed)
{
    *pos = (vm_llv_pos_t){.block = b, .slot = (uint32_t)(o + s), .passed = passed};
    return 1;
}

/* The first fingerprint candidate in cand (ascending) that really matches key -- under its
 * care mask when care is not NULL, else exactly -- before the wild match pw (VM_LLV_GROUP
 * when none); else pw.  Returns the slot, or VM_LLV_GROUP for none. */
VM_LLV_INLINE uint32_t vm_llv_verify(const uint64_t *bits, const uint64_t *care, uint64_t cand,
                                     uint32_t pw, uint64_t key)
{
    for (; cand; cand &= cand - 1) {
        uint32_t i = (uint32_t)__builtin_ctzll(cand);
        if (i > pw)
            break;
        if (care ? ((key ^ bits[i]) & care[i]) == 0 : bits[i] == key)
            return i;
    }
    return pw;
}

/* Cache lines of a block's fingerprint lane fetched ahead when the search enters the block
 * before it: two groups' worth (128 bytes each), enough for the hardware prefetcher, which
 * does not follow the jump from one block to the next, to take over. */
#define VM_LLV_PREFETCH_LINES 4

/* Prefetch the header and the first fingerprint lines of block b, whose fingerprints are at
 * byte offset fp as in the block before it: a queue of several blocks has llv.block blocks
 * only (block.c). */
VM_LLV_INLINE void vm_llv_prefetch(const vm_llv_block_t *b, size_t fp)
{
    __builtin_prefetch(b);
    for (unsigned i = 0; i < VM_LLV_PREFETCH_LINES; i++)
        __builtin_prefetch((const char *)b + fp + 64 * i);
}

/* find_key over blocks from b on (see vm_llv_kernel_t). */
VM_LLV_INLINE int vm_llv_walk_key(vm_llv_block_t *b, const vm_llv_probe_t *p, const void *ctx,
                                  vm_llv_pos_t *pos, vm_llv_any_fn any, vm_llv_mask_fn mask,
                                  vm_llv_wild_fn wild)
{
    uint64_t passed = 0;
    for (; b; b = vm_llv_next(b)) {
        const uint16_t *fp = vm_llv_fps(b);
        const uint64_t *bits = vm_llv_bits(b), *wmap = vm_llv_wild(b);
        const uint64_t *care = vm_llv_care(b);
        unsigned fpc = b->classes & p->classes;
        uint32_t r = b->start, end = vm_llv_end(b);
        if (b->blk.link.next) /* its header and first fingerprints, while this is searched */
            vm_llv_prefetch(vm_llv_next(b), (size_t)((const char *)fp - (const char *)b));
        if (!wmap && fpc == 1) {
            /* The common block, exact entries only: one test per two groups, and the bitmap
             * is read only when a group has a candidate (dead slots are filtered then). */
            while (r < end) {
                if (r + 1 < end && !any(ctx, fp + (size_t)r * VM_LLV_GROUP, 1, 2)) {
                    r += 2;
                    continue;
                }
                /* a candidate in r or r + 1, or r is the last group: one at a time */
                for (uint32_t stop = r + 2 < end ? r + 2 : end; r < stop; r++) {
                    size_t o = (size_t)r * VM_LLV_GROUP;
                    if (!any(ctx, fp + o, 1, 1))
                        continue;
                    uint64_t cand = mask(ctx, fp + o, 1) & b->map[r];
                    uint32_t s = vm_llv_verify(bits + o, NULL, cand, VM_LLV_GROUP, p->key);
                    if (s < VM_LLV_GROUP)
                        return vm_llv_at(pos, b, o, s, passed);
                }
            }
        } else {
            for (; r < end; r++) {
                uint64_t live = b->map[r];
                if (!live)
                    continue; /* a group of holes costs one word */
                size_t o = (size_t)r * VM_LLV_GROUP;
                uint64_t w = wmap ? wmap[r] : 0;
                uint64_t cand =
                    any(ctx, fp + o, fpc, 1) ? mask(ctx, fp + o, fpc) & live & ~w : 0;
                if (!cand && !w)
                    continue;
                uint32_t pw = w ? wild(ctx, bits + o, care + o, w) : VM_LLV_GROUP;
                uint32_t s = vm_llv_verify(bits + o, care ? care + o : NULL, cand, pw, p->key);
                if (s < VM_LLV_GROUP)
                    return vm_llv_at(pos, b, o, s, passed);
            }
        }
        passed += b->blk.live;
    }
    pos->passed = passed;
    return 0;
}

/* find_masked over blocks from b on (see vm_llv_kernel_t). */
VM_LLV_INLINE int vm_llv_walk_masked(vm_llv_block_t *b, enum vm_llv_lane_id lane,
                                     const void *ctx, vm_llv_pos_t *pos, vm_llv_first_fn first)
{
    uint64_t passed = 0;
    for (; b; b = vm_llv_next(b)) {
        const uint64_t *v = lane == VM_LLV_BITS ? vm_llv_bits(b) : vm_llv_payload(b);
        for (uint32_t r = b->start, end = vm_llv_end(b); r < end; r++) {
            uint64_t live = b->map[r];
            if (!live)
                continue;
            size_t o = (size_t)r * VM_LLV_GROUP;
            uint32_t s = first(ctx, v + o, live);
            if (s < VM_LLV_GROUP)
                return vm_llv_at(pos, b, o, s, passed);
        }
        passed += b->blk.live;
    }
    pos->passed = passed;
    return 0;
}

#endif
