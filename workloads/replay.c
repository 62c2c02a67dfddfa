/* replay.c -- the replay driver (replay.h). */
/* clock_gettime is POSIX, outside strict C11. */
#define _POSIX_C_SOURCE 200809L

#include "replay.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

uint64_t vm_wl_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t vm_wl_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- vmatch as a backend ---- */

static uint32_t vmb_class(void *self, uint32_t op, uint64_t bytes, uint32_t comm_size)
{
    return vmatch_coll_class(self, op, bytes, comm_size);
}

static int vmb_post(void *self, uint64_t bits, uint64_t care, uint32_t cls, void *req,
                    void **msg_out)
{
    return vmatch_post(self, bits, care, cls, req, msg_out);
}

static int vmb_arrive(void *self, uint64_t bits, uint32_t cls, void *msg, void **req_out)
{
    return vmatch_arrive(self, bits, cls, msg, req_out);
}

static int vmb_probe(void *self, uint64_t bits, uint64_t care, uint32_t cls, int remove,
                     void **msg_out)
{
    return vmatch_probe(self, bits, care, cls, remove, msg_out);
}

static int vmb_cancel(void *self, void *req)
{
    return vmatch_cancel(self, req);
}

static int vmb_remove(void *self, void *msg)
{
    return vmatch_remove_unexpected(self, msg);
}

static void vmb_sample(void *self, vm_wl_sample_t *out)
{
    vmatch_stats_t st;
    vmatch_stats(self, &st);
    out->inspected = st.inspected;
    out->bytes = st.bytes;
    out->queues = st.queues;
}

void vm_wl_vmatch_backend(vmatch_engine_t *e, vm_wl_backend_t *b)
{
    memset(b, 0, sizeof *b);
    b->self = e;
    vmatch_layout(e, &b->ctx_bits, &b->src_bits, &b->tag_bits);
    b->coll_class = vmb_class;
    b->post = vmb_post;
    b->arrive = vmb_arrive;
    b->probe = vmb_probe;
    b->cancel = vmb_cancel;
    b->remove = vmb_remove;
    b->sample = vmb_sample;
}

const char *vm_wl_engine_spec(const vm_trace_t *t, const char *spec, char *buf, size_t len)
{
    char nprocs[32] = "", layout[80] = "";
    if (t->nprocs)
        snprintf(nprocs, sizeof nprocs, "nprocs=%u ", t->nprocs);
    if (t->has_layout)
        snprintf(layout, sizeof layout, "layout.ctx=%u layout.src=%u layout.tag=%u ",
                 t->ctx_bits, t->src_bits, t->tag_bits);
    snprintf(buf, len, "%s%s%s", nprocs, layout, spec ? spec : "");
    return buf;
}

/* ---- preparation ---- */

static int fail(char *err, size_t errlen, int rc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/** Format the reason into err (when there is one) and return rc. */
static int fail(char *err, size_t errlen, int rc, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return rc;
}

static uint64_t low_mask(unsigned n)
{
    return n >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << n) - 1;
}

void vm_wl_prep_free(vm_wl_prep_t *p)
{
    free(p->bits);
    free(p->care);
    free(p->cls);
    free(p->class_ids);
    free(p->req_tok);
    free(p->msg_tok);
    memset(p, 0, sizeof *p);
}

/** Class ids of the trace's classes for b, into ids. */
static void class_ids(const vm_trace_t *t, const vm_wl_backend_t *b, uint32_t *ids)
{
    ids[0] = 0;
    for (size_t c = 1; c < t->nclasses; c++)
        ids[c] = b->coll_class ? b->coll_class(b->self, t->classes[c].op, t->classes[c].bytes,
                                               t->classes[c].comm_size)
                               : 0;
}

