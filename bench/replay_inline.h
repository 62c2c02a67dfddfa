// replay_inline.h -- the replay loop of workloads/replay.c (vm_wl_run) as a template over
// the queue's calls, so that a queue whose calls are defined in headers is compiled into the
// loop with no call boundary: the ob1 and UCX designs (baseline_ob1.h, baseline_ucx.h) as
// Open MPI and UCX compile their matching into their receive paths, and vmatch through
// vmatch_inline.h as an MPI library that embeds it would.  vm_wl_run calls every
// implementation through function pointers instead (and the baselines add a virtual call).
//
// A Calls type has the five calls of a replay backend without the self argument:
//   int post(bits, care, cls, req, msg_out), arrive(bits, cls, msg, req_out),
//   probe(bits, care, cls, remove, msg_out), cancel(req), remove(msg).
#pragma once

#include "baseline_util.h"
#include "replay.h"
#include "vmatch_inline.h"

#include <cstdint>
#include <cstdio>

namespace vmb
{

// A design's class Q (the calls of Baseline, non-virtual) as Calls: the class id is not
// theirs (the designs keep collective traffic apart by its context bits).
template <class Q> struct QueueCalls {
    Q &q;
    VMB_INLINE int post(uint64_t bits, uint64_t care, uint32_t, void *req, void **msg_out)
    {
        return q.post(bits, care, req, msg_out);
    }
    VMB_INLINE int arrive(uint64_t bits, uint32_t, void *msg, void **req_out)
    {
        return q.arrive(bits, msg, req_out);
    }
    VMB_INLINE int probe(uint64_t bits, uint64_t care, uint32_t, int remove, void **msg_out)
    {
        return q.probe(bits, care, remove, msg_out);
    }
    VMB_INLINE int cancel(void *req) { return q.cancel(req); }
    VMB_INLINE int remove(void *msg) { return q.remove_unexpected(msg); }
};

// A vmatch engine through vmatch_inline.h: the exact post and arrival, and an exact probe that
// removes, inline where they hit a bucket line (the rest is the library's call inside them);
// cancels and removals are the library's calls (vmatch_inline.h has no inline form of them).
struct InlineEngineCalls {
    vmatch_engine_t *e;
    VMB_INLINE int post(uint64_t bits, uint64_t care, uint32_t cls, void *req, void **msg_out)
    {
        return vmatch_inline_post(e, bits, care, cls, req, msg_out);
    }
    VMB_INLINE int arrive(uint64_t bits, uint32_t cls, void *msg, void **req_out)
    {
        return vmatch_inline_arrive(e, bits, cls, msg, req_out);
    }
    VMB_INLINE int probe(uint64_t bits, uint64_t care, uint32_t cls, int remove, void **msg_out)
    {
        return vmatch_inline_probe(e, bits, care, cls, remove, msg_out);
    }
    VMB_INLINE int cancel(void *req) { return vmatch_cancel(e, req); }
    VMB_INLINE int remove(void *msg) { return vmatch_remove_unexpected(e, msg); }
};

// A search's result as an outcome: true with res the index of the token it matched among n
// from base, or true with res untouched (VM_WL_NONE) when it found none (rc == none_rc);
// false for a failure or a payload that is not one of the trace's.
inline bool replay_took(int rc, int none_rc, const void *got, const char *base, uint32_t n,
                        uint32_t &res)
{
    if (rc != VMATCH_MATCHED)
        return rc == none_rc;
    uintptr_t d = (uintptr_t)got - (uintptr_t)base;
    res = d < n ? (uint32_t)d : n;
    return res != n;
}

// A failed call or a payload that is not the trace's, as vm_wl_run reports it; returns the
// code (VMATCH_EINVAL for a bad payload or result).
__attribute__((noinline, cold)) inline int replay_bad(const vm_wl_prep_t *p, size_t i, int rc,
                                                      char *err, size_t errlen)
{
    const char *k = vm_trace_kind_name((vm_trace_kind_t)p->t->ops[i].kind);
    if (rc < 0)
        snprintf(err, errlen, "operation %zu (%s): %s", i, k, vmatch_strerror(rc));
    else
        snprintf(err, errlen, "operation %zu (%s): result %d or its payload is not the trace's",
                 i, k, rc);
    return rc < 0 ? rc : VMATCH_EINVAL;
}

// vm_wl_run with the calls of c compiled into the loop: replays operations [from, to) of p,
// out[i] gets operation i's outcome; 0, or the negative code with a message in err.
template <class Calls>
int replay_inline(const vm_wl_prep_t *p, Calls &c, size_t from, size_t to, uint32_t *out,
                  char *err, size_t errlen)
{
    const vm_trace_op_t *ops = p->t->ops;
    uint32_t nreq = p->t->nreq, nmsg = p->t->nmsg;
    for (size_t i = from; i < to; i++) {
        const vm_trace_op_t *o = &ops[i];
        void *got = nullptr;
        uint32_t res = VM_WL_NONE;
        int rc = VMATCH_EINVAL;
        bool ok = false;
        switch (o->kind) {
        case VM_TRACE_POST:
            rc = c.post(p->bits[i], p->care[i], p->cls[i], &p->req_tok[o->id], &got);
            ok = replay_took(rc, VMATCH_QUEUED, got, p->msg_tok, nmsg, res);
            break;
        case VM_TRACE_ARRIVE:
            rc = c.arrive(p->bits[i], p->cls[i], &p->msg_tok[o->id], &got);
            ok = replay_took(rc, VMATCH_QUEUED, got, p->req_tok, nreq, res);
            break;
        case VM_TRACE_PROBE:
        case VM_TRACE_IMPROBE:
            rc = c.probe(p->bits[i], p->care[i], p->cls[i], o->kind == VM_TRACE_IMPROBE, &got);
            ok = replay_took(rc, VMATCH_ENOTFOUND, got, p->msg_tok, nmsg, res);
            break;
        case VM_TRACE_CANCEL:
        case VM_TRACE_REMOVE:
            rc = o->kind == VM_TRACE_CANCEL ? c.cancel(&p->req_tok[o->id])
                                            : c.remove(&p->msg_tok[o->id]);
            res = rc == VMATCH_OK ? o->id : VM_WL_NONE;
            ok = rc == VMATCH_OK || rc == VMATCH_ENOTFOUND;
            break;
        }
        if (!ok)
            return replay_bad(p, i, rc, err, errlen);
        out[i] = res;
    }
    return 0;
}

// The calls of a Calls object behind a replay backend's function pointers (self: the Calls
// object), for the untimed passes that go through vm_wl_run_measured.
template <class Calls> struct BackendOf {
    static Calls &of(void *self) { return *static_cast<Calls *>(self); }
    static int post(void *self, uint64_t bits, uint64_t care, uint32_t cls, void *req,
                    void **msg)
    {
        return of(self).post(bits, care, cls, req, msg);
    }
    static int arrive(void *self, uint64_t bits, uint32_t cls, void *msg, void **req)
    {
        return of(self).arrive(bits, cls, msg, req);
    }
    static int probe(void *self, uint64_t bits, uint64_t care, uint32_t cls, int remove,
                     void **msg)
    {
        return of(self).probe(bits, care, cls, remove, msg);
    }
    static int cancel(void *self, void *req) { return of(self).cancel(req); }
    static int remove(void *self, void *msg) { return of(self).remove(msg); }
};

} // namespace vmb
