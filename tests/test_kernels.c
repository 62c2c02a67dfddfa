/* test_kernels.c -- the llv kernels (scalar, AVX2, AVX-512) agree with a plain reference walk
 * on randomized blocks: random live bitmaps and head/tail ranges, several blocks in a chain,
 * random care masks (fingerprint classes and wild slots), fingerprints equal to the probe's
 * on slots that do not match (to the kernel exactly a hash collision, which must be rejected
 * by the full compare), stale fingerprints in dead slots, a match at every slot position,
 * and no match.
 * Also the public kernel queries (vmatch_kernel, vmatch_simd_available), simd= refusals and
 * the kernel list llv gives the engine (kernels.c).
 *
 * It prints which kernels ran and which this CPU (or build) cannot run; those are named, not
 * skipped silently.  VMATCH_SEED=N replays a run.
 */
#include "check.h"
#include "llv.h"
#include "rng.h"
#include "simd.h"
#include "vmatch.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_SEED 0x6b65726eu
#define ROUNDS       3000 /* random chains per kernel and side */
#define MAX_BLOCKS   3
#define MAX_GROUPS   4 /* slots per block up to 4 * 64: every group position of a bitmap */

/* A chain of blocks as the queue would hold them, with the reference's view of each slot. */
typedef struct chain {
    vm_llv_geom_t geo, small; /* blocks of groups * 64 slots; a first block may be small */
    vm_llv_block_t *b[MAX_BLOCKS];
    unsigned n;
    int side;
    uint64_t care_of[VM_LLV_CLASSES]; /* class care masks; [0] all ones */
    unsigned classes;                 /* classes in use (the probe's) */
} chain_t;

/** Allocate n blocks of `groups` groups for side (the first one of a single group when
 * small_first), linked, every byte random (dead slots hold garbage, as reused blocks do),
 * bitmaps empty. */
static void chain_init(chain_t *c, int side, unsigned n, uint32_t groups, int small_first)
{
    memset(c, 0, sizeof *c);
    c->side = side;
    c->n = n;
    vm_llv_geom_init(&c->geo, groups * VM_LLV_GROUP, side);
    vm_llv_geom_init(&c->small, VM_LLV_GROUP, side);
    for (unsigned i = 0; i < n; i++) {
        const vm_llv_geom_t *g = i == 0 && small_first ? &c->small : &c->geo;
        c->b[i] = aligned_alloc(64, g->size);
        REQUIRE(c->b[i] != NULL);
        uint64_t *w = (uint64_t *)c->b[i];
        for (size_t j = 0; j < g->size / sizeof *w; j++)
            w[j] = rnd64();
        *c->b[i] = (vm_llv_block_t){
            .blk = {.link.prev = i ? &c->b[i - 1]->blk.link : NULL, .slots = g->slots},
            .lanes = g->bits,
            .prq = side == VM_PRQ};
        memset(c->b[i]->map, 0, (side == VM_PRQ ? 2u : 1u) * g->groups * sizeof(uint64_t));
        if (i)
            c->b[i - 1]->blk.link.next = &c->b[i]->blk.link;
    }
    c->care_of[0] = ~(uint64_t)0;
}

static void chain_free(chain_t *c)
{
    for (unsigned i = 0; i < c->n; i++)
        free(c->b[i]);
}

/** Make slot i of b live with these bits and care; class -1 makes it a wild slot.  fp is its
 * fingerprint, or -1 for the true one; another value is only given to a slot that cannot
 * match, where the kernels see a false positive. */
static void put(chain_t *c, vm_llv_block_t *b, uint32_t i, uint64_t bits, uint64_t care, int k,
                long fp)
{
    uint64_t bit = (uint64_t)1 << (i % VM_LLV_GROUP);
    vm_llv_bits(b)[i] = bits;
    vm_llv_payload(b)[i] = rnd64();
    if (c->side == VM_PRQ)
        vm_llv_care(b)[i] = care;
    if (k >= 0) {
        vm_llv_fps(b)[i] = (uint16_t)(fp < 0 ? vm_llv_fp(bits & care) : (uint32_t)fp);
        b->classes |= 1u << k;
    } else {
        b->map[vm_llv_groups(b) + i / VM_LLV_GROUP] |= bit;
        b->wild++;
    }
    b->map[i / VM_LLV_GROUP] |= bit;
    b->blk.live++;
}

