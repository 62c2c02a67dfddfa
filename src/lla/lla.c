/* lla.c -- storage=lla: a linked list of fixed-size arrays (thesis chapter 6, Fig. 6.2).
 *
 * A block holds its entries in queue order, a bitmap of live slots and the indices [head,
 * tail) that bound them.  Appends go at the tail of the last block; removing an entry clears
 * its bit (a hole), and a hole at either end moves the index.  A search walks blocks head to
 * tail and, within one, only the set bits of the bitmap, so holes cost nothing but a bit test
 * per 64 slots.  Entries of a block are contiguous, so a long search streams memory instead
 * of chasing pointers.
 *
 * Block sizes, growth, edges and the blocks kept by empty queues are the block list's
 * (src/core/blocklist.h), shared with llv: a queue's blocks grow from LLA_FIRST entries to
 * lla.block.  First blocks and lla.block blocks come from the engine's pools, the sizes
 * between (at most one per queue, allocated once per doubling) from malloc with accounting.
 */
#include "blocklist.h"
#include "module.h"

typedef struct vm_lla_entry {
    vmatch_bits_t bits, care; /* care is all ones on the UMQ */
    void *payload;
    uint64_t seq;
} vm_lla_entry_t;

typedef struct vm_lla_block {
    vm_blk_t blk;   /* links, [head, tail), live and slots count (blocklist.h) */
    uint64_t map[]; /* live bitmap, then the entries at entry_off(blk.slots) */
} vm_lla_block_t;
_Static_assert(offsetof(vm_lla_block_t, blk) == 0, "a block is its list link (blocklist.h)");

typedef struct vm_lla {
    vm_queue_t base;
    vm_list_t blocks; /* of vm_lla_block_t, head first; empty when the queue holds none */
    vm_pool_t *pool;  /* of lla.block blocks */
    vm_pool_t *first; /* of first blocks */
    uint32_t block;   /* lla.block */
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
    return round_line(sizeof(vm_lla_block_t) + vm_blk_words(cap) * sizeof(uint64_t));
}

static inline vm_lla_entry_t *entries(vm_lla_block_t *b)
{
    return (vm_lla_entry_t *)((char *)b + entry_off(b->blk.slots));
}

/* The block of list link n (its first member), or NULL. */
static inline vm_lla_block_t *lla_block(vm_link_t *n)
{
    return (vm_lla_block_t *)n;
}

