/* Unit tests of each storage (src/ll, src/lla, src/llv) through the storage table: append,
 * search, remove at the head, middle and tail, holes, blocks emptying, allocation failure, and
 * randomized comparisons with an array on both sides, exact and with many care masks.  llv
 * runs with every kernel this CPU has; the others are named as not run. */
#include "storage_fixture.h"

/* Entries 0..n-1 with bits i; remove head, middle and tail and check what search sees. */
static void test_holes(const char *spec, int side)
{
    fixture_t f;
    setup(&f, spec, side);
    vm_queue_t *q = f.q;
    enum { N = 40 };
    for (int i = 0; i < N; i++)
        REQUIRE(q->ops->append(q, (vmatch_bits_t)i, ALL, P(i), (uint64_t)i) == VMATCH_OK);
    CHECK_EQ(q->len, N);
    vm_hit_t h;
    uint64_t seen;
    CHECK(find(q, 0, ALL, &h, &seen) == P(0));
    CHECK_EQ(seen, 1);
    CHECK(find(q, N - 1, ALL, &h, &seen) == P(N - 1));
    CHECK_EQ(h.seq, N - 1);
    CHECK_EQ(seen, N);
    CHECK(find(q, N, ALL, &h, &seen) == NULL);
    CHECK_EQ(seen, N);

    /* Head, a middle run and the tail become holes that searches skip. */
    CHECK(take(q, 0));
    CHECK(take(q, N - 1));
    for (int i = 10; i < 20; i++)
        CHECK(take(q, (vmatch_bits_t)i));
    CHECK_EQ(q->len, N - 12);
    CHECK(find(q, 0, ALL, &h, &seen) == NULL);
    CHECK_EQ(seen, N - 12);
    CHECK(find(q, 1, ALL, &h, &seen) == P(1));
    CHECK_EQ(seen, 1);
    CHECK(find(q, 20, ALL, &h, &seen) == P(20));
    CHECK_EQ(seen, 10);
    CHECK(find(q, N - 2, ALL, &h, &seen) == P(N - 2));
    CHECK_EQ(seen, N - 12);

    /* A new tail entry lands after every survivor, even in a trimmed tail slot. */
    REQUIRE(q->ops->append(q, 15, ALL, P(100), 100) == VMATCH_OK);
    CHECK(find(q, 15, ALL, &h, &seen) == P(100));
    CHECK_EQ(seen, N - 11);
    CHECK_EQ(h.seq, 100);

    /* Remove by payload, including one that is not there. */
    CHECK(q->ops->find_payload(q, P(5), &h, &seen) == 1);
    q->ops->remove(q, &h);
    CHECK(q->ops->find_payload(q, P(5), &h, &seen) == 0);
    CHECK(q->ops->find_payload(q, P(999), &h, &seen) == 0);
    CHECK_EQ(q->len, N - 12);

    /* Drain from the tail end, newest payload first, so the tail index keeps moving back. */
    static const int order[] = {100, 38, 37, 36, 35, 34, 33, 32, 31, 30, 29, 28, 27, 26,
                                25,  24, 23, 22, 21, 20, 9,  8,  7,  6,  4,  3,  2,  1};
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
        seen = 0;
        CHECK(q->ops->find_payload(q, P(order[i]), &h, &seen) == 1);
        CHECK_EQ(seen, q->len); /* always the last entry */
        q->ops->remove(q, &h);
    }
    CHECK_EQ(q->len, 0);
    CHECK(find(q, 1, ALL, &h, &seen) == NULL);
    CHECK_EQ(seen, 0);
    REQUIRE(q->ops->append(q, 7, ALL, P(7), 7) == VMATCH_OK);
    CHECK(find(q, 7, ALL, &h, &seen) == P(7));
    teardown(&f);
}

/* Care masks: the PRQ applies each entry's care, the UMQ the search's care. */
static void test_care(const char *spec)
{
    fixture_t f;
    vm_hit_t h;
    uint64_t seen;
    setup(&f, spec, VM_PRQ);
    f.q->ops->append(f.q, 0x1200, 0xFF00, P(0), 0); /* any low byte */
    f.q->ops->append(f.q, 0x1234, ALL, P(1), 1);
    CHECK(find(f.q, 0x1234, ALL, &h, &seen) == P(0)); /* the earlier, wider receive */
    CHECK(find(f.q, 0x1334, ALL, &h, &seen) == NULL);
    teardown(&f);

    setup(&f, spec, VM_UMQ);
    f.q->ops->append(f.q, 0x1234, 0, P(0), 0); /* care of a message is not used */
    f.q->ops->append(f.q, 0x1299, 0, P(1), 1);
    CHECK(find(f.q, 0x1299, ALL, &h, &seen) == P(1));
    CHECK(find(f.q, 0x1299, 0xFF00, &h, &seen) == P(0));
    CHECK(find(f.q, 0x9999, 0, &h, &seen) == P(0));
    CHECK(find(f.q, 0x1300, 0xFF00, &h, &seen) == NULL);
    teardown(&f);
}

