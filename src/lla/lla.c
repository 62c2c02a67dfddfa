/* lla.c -- storage=lla: a linked list of fixed-size arrays (thesis chapter 6, Fig. 6.2).
 *
 * A block holds its entries in queue order, a bitmap of live slots and the indices [head,
 * tail) that bound them.  Appends go at the tail of the last block; removing an entry clears
 * its bit (a hole), and a hole at either end moves the index.  A search walks blocks head to
 * tail and, within one, only the set bits of the bitmap, so holes cost nothing but a bit test
 * per 64 slots.  Entries of a block are contiguous, so a long search streams memory instead
 * of chasing pointers.
 *
 * Block sizes, as in llv (src/llv/block.c): a queue starts with a block of LLA_FIRST entries;
 * while it has one block, a full block is replaced by a compacted copy twice the size of its
 * live entries (LLA_FIRST times a power of two, at most lla.block), or compacted in place;
 * once that block is an lla.block one more than half full, lla.block blocks are linked
 * behind it.  A block that empties is given back, the last one too, unless it is a first
 * block and fewer than VM_MEM_KEPT (plus the policy's mem.keep_more) empty queues of the
 * engine keep theirs.  First blocks and
 * lla.block blocks come from the engine's pools, the sizes between (at most one per queue,
 * allocated once per doubling) from malloc with accounting.
 */
#include "module.h"

typedef struct vm_lla_entry {
    vmatch_bits_t bits, care; /* care is all ones on the UMQ */
    void *payload;
    uint64_t seq;
} vm_lla_entry_t;

typedef struct vm_lla_block {
    struct vm_lla_block *next, *prev;
    uint32_t head, tail; /* live slots lie in [head, tail) */
    uint32_t live;       /* live slots */
    uint32_t cap;        /* slots */
    uint64_t map[];      /* live bitmap, then the entries at entry_off(cap) */
} vm_lla_block_t;

typedef struct vm_lla {
    vm_queue_t base;
    vm_lla_block_t *head, *tail; /* NULL when empty */
    vm_pool_t *pool;             /* of lla.block blocks */
    vm_pool_t *first;            /* of first blocks */
    uint32_t block;              /* lla.block */
} vm_lla_t;

/* Entries of a queue's first block: 4 entries (192 bytes with the header) hold a short queue
 * at 48 bytes an entry, a list node's size. */
enum { CACHE_LINE = 64, LLA_FIRST = 4 };

extern const vm_storage_t vm_lla_storage;
extern const vm_module_t vm_lla_module;

typedef struct vm_lla_config {
    uint32_t block; /* lla.block: entries per block */
} vm_lla_config_t;

static size_t round_line(size_t n)
{
    return (n + CACHE_LINE - 1) & ~(size_t)(CACHE_LINE - 1);
}

/* Byte offset of the entries in a block of cap slots: after the header and the bitmap, on a
 * cache line. */
static inline size_t entry_off(uint32_t cap)
{
    return round_line(sizeof(vm_lla_block_t) + (cap + 63) / 64 * sizeof(uint64_t));
}

static inline vm_lla_entry_t *entries(vm_lla_block_t *b)
{
    return (vm_lla_entry_t *)((char *)b + entry_off(b->cap));
}

/* Bytes of a block of cap slots. */
static size_t block_bytes(uint32_t cap)
{
    return round_line(entry_off(cap) + cap * sizeof(vm_lla_entry_t));
}

static int lla_create(vm_env_t *env, int side, vm_queue_t **out)
{
    uint32_t block = ((const vm_lla_config_t *)vm_module_cfg(env->cfg, &vm_lla_module))->block;
    uint32_t first = block < LLA_FIRST ? block : LLA_FIRST;
    vm_pool_t *pool = vm_env_pool(env, block_bytes(block));
    vm_pool_t *fpool = pool ? vm_env_pool(env, block_bytes(first)) : NULL;
    vm_lla_t *l = fpool ? vm_mem_alloc(&env->mem, sizeof *l) : NULL;
    if (!l)
        return VMATCH_ENOMEM;
    *l = (vm_lla_t){.base = {.ops = &vm_lla_storage, .env = env, .side = side},
                    .pool = pool,
                    .first = fpool,
                    .block = block};
    *out = &l->base;
    return VMATCH_OK;
}

/* The pool blocks of cap slots come from, or NULL for malloc. */
static vm_pool_t *pool_of(const vm_lla_t *l, uint32_t cap)
{
    return cap == l->block ? l->pool : cap == LLA_FIRST ? l->first : NULL;
}

/* A new empty block of cap slots, unlinked, or NULL when memory runs out. */
static vm_lla_block_t *block_new(vm_lla_t *l, uint32_t cap)
{
    vm_pool_t *pool = pool_of(l, cap);
    vm_lla_block_t *b =
        pool ? vm_pool_get(pool) : vm_mem_alloc_line(&l->base.env->mem, block_bytes(cap));
    if (!b)
        return NULL;
    *b = (vm_lla_block_t){.cap = cap};
    for (uint32_t w = 0; w < (cap + 63) / 64; w++)
        b->map[w] = 0;
    return b;
}

