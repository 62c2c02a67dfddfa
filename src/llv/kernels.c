/* kernels.c -- the search kernels llv has, and which one a queue runs.
 *
 * Each kernel file (kernel_*.c) defines a vm_llv_kernel_t that starts with the engine's view
 * of it: the simd= value that picks it and the CPU features it needs.  This list is what the
 * llv module gives the engine (llv.c), which checks simd= and resolves simd=auto from it when
 * the spec is parsed (src/core/simd.c); a queue then only looks its kernel up here.  Adding a
 * kernel is its file and a line here (docs/layout.md, "Adding a kernel").
 */
#include "llv.h"

#include <stddef.h>

/* Weakest first, as the simd= values are; the x86 kernels only where they are compiled. */
const vm_kernel_t *const vm_llv_kernels[] = {
    &vm_llv_scalar.kernel,
#ifdef VM_SIMD_X86
    &vm_llv_avx2.kernel,
    &vm_llv_avx512.kernel,
#endif
    NULL,
};

const vm_llv_kernel_t *vm_llv_kernel(int simd)
{
    for (const vm_kernel_t *const *k = vm_llv_kernels; *k; k++)
        if ((*k)->simd == simd) /* the kernel struct starts with its vm_kernel_t */
            return (const vm_llv_kernel_t *)(const void *)*k;
    return NULL;
}
