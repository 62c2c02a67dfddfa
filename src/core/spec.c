/* spec.c -- the spec string: "key=value" words separated by blanks (README.md lists keys). */
#include "engine.h"
#include "pnp.h"
#include "simd.h"

#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* lla: entries per block.  Measured with bench/ (README, "Choosing lla.block"): reverse
 * search at 4096 and 32768 entries runs 1.5-1.6x faster than ll with 8-entry blocks and
 * 1.8-2x with 32 to 128, level within noise; short queues do not depend on the size.  64
 * wins on memory: a block of 64 entries of 32 bytes plus its header is 2112 bytes, and 31
 * of them fill a 64 KiB pool slab to within 64 bytes (34 bytes per entry against 36 for 32
 * and 128, and 50 for ll). */
#define VM_LLA_BLOCK_DEFAULT 64

/* llv: slots per large block (a queue of fewer than 64 entries uses 64-slot blocks, see
 * src/llv/llv.c).  Measured with bench/ (README, "How llv is tuned"): reverse search at 32768
 * and 65536 entries runs 1.3-1.8x slower with 256-slot blocks and ~15% slower with 512 than
 * with 1024, 2048 or 4096, which are level within noise; at 4096 entries all are level.  The
 * per-block work of a search (a pointer hop, the jump to another fingerprint lane, ~40
 * instructions) is what large blocks amortize.  1024 is the smallest of the level ones and
 * holds the least memory of them (a PRQ block is 35 KiB, 14 to a 512 KiB slab: 50 bytes per
 * entry at 32768 entries against 66 for 2048). */
#define VM_LLV_BLOCK_DEFAULT 1024
/* llv blocks are whole 64-slot groups (one bitmap word each); the largest keeps a block of
 * the PRQ side (34 bytes a slot) under 160 KiB. */
#define VM_LLV_GROUP     64
#define VM_LLV_BLOCK_MAX 4096

/* pnp (thesis §4.4): t = 100 was the threshold that paid off on every application measured
 * there, without taxing short queues; c = 1 keeps the partner table at sqrt(N) slots.  The
 * largest cap, 1024, lets every rank of a million-process job be a partner. */
#define VM_PNP_THRESHOLD_DEFAULT 100
#define VM_PNP_CAP_MAX           1024

enum kind { K_UINT, K_BOOL, K_POLICY, K_STORAGE, K_NUMA, K_PATH, K_SIMD, K_METRIC, K_ALPHA };

typedef struct vm_key {
    const char *name;
    enum kind kind;
    uint32_t min, max; /* K_UINT bounds */
    size_t off;        /* K_UINT / K_BOOL: the uint32_t field of vm_config_t */
} vm_key_t;

#define U(field) offsetof(vm_config_t, field)

static const vm_key_t keys[] = {
    {"policy", K_POLICY, 0, 0, 0},
    {"storage", K_STORAGE, 0, 0, 0},
    {"layout.ctx", K_UINT, 0, 62, U(ctx_bits)},
    {"layout.src", K_UINT, 1, 63, U(src_bits)},
    {"layout.tag", K_UINT, 1, 63, U(tag_bits)},
    {"nprocs", K_UINT, 1, 1u << 30, U(nprocs)},
    {"numa", K_NUMA, 0, 0, 0},
    {"lla.block", K_UINT, 4, 1024, U(lla_block)},
    {"llv.block", K_UINT, VM_LLV_GROUP, VM_LLV_BLOCK_MAX, U(llv_block)},
    {"simd", K_SIMD, 0, 0, 0},
    {"profile", K_PATH, 0, 0, 0},
    {"profile.record", K_BOOL, 0, 1, U(profile_record)},
    {"pnp.threshold", K_UINT, 1, 1u << 30, U(pnp_threshold)},
    {"pnp.cap", K_UINT, 1, VM_PNP_CAP_MAX, U(pnp_cap)},
    {"pnp.metric", K_METRIC, 0, 0, 0},
    {"pnp.alpha", K_ALPHA, 0, 0, 0},
    {"pnp.move", K_BOOL, 0, 1, U(pnp_move)},
};

static void set_defaults(vm_config_t *cfg)
{
    *cfg = (vm_config_t){
        .policy = vm_policy_find("single"),
        .storage = vm_storage_find("llv"), /* passes test_diff with every kernel */
        .ctx_bits = 16,
        .src_bits = 24,
        .tag_bits = 24,
        .numa = VM_NUMA_LOCAL,
        .lla_block = VM_LLA_BLOCK_DEFAULT,
        .llv_block = VM_LLV_BLOCK_DEFAULT,
        .simd = VM_SIMD_AUTO,
        .pnp_threshold = VM_PNP_THRESHOLD_DEFAULT,
        .pnp_cap = 1,
        .pnp_metric = VM_PNP_AVERAGE,
        .pnp_alpha = 1.5,
        .pnp_move = 1,
    };
}

