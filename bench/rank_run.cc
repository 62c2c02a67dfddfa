// rank_run.cc -- vmatch_rank's runs: every trace prepared in the run's layout and replayed on
// the reference model, each rank's profile recorded, then every candidate checked (an
// untimed pass per rank) and timed (interleaved repetitions, each replaying every rank).
// Instances are vmatch_report's (make_instance), except the peers', which this file makes in
// the traces' layout (the report's use the default one).
#include "rank.h"

#include "replay_calls.h"
#include "replay_inline.h"

extern "C" {
#include "ref.h"
}

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

namespace vrk
{

using vmr::fmt;

namespace
{

void set_layout(vm_wl_backend_t &b, const vmb::Layout &l)
{
    b.ctx_bits = l.ctx_bits;
    b.src_bits = l.src_bits;
    b.tag_bits = l.tag_bits;
}

// Whether candidate c replays the plain preparation (class 0 everywhere): the peers.
bool plain(const Candidate &c)
{
    return c.en.base || c.peer;
}

// A new instance of c for rank trace r, bound to its preparation; nullptr with err.
std::unique_ptr<vmr::Instance> instance(const Candidate &c, const RunShape &shape, RankTrace &r,
                                        std::string &err)
{
    std::unique_ptr<vmr::Instance> in;
    if (c.en.base) {
        in.reset(new vmr::Instance());
        in->bl = c.en.base->make(shape.layout, shape.nprocs);
        vmr::fill_backend<vmr::BaselineCalls>(in->b, in->bl.get());
        set_layout(in->b, shape.layout);
        in->b.sample = vmr::BaselineCalls::sample;
    } else if (c.en.inl && c.en.inl->design) { // a peer's design inline, in the traces' layout
        in.reset(new vmr::Instance());
        in->ir = c.en.inl->design(shape.layout, shape.nprocs);
        in->b = in->ir->b;
    } else {
        std::string prof;
        if (c.en.profiled)
            prof = c.user_prof.empty() ? r.profile : profile_path(c.user_prof, r.rank);
        if (!(in = vmr::make_instance(c.en, r.t, err, prof)))
            return nullptr;
    }
    vm_wl_prep_t &p = plain(c) ? r.plain : r.vm;
    char e[512];
    if (in->b.ctx_bits != shape.layout.ctx_bits || in->b.src_bits != shape.layout.src_bits ||
        in->b.tag_bits != shape.layout.tag_bits) {
        err = fmt("its layout (%u/%u/%u) is not the traces' (%u/%u/%u)", in->b.ctx_bits,
                  in->b.src_bits, in->b.tag_bits, shape.layout.ctx_bits, shape.layout.src_bits,
                  shape.layout.tag_bits);
        return nullptr;
    }
    if (vm_wl_rebind(&p, &in->b, e, sizeof e) < 0) {
        err = e;
        return nullptr;
    }
    return in;
}

// One timed replay set of c on rank trace r: replays until min_ms of CPU time are timed (on
// one instance when the trace ends with both queues empty, else a new one each time, made
// outside the timing); ms per replay of the whole trace, or -1 with c.error (c.wrong when the
// outcomes changed).
double timed(Candidate &c, const RunShape &shape, RankTrace &r, double min_ms,
             std::vector<uint32_t> &got)
{
    bool reusable = r.ref.end_prq == 0 && r.ref.end_umq == 0;
    vm_wl_prep_t &p = plain(c) ? r.plain : r.vm;
    uint64_t ns = 0, runs = 0;
    std::unique_ptr<vmr::Instance> in;
    char err[512];
    size_t n = r.t.n;
    do {
        std::string why;
        if (!in || !reusable) {
            in.reset();
            if (!(in = instance(c, shape, r, why))) {
                c.error = fmt("rank %lld: %s", (long long)r.rank, why.c_str());
                return -1;
            }
        }
        vmr::InlineReplay *ir = in->ir.get();
        uint64_t t0 = vm_wl_cpu_ns();
        int rc = ir ? ir->run(&p, 0, n, got.data(), err, sizeof err)
                    : vm_wl_run(&p, &in->b, 0, n, got.data(), err, sizeof err);
        ns += vm_wl_cpu_ns() - t0;
        runs++;
        if (rc || vm_wl_first_difference(r.want.data(), got.data(), n) < n) {
            c.wrong = rc == 0;
            c.error = fmt("rank %lld: %s", (long long)r.rank,
                          rc ? err : "outcomes changed between repetitions");
            return -1;
        }
    } while ((double)ns < min_ms * 1e6);
    return (double)ns / (double)runs / 1e6;
}

// The untimed pass of c: every rank's outcomes against the reference, entries inspected and
// bytes at the peak.  False with c.error (and c.wrong when a match differs).
bool check(Candidate &c, const RunShape &shape, std::vector<RankTrace> &tr,
           std::vector<uint32_t> &got)
{
    for (RankTrace &r : tr) {
        std::string why;
        std::unique_ptr<vmr::Instance> in = instance(c, shape, r, why);
        char err[512];
        vm_wl_measure_t m{};
        if (!in || vm_wl_run_measured(plain(c) ? &r.plain : &r.vm, &in->b, got.data(), &m, err,
                                      sizeof err) < 0) {
            c.error = fmt("rank %lld: %s", (long long)r.rank, in ? err : why.c_str());
            return false;
        }
        size_t at = vm_wl_first_difference(r.want.data(), got.data(), r.t.n);
        if (at < r.t.n) {
            c.wrong = true;
            c.error = fmt("rank %lld (%s), operation %zu: matched other than the reference",
                          (long long)r.rank, r.path.c_str(), at);
            return false;
        }
        c.inspected += m.inspected;
        c.searches += m.searches;
        c.bytes_peak = std::max(c.bytes_peak, m.bytes_peak);
    }
    return true;
}

// Replay r on a recorder and save its profile into r.profile; false with why.
bool record(RankTrace &r, std::vector<uint32_t> &out, std::string &why)
{
    std::unique_ptr<vmr::Instance> in = vmr::make_instance(vmr::recorder_engine(), r.t, why);
    if (!in)
        return false;
    char e[512];
    out.resize(r.t.n);
    if (vm_wl_rebind(&r.vm, &in->b, e, sizeof e) < 0 ||
        vm_wl_run(&r.vm, &in->b, 0, r.t.n, out.data(), e, sizeof e) < 0) {
        why = e;
        return false;
    }
    int rc = vmatch_profile_save(in->e, r.profile.c_str());
    if (rc < 0)
        why = fmt("vmatch_profile_save: %s (%s)", vmatch_strerror(rc), vmatch_last_error());
    return rc >= 0;
}

} // namespace

bool prepare_traces(const RunShape &shape, std::vector<RankTrace> &tr, std::string &err)
{
    for (RankTrace &r : tr) {
        char e[512];
        vm_wl_backend_t b{};
        set_layout(b, shape.layout);
        if (vm_wl_prepare(&r.plain, &r.t, &b, e, sizeof e) < 0) {
            err = r.path + ": " + e;
            return false;
        }
        r.prepared = true; // from here release() frees both preparations
        ref_model_t ref;
        ref_init(&ref);
        vmr::fill_backend<vmr::RefCalls>(b, &ref);
        set_layout(b, shape.layout);
        r.want.assign(r.t.n, VM_WL_NONE);
        int rc = vm_wl_run(&r.plain, &b, 0, r.t.n, r.want.data(), e, sizeof e);
        ref_fini(&ref);
        if (rc < 0) {
            err = r.path + ": the reference model: " + e;
            return false;
        }
        vm_wl_analyze(&r.t, r.want.data(), &r.ref);
        std::string why;
        std::unique_ptr<vmr::Instance> in =
            vmr::make_instance(vmr::recorder_engine(), r.t, why);
        if (!in) {
            err = r.path + ": " + vmr::kRecorderSpec + ": " + why;
            return false;
        }
        if (vm_wl_prepare(&r.vm, &r.t, &in->b, e, sizeof e) < 0) {
            err = r.path + ": " + e;
            memset(&r.vm, 0, sizeof r.vm);
            return false;
        }
    }
    return true;
}

bool record_profiles(const Options &o, std::vector<RankTrace> &tr, std::string &err)
{
    std::vector<uint32_t> out;
    for (RankTrace &r : tr) {
        std::string why;
        r.temp_profile = o.profiles.empty();
        r.profile = r.temp_profile ? vmr::temp_file("vmatch-rank", why)
                                   : profile_path(o.profiles, r.rank);
        if (r.profile.empty() || !record(r, out, why)) {
            err = r.path + ": recording its profile" +
                  (r.profile.empty() ? "" : " into " + r.profile) + ": " + why;
            return false;
        }
    }
    return true;
}

void release(std::vector<RankTrace> &tr)
{
    for (RankTrace &r : tr) {
        if (r.temp_profile && !r.profile.empty())
            unlink(r.profile.c_str());
        if (r.prepared) {
            vm_wl_prep_free(&r.plain);
            if (r.vm.t)
                vm_wl_prep_free(&r.vm);
        }
        vm_trace_free(&r.t);
    }
}

void run_candidates(const Options &o, const RunShape &shape, std::vector<RankTrace> &tr,
                    std::vector<Candidate> &cands, bool progress)
{
    size_t most = 1;
    for (const RankTrace &r : tr)
        most = std::max(most, r.t.n);
    std::vector<uint32_t> got(most);
    std::vector<size_t> order;
    for (size_t i = 0; i < cands.size(); i++) {
        Candidate &c = cands[i];
        c.total.assign((size_t)o.reps, NAN);
        c.rank_ms.assign(tr.size(), std::vector<double>((size_t)o.reps, NAN));
        if (check(c, shape, tr, got))
            order.push_back(i);
    }
    std::mt19937_64 rng(20260101);
    for (int rep = 0; rep < o.reps; rep++) {
        if (progress)
            fprintf(stderr, "\rvmatch_rank: repetition %d of %d", rep + 1, o.reps);
        std::shuffle(order.begin(), order.end(), rng);
        for (size_t i : order) {
            Candidate &c = cands[i];
            if (!c.error.empty())
                continue;
            if (c.over_budget)
                continue;
            double sum = 0;
            for (size_t k = 0; k < tr.size() && sum >= 0; k++) {
                double ms = timed(c, shape, tr[k], o.min_ms, got);
                c.rank_ms[k][(size_t)rep] = ms < 0 ? NAN : ms;
                sum = ms < 0 ? -1 : sum + ms;
            }
            if (sum >= 0)
                c.total[(size_t)rep] = sum;
            // A design this slow (a list on long queues) has shown where it stands.
            c.over_budget = sum > o.budget_s * 1e3 && rep + 1 < o.reps;
        }
    }
    if (progress)
        fprintf(stderr, "\r%40s\r", "");
}

} // namespace vrk