/** Set head, tail and start of b from its bitmap (a block of the queue is never empty). */
static void settle(vm_llv_block_t *b)
{
    uint32_t lo = b->blk.slots, hi = 0;
    for (uint32_t i = 0; i < b->blk.slots; i++)
        if (b->map[i / VM_LLV_GROUP] >> (i % VM_LLV_GROUP) & 1) {
            lo = lo < i ? lo : i;
            hi = i + 1;
        }
    b->blk.head = lo;
    b->blk.tail = hi;
    b->start = lo / VM_LLV_GROUP;
}

/** Match of the key search for slot i of b (the definition, not the fingerprints). */
static int ref_key_match(const chain_t *c, const vm_llv_block_t *b, uint32_t i, uint64_t key)
{
    uint64_t bits = vm_llv_bits(b)[i];
    if (c->side == VM_UMQ)
        return bits == key;
    return ((key ^ bits) & vm_llv_care(b)[i]) == 0;
}

/** The reference walk: the first live slot in chain order for which match() holds. */
static int ref_find(const chain_t *c, int masked, enum vm_llv_lane_id lane, uint64_t key,
                    uint64_t care, vm_llv_pos_t *pos)
{
    uint64_t passed = 0;
    for (unsigned j = 0; j < c->n; j++) {
        const vm_llv_block_t *b = c->b[j];
        for (uint32_t i = b->blk.head; i < b->blk.tail; i++) {
            if (!(b->map[i / VM_LLV_GROUP] >> (i % VM_LLV_GROUP) & 1))
                continue;
            const uint64_t *v = lane == VM_LLV_BITS ? vm_llv_bits(b) : vm_llv_payload(b);
            int ok = masked ? ((v[i] ^ key) & care) == 0 : ref_key_match(c, b, i, key);
            if (ok) {
                *pos = (vm_llv_pos_t){.block = c->b[j], .slot = i, .passed = passed};
                return 1;
            }
        }
        passed += b->blk.live;
    }
    pos->passed = passed;
    return 0;
}

/** The probe of a key search as llv.c builds it. */
static vm_llv_probe_t probe_of(const chain_t *c, uint64_t key)
{
    vm_llv_probe_t p = {.key = key, .classes = c->classes | 1};
    for (unsigned k = 0; k < VM_LLV_CLASSES; k++)
        p.fp[k] = vm_llv_fp(key & c->care_of[k]);
    return p;
}

static unsigned n_mismatch;

/** Run one search with kernel kern and compare with the reference; describe on failure. */
static void compare(const vm_llv_kernel_t *kern, const chain_t *c, int masked,
                    enum vm_llv_lane_id lane, uint64_t key, uint64_t care, const char *what)
{
    vm_llv_pos_t want = {0}, got = {0};
    int w = ref_find(c, masked, lane, key, care, &want), k;
    if (masked) {
        k = kern->find_masked(c->b[0], lane, key, care, &got);
    } else {
        vm_llv_probe_t p = probe_of(c, key);
        k = kern->find_key(c->b[0], &p, &got);
    }
    int same = k == w && got.passed == want.passed &&
               (!w || (got.block == want.block && got.slot == want.slot));
    CHECK(same);
    if (!same && n_mismatch++ < 10)
        fprintf(stderr,
                "test_kernels: %s %s %s: kernel %d slot %u passed %" PRIu64
                ", reference %d slot %u passed %" PRIu64 " (key %#" PRIx64 ")\n",
                vm_llv_kernel_name(kern), c->side == VM_PRQ ? "PRQ" : "UMQ", what, k, got.slot,
                got.passed, w, want.slot, want.passed, key);
}

/** A care mask with random bits cleared (a wildcard shape of some layout). */
static uint64_t random_care(void)
{
    return ~(rnd64() & rnd64() & rnd64());
}

/** Fill a random chain: densities from empty groups to full ones, keys from a small set so
 * that several slots match, fingerprint collisions, classes and wild slots. */
