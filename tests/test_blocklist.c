/* Unit tests of the intrusive list (src/core/list.h) and of the block list of lla and llv
 * (src/core/blocklist.h): links at either end and in the middle, the live bitmap's edge
 * searches against a plain walk on random bitmaps, removal with edge trimming to the last
 * slot, the growth rule's four steps and a toy storage growing and shrinking by it (failing
 * allocations included), where a new block goes, which empty block is kept and
 * how the engine counts it, and where blocks come from (pool or malloc, failing allocations
 * included).  The storages' own use of it is in test_blocks and test_diff. */
#include "blocklist.h"
#include "check.h"
#include "rng.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_SEED 0x626c6b73u
#define WORDS        4 /* bitmap words of the test blocks: 256 slots, every word position */

/* A block as a storage lays one out: the list's part first, then the live bitmap. */
typedef struct test_block {
    vm_blk_t blk;
    uint64_t map[WORDS];
} test_block_t;

#define MAP_OFF offsetof(test_block_t, map)

/** 1 when slot i of b is live. */
static int is_live(const test_block_t *b, uint32_t i)
{
    return (int)(b->map[i / VM_BLK_WORD] >> (i % VM_BLK_WORD) & 1);
}

/** The elements of l, head to tail, are exactly want[0..n), and tail to head the reverse. */
static void check_order(const vm_list_t *l, vm_link_t *const *want, unsigned n)
{
    unsigned k = 0;
    for (vm_link_t *x = l->head; x; x = x->next, k++)
        CHECK(k < n && x == want[k]);
    CHECK_EQ(k, n);
    for (vm_link_t *x = l->tail; x; x = x->prev, k--)
        CHECK(k > 0 && x == want[k - 1]);
    CHECK_EQ(k, 0);
    CHECK(n ? l->head->prev == NULL && l->tail->next == NULL : !l->head && !l->tail);
}

/** The list: append, unlink the head, the tail, the middle and the last one. */
static void test_list(void)
{
    vm_link_t a, b, c, d;
    vm_list_t l = {NULL, NULL};
    check_order(&l, NULL, 0);
    vm_list_push_tail(&l, &a);
    check_order(&l, (vm_link_t *const[]){&a}, 1);
    vm_list_push_tail(&l, &b);
    vm_list_push_tail(&l, &c);
    vm_list_push_tail(&l, &d);
    check_order(&l, (vm_link_t *const[]){&a, &b, &c, &d}, 4);
    vm_list_unlink(&l, &b); /* middle */
    check_order(&l, (vm_link_t *const[]){&a, &c, &d}, 3);
    vm_list_unlink(&l, &a); /* head */
    check_order(&l, (vm_link_t *const[]){&c, &d}, 2);
    vm_list_unlink(&l, &d); /* tail */
    check_order(&l, (vm_link_t *const[]){&c}, 1);
    vm_list_unlink(&l, &c); /* the only one */
    check_order(&l, NULL, 0);
    vm_list_push_tail(&l, &d); /* into the list emptied */
    check_order(&l, (vm_link_t *const[]){&d}, 1);

    struct two {
        int x;
        vm_link_t link;
    } t;
    CHECK(VM_CONTAINER_OF(&t.link, struct two, link) == &t);
}

/** vm_blk_fit on the sequences of lla (4, 8, ... lla.block, which need not be a power of two)
 * and llv (8, 16, ... llv.block). */
static void test_fit(void)
{
    CHECK_EQ(vm_blk_fit(0, 4, 64), 4);
    CHECK_EQ(vm_blk_fit(1, 4, 64), 4);
    CHECK_EQ(vm_blk_fit(4, 4, 64), 4);
    CHECK_EQ(vm_blk_fit(5, 4, 64), 8);
    CHECK_EQ(vm_blk_fit(33, 4, 64), 64);
    CHECK_EQ(vm_blk_fit(1000, 4, 64), 64);
    CHECK_EQ(vm_blk_fit(128, 4, 130), 128);
    CHECK_EQ(vm_blk_fit(129, 4, 130), 130);
    CHECK_EQ(vm_blk_fit(100, 4, 4), 4);
    CHECK_EQ(vm_blk_fit(9, 8, 1024), 16);
    CHECK_EQ(vm_blk_fit(513, 8, 1024), 1024);
    CHECK_EQ(vm_blk_fit((uint64_t)1 << 40, 8, 4096), 4096);
    CHECK_EQ(vm_blk_words(1), 1);
    CHECK_EQ(vm_blk_words(64), 1);
    CHECK_EQ(vm_blk_words(65), 2);
    CHECK_EQ(vm_blk_words(4096), 64);
}