static void block_free(vm_lla_t *l, vm_lla_block_t *b)
{
    vm_pool_t *pool = pool_of(l, b->cap);
    if (pool)
        vm_pool_put(pool, b);
    else
        vm_mem_free_line(&l->base.env->mem, b, block_bytes(b->cap));
}

static void lla_destroy(vm_queue_t *q)
{
    vm_lla_t *l = (vm_lla_t *)q;
    if (l->head && !q->len)
        q->env->mem.kept--;
    for (vm_lla_block_t *b = l->head, *next; b; b = next) {
        next = b->next;
        block_free(l, b);
    }
    vm_mem_free(&q->env->mem, l, sizeof *l);
}

/* The size of the sequence LLA_FIRST, 2 LLA_FIRST, ... that holds n entries, at most
 * lla.block. */
static uint32_t fit(uint64_t n, uint32_t block)
{
    uint32_t s = LLA_FIRST;
    while (s < n && s < block)
        s *= 2;
    return s < block ? s : block;
}

/* Copy the live entries of src, in order, to slots 0, 1, ... of dst (which may be src). */
static void move_live(vm_lla_block_t *dst, vm_lla_block_t *src)
{
    vm_lla_entry_t *se = entries(src), *de = entries(dst);
    uint32_t n = 0, words = (src->tail + 63) / 64;
    /* In place, entry n is never past entry i, so every entry is read before it is
     * overwritten; the bitmap is rewritten after the last read. */
    for (uint32_t w = src->head / 64; w < words; w++)
        for (uint64_t m = src->map[w]; m; m &= m - 1)
            de[n++] = se[w * 64 + (uint32_t)__builtin_ctzll(m)];
    for (uint32_t w = 0; w < (dst->cap + 63) / 64; w++) {
        uint32_t below = n > w * 64 ? n - w * 64 : 0; /* live slots of word w */
        dst->map[w] = below >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << below) - 1;
    }
    dst->head = 0;
    dst->tail = dst->live = n;
}

/* Room for one append at the tail (see the top of the file).  OK, or ENOMEM with nothing
 * changed. */
__attribute__((noinline, cold)) static int lla_room(vm_lla_t *l)
{
    vm_lla_block_t *t = l->tail, *b;
    if (!t) {
        if (!(b = block_new(l, fit(1, l->block))))
            return VMATCH_ENOMEM;
        l->head = l->tail = b;
        return VMATCH_OK;
    }
    if (t == l->head && (t->cap < l->block || t->live <= l->block / 2)) {
        /* twice its live entries, four times for a short queue with holes (llv's block.c) */
        uint64_t live = t->live;
        uint32_t cap = fit(live * (live < t->cap && live <= 16 ? 4 : 2), l->block);
        if (cap == t->cap) {
            move_live(t, t);
            return VMATCH_OK;
        }
        if (!(b = block_new(l, cap)))
            return VMATCH_ENOMEM;
        move_live(b, t);
        l->head = l->tail = b;
        block_free(l, t);
        return VMATCH_OK;
    }
    if (!(b = block_new(l, l->block)))
        return VMATCH_ENOMEM;
    b->prev = t;
    t->next = b;
    l->tail = b;
    return VMATCH_OK;
}

static int lla_append(vm_queue_t *q, vmatch_bits_t bits, vmatch_bits_t care, void *payload,
                      uint64_t seq)
{
    vm_lla_t *l = (vm_lla_t *)q;
    vm_lla_block_t *b = l->tail;
    if (!b || b->tail == b->cap) {
        int rc = lla_room(l);
        if (rc < 0)
            return rc;
        b = l->tail;
    } else if (!q->len) { /* the block the empty queue kept is in use again */
        q->env->mem.kept--;
    }
    uint32_t i = b->tail++;
    entries(b)[i] = (vm_lla_entry_t){.bits = bits,
                                     .payload = payload,
                                     .seq = seq,
                                     .care = q->side == VM_PRQ ? care : ~(vmatch_bits_t)0};
    b->map[i / 64] |= (uint64_t)1 << (i % 64);
    b->live++;
    q->len++;
    return VMATCH_OK;
}

enum scan_mode { SCAN_PRQ, SCAN_UMQ, SCAN_PAYLOAD };

/* Walk the live entries in queue order until one satisfies the mode's test.  Inlined into
 * each caller so that the mode is a constant and the test compiles to a few instructions. */
static inline __attribute__((always_inline)) int
lla_scan(vm_queue_t *q, enum scan_mode mode, vmatch_bits_t key, vmatch_bits_t keycare,
         const void *payload, vm_hit_t *hit, uint64_t *inspected)
{
    vm_lla_t *l = (vm_lla_t *)q;
    uint64_t seen = 0;
    for (vm_lla_block_t *b = l->head; b; b = b->next) {
        vm_lla_entry_t *e = entries(b);
        for (uint32_t w = b->head / 64; w * 64 < b->tail; w++) {
            for (uint64_t m = b->map[w]; m; m &= m - 1) {
                uint32_t i = w * 64 + (uint32_t)__builtin_ctzll(m);
                int ok;
                seen++;
                if (mode == SCAN_PRQ)
                    ok = ((key ^ e[i].bits) & e[i].care) == 0;
                else if (mode == SCAN_UMQ)
                    ok = ((e[i].bits ^ key) & keycare) == 0;
                else
                    ok = e[i].payload == payload;
                if (ok) {
                    *inspected += seen;
                    *hit = (vm_hit_t){
                        .payload = e[i].payload, .seq = e[i].seq, .where = b, .slot = i};
                    return 1;
                }
            }
        }
    }
    *inspected += seen;
    return 0;
}