static void random_chain(chain_t *c, int side, const uint64_t *keys, unsigned nkeys)
{
    unsigned n = 1 + rnd(MAX_BLOCKS);
    chain_init(c, side, n, 1 + rnd(MAX_GROUPS), rnd(2));
    unsigned ncls = side == VM_PRQ ? rnd(VM_LLV_CLASSES) : 0;
    for (unsigned k = 1; k <= ncls; k++) {
        c->care_of[k] = random_care();
        c->classes |= 1u << k;
    }
    for (unsigned j = 0; j < n; j++) {
        vm_llv_block_t *b = c->b[j];
        uint32_t slots = b->blk.slots, density = rnd(101);
        uint32_t lo = rnd(slots), hi = lo + 1 + rnd(slots - lo);
        for (uint32_t i = lo; i < hi; i++) {
            if (i != lo && rnd(100) >= density)
                continue;
            int k = side == VM_PRQ ? (int)rnd(ncls + 2) - 1 : 0; /* -1: wild */
            uint64_t care = k >= 0 ? c->care_of[k] : random_care();
            /* a key where the slot cares, anything where it does not */
            uint64_t bits = (keys[rnd(nkeys)] & care) | (rnd64() & ~care);
            long fp = -1;
            if (rnd(3) == 0) { /* random bits match no key: give some a key's fingerprint */
                bits = rnd64();
                if (rnd(2))
                    fp = (long)vm_llv_fp(keys[rnd(nkeys)] & c->care_of[rnd(VM_LLV_CLASSES)]);
            }
            put(c, b, i, bits, care, k, fp);
        }
        /* Dead slots keep what removed entries left: often a whole entry for a key. */
        for (uint32_t i = 0; i < slots; i++) {
            if ((b->map[i / VM_LLV_GROUP] >> (i % VM_LLV_GROUP) & 1) || rnd(2))
                continue;
            uint64_t stale = keys[rnd(nkeys)];
            vm_llv_fps(b)[i] = (uint16_t)vm_llv_fp(stale);
            vm_llv_bits(b)[i] = stale;
            vm_llv_payload(b)[i] = stale;
            if (side == VM_PRQ)
                vm_llv_care(b)[i] = ~(uint64_t)0;
        }
        b->classes |= rnd(1u << VM_LLV_CLASSES) & c->classes; /* stale class bits are allowed */
        settle(b);
    }
}

/** Randomized chains: key searches and masked searches on both lanes. */
static void test_random(const vm_llv_kernel_t *kern)
{
    for (int side = VM_PRQ; side <= VM_UMQ; side++) {
        for (unsigned r = 0; r < ROUNDS; r++) {
            uint64_t keys[4];
            chain_t c;
            for (unsigned i = 0; i < 4; i++)
                keys[i] = rnd64();
            random_chain(&c, side, keys, 4);
            uint64_t key = rnd(4) ? keys[rnd(4)] : rnd64();
            compare(kern, &c, 0, VM_LLV_BITS, key, 0, "random key search");
            compare(kern, &c, 1, VM_LLV_BITS, key, random_care(), "random masked search");
            compare(kern, &c, 1, VM_LLV_BITS, key, ~(uint64_t)0, "random exact masked search");
            /* the payload lane, by a payload that is there (or not) */
            const vm_llv_block_t *b = c.b[rnd(c.n)];
            uint64_t pay = vm_llv_payload(b)[b->blk.head + rnd(b->blk.tail - b->blk.head)];
            compare(kern, &c, 1, VM_LLV_PAYLOAD, rnd(2) ? pay : rnd64(), ~(uint64_t)0,
                    "payload search");
            chain_free(&c);
        }
    }
}

/** One block of MAX_GROUPS full groups, every slot live and a candidate (the probe's
 * fingerprint for its class) but not matching key, the classes mixed (and wild slots in the
 * second variant), then a true match at slot s only: the kernels must find s for every s,
 * and nothing when there is no match (s past the end). */
static void test_every_position(const vm_llv_kernel_t *kern)
{
    const uint64_t any_tag = ~(uint64_t)0xFFFFFF, odd = 0xFFFF0000u;
    for (int side = VM_PRQ; side <= VM_UMQ; side++) {
        for (int wild = 0; wild <= (side == VM_PRQ); wild++) {
            for (uint32_t s = 0; s <= MAX_GROUPS * VM_LLV_GROUP; s++) {
                chain_t c;
                uint64_t key = rnd64();
                chain_init(&c, side, 1, MAX_GROUPS, 0);
                if (side == VM_PRQ) {
                    c.care_of[1] = any_tag;
                    c.classes = 2;
                }
                for (uint32_t i = 0; i < c.geo.slots; i++) {
                    int k = side == VM_UMQ ? 0 : wild ? (int)(i % 3) - 1 : (int)(i % 2);
                    uint64_t care = k < 0 ? odd : c.care_of[k];
                    /* bit 24, cared for by every mask here, differs unless this is s */
                    uint64_t bits = (key & care) | (rnd64() & ~care);
                    if (i != s)
                        bits ^= (uint64_t)1 << 24;
                    put(&c, c.b[0], i, bits, care, k, (long)vm_llv_fp(key & care));
                }
                settle(c.b[0]);
                compare(kern, &c, 0, VM_LLV_BITS, key, 0,
                        s < c.geo.slots ? "match at s" : "no match");
                compare(kern, &c, 1, VM_LLV_BITS, key, ~(uint64_t)0,
                        s < c.geo.slots ? "masked match at s" : "masked no match");
                chain_free(&c);
            }
        }
    }
}