/** A block of `slots` slots with a random live bitmap of about density% (at least one live
 * slot), its edges and count set from it. */
static void random_block(test_block_t *b, uint32_t slots, uint32_t density)
{
    memset(b, 0, sizeof *b);
    b->blk.slots = slots;
    for (uint32_t i = 0; i < slots; i++)
        if (rnd(100) < density)
            vm_blk_mark(b->map, i);
    if (!b->map[0] && !b->map[1] && !b->map[2] && !b->map[3])
        vm_blk_mark(b->map, rnd(slots));
    b->blk.head = slots;
    for (uint32_t i = 0; i < slots; i++) {
        if (!is_live(b, i))
            continue;
        b->blk.live++;
        b->blk.head = b->blk.head < i ? b->blk.head : i;
        b->blk.tail = i + 1;
    }
}

/** The edge searches agree with a plain walk; removing every live slot in random order
 * trims the edges to the live slots left and reports what it did. */
static void test_bitmap(void)
{
    for (int round = 0; round < 2000; round++) {
        test_block_t b;
        uint32_t slots = 1 + rnd(WORDS * VM_BLK_WORD);
        random_block(&b, slots, rnd(101));
        /* from every slot before the last live one, the next live slot; from every slot
         * after the first live one, the live slot before */
        for (uint32_t i = 0; i < b.blk.tail; i++) {
            uint32_t want = i;
            while (!is_live(&b, want))
                want++;
            CHECK_EQ(vm_blk_next_live(&b.blk, MAP_OFF, i), want);
        }
        for (uint32_t i = b.blk.head + 1; i <= slots; i++) {
            uint32_t want = i - 1;
            while (!is_live(&b, want))
                want--;
            CHECK_EQ(vm_blk_prev_live(&b.blk, MAP_OFF, i), want);
        }
        while (b.blk.live) {
            uint32_t i;
            do
                i = b.blk.head + rnd(b.blk.tail - b.blk.head);
            while (!is_live(&b, i));
            uint32_t head = b.blk.head, tail = b.blk.tail, live = b.blk.live;
            enum vm_blk_removal r = vm_blk_remove(&b.blk, MAP_OFF, i);
            CHECK(!is_live(&b, i));
            CHECK_EQ(b.blk.live, live - 1);
            if (live == 1) {
                CHECK_EQ(r, VM_BLK_EMPTIED);
                CHECK(!b.map[0] && !b.map[1] && !b.map[2] && !b.map[3]);
                break;
            }
            CHECK_EQ(r, i == head ? VM_BLK_HEAD : i + 1 == tail ? VM_BLK_TAIL : VM_BLK_INSIDE);
            CHECK(is_live(&b, b.blk.head) && is_live(&b, b.blk.tail - 1));
            unsigned outside = 0; /* live slots outside [head, tail) */
            for (uint32_t j = 0; j < slots; j++)
                outside += is_live(&b, j) && (j < b.blk.head || j >= b.blk.tail);
            CHECK_EQ(outside, 0);
        }
    }
}

/** The growth rule: no block, a full only block compacted in place or moved (twice its live
 * entries, four times for a short queue with holes), or a large block linked behind. */
