/* gen.c -- the generator registry, spec parsing, random numbers and the event scheduler
 * (gen.h, gen_internal.h).  The generators themselves are in gen_p2p.c, gen_coll.c and
 * gen_queue.c. */
#include "gen_internal.h"

#include "vmatch.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PARAMS 16

/* ---- random numbers ---- */

/** splitmix64 step: a good 64-bit mix of a counter. */
static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

uint64_t wl_rand(wl_gen_ctx_t *g)
{
    return mix64(g->rng += 0x9e3779b97f4a7c15u);
}

uint32_t wl_below(wl_gen_ctx_t *g, uint32_t n)
{
    return (uint32_t)(((wl_rand(g) >> 32) * (uint64_t)n) >> 32);
}

int64_t wl_offset(const wl_gen_ctx_t *g, uint64_t call, uint32_t peer, int64_t span)
{
    if (span <= 0)
        return 0;
    uint64_t h = mix64(g->seed ^ mix64(call * 0x9e3779b97f4a7c15u + peer + 1));
    return (int64_t)(h % (uint64_t)(2 * span + 1)) - span;
}

void wl_shuffle(wl_gen_ctx_t *g, uint32_t *v, size_t n)
{
    for (size_t i = n; i > 1; i--) {
        size_t j = wl_below(g, (uint32_t)i);
        uint32_t x = v[i - 1];
        v[i - 1] = v[j];
        v[j] = x;
    }
}

int wl_setup(wl_gen_ctx_t *g, uint64_t seed, uint32_t P)
{
    g->seed = seed;
    g->rng = mix64(seed ^ 0x5eedu);
    g->t->nprocs = P;
    g->nsrc = P;
    g->last_arrival = malloc((size_t)P * sizeof *g->last_arrival);
    if (!g->last_arrival)
        return VMATCH_ENOMEM;
    for (uint32_t i = 0; i < P; i++)
        g->last_arrival[i] = INT64_MIN;
    return 0;
}

int wl_over_budget(wl_gen_ctx_t *g, uint64_t done, uint64_t total)
{
    double so_far = (double)(g->nev + g->t->n);
    if (g->too_big || (done && so_far / (double)done * (double)total > VM_WL_MAX_OPS))
        g->too_big = 1;
    return g->too_big;
}

/* ---- the scheduler ---- */

/** Add an event; sets g->failed or g->too_big instead of failing. */
static void push_ev(wl_gen_ctx_t *g, int64_t time, uint8_t kind, uint32_t ctx, int32_t src,
                    int32_t tag, uint16_t cls)
{
    if (g->failed || g->too_big)
        return;
    if (g->nev + g->t->n >= VM_WL_MAX_OPS) {
        g->too_big = 1;
        return;
    }
    if (g->nev == g->evcap) {
        size_t cap = g->evcap ? g->evcap * 2 : 4096;
        wl_ev_t *v = realloc(g->ev, cap * sizeof *v);
        if (!v) {
            g->failed = 1;
            return;
        }
        g->ev = v;
        g->evcap = cap;
    }
    g->ev[g->nev] = (wl_ev_t){time, (uint32_t)(g->t->n + g->nev), kind, cls, ctx, src, tag};
    g->nev++;
}

void wl_post(wl_gen_ctx_t *g, int64_t time, uint32_t ctx, int32_t src, int32_t tag,
             uint16_t cls)
{
    push_ev(g, time, VM_TRACE_POST, ctx, src, tag, cls);
}

int64_t wl_arrive(wl_gen_ctx_t *g, int64_t time, uint32_t ctx, int32_t src, int32_t tag,
                  uint16_t cls)
{
    if (src >= 0 && (uint32_t)src < g->nsrc && g->last_arrival) {
        if (time <= g->last_arrival[src])
            time = g->last_arrival[src] + 1;
        g->last_arrival[src] = time;
    }
    push_ev(g, time, VM_TRACE_ARRIVE, ctx, src, tag, cls);
    return time;
}

