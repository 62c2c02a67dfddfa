/* Block sizes of the lla and llv storages (src/llv/block.c, src/lla/lla.c) and the memory
 * they hold: every size transition over each kernel this CPU has, an allocation failing at
 * each growth step, compaction in place, shrinking, draining, the first block an empty queue
 * keeps, and the bytes of an empty and of a drained engine. */
#include "llv.h"
#include "storage_fixture.h"

/* The size of the sequence first, 2 first, ... that holds n entries, at most large. */
static uint32_t fit_size(uint64_t n, uint32_t first, uint32_t large)
{
    uint32_t s = first;
    while (s < n && s < large)
        s *= 2;
    return s < large ? s : large;
}

/* Each entry queued, in order: entry k has bits base + k, payload P(base + k), seq base + k. */
typedef struct order_check {
    uint64_t next, bad;
} order_check_t;

static int in_order(void *arg, vmatch_bits_t bits, vmatch_bits_t care, void *payload,
                    uint64_t seq)
{
    order_check_t *c = arg;
    (void)care;
    c->bad += bits != c->next || payload != P(c->next) || seq != c->next;
    c->next++;
    return 0;
}

/* q holds exactly the entries from..to-1, in order, and each is found where a list walk
 * would find it. */
static void check_queue(vm_queue_t *q, uint64_t from, uint64_t to)
{
    order_check_t c = {.next = from};
    q->ops->each(q, in_order, &c);
    CHECK_EQ(c.bad, 0);
    CHECK_EQ(c.next, to);
    CHECK_EQ(q->len, to - from);
    vm_hit_t h;
    uint64_t seen;
    if (to > from) {
        CHECK(find(q, to - 1, ALL, &h, &seen) == P(to - 1));
        CHECK_EQ(seen, to - from);
        CHECK(find(q, from, ALL, &h, &seen) == P(from));
        CHECK_EQ(seen, 1);
    }
}

/* The blocks of an llv queue of len entries: one block of the size that holds them while
 * they fit in llv.block, else llv.block blocks only. */
static void check_llv_shape(const vm_llv_t *l, uint64_t len)
{
    uint32_t large = l->large, blocks = 0;
    for (const vm_llv_block_t *b = vm_llv_first(l); b; b = vm_llv_next(b)) {
        blocks++;
        if (len > large)
            CHECK_EQ(b->blk.slots, large);
        else
            CHECK_EQ(b->blk.slots, fit_size(len, VM_LLV_FIRST, large));
        CHECK_EQ((uintptr_t)b % 64, 0);
        CHECK(b->lanes == vm_llv_geom(b->blk.slots, l->base.side)->bits);
        CHECK_EQ(b->prq, l->base.side == VM_PRQ);
    }
    CHECK_EQ(blocks, len > large ? (len + large - 1) / large : 1);
    CHECK(vm_llv_last(l) && !vm_llv_last(l)->blk.link.next);
}

/* Append entry k; with fail set, make the allocation a growth step needs fail first: the
 * append then reports ENOMEM and the queue is as before.  Returns 1 when it failed once. */
static int append_checked(fixture_t *f, uint64_t k, uint64_t from, int fail)
{
    vm_queue_t *q = f->q;
    if (fail) {
        uint64_t bytes = f->env.mem.bytes;
        f->env.mem.fail_after = 0;
        int rc = q->ops->append(q, k, ALL, P(k), k);
        f->env.mem.fail_after = -1;
        if (rc == VMATCH_OK)
            return 0;
        CHECK_EQ(rc, VMATCH_ENOMEM);
        CHECK_EQ(f->env.mem.bytes, bytes);
        check_queue(q, from, k);
    }
    REQUIRE(q->ops->append(q, k, ALL, P(k), k) == VMATCH_OK);
    return fail;
}

/* Remove the head entry (bits from). */
static void take_head(vm_queue_t *q, uint64_t from)
{
    vm_hit_t h;
    uint64_t seen = 0;
    REQUIRE(q->ops->find(q, from, ALL, &h, &seen) == 1 && h.payload == P(from) && seen == 1);
    q->ops->remove(q, &h);
}

/* True when the next append of l needs room (no block, or a full tail block). */
static int llv_full(const vm_llv_t *l)
{
    const vm_llv_block_t *t = vm_llv_last(l);
    return !t || t->blk.tail == t->blk.slots;
}

/* The pool of f's objects of `size` bytes. */
static const vm_pool_t *pool_of_size(const fixture_t *f, size_t size)
{
    for (unsigned i = 0; i < f->env.npools; i++)
        if (f->env.pools[i].obj_size == ((size + 15) & ~(size_t)15))
            return &f->env.pools[i];
    return NULL;
}

/* llv block sizes: a queue grows 8, 16, ..., llv.block in one block, then links llv.block
 * blocks; every step that allocates fails cleanly under ENOMEM; a full block with holes is
 * compacted in place (no allocation) or moved to a smaller block; a drained queue gives its
 * blocks back but for a kept first block. */