static void test_room(void)
{
    test_block_t t = {0}, u = {0};
    vm_list_t l = {NULL, NULL};
    uint32_t slots = 0;
    CHECK_EQ(vm_blk_room(&l, 8, 1024, &slots), VM_BLK_NEW);
    CHECK_EQ(slots, 8);
    vm_blk_place(&l, &t.blk, VM_BLK_NEW);
    CHECK(l.head == &t.blk.link && l.tail == &t.blk.link && vm_blk_of(l.head) == &t.blk);

    /* full, no holes: twice its entries */
    t.blk = (vm_blk_t){.link = t.blk.link, .head = 0, .tail = 8, .live = 8, .slots = 8};
    CHECK_EQ(vm_blk_room(&l, 8, 1024, &slots), VM_BLK_MOVE);
    CHECK_EQ(slots, 16);
    /* holes, a short queue: four times them (3 live: 12, fitted to 16) */
    t.blk = (vm_blk_t){.link = t.blk.link, .head = 5, .tail = 16, .live = 3, .slots = 16};
    CHECK_EQ(vm_blk_room(&l, 8, 1024, &slots), VM_BLK_COMPACT);
    CHECK_EQ(slots, 16);
    /* holes, more than VM_BLK_SLACK_SHORT live: twice them, a smaller block */
    t.blk = (vm_blk_t){.link = t.blk.link, .head = 0, .tail = 256, .live = 40, .slots = 256};
    CHECK_EQ(vm_blk_room(&l, 8, 1024, &slots), VM_BLK_MOVE);
    CHECK_EQ(slots, 128);
    /* a large block at most half live is compacted; more than half, a large one is linked */
    t.blk = (vm_blk_t){.link = t.blk.link, .head = 9, .tail = 64, .live = 32, .slots = 64};
    CHECK_EQ(vm_blk_room(&l, 4, 64, &slots), VM_BLK_COMPACT);
    CHECK_EQ(slots, 64);
    t.blk.live = 33;
    CHECK_EQ(vm_blk_room(&l, 4, 64, &slots), VM_BLK_LINK);
    CHECK_EQ(slots, 64);
    vm_blk_place(&l, &u.blk, VM_BLK_LINK);
    check_order(&l, (vm_link_t *const[]){&t.blk.link, &u.blk.link}, 2);
    /* two blocks: always a new large one, whatever the tail holds */
    u.blk.live = 1;
    u.blk.slots = 64;
    CHECK_EQ(vm_blk_room(&l, 4, 64, &slots), VM_BLK_LINK);

    /* MOVE: the new block replaces the only one */
    vm_list_t one = {NULL, NULL};
    vm_blk_place(&one, &t.blk, VM_BLK_NEW);
    vm_blk_place(&one, &u.blk, VM_BLK_MOVE);
    check_order(&one, (vm_link_t *const[]){&u.blk.link}, 1);
}

/** Which emptied block is kept, and the engine's count of them. */
static void test_keep(void)
{
    vm_mem_t mem = {.numa = VM_NUMA_OFF, .fail_after = -1};
    test_block_t a = {0}, b = {0};
    vm_list_t l = {NULL, NULL};
    vm_blk_place(&l, &a.blk, VM_BLK_NEW);
    a.blk.slots = 8;
    a.blk.head = a.blk.tail = 5;
    CHECK(!vm_blk_kept(&l, 1));
    CHECK(vm_blk_keep(&mem, &a.blk, 8));
    CHECK_EQ(mem.kept, 1);
    CHECK(a.blk.head == 0 && a.blk.tail == 0);
    CHECK(vm_blk_kept(&l, 0));
    vm_blk_unkeep(&mem);
    CHECK_EQ(mem.kept, 0);
    CHECK(!vm_blk_kept(&(vm_list_t){NULL, NULL}, 0));

    /* not a first block; not the only block; the engine full */
    a.blk.slots = 16;
    CHECK(!vm_blk_keep(&mem, &a.blk, 8));
    a.blk.slots = 8;
    vm_blk_place(&l, &b.blk, VM_BLK_LINK);
    b.blk.slots = 8;
    CHECK(!vm_blk_keep(&mem, &a.blk, 8) && !vm_blk_keep(&mem, &b.blk, 8));
    vm_list_unlink(&l, &b.blk.link);
    mem.keep_more = 2;
    mem.kept = VM_MEM_KEPT + 2;
    CHECK(!vm_blk_keep(&mem, &a.blk, 8));
    mem.kept--;
    CHECK(vm_blk_keep(&mem, &a.blk, 8));
    CHECK_EQ(mem.kept, VM_MEM_KEPT + 2);
}

/* A toy storage on test blocks: blocks from malloc (or none, when told to fail), entries
 * that are only their live bits. */
typedef struct toy {
    vm_list_t blocks;
    uint64_t len;
    unsigned allocs, frees;
    int fail; /* the next allocations fail */
} toy_t;

static vm_blk_t *toy_alloc(void *q, uint32_t slots)
{
    toy_t *t = q;
    test_block_t *b = t->fail ? NULL : calloc(1, sizeof *b);
    if (!b)
        return NULL;
    t->allocs++;
    b->blk.slots = slots;
    return &b->blk;
}