/* The block after b in its queue, or NULL. */
static inline vm_lla_block_t *lla_next(const vm_lla_block_t *b)
{
    return lla_block(b->blk.link.next);
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

/* A new empty block of cap slots for queue q (a vm_lla_t), unlinked, or NULL when memory runs
 * out (vm_blk_ops_t.alloc). */
static inline vm_blk_t *block_new(void *q, uint32_t cap)
{
    vm_lla_t *l = q;
    vm_lla_block_t *b = vm_blk_alloc(&l->base.env->mem, pool_of(l, cap), block_bytes(cap));
    if (!b)
        return NULL;
    b->blk = (vm_blk_t){.slots = cap};
    for (uint32_t w = 0; w < vm_blk_words(cap); w++)
        b->map[w] = 0;
    return &b->blk;
}

/* Give block b of queue q back to where it came from (vm_blk_ops_t.release). */
static void block_free(void *q, vm_blk_t *b)
{
    vm_lla_t *l = q;
    vm_blk_free(&l->base.env->mem, pool_of(l, b->slots), b, block_bytes(b->slots));
}

/* Copy the live entries of block s, in order, to slots 0, 1, ... of block d, which may be s
 * (vm_blk_ops_t.move). */
static inline void move_live(void *q, vm_blk_t *d, vm_blk_t *s)
{
    vm_lla_block_t *dst = (vm_lla_block_t *)d, *src = (vm_lla_block_t *)s;
    vm_lla_entry_t *se = entries(src), *de = entries(dst);
    (void)q;
    uint32_t n = 0, words = vm_blk_words(src->blk.tail);
    /* In place, entry n is never past entry i, so every entry is read before it is
     * overwritten; the bitmap is rewritten after the last read. */
    for (uint32_t w = src->blk.head / VM_BLK_WORD; w < words; w++)
        for (uint64_t m = src->map[w]; m; m &= m - 1)
            de[n++] = se[w * VM_BLK_WORD + (uint32_t)__builtin_ctzll(m)];
    for (uint32_t w = 0; w < vm_blk_words(dst->blk.slots); w++) {
        uint32_t below = n > w * VM_BLK_WORD ? n - w * VM_BLK_WORD : 0; /* live in word w */
        dst->map[w] = below >= VM_BLK_WORD ? ~(uint64_t)0 : ((uint64_t)1 << below) - 1;
    }
    dst->blk.head = 0;
    dst->blk.tail = dst->blk.live = n;
}

/* What the block list asks of lla. */
static const vm_blk_ops_t lla_blocks = {
    .alloc = block_new, .move = move_live, .release = block_free};

static void lla_destroy(vm_queue_t *q)
{
    vm_lla_t *l = (vm_lla_t *)q;
    vm_blk_free_all(&l->blocks, q->len, &q->env->mem, &lla_blocks, l);
    vm_mem_free(&q->env->mem, l, sizeof *l);
}

/* Room for one append at the tail, as the block list's growth rule says.  Returns OK, or
 * ENOMEM with nothing changed. */
__attribute__((noinline, cold)) static int lla_room(vm_lla_t *l)
{
    return vm_blk_grow(&l->blocks, LLA_FIRST, l->block, &lla_blocks, l);
}

static int lla_append(vm_queue_t *q, vmatch_bits_t bits, vmatch_bits_t care, void *payload,
                      uint64_t seq)
{
    vm_lla_t *l = (vm_lla_t *)q;
    vm_lla_block_t *b = lla_block(l->blocks.tail);
    if (!b || b->blk.tail == b->blk.slots) {
        int rc = lla_room(l);
        if (rc < 0)
            return rc;
        b = lla_block(l->blocks.tail);
    } else if (vm_blk_kept(&l->blocks, q->len)) { /* that block is in use again */
        vm_blk_unkeep(&q->env->mem);
    }
    uint32_t i = b->blk.tail++;
    entries(b)[i] = (vm_lla_entry_t){.bits = bits,
                                     .payload = payload,
                                     .seq = seq,
                                     .care = q->side == VM_PRQ ? care : ~(vmatch_bits_t)0};
    vm_blk_mark(b->map, i);
    b->blk.live++;
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
    for (vm_lla_block_t *b = lla_block(l->blocks.head); b; b = lla_next(b)) {
        vm_lla_entry_t *e = entries(b);
        for (uint32_t w = b->blk.head / VM_BLK_WORD; w * VM_BLK_WORD < b->blk.tail; w++) {
            for (uint64_t m = b->map[w]; m; m &= m - 1) {
                uint32_t i = w * VM_BLK_WORD + (uint32_t)__builtin_ctzll(m);
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

static void lla_remove(vm_queue_t *q, const vm_hit_t *hit)
{
    vm_lla_t *l = (vm_lla_t *)q;
    vm_lla_block_t *b = hit->where;
    q->len--;
    if (vm_blk_remove(&b->blk, offsetof(vm_lla_block_t, map), hit->slot) == VM_BLK_EMPTIED &&
        !vm_blk_keep(&q->env->mem, &b->blk, LLA_FIRST)) {
        vm_list_unlink(&l->blocks, &b->blk.link);
        block_free(l, &b->blk);
    }
}

static void lla_each(vm_queue_t *q, vm_each_fn *fn, void *arg)
{
    vm_lla_t *l = (vm_lla_t *)q;
    for (vm_lla_block_t *b = lla_block(l->blocks.head); b; b = lla_next(b)) {
        vm_lla_entry_t *e = entries(b);
        for (uint32_t w = b->blk.head / VM_BLK_WORD; w * VM_BLK_WORD < b->blk.tail; w++)
            for (uint64_t m = b->map[w]; m; m &= m - 1) {
                uint32_t i = w * VM_BLK_WORD + (uint32_t)__builtin_ctzll(m);
                if (fn(arg, e[i].bits, e[i].care, e[i].payload, e[i].seq))
                    return;
            }
    }
}

const vm_storage_t vm_lla_storage = {.name = "lla", VM_STORAGE_CALLS(lla)};

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

const vm_module_t vm_lla_module = {.prefix = "lla",
                                   VM_MODULE_KEYS(lla_keys),
                                   VM_MODULE_CFG(lla_default),
                                   .storages = lla_storages};
