/* simd.c -- the values of simd=, what the CPU can run, and which values the kernels the
 * modules list (module.h) run here.
 *
 * What the CPU can run: cpuid for the instructions, xgetbv for the operating system's
 * promise to save the registers they use.  An instruction set is usable only when the CPU
 * has it (cpuid) and the kernel saves the register state it needs on a context switch (XCR0,
 * read with xgetbv, which is itself only allowed when cpuid reports OSXSAVE).  A CPU with
 * AVX-512 under an OS that does not enable the opmask and upper ZMM state faults on the
 * first AVX-512 instruction, so both are asked.  The answer is computed once and kept.
 */
#include "simd.h"
#include "error.h"

#include "module.h"
#include "vmatch.h"

#include <stdint.h>
#include <string.h>

#ifdef VM_SIMD_X86
#include <cpuid.h>
#endif

static const char *const names[VM_SIMD_COUNT] = {
    [VM_SIMD_AUTO] = "auto",
    [VM_SIMD_SCALAR] = "scalar",
    [VM_SIMD_AVX2] = "avx2",
    [VM_SIMD_AVX512] = "avx512",
};

const char *vm_simd_name(int simd)
{
    return simd >= 0 && simd < VM_SIMD_COUNT ? names[simd] : "none";
}

int vm_simd_parse(const char *name, size_t n)
{
    for (int i = 0; i < VM_SIMD_COUNT; i++)
        if (strlen(names[i]) == n && memcmp(names[i], name, n) == 0)
            return i;
    return -1;
}

#ifdef VM_SIMD_X86

/* cpuid leaf 1, ECX */
#define CPUID1_OSXSAVE (1u << 27)
#define CPUID1_AVX     (1u << 28)
/* cpuid leaf 7 subleaf 0, EBX */
#define CPUID7_AVX2    (1u << 5)
#define CPUID7_AVX512F (1u << 16)
/* XCR0 state components: SSE (XMM) and AVX (upper YMM) for AVX2; AVX-512 adds the opmask
 * registers, the upper halves of ZMM0-15 and ZMM16-31. */
#define XCR0_SSE          (1u << 1)
#define XCR0_AVX          (1u << 2)
#define XCR0_OPMASK       (1u << 5)
#define XCR0_ZMM_HI       (1u << 6)
#define XCR0_HI16_ZMM     (1u << 7)
#define XCR0_AVX2_STATE   (XCR0_SSE | XCR0_AVX)
#define XCR0_AVX512_STATE (XCR0_AVX2_STATE | XCR0_OPMASK | XCR0_ZMM_HI | XCR0_HI16_ZMM)

/* XCR0, the state components the OS saves (only call when cpuid reports OSXSAVE). */
static uint64_t xcr0(void)
{
    uint32_t lo, hi;
    /* xgetbv with ECX = 0 reads XCR0; the mnemonic needs no -mxsave, unlike _xgetbv. */
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((uint64_t)hi << 32) | lo;
}

/* The VM_CPU_* features this CPU and OS give. */
static unsigned detect(void)
{
    unsigned eax, ebx, ecx, edx, ok = 0;
    if (__get_cpuid_max(0, NULL) < 7 || !__get_cpuid(1, &eax, &ebx, &ecx, &edx))
        return ok;
    if (!(ecx & CPUID1_OSXSAVE) || !(ecx & CPUID1_AVX))
        return ok;
    uint64_t state = xcr0();
    __cpuid_count(7, 0, eax, ebx, ecx, edx);
    if ((ebx & CPUID7_AVX2) && (state & XCR0_AVX2_STATE) == XCR0_AVX2_STATE)
        ok |= VM_CPU_AVX2;
    if ((ebx & CPUID7_AVX512F) && (state & XCR0_AVX512_STATE) == XCR0_AVX512_STATE)
        ok |= VM_CPU_AVX512F;
    return ok;
}

/* The detect() result with VM_CPU_KNOWN set, 0 until first computed.  Racing threads compute
 * the same value. */
#define VM_CPU_KNOWN (1u << 31)
static _Atomic unsigned have;

unsigned vm_cpu_features(void)
{
    unsigned f = have;
    if (!f)
        have = f = detect() | VM_CPU_KNOWN;
    return f & ~VM_CPU_KNOWN;
}

#else

unsigned vm_cpu_features(void)
{
    return 0;
}

#endif

/* Why each feature may be missing, highest first (the first one a kernel lacks is named). */
static const struct {
    unsigned cpu;
    const char *why;
} lacks[] = {
    {VM_CPU_AVX512F, "this CPU lacks AVX-512F, or the OS does not save the ZMM and opmask "
                     "registers"},
    {VM_CPU_AVX2, "this CPU lacks AVX2, or the OS does not save the YMM registers"},
};

/* The first kernel for value simd the modules list, and how many of them run here (in
 * *runs).  NULL when no module of this build has one. */
static const vm_kernel_t *kernels_for(int simd, unsigned *runs)
{
    const vm_kernel_t *first = NULL;
    const vm_module_t *m;
    unsigned have_cpu = vm_cpu_features();
    *runs = 0;
    for (unsigned i = 0; (m = vm_module_at(i)) != NULL; i++) {
        for (const vm_kernel_t *const *k = m->kernels; k && *k; k++) {
            if ((*k)->simd != simd)
                continue;
            first = first ? first : *k;
            *runs += ((*k)->cpu & ~have_cpu) == 0;
        }
    }
    return first;
}

int vm_simd_available(int simd)
{
    unsigned runs;
    if (simd == VM_SIMD_AUTO)
        return 1;
    kernels_for(simd, &runs);
    return runs > 0;
}

int vm_simd_best(void)
{
    for (int s = VM_SIMD_COUNT - 1; s > VM_SIMD_SCALAR; s--)
        if (vm_simd_available(s))
            return s;
    return VM_SIMD_SCALAR;
}

const char *vm_simd_why_not(int simd)
{
    unsigned runs;
    const vm_kernel_t *k = kernels_for(simd, &runs);
    if (!k)
        return "no storage of this build has that kernel (built with VMATCH_SIMD=OFF, or not "
               "for x86-64)";
    for (size_t i = 0; i < sizeof lacks / sizeof lacks[0]; i++)
        if (k->cpu & lacks[i].cpu & ~vm_cpu_features())
            return lacks[i].why;
    return "it runs here";
}

int vmatch_simd_available(const char *kernel)
{
    if (!kernel)
        return vm_fail(VMATCH_EINVAL, "simd_available: NULL name");
    int s = vm_simd_parse(kernel, strlen(kernel));
    if (s < 0)
        return vm_fail(VMATCH_EINVAL,
                       "simd_available: no kernel '%.63s' (auto, avx512, avx2 or scalar)",
                       kernel);
    return vm_simd_available(s);
}
