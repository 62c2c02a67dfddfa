/* block.c -- the blocks of an llv queue: their layouts, where they come from, and how a queue
 * grows and shrinks.
 *
 * How a queue's blocks grow from VM_LLV_FIRST slots to llv.block, and which empty block is
 * kept, is the block list's rule (src/core/blocklist.h), shared with lla: the only block
 * doubles as the queue grows, shrinks when a burst has gone, and is reused in place when its
 * size is the one the rule picks (its entries slid down to slot 0 when that frees half the
 * block, else compacted); a queue of several blocks has llv.block blocks only, so a long
 * search crosses as many blocks as with fixed-size blocks; an empty queue holds at most a
 * first block, and all but a few hold none.
 *
 * Where blocks come from: first blocks and llv.block blocks from the engine's pools (two
 * sizes per side), the sizes between, at most one block per queue and allocated once per
 * doubling, from malloc with accounting (vm_mem_alloc_line): a pool per size would take six
 * more pool sizes per side and keep a slab for each.  A queue that empties and refills (a
 * 1-entry queue: every match) then takes its first block from the pool's cache of returned
 * objects.  Measured in docs/storages.md.
 */
#include "llv.h"

#include <string.h>

/* The layout of a block of s slots, prq 1 on the PRQ side, as constant expressions so that
 * every geometry is in one read-only table.  Every lane starts on a cache line; the
 * fingerprints of a partial group take one line, and the lanes after them (at least 3 * 64
 * bytes) keep the 128-byte group read of the kernels inside the block. */
#define LINE(n)         (((n) + 63u) / 64u * 64u)
#define GROUPS(s)       (((s) + VM_LLV_GROUP - 1u) / VM_LLV_GROUP)
#define HEAD(prq, s)    LINE((uint32_t)sizeof(vm_llv_block_t) + ((prq) + 1u) * GROUPS(s) * 8u)
#define FPS(prq, s)     (HEAD(prq, s) + LINE(2u * (s)))
#define LANE(prq, s, k) (FPS(prq, s) + (k)*8u * (s))
#define GEOM(prq, s)                                                                           \
    {                                                                                          \
        .slots = (s), .groups = GROUPS(s), .fp = HEAD(prq, s), .bits = LANE(prq, s, 0),        \
        .care = (prq) ? LANE(prq, s, 1) : 0, .payload = LANE(prq, s, 1u + (prq)),              \
        .seq = LANE(prq, s, 2u + (prq)), .size = LANE(prq, s, 3u + (prq)), .has_wild = (prq)   \
    }

_Static_assert(LANE(0, VM_LLV_FIRST, 3) - HEAD(0, VM_LLV_FIRST) >= 2 * VM_LLV_GROUP,
               "a group's fingerprint read stays inside the smallest block");
_Static_assert(8 * VM_LLV_FIRST % 64 == 0, "a 64-bit lane of the first block is whole lines");

/* Eight multiples of VM_LLV_GROUP from (k + 1) groups. */
#define GEOM8(prq, k)                                                                          \
    GEOM(prq, 64u * ((k) + 1u)), GEOM(prq, 64u * ((k) + 2u)), GEOM(prq, 64u * ((k) + 3u)),     \
        GEOM(prq, 64u * ((k) + 4u)), GEOM(prq, 64u * ((k) + 5u)), GEOM(prq, 64u * ((k) + 6u)), \
        GEOM(prq, 64u * ((k) + 7u)), GEOM(prq, 64u * ((k) + 8u))
#define GEOMS(prq)                                                                             \
    {                                                                                          \
        GEOM(prq, 8u), GEOM(prq, 16u), GEOM(prq, 32u), GEOM8(prq, 0u), GEOM8(prq, 8u),         \
            GEOM8(prq, 16u), GEOM8(prq, 24u), GEOM8(prq, 32u), GEOM8(prq, 40u),                \
            GEOM8(prq, 48u), GEOM8(prq, 56u)                                                   \
    }

/* Blocks of 8, 16 and 32 slots, then every multiple of 64 up to 4096 (llv.block's range). */
enum { SUBGROUP_SIZES = 3, MAX_SLOTS = 4096 };
static const vm_llv_geom_t geoms[2][SUBGROUP_SIZES + MAX_SLOTS / VM_LLV_GROUP] = {
    [VM_PRQ] = GEOMS(1u), [VM_UMQ] = GEOMS(0u)};

void vm_llv_geom_init(vm_llv_geom_t *g, uint32_t slots, int side)
{
    uint32_t prq = side == VM_PRQ;
    *g = (vm_llv_geom_t)GEOM(prq, slots);
}

