/* llv.c -- storage=llv: a linked list of vector blocks (thesis chapter 6, Fig. 6.4), searched
 * by the kernel the spec's simd= key picked (kernels.c, kernel_*.c).
 *
 * Blocks keep their slots in queue order, as in lla: appends go at the tail of the last
 * block, a removal clears the slot's live bit (a hole), a hole at either end of a block moves
 * its head or tail index (edge trimming), and a block that empties is given back.  A queue's
 * blocks grow from 8 slots to llv.block (block.c).  What differs is the layout (llv.h): lanes
 * instead of records, so a kernel compares a whole vector of fingerprints or match bits per
 * instruction, and a search starts at the first group holding the head instead of at the first
 * vector of the block, so removals at the head never leave a vector of dead slots to re-read
 * (the thesis design only moved its start pointer when a whole vector emptied).
 *
 * Short queues do not pay for the vectors: a search first compares the queue's head entry
 * with plain scalar code, walks a queue of at most VM_LLV_SHORT entries slot by slot, and
 * only then calls the kernel.
 */
#include "llv.h"

#include "module.h"

#include <stdio.h>
#include <string.h>

extern const vm_storage_t vm_llv_storage;
static const vm_storage_t llv_ops[2];
extern const vm_module_t vm_llv_module;

static int llv_create(vm_env_t *env, int side, vm_queue_t **out)
{
    const vm_llv_kernel_t *kern = vm_llv_kernel((int)env->cfg->simd);
    if (!kern) /* the spec parser resolved and checked simd; this is a build mismatch */
        return VMATCH_EUNSUPPORTED;
    const vm_llv_config_t *cfg = vm_module_cfg(env->cfg, &vm_llv_module);
    vm_llv_t *l = vm_mem_alloc(&env->mem, sizeof *l);
    if (!l)
        return VMATCH_ENOMEM;
    *l = (vm_llv_t){.base = {.ops = &llv_ops[side], .env = env, .side = side},
                    .kern = kern,
                    .large = cfg->block};
    /* The pools now, so that running out of pool sizes fails here and not at some append. */
    if (vm_llv_pools(l) < 0) {
        vm_mem_free(&env->mem, l, sizeof *l);
        return VMATCH_ENOMEM;
    }
#ifdef VMATCH_SIMD_DEBUG
    fprintf(stderr, "vmatch: llv %s queue searches with the %s kernel\n",
            side == VM_PRQ ? "PRQ" : "UMQ", vm_llv_kernel_name(kern));
#endif
    *out = &l->base;
    return VMATCH_OK;
}

static void llv_destroy(vm_queue_t *q)
{
    vm_llv_t *l = (vm_llv_t *)q;
    vm_llv_drop_all(l);
    if (l->fpc)
        vm_mem_free(&q->env->mem, l->fpc, sizeof *l->fpc);
    vm_mem_free(&q->env->mem, l, sizeof *l);
}

/* Paths off the per-match fast path: out of line, so the fast path keeps its registers. */
#define VM_LLV_COLD __attribute__((noinline, cold))

/* The fingerprint class (1 ..) of a new PRQ entry with this care mask, not all ones, taking a
 * free class for a new mask; -1 when the table is full or cannot be made (the entry then
 * gets a wild bit: slower to search, never wrong). */
static int llv_class_of(vm_llv_t *l, uint64_t care)
{
    vm_llv_classes_t *c = l->fpc;
    if (!c) {
        c = l->fpc = vm_mem_calloc(&l->base.env->mem, sizeof *c);
        if (!c)
            return -1;
        c->care[0] = ~(uint64_t)0;
    }
    int free = -1;
    for (int k = 1; k < VM_LLV_CLASSES; k++) {
        if (c->live[k] && c->care[k] == care)
            return k;
        if (!c->live[k] && free < 0)
            free = k;
    }
    if (free > 0)
        c->care[free] = care;
    return free;
}

/* Book a new wildcard receive at slot i of b: its class, or its wild bit when the class
 * table is full.  Returns the bits its fingerprint is taken of. */
VM_LLV_COLD static uint64_t llv_book_wild(vm_llv_t *l, vm_llv_block_t *b, uint32_t i,
                                          uint64_t bits, uint64_t care)
{
    int k = llv_class_of(l, care);
    if (k < 0) { /* no class: the kernels compare it on the full lanes */
        vm_blk_mark(b->map + vm_llv_groups(b), i);
        b->wild++;
        return bits;
    }
    l->fpc->live[k]++;
    b->classes |= 1u << k;
    return bits & care;
}

