/* trace.c -- traces: building, checking and the text writer (trace.h); the reader is
 * workloads/trace_read.c. */
#include "trace.h"

#include "vmatch.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static const char *const kind_names[VM_TRACE_NKINDS] = {"post",    "arrive", "probe",
                                                        "improbe", "cancel", "remove"};

/* Collective operation names, indexed by the VMATCH_COLL_* value. */
static const char *const op_names[] = {
    [VMATCH_COLL_BARRIER] = "barrier",     [VMATCH_COLL_BCAST] = "bcast",
    [VMATCH_COLL_GATHER] = "gather",       [VMATCH_COLL_SCATTER] = "scatter",
    [VMATCH_COLL_ALLGATHER] = "allgather", [VMATCH_COLL_REDUCE] = "reduce",
    [VMATCH_COLL_ALLREDUCE] = "allreduce", [VMATCH_COLL_REDUCE_SCATTER] = "reduce_scatter",
    [VMATCH_COLL_ALLTOALL] = "alltoall",   [VMATCH_COLL_SCAN] = "scan",
};
#define NOP_NAMES (sizeof op_names / sizeof *op_names)

const char *vm_trace_kind_name(vm_trace_kind_t k)
{
    return (unsigned)k < VM_TRACE_NKINDS ? kind_names[k] : "?";
}

const char *vm_trace_op_name(uint32_t op)
{
    return op < NOP_NAMES ? op_names[op] : NULL;
}

void vm_trace_init(vm_trace_t *t)
{
    memset(t, 0, sizeof *t);
    t->rank = -1;
    t->classes = calloc(1, sizeof *t->classes); /* classes[0]: point-to-point */
    if (t->classes) {
        t->nclasses = 1;
        t->classes_cap = 1;
    } else {
        t->failed = 1;
    }
}

void vm_trace_free(vm_trace_t *t)
{
    free(t->ops);
    free(t->classes);
    free(t->class_index);
    memset(t, 0, sizeof *t);
}

/* ---- building ---- */

/** Room for one more operation; NULL (and t->failed) when memory runs out. */
static vm_trace_op_t *push_op(vm_trace_t *t, vm_trace_kind_t kind)
{
    if (t->failed)
        return NULL;
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 1024;
        vm_trace_op_t *v = realloc(t->ops, cap * sizeof *v);
        if (!v) {
            t->failed = 1;
            return NULL;
        }
        t->ops = v;
        t->cap = cap;
    }
    vm_trace_op_t *o = &t->ops[t->n++];
    memset(o, 0, sizeof *o);
    o->kind = (uint8_t)kind;
    return o;
}

/** Hash slot where class (op, bytes, size) is or would go. */
static size_t class_slot(const vm_trace_t *t, uint32_t op, uint64_t bytes, uint32_t comm_size)
{
    uint64_t h = (op * 0x9e3779b97f4a7c15u) ^ (bytes * 0xbf58476d1ce4e5b9u) ^
                 (comm_size * 0x94d049bb133111ebu);
    size_t mask = t->index_cap - 1, i = (size_t)(h ^ (h >> 29)) & mask;
    for (;; i = (i + 1) & mask) {
        uint32_t c = t->class_index[i];
        if (!c)
            return i;
        const vm_trace_class_t *k = &t->classes[c - 1];
        if (k->op == op && k->bytes == bytes && k->comm_size == comm_size)
            return i;
    }
}

/** Rebuild the class hash with room for twice the classes; 0 or -1 without memory. */
static int grow_index(vm_trace_t *t)
{
    size_t cap = t->index_cap ? t->index_cap * 2 : 16;
    uint32_t *v = calloc(cap, sizeof *v);
    if (!v)
        return -1;
    free(t->class_index);
    t->class_index = v;
    t->index_cap = cap;
    for (size_t c = 1; c < t->nclasses; c++) {
        const vm_trace_class_t *k = &t->classes[c];
        t->class_index[class_slot(t, k->op, k->bytes, k->comm_size)] = (uint32_t)c + 1;
    }
    return 0;
}