/* lla: a block that empties goes back to the pool and is the next one handed out. */
static void test_block_recycling(void)
{
    fixture_t f;
    vm_hit_t h;
    uint64_t seen;
    setup(&f, "storage=lla lla.block=4", VM_PRQ);
    vm_queue_t *q = f.q;
    for (int i = 0; i < 12; i++)
        q->ops->append(q, (vmatch_bits_t)i, ALL, P(i), (uint64_t)i);
    find(q, 5, ALL, &h, &seen);
    void *middle_block = h.where;
    find(q, 4, ALL, &h, &seen);
    CHECK(h.where == middle_block);
    uint64_t bytes = f.env.mem.bytes;
    for (int i = 4; i < 8; i++)
        CHECK(take(q, (vmatch_bits_t)i));
    CHECK(find(q, 8, ALL, &h, &seen) == P(8));
    CHECK_EQ(seen, 5); /* 0..3, then the first entry of the third block */
    CHECK(h.where != middle_block);
    /* Entries 12..15 fill the last block's successor: the recycled one. */
    for (int i = 12; i < 16; i++)
        q->ops->append(q, (vmatch_bits_t)i, ALL, P(i), (uint64_t)i);
    CHECK(find(q, 12, ALL, &h, &seen) == P(12));
    CHECK(h.where == middle_block);
    CHECK_EQ(f.env.mem.bytes, bytes);
    teardown(&f);
}

/* Allocation failure: append reports ENOMEM and the queue is as before. */
static void test_enomem(const char *spec)
{
    fixture_t f;
    vm_hit_t h;
    uint64_t seen;
    setup(&f, spec, VM_UMQ);
    vm_queue_t *q = f.q;
    int i = 0, rc;
    f.env.mem.fail_after = 0;
    while ((rc = q->ops->append(q, (vmatch_bits_t)i, ALL, P(i), (uint64_t)i)) == VMATCH_OK)
        i++;
    CHECK_EQ(rc, VMATCH_ENOMEM);
    CHECK_EQ(q->len, (uint64_t)i);
    CHECK(find(q, (vmatch_bits_t)i, ALL, &h, &seen) == NULL);
    f.env.mem.fail_after = -1;
    CHECK_EQ(q->ops->append(q, (vmatch_bits_t)i, ALL, P(i), (uint64_t)i), VMATCH_OK);
    CHECK(find(q, (vmatch_bits_t)i, ALL, &h, &seen) == P(i));
    CHECK_EQ(seen, (uint64_t)i + 1);
    teardown(&f);
}

static uint64_t rng_state = 42;
static uint64_t rnd(uint64_t n)
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (rng_state >> 33) % n;
}

/* Random appends and removals at random positions against an array in queue order. */
static void test_random(const char *spec, int side, int ops)
{
    enum { CAP = 4096, KEYS = 64 };
    static vmatch_bits_t model_bits[CAP];
    static uint64_t model_id[CAP];
    fixture_t f;
    setup(&f, spec, side);
    vm_queue_t *q = f.q;
    size_t n = 0;
    uint64_t next = 0;
    int bad = 0;
    for (int op = 0; op < ops && !bad; op++) {
        int grow = n < 8 || (n < CAP && rnd(100) < (op / 20000 % 2 ? 70 : 35));
        if (grow) {
            vmatch_bits_t b = rnd(KEYS);
            REQUIRE(q->ops->append(q, b, ALL, P(next), next) == VMATCH_OK);
            model_bits[n] = b;
            model_id[n++] = next++;
            continue;
        }
        vmatch_bits_t key = rnd(KEYS);
        size_t i = 0;
        while (i < n && model_bits[i] != key)
            i++;
        vm_hit_t h;
        uint64_t seen = 0;
        int got = q->ops->find(q, key, ALL, &h, &seen);
        if (got != (i < n) ||
            (got && (h.payload != P(model_id[i]) || h.seq != model_id[i] || seen != i + 1))) {
            fprintf(stderr, "%s side %d: op %d key %llu differs\n", spec, side, op,
                    (unsigned long long)key);
            bad = 1;
            break;
        }
        if (got) {
            q->ops->remove(q, &h);
            memmove(&model_bits[i], &model_bits[i + 1], (n - i - 1) * sizeof model_bits[0]);
            memmove(&model_id[i], &model_id[i + 1], (n - i - 1) * sizeof model_id[0]);
            n--;
        }
        if (q->len != n)
            bad = 1;
    }
    CHECK(!bad);
    teardown(&f);
}