/* Forget the wildcard receive (care not all ones) at slot i of b, which is being removed. */
VM_LLV_COLD static void llv_forget_wild(vm_llv_t *l, vm_llv_block_t *b, uint32_t i,
                                        uint64_t care)
{
    uint64_t *wild = &b->map[vm_llv_groups(b) + i / VM_LLV_GROUP];
    uint64_t bit = (uint64_t)1 << (i % VM_LLV_GROUP);
    if (*wild & bit) {
        *wild &= ~bit;
        b->wild--;
        return;
    }
    vm_llv_classes_t *c = l->fpc; /* it has a class, so the table exists */
    int k = VM_LLV_CLASSES - 1;
    while (k > 1 && !(c->live[k] && c->care[k] == care))
        k--;
    c->live[k]--;
}

/* Write an entry into the next slot of b, which has room; hashed is what its fingerprint is
 * taken of (bits, or bits & care for a wildcard receive with a class). */
static inline __attribute__((always_inline)) void llv_put(vm_llv_t *l, vm_llv_block_t *b,
                                                          int prq, uint64_t bits,
                                                          uint64_t hashed, uint64_t care,
                                                          void *payload, uint64_t seq)
{
    uint32_t i = b->blk.tail++;
    uint64_t *lane = vm_llv_bits(b) + i;
    size_t s = b->blk.slots;
    lane[0] = bits;
    if (prq)
        lane[s] = care;
    lane[(1 + prq) * s] = (uint64_t)(uintptr_t)payload;
    lane[(2 + prq) * s] = seq;
    /* Class 0 needs no count: a search always compares it. */
    b->classes |= 1;
    vm_llv_fps(b)[i] = (uint16_t)vm_llv_fp(hashed);
    vm_blk_mark(b->map, i);
    b->blk.live++;
    l->base.len++;
}

/* An append that needs a new block or is a wildcard receive: out of line, so the common
 * append needs no registers saved. */
__attribute__((noinline)) static int llv_append_slow(vm_llv_t *l, uint64_t bits, uint64_t care,
                                                     void *payload, uint64_t seq)
{
    vm_llv_block_t *b = vm_llv_last(l);
    uint64_t hashed = bits;
    if (vm_blk_kept(&l->blocks, l->base.len)) /* its kept block, which has room, in use */
        vm_blk_unkeep(&l->base.env->mem);
    if (!b || b->blk.tail == b->blk.slots) {
        int rc = vm_llv_room(l);
        if (rc < 0)
            return rc;
        b = vm_llv_last(l);
    }
    int prq = l->base.side == VM_PRQ;
    if (prq && care != ~(uint64_t)0)
        hashed = llv_book_wild(l, b, b->blk.tail, bits, care);
    llv_put(l, b, prq, bits, hashed, care, payload, seq);
    return VMATCH_OK;
}

/* The calls a queue makes on every match take prq, 1 on the PRQ side, as a constant: each is
 * compiled once per side (the llv_ops tables at the end). */
#define VM_LLV_SIDED static inline __attribute__((always_inline))

VM_LLV_SIDED int llv_append(vm_queue_t *q, int prq, vmatch_bits_t bits, vmatch_bits_t care,
                            void *payload, uint64_t seq)
{
    vm_llv_t *l = (vm_llv_t *)q;
    vm_llv_block_t *b = vm_llv_last(l);
    if (!b || b->blk.tail == b->blk.slots || (prq && care != ~(vmatch_bits_t)0))
        return llv_append_slow(l, bits, care, payload, seq);
    if (vm_blk_kept(&l->blocks, q->len)) /* the block the empty queue kept, in use again */
        vm_blk_unkeep(&q->env->mem);
    llv_put(l, b, prq, bits, bits, care, payload, seq);
    return VMATCH_OK;
}

/* Live slots of b from its head up to and including slot: the entries a list walk would
 * have compared in this block.  Counted from whichever end of the block is nearer, so a
 * match near the tail of a large block does not cost a pass over its bitmap. */
static uint64_t rank(const vm_llv_block_t *b, uint32_t slot)
{
    uint32_t w = slot / VM_LLV_GROUP, end = vm_llv_end(b);
    uint64_t upto = ~(uint64_t)0 >> (VM_LLV_GROUP - 1 - slot % VM_LLV_GROUP);
    uint64_t n = (uint64_t)__builtin_popcountll(b->map[w] & upto);
    if (w - b->start <= end - w) {
        for (uint32_t x = b->start; x < w; x++)
            n += (uint64_t)__builtin_popcountll(b->map[x]);
        return n;
    }
    uint64_t after = (uint64_t)__builtin_popcountll(b->map[w] & ~upto);
    for (uint32_t x = w + 1; x < end; x++)
        after += (uint64_t)__builtin_popcountll(b->map[x]);
    return b->blk.live - after;
}