static void test_llv_blocks(const char *spec, int side)
{
    fixture_t f;
    setup(&f, spec, side);
    vm_llv_t *l = (vm_llv_t *)f.q;
    vm_queue_t *q = f.q;
    uint32_t large = l->large;
    /* An empty queue costs its struct, tens of bytes, and holds no block. */
    CHECK_EQ(f.env.mem.bytes, sizeof(vm_llv_t));
    CHECK(sizeof(vm_llv_t) <= 80);
    CHECK(vm_llv_first(l) == NULL);

    /* Growth: every allocation fails once, leaving the queue intact. */
    uint64_t n = 2 * (uint64_t)large + large / 2 + 3, steps = 0, failed = 0;
    for (uint64_t k = 0; k < n; k++) {
        int full = llv_full(l);
        steps += full;
        failed += append_checked(&f, k, 0, full);
        check_llv_shape(l, k + 1);
    }
    /* Blocks over half a page are allocated one by one: every step failed once.  Smaller
     * llv.block blocks share slabs, whose allocations are fewer. */
    const vm_pool_t *lp = pool_of_size(&f, vm_llv_geom(large, side)->size);
    REQUIRE(lp != NULL);
    if (lp->big)
        CHECK_EQ(failed, steps);
    else
        CHECK(failed >= 4 && failed <= steps);
    CHECK(steps >= 4);
    check_queue(q, 0, n);

    /* Drain from the head to 3 entries: the last llv.block block alone. */
    uint64_t from = 0;
    while (q->len > 3)
        take_head(q, from++);
    CHECK(vm_llv_first(l) == vm_llv_last(l) && vm_llv_first(l)->blk.slots == large);
    check_queue(q, from, n);
    /* Fill its tail: then a full block that is at most half live is compacted in place, which
     * needs no memory. */
    uint64_t k = n;
    while (!llv_full(l))
        append_checked(&f, k++, from, 0);
    while (q->len > large / 2)
        take_head(q, from++);
    f.env.mem.fail_after = 0;
    CHECK_EQ(q->ops->append(q, k, ALL, P(k), k), VMATCH_OK);
    f.env.mem.fail_after = -1;
    k++;
    CHECK(vm_llv_first(l) == vm_llv_last(l) && vm_llv_first(l)->blk.slots == large &&
          vm_llv_first(l)->blk.head == 0);
    check_queue(q, from, k);

    /* Shrink: 5 entries moving through the block (append, remove the head) until it is
     * full, then the next append moves them to a block of four times them, 32 slots (a
     * short queue with holes; a failing allocation first). */
    while (q->len > 5)
        take_head(q, from++);
    while (!llv_full(l)) {
        append_checked(&f, k++, from, 0);
        take_head(q, from++);
    }
    CHECK_EQ(append_checked(&f, k++, from, 1), 1);
    CHECK(vm_llv_first(l) == vm_llv_last(l) &&
          vm_llv_first(l)->blk.slots == fit_size(4 * 5, VM_LLV_FIRST, large));
    check_queue(q, from, k);

    /* Drained: no block (a 32-slot block is not kept); the pools hold at most the first
     * blocks' 1 KiB slab. */
    while (q->len)
        take_head(q, from++);
    CHECK(vm_llv_first(l) == NULL && vm_llv_last(l) == NULL);
    if (lp->big)
        CHECK(f.env.mem.bytes <= sizeof(vm_llv_t) + 1024 + VM_LINE_PAD);
    else
        CHECK(lp->empty <= 65536);
    /* A first block that empties is kept for the next append (and counted per engine). */
    uint64_t bytes = f.env.mem.bytes;
    append_checked(&f, k++, from, 0);
    take_head(q, from++);
    CHECK(vm_llv_first(l) != NULL && vm_llv_first(l)->blk.slots == VM_LLV_FIRST);
    CHECK_EQ(f.env.mem.kept, 1);
    CHECK(f.env.mem.bytes <= bytes + 1024 + VM_LINE_PAD);
    f.env.mem.fail_after = 0;
    CHECK_EQ(q->ops->append(q, k, ALL, P(k), k), VMATCH_OK);
    f.env.mem.fail_after = -1;
    CHECK_EQ(f.env.mem.kept, 0);
    k++;
    check_queue(q, from, k);
    take_head(q, from++);
    CHECK_EQ(f.env.mem.kept, 1);

    /* Two entries moving through the first block (append, remove the head) slide down to its
     * start whenever it fills: in place, with no allocation. */
    append_checked(&f, k++, from, 0);
    const vm_llv_block_t *first = vm_llv_first(l);
    f.env.mem.fail_after = 0;
    for (int n = 0; n < 4 * VM_LLV_FIRST; n++) {
        CHECK_EQ(q->ops->append(q, k, ALL, P(k), k), VMATCH_OK);
        k++;
        take_head(q, from++);
    }
    f.env.mem.fail_after = -1;
    CHECK(vm_llv_first(l) == first && vm_llv_last(l) == first &&
          first->blk.slots == VM_LLV_FIRST);
    check_queue(q, from, k);
    teardown(&f);
    CHECK_EQ(f.env.mem.kept, 0);
}

