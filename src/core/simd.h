/* simd.h -- the spec key simd=: its values, the CPU features this machine has, and which
 * values a kernel of this build can run here.
 *
 * The engine owns the values of the key and the CPU feature test; the kernels belong to the
 * storage that runs them (src/llv), which lists each one in its module (module.h) with the
 * value that picks it and the features it needs.  The engine answers from those lists, and
 * resolves simd=auto once, when the spec is parsed, so the rest of the library never asks
 * the CPU again.
 */
#ifndef VM_SIMD_H
#define VM_SIMD_H

#include <stddef.h>

/* The x86 kernels are built when the compiler has GCC's target attribute and the build did
 * not turn dispatch off (cmake -DVMATCH_SIMD=OFF defines VMATCH_NO_SIMD: scalar only). */
#if !defined(VMATCH_NO_SIMD) && defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define VM_SIMD_X86 1
#endif

/* The values of simd=, weakest kernel first, so that "best available" is the highest one
 * that runs here. */
enum vm_simd { VM_SIMD_AUTO = 0, VM_SIMD_SCALAR, VM_SIMD_AVX2, VM_SIMD_AVX512, VM_SIMD_COUNT };

/* Instruction sets a kernel may need, each usable only when the CPU has it and the operating
 * system saves the registers it uses (vm_cpu_features). */
enum vm_cpu_feature {
    VM_CPU_AVX2 = 1u << 0,   /* AVX2, with the YMM registers saved */
    VM_CPU_AVX512F = 1u << 1 /* AVX-512F, with the ZMM and opmask registers saved */
};

/* A kernel as the engine sees it: a module's kernel struct starts with this (module.h lists
 * them). */
typedef struct vm_kernel {
    int simd;     /* the simd= value that picks it (enum vm_simd, not VM_SIMD_AUTO) */
    unsigned cpu; /* the VM_CPU_* features it needs; 0 for plain C */
} vm_kernel_t;

/* The VM_CPU_* features of this CPU and operating system: computed once, then kept. */
unsigned vm_cpu_features(void);

/* The spec name of value simd ("auto", "scalar", "avx2", "avx512"), or "none". */
const char *vm_simd_name(int simd);

/* The value named by the n bytes at name, or -1 when there is no such value. */
int vm_simd_parse(const char *name, size_t n);

/* 1 when a kernel of this build for value simd runs here (auto always does), else 0. */
int vm_simd_available(int simd);

/* The highest value a kernel runs for here: what simd=auto resolves to. */
int vm_simd_best(void);

/* Why no kernel for value simd runs here, for error messages. */
const char *vm_simd_why_not(int simd);

#endif