/* Fill *hit for slot i of b.  Always returns 1. */
static int llv_hit(vm_llv_block_t *b, uint32_t i, vm_hit_t *hit)
{
    *hit = (vm_hit_t){.payload = (void *)(uintptr_t)vm_llv_payload(b)[i],
                      .seq = vm_llv_seq(b)[i],
                      .where = b,
                      .slot = i};
    return 1;
}

/* The end of a kernel search: *hit and the entries a list walk would have compared. */
static int llv_found(int found, const vm_llv_pos_t *pos, vm_hit_t *hit, uint64_t *inspected)
{
    if (!found) {
        *inspected += pos->passed;
        return 0;
    }
    *inspected += pos->passed + rank(pos->block, pos->slot);
    return llv_hit(pos->block, pos->slot, hit);
}

/* Queues this short are searched with plain scalar compares, slot by slot in queue order:
 * below it the fixed cost of a kernel call (broadcasts, a fingerprint pass over a whole group,
 * the candidate mask) is more than the compares it saves.  Measured in docs/storages.md, "How
 * llv is tuned". */
#ifndef VM_LLV_SHORT
#define VM_LLV_SHORT 8
#endif

enum scan_mode { SCAN_PRQ, SCAN_UMQ, SCAN_PAYLOAD };

/* The scalar walk of a short queue: every live slot in order until one passes the mode's
 * test.  Inlined into each caller so that the mode is a constant. */
static inline __attribute__((always_inline)) int llv_scan(vm_llv_t *l, enum scan_mode mode,
                                                          uint64_t key, uint64_t keycare,
                                                          vm_hit_t *hit, uint64_t *inspected)
{
    uint64_t seen = 0;
    for (vm_llv_block_t *b = vm_llv_first(l); b; b = vm_llv_next(b)) {
        const uint64_t *v = mode == SCAN_PAYLOAD ? vm_llv_payload(b) : vm_llv_bits(b);
        const uint64_t *care = mode == SCAN_PRQ ? vm_llv_care(b) : NULL;
        for (uint32_t w = b->start, end = vm_llv_end(b); w < end; w++) {
            for (uint64_t m = b->map[w]; m; m &= m - 1) {
                uint32_t i = w * VM_LLV_GROUP + (uint32_t)__builtin_ctzll(m);
                int ok = mode == SCAN_PRQ   ? ((key ^ v[i]) & care[i]) == 0
                         : mode == SCAN_UMQ ? ((v[i] ^ key) & keycare) == 0
                                            : v[i] == key;
                seen++;
                if (ok) {
                    *inspected += seen;
                    return llv_hit(b, i, hit);
                }
            }
        }
    }
    *inspected += seen;
    return 0;
}

/* The search past a head entry that did not match: slot by slot for a short queue, else the
 * kernel.  Out of line, so a match at the head costs no more than a few loads. */
__attribute__((noinline)) static int llv_search(vm_llv_t *l, vmatch_bits_t key,
                                                vmatch_bits_t keycare, vm_hit_t *hit,
                                                uint64_t *inspected)
{
    int prq = l->base.side == VM_PRQ;
    if (l->base.len <= VM_LLV_SHORT)
        return prq ? llv_scan(l, SCAN_PRQ, key, 0, hit, inspected)
                   : llv_scan(l, SCAN_UMQ, key, keycare, hit, inspected);
    vm_llv_pos_t pos;
    int found;
    if (prq || keycare == ~(vmatch_bits_t)0) {
        vm_llv_probe_t p = {.key = key, .classes = 1, .fp = {vm_llv_fp(key)}};
        const vm_llv_classes_t *c = prq ? l->fpc : NULL;
        for (int k = 1; c && k < VM_LLV_CLASSES; k++) {
            if (c->live[k]) {
                p.classes |= 1u << k;
                p.fp[k] = vm_llv_fp(key & c->care[k]);
            }
        }
        found = l->kern->find_key(vm_llv_first(l), &p, &pos);
    } else {
        found = l->kern->find_masked(vm_llv_first(l), VM_LLV_BITS, key, keycare, &pos);
    }
    return llv_found(found, &pos, hit, inspected);
}