static void toy_move(void *q, vm_blk_t *d, vm_blk_t *s)
{
    uint32_t n = s->live;
    (void)q;
    memset(((test_block_t *)d)->map, 0, sizeof((test_block_t *)d)->map);
    for (uint32_t i = 0; i < n; i++)
        vm_blk_mark(((test_block_t *)d)->map, i);
    d->head = 0;
    d->tail = d->live = n;
}

static void toy_release(void *q, vm_blk_t *b)
{
    ((toy_t *)q)->frees++;
    free(b);
}

static const vm_blk_ops_t toy_ops = {
    .alloc = toy_alloc, .move = toy_move, .release = toy_release};

enum { TOY_FIRST = 8, TOY_LARGE = 64 };

/** Append an entry to t, growing by the rule; VMATCH_ENOMEM when that fails. */
static int toy_append(toy_t *t)
{
    vm_blk_t *b = vm_blk_of(t->blocks.tail);
    if (!b || b->tail == b->slots) {
        int rc = vm_blk_grow(&t->blocks, TOY_FIRST, TOY_LARGE, &toy_ops, t);
        if (rc != VMATCH_OK)
            return rc;
        b = vm_blk_of(t->blocks.tail);
    }
    vm_blk_mark(((test_block_t *)b)->map, b->tail++);
    b->live++;
    t->len++;
    return VMATCH_OK;
}

/** Remove the head entry of t, dropping a block that empties. */
static void toy_take_head(toy_t *t)
{
    vm_blk_t *b = vm_blk_of(t->blocks.head);
    t->len--;
    if (vm_blk_remove(b, MAP_OFF, b->head) == VM_BLK_EMPTIED) {
        vm_list_unlink(&t->blocks, &b->link);
        toy_release(t, b);
    }
}

/** The blocks of t: one of the size that holds its entries while they fit in a large block,
 * else large blocks only, their live counts summing to its length. */
static void check_toy(const toy_t *t)
{
    uint64_t live = 0, blocks = 0;
    for (vm_link_t *n = t->blocks.head; n; n = n->next, blocks++) {
        live += vm_blk_of(n)->live;
        if (t->len > TOY_LARGE)
            CHECK_EQ(vm_blk_of(n)->slots, TOY_LARGE);
    }
    CHECK_EQ(live, t->len);
    if (t->len <= TOY_LARGE && blocks == 1)
        CHECK(vm_blk_of(t->blocks.head)->slots >= vm_blk_fit(t->len, TOY_FIRST, TOY_LARGE));
}

/** vm_blk_grow on a toy storage: the only block doubling from the first size to the large
 * one, large blocks linked behind it, every step failing cleanly under a failed allocation,
 * and a large block at most half live compacted in place without one. */
static void test_grow(void)
{
    toy_t t = {.blocks = {NULL, NULL}};
    for (int k = 0; k < 3 * TOY_LARGE; k++) {
        vm_blk_t *b = vm_blk_of(t.blocks.tail);
        if (!b || b->tail == b->slots) { /* a step that allocates: make it fail first */
            vm_list_t before = t.blocks;
            unsigned allocs = t.allocs, frees = t.frees;
            t.fail = 1;
            CHECK_EQ(toy_append(&t), VMATCH_ENOMEM);
            t.fail = 0;
            CHECK(t.blocks.head == before.head && t.blocks.tail == before.tail);
            CHECK(t.allocs == allocs && t.frees == frees && (!b || b->live == b->tail));
        }
        REQUIRE(toy_append(&t) == VMATCH_OK);
        check_toy(&t);
        if (t.len <= TOY_LARGE)
            CHECK_EQ(vm_blk_of(t.blocks.head)->slots, vm_blk_fit(t.len, TOY_FIRST, TOY_LARGE));
    }
    CHECK_EQ(t.allocs - t.frees, 3); /* three large blocks */
    /* Down to the last large block, half live, its tail full: compacted in place. */
    while (t.len > TOY_LARGE / 2)
        toy_take_head(&t);
    vm_blk_t *only = vm_blk_of(t.blocks.head);
    CHECK(only == vm_blk_of(t.blocks.tail) && only->slots == TOY_LARGE && only->head > 0);
    unsigned allocs = t.allocs;
    t.fail = 1;
    REQUIRE(toy_append(&t) == VMATCH_OK);
    t.fail = 0;
    CHECK(t.allocs == allocs && vm_blk_of(t.blocks.head) == only && only->head == 0);
    CHECK_EQ(only->live, TOY_LARGE / 2 + 1);
    check_toy(&t);
    /* A short queue with holes moving through a 64-slot block moves to one of four times its
     * entries (16 for 3). */
    while (t.len > 3)
        toy_take_head(&t);
    while (vm_blk_of(t.blocks.tail)->tail < TOY_LARGE) {
        REQUIRE(toy_append(&t) == VMATCH_OK);
        toy_take_head(&t);
    }
    REQUIRE(toy_append(&t) == VMATCH_OK);
    CHECK_EQ(vm_blk_of(t.blocks.head)->slots, 16);
    check_toy(&t);
    vm_mem_t mem = {.numa = VM_NUMA_OFF, .fail_after = -1};
    vm_blk_free_all(&t.blocks, t.len, &mem, &toy_ops, &t);
    CHECK(t.allocs == t.frees && !t.blocks.head);
}