/* Receives with many care masks against an array in queue order: more distinct masks than
 * llv has fingerprint classes, so classes fill, empty, are reused for other masks, and the
 * rest go to the wild bitmap; messages match under each receive's mask. */
static void test_random_care(const char *spec)
{
    enum { OPS = 60000, CAP = 1024, KEYS = 16, MASKS = 8 };
    static const vmatch_bits_t masks[MASKS] = {ALL,
                                               ~(vmatch_bits_t)0xFF,
                                               ~(vmatch_bits_t)0xFF00,
                                               ~(vmatch_bits_t)0xFFFF,
                                               ~(vmatch_bits_t)0xF0,
                                               ~(vmatch_bits_t)0x0F,
                                               ~(vmatch_bits_t)0xF00F,
                                               ~(vmatch_bits_t)0xFFF};
    static vmatch_bits_t model_bits[CAP], model_care[CAP];
    static uint64_t model_id[CAP];
    fixture_t f;
    setup(&f, spec, VM_PRQ);
    vm_queue_t *q = f.q;
    size_t n = 0;
    uint64_t next = 0;
    int bad = 0;
    for (int op = 0; op < OPS && !bad; op++) {
        /* phases that favour few masks, then all of them, so classes drain and refill */
        unsigned nmasks = op / 6000 % 2 ? MASKS : 3 + (unsigned)(op / 12000 % 3);
        int grow = n < 4 || (n < CAP && rnd(100) < (op / 3000 % 2 ? 65 : 40));
        if (grow) {
            vmatch_bits_t c = masks[rnd(nmasks)], b = rnd(KEYS) * 0x1111 & c;
            REQUIRE(q->ops->append(q, b, c, P(next), next) == VMATCH_OK);
            model_bits[n] = b;
            model_care[n] = c;
            model_id[n++] = next++;
            continue;
        }
        vmatch_bits_t key = rnd(KEYS) * 0x1111 ^ rnd(4) << 4 * rnd(4);
        size_t i = 0;
        while (i < n && ((key ^ model_bits[i]) & model_care[i]) != 0)
            i++;
        vm_hit_t h;
        uint64_t seen = 0;
        int got = q->ops->find(q, key, ALL, &h, &seen);
        if (got != (i < n) ||
            (got && (h.payload != P(model_id[i]) || h.seq != model_id[i] || seen != i + 1))) {
            fprintf(stderr,
                    "%s: care op %d key %#llx differs (got %d, want index %zu of %zu)\n", spec,
                    op, (unsigned long long)key, got, i, n);
            bad = 1;
            break;
        }
        if (got) {
            q->ops->remove(q, &h);
            memmove(&model_bits[i], &model_bits[i + 1], (n - i - 1) * sizeof model_bits[0]);
            memmove(&model_care[i], &model_care[i + 1], (n - i - 1) * sizeof model_care[0]);
            memmove(&model_id[i], &model_id[i + 1], (n - i - 1) * sizeof model_id[0]);
            n--;
        }
        if (q->len != n)
            bad = 1;
    }
    CHECK(!bad);
    teardown(&f);
}

int main(void)
{
    for (size_t s = 0; s < sizeof storage_specs / sizeof storage_specs[0]; s++) {
        if (kernel_missing(storage_specs[s]))
            continue;
        /* llv's own tests run shorter: its kernels have test_kernels, and each llv spec
         * here has a different block size or kernel */
        int llv = strstr(storage_specs[s], "llv") != NULL;
        if (llv || s == 0)
            test_random_care(storage_specs[s]);
        for (int side = VM_PRQ; side <= VM_UMQ; side++) {
            test_holes(storage_specs[s], side);
            test_random(storage_specs[s], side, llv ? 100000 : 200000);
        }
        test_care(storage_specs[s]);
        test_enomem(storage_specs[s]);
    }
    test_block_recycling();
    return check_report("test_storage");
}
