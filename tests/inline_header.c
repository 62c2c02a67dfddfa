/* inline_header.c -- vmatch_inline.h compiled as the MPI libraries that include it compile
 * their own code: UCX builds with -Werror=declaration-after-statement, MPICH and Open MPI
 * with -Wall -Wextra.  Building this file is the test (tests/CMakeLists.txt). */
#include "vmatch_inline.h"

int vmatch_inline_header_check(vmatch_engine_t *e, vmatch_bits_t bits, void *p);

int vmatch_inline_header_check(vmatch_engine_t *e, vmatch_bits_t bits, void *p)
{
    void *out;
    vmatch_bits_t b, c;
    vmatch_inline_mpi_recv(e, 0, 1, 2, &b, &c);
    return vmatch_inline_post(e, b, c, 0, p, &out) + vmatch_inline_arrive(e, bits, 0, p, &out) +
           vmatch_inline_match_posted(e, bits, 0, &out) +
           vmatch_inline_enqueue_unexpected(e, bits, 0, p) +
           vmatch_inline_probe(e, bits, c, 0, 1, &out) +
           vmatch_inline_enqueue_posted(e, bits, c, 0, p) +
           (int)vmatch_inline_mpi_msg(e, 0, 1, 2);
}