static int lla_find(vm_queue_t *q, vmatch_bits_t key, vmatch_bits_t keycare, vm_hit_t *hit,
                    uint64_t *inspected)
{
    if (q->side == VM_PRQ)
        return lla_scan(q, SCAN_PRQ, key, 0, NULL, hit, inspected);
    return lla_scan(q, SCAN_UMQ, key, keycare, NULL, hit, inspected);
}

static int lla_find_payload(vm_queue_t *q, const void *payload, vm_hit_t *hit,
                            uint64_t *inspected)
{
    return lla_scan(q, SCAN_PAYLOAD, 0, 0, payload, hit, inspected);
}

/* First live slot at or after i (the block has one). */
static uint32_t next_live(const vm_lla_block_t *b, uint32_t i)
{
    uint32_t w = i / 64;
    uint64_t m = b->map[w] & (~(uint64_t)0 << (i % 64));
    while (!m)
        m = b->map[++w];
    return w * 64 + (uint32_t)__builtin_ctzll(m);
}

/* Last live slot before i (the block has one). */
static uint32_t prev_live(const vm_lla_block_t *b, uint32_t i)
{
    uint32_t w = (i - 1) / 64;
    uint64_t m = b->map[w] & (~(uint64_t)0 >> (63 - (i - 1) % 64));
    while (!m)
        m = b->map[--w];
    return w * 64 + 63 - (uint32_t)__builtin_clzll(m);
}

static void lla_remove(vm_queue_t *q, const vm_hit_t *hit)
{
    vm_lla_t *l = (vm_lla_t *)q;
    vm_lla_block_t *b = hit->where;
    uint32_t i = hit->slot;
    b->map[i / 64] &= ~((uint64_t)1 << (i % 64));
    q->len--;
    if (--b->live == 0) {
        vm_mem_t *mem = &q->env->mem;
        if (!b->prev && !b->next && b->cap == LLA_FIRST && vm_mem_may_keep(mem)) {
            /* Kept for the next append, which counts it out (see VM_MEM_KEPT). */
            mem->kept++;
            b->head = b->tail = 0;
            return;
        }
        if (b->prev)
            b->prev->next = b->next;
        else
            l->head = b->next;
        if (b->next)
            b->next->prev = b->prev;
        else
            l->tail = b->prev;
        block_free(l, b);
        return;
    }
    if (i == b->head)
        b->head = next_live(b, i);
    if (i + 1 == b->tail)
        b->tail = prev_live(b, i) + 1;
}

static void lla_each(vm_queue_t *q, vm_each_fn *fn, void *arg)
{
    vm_lla_t *l = (vm_lla_t *)q;
    for (vm_lla_block_t *b = l->head; b; b = b->next) {
        vm_lla_entry_t *e = entries(b);
        for (uint32_t w = b->head / 64; w * 64 < b->tail; w++)
            for (uint64_t m = b->map[w]; m; m &= m - 1) {
                uint32_t i = w * 64 + (uint32_t)__builtin_ctzll(m);
                if (fn(arg, e[i].bits, e[i].care, e[i].payload, e[i].seq))
                    return;
            }
    }
}

const vm_storage_t vm_lla_storage = {
    .name = "lla",
    .create = lla_create,
    .destroy = lla_destroy,
    .append = lla_append,
    .find = lla_find,
    .find_payload = lla_find_payload,
    .remove = lla_remove,
    .each = lla_each,
};

/* lla.block: entries per block.  Measured with bench/ (docs/storages.md, "Choosing
 * lla.block"): reverse search at 4096 and 32768 entries runs 1.5-1.6x faster than ll with
 * 8-entry blocks and 1.8-2x with 32 to 128, level within noise; short queues do not depend
 * on the size.  64 won on memory when blocks shared 64 KiB slabs (31 blocks of 2112 bytes
 * fill one to within 64 bytes); blocks over half a page are now allocated one by one, and 64
 * holds 34.1 bytes per entry at 32768 entries (50 for ll). */
static const vm_lla_config_t lla_default = {.block = 64};

static const vm_key_t lla_keys[] = {
    {"lla.block", VM_KEY_UINT, offsetof(vm_lla_config_t, block), 4, 1024,
     .help = "entries per `lla` block"},
};

static const vm_storage_t *const lla_storages[] = {&vm_lla_storage, NULL};

const vm_module_t vm_lla_module = {
    .prefix = "lla",
    VM_MODULE_KEYS(lla_keys),
    .cfg_size = sizeof(vm_lla_config_t),
    .cfg_default = &lla_default,
    .storages = lla_storages,
};
