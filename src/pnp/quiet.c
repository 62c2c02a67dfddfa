/* quiet.c -- policy=pnp: a side whose traffic has stayed short for a while forgets its
 * partners, giving back their queues and the partner table, and learns them again from the
 * next burst.  pnp-static keeps the partners of its profile.
 *
 * The rule is policy=hash's (src/hash/shrink.c), counted in operations (the engine's
 * sequence numbers): windows of WINDOW operations, or WINDOW_PER_PARTNER per partner when
 * that is more.  A window is busy when the side held its mark, a sixteenth of pnp.threshold
 * (at least 2), at its start or its end, or its shared queue reached pnp.threshold in it
 * (an extraction ran); else it is quiet.  (With pnp.threshold itself as the mark, the
 * report's skewed neighbour row, whose queues stay shorter than that, forgot its partners
 * twice a replay and ran 10% slower over ll; looking at the length on every append instead
 * of at the windows' ends cost 4% there.)  After QUIET quiet windows in a row the side
 * forgets its partners, as soon as a match takes its last entry: an empty side has nothing
 * to move, and forgetting only gives memory back, after a call that succeeded.  Once
 * forgotten the side is one queue again (policy=single until its next extraction).
 * docs/pnp.md has the measurements.
 */
#include "pnp_impl.h"

#define WINDOW             4096u
#define WINDOW_PER_PARTNER 4u
#define QUIET              2u

void vm_pnp_window(vm_pnp_t *s, uint64_t seq)
{
    if (s->end) { /* a window ran (0: the first starts now) */
        s->busy |= s->base.len >= s->mark;
        s->quiet = s->busy ? 0 : s->quiet + 1;
        s->due = s->quiet >= QUIET;
    }
    uint64_t w = (uint64_t)WINDOW_PER_PARTNER * s->npartners;
    s->end = seq + (w > WINDOW ? w : WINDOW);
    s->busy = s->base.len >= s->mark;
}

void vm_pnp_forget(vm_pnp_t *s)
{
    vm_mem_t *mem = &s->base.env->mem;
    for (uint32_t i = 0; i < s->npartners; i++)
        s->partner[i]->ops->destroy(s->partner[i]);
    if (s->partner)
        vm_mem_free(mem, s->partner, s->partner_cap * sizeof *s->partner);
    s->partner = NULL;
    s->partner_cap = s->npartners = 0;
    if (s->table)
        vm_mem_free(mem, s->table, s->nslots * sizeof *s->table);
    s->table = NULL;
    s->nslots = 0;
    if (s->wild)
        s->wild->ops->destroy(s->wild);
    s->wild = NULL;
    /* Levels (pnp.move=off): the closed queues go, the newest stays as the only one. */
    for (uint32_t c = 0; c + 1 < s->nchain; c++)
        s->chain[c]->ops->destroy(s->chain[c]);
    s->chain[0] = s->newest;
    s->nchain = 1;
    for (uint32_t w = 0; w < s->closed_words; w++)
        s->closed[w] = 0;
    s->retry = s->pc->threshold;
    s->end = 0;
    s->busy = s->quiet = s->due = 0;
    s->forgets++;
    vm_env_trim(s->base.env);
}