/* lla block sizes, seen through memory: an empty queue costs its struct and no block, a
 * growing one a block of the sequence 4, 8, ... lla.block, every allocation failing cleanly. */
static void test_lla_blocks(const char *spec, int side)
{
    fixture_t f;
    setup(&f, spec, side);
    vm_queue_t *q = f.q;
    uint64_t empty = f.env.mem.bytes;
    CHECK(empty <= 80);
    uint64_t n = 5000, failed = 0, from = 0;
    for (uint64_t k = 0; k < n; k++) {
        uint64_t before = f.env.mem.bytes;
        f.env.mem.fail_after = 0;
        int rc = q->ops->append(q, k, ALL, P(k), k);
        f.env.mem.fail_after = -1;
        if (rc != VMATCH_OK) {
            CHECK_EQ(rc, VMATCH_ENOMEM);
            CHECK_EQ(f.env.mem.bytes, before);
            CHECK_EQ(q->len, k);
            failed++;
            REQUIRE(q->ops->append(q, k, ALL, P(k), k) == VMATCH_OK);
        }
        if (k == 0 || k == 5 || k == 700 || k == n - 1)
            check_queue(q, 0, k + 1);
    }
    CHECK(failed >= 2); /* at least the first block and its first copy */
    /* 32-byte entries: at most 56 bytes an entry at 5000 entries (4-entry blocks). */
    CHECK(f.env.mem.bytes - empty <= 56 * n);
    while (q->len)
        take_head(q, from++);
    /* Drained: blocks over half a page are given back with the last one; smaller ones keep
     * empty slabs up to 64 KiB and those the cache of returned ones pins. */
    CHECK(f.env.mem.bytes <= empty + 1024 + VM_LINE_PAD + 4 * 65536);
    teardown(&f);
}

/* An engine that has queued nothing, or queued and drained, holds at most 4 KiB when its
 * long-queue blocks are over half a page (llv; lla with lla.block over 60); ll's nodes and
 * smaller blocks keep slabs for the next fill. */
static void test_engine_bytes(const char *spec, int small_objects)
{
    vmatch_engine_t *e;
    REQUIRE(vmatch_create(spec, &e) == VMATCH_OK);
    vmatch_stats_t st;
    vmatch_stats(e, &st);
    CHECK(st.bytes <= 4096);
    enum { N = 3000 };
    static char tok[N];
    char other;
    void *got;
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < N; i++)
            REQUIRE(vmatch_post(e, (vmatch_bits_t)i, ALL, 0, &tok[i], &got) == VMATCH_QUEUED);
        for (int i = 0; i < N; i++)
            REQUIRE(vmatch_arrive(e, (vmatch_bits_t)i, 0, &other, &got) == VMATCH_MATCHED);
        for (int i = 0; i < 10; i++) { /* a 1-entry queue, both sides */
            REQUIRE(vmatch_arrive(e, 1, 0, &other, &got) == VMATCH_QUEUED);
            REQUIRE(vmatch_post(e, 1, ALL, 0, &tok[0], &got) == VMATCH_MATCHED);
            REQUIRE(vmatch_post(e, 2, ALL, 0, &tok[0], &got) == VMATCH_QUEUED);
            REQUIRE(vmatch_arrive(e, 2, 0, &other, &got) == VMATCH_MATCHED);
        }
        vmatch_stats(e, &st);
        CHECK_EQ(st.posted + st.unexpected, 0);
        /* (small objects: up to 64 KiB of empty slabs, and the slabs of the objects in the
         * cache of returned ones, at most a few of 64 KiB) */
        CHECK(st.bytes <= (small_objects ? 4096 + 4 * 65536 : 4096));
    }
    vmatch_destroy(e);
}

int main(void)
{
    /* The default llv.block (1024) with every kernel: 8 to 1024 slots, then more blocks. */
    static const char *const kernels[] = {"storage=llv simd=scalar", "storage=llv simd=avx2",
                                          "storage=llv simd=avx512"};
    for (size_t k = 0; k < sizeof kernels / sizeof kernels[0]; k++)
        for (int side = VM_PRQ; !kernel_missing(kernels[k]) && side <= VM_UMQ; side++)
            test_llv_blocks(kernels[k], side);
    for (size_t s = 0; s < sizeof storage_specs / sizeof storage_specs[0]; s++) {
        if (kernel_missing(storage_specs[s]))
            continue;
        for (int side = VM_PRQ; side <= VM_UMQ; side++) {
            if (strstr(storage_specs[s], "llv"))
                test_llv_blocks(storage_specs[s], side);
            else if (strstr(storage_specs[s], "lla"))
                test_lla_blocks(storage_specs[s], side);
        }
        char spec[96];
        snprintf(spec, sizeof spec, "%s policy=single", storage_specs[s]);
        int small = !strncmp(spec, "storage=ll ", 11) || strstr(spec, "lla.block=4 ") ||
                    strstr(spec, "llv.block=64 ");
        test_engine_bytes(spec, small);
    }
    return check_report("test_blocks");
}
