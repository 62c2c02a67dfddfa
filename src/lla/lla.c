/* lla.c -- storage=lla: a linked list of fixed-size arrays (thesis chapter 6, Fig. 6.2).
 *
 * A block holds lla.block entries in queue order, a bitmap of live slots and the indices
 * [head, tail) that bound them.  Appends go at the tail of the last block; removing an
 * entry clears its bit (a hole), and a hole at either end moves the index.  A block that
 * empties goes back to the pool, unless it is the only one.  A search walks blocks head to tail
 * and, within one, only the set bits of the bitmap, so holes cost nothing but a bit test per 64
 * slots.  Entries of a block are contiguous, so a long search streams memory instead of chasing
 * pointers.
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
    uint32_t pad;
    uint64_t map[]; /* live bitmap, then the entries at entry_off */
} vm_lla_block_t;

typedef struct vm_lla {
    vm_queue_t base;
    vm_lla_block_t *head, *tail;
    vm_pool_t *pool;
    uint32_t block;   /* slots per block */
    uint32_t words;   /* bitmap words */
    size_t entry_off; /* byte offset of the entries, a cache line boundary */
} vm_lla_t;

enum { CACHE_LINE = 64 };

extern const vm_storage_t vm_lla_storage;
extern const vm_module_t vm_lla_module;

typedef struct vm_lla_config {
    uint32_t block; /* lla.block: entries per block */
} vm_lla_config_t;

static vm_lla_entry_t *entries(const vm_lla_t *l, vm_lla_block_t *b)
{
    return (vm_lla_entry_t *)((char *)b + l->entry_off);
}

static size_t round_line(size_t n)
{
    return (n + CACHE_LINE - 1) & ~(size_t)(CACHE_LINE - 1);
}

static int lla_create(vm_env_t *env, int side, vm_queue_t **out)
{
    uint32_t block = ((const vm_lla_config_t *)vm_module_cfg(env->cfg, &vm_lla_module))->block;
    uint32_t words = (block + 63) / 64;
    size_t entry_off = round_line(sizeof(vm_lla_block_t) + words * sizeof(uint64_t));
    vm_pool_t *pool = vm_env_pool(env, round_line(entry_off + block * sizeof(vm_lla_entry_t)));
    vm_lla_t *l = pool ? vm_mem_alloc(&env->mem, sizeof *l) : NULL;
    if (!l)
        return VMATCH_ENOMEM;
    *l = (vm_lla_t){.base = {.ops = &vm_lla_storage, .env = env, .side = side},
                    .pool = pool,
                    .block = block,
                    .words = words,
                    .entry_off = entry_off};
    *out = &l->base;
    return VMATCH_OK;
}

static void lla_destroy(vm_queue_t *q)
{
    vm_lla_t *l = (vm_lla_t *)q;
    for (vm_lla_block_t *b = l->head, *next; b; b = next) {
        next = b->next;
        vm_pool_put(l->pool, b);
    }
    vm_mem_free(&q->env->mem, l, sizeof *l);
}

static int lla_append(vm_queue_t *q, vmatch_bits_t bits, vmatch_bits_t care, void *payload,
                      uint64_t seq)
{
    vm_lla_t *l = (vm_lla_t *)q;
    vm_lla_block_t *b = l->tail;
    if (!b || b->tail == l->block) {
        b = vm_pool_get(l->pool);
        if (!b)
            return VMATCH_ENOMEM;
        *b = (vm_lla_block_t){.prev = l->tail};
        for (uint32_t w = 0; w < l->words; w++)
            b->map[w] = 0;
        if (l->tail)
            l->tail->next = b;
        else
            l->head = b;
        l->tail = b;
    }
    uint32_t i = b->tail++;
    entries(l, b)[i] = (vm_lla_entry_t){.bits = bits,
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
        vm_lla_entry_t *e = entries(l, b);
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
    if (--b->live == 0 && !b->prev && !b->next) {
        /* The queue's only block stays: a short queue that empties and refills on every
         * match (the common case) then never goes to the pool.  Its bitmap is all clear. */
        b->head = b->tail = 0;
        return;
    }
    if (b->live == 0) {
        if (b->prev)
            b->prev->next = b->next;
        else
            l->head = b->next;
        if (b->next)
            b->next->prev = b->prev;
        else
            l->tail = b->prev;
        vm_pool_put(l->pool, b);
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
        vm_lla_entry_t *e = entries(l, b);
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
 * on the size.  64 wins on memory: a block of 64 entries of 32 bytes plus its header is 2112
 * bytes, and 31 of them fill a 64 KiB pool slab to within 64 bytes (34 bytes per entry
 * against 36 for 32 and 128, and 50 for ll). */
static const vm_lla_config_t lla_default = {.block = 64};

static const vm_key_t lla_keys[] = {
    {"lla.block", VM_KEY_UINT, offsetof(vm_lla_config_t, block), 4, 1024,
     .help = "entries per `lla` block"},
};

static const vm_storage_t *const lla_storages[] = {&vm_lla_storage, NULL};

const vm_module_t vm_lla_module = {
    .prefix = "lla",
    .keys = lla_keys,
    .nkeys = sizeof lla_keys / sizeof lla_keys[0],
    .cfg_size = sizeof(vm_lla_config_t),
    .cfg_default = &lla_default,
    .storages = lla_storages,
};
