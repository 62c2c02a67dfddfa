/* test_split.c -- the split calls (vmatch_match_posted, vmatch_enqueue_unexpected,
 * vmatch_enqueue_posted), which a UCX adapter uses because UCX makes a receive descriptor
 * only after the posted receives missed: their argument checks, and on random streams the
 * same answers as vmatch_post / vmatch_arrive for every policy and storage, with the
 * named layouts' wildcards among them. */
#include "check.h"
#include "vmatch.h"

#include <stdint.h>
#include <stdio.h>

#define PTR(i) ((void *)(uintptr_t)((i) + 1))

static uint64_t rnd(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

static void test_args(void)
{
    vmatch_engine_t *e;
    void *out = PTR(7);
    REQUIRE(vmatch_create("", &e) == VMATCH_OK);
    CHECK_EQ(vmatch_match_posted(NULL, 0, 0, &out), VMATCH_EINVAL);
    CHECK_EQ(vmatch_match_posted(e, 0, 0, NULL), VMATCH_EINVAL);
    CHECK_EQ(vmatch_enqueue_unexpected(NULL, 0, 0, PTR(1)), VMATCH_EINVAL);
    CHECK_EQ(vmatch_enqueue_unexpected(e, 0, 0, NULL), VMATCH_EINVAL);
    CHECK_EQ(vmatch_enqueue_posted(NULL, 0, ~0ull, 0, PTR(1)), VMATCH_EINVAL);
    CHECK_EQ(vmatch_enqueue_posted(e, 0, ~0ull, 0, NULL), VMATCH_EINVAL);
    vmatch_stats_t st;
    vmatch_stats(e, &st);
    CHECK(st.posted == 0 && st.unexpected == 0);
    CHECK_EQ(vmatch_match_posted(e, 5, 0, &out), VMATCH_ENOTFOUND);
    CHECK(out == PTR(7)); /* untouched on a miss */
    /* a queued receive is found once, then gone */
    CHECK_EQ(vmatch_enqueue_posted(e, 5, ~0ull, 0, PTR(1)), VMATCH_QUEUED);
    CHECK_EQ(vmatch_match_posted(e, 6, 0, &out), VMATCH_ENOTFOUND);
    CHECK_EQ(vmatch_match_posted(e, 5, 0, &out), VMATCH_MATCHED);
    CHECK(out == PTR(1));
    CHECK_EQ(vmatch_match_posted(e, 5, 0, &out), VMATCH_ENOTFOUND);
    /* a queued message is what a probe and a post find */
    CHECK_EQ(vmatch_enqueue_unexpected(e, 9, 0, PTR(2)), VMATCH_QUEUED);
    CHECK_EQ(vmatch_post(e, 9, ~0ull, 0, PTR(3), &out), VMATCH_MATCHED);
    CHECK(out == PTR(2));
    vmatch_stats(e, &st);
    CHECK(st.posted == 0 && st.unexpected == 0);
    vmatch_destroy(e);
}

/* One stream on two engines of spec: a through the split calls, b through post and
 * arrive; every answer must agree, and so must the queues at the end. */
static void test_stream(const char *spec, uint64_t seed)
{
    vmatch_engine_t *a, *b;
    int rc = vmatch_create(spec, &a);
    if (rc == VMATCH_EUNSUPPORTED)
        return;
    REQUIRE(rc == VMATCH_OK);
    REQUIRE(vmatch_create(spec, &b) == VMATCH_OK);
    uint64_t s = seed;
    unsigned bad = 0;
    for (int i = 0; i < 20000 && bad < 5; i++) {
        uint32_t ctx = (uint32_t)(rnd(&s) % 2);
        int32_t src = (int32_t)(rnd(&s) % 6), tag = (int32_t)(rnd(&s) % 5);
        int ra, rb;
        void *oa = NULL, *ob = NULL;
        if (rnd(&s) % 2) { /* a receive */
            vmatch_bits_t bits, care;
            uint64_t w = rnd(&s) % 8;
            if (w == 0)
                src = VMATCH_ANY_SOURCE;
            if (w == 1)
                tag = VMATCH_ANY_TAG;
            if (w == 2)
                src = VMATCH_ANY_SOURCE, tag = VMATCH_ANY_TAG;
            REQUIRE(vmatch_mpi_pack(a, ctx, src, tag, &bits, &care) == VMATCH_OK);
            ra = vmatch_probe(a, bits, care, 0, 1, &oa);
            if (ra == VMATCH_ENOTFOUND)
                ra = vmatch_enqueue_posted(a, bits, care, 0, PTR(i));
            rb = vmatch_post(b, bits, care, 0, PTR(i), &ob);
        } else { /* a message; now and then a tag whose top bit an ompi-ucx ANY_TAG keeps */
            if (rnd(&s) % 16 == 0)
                tag = 1 << 23;
            vmatch_bits_t bits = vmatch_mpi_msg(a, ctx, src, tag);
            ra = vmatch_match_posted(a, bits, 0, &oa);
            if (ra == VMATCH_ENOTFOUND)
                ra = vmatch_enqueue_unexpected(a, bits, 0, PTR(i));
            rb = vmatch_arrive(b, bits, 0, PTR(i), &ob);
        }
        if (ra != rb || (ra == VMATCH_MATCHED && oa != ob)) {
            fprintf(stderr, "test_split: \"%s\" op %d: split %d %p, whole %d %p\n", spec, i, ra,
                    oa, rb, ob);
            bad++;
        }
    }
    CHECK_EQ(bad, 0);
    vmatch_stats_t sa, sb;
    vmatch_stats(a, &sa);
    vmatch_stats(b, &sb);
    CHECK(sa.posted == sb.posted && sa.unexpected == sb.unexpected);
    vmatch_destroy(a);
    vmatch_destroy(b);
}

int main(void)
{
    static const char *const specs[] = {
        "",
        "policy=single storage=ll",
        "policy=hash storage=llv",
        "policy=hash storage=lla hash.buckets=3",
        "policy=pnp storage=llv nprocs=8 pnp.threshold=4",
        "policy=pnp storage=ll nprocs=8 pnp.threshold=4 layout=ompi-ucx",
        "policy=hash layout=ompi-ucx",
        "policy=single storage=lla layout=ompi-ucx",
        "policy=pnp storage=lla nprocs=8 pnp.threshold=3 layout=mpich-ucx",
        "policy=unified nprocs=8",
        "policy=unified nprocs=8 layout=ompi-ucx",
        "policy=hash threads=mutex",
        "policy=pnp storage=llv nprocs=8 pnp.threshold=4 threads=multi layout=ompi-ucx",
    };
    test_args();
    for (size_t i = 0; i < sizeof specs / sizeof *specs; i++)
        test_stream(specs[i], 0x5911u + i);
    return check_report("test_split");
}