/* Whether the head entry of l, which is not empty, matches; *i is its slot.  Scalar: a queue
 * is often matched at its head (the forward search of the benchmarks, and much real
 * traffic), and then nothing else is read. */
VM_LLV_SIDED int llv_head_matches(const vm_llv_t *l, int prq, vmatch_bits_t key,
                                  vmatch_bits_t keycare, uint32_t *i)
{
    const vm_llv_block_t *b = vm_llv_first(l);
    const uint64_t *lane = vm_llv_bits(b) + b->blk.head;
    *i = b->blk.head;
    return prq ? ((key ^ lane[0]) & lane[b->blk.slots]) == 0 : ((lane[0] ^ key) & keycare) == 0;
}

VM_LLV_SIDED int llv_find(vm_queue_t *q, int prq, vmatch_bits_t key, vmatch_bits_t keycare,
                          vm_hit_t *hit, uint64_t *inspected)
{
    vm_llv_t *l = (vm_llv_t *)q;
    uint32_t i;
    if (!q->len)
        return 0;
    if (llv_head_matches(l, prq, key, keycare, &i)) {
        *inspected += 1;
        return llv_hit(vm_llv_first(l), i, hit);
    }
    return llv_search(l, key, keycare, hit, inspected);
}

static int llv_find_payload(vm_queue_t *q, const void *payload, vm_hit_t *hit,
                            uint64_t *inspected)
{
    vm_llv_t *l = (vm_llv_t *)q;
    uint64_t key = (uint64_t)(uintptr_t)payload;
    if (!q->len)
        return 0;
    vm_llv_block_t *b = vm_llv_first(l);
    if (vm_llv_payload(b)[b->blk.head] == key) {
        *inspected += 1;
        return llv_hit(b, b->blk.head, hit);
    }
    if (q->len <= VM_LLV_SHORT)
        return llv_scan(l, SCAN_PAYLOAD, key, 0, hit, inspected);
    vm_llv_pos_t pos;
    int found = l->kern->find_masked(b, VM_LLV_PAYLOAD, key, ~(uint64_t)0, &pos);
    return llv_found(found, &pos, hit, inspected);
}

/* Remove slot i of b from the live bitmap and count it out, then trim the block's edges
 * (moving the start group with the head) or drop it. */
static inline __attribute__((always_inline)) void llv_settle(vm_llv_t *l, vm_llv_block_t *b,
                                                             uint32_t i)
{
    l->base.len--;
    enum vm_blk_removal r = vm_blk_remove(&b->blk, offsetof(vm_llv_block_t, map), i);
    if (r == VM_BLK_EMPTIED)
        vm_llv_emptied(l, b);
    else if (r == VM_BLK_HEAD)
        b->start = b->blk.head / VM_LLV_GROUP;
}

/* Removal of a wildcard receive: out of line, like its append. */
__attribute__((noinline)) static void llv_remove_wild(vm_llv_t *l, vm_llv_block_t *b,
                                                      uint32_t i, uint64_t care)
{
    llv_forget_wild(l, b, i, care);
    llv_settle(l, b, i);
}

/* Remove the entry at slot i of b. */
VM_LLV_SIDED void llv_remove_at(vm_llv_t *l, int prq, vm_llv_block_t *b, uint32_t i)
{
    if (prq) {
        uint64_t care = vm_llv_bits(b)[b->blk.slots + i];
        if (care != ~(uint64_t)0) {
            llv_remove_wild(l, b, i, care);
            return;
        }
    }
    llv_settle(l, b, i);
}

VM_LLV_SIDED void llv_remove(vm_queue_t *q, int prq, const vm_hit_t *hit)
{
    llv_remove_at((vm_llv_t *)q, prq, hit->where, hit->slot);
}

/* find and remove in one call: a match at the head is removed where it was found, and only
 * its payload is read. */
VM_LLV_SIDED int llv_take(vm_queue_t *q, int prq, vmatch_bits_t key, vmatch_bits_t keycare,
                          void **payload, uint64_t *inspected)
{
    vm_llv_t *l = (vm_llv_t *)q;
    uint32_t i;
    if (llv_head_matches(l, prq, key, keycare, &i)) {
        vm_llv_block_t *b = vm_llv_first(l);
        *inspected += 1;
        *payload = (void *)(uintptr_t)vm_llv_bits(b)[(1u + prq) * b->blk.slots + i];
        llv_remove_at(l, prq, b, i);
        return 1;
    }
    vm_hit_t hit;
    if (!llv_search(l, key, keycare, &hit, inspected))
        return 0;
    *payload = hit.payload;
    llv_remove_at(l, prq, hit.where, hit.slot);
    return 1;
}

