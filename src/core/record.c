/* record.c -- the trace an engine records of its own matching calls (trace.record=on), and
 * the files vmatch_save_recordings writes (profile.out, trace.out).
 *
 * The recording calls sit in front of the engine's calls (vm_calls_t), under the threads
 * layer when there is one, so a trace holds what the engine applied, in its order.  Each
 * call is recorded after it succeeded, as one operation of the trace format (trace.h):
 * a failed call changes nothing and records nothing.  A request or message gets its id
 * when it is posted or arrives; a map from payload pointers to the ids of the entries
 * queued now names them again when a cancel or removal takes them.  The split calls are
 * written as the calls they halve: vmatch_match_posted that matched, or the
 * vmatch_enqueue_unexpected after it, is an arrive; an improbe that found nothing is held
 * back one call, and becomes a post when vmatch_enqueue_posted of the same receive follows.
 *
 * A trace is bounded: at trace.cap operations (or when memory runs out) recording stops,
 * the later operations are counted (trace.dropped), and the file says so.  Recording costs
 * nothing when off: the engine does not call in here, and its inline calls stay on.
 */
#define _POSIX_C_SOURCE 200809L
#include "record.h"
#include "engine.h"
#include "error.h"
#include "threads.h"
#include "trace.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

/* The ids of the entries queued on one side, by payload pointer: open addressing with
 * linear probing, deletion by backward shift. */
typedef struct rec_slot {
    const void *p; /* NULL: free */
    uint32_t id;
} rec_slot_t;

typedef struct rec_map {
    rec_slot_t *slots;
    size_t cap, used; /* cap a power of two, used at most half of it */
} rec_map_t;

struct vm_rec {
    vm_calls_t inner; /* the calls recorded */
    vm_trace_t trace;
    uint64_t dropped; /* operations not recorded */
    const char *why;  /* why recording stopped; NULL while it records */
    rec_map_t map[2]; /* VM_PRQ, VM_UMQ */
    int pending;      /* an improbe that found nothing, held back one call: */
    vmatch_bits_t pbits, pcare;
    uint32_t pcls;
    char *trace_out, *profile_out; /* expanded; NULL when not asked */
};

/* ---- paths ---- */