/* Parse a decimal number of at most 10 digits into *out. */
static int parse_uint(const char *v, size_t n, uint64_t *out)
{
    if (n == 0 || n > 10)
        return 0;
    uint64_t x = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isdigit((unsigned char)v[i]))
            return 0;
        x = x * 10 + (uint64_t)(v[i] - '0');
    }
    *out = x;
    return 1;
}

static int is(const char *v, size_t n, const char *word)
{
    return strlen(word) == n && memcmp(v, word, n) == 0;
}

/* Apply one key=value to cfg. */
static int apply(vm_config_t *cfg, const vm_key_t *k, const char *v, size_t n)
{
    char name[64];
    uint64_t x;
    snprintf(name, sizeof name, "%.*s", (int)(n < 63 ? n : 63), v);
    switch (k->kind) {
    case K_UINT:
        if (!parse_uint(v, n, &x) || x < k->min || x > k->max)
            return vm_fail(VMATCH_EINVAL, "spec: %s=%s: expected a number from %u to %u",
                           k->name, name, k->min, k->max);
        *(uint32_t *)((char *)cfg + k->off) = (uint32_t)x;
        return VMATCH_OK;
    case K_BOOL:
        if (!is(v, n, "on") && !is(v, n, "off"))
            return vm_fail(VMATCH_EINVAL, "spec: %s=%s: expected on or off", k->name, name);
        *(uint32_t *)((char *)cfg + k->off) = is(v, n, "on");
        return VMATCH_OK;
    case K_POLICY:
        cfg->policy = vm_policy_find(name);
        if (!cfg->policy || n > 63)
            return vm_fail(VMATCH_EINVAL, "spec: unknown policy '%s'", name);
        return VMATCH_OK;
    case K_STORAGE:
        cfg->storage = vm_storage_find(name);
        if (!cfg->storage || n > 63)
            return vm_fail(VMATCH_EINVAL, "spec: unknown storage '%s'", name);
        return VMATCH_OK;
    case K_NUMA:
        if (is(v, n, "off")) {
            cfg->numa = VM_NUMA_OFF;
        } else if (is(v, n, "local")) {
            cfg->numa = VM_NUMA_LOCAL;
        } else if (parse_uint(v, n, &x) && x < 1024) {
            cfg->numa = (int)x;
        } else {
            return vm_fail(VMATCH_EINVAL, "spec: numa=%s: expected off, local or a node number",
                           name);
        }
        return VMATCH_OK;
    case K_SIMD: {
        int simd = vm_simd_parse(v, n);
        if (simd < 0)
            return vm_fail(VMATCH_EINVAL,
                           "spec: simd=%s: expected auto, avx512, avx2 or scalar", name);
        cfg->simd = (uint32_t)simd;
        return VMATCH_OK;
    }
    case K_METRIC: {
        int metric = vm_pnp_metric_parse(v, n);
        if (metric < 0)
            return vm_fail(VMATCH_EINVAL,
                           "spec: pnp.metric=%s: expected average, median or fence", name);
        cfg->pnp_metric = (uint32_t)metric;
        return VMATCH_OK;
    }
    case K_ALPHA: {
        char *end;
        double a = n < 32 ? strtod(name, &end) : -1;
        if (n >= 32 || end != name + n || !(a >= 0 && a <= 100) || !isdigit((unsigned char)*v))
            return vm_fail(VMATCH_EINVAL, "spec: pnp.alpha=%s: expected a number from 0 to 100",
                           name);
        cfg->pnp_alpha = a;
        return VMATCH_OK;
    }
    case K_PATH:
        if (n >= sizeof cfg->profile)
            return vm_fail(VMATCH_EINVAL, "spec: profile path longer than %zu bytes",
                           sizeof cfg->profile - 1);
        memcpy(cfg->profile, v, n);
        cfg->profile[n] = '\0';
        return VMATCH_OK;
    }
    return VMATCH_EINVAL;
}