/** Releases counted by vm_blk_free_all. */
typedef struct released {
    vm_mem_t *mem;
    vm_pool_t *pool;
    unsigned n;
} released_t;

static void release(void *ctx, vm_blk_t *b)
{
    released_t *r = ctx;
    r->n++;
    vm_blk_free(r->mem, r->pool, b, sizeof(test_block_t));
}

static const vm_blk_ops_t release_ops = {.release = release};

/** Blocks from a pool and from malloc, failing allocations, and the end of a queue. */
static void test_alloc(void)
{
    vm_mem_t mem = {.numa = VM_NUMA_OFF, .fail_after = -1};
    vm_pool_t pool;
    vm_pool_init(&pool, &mem, sizeof(test_block_t));
    test_block_t *p = vm_blk_alloc(&mem, &pool, sizeof *p);
    test_block_t *m = vm_blk_alloc(&mem, NULL, sizeof *m);
    REQUIRE(p && m);
    CHECK_EQ((uintptr_t)m % 64, 0);
    CHECK_EQ(mem.bytes, pool.bytes + sizeof *m + VM_LINE_PAD);
    vm_blk_free(&mem, NULL, m, sizeof *m);
    CHECK_EQ(mem.bytes, pool.bytes);
    mem.fail_after = 0;
    CHECK(vm_blk_alloc(&mem, NULL, sizeof *m) == NULL);
    CHECK_EQ(mem.bytes, pool.bytes);
    mem.fail_after = -1;

    /* a queue of three blocks and entries; then one of a kept block */
    vm_list_t l = {NULL, NULL};
    released_t r = {.mem = &mem, .pool = &pool};
    *p = (test_block_t){.blk.slots = 8};
    vm_blk_place(&l, &p->blk, VM_BLK_NEW);
    for (int k = 0; k < 2; k++) {
        test_block_t *x = vm_blk_alloc(&mem, &pool, sizeof *x);
        REQUIRE(x != NULL);
        *x = (test_block_t){.blk.slots = 8};
        vm_blk_place(&l, &x->blk, VM_BLK_LINK);
    }
    vm_blk_free_all(&l, 5, &mem, &release_ops, &r);
    CHECK(r.n == 3 && !l.head && !l.tail);
    CHECK_EQ(mem.kept, 0);
    p = vm_blk_alloc(&mem, &pool, sizeof *p);
    REQUIRE(p != NULL);
    *p = (test_block_t){.blk.slots = 8};
    vm_blk_place(&l, &p->blk, VM_BLK_NEW);
    mem.kept = 1; /* as vm_blk_keep left it */
    vm_blk_free_all(&l, 0, &mem, &release_ops, &r);
    CHECK(r.n == 4 && mem.kept == 0 && !l.head);
    vm_pool_fini(&pool);
    CHECK_EQ(mem.bytes, 0);
}

int main(void)
{
    const char *env = getenv("VMATCH_SEED");
    uint64_t seed = env && *env ? strtoull(env, NULL, 0) : DEFAULT_SEED;
    rng_s = seed;
    printf("test_blocklist: seed=%#" PRIx64 "\n", seed);
    test_list();
    test_fit();
    test_bitmap();
    test_room();
    test_grow();
    test_keep();
    test_alloc();
    return check_report("test_blocklist");
}