/** The public queries and the simd= refusals agree with what the kernels report. */
static void test_queries(void)
{
    vmatch_engine_t *e = NULL;
    CHECK_EQ(vmatch_simd_available("scalar"), 1);
    CHECK_EQ(vmatch_simd_available("auto"), 1);
    CHECK_EQ(vmatch_simd_available("sse9"), VMATCH_EINVAL);
    CHECK_EQ(vmatch_simd_available(NULL), VMATCH_EINVAL);
    CHECK(strcmp(vmatch_kernel(NULL), "none") == 0);
    REQUIRE(vmatch_create("storage=ll", &e) == VMATCH_OK);
    CHECK(strcmp(vmatch_kernel(e), "none") == 0);
    vmatch_destroy(e);
    REQUIRE(vmatch_create("storage=llv", &e) == VMATCH_OK);
    CHECK(strcmp(vmatch_kernel(e), vm_simd_name(vm_simd_best())) == 0);
    CHECK(strstr(vmatch_describe(e), "simd=auto") == NULL);
    vmatch_destroy(e);
    for (int s = VM_SIMD_SCALAR; s < VM_SIMD_COUNT; s++) {
        char spec[64];
        snprintf(spec, sizeof spec, "storage=llv simd=%s", vm_simd_name(s));
        vmatch_engine_t *x = NULL;
        int rc = vmatch_create(spec, &x);
        if (vmatch_simd_available(vm_simd_name(s)) == 1) {
            CHECK_EQ(rc, VMATCH_OK);
            if (x)
                CHECK(strcmp(vmatch_kernel(x), vm_simd_name(s)) == 0);
            vmatch_destroy(x);
        } else {
            CHECK_EQ(rc, VMATCH_EUNSUPPORTED);
            CHECK(x == NULL && strstr(vmatch_last_error(), vm_simd_name(s)) != NULL);
        }
    }
}

/** The kernel list llv gives the engine: each kernel found by its simd= value, listed weakest
 * first, the scalar one needing nothing; a value is available exactly when its kernel's CPU
 * features are all here, and auto resolves to the highest such one. */
static void test_table(void)
{
    unsigned have = vm_cpu_features(), n = 0;
    int last = VM_SIMD_AUTO;
    for (const vm_kernel_t *const *k = vm_llv_kernels; *k; k++, n++) {
        CHECK((*k)->simd > last && (*k)->simd < VM_SIMD_COUNT);
        last = (*k)->simd;
        CHECK(&vm_llv_kernel((*k)->simd)->kernel == *k);
        CHECK_EQ(vm_simd_available((*k)->simd), ((*k)->cpu & ~have) == 0);
    }
    CHECK(n >= 1 && vm_llv_kernels[0]->simd == VM_SIMD_SCALAR && vm_llv_kernels[0]->cpu == 0);
    for (int s = VM_SIMD_SCALAR; s < VM_SIMD_COUNT; s++)
        CHECK(!vm_simd_available(s) || vm_llv_kernel(s) != NULL);
    CHECK(vm_llv_kernel(VM_SIMD_AUTO) == NULL && vm_llv_kernel(VM_SIMD_COUNT) == NULL);
    CHECK(vm_simd_available(vm_simd_best()) && vm_simd_best() >= VM_SIMD_SCALAR);
    for (int s = vm_simd_best() + 1; s < VM_SIMD_COUNT; s++)
        CHECK(!vm_simd_available(s) && strlen(vm_simd_why_not(s)) > 0);
}

int main(void)
{
    const char *env = getenv("VMATCH_SEED");
    uint64_t seed = env && *env ? strtoull(env, NULL, 0) : DEFAULT_SEED;
    int ran = 0;
    rng_s = seed;
    printf("test_kernels: seed=%#" PRIx64 "\n", seed);
    test_queries();
    test_table();
    for (int s = VM_SIMD_SCALAR; s < VM_SIMD_COUNT; s++) {
        const vm_llv_kernel_t *kern = vm_llv_kernel(s);
        if (!vm_simd_available(s) || !kern) {
            printf("test_kernels: kernel %-6s NOT RUN: %s\n", vm_simd_name(s),
                   vm_simd_why_not(s));
            continue;
        }
        unsigned before = check_failed;
        test_random(kern);
        test_every_position(kern);
        printf("test_kernels: kernel %-6s ran: %s\n", vm_llv_kernel_name(kern),
               check_failed == before ? "agrees with the reference" : "DISAGREES");
        ran++;
    }
    REQUIRE(ran > 0);
    return check_report("test_kernels");
}
