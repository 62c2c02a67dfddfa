/* simd.h -- which vector kernels this build and this CPU can run (spec key simd=).
 *
 * The kernels themselves live with the storage that uses them (src/llv); the engine only
 * names them, checks what the machine has and resolves simd=auto once, when the spec is
 * parsed, so the rest of the library never asks the CPU again.
 */
#ifndef VM_SIMD_H
#define VM_SIMD_H

#include <stddef.h>

/* The x86 kernels are built when the compiler has GCC's target attribute and the build did
 * not turn dispatch off (cmake -DVMATCH_SIMD=OFF defines VMATCH_NO_SIMD: scalar only). */
#if !defined(VMATCH_NO_SIMD) && defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define VM_SIMD_X86 1
#endif

/* Kernels, weakest first, so that "best available" is the highest one the CPU runs. */
enum vm_simd { VM_SIMD_AUTO = 0, VM_SIMD_SCALAR, VM_SIMD_AVX2, VM_SIMD_AVX512, VM_SIMD_COUNT };

/* The spec name of a kernel ("auto", "scalar", "avx2", "avx512"). */
const char *vm_simd_name(int simd);

/* The kernel named by the n bytes at name, or -1 when there is no such kernel. */
int vm_simd_parse(const char *name, size_t n);

/* 1 when this build and CPU (and the operating system, which must save the vector
 * registers) can run kernel simd; auto and scalar always can. */
int vm_simd_available(int simd);

/* The fastest kernel available here. */
int vm_simd_best(void);

/* Why kernel simd is not available here, for error messages. */
const char *vm_simd_why_not(int simd);

#endif
