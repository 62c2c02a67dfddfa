/* static.c -- policy=pnp-static: the partners of each side from a profile (thesis §4.2.2),
 * chosen with the metric and kept in the perfect hash of partners.c. */
#include "pnp_impl.h"

#include "error.h"
#include "profile.h"

#include <stdlib.h>

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Choose this side's partners from the profile and build the perfect hash. */
static int load_partners(vm_pnp_t *s, const vm_profile_t *prof)
{
    vm_mem_t *mem = &s->base.env->mem;
    size_t n = prof->n, bytes = n * (3 * sizeof(uint64_t) + sizeof(size_t) + sizeof(uint32_t));
    uint64_t *counts = vm_mem_alloc(mem, bytes ? bytes : 1);
    if (!counts)
        return VMATCH_ENOMEM;
    uint64_t *scratch = counts + n, *keys = scratch + n;
    size_t *chosen = (size_t *)(keys + n);
    uint32_t *idx = (uint32_t *)(chosen + n), nctx;
    size_t u = vm_profile_side(prof, s->base.side, idx, counts, &nctx);
    size_t m = vm_pnp_choose(counts, u, (uint64_t)s->nprocs * nctx, (int)s->pc->metric,
                             s->pc->alpha, s->limit, scratch, chosen, NULL);
    /* Contexts of the partners, sorted: a context's index maps it. */
    int rc = VMATCH_ENOMEM;
    s->ctxs_bytes = (m ? m : 1) * sizeof *s->ctxs;
    s->ctxs = vm_mem_alloc(mem, s->ctxs_bytes);
    if (s->ctxs) {
        for (size_t j = 0; j < m; j++)
            s->ctxs[j] = prof->entries[idx[chosen[j]]].ctx;
        qsort(s->ctxs, m, sizeof *s->ctxs, cmp_u32);
        for (size_t j = 0; j < m; j++)
            if (!s->nctx || s->ctxs[s->nctx - 1] != s->ctxs[j])
                s->ctxs[s->nctx++] = s->ctxs[j];
        uint32_t *vals = (uint32_t *)scratch; /* free again: n words */
        for (size_t j = 0; j < m; j++) {
            const vm_profile_entry_t *e = &prof->entries[idx[chosen[j]]];
            uint32_t ci = 0;
            while (s->ctxs[ci] != e->ctx)
                ci++;
            keys[j] = e->src + (uint64_t)s->nprocs * ci;
            vals[j] = (uint32_t)j;
        }
        rc = vm_phash_build(&s->ph, mem, keys, vals, m);
    }
    if (rc == VMATCH_OK)
        rc = vm_pnp_grow(mem, &s->partner, &s->partner_cap, (uint32_t)m);
    for (; rc == VMATCH_OK && s->npartners < m; s->npartners++)
        rc = vm_pnp_add_queue(s, s->partner, s->npartners);
    vm_mem_free(mem, counts, bytes ? bytes : 1);
    return rc;
}

/* Read the profile and check it against the spec. */
int vm_pnp_load_profile(vm_pnp_t *s)
{
    vm_profile_t prof;
    int rc = vm_profile_load_for(s->base.env->cfg, "pnp-static", &prof, &s->nprocs);
    if (rc < 0)
        return rc;
    s->limit = (uint32_t)vm_isqrt((uint64_t)s->pc->cap * s->pc->cap * s->nprocs);
    rc = load_partners(s, &prof);
    vm_profile_free(&prof);
    return rc;
}
