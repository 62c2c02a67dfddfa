/* kernel_avx512.c -- the AVX-512 llv kernel: 8 match-bit lanes per instruction, with the
 * bitmap as the write mask of the compare (an opmask register), so dead slots never report
 * a match.  AVX-512F instructions only, plus the AVX2 fingerprint compares (see fp_avx2.h):
 * the same code runs on Knights Landing and on every AVX-512 Xeon. */
#include "walk.h"

#ifdef VM_SIMD_X86

#include "fp_avx2.h"

#define VM_AVX512 __attribute__((target("avx512f")))

/* 64-bit lanes per 512-bit vector: one byte of a bitmap word, one opmask of 8 bits. */
#define LANES 8

typedef struct avx512_ctx {
    vm_fp_avx2_t fp; /* first: the fingerprint compares take the context as theirs */
    __m512i key, care;
} avx512_ctx_t;

/* The first slot of want whose lane value v has ((v ^ key) & care) == 0, key and care the
 * context's (care from the care lane when it is not NULL), or VM_LLV_GROUP.  With a care
 * lane, the walk's `wild` compare. */
VM_AVX512 static inline uint32_t first_of(const void *ctx, const uint64_t *lane,
                                          const uint64_t *care, uint64_t want)
{
    const avx512_ctx_t *c = ctx;
    for (size_t o = 0; o < VM_LLV_GROUP; o += LANES) {
        __mmask8 w = (__mmask8)(want >> o);
        if (!w)
            continue;
        __m512i x = _mm512_xor_si512(_mm512_load_si512(lane + o), c->key);
        __mmask8 m =
            _mm512_mask_testn_epi64_mask(w, x, care ? _mm512_load_si512(care + o) : c->care);
        if (m)
            return (uint32_t)o + (uint32_t)__builtin_ctz(m);
    }
    return VM_LLV_GROUP;
}

/* The walk's `first` compare: first_of under the context's care. */
VM_AVX512 static uint32_t first(const void *ctx, const uint64_t *lane, uint64_t want)
{
    return first_of(ctx, lane, NULL, want);
}

VM_AVX512 static int avx512_find_key(vm_llv_block_t *b, const vm_llv_probe_t *p,
                                     vm_llv_pos_t *pos)
{
    avx512_ctx_t c;
    vm_fp_avx2_init(&c.fp, p);
    c.key = _mm512_set1_epi64((long long)p->key);
    c.care = c.key;
    return vm_llv_walk_key(b, p, &c, pos, vm_fp_any_avx2, vm_fp_mask_avx2, first_of);
}

VM_AVX512 static int avx512_find_masked(vm_llv_block_t *b, enum vm_llv_lane_id lane,
                                        uint64_t key, uint64_t care, vm_llv_pos_t *pos)
{
    avx512_ctx_t c;
    c.key = _mm512_set1_epi64((long long)key);
    c.care = _mm512_set1_epi64((long long)care);
    return vm_llv_walk_masked(b, lane, &c, pos, first);
}

/* The fingerprint compares are AVX2's: it needs both (KNL and every later AVX-512 CPU have
 * them). */
const vm_llv_kernel_t vm_llv_avx512 = {
    .kernel = {.simd = VM_SIMD_AVX512, .cpu = VM_CPU_AVX2 | VM_CPU_AVX512F},
    .find_key = avx512_find_key,
    .find_masked = avx512_find_masked,
};

#endif
