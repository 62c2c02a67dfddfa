/* fp_avx2.h -- fingerprint compares with AVX2, shared by the AVX2 and AVX-512 kernels.
 *
 * AVX-512F has no 16-bit compare (that is AVX512BW, which Knights Landing lacks), so the
 * AVX-512 kernel compares fingerprints with these AVX2 instructions too: every AVX-512 CPU
 * has AVX2.  A SWAR compare on 512-bit vectors was measured slower (docs/storages.md, "How llv
 * is tuned").  Include only from a file compiled for x86 (VM_SIMD_X86).
 */
#ifndef VM_LLV_FP_AVX2_H
#define VM_LLV_FP_AVX2_H

#include "walk.h"

#include <immintrin.h>

#define VM_AVX2 __attribute__((target("avx2")))

/* Fingerprint broadcasts of the probe's classes. */
typedef struct vm_fp_avx2 {
    __m256i f[VM_LLV_CLASSES];
} vm_fp_avx2_t;

VM_AVX2 static inline void vm_fp_avx2_init(vm_fp_avx2_t *c, const vm_llv_probe_t *p)
{
    for (unsigned k = 0; k < VM_LLV_CLASSES; k++)
        c->f[k] = _mm256_set1_epi16((short)p->fp[k]);
}

/* True when a fingerprint of the n groups at fp (four vectors of 16 each) equals that of a
 * class in fpc.  One test for all of them.  The walk's `any` compare (walk.h) of a kernel
 * whose context starts with its vm_fp_avx2_t, ctx. */
VM_AVX2 static inline int vm_fp_any_avx2(const void *ctx, const uint16_t *fp, unsigned fpc,
                                         unsigned n)
{
    const vm_fp_avx2_t *c = ctx;
    const __m256i *v = (const __m256i *)fp;
    __m256i acc = _mm256_setzero_si256();
    for (unsigned j = 0; j < 4 * n; j += 4) {
        __m256i v0 = _mm256_load_si256(v + j), v1 = _mm256_load_si256(v + j + 1);
        __m256i v2 = _mm256_load_si256(v + j + 2), v3 = _mm256_load_si256(v + j + 3);
        for (unsigned k = 0; k < VM_LLV_CLASSES; k++) {
            if (!(fpc >> k & 1))
                continue;
            __m256i a = _mm256_or_si256(_mm256_cmpeq_epi16(v0, c->f[k]),
                                        _mm256_cmpeq_epi16(v1, c->f[k]));
            __m256i b = _mm256_or_si256(_mm256_cmpeq_epi16(v2, c->f[k]),
                                        _mm256_cmpeq_epi16(v3, c->f[k]));
            acc = _mm256_or_si256(acc, _mm256_or_si256(a, b));
        }
    }
    return !_mm256_testz_si256(acc, acc);
}

/* Bit s for each of the 32 fingerprints at v (two vectors) equal to f. */
VM_AVX2 static inline uint32_t vm_fp_mask32_avx2(const __m256i *v, __m256i f)
{
    __m256i lo = _mm256_cmpeq_epi16(_mm256_load_si256(v), f);
    __m256i hi = _mm256_cmpeq_epi16(_mm256_load_si256(v + 1), f);
    /* packs narrows within 128-bit lanes, giving the 8-slot quarters in the order 0, 2, 1,
     * 3; the permute (qwords 0, 2, 1, 3 = 0xD8) puts them back in slot order. */
    __m256i p = _mm256_permute4x64_epi64(_mm256_packs_epi16(lo, hi), 0xD8);
    return (uint32_t)_mm256_movemask_epi8(p);
}

/* Bit s for each slot of the group at fp whose fingerprint equals that of a class in fpc.
 * The walk's `mask` compare (walk.h) of a kernel whose context starts with its vm_fp_avx2_t,
 * ctx. */
VM_AVX2 static inline uint64_t vm_fp_mask_avx2(const void *ctx, const uint16_t *fp,
                                               unsigned fpc)
{
    const vm_fp_avx2_t *c = ctx;
    const __m256i *v = (const __m256i *)fp;
    uint64_t m = 0;
    for (unsigned k = 0; k < VM_LLV_CLASSES; k++)
        if (fpc >> k & 1)
            m |= vm_fp_mask32_avx2(v, c->f[k]) | (uint64_t)vm_fp_mask32_avx2(v + 2, c->f[k])
                                                     << 32;
    return m;
}

#endif
