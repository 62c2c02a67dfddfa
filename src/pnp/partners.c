/* partners.c -- the partner metrics (thesis §4.2.1, Algorithm 4.1) and the perfect hash of
 * the static design (§4.2.2). */
#include "pnp.h"

#include "vmatch.h"

#include <stdlib.h>
#include <string.h>

const char *const vm_pnp_metric_words[] = {"average", "median", "fence", NULL};

const char *vm_pnp_metric_name(int metric)
{
    return metric >= 0 && metric <= VM_PNP_FENCE ? vm_pnp_metric_words[metric] : NULL;
}

int vm_pnp_metric_parse(const char *s, size_t n)
{
    for (int i = 0; i <= VM_PNP_FENCE; i++)
        if (strlen(vm_pnp_metric_words[i]) == n && memcmp(s, vm_pnp_metric_words[i], n) == 0)
            return i;
    return -1;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static int cmp_u64_desc(const void *a, const void *b)
{
    return cmp_u64(b, a);
}

/* The value at rank r of the population: pop - n zeros, then sorted[]. */
static double at_rank(const uint64_t *sorted, size_t n, uint64_t pop, uint64_t r)
{
    uint64_t zeros = pop - n;
    return r < zeros ? 0.0 : (double)sorted[r - zeros];
}

static double quantile(const uint64_t *sorted, size_t n, uint64_t pop, double q)
{
    double h = q * (double)(pop - 1);
    uint64_t lo = (uint64_t)h;
    double v = at_rank(sorted, n, pop, lo);
    if (lo + 1 < pop)
        v += (h - (double)lo) * (at_rank(sorted, n, pop, lo + 1) - v);
    return v;
}

double vm_pnp_edge(const uint64_t *sorted, size_t n, uint64_t pop, int metric, double alpha)
{
    if (pop < n)
        pop = n;
    if (pop == 0)
        return 0.0;
    switch (metric) {
    case VM_PNP_MEDIAN:
        return quantile(sorted, n, pop, 0.5);
    case VM_PNP_FENCE: {
        double q1 = quantile(sorted, n, pop, 0.25), q3 = quantile(sorted, n, pop, 0.75);
        return q3 + alpha * (q3 - q1);
    }
    default: {
        double sum = 0;
        for (size_t i = 0; i < n; i++)
            sum += (double)sorted[i];
        return sum / (double)pop;
    }
    }
}

size_t vm_pnp_choose(const uint64_t *counts, size_t n, uint64_t pop, int metric, double alpha,
                     size_t max, uint64_t *scratch, size_t *out, double *edge)
{
    if (n == 0) {
        if (edge)
            *edge = 0;
        return 0;
    }
    memcpy(scratch, counts, n * sizeof *scratch);
    qsort(scratch, n, sizeof *scratch, cmp_u64);
    double e = vm_pnp_edge(scratch, n, pop, metric, alpha);
    if (edge)
        *edge = e;
    /* Candidates as (count, inverted index) words: sorting them down puts the highest count
     * first and, among equal counts, the lower index first. */
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if ((double)counts[i] > e) {
            uint64_t c = counts[i] > UINT32_MAX ? UINT32_MAX : counts[i];
            scratch[m++] = c << 32 | (UINT32_MAX - (uint32_t)i);
        }
    qsort(scratch, m, sizeof *scratch, cmp_u64_desc);
    if (m > max)
        m = max;
    for (size_t j = 0; j < m; j++)
        out[j] = UINT32_MAX - (uint32_t)(scratch[j] & UINT32_MAX);
    return m;
}

/* ---- perfect hash by row displacement ---- */

/* Make room for slot index `need` in the occupancy map *occ of *cap bytes. */
static int grow(vm_mem_t *mem, uint8_t **occ, size_t *cap, size_t need)
{
    if (need < *cap)
        return VMATCH_OK;
    size_t ncap = *cap;
    while (ncap <= need)
        ncap *= 2;
    uint8_t *n = vm_mem_calloc(mem, ncap);
    if (!n)
        return VMATCH_ENOMEM;
    memcpy(n, *occ, *cap);
    vm_mem_free(mem, *occ, *cap);
    *occ = n;
    *cap = ncap;
    return VMATCH_OK;
}

int vm_phash_build(vm_phash_t *h, vm_mem_t *mem, const uint64_t *keys, const uint32_t *vals,
                   size_t n)
{
    *h = (vm_phash_t){0};
    if (n == 0)
        return VMATCH_OK;
    uint64_t max = 0;
    for (size_t i = 0; i < n; i++)
        max = keys[i] > max ? keys[i] : max;
    unsigned shift = 0;
    while (shift < 31 && (1ull << (2 * shift)) <= max)
        shift++;
    uint64_t m = 1ull << shift, rows = (max >> shift) + 1;
    /* Keys sorted by (row, column): each row's keys are then a run of sorted[]. */
    size_t tmp_bytes = n * 2 * sizeof(uint64_t) + rows * sizeof(uint32_t);
    uint64_t *sorted = vm_mem_alloc(mem, tmp_bytes);
    size_t cap = 2 * m + n;
    uint8_t *occ = sorted ? vm_mem_calloc(mem, cap) : NULL;
    h->bytes = rows * sizeof(uint32_t);
    h->disp = occ ? vm_mem_calloc(mem, h->bytes) : NULL;
    int rc = h->disp ? VMATCH_OK : VMATCH_ENOMEM;
    uint64_t *runs = sorted + n; /* (keys in the row << 32 | row), fullest row first */
    size_t nruns = 0, used = 0;
    if (rc == VMATCH_OK) {
        memcpy(sorted, keys, n * sizeof *sorted);
        qsort(sorted, n, sizeof *sorted, cmp_u64);
        for (size_t i = 0; i < n;) {
            size_t j = i;
            while (j < n && sorted[j] >> shift == sorted[i] >> shift)
                j++;
            runs[nruns++] = (uint64_t)(j - i) << 32 | (sorted[i] >> shift);
            i = j;
        }
        qsort(runs, nruns, sizeof *runs, cmp_u64_desc);
    }
    /* First fit, fullest row first: the smallest shift at which the row's columns are all
     * free.  start[] finds a row's run in sorted[] again. */
    uint32_t *start = (uint32_t *)(runs + n);
    for (size_t i = 0; rc == VMATCH_OK && i < n; i++)
        if (i == 0 || sorted[i] >> shift != sorted[i - 1] >> shift)
            start[sorted[i] >> shift] = (uint32_t)i;
    for (size_t r = 0; rc == VMATCH_OK && r < nruns; r++) {
        uint64_t row = runs[r] & UINT32_MAX, cnt = runs[r] >> 32;
        const uint64_t *ks = sorted + start[row];
        uint64_t d = 0;
        for (;; d++) {
            rc = grow(mem, &occ, &cap, d + m);
            uint64_t k = 0;
            while (rc == VMATCH_OK && k < cnt && !occ[d + (ks[k] & (m - 1))])
                k++;
            if (rc < 0 || k == cnt)
                break;
        }
        for (uint64_t k = 0; rc == VMATCH_OK && k < cnt; k++) {
            uint64_t slot = d + (ks[k] & (m - 1));
            occ[slot] = 1;
            used = slot + 1 > used ? slot + 1 : used;
        }
        h->disp[row] = (uint32_t)d;
    }
    /* The slots, now that their number is known. */
    size_t slot_bytes = used * (sizeof *h->key + sizeof *h->val);
    h->key = rc == VMATCH_OK ? vm_mem_calloc(mem, slot_bytes) : NULL;
    if (h->key) {
        h->val = (uint32_t *)(h->key + used);
        h->shift = shift;
        h->rows = (uint32_t)rows;
        h->nslots = (uint32_t)used;
        for (size_t i = 0; i < n; i++) {
            uint64_t slot = h->disp[keys[i] >> shift] + (keys[i] & (m - 1));
            h->key[slot] = keys[i] + 1;
            h->val[slot] = vals[i];
        }
    } else {
        rc = VMATCH_ENOMEM;
    }
    if (occ)
        vm_mem_free(mem, occ, cap);
    if (sorted)
        vm_mem_free(mem, sorted, tmp_bytes);
    if (rc < 0)
        vm_phash_free(h, mem);
    return rc;
}

void vm_phash_free(vm_phash_t *h, vm_mem_t *mem)
{
    if (h->disp)
        vm_mem_free(mem, h->disp, h->bytes);
    if (h->key)
        vm_mem_free(mem, h->key, h->nslots * (sizeof *h->key + sizeof *h->val));
    *h = (vm_phash_t){0};
}
