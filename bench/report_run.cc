// report_run.cc -- running a workload: engine instances behind the replay backend, the
// reference model's outcomes, the untimed checking pass and the interleaved timed
// repetitions of every engine (the method is described at the top of vmatch_report.cc).
#include "report_common.h"

#include "gen.h"

extern "C" {
#include "ref.h"
}
#include "replay_calls.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

namespace vmr
{

namespace
{

// A figure of e's policy by key (vmatch_stat), or 0 when the policy keeps none.
uint64_t policy_figure(const vmatch_engine_t *e, const char *key)
{
    uint64_t v = 0;
    return vmatch_stat(e, key, &v) == VMATCH_OK ? v : 0;
}

// The correct outcomes: the trace on the reference model.
bool reference(const vm_trace_t &t, uint32_t *out, vm_wl_measure_t &m, char *err, size_t errlen)
{
    ref_model_t ref;
    ref_init(&ref);
    vm_wl_backend_t b{};
    fill_backend<RefCalls>(b, &ref);
    vm_wl_prep_t p;
    bool ok = vm_wl_prepare(&p, &t, &b, err, errlen) == 0;
    if (ok) {
        ok = vm_wl_run(&p, &b, 0, t.n, out, err, errlen) == 0;
        vm_wl_prep_free(&p);
    }
    ref_fini(&ref);
    if (ok)
        vm_wl_analyze(&t, out, &m);
    return ok;
}

// The N of "iters=N" in a generator's description, or 1.
unsigned iters_of(const std::string &desc)
{
    size_t at = (" " + desc).find(" iters=");
    if (at == std::string::npos)
        return 1;
    long v = strtol(desc.c_str() + at + 6, nullptr, 10);
    return v > 1 && v < 1000000 ? (unsigned)v : 1;
}

} // namespace

// A new instance for trace t, or nullptr with err.  profile: the file a profiled engine reads.
std::unique_ptr<Instance> make_instance(const Engine &en, const vm_trace_t &t, std::string &err,
                                        const std::string &profile)
{
    std::unique_ptr<Instance> in(new Instance());
    if (en.inl) {
        if (!(in->ir = en.inl->make(t, err)))
            return nullptr;
        in->b = in->ir->b;
        return in;
    }
    if (en.base) {
        in->bl = en.base->make(vmb::Layout(), t.nprocs);
        fill_backend<BaselineCalls>(in->b, in->bl.get());
        in->b.sample = BaselineCalls::sample;
        return in;
    }
    char spec[2048];
    std::string own = en.profiled ? en.spec + " profile=" + profile : en.spec;
    int rc = vmatch_create(vm_wl_engine_spec(&t, own.c_str(), spec, sizeof spec), &in->e);
    if (rc < 0) {
        err = std::string(vmatch_strerror(rc)) + " (" + vmatch_last_error() + ")";
        return nullptr;
    }
    vm_wl_vmatch_backend(in->e, &in->b);
    return in;
}

Report::Report(const Options &o, std::vector<Engine> engines)
    : o_(o), engines_(std::move(engines))
{
    for (size_t i = 0; i < engines_.size(); i++)
        if (engines_[i].label == kYardstick)
            yard_ = i;
}

// Generate, check and time one workload.
void Report::run(const std::string &name, const std::string &spec, bool sweep, size_t idx,
                 size_t total)
{
    Row row;
    row.name = name;
    row.spec = spec;
    row.sweep = sweep;
    row.cells.resize(engines_.size());
    vm_trace_t t;
    char err[512], desc[512];
    vm_trace_init(&t);
    uint64_t t0 = vm_wl_now_ns();
    if (vm_wl_generate(spec.c_str(), &t, desc, sizeof desc, err, sizeof err)) {
        fprintf(stderr, "vmatch_report: %s: %s\n", name.c_str(), err);
        failed_ = true;
        return;
    }
    row.gen_s = (double)(vm_wl_now_ns() - t0) / 1e9;
    row.desc = desc;
    row.ops = t.n;
    for (size_t i = 0; i < t.n; i++)
        row.wild += t.ops[i].kind != VM_TRACE_ARRIVE && t.ops[i].kind != VM_TRACE_CANCEL &&
                    t.ops[i].kind != VM_TRACE_REMOVE &&
                    (t.ops[i].src == VM_TRACE_ANY || t.ops[i].tag == VM_TRACE_ANY);
    std::vector<uint32_t> want(t.n ? t.n : 1), got(t.n ? t.n : 1);
    if (!reference(t, want.data(), row.ref, err, sizeof err)) {
        fprintf(stderr, "vmatch_report: %s: reference: %s\n", name.c_str(), err);
        failed_ = true;
        return;
    }
    // A repeating workload (iters=N, N > 1, in the generator's description) is timed in
    // two parts, its first iteration and the later ones, when the reference has both
    // queues empty after the first.  first: a view of the first iteration's operations
    // (the whole trace otherwise), which first_iter engines replay alone.
    row.iters = iters_of(row.desc);
    vm_trace_t first = t;
    if (row.iters > 1 && t.n % row.iters == 0) {
        first.n = t.n / row.iters;
        vm_wl_measure_t fm;
        vm_wl_analyze(&first, want.data(), &fm);
        if (fm.end_prq == 0 && fm.end_umq == 0)
            row.iter_ops = first.n;
    }
    first.n = row.iter_ops ? row.iter_ops : t.n;
    uint64_t w0 = vm_wl_now_ns();
    profile_.clear();
    for (const Engine &en : engines_)
        if (en.profiled && profile_.empty() && !record_profile(t, err, sizeof err)) {
            fprintf(stderr, "vmatch_report: %s: recording a profile: %s\n", name.c_str(), err);
            profile_ = "-"; // the profiled engines then fail to create, with a message
        }
    // Untimed pass per engine: prepare, check outcomes, sample memory at the peak.
    std::vector<vm_wl_prep_t> preps(engines_.size());
    std::vector<bool> prepared(engines_.size(), false);
    for (size_t i = 0; i < engines_.size(); i++) {
        Cell &c = row.cells[i];
        const vm_trace_t &mine = engines_[i].first_iter ? first : t;
        if (engines_[i].first_iter && !row.iter_ops && i != yard_) {
            c.error = "not run: the workload does not repeat";
            continue;
        }
        std::string why;
        std::unique_ptr<Instance> in = make_instance(engines_[i], t, why, profile_);
        if (!in) {
            c.error = why;
            continue;
        }
        if (vm_wl_prepare(&preps[i], &mine, &in->b, err, sizeof err)) {
            c.error = err;
            continue;
        }
        prepared[i] = true;
        if (vm_wl_run_measured(&preps[i], &in->b, got.data(), &c.m, err, sizeof err)) {
            c.error = err;
            continue;
        }
        c.diff_at = vm_wl_first_difference(want.data(), got.data(), mine.n);
        c.wrong = c.diff_at < mine.n;
        c.ok = !c.wrong;
        if (in->e) {
            vmatch_stats(in->e, &c.end);
            c.end_partners = policy_figure(in->e, "pnp.partners");
            c.end_levels =
                policy_figure(in->e, "pnp.levels") + policy_figure(in->e, "unified.levels");
            c.has_end = true;
        }
    }
    // Timed repetitions, engines in a new random order each time.
    int reps = o_.reps;
    std::vector<size_t> order;
    for (size_t i = 0; i < engines_.size(); i++)
        if (row.cells[i].ok)
            order.push_back(i);
    std::vector<bool> over_budget(engines_.size(), false);
    bool reusable = row.ref.end_prq == 0 && row.ref.end_umq == 0;
    for (auto &c : row.cells) {
        c.ns.assign((size_t)reps, NAN);
        if (row.iter_ops) {
            c.ns_first.assign((size_t)reps, NAN);
            c.ns_later.assign((size_t)reps, NAN);
        }
    }
    for (int r = 0; r < reps; r++) {
        std::shuffle(order.begin(), order.end(), rng_);
        for (size_t i : order) {
            Cell &c = row.cells[i];
            if (!c.ok || over_budget[i] || (i == yard_ && !yard_runs(r)))
                continue;
            const vm_trace_t &mine = engines_[i].first_iter ? first : t;
            double ns1 = NAN, ns2 = NAN;
            double ns = timed(engines_[i], mine, preps[i], reusable, row.iter_ops, want, got, c,
                              ns1, ns2);
            if (ns < 0)
                continue;
            c.ns[(size_t)r] = ns;
            if (row.iter_ops) {
                c.ns_first[(size_t)r] = ns1;
                c.ns_later[(size_t)r] = ns2;
            }
            if (ns * (double)mine.n / 1e9 > o_.budget_s)
                over_budget[i] = true; // one repetition is all this one gets
        }
    }
    for (size_t i = 0; i < engines_.size(); i++)
        if (prepared[i])
            vm_wl_prep_free(&preps[i]);
    vm_trace_free(&t);
    if (!profile_.empty() && profile_ != "-")
        unlink(profile_.c_str());
    profile_.clear();
    double secs = (double)(vm_wl_now_ns() - w0) / 1e9;
    fprintf(o_.log, "  [%2zu/%zu] %-28s %8zu ops, longest PRQ %6llu UMQ %6llu, %5.1f s\n", idx,
            total, name.c_str(), row.ops, (unsigned long long)row.ref.max_prq,
            (unsigned long long)row.ref.max_umq, secs);
    fflush(o_.log);
    rows_.push_back(std::move(row));
}

// Whether the yardstick runs in repetition r: yard_reps of the reps, spread evenly.
bool Report::yard_runs(int r) const
{
    int n = o_.reps, k = o_.yard_reps;
    if (k <= 0 || k >= n)
        return true;
    return (r + 1) * k / n > r * k / n;
}

// Replay t once, untimed, on kRecorderSpec with profile.record=on and save its profile
// into a new temporary file, whose name goes to profile_.  False with err on failure.
bool Report::record_profile(const vm_trace_t &t, char *err, size_t errlen)
{
    std::string why;
    profile_ = temp_file("vmatch-profile", why);
    if (profile_.empty()) {
        snprintf(err, errlen, "%s", why.c_str());
        return false;
    }
    Engine rec = recorder_engine();
    std::unique_ptr<Instance> in = make_instance(rec, t, why);
    vm_wl_prep_t p;
    bool ok = in && vm_wl_prepare(&p, &t, &in->b, err, errlen) == 0;
    if (!in)
        snprintf(err, errlen, "%s", why.c_str());
    if (ok) {
        std::vector<uint32_t> out(t.n ? t.n : 1);
        ok = vm_wl_run(&p, &in->b, 0, t.n, out.data(), err, errlen) == 0;
        vm_wl_prep_free(&p);
    }
    int rc = ok ? vmatch_profile_save(in->e, profile_.c_str()) : 0;
    if (rc < 0) {
        snprintf(err, errlen, "vmatch_profile_save: %s (%s)", vmatch_strerror(rc),
                 vmatch_last_error());
        ok = false;
    }
    if (!ok) {
        unlink(profile_.c_str());
        profile_.clear();
    }
    return ok;
}

// One repetition: replays until min_ms of CPU time are timed; ns per operation.  A trace
// that ends with both queues empty is replayed again on the same instance (its pools
// warm), unless the options ask for a fresh one each time; any other gets a new instance
// each time.  split (a repeating workload, the operations of its first iteration, less
// than t.n): the first iteration and the rest are timed apart, into ns1 and ns2.
double Report::timed(const Engine &en, const vm_trace_t &t, vm_wl_prep_t &p, bool reusable,
                     size_t split, const std::vector<uint32_t> &want,
                     std::vector<uint32_t> &got, Cell &c, double &ns1, double &ns2)
{
    uint64_t ns = 0, ops = 0, a = 0, a_ops = 0;
    size_t k = split && split < t.n ? split : t.n;
    char err[512];
    std::unique_ptr<Instance> in;
    do {
        std::string why;
        if (!in || !reusable || o_.fresh) {
            in.reset();
            in = make_instance(en, t, why, profile_);
            if (!in || vm_wl_rebind(&p, &in->b, err, sizeof err)) {
                c.error = in ? std::string(err) : why;
                c.ok = false;
                return -1;
            }
        }
        // An inline contender replays with its calls compiled into its own loop.
        InlineReplay *ir = in->ir.get();
        uint64_t t0 = vm_wl_cpu_ns();
        int rc = ir ? ir->run(&p, 0, k, got.data(), err, sizeof err)
                    : vm_wl_run(&p, &in->b, 0, k, got.data(), err, sizeof err);
        uint64_t t1 = vm_wl_cpu_ns();
        if (rc == 0 && k < t.n)
            rc = ir ? ir->run(&p, k, t.n, got.data(), err, sizeof err)
                    : vm_wl_run(&p, &in->b, k, t.n, got.data(), err, sizeof err);
        uint64_t t2 = vm_wl_cpu_ns();
        ns += t2 - t0;
        ops += t.n;
        a += t1 - t0;
        a_ops += k;
        if (rc || vm_wl_first_difference(want.data(), got.data(), t.n) < t.n) {
            c.error = rc ? err : "outcomes changed between repetitions";
            c.wrong = rc == 0;
            c.ok = false;
            return -1;
        }
    } while (t.n && (double)ns < o_.min_ms * 1e6);
    if (split && a_ops)
        ns1 = (double)a / (double)a_ops;
    if (split && k < t.n && ops > a_ops)
        ns2 = (double)(ns - a) / (double)(ops - a_ops);
    return ops ? (double)ns / (double)ops : 0;
}

} // namespace vmr