int vm_wl_prepare(vm_wl_prep_t *p, const vm_trace_t *t, const vm_wl_backend_t *b, char *err,
                  size_t errlen)
{
    memset(p, 0, sizeof *p);
    p->t = t;
    size_t n = t->n ? t->n : 1;
    p->bits = malloc(n * sizeof *p->bits);
    p->care = malloc(n * sizeof *p->care);
    p->cls = malloc(n * sizeof *p->cls);
    p->class_ids = malloc(t->nclasses * sizeof *p->class_ids);
    p->req_tok = malloc(t->nreq ? t->nreq : 1);
    p->msg_tok = malloc(t->nmsg ? t->nmsg : 1);
    if (!p->bits || !p->care || !p->cls || !p->class_ids || !p->req_tok || !p->msg_tok) {
        vm_wl_prep_free(p);
        return fail(err, errlen, VMATCH_ENOMEM, "out of memory preparing the trace");
    }
    class_ids(t, b, p->class_ids);
    unsigned tb = b->tag_bits, sb = b->src_bits, cb = b->ctx_bits;
    uint64_t tm = low_mask(tb), sm = low_mask(sb), cm = low_mask(cb);
    for (size_t i = 0; i < t->n; i++) {
        const vm_trace_op_t *o = &t->ops[i];
        p->bits[i] = p->care[i] = 0;
        p->cls[i] = 0;
        if (o->kind == VM_TRACE_CANCEL || o->kind == VM_TRACE_REMOVE)
            continue;
        const char *what = (uint64_t)o->ctx > cm                  ? "context"
                           : o->src >= 0 && (uint64_t)o->src > sm ? "source"
                           : o->tag >= 0 && (uint64_t)o->tag > tm ? "tag"
                                                                  : NULL;
        if (what) {
            unsigned bits = what[0] == 'c' ? cb : what[0] == 's' ? sb : tb;
            long long v = what[0] == 'c' ? (long long)o->ctx : what[0] == 's' ? o->src : o->tag;
            vm_wl_prep_free(p);
            return fail(err, errlen, VMATCH_EINVAL,
                        "operation %zu (%s): %s %lld does not fit the layout's %u bits", i,
                        vm_trace_kind_name((vm_trace_kind_t)o->kind), what, v, bits);
        }
        /* The packing of vmatch_mpi_pack: tag low, source above, context on top; a wildcard
         * clears its field of the care mask. */
        uint64_t bits = ((uint64_t)o->ctx & cm) << (tb + sb), care = cm << (tb + sb);
        if (o->src >= 0) {
            bits |= ((uint64_t)o->src & sm) << tb;
            care |= sm << tb;
        }
        if (o->tag >= 0) {
            bits |= (uint64_t)o->tag & tm;
            care |= tm;
        }
        p->bits[i] = bits;
        p->care[i] = care;
        p->cls[i] = p->class_ids[o->cls];
    }
    return 0;
}

int vm_wl_rebind(vm_wl_prep_t *p, const vm_wl_backend_t *b, char *err, size_t errlen)
{
    const vm_trace_t *t = p->t;
    for (size_t c = 1; c < t->nclasses; c++) {
        uint32_t id = b->coll_class
                          ? b->coll_class(b->self, t->classes[c].op, t->classes[c].bytes,
                                          t->classes[c].comm_size)
                          : 0;
        if (id != p->class_ids[c])
            return fail(err, errlen, VMATCH_EINVAL,
                        "class %zu got id %u from a new instance, %u from the first", c, id,
                        p->class_ids[c]);
    }
    return 0;
}

/* ---- running ---- */

/** The id of payload `got` among n tokens at base, or n when it is none of them. */
static inline uint32_t token_id(const void *got, const char *base, uint32_t n)
{
    uintptr_t d = (uintptr_t)got - (uintptr_t)base;
    return d < n ? (uint32_t)d : n;
}

/** Describe a failed or wrong call (kept out of the replay loop). */
__attribute__((noinline, cold)) static int bad_call(const vm_wl_prep_t *p, size_t i, int rc,
                                                    const void *got, char *err, size_t errlen)
{
    const vm_trace_op_t *o = &p->t->ops[i];
    const char *k = vm_trace_kind_name((vm_trace_kind_t)o->kind);
    if (rc < 0)
        return fail(err, errlen, rc, "operation %zu (%s): %s", i, k, vmatch_strerror(rc));
    if (rc != VMATCH_MATCHED && rc != VMATCH_QUEUED)
        return fail(err, errlen, VMATCH_EINVAL, "operation %zu (%s): unexpected result %d", i,
                    k, rc);
    return fail(err, errlen, VMATCH_EINVAL,
                "operation %zu (%s): returned %p, which is no %s of the trace", i, k, got,
                o->kind == VM_TRACE_ARRIVE ? "request" : "message");
}

int vm_wl_run(const vm_wl_prep_t *p, const vm_wl_backend_t *b, size_t from, size_t to,
              uint32_t *out, char *err, size_t errlen)
{
    const vm_trace_t *t = p->t;
    const vm_trace_op_t *ops = t->ops;
    void *self = b->self;
    uint32_t nreq = t->nreq, nmsg = t->nmsg;
    for (size_t i = from; i < to; i++) {
        const vm_trace_op_t *o = &ops[i];
        void *got = NULL;
        uint32_t res = VM_WL_NONE;
        int rc;
        switch (o->kind) {
        case VM_TRACE_POST:
            rc = b->post(self, p->bits[i], p->care[i], p->cls[i], &p->req_tok[o->id], &got);
            if (rc == VMATCH_MATCHED) {
                res = token_id(got, p->msg_tok, nmsg);
                if (res == nmsg)
                    return bad_call(p, i, rc, got, err, errlen);
            } else if (rc != VMATCH_QUEUED) {
                return bad_call(p, i, rc, got, err, errlen);
            }
            break;
        case VM_TRACE_ARRIVE:
            rc = b->arrive(self, p->bits[i], p->cls[i], &p->msg_tok[o->id], &got);
            if (rc == VMATCH_MATCHED) {
                res = token_id(got, p->req_tok, nreq);
                if (res == nreq)
                    return bad_call(p, i, rc, got, err, errlen);
            } else if (rc != VMATCH_QUEUED) {
                return bad_call(p, i, rc, got, err, errlen);
            }
            break;
        case VM_TRACE_PROBE:
        case VM_TRACE_IMPROBE:
            rc = b->probe(self, p->bits[i], p->care[i], p->cls[i], o->kind == VM_TRACE_IMPROBE,
                          &got);
            if (rc == VMATCH_MATCHED) {
                res = token_id(got, p->msg_tok, nmsg);
                if (res == nmsg)
                    return bad_call(p, i, rc, got, err, errlen);
            } else if (rc != VMATCH_ENOTFOUND) {
                return bad_call(p, i, rc < 0 ? rc : VMATCH_EINVAL, got, err, errlen);
            }
            break;
        case VM_TRACE_CANCEL:
            rc = b->cancel(self, &p->req_tok[o->id]);
            if (rc == VMATCH_OK)
                res = o->id;
            else if (rc != VMATCH_ENOTFOUND)
                return bad_call(p, i, rc < 0 ? rc : VMATCH_EINVAL, got, err, errlen);
            break;
        default: /* VM_TRACE_REMOVE */
            rc = b->remove(self, &p->msg_tok[o->id]);
            if (rc == VMATCH_OK)
                res = o->id;
            else if (rc != VMATCH_ENOTFOUND)
                return bad_call(p, i, rc < 0 ? rc : VMATCH_EINVAL, got, err, errlen);
            break;
        }
        out[i] = res;
    }
    return 0;
}