static void llv_each(vm_queue_t *q, vm_each_fn *fn, void *arg)
{
    for (vm_llv_block_t *b = vm_llv_first((vm_llv_t *)q); b; b = vm_llv_next(b)) {
        const uint64_t *bits = vm_llv_bits(b), *care = vm_llv_care(b), *pl = vm_llv_payload(b),
                       *seq = vm_llv_seq(b);
        for (uint32_t w = b->blk.head / VM_LLV_GROUP; w < vm_llv_end(b); w++)
            for (uint64_t m = b->map[w]; m; m &= m - 1) {
                uint32_t i = w * VM_LLV_GROUP + (uint32_t)__builtin_ctzll(m);
                if (fn(arg, bits[i], care ? care[i] : ~(uint64_t)0, (void *)(uintptr_t)pl[i],
                       seq[i]))
                    return;
            }
    }
}

/* The calls of each side, prq a constant in each. */
#define LLV_SIDE(side, prq)                                                                    \
    static int llv_append_##side(vm_queue_t *q, vmatch_bits_t bits, vmatch_bits_t care,        \
                                 void *payload, uint64_t seq)                                  \
    {                                                                                          \
        return llv_append(q, prq, bits, care, payload, seq);                                   \
    }                                                                                          \
    static int llv_find_##side(vm_queue_t *q, vmatch_bits_t key, vmatch_bits_t keycare,        \
                               vm_hit_t *hit, uint64_t *inspected)                             \
    {                                                                                          \
        return llv_find(q, prq, key, keycare, hit, inspected);                                 \
    }                                                                                          \
    static void llv_remove_##side(vm_queue_t *q, const vm_hit_t *hit)                          \
    {                                                                                          \
        llv_remove(q, prq, hit);                                                               \
    }                                                                                          \
    static int llv_take_##side(vm_queue_t *q, vmatch_bits_t key, vmatch_bits_t keycare,        \
                               void **payload, uint64_t *inspected)                            \
    {                                                                                          \
        return llv_take(q, prq, key, keycare, payload, inspected);                             \
    }
LLV_SIDE(prq, 1)
LLV_SIDE(umq, 0)

#define LLV_OPS(side)                                                                          \
    {                                                                                          \
        .name = "llv", .simd = 1, .create = llv_create, .destroy = llv_destroy,                \
        .append = llv_append_##side, .find = llv_find_##side,                                  \
        .find_payload = llv_find_payload, .remove = llv_remove_##side,                         \
        .take = llv_take_##side, .each = llv_each                                              \
    }

/* What a queue of each side calls (llv_create); vm_llv_storage, the registry's, only makes
 * queues. */
static const vm_storage_t llv_ops[2] = {[VM_PRQ] = LLV_OPS(prq), [VM_UMQ] = LLV_OPS(umq)};

const vm_storage_t vm_llv_storage = {.name = "llv", .simd = 1, .create = llv_create};

/* llv.block: slots per large block.  Measured with bench/ (docs/storages.md, "How llv is
 * tuned"): reverse search at 32768 and 65536 entries runs 1.3-1.8x slower with 256-slot
 * blocks and ~15% slower with 512 than with 1024, 2048 or 4096, which are level within
 * noise; at 4096 entries all are level.  The per-block work of a search (a pointer hop, the
 * jump to another fingerprint lane, ~40 instructions) is what large blocks amortize.  1024
 * is the smallest of the level ones and holds the least memory of them (a PRQ block is
 * 35 KiB, allocated on its own: 34.5 bytes per entry at 32768 entries).  Blocks are whole
 * 64-slot groups (one bitmap word each); the largest keeps a block of the PRQ side (34 bytes
 * a slot) under 160 KiB. */
static const vm_llv_config_t llv_default = {.block = 1024};

static const vm_key_t llv_keys[] = {
    {"llv.block", VM_KEY_UINT, offsetof(vm_llv_config_t, block), VM_LLV_GROUP, 4096,
     .step = VM_LLV_GROUP,
     .help = "slots of the largest `llv` block: a queue's blocks grow from 8 slots to this"},
};

static const vm_storage_t *const llv_storages[] = {&vm_llv_storage, NULL};

const vm_module_t vm_llv_module = {
    .prefix = "llv",
    VM_MODULE_KEYS(llv_keys),
    VM_MODULE_CFG(llv_default),
    .storages = llv_storages,
    .kernels = vm_llv_kernels,
};