/* Checks that involve several keys or the machine. */
static int validate(const vm_config_t *cfg)
{
    unsigned width = cfg->ctx_bits + cfg->src_bits + cfg->tag_bits;
    if (width > 64)
        return vm_fail(VMATCH_EINVAL, "spec: layout.ctx + layout.src + layout.tag = %u > 64",
                       width);
    if (cfg->src_bits < 31 && cfg->nprocs > (1u << cfg->src_bits))
        return vm_fail(VMATCH_EINVAL, "spec: nprocs=%u does not fit layout.src=%u bits",
                       cfg->nprocs, cfg->src_bits);
    if (cfg->llv_block % VM_LLV_GROUP)
        return vm_fail(VMATCH_EINVAL, "spec: llv.block=%u: expected a multiple of %u",
                       cfg->llv_block, VM_LLV_GROUP);
    if (!vm_simd_available((int)cfg->simd))
        return vm_fail(VMATCH_EUNSUPPORTED, "spec: simd=%s: %s", vm_simd_name((int)cfg->simd),
                       vm_simd_why_not((int)cfg->simd));
    if (cfg->numa >= 0) {
        if (!vm_numa_available())
            return vm_fail(VMATCH_EUNSUPPORTED,
                           "spec: numa=%d but this build or machine has no libnuma support",
                           cfg->numa);
        if (cfg->numa >= vm_numa_nodes())
            return vm_fail(VMATCH_EINVAL, "spec: numa=%d but the machine has %d node(s)",
                           cfg->numa, vm_numa_nodes());
    }
    return VMATCH_OK;
}

int vm_spec_parse(const char *spec, vm_config_t *cfg)
{
    set_defaults(cfg);
    const char *p = spec ? spec : "";
    for (;;) {
        while (isspace((unsigned char)*p))
            p++;
        if (!*p)
            break;
        const char *word = p;
        while (*p && !isspace((unsigned char)*p))
            p++;
        size_t len = (size_t)(p - word);
        const char *eq = memchr(word, '=', len);
        if (!eq || eq == word || eq == word + len - 1)
            return vm_fail(VMATCH_EINVAL, "spec: '%.*s' is not key=value", (int)len, word);
        size_t klen = (size_t)(eq - word);
        const vm_key_t *k = NULL;
        for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
            if (is(word, klen, keys[i].name))
                k = &keys[i];
        if (!k)
            return vm_fail(VMATCH_EINVAL, "spec: unknown key '%.*s'", (int)klen, word);
        int rc = apply(cfg, k, eq + 1, len - klen - 1);
        if (rc < 0)
            return rc;
    }
    int rc = validate(cfg);
    /* Resolved here, once: vmatch_describe then names the kernel that runs, and the
     * storages never ask the CPU. */
    if (rc == VMATCH_OK && cfg->simd == VM_SIMD_AUTO)
        cfg->simd = (uint32_t)vm_simd_best();
    return rc;
}

void vm_spec_describe(const vm_config_t *cfg, char *buf, size_t len)
{
    char numa[16], nprocs[24] = "", profile[sizeof cfg->profile + 16] = "", pnp[128] = "";
    if (cfg->numa == VM_NUMA_OFF)
        snprintf(numa, sizeof numa, "off");
    else if (cfg->numa == VM_NUMA_LOCAL)
        snprintf(numa, sizeof numa, "local");
    else
        snprintf(numa, sizeof numa, "%d", cfg->numa);
    if (cfg->nprocs) /* unset keys are left out, so the text is a valid spec again */
        snprintf(nprocs, sizeof nprocs, " nprocs=%u", cfg->nprocs);
    if (cfg->profile[0])
        snprintf(profile, sizeof profile, " profile=%s", cfg->profile);
    if (strncmp(cfg->policy->name, "pnp", 3) == 0) /* the keys of the pnp policies */
        snprintf(pnp, sizeof pnp,
                 " pnp.threshold=%u pnp.cap=%u pnp.metric=%s pnp.alpha=%g pnp.move=%s",
                 cfg->pnp_threshold, cfg->pnp_cap, vm_pnp_metric_name((int)cfg->pnp_metric),
                 cfg->pnp_alpha, cfg->pnp_move ? "on" : "off");
    snprintf(buf, len,
             "policy=%s storage=%s simd=%s lla.block=%u llv.block=%u layout.ctx=%u "
             "layout.src=%u layout.tag=%u%s numa=%s profile.record=%s%s%s",
             cfg->policy->name, cfg->storage->name, vm_simd_name((int)cfg->simd),
             cfg->lla_block, cfg->llv_block, cfg->ctx_bits, cfg->src_bits, cfg->tag_bits,
             nprocs, numa, cfg->profile_record ? "on" : "off", pnp, profile);
}