/* ---- measuring ---- */

/* Queue lengths as outcomes change them. */
typedef struct lens {
    uint64_t prq, umq;
    double search_len_sum;
} lens_t;

/** Account operation o with outcome res. */
static void track(const vm_trace_op_t *o, uint32_t res, lens_t *l, vm_wl_measure_t *m)
{
    int hit = res != VM_WL_NONE;
    m->ops++;
    switch (o->kind) {
    case VM_TRACE_POST:
        m->searches++;
        l->search_len_sum += (double)l->umq;
        if (hit)
            l->umq--;
        else
            l->prq++;
        m->matched += hit;
        break;
    case VM_TRACE_ARRIVE:
        m->searches++;
        l->search_len_sum += (double)l->prq;
        if (hit)
            l->prq--;
        else
            l->umq++;
        m->matched += hit;
        break;
    case VM_TRACE_PROBE:
    case VM_TRACE_IMPROBE:
        m->searches++;
        l->search_len_sum += (double)l->umq;
        if (hit && o->kind == VM_TRACE_IMPROBE) {
            l->umq--;
            m->matched++;
        }
        break;
    case VM_TRACE_CANCEL:
        l->prq -= hit;
        break;
    default:
        l->umq -= hit;
        break;
    }
    if (l->prq > m->max_prq)
        m->max_prq = l->prq;
    if (l->umq > m->max_umq)
        m->max_umq = l->umq;
    if (l->prq + l->umq > m->max_pending)
        m->max_pending = l->prq + l->umq;
}

/** Close the figures after the last operation. */
static void finish(const lens_t *l, vm_wl_measure_t *m)
{
    m->end_prq = l->prq;
    m->end_umq = l->umq;
    m->mean_search_len = m->searches ? l->search_len_sum / (double)m->searches : 0;
}

void vm_wl_analyze(const vm_trace_t *t, const uint32_t *out, vm_wl_measure_t *m)
{
    lens_t l = {0, 0, 0};
    memset(m, 0, sizeof *m);
    for (size_t i = 0; i < t->n; i++)
        track(&t->ops[i], out[i], &l, m);
    finish(&l, m);
}

int vm_wl_run_measured(const vm_wl_prep_t *p, const vm_wl_backend_t *b, uint32_t *out,
                       vm_wl_measure_t *m, char *err, size_t errlen)
{
    lens_t l = {0, 0, 0};
    vm_wl_sample_t s = {0, 0, 0};
    memset(m, 0, sizeof *m);
    if (b->sample)
        b->sample(b->self, &s);
    m->bytes_empty = m->bytes_peak = m->bytes_max = s.bytes;
    m->queues_peak = s.queues;
    uint64_t base_inspected = s.inspected;
    for (size_t i = 0; i < p->t->n; i++) {
        int rc = vm_wl_run(p, b, i, i + 1, out, err, errlen);
        if (rc)
            return rc;
        uint64_t before = m->max_pending;
        track(&p->t->ops[i], out[i], &l, m);
        int peak = m->max_pending > before;
        if ((peak || i % VM_WL_SAMPLE_EVERY == 0) && b->sample) {
            b->sample(b->self, &s);
            m->bytes_max = s.bytes > m->bytes_max ? s.bytes : m->bytes_max;
            if (peak) {
                m->bytes_peak = s.bytes;
                m->queues_peak = s.queues;
            }
        }
    }
    finish(&l, m);
    if (b->sample) {
        b->sample(b->self, &s);
        m->inspected = s.inspected - base_inspected;
    }
    return 0;
}

size_t vm_wl_first_difference(const uint32_t *a, const uint32_t *b, size_t n)
{
    size_t i = 0;
    while (i < n && a[i] == b[i])
        i++;
    return i;
}
