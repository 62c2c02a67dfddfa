/* partners.h -- partner choice (thesis §4.2.1, Algorithm 4.1; partners.c): the metrics and
 * the choice of a side's partners from counts.  The part of policy=pnp a profile's reader
 * needs (tools/vmatch-profile shows the partners each metric would choose), apart from the
 * policy's own state in pnp.h, which no tool includes.
 *
 * A source key names a rank in one communicator.  The metrics compute an edge point over a
 * population of keys, absent keys counting zero, as Algorithm 4.1 does over all P
 * processes; a key whose count exceeds the edge point is a partner.
 */
#ifndef VM_PNP_PARTNERS_H
#define VM_PNP_PARTNERS_H

#include <stddef.h>
#include <stdint.h>

enum vm_pnp_metric { VM_PNP_AVERAGE, VM_PNP_MEDIAN, VM_PNP_FENCE };

/* The metrics' names by enum vm_pnp_metric, NULL-terminated. */
extern const char *const vm_pnp_metric_words[];

/* "average", "median", "fence"; NULL for an unknown metric. */
const char *vm_pnp_metric_name(int metric);
/* The metric named by the n bytes at s, or -1. */
int vm_pnp_metric_parse(const char *s, size_t n);

/* The edge point of counts[0..n) sorted ascending, in a population of pop >= n keys of which
 * the other pop - n count zero: the average, the median, or the upper fence
 * Q3 + alpha * (Q3 - Q1).  Quartiles and median interpolate linearly between ranks. */
double vm_pnp_edge(const uint64_t *sorted, size_t n, uint64_t pop, int metric, double alpha);

/* Choose partners among n keys with counts[i] > 0 in a population of pop keys: the keys whose
 * count exceeds the edge point, highest count first (ties: the lower index first), at most
 * max of them.  scratch has room for n counts, out for n indices.  Returns how many indices
 * were written to out; *edge (may be NULL) gets the edge point. */
size_t vm_pnp_choose(const uint64_t *counts, size_t n, uint64_t pop, int metric, double alpha,
                     size_t max, uint64_t *scratch, size_t *out, double *edge);

#endif
