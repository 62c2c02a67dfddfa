/* kernel_scalar.c -- the portable llv kernel: plain C, no vector instructions assumed.
 *
 * Fingerprints are still compared many at a time, four 16-bit fingerprints in one 64-bit
 * word (SWAR), so a group of 64 slots costs 16 word operations before any slot is looked
 * at one by one.  This is the kernel of machines without AVX2 and of builds with
 * VMATCH_SIMD=OFF, and the reference the vector kernels are tested against.
 */
#include "walk.h"

#include <string.h>

/* Sixteen-bit halves of a 64-bit word: the low 15 bits of each, and the top bit of each. */
#define LOW15 0x7FFF7FFF7FFF7FFFull
#define TOP1  0x8000800080008000ull
/* One in each half, to repeat a fingerprint four times by multiplication. */
#define EACH_HALF 0x0001000100010001ull
/* Gathers the bits at 0, 16, 32 and 48 into bits 45..48 of the product: the four partial
 * products land on distinct positions, so no carry disturbs them. */
#define GATHER4 (1ull + (1ull << 15) + (1ull << 30) + (1ull << 45))

/* The top bit of every 16-bit half of x that is zero.  Exact: (h & 0x7FFF) + 0x7FFF cannot
 * carry out of its half, and sets the top bit iff the low 15 bits are not all zero. */
static inline uint64_t zero_halves(uint64_t x)
{
    return ~(((x & LOW15) + LOW15) | x) & TOP1;
}

/* Word j (four fingerprints) of a group. */
static inline uint64_t fp_word(const uint16_t *fp, unsigned j)
{
    uint64_t w;
    memcpy(&w, fp + 4 * j, sizeof w);
    return w;
}

/* The probe as this kernel uses it: each class's fingerprint repeated in all four halves. */
typedef struct scalar_ctx {
    uint64_t f4[VM_LLV_CLASSES];
    uint64_t key, care;
} scalar_ctx_t;

/* vm_llv_any_fn: 16 word operations per group and class. */
static int any(const void *ctx, const uint16_t *fp, unsigned fpc, unsigned n)
{
    const scalar_ctx_t *c = ctx;
    uint64_t acc = 0;
    for (unsigned k = 0; k < VM_LLV_CLASSES; k++)
        if (fpc >> k & 1)
            for (unsigned j = 0; j < n * VM_LLV_GROUP / 4; j++)
                acc |= zero_halves(fp_word(fp, j) ^ c->f4[k]);
    return acc != 0;
}

/* vm_llv_mask_fn */
static uint64_t mask(const void *ctx, const uint16_t *fp, unsigned fpc)
{
    const scalar_ctx_t *c = ctx;
    uint64_t m = 0;
    for (unsigned j = 0; j < VM_LLV_GROUP / 4; j++) {
        uint64_t w = fp_word(fp, j), z = 0;
        for (unsigned k = 0; k < VM_LLV_CLASSES; k++)
            if (fpc >> k & 1)
                z |= zero_halves(w ^ c->f4[k]);
        m |= ((z >> 15) * GATHER4 >> 45 & 0xF) << (4 * j);
    }
    return m;
}

/* vm_llv_wild_fn: slot by slot. */
static uint32_t wild(const void *ctx, const uint64_t *bits, const uint64_t *care, uint64_t want)
{
    uint64_t key = ((const scalar_ctx_t *)ctx)->key;
    for (; want; want &= want - 1) {
        uint32_t i = (uint32_t)__builtin_ctzll(want);
        if (((key ^ bits[i]) & care[i]) == 0)
            return i;
    }
    return VM_LLV_GROUP;
}

/* vm_llv_first_fn: live slots one by one. */
static uint32_t first(const void *ctx, const uint64_t *lane, uint64_t want)
{
    const scalar_ctx_t *c = ctx;
    for (; want; want &= want - 1) {
        uint32_t i = (uint32_t)__builtin_ctzll(want);
        if (((lane[i] ^ c->key) & c->care) == 0)
            return i;
    }
    return VM_LLV_GROUP;
}

static int scalar_find_key(vm_llv_block_t *b, const vm_llv_probe_t *p, vm_llv_pos_t *pos)
{
    scalar_ctx_t c = {.key = p->key};
    for (unsigned k = 0; k < VM_LLV_CLASSES; k++)
        c.f4[k] = p->fp[k] * EACH_HALF;
    return vm_llv_walk_key(b, p, &c, pos, any, mask, wild);
}

static int scalar_find_masked(vm_llv_block_t *b, enum vm_llv_lane_id lane, uint64_t key,
                              uint64_t care, vm_llv_pos_t *pos)
{
    scalar_ctx_t c = {.key = key, .care = care};
    return vm_llv_walk_masked(b, lane, &c, pos, first);
}

const vm_llv_kernel_t vm_llv_scalar = {
    .kernel = {.simd = VM_SIMD_SCALAR, .cpu = 0}, /* plain C: every machine */
    .find_key = scalar_find_key,
    .find_masked = scalar_find_masked,
};
