/* kernel_avx2.c -- the AVX2 llv kernel: 16 fingerprints or 4 match-bit lanes per instruction.
 * Compiled with the target attribute, so the rest of the library needs no -mavx2; it needs
 * VM_CPU_AVX2, so it only runs where the CPU has AVX2 and the OS saves the YMM registers. */
#include "walk.h"

#ifdef VM_SIMD_X86

#include "fp_avx2.h"

/* 64-bit lanes per 256-bit vector; a step covers 8 slots, one byte of a bitmap word. */
#define LANES    4
#define PER_STEP 8

typedef struct avx2_ctx {
    vm_fp_avx2_t fp; /* first: the fingerprint compares take the context as theirs */
    __m256i key, care;
} avx2_ctx_t;

/* The 8 slots from lane[o] compared with key under care (care lane when not NULL, else the
 * broadcast c): bit s set where ((lane ^ key) & care) == 0. */
VM_AVX2 static inline uint32_t cmp8(const uint64_t *lane, const uint64_t *care, size_t o,
                                    __m256i k, __m256i c)
{
    const __m256i *v = (const __m256i *)(lane + o);
    __m256i c0 = care ? _mm256_load_si256((const __m256i *)(care + o)) : c;
    __m256i c1 = care ? _mm256_load_si256((const __m256i *)(care + o + LANES)) : c;
    __m256i x0 = _mm256_and_si256(_mm256_xor_si256(_mm256_load_si256(v), k), c0);
    __m256i x1 = _mm256_and_si256(_mm256_xor_si256(_mm256_load_si256(v + 1), k), c1);
    __m256i z = _mm256_setzero_si256();
    uint32_t m0 = (uint32_t)_mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpeq_epi64(x0, z)));
    uint32_t m1 = (uint32_t)_mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpeq_epi64(x1, z)));
    return m0 | m1 << LANES;
}

/* The first slot of want whose lane value matches the context's key under care (the care
 * lane when it is not NULL, else the context's care), or VM_LLV_GROUP.  Steps whose byte of
 * want is empty are skipped.  With a care lane, the walk's `wild` compare. */
VM_AVX2 static inline uint32_t first_of(const void *ctx, const uint64_t *lane,
                                        const uint64_t *care, uint64_t want)
{
    const avx2_ctx_t *c = ctx;
    for (size_t o = 0; o < VM_LLV_GROUP; o += PER_STEP) {
        uint32_t w = (uint32_t)(want >> o) & 0xFF;
        if (!w)
            continue;
        uint32_t m = cmp8(lane, care, o, c->key, c->care) & w;
        if (m)
            return (uint32_t)o + (uint32_t)__builtin_ctz(m);
    }
    return VM_LLV_GROUP;
}

/* The walk's `first` compare: first_of under the context's care. */
VM_AVX2 static uint32_t first(const void *ctx, const uint64_t *lane, uint64_t want)
{
    return first_of(ctx, lane, NULL, want);
}

VM_AVX2 static int avx2_find_key(vm_llv_block_t *b, const vm_llv_probe_t *p, vm_llv_pos_t *pos)
{
    avx2_ctx_t c;
    vm_fp_avx2_init(&c.fp, p);
    c.key = _mm256_set1_epi64x((long long)p->key);
    c.care = c.key;
    return vm_llv_walk_key(b, p, &c, pos, vm_fp_any_avx2, vm_fp_mask_avx2, first_of);
}

VM_AVX2 static int avx2_find_masked(vm_llv_block_t *b, enum vm_llv_lane_id lane, uint64_t key,
                                    uint64_t care, vm_llv_pos_t *pos)
{
    avx2_ctx_t c;
    c.key = _mm256_set1_epi64x((long long)key);
    c.care = _mm256_set1_epi64x((long long)care);
    return vm_llv_walk_masked(b, lane, &c, pos, first);
}

const vm_llv_kernel_t vm_llv_avx2 = {
    .kernel = {.simd = VM_SIMD_AVX2, .cpu = VM_CPU_AVX2},
    .find_key = avx2_find_key,
    .find_masked = avx2_find_masked,
};

#endif
