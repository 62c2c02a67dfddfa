/* keys.c -- the pnp.* spec keys of policy=pnp and policy=pnp-static, and the module that
 * registers both policies (module.h). */
#include "module.h"
#include "pnp.h"

/* t = 100 was the threshold that paid off on every application the thesis measured (§4.4)
 * without taxing short queues; c = 1 keeps the partner table at sqrt(N) slots.  The largest
 * cap, 1024, lets every rank of a million-process job be a partner. */
static const vm_pnp_config_t pnp_default = {
    .threshold = 100,
    .cap = 1,
    .metric = VM_PNP_AVERAGE,
    .move = 1,
    .alpha = 1.5,
};

#define FIELD(f) offsetof(vm_pnp_config_t, f)

static const vm_key_t pnp_keys[] = {
    {"pnp.threshold", VM_KEY_UINT, FIELD(threshold), 1, 1u << 30,
     .help = "`pnp`: entries in the newest non-partner queue that make it split"},
    {"pnp.cap", VM_KEY_UINT, FIELD(cap), 1, 1024,
     .help = "c: at most ⌊c·√nprocs⌋ partners per side (`pnp` and `pnp-static`)"},
    {"pnp.metric", VM_KEY_WORD, FIELD(metric), .words = vm_pnp_metric_words,
     .help = "the edge point a source's count must exceed to become a partner"},
    {"pnp.alpha", VM_KEY_REAL, FIELD(alpha), 0, 100,
     .help = "α of the upper fence Q3 + α·(Q3 − Q1)"},
    {"pnp.move", VM_KEY_BOOL, FIELD(move),
     .help = "`pnp`: move a new partner's queued entries to its queue (`off`: the thesis's "
             "levels)"},
};

static const vm_stat_key_t pnp_stat_keys[] = {
    {.name = "pnp.partners",
     .help = "`pnp`, `pnp-static` (and `unified` with `unified.p2p=pnp`): partners with a "
             "queue of their own, both sides"},
    {.name = "pnp.levels",
     .help = "`pnp`: extraction rounds that took partners, both sides (with `pnp.move=off` "
             "each opened a level)"},
    {.name = "pnp.forgets",
     .help = "`pnp`: times a side forgot its partners after quiet traffic (their queues and "
             "table given back), both sides"},
};

static const vm_policy_t *const pnp_policies[] = {&vm_pnp_policy, &vm_pnp_static_policy, NULL};

const vm_module_t vm_pnp_module = {.prefix = "pnp",
                                   VM_MODULE_KEYS(pnp_keys),
                                   VM_MODULE_STATS(pnp_stat_keys),
                                   VM_MODULE_CFG(pnp_default),
                                   .policies = pnp_policies};
