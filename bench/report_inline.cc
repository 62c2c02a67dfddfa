// report_inline.cc -- the contenders compiled into the replay loop, and the headline they
// give the report.
//
// The baselines of the tables (baseline.h) are called through a function pointer and a
// virtual call per operation, as vmatch's library calls are: the tables compare designs at
// the same call cost.  UCX and Open MPI do not pay that cost: UCX inlines its bucket walk
// (ucp/tag/tag_match.inl) and ob1 its per-peer lists into their receive paths.  The inline
// contenders replay a workload with their calls compiled into the loop (replay_inline.h):
//   ob1-inl, ucx-inl  the classes of baseline_ob1.h and baseline_ucx.h, the same code as the
//                     baselines ob1 and ucx, called directly (so the same bytes too);
//   hash-inl          the default engine (vmatch_create(""), or --inline-spec's) through
//                     vmatch_inline.h: an exact post or arrival that hits a bucket line
//                     runs in the loop, the rest is the library's call, as an MPI library
//                     embedding vmatch runs it.
//   ob1-compact, ucx-compact  the same algorithms with compact pooled nodes
//                     (baseline_ob1_compact.h, baseline_ucx_compact.h), called directly.
// The headline (report_headline.cc) sets hash-inl against the fastest of the four peers.
#include "replay_calls.h"
#include "replay_inline.h"
#include "report_sections.h"

#include "baseline_ob1.h"
#include "baseline_ob1_compact.h"
#include "baseline_ucx.h"
#include "baseline_ucx_compact.h"

namespace vmr
{

namespace
{

template <class Q> std::unique_ptr<InlineReplay> make_design(const vm_trace_t &t, std::string &)
{
    return std::unique_ptr<InlineReplay>(new DesignReplay<Q>(vmb::Layout(), t.nprocs));
}

template <class Q>
std::unique_ptr<InlineReplay> make_design_in(const vmb::Layout &l, uint32_t nprocs)
{
    return std::unique_ptr<InlineReplay>(new DesignReplay<Q>(l, nprocs));
}

// The default engine through vmatch_inline.h (its classes, statistics and memory are the
// library engine's: vm_wl_vmatch_backend's, with the inline post and arrival).
class EngineReplay final : public InlineReplay
{
  public:
    explicit EngineReplay(vmatch_engine_t *e) : calls_{e}
    {
        vm_wl_vmatch_backend(e, &b);
        b.post = post;
        b.arrive = arrive;
    }
    ~EngineReplay() override { vmatch_destroy(calls_.e); }

    int run(const vm_wl_prep_t *p, size_t from, size_t to, uint32_t *out, char *err,
            size_t errlen) override
    {
        return vmb::replay_inline(p, calls_, from, to, out, err, errlen);
    }

  private:
    static int post(void *self, uint64_t bits, uint64_t care, uint32_t cls, void *req,
                    void **msg)
    {
        return vmatch_inline_post(static_cast<vmatch_engine_t *>(self), bits, care, cls, req,
                                  msg);
    }
    static int arrive(void *self, uint64_t bits, uint32_t cls, void *msg, void **req)
    {
        return vmatch_inline_arrive(static_cast<vmatch_engine_t *>(self), bits, cls, msg, req);
    }

    vmb::InlineEngineCalls calls_;
};

std::string g_inline_spec; // --inline-spec

std::unique_ptr<InlineReplay> make_engine(const vm_trace_t &t, std::string &err)
{
    char spec[1024];
    vmatch_engine_t *e = nullptr;
    int rc = vmatch_inline_create(
        vm_wl_engine_spec(&t, g_inline_spec.c_str(), spec, sizeof spec), &e);
    if (rc < 0) {
        err = std::string(vmatch_strerror(rc)) + " (" + vmatch_last_error() + ")";
        return nullptr;
    }
    return std::unique_ptr<InlineReplay>(new EngineReplay(e));
}

} // namespace

bool set_inline_spec(const std::string &spec, std::string &why)
{
    std::string resolved;
    if (!check_spec(spec, resolved, why))
        return false;
    g_inline_spec = spec;
    return true;
}

const std::string &inline_spec()
{
    return g_inline_spec;
}

const std::vector<InlineInfo> &inline_engines()
{
    static const std::vector<InlineInfo> list = {
        {kHashInlineLabel,
         "the default engine through vmatch_inline.h, compiled into the replay loop",
         make_engine, nullptr},
        {kOb1InlineLabel, "ob1's design (baseline_ob1.h) compiled into the replay loop",
         make_design<vmb::Ob1Queue>, make_design_in<vmb::Ob1Queue>},
        {kUcxInlineLabel, "ucx's design (baseline_ucx.h) compiled into the replay loop",
         make_design<vmb::UcxQueue>, make_design_in<vmb::UcxQueue>},
        {kOb1CompactLabel,
         "ob1's algorithm with compact pooled nodes (baseline_ob1_compact.h), in the loop",
         make_design<vmb::Ob1Compact>, make_design_in<vmb::Ob1Compact>},
        {kUcxCompactLabel,
         "UCX's algorithm with compact pooled nodes (baseline_ucx_compact.h), in the loop",
         make_design<vmb::UcxCompact>, make_design_in<vmb::UcxCompact>},
    };
    return list;
}

bool named_engine(const std::string &label, Engine &en)
{
    en.label = label;
    for (const vmb::BaselineInfo &b : vmb::baselines())
        if (label == b.name) {
            en.base = &b;
            en.resolved = b.models;
            return true;
        }
    for (const InlineInfo &x : inline_engines())
        if (label == x.label) {
            std::string why;
            en.inl = &x;
            en.resolved = x.models;
            if (label == kHashInlineLabel && check_spec(g_inline_spec, en.resolved, why))
                en.resolved += " (vmatch_inline.h)";
            return true;
        }
    return false;
}

} // namespace vmr