/* The launchers' variables that give a process its rank, first found first taken. */
static const char *const rank_vars[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"};
enum { NRANK_VARS = sizeof rank_vars / sizeof *rank_vars };

/* The rank in variable rank_vars[i]: -1 when it is not set, -2 when it is not a rank. */
static int64_t rank_var(size_t i)
{
    const char *v = getenv(rank_vars[i]);
    char *end;
    if (!v || !*v)
        return -1;
    errno = 0;
    long long r = strtoll(v, &end, 10);
    return !errno && !*end && v[0] != '-' && v[0] != '+' && r <= INT32_MAX ? r : -2;
}

int64_t vm_rank_of(const vm_config_t *cfg)
{
    if (cfg->rank >= 0)
        return cfg->rank;
    for (size_t i = 0; i < NRANK_VARS; i++) {
        int64_t r = rank_var(i);
        if (r >= 0)
            return r;
    }
    return -1;
}

/* The message of a %r without a rank: a variable set to what is not a rank is named, so
 * OMPI_COMM_WORLD_RANK=abc is not reported as missing. */
static int no_rank(const char *key, const char *pattern)
{
    for (size_t i = 0; i < NRANK_VARS; i++)
        if (rank_var(i) == -2)
            return vm_fail(VMATCH_EINVAL,
                           "spec: %s=%s: %%r needs the rank, and %s='%.32s' is not one (0 to "
                           "2^31-1): give rank=N",
                           key, pattern, rank_vars[i], getenv(rank_vars[i]));
    return vm_fail(VMATCH_EINVAL,
                   "spec: %s=%s: %%r needs the rank: give rank=N (the environment has no "
                   "OMPI_COMM_WORLD_RANK, PMIX_RANK or PMI_RANK)",
                   key, pattern);
}

int vm_path_expand(const vm_config_t *cfg, const char *key, const char *pattern, char *out,
                   size_t len)
{
    size_t n = 0;
    for (const char *p = pattern; *p; p++) {
        char piece[24] = {*p, 0};
        if (*p == '%') {
            p++;
            if (*p == '%') {
                piece[0] = '%';
            } else if (*p == 'p') {
                snprintf(piece, sizeof piece, "%ld", (long)getpid());
            } else if (*p == 'r') {
                int64_t rank = vm_rank_of(cfg);
                if (rank < 0)
                    return no_rank(key, pattern);
                snprintf(piece, sizeof piece, "%lld", (long long)rank);
            } else {
                return vm_fail(VMATCH_EINVAL,
                               "spec: %s=%s: unknown %%%s (%%r is the rank, %%p the process "
                               "id, %%%% a percent sign)",
                               key, pattern, *p ? (char[2]){*p, 0} : "at the end");
            }
        }
        size_t k = strlen(piece);
        if (n + k >= len)
            return vm_fail(VMATCH_EINVAL, "spec: %s=%s: the path is too long once expanded",
                           key, pattern);
        memcpy(out + n, piece, k);
        n += k;
    }
    out[n] = '\0';
    return VMATCH_OK;
}

void vm_program_name(char *buf, size_t len)
{
    buf[0] = '\0';
    FILE *f = fopen("/proc/self/comm", "r");
    if (!f)
        return;
    if (!fgets(buf, (int)len, f))
        buf[0] = '\0';
    fclose(f);
    buf[strcspn(buf, "\r\n")] = '\0';
}

/* ---- the payload maps ---- */

static size_t home(const rec_map_t *m, const void *p)
{
    uint64_t h = (uint64_t)(uintptr_t)p * 0x9e3779b97f4a7c15ull;
    return (size_t)(h >> 32) & (m->cap - 1);
}

static size_t slot_of(const rec_map_t *m, const void *p)
{
    size_t i = home(m, p);
    while (m->slots[i].p && m->slots[i].p != p)
        i = (i + 1) & (m->cap - 1);
    return i;
}

/* Enter p with id; 0, or -1 when memory runs out. */
static int map_put(rec_map_t *m, const void *p, uint32_t id)
{
    if (2 * (m->used + 1) > m->cap) {
        rec_map_t g = {calloc(m->cap ? 2 * m->cap : 64, sizeof *g.slots),
                       m->cap ? 2 * m->cap : 64, m->used};
        if (!g.slots)
            return -1;
        for (size_t i = 0; i < m->cap; i++)
            if (m->slots[i].p)
                g.slots[slot_of(&g, m->slots[i].p)] = m->slots[i];
        free(m->slots);
        *m = g;
    }
    size_t i = slot_of(m, p);
    m->used += !m->slots[i].p;
    m->slots[i] = (rec_slot_t){p, id};
    return 0;
}

/* Take p out of the map: 1 with its id in *id, or 0 when it is not there. */
static int map_take(rec_map_t *m, const void *p, uint32_t *id)
{
    if (!m->cap || !p)
        return 0;
    size_t i = slot_of(m, p);
    if (!m->slots[i].p)
        return 0;
    *id = m->slots[i].id;
    /* backward shift: an entry later in the run moves into the hole when the hole lies
     * cyclically between its home and where it is */
    for (size_t j = (i + 1) & (m->cap - 1); m->slots[j].p; j = (j + 1) & (m->cap - 1))
        if (((j - home(m, m->slots[j].p)) & (m->cap - 1)) >= ((j - i) & (m->cap - 1))) {
            m->slots[i] = m->slots[j];
            i = j;
        }
    m->slots[i] = (rec_slot_t){0};
    m->used--;
    return 1;
}

/* ---- recording ---- */

/* Stop recording for reason why (a static text); the operation that found it counts as
 * dropped. */
static void stop(struct vm_rec *r, const char *why)
{
    if (!r->why)
        r->why = why;
    r->dropped++;
}

/* The fields of (bits, care) in the trace's terms: '*' (VM_TRACE_ANY) for a source whose
 * care is clear, or a tag whose care lacks the bits VMATCH_ANY_TAG clears.  0 when a value
 * does not fit the format, -1 when a care covers part of a field: the engine's layout is
 * not the one the caller packs with (MPI has no such receive). */
static int unpack(const vm_packing_t *k, vmatch_bits_t bits, vmatch_bits_t care, uint32_t *ctx,
                  int32_t *src, int32_t *tag)
{
    uint64_t c = (bits >> k->ctx_shift) & k->ctx_mask, s = (bits >> k->src_shift) & k->src_mask,
             t = (bits >> k->tag_shift) & k->tag_mask;
    uint64_t cc = (care >> k->ctx_shift) & k->ctx_mask,
             cs = (care >> k->src_shift) & k->src_mask,
             ct = (care >> k->tag_shift) & k->tag_mask;
    int any_src = cs == 0, any_tag = (ct & (k->tag_wild >> k->tag_shift)) == 0;
    if (cc != k->ctx_mask || (!any_src && cs != k->src_mask) || (!any_tag && ct != k->tag_mask))
        return -1;
    if (c > UINT32_MAX || (!any_src && s > VM_TRACE_MAX_FIELD) ||
        (!any_tag && t > VM_TRACE_MAX_FIELD))
        return 0;
    *ctx = (uint32_t)c;
    *src = any_src ? VM_TRACE_ANY : (int32_t)s;
    *tag = any_tag ? VM_TRACE_ANY : (int32_t)t;
    return 1;
}

/* The trace's class of the engine's class cls: point-to-point for 0, an id the engine did
 * not hand out, or operation 0; else (operation, a size in the class's range, size). */
static uint16_t class_of(struct vm_rec *r, const vmatch_engine_t *e, uint32_t cls)
{
    if (cls == 0 || cls > e->env.nclasses)
        return 0;
    const vm_class_t *c = &e->env.classes[cls - 1];
    if (!c->op)
        return 0;
    uint64_t bytes = c->size_class ? 1ull << (c->size_class - 1) : 0;
    return vm_trace_class(&r->trace, c->op, bytes, c->comm_size ? c->comm_size : 1);
}

/* 1 when the trace takes one more operation; else 0, the operation counted as dropped
 * (recording stopped before, or stops now at trace.cap). */
static int room(struct vm_rec *r, const vmatch_engine_t *e)
{
    if (r->why) {
        r->dropped++;
        return 0;
    }
    if (r->trace.n >= e->cfg.trace_cap) {
        stop(r, "the trace reached trace.cap");
        return 0;
    }
    return 1;
}

/* Record an operation with fields (post, arrive, probe, improbe); 1 with a post's or an
 * arrival's id in *id, or 0 when it was not recorded (recording stopped, or stops now). */
static int put_op(struct vm_rec *r, const vmatch_engine_t *e, int kind, vmatch_bits_t bits,
                  vmatch_bits_t care, uint32_t cls, uint32_t *id)
{
    uint32_t ctx;
    int32_t src, tag;
    if (!room(r, e))
        return 0;
    int fits = unpack(&e->packing, bits, care, &ctx, &src, &tag);
    if (fits <= 0) {
        stop(r, fits ? "a receive's care covers part of a field: the spec's layout is not the "
                       "caller's (Open MPI's pml/ucx packs layout=ompi-ucx, MPICH's ch4/ucx "
                       "layout=mpich-ucx)"
                     : "a source or tag beyond 2^31-1, or a context beyond 2^32-1");
        return 0;
    }
    uint16_t c = class_of(r, e, cls);
    if (kind == VM_TRACE_POST)
        *id = vm_trace_post(&r->trace, ctx, src, tag, c);
    else if (kind == VM_TRACE_ARRIVE)
        *id = vm_trace_arrive(&r->trace, ctx, src, tag, c);
    else
        vm_trace_probe(&r->trace, ctx, src, tag, c, kind == VM_TRACE_IMPROBE);
    if (r->trace.failed) {
        stop(r, "out of memory for the trace");
        return 0;
    }
    return 1;
}

/* A queued entry: its id under its payload, for a later cancel or removal. */
static void put_queued(struct vm_rec *r, int side, const void *payload, uint32_t id)
{
    if (map_put(&r->map[side], payload, id) < 0 && !r->why)
        r->why = "out of memory for the map of queued entries";
}

/* Write the improbe held back, if any (the next call is not its enqueue). */
static void flush(struct vm_rec *r, const vmatch_engine_t *e)
{
    uint32_t id;
    if (r->pending)
        put_op(r, e, VM_TRACE_IMPROBE, r->pbits, r->pcare, r->pcls, &id);
    r->pending = 0;
}

static int rec_post(vmatch_engine_t *e, vmatch_bits_t bits, vmatch_bits_t care, uint32_t cls,
                    void *req, void **msg_out)
{
    struct vm_rec *r = e->rec;
    uint32_t id, unused;
    flush(r, e);
    int rc = r->inner.post(e, bits, care, cls, req, msg_out);
    if (rc >= 0 && put_op(r, e, VM_TRACE_POST, bits, care, cls, &id)) {
        if (rc == VMATCH_MATCHED)
            map_take(&r->map[VM_UMQ], *msg_out, &unused);
        else
            put_queued(r, VM_PRQ, req, id);
    }
    return rc;
}

static int rec_arrive(vmatch_engine_t *e, vmatch_bits_t bits, uint32_t cls, void *msg,
                      void **req_out)
{
    struct vm_rec *r = e->rec;
    uint32_t id, unused;
    flush(r, e);
    int rc = r->inner.arrive(e, bits, cls, msg, req_out);
    if (rc >= 0 && put_op(r, e, VM_TRACE_ARRIVE, bits, ~(vmatch_bits_t)0, cls, &id)) {
        if (rc == VMATCH_MATCHED)
            map_take(&r->map[VM_PRQ], *req_out, &unused);
        else
            put_queued(r, VM_UMQ, msg, id);
    }
    return rc;
}

static int rec_probe(vmatch_engine_t *e, vmatch_bits_t bits, vmatch_bits_t care, uint32_t cls,
                     int remove, void **msg_out)
{
    struct vm_rec *r = e->rec;
    uint32_t id;
    flush(r, e);
    int rc = r->inner.probe(e, bits, care, cls, remove, msg_out);
    if (rc == VMATCH_ENOTFOUND && remove) { /* perhaps the first half of a post */
        r->pending = 1;
        r->pbits = bits;
        r->pcare = care;
        r->pcls = cls;
        return rc;
    }
    if ((rc >= 0 || rc == VMATCH_ENOTFOUND) &&
        put_op(r, e, remove ? VM_TRACE_IMPROBE : VM_TRACE_PROBE, bits, care, cls, &id) &&
        rc == VMATCH_MATCHED && remove)
        map_take(&r->map[VM_UMQ], *msg_out, &id);
    return rc;
}

/* cancel and remove_unexpected: the id of the entry they took. */
static int rec_remove(vmatch_engine_t *e, int side, const void *payload)
{
    struct vm_rec *r = e->rec;
    uint32_t id;
    flush(r, e);
    int rc = r->inner.remove(e, side, payload);
    if (rc < 0)
        return rc;
    /* while recording, every queued entry is in the map */
    int known = map_take(&r->map[side], payload, &id);
    if ((known || r->why) && room(r, e)) {
        if (side == VM_PRQ)
            vm_trace_cancel(&r->trace, id);
        else
            vm_trace_remove(&r->trace, id);
        if (r->trace.failed)
            stop(r, "out of memory for the trace");
    }
    return rc;
}

/* The first half of an arrival: an arrive when it matched (the message is never queued);
 * else the vmatch_enqueue_unexpected that follows records it. */
static int rec_match_posted(vmatch_engine_t *e, vmatch_bits_t bits, uint32_t cls,
                            void **req_out)
{
    struct vm_rec *r = e->rec;
    uint32_t id, unused;
    flush(r, e);
    int rc = r->inner.match_posted(e, bits, cls, req_out);
    if (rc == VMATCH_MATCHED &&
        put_op(r, e, VM_TRACE_ARRIVE, bits, ~(vmatch_bits_t)0, cls, &id))
        map_take(&r->map[VM_PRQ], *req_out, &unused);
    return rc;
}

/* The second half of a post (after an improbe of the same receive that found nothing) or
 * of an arrival. */
static int rec_enqueue(vmatch_engine_t *e, int side, vmatch_bits_t bits, vmatch_bits_t care,
                       uint32_t cls, void *payload)
{
    struct vm_rec *r = e->rec;
    uint32_t id;
    int half =
        side == VM_PRQ && r->pending && r->pbits == bits && r->pcare == care && r->pcls == cls;
    if (half)
        r->pending = 0;
    else
        flush(r, e);
    int rc = r->inner.enqueue(e, side, bits, care, cls, payload);
    if (rc < 0) {
        r->pending |= half; /* the improbe stands alone */
        return rc;
    }
    if (put_op(r, e, side == VM_PRQ ? VM_TRACE_POST : VM_TRACE_ARRIVE, bits, care, cls, &id))
        put_queued(r, side, payload, id);
    return rc;
}

static const vm_calls_t rec_calls = {rec_post,   rec_arrive,       rec_probe,
                                     rec_remove, rec_match_posted, rec_enqueue};

/* ---- the engine's side ---- */

/* A copy of the expansion of pattern (NULL: none) in *out. */
static int expand_copy(const vm_config_t *cfg, const char *key, const char *pattern, char **out)
{
    char buf[PATH_MAX];
    *out = NULL;
    if (!pattern)
        return VMATCH_OK;
    int rc = vm_path_expand(cfg, key, pattern, buf, sizeof buf);
    if (rc < 0)
        return rc;
    if (!(*out = strdup(buf)))
        return vm_fail(VMATCH_ENOMEM, "create: out of memory for the %s path", key);
    return VMATCH_OK;
}

int vm_record_create(vmatch_engine_t *e)
{
    const vm_config_t *c = &e->cfg;
    if (!c->trace_record && !c->profile_out)
        return VMATCH_OK;
    struct vm_rec *r = calloc(1, sizeof *r);
    if (!r)
        return vm_fail(VMATCH_ENOMEM, "create: out of memory for the recordings");
    e->rec = r;
    int rc = expand_copy(c, "trace.out", c->trace_out, &r->trace_out);
    if (rc == VMATCH_OK)
        rc = expand_copy(c, "profile.out", c->profile_out, &r->profile_out);
    if (rc < 0)
        return rc;
    if (!c->trace_record)
        return VMATCH_OK;
    vm_trace_init(&r->trace);
    if (r->trace.failed)
        return vm_fail(VMATCH_ENOMEM, "create: out of memory for the trace");
    r->inner = e->calls;
    e->calls = rec_calls;
    return VMATCH_OK;
}

void vm_record_destroy(vmatch_engine_t *e)
{
    struct vm_rec *r = e->rec;
    if (!r)
        return;
    vm_trace_free(&r->trace);
    for (int s = 0; s < 2; s++)
        free(r->map[s].slots);
    free(r->trace_out);
    free(r->profile_out);
    free(r);
    e->rec = NULL;
}

uint64_t vm_record_stat(const vmatch_engine_t *e, int which)
{
    const struct vm_rec *r = e->rec;
    if (!r || !e->cfg.trace_record)
        return 0;
    /* an improbe held back counts where it will be written */
    int held = r->pending && !r->why && r->trace.n < e->cfg.trace_cap;
    return which == 0 ? r->trace.n + (uint64_t)held
                      : r->dropped + (uint64_t)(r->pending && !held);
}

/* ---- writing ---- */

/* Write the trace to path (the caller holds the engine). */
static int trace_write(const vmatch_engine_t *e, const char *path)
{
    struct vm_rec *r = e->rec;
    if (!r || !e->cfg.trace_record)
        return vm_fail(VMATCH_EINVAL, "trace_save: the engine records no trace (spec "
                                      "trace.record=on or trace.out=PATH)");
    flush(r, e);
    vm_trace_t *t = &r->trace;
    t->has_layout = 1;
    t->ctx_bits = e->cfg.ctx_bits;
    t->src_bits = e->cfg.src_bits;
    t->tag_bits = e->cfg.tag_bits;
    t->rank = vm_rank_of(&e->cfg);
    t->cut = r->dropped;
    /* nprocs bounds the sources; a source beyond it (a process of another job) drops it */
    t->nprocs = e->cfg.nprocs;
    for (size_t i = 0; t->nprocs && i < t->n; i++)
        if (t->ops[i].src >= 0 && (uint32_t)t->ops[i].src >= t->nprocs &&
            t->ops[i].kind != VM_TRACE_CANCEL && t->ops[i].kind != VM_TRACE_REMOVE)
            t->nprocs = 0;
    char comment[512];
    if (r->why)
        snprintf(comment, sizeof comment,
                 "recorded by vmatch; recording stopped after %zu operations: %s; %llu more "
                 "were not recorded",
                 t->n, r->why, (unsigned long long)r->dropped);
    else
        snprintf(comment, sizeof comment, "recorded by vmatch: %s", e->describe);
    FILE *f = fopen(path, "w");
    if (!f)
        return vm_fail(VMATCH_EIO, "trace_save: cannot open '%s': %s", path, strerror(errno));
    int rc = vm_trace_write(t, f, comment);
    if (fclose(f) != 0 || rc)
        return vm_fail(VMATCH_EIO, "trace_save: cannot write '%s'", path);
    return VMATCH_OK;
}

int vmatch_trace_save(const vmatch_engine_t *e, const char *path)
{
    if (!e || !path)
        return vm_fail(VMATCH_EINVAL, "trace_save: NULL argument");
    vm_engine_take(e);
    int rc = trace_write(e, path);
    vm_engine_give(e);
    return rc;
}

/* Append printf-style text to note (len bytes, kept terminated). */
static void note_put(char *note, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void note_put(char *note, size_t len, const char *fmt, ...)
{
    size_t at = strlen(note);
    if (at + 1 >= len)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(note + at, len - at, fmt, ap);
    va_end(ap);
}

int vmatch_save_recordings(const vmatch_engine_t *e, char *note, size_t len)
{
    char none[1];
    if (!note || !len)
        note = none, len = sizeof none;
    note[0] = '\0';
    if (!e)
        return vm_fail(VMATCH_EINVAL, "save_recordings: NULL engine");
    struct vm_rec *r = e->rec;
    if (!r)
        return 0;
    int written = 0, rc = VMATCH_OK, r2;
    vm_engine_take(e);
    if (r->profile_out) {
        if (!e->prof.used) {
            note_put(note, len, "profile: nothing recorded, %s not written", r->profile_out);
        } else if ((rc = vm_profile_write(e, r->profile_out)) == VMATCH_OK) {
            note_put(note, len, "profile %s (%llu context-source pairs)", r->profile_out,
                     (unsigned long long)e->prof.used);
            written++;
        } else {
            note_put(note, len, "profile NOT written: %s", vmatch_last_error());
        }
    }
    if (r->trace_out) {
        const char *sep = note[0] ? "; " : "";
        flush(r, e);
        if (!r->trace.n && !r->dropped) {
            note_put(note, len, "%strace: nothing recorded, %s not written", sep, r->trace_out);
        } else if ((r2 = trace_write(e, r->trace_out)) == VMATCH_OK) {
            note_put(note, len, "%strace %s (%zu operations", sep, r->trace_out, r->trace.n);
            if (r->why)
                note_put(note, len, "; recording stopped: %s, %llu operations not recorded",
                         r->why, (unsigned long long)r->dropped);
            note_put(note, len, ")");
            written++;
        } else {
            note_put(note, len, "%strace NOT written: %s", sep, vmatch_last_error());
            rc = rc < 0 ? rc : r2;
        }
    }
    vm_engine_give(e);
    return rc < 0 ? rc : written;
}