uint16_t vm_trace_class(vm_trace_t *t, uint32_t op, uint64_t bytes, uint32_t comm_size)
{
    if (op == 0 || t->failed)
        return 0;
    if (2 * t->nclasses >= t->index_cap && grow_index(t)) {
        t->failed = 1;
        return 0;
    }
    size_t slot = class_slot(t, op, bytes, comm_size);
    if (t->class_index[slot])
        return (uint16_t)(t->class_index[slot] - 1);
    if (t->nclasses > VM_TRACE_MAX_CLASSES - 1) {
        t->failed = 1;
        return 0;
    }
    if (t->nclasses == t->classes_cap) {
        size_t cap = t->classes_cap * 2;
        vm_trace_class_t *v = realloc(t->classes, cap * sizeof *v);
        if (!v) {
            t->failed = 1;
            return 0;
        }
        t->classes = v;
        t->classes_cap = cap;
    }
    t->classes[t->nclasses] = (vm_trace_class_t){op, bytes, comm_size};
    t->class_index[slot] = (uint32_t)t->nclasses + 1;
    return (uint16_t)t->nclasses++;
}

/** Append a post, probe, improbe or arrival with its fields. */
static vm_trace_op_t *push_match(vm_trace_t *t, vm_trace_kind_t kind, uint32_t ctx, int32_t src,
                                 int32_t tag, uint16_t cls)
{
    vm_trace_op_t *o = push_op(t, kind);
    if (o) {
        o->ctx = ctx;
        o->src = src;
        o->tag = tag;
        o->cls = cls;
    }
    return o;
}

uint32_t vm_trace_post(vm_trace_t *t, uint32_t ctx, int32_t src, int32_t tag, uint16_t cls)
{
    vm_trace_op_t *o = push_match(t, VM_TRACE_POST, ctx, src, tag, cls);
    if (!o)
        return 0;
    o->id = t->nreq++;
    return o->id;
}

uint32_t vm_trace_arrive(vm_trace_t *t, uint32_t ctx, int32_t src, int32_t tag, uint16_t cls)
{
    vm_trace_op_t *o = push_match(t, VM_TRACE_ARRIVE, ctx, src, tag, cls);
    if (!o)
        return 0;
    o->id = t->nmsg++;
    return o->id;
}

void vm_trace_probe(vm_trace_t *t, uint32_t ctx, int32_t src, int32_t tag, uint16_t cls,
                    int remove)
{
    push_match(t, remove ? VM_TRACE_IMPROBE : VM_TRACE_PROBE, ctx, src, tag, cls);
}

void vm_trace_cancel(vm_trace_t *t, uint32_t req)
{
    vm_trace_op_t *o = push_op(t, VM_TRACE_CANCEL);
    if (o)
        o->id = req;
}

void vm_trace_remove(vm_trace_t *t, uint32_t msg)
{
    vm_trace_op_t *o = push_op(t, VM_TRACE_REMOVE);
    if (o)
        o->id = msg;
}

/** snprintf into err (when there is room); returns VMATCH_EINVAL. */
static int fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return VMATCH_EINVAL;
}

int vm_trace_equal(const vm_trace_t *a, const vm_trace_t *b, size_t *at)
{
    size_t where = 0;
    int same =
        a->n == b->n && a->nprocs == b->nprocs && a->nreq == b->nreq && a->nmsg == b->nmsg;
    for (size_t i = 0; same && i < a->n; i++) {
        const vm_trace_op_t *x = &a->ops[i], *y = &b->ops[i];
        const vm_trace_class_t *cx = &a->classes[x->cls], *cy = &b->classes[y->cls];
        same = x->kind == y->kind && x->ctx == y->ctx && x->src == y->src && x->tag == y->tag &&
               x->id == y->id && cx->op == cy->op && cx->bytes == cy->bytes &&
               cx->comm_size == cy->comm_size;
        where = i;
    }
    if (at)
        *at = same ? 0 : where;
    return same;
}