const vm_llv_geom_t *vm_llv_geom(uint32_t slots, int side)
{
    uint32_t i = slots >= VM_LLV_GROUP ? SUBGROUP_SIZES - 1 + slots / VM_LLV_GROUP
                 : slots == 8          ? 0
                 : slots == 16         ? 1
                                       : 2;
    return &geoms[side][i];
}

/* The pool blocks of g come from, or NULL for malloc. */
static inline vm_pool_t *pool_of(const vm_llv_t *l, const vm_llv_geom_t *g)
{
    vm_pool_t *pools = l->base.env->pools;
    return g->slots == VM_LLV_FIRST ? &pools[l->pool_first]
           : g->slots == l->large   ? &pools[l->pool_large]
                                    : NULL;
}

int vm_llv_pools(vm_llv_t *l)
{
    vm_env_t *env = l->base.env;
    vm_pool_t *first = vm_env_pool(env, vm_llv_geom(VM_LLV_FIRST, l->base.side)->size);
    vm_pool_t *large = vm_env_pool(env, vm_llv_geom(l->large, l->base.side)->size);
    if (!first || !large)
        return VMATCH_ENOMEM;
    l->pool_first = (uint8_t)(first - env->pools);
    l->pool_large = (uint8_t)(large - env->pools);
    return VMATCH_OK;
}

/* A new empty block of `slots` slots for queue q (a vm_llv_t), unlinked, or NULL when memory
 * runs out (vm_blk_ops_t.alloc). */
static inline vm_blk_t *block_new(void *q, uint32_t slots)
{
    vm_llv_t *l = q;
    const vm_llv_geom_t *g = vm_llv_geom(slots, l->base.side);
    vm_llv_block_t *b = vm_blk_alloc(&l->base.env->mem, pool_of(l, g), g->size);
    if (!b)
        return NULL;
    /* Field by field: a queue that empties and refills on every match comes here each time,
     * and reads head and tail right after (a wide store of the whole header would stall the
     * narrow loads that follow). */
    b->blk.link.next = b->blk.link.prev = NULL;
    b->blk.slots = g->slots;
    b->lanes = g->bits;
    b->prq = (uint16_t)g->has_wild;
    b->blk.head = b->blk.tail = b->start = b->blk.live = b->wild = 0;
    b->classes = 0;
    for (uint32_t w = 0; w < (g->has_wild ? 2u : 1u) * g->groups; w++)
        b->map[w] = 0;
    return &b->blk;
}

/* Give block b of queue q back to where it came from (vm_blk_ops_t.release). */
static void block_free(void *q, vm_blk_t *b)
{
    const vm_llv_geom_t *g = vm_llv_geo((vm_llv_block_t *)b);
    vm_blk_free(&((vm_llv_t *)q)->base.env->mem, pool_of(q, g), b, g->size);
}

/* Runs shorter than this are copied slot by slot: five memmove calls cost more than the
 * copies of a short queue's compaction (a queue of 8 moving through a 16-slot block). */
enum { SHORT_RUN = 16 };

/* Set bits [from, from + n) of map (n at most VM_LLV_GROUP - from % VM_LLV_GROUP). */
static void set_bits(uint64_t *map, uint32_t from, uint32_t n)
{
    uint64_t ones = n == VM_LLV_GROUP ? ~(uint64_t)0 : ((uint64_t)1 << n) - 1;
    map[from / VM_LLV_GROUP] |= ones << (from % VM_LLV_GROUP);
}

/* Copy n slots (fingerprints and every 64-bit lane) from slot from of src to slot to of dst,
 * which may be src with to <= from: copies go in ascending order, and memmove keeps a run
 * intact, so nothing is overwritten before it is read. */
static void move_slots(vm_llv_block_t *dst, uint32_t to, const vm_llv_block_t *src,
                       uint32_t from, uint32_t n)
{
    uint16_t *dfp = vm_llv_fps(dst) + to;
    const uint16_t *sfp = vm_llv_fps(src) + from;
    if (n >= SHORT_RUN)
        memmove(dfp, sfp, n * sizeof *dfp);
    else
        for (uint32_t k = 0; k < n; k++)
            dfp[k] = sfp[k];
    for (uint32_t x = 0; x < 3u + src->prq; x++) {
        uint64_t *d = vm_llv_lane(dst, x) + to;
        const uint64_t *v = vm_llv_lane(src, x) + from;
        if (n >= SHORT_RUN)
            memmove(d, v, n * sizeof *d);
        else
            for (uint32_t k = 0; k < n; k++)
                d[k] = v[k];
    }
}

