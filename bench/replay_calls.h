// replay_calls.h -- replay backends (workloads/replay.h) shared by vmatch_report and
// vmatch_rank: over a baseline, over the reference model, and a design's class compiled into
// the replay loop in a given layout.
#pragma once

#include "replay_inline.h"
#include "report_common.h"

extern "C" {
#include "ref.h"
}

namespace vmr
{

// The calls of a replay backend over a baseline (class ids are not theirs).
struct BaselineCalls {
    static vmb::Baseline *of(void *self) { return static_cast<vmb::Baseline *>(self); }
    static int post(void *self, uint64_t bits, uint64_t care, uint32_t, void *req, void **msg)
    {
        return of(self)->post(bits, care, req, msg);
    }
    static int arrive(void *self, uint64_t bits, uint32_t, void *msg, void **req)
    {
        return of(self)->arrive(bits, msg, req);
    }
    static int probe(void *self, uint64_t bits, uint64_t care, uint32_t, int remove, void **msg)
    {
        return of(self)->probe(bits, care, remove, msg);
    }
    static int cancel(void *self, void *req) { return of(self)->cancel(req); }
    static int remove(void *self, void *msg) { return of(self)->remove_unexpected(msg); }
    static void sample(void *self, vm_wl_sample_t *s)
    {
        s->inspected = of(self)->inspected();
        s->bytes = of(self)->bytes();
        s->queues = of(self)->queues();
    }
};

// The calls of a replay backend over the reference model (the correct outcomes).
struct RefCalls {
    static ref_model_t *of(void *self) { return static_cast<ref_model_t *>(self); }
    static int post(void *self, uint64_t bits, uint64_t care, uint32_t, void *req, void **msg)
    {
        return ref_post(of(self), bits, care, req, msg);
    }
    static int arrive(void *self, uint64_t bits, uint32_t, void *msg, void **req)
    {
        return ref_arrive(of(self), bits, msg, req);
    }
    static int probe(void *self, uint64_t bits, uint64_t care, uint32_t, int remove, void **msg)
    {
        return ref_probe(of(self), bits, care, remove, msg);
    }
    static int cancel(void *self, void *req) { return ref_cancel(of(self), req); }
    static int remove(void *self, void *msg) { return ref_remove_unexpected(of(self), msg); }
};

// A peer's design class Q compiled into the replay loop (ob1-inl, ucx-inl) with layout l:
// its bytes and queues are the baseline's (the same class).
template <class Q> class DesignReplay final : public InlineReplay
{
  public:
    DesignReplay(const vmb::Layout &l, uint32_t nprocs) : q_(l, nprocs)
    {
        fill_backend<vmb::BackendOf<vmb::QueueCalls<Q>>>(b, &calls_);
        b.ctx_bits = l.ctx_bits;
        b.src_bits = l.src_bits;
        b.tag_bits = l.tag_bits;
        b.sample = sample;
    }

    int run(const vm_wl_prep_t *p, size_t from, size_t to, uint32_t *out, char *err,
            size_t errlen) override
    {
        return vmb::replay_inline(p, calls_, from, to, out, err, errlen);
    }

  private:
    static void sample(void *self, vm_wl_sample_t *s)
    {
        const Q &q = static_cast<vmb::QueueCalls<Q> *>(self)->q;
        s->inspected = q.inspected();
        s->bytes = q.bytes();
        s->queues = q.queues();
    }

    Q q_;
    vmb::QueueCalls<Q> calls_{q_};
};

} // namespace vmr