int vm_trace_check(const vm_trace_t *t, char *err, size_t errlen)
{
    uint32_t nreq = 0, nmsg = 0;
    if (t->failed)
        return fail(err, errlen, "the trace ran out of memory while it was built");
    for (size_t i = 0; i < t->n; i++) {
        const vm_trace_op_t *o = &t->ops[i];
        const char *k = vm_trace_kind_name((vm_trace_kind_t)o->kind);
        switch (o->kind) {
        case VM_TRACE_POST:
        case VM_TRACE_ARRIVE:
        case VM_TRACE_PROBE:
        case VM_TRACE_IMPROBE:
            if (o->cls >= t->nclasses)
                return fail(err, errlen, "operation %zu (%s): class %u out of range", i, k,
                            o->cls);
            if (o->src < VM_TRACE_ANY || o->tag < VM_TRACE_ANY)
                return fail(err, errlen, "operation %zu (%s): negative source or tag", i, k);
            if (o->kind == VM_TRACE_ARRIVE && (o->src < 0 || o->tag < 0))
                return fail(err, errlen, "operation %zu (arrive): a message has no wildcard",
                            i);
            if (t->nprocs && o->src >= 0 && (uint32_t)o->src >= t->nprocs)
                return fail(err, errlen, "operation %zu (%s): source %d is not below nprocs %u",
                            i, k, o->src, t->nprocs);
            if (o->kind == VM_TRACE_POST && o->id != nreq++)
                return fail(err, errlen, "operation %zu (post): request id %u, expected %u", i,
                            o->id, nreq - 1);
            if (o->kind == VM_TRACE_ARRIVE && o->id != nmsg++)
                return fail(err, errlen, "operation %zu (arrive): message id %u, expected %u",
                            i, o->id, nmsg - 1);
            break;
        case VM_TRACE_CANCEL:
            if (o->id >= nreq)
                return fail(err, errlen, "operation %zu (cancel): request %u was not posted", i,
                            o->id);
            break;
        case VM_TRACE_REMOVE:
            if (o->id >= nmsg)
                return fail(err, errlen, "operation %zu (remove): message %u did not arrive", i,
                            o->id);
            break;
        default:
            return fail(err, errlen, "operation %zu: unknown kind %u", i, o->kind);
        }
    }
    if (nreq != t->nreq || nmsg != t->nmsg)
        return fail(err, errlen,
                    "the trace counts %u requests and %u messages, but holds %u "
                    "and %u",
                    t->nreq, t->nmsg, nreq, nmsg);
    return 0;
}

/** Write a source or tag field. */
static void put_field(FILE *f, int32_t v)
{
    if (v == VM_TRACE_ANY)
        fputs(" *", f);
    else
        fprintf(f, " %d", v);
}

int vm_trace_write(const vm_trace_t *t, FILE *f, const char *comment)
{
    fputs("vmatch-trace 1\n", f);
    if (comment && *comment)
        fprintf(f, "# %s\n", comment);
    if (t->nprocs)
        fprintf(f, "nprocs %u\n", t->nprocs);
    if (t->has_layout)
        fprintf(f, "layout %u %u %u\n", t->ctx_bits, t->src_bits, t->tag_bits);
    if (t->rank >= 0)
        fprintf(f, "rank %" PRId64 "\n", t->rank);
    for (size_t i = 0; i < t->n; i++) {
        const vm_trace_op_t *o = &t->ops[i];
        fputs(kind_names[o->kind], f);
        switch (o->kind) {
        case VM_TRACE_CANCEL:
        case VM_TRACE_REMOVE:
            fprintf(f, " %u\n", o->id);
            continue;
        case VM_TRACE_POST:
        case VM_TRACE_ARRIVE:
            fprintf(f, " %u", o->id);
            break;
        default:
            break;
        }
        fprintf(f, " %u", o->ctx);
        put_field(f, o->src);
        put_field(f, o->tag);
        if (o->cls == 0) {
            fputs(" p2p\n", f);
        } else {
            const vm_trace_class_t *c = &t->classes[o->cls];
            const char *name = vm_trace_op_name(c->op);
            if (name)
                fprintf(f, " %s/%" PRIu64 "/%u\n", name, c->bytes, c->comm_size);
            else
                fprintf(f, " %u/%" PRIu64 "/%u\n", c->op, c->bytes, c->comm_size);
        }
    }
    fprintf(f, "end %zu", t->n);
    if (t->cut)
        fprintf(f, " cut %" PRIu64, t->cut);
    fputc('\n', f);
    return ferror(f) ? VMATCH_EIO : 0;
}

int vm_trace_save(const vm_trace_t *t, const char *path, const char *comment, char *err,
                  size_t errlen)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        if (err && errlen)
            snprintf(err, errlen, "%s: cannot create: %s", path, strerror(errno));
        return VMATCH_EIO;
    }
    int rc = vm_trace_write(t, f, comment);
    if (fclose(f) != 0 || rc) {
        if (err && errlen)
            snprintf(err, errlen, "%s: write error: %s", path, strerror(errno));
        return VMATCH_EIO;
    }
    return 0;
}