/* Copy the live entries of src, in order, to slots 0, 1, ... of dst (which may be src: no
 * entry then moves up), with their wild bits and src's class mask.  Runs of consecutive live
 * slots move a lane at a time: a block that fills without holes, or loses only its head
 * entries, is one run. */
static void move_live(vm_llv_block_t *dst, const vm_llv_block_t *src)
{
    uint32_t sgroups = vm_llv_groups(src), dgroups = vm_llv_groups(dst);
    uint32_t end = vm_llv_end(src), wild = src->wild, classes = src->classes, n = 0;
    uint64_t live[MAX_SLOTS / VM_LLV_GROUP], wmap[MAX_SLOTS / VM_LLV_GROUP];
    memcpy(live, src->map, end * sizeof live[0]);
    if (wild)
        memcpy(wmap, src->map + sgroups, end * sizeof wmap[0]);
    memset(dst->map, 0, (dst->prq ? 2u : 1u) * dgroups * sizeof(uint64_t));
    for (uint32_t w = src->start; w < end; w++) {
        for (uint64_t m = live[w]; m;) {
            uint32_t s = (uint32_t)__builtin_ctzll(m), i = w * VM_LLV_GROUP + s;
            uint64_t rest = ~(m >> s);
            uint32_t r = rest ? (uint32_t)__builtin_ctzll(rest) : VM_LLV_GROUP - s;
            m &= r + s == VM_LLV_GROUP ? 0 : ~(uint64_t)0 << (r + s);
            move_slots(dst, n, src, i, r);
            for (uint32_t k = 0; wild && k < r; k++) /* wmap is read only when wild */
                if (wmap[w] >> (s + k) & 1)
                    vm_blk_mark(dst->map + dgroups, n + k);
            for (uint32_t k = 0; k < r;) { /* the live bits, a word at a time */
                uint32_t room = VM_LLV_GROUP - (n + k) % VM_LLV_GROUP;
                uint32_t span = r - k < room ? r - k : room;
                set_bits(dst->map, n + k, span);
                k += span;
            }
            n += r;
        }
    }
    dst->blk.head = dst->start = 0;
    dst->blk.tail = dst->blk.live = n;
    dst->wild = wild;
    dst->classes = (uint16_t)classes;
}

/* Shift the bitmap words map[0 .. n) down by `by` bits (the words past n are zero). */
static void shift_down(uint64_t *map, uint32_t n, uint32_t by)
{
    uint32_t w = by / VM_LLV_GROUP, r = by % VM_LLV_GROUP;
    for (uint32_t x = 0; x < n; x++) {
        uint64_t lo = x + w < n ? map[x + w] : 0, hi = x + w + 1 < n ? map[x + w + 1] : 0;
        map[x] = r ? lo >> r | hi << (VM_LLV_GROUP - r) : lo;
    }
}

/* Move the slots [head, tail) of b down to 0, holes and all: a queue moving through its only
 * block (a pipeline's one or two receives, a neighbour exchange's few dozen) comes here
 * whenever the block fills, and copies its entries with none of move_live's bookkeeping. */
static inline void slide(vm_llv_block_t *b)
{
    uint32_t from = b->blk.head, n = b->blk.tail - from, groups = vm_llv_groups(b);
    move_slots(b, 0, b, from, n);
    shift_down(b->map, groups, from);
    if (b->prq)
        shift_down(b->map + groups, groups, from);
    b->blk.head = b->start = 0;
    b->blk.tail = n;
}

/* Move the live entries of block s to slots 0, 1, ... of block d (vm_blk_ops_t.move).  In
 * place (d == s), a block whose [head, tail) is at most half of it slides down instead. */
static inline void block_move(void *q, vm_blk_t *d, vm_blk_t *s)
{
    (void)q;
    if (d == s && 2 * (s->tail - s->head) <= s->slots)
        slide((vm_llv_block_t *)s); /* frees half the block at least */
    else
        move_live((vm_llv_block_t *)d, (vm_llv_block_t *)s);
}

/* What the block list asks of llv. */
static const vm_blk_ops_t llv_blocks = {
    .alloc = block_new, .move = block_move, .release = block_free};

int vm_llv_room(vm_llv_t *l)
{
    return vm_blk_grow(&l->blocks, VM_LLV_FIRST, l->large, &llv_blocks, l);
}

void vm_llv_drop(vm_llv_t *l, vm_llv_block_t *b)
{
    vm_list_unlink(&l->blocks, &b->blk.link);
    block_free(l, &b->blk);
}

void vm_llv_drop_all(vm_llv_t *l)
{
    vm_blk_free_all(&l->blocks, l->base.len, &l->base.env->mem, &llv_blocks, l);
}