/** Order events by time, then by insertion. */
static int ev_cmp(const void *a, const void *b)
{
    const wl_ev_t *x = a, *y = b;
    if (x->time != y->time)
        return x->time < y->time ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

void wl_emit(wl_gen_ctx_t *g)
{
    qsort(g->ev, g->nev, sizeof *g->ev, ev_cmp);
    for (size_t i = 0; i < g->nev; i++) {
        const wl_ev_t *e = &g->ev[i];
        if (e->kind == VM_TRACE_POST)
            vm_trace_post(g->t, e->ctx, e->src, e->tag, e->cls);
        else
            vm_trace_arrive(g->t, e->ctx, e->src, e->tag, e->cls);
    }
    g->nev = 0;
}

/* ---- the registry and spec parsing ---- */

/** The generator called name, or NULL. */
static const wl_gen_t *find_gen(const char *name, size_t len)
{
    const wl_gen_t *tabs[3] = {wl_p2p_gens, wl_coll_gens, wl_queue_gens};
    size_t ns[3] = {wl_n_p2p_gens, wl_n_coll_gens, wl_n_queue_gens};
    for (int t = 0; t < 3; t++)
        for (size_t i = 0; i < ns[t]; i++)
            if (strlen(tabs[t][i].name) == len && !memcmp(tabs[t][i].name, name, len))
                return &tabs[t][i];
    return NULL;
}

/** Append printf output to buf at *pos, never past len. */
static void cat(char *buf, size_t len, size_t *pos, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void cat(char *buf, size_t len, size_t *pos, const char *fmt, ...)
{
    if (!buf || *pos >= len)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + *pos, len - *pos, fmt, ap);
    va_end(ap);
    if (n > 0)
        *pos += (size_t)n < len - *pos ? (size_t)n : len - *pos - 1;
}

/** "key=value" of parameter p with value v. */
static void cat_param(char *buf, size_t len, size_t *pos, const wl_pdef_t *p, long long v)
{
    if (p->names)
        cat(buf, len, pos, "%s=%s", p->key, p->names[v]);
    else
        cat(buf, len, pos, "%s=%lld", p->key, v);
}

/** "P=64 m=8 order=reverse|random|rr ..." for listings. */
static void param_summary(const wl_gen_t *gen, char *buf, size_t len)
{
    size_t pos = 0;
    buf[0] = 0;
    for (size_t i = 0; i < gen->nparams; i++) {
        const wl_pdef_t *p = &gen->params[i];
        cat(buf, len, &pos, "%s", i ? " " : "");
        cat_param(buf, len, &pos, p, p->def);
        if (p->names) {
            for (size_t j = 0; p->names[j]; j++)
                if ((long long)j != p->def)
                    cat(buf, len, &pos, "|%s", p->names[j]);
        }
    }
}

const vm_wl_gen_info_t *vm_wl_generators(size_t *n)
{
    enum { MAXGENS = 32, PLEN = 256 };
    static vm_wl_gen_info_t info[MAXGENS];
    static char params[MAXGENS][PLEN];
    static size_t count;
    if (!count) {
        const wl_gen_t *tabs[3] = {wl_p2p_gens, wl_coll_gens, wl_queue_gens};
        size_t ns[3] = {wl_n_p2p_gens, wl_n_coll_gens, wl_n_queue_gens};
        for (int t = 0; t < 3; t++)
            for (size_t i = 0; i < ns[t] && count < MAXGENS; i++, count++) {
                param_summary(&tabs[t][i], params[count], PLEN);
                info[count] =
                    (vm_wl_gen_info_t){tabs[t][i].name, tabs[t][i].models, params[count]};
            }
    }
    *n = count;
    return info;
}

/** Parse one "key=value" word into v; returns 0 or VMATCH_EINVAL with err. */
static int parse_param(const wl_gen_t *gen, const char *w, size_t wl, long long *v, char *err,
                       size_t errlen)
{
    const char *eq = memchr(w, '=', wl);
    if (!eq) {
        snprintf(err, errlen, "%s: expected key=value, got '%.*s'", gen->name, (int)wl, w);
        return VMATCH_EINVAL;
    }
    size_t kl = (size_t)(eq - w), vl = wl - kl - 1;
    const char *val = eq + 1;
    for (size_t i = 0; i < gen->nparams; i++) {
        const wl_pdef_t *p = &gen->params[i];
        if (strlen(p->key) != kl || memcmp(p->key, w, kl))
            continue;
        if (p->names) {
            for (size_t j = 0; p->names[j]; j++)
                if (strlen(p->names[j]) == vl && !memcmp(p->names[j], val, vl)) {
                    v[i] = (long long)j;
                    return 0;
                }
            char opts[128];
            size_t pos = 0;
            for (size_t j = 0; p->names[j]; j++)
                cat(opts, sizeof opts, &pos, "%s%s", j ? ", " : "", p->names[j]);
            snprintf(err, errlen, "%s: %s must be one of %s, got '%.*s'", gen->name, p->key,
                     opts, (int)vl, val);
            return VMATCH_EINVAL;
        }
        char num[32];
        char *end;
        if (vl == 0 || vl >= sizeof num)
            goto bad_num;
        memcpy(num, val, vl);
        num[vl] = 0;
        long long x = strtoll(num, &end, 10);
        if (*end || x < p->min || x > p->max)
            goto bad_num;
        v[i] = x;
        return 0;
    bad_num:
        snprintf(err, errlen, "%s: %s must be a number from %lld to %lld, got '%.*s'",
                 gen->name, p->key, p->min, p->max, (int)vl, val);
        return VMATCH_EINVAL;
    }
    char known[160];
    size_t pos = 0;
    for (size_t i = 0; i < gen->nparams; i++)
        cat(known, sizeof known, &pos, "%s%s", i ? " " : "", gen->params[i].key);
    snprintf(err, errlen, "%s: unknown parameter '%.*s' (known: %s)", gen->name, (int)kl, w,
             known);
    return VMATCH_EINVAL;
}

int vm_wl_generate(const char *spec, vm_trace_t *t, char *desc, size_t desclen, char *err,
                   size_t errlen)
{
    char ebuf[256];
    if (!err || !errlen) {
        err = ebuf;
        errlen = sizeof ebuf;
    }
    err[0] = 0;
    if (desc && desclen)
        desc[0] = 0;
    const char *p = spec ? spec : "";
    while (*p == ' ' || *p == '\t')
        p++;
    size_t nl = strcspn(p, " \t");
    const wl_gen_t *gen = nl ? find_gen(p, nl) : NULL;
    if (!gen) {
        size_t n, pos = 0;
        const vm_wl_gen_info_t *info = vm_wl_generators(&n);
        char names[512];
        for (size_t i = 0; i < n; i++)
            cat(names, sizeof names, &pos, "%s%s", i ? " " : "", info[i].name);
        snprintf(err, errlen, "unknown workload '%.*s' (known: %s)", (int)nl, p, names);
        return VMATCH_EINVAL;
    }
    long long v[MAX_PARAMS];
    for (size_t i = 0; i < gen->nparams; i++)
        v[i] = gen->params[i].def;
    p += nl;
    for (;;) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (!*p)
            break;
        size_t wl = strcspn(p, " \t");
        int rc = parse_param(gen, p, wl, v, err, errlen);
        if (rc)
            return rc;
        p += wl;
    }
    char d[512];
    size_t pos = 0;
    cat(d, sizeof d, &pos, "%s", gen->name);
    for (size_t i = 0; i < gen->nparams; i++) {
        cat(d, sizeof d, &pos, " ");
        cat_param(d, sizeof d, &pos, &gen->params[i], v[i]);
    }
    if (desc && desclen)
        snprintf(desc, desclen, "%s", d);

    wl_gen_ctx_t g;
    memset(&g, 0, sizeof g);
    g.t = t;
    int rc = gen->run(&g, gen, v, err, errlen);
    if (rc == 0 && g.nev)
        wl_emit(&g);
    free(g.ev);
    free(g.last_arrival);
    if (rc)
        return rc;
    if (g.too_big || t->n > VM_WL_MAX_OPS) {
        snprintf(err, errlen, "%s: more than %u operations; use smaller parameters", d,
                 VM_WL_MAX_OPS);
        return VMATCH_EINVAL;
    }
    if (g.failed || t->failed) {
        snprintf(err, errlen, "%s: out of memory", d);
        return VMATCH_ENOMEM;
    }
    return 0;
}
