// vmatch_report.cc -- the workload report of scripts/bench: every generated workload replayed
// on every library engine and every baseline, time per operation as a ratio to the
// MPICH-style baseline, bytes per queued entry, raw results as JSON and a plot; then the pnp
// section: partner / non-partner queues (policy=pnp, pnp-static) against the targets of
// their issue -- the hot-spot gather at P=2048, m=10 repeated 5 times (the FDS time steps)
// for several pnp.threshold / pnp.cap / pnp.move, its first iteration and the later ones
// timed apart; pnp / single on sparse and short-queue workloads; bytes and queues at N = 1024
// and 4096.
//
//   vmatch_report [--full] [--out DIR] [--reps N] [--only TEXT] [--engines L1,L2,...]
//                 [--no-pnp | --pnp-only]
//   vmatch_report --machine | --list
//
// Method.  Each workload is generated once (workloads/gen.h) and replayed first on the
// reference model (tests/ref.c) to get the correct outcome of every operation.  Each engine
// then makes an untimed pass that records its outcomes (they must equal the reference's,
// or its cells say WRONG) and samples its memory at the peak.  The timed repetitions follow:
// in each repetition the engines run in a fresh random order, each on a new instance, the
// same replay loop for all (workloads/replay.c), repeated until at least --min-ms have been
// timed.  Cells are medians over the repetitions; the ratio to mpich is taken within each
// repetition, so a noisy moment slows both sides, and the spread is the interquartile range
// of those per-repetition ratios.  A sweep of the hot-spot gather over P gives the plot.
// The pnp section runs the same way, with its own engines per part (see "the pnp section");
// its pnp-static engines read a profile recorded from the same workload just before.  A
// workload that repeats (iters=N) is timed in two parts per replay, its first iteration and
// the rest; there the slow yardstick may replay the first iteration alone and run in fewer
// repetitions than the others (the gather part does both; the table says so).
#include "baseline.h"
#include "gen.h"
#include "replay.h"
#include "stats.h"
#include "trace.h"
#include "vmatch.h"

extern "C" {
#include "ref.h"
}

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <vector>

namespace
{

// ---- the suite ----

struct Workload {
    const char *name; // row label
    const char *spec; // generator spec
};

// Moderate sizes: the whole default report takes a couple of minutes on two cores.
const Workload kSuite[] = {
    {"gather P=1024 m=4 reverse", "gather P=1024 m=4 order=reverse interleave=0"},
    {"gather P=1024 m=4 random", "gather P=1024 m=4 order=random early=25"},
    {"gather P=1024 m=4 rr", "gather P=1024 m=4 order=rr early=50"},
    {"neighbours 26 x2", "neighbours P=512 k=26 msgs=2 steps=200"},
    {"neighbours 6 random x4", "neighbours P=512 k=6 topo=random msgs=4 steps=400"},
    {"master/worker", "master P=256 tasks=20000 depth=32"},
    {"gather-linear", "gather-linear P=256 calls=40"},
    {"gather-binomial", "gather-binomial P=256 calls=1000"},
    {"bcast-binomial", "bcast-binomial P=256 calls=4000"},
    {"bcast-pipeline", "bcast-pipeline P=64 bytes=1048576 calls=40"},
    {"allreduce-rd P=200", "allreduce-rd P=200 calls=1000"},
    {"allreduce-ring", "allreduce-ring P=64 calls=80"},
    {"allreduce-rab", "allreduce-rab P=256 calls=500"},
    {"allreduce-rm k=7", "allreduce-rm P=256 k=7 calls=500 skew=200"},
    {"allgather-bruck", "allgather-bruck P=256 calls=1000"},
    {"allgather-ring", "allgather-ring P=256 calls=40"},
    {"alltoall-linear", "alltoall-linear P=256 calls=40"},
    {"alltoall-pairwise", "alltoall-pairwise P=256 calls=40"},
    {"barrier-flat", "barrier-flat P=256 calls=40"},
    {"mixed", "mixed P=512 k=26 steps=200"},
};

// --full: the large sizes (list designs take seconds per replay here).
const Workload kFullSuite[] = {
    {"gather P=4096 m=16 reverse", "gather P=4096 m=16 order=reverse interleave=0"},
    {"gather P=4096 m=16 random", "gather P=4096 m=16 order=random early=25"},
    {"gather P=1024 m=100 rr", "gather P=1024 m=100 order=rr early=50"},
    {"neighbours 26 x4", "neighbours P=4096 k=26 msgs=4 steps=1000"},
    {"neighbours 26 random x8", "neighbours P=4096 k=26 topo=random msgs=8 steps=500"},
    {"master/worker", "master P=4096 tasks=200000 depth=256"},
    {"gather-linear", "gather-linear P=4096 calls=20"},
    {"gather-binomial", "gather-binomial P=4096 calls=2000"},
    {"bcast-binomial", "bcast-binomial P=4096 calls=20000"},
    {"bcast-pipeline", "bcast-pipeline P=1024 bytes=16777216 calls=20"},
    {"allreduce-rd P=4000", "allreduce-rd P=4000 calls=2000"},
    {"allreduce-ring", "allreduce-ring P=1024 calls=40"},
    {"allreduce-rab", "allreduce-rab P=4096 calls=1000"},
    {"allreduce-rm k=8", "allreduce-rm P=4096 k=8 calls=1000 skew=300"},
    {"allgather-bruck", "allgather-bruck P=4096 calls=2000"},
    {"allgather-ring", "allgather-ring P=4096 calls=10"},
    {"alltoall-linear", "alltoall-linear P=4096 calls=10"},
    {"alltoall-pairwise", "alltoall-pairwise P=4096 calls=10"},
    {"barrier-flat", "barrier-flat P=4096 calls=10"},
    {"mixed", "mixed P=4096 k=26 steps=1000"},
};

// The plot: hot-spot gathers, receives pre-posted in random order, over P.
const unsigned kSweepP[] = {4, 16, 64, 256, 1024};
const unsigned kFullSweepP[] = {4, 16, 64, 256, 1024, 4096};

// Library engines, as data: an engine vmatch_create rejects on this build or machine is left
// out with a note; one whose resolved spec equals an earlier one's is shown once.
struct LibSpec {
    const char *label, *spec;
};
const LibSpec kLibSpecs[] = {
    {"ll", "policy=single storage=ll"},
    {"lla", "policy=single storage=lla"},
    {"llv", "policy=single storage=llv"},
    {"llv-avx512", "policy=single storage=llv simd=avx512"},
    {"llv-avx2", "policy=single storage=llv simd=avx2"},
    {"llv-scalar", "policy=single storage=llv simd=scalar"},
    // Partner / non-partner queues over llv with the defaults (pnp.threshold=100, pnp.cap=1);
    // the pnp section below varies them.  It needs nprocs, which every generated trace gives.
    {"pnp", "policy=pnp storage=llv"},
};

const char *const kYardstick = "mpich";

// Records the profiles the profiled (pnp-static) engines read: any policy records the same
// per-source insertion counts.
const char *const kRecorderSpec = "policy=single storage=llv profile.record=on";

// ---- engines ----

struct Engine {
    std::string label, spec, resolved, note;
    const vmb::BaselineInfo *base = nullptr; // a baseline, else a vmatch spec
    // pnp-static: a profile of the same workload is recorded first (an untimed replay with
    // profile.record=on) and the engine gets "profile=FILE" after its spec.
    bool profiled = false;
    // On a workload that repeats (a generator's iters=N > 1, each iteration ending with both
    // queues empty): replay the first iteration only, in the untimed pass and when timed,
    // for 1/N of the cost.  Not run on other workloads, unless it is the yardstick.  A list
    // keeps no queue state between iterations, but its later iterations can still be
    // slower (free lists hand objects back scattered): its time is then understated.
    bool first_iter = false;
};

// One live instance of an engine, with its replay backend.
struct Instance {
    vm_wl_backend_t b{};
    vmatch_engine_t *e = nullptr;
    std::unique_ptr<vmb::Baseline> bl;
    ~Instance() { vmatch_destroy(e); }
};

vmb::Baseline *bl_of(void *self)
{
    return static_cast<vmb::Baseline *>(self);
}
int bl_post(void *self, uint64_t bits, uint64_t care, uint32_t, void *req, void **msg)
{
    return bl_of(self)->post(bits, care, req, msg);
}
int bl_arrive(void *self, uint64_t bits, uint32_t, void *msg, void **req)
{
    return bl_of(self)->arrive(bits, msg, req);
}
int bl_probe(void *self, uint64_t bits, uint64_t care, uint32_t, int remove, void **msg)
{
    return bl_of(self)->probe(bits, care, remove, msg);
}
int bl_cancel(void *self, void *req)
{
    return bl_of(self)->cancel(req);
}
int bl_remove(void *self, void *msg)
{
    return bl_of(self)->remove_unexpected(msg);
}
void bl_sample(void *self, vm_wl_sample_t *s)
{
    s->inspected = bl_of(self)->inspected();
    s->bytes = bl_of(self)->bytes();
    s->queues = bl_of(self)->queues();
}

// A new instance for trace t, or nullptr with err.  profile: the file a profiled engine reads.
std::unique_ptr<Instance> make_instance(const Engine &en, const vm_trace_t &t, std::string &err,
                                        const std::string &profile = "")
{
    std::unique_ptr<Instance> in(new Instance());
    if (en.base) {
        vmb::Layout l; // the default layout, as the library engines use
        in->bl = en.base->make(l, t.nprocs);
        vm_wl_backend_t &b = in->b;
        b.self = in->bl.get();
        b.ctx_bits = l.ctx_bits;
        b.src_bits = l.src_bits;
        b.tag_bits = l.tag_bits;
        b.post = bl_post;
        b.arrive = bl_arrive;
        b.probe = bl_probe;
        b.cancel = bl_cancel;
        b.remove = bl_remove;
        b.sample = bl_sample;
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

// The reference model as a backend (for the correct outcomes).
int ref_b_post(void *self, uint64_t bits, uint64_t care, uint32_t, void *req, void **msg)
{
    return ref_post(static_cast<ref_model_t *>(self), bits, care, req, msg);
}
int ref_b_arrive(void *self, uint64_t bits, uint32_t, void *msg, void **req)
{
    return ref_arrive(static_cast<ref_model_t *>(self), bits, msg, req);
}
int ref_b_probe(void *self, uint64_t bits, uint64_t care, uint32_t, int remove, void **msg)
{
    return ref_probe(static_cast<ref_model_t *>(self), bits, care, remove, msg);
}
int ref_b_cancel(void *self, void *req)
{
    return ref_cancel(static_cast<ref_model_t *>(self), req);
}
int ref_b_remove(void *self, void *msg)
{
    return ref_remove_unexpected(static_cast<ref_model_t *>(self), msg);
}

// ---- statistics ----

using vmb::median;
using vmb::quantile;

// ---- results ----

struct Cell {
    std::vector<double> ns; // ns per operation, one per repetition (NaN: not run)
    // A repeating workload (Row::iter_ops > 0): ns per operation over its first iteration
    // and over the later ones, timed in the same replays as ns (NaN: not run).
    std::vector<double> ns_first, ns_later;
    vm_wl_measure_t m{};
    bool wrong = false, ok = false;
    size_t diff_at = 0;
    std::string error;
    vmatch_stats_t end{}; // vmatch engines: vmatch_stats after the untimed pass
    bool has_end = false;
};

struct Row {
    std::string name, spec, desc;
    bool sweep = false;
    size_t ops = 0;
    // Repeating workloads: the iterations, and the operations of one (0: not split).
    unsigned iters = 1;
    size_t iter_ops = 0;
    vm_wl_measure_t ref{};
    double gen_s = 0;
    std::vector<Cell> cells; // one per engine
};

struct Options {
    bool full = false, machine_only = false, list = false;
    bool pnp = true, main_suite = true; // --no-pnp, --pnp-only
    bool reps_given = false;
    int reps = 0; // 0: the default of the mode
    // The yardstick (mpich) runs in only this many of the repetitions, spread evenly over
    // them (0: in all); the ratios to it are taken over those.
    int yard_reps = 0;
    // A new instance for every timed replay, for every engine: an adaptive design (pnp)
    // would otherwise start a second replay of a workload with what it learnt in the first.
    bool fresh = false;
    double min_ms = 5, budget_s = 20;
    std::string out, only, engines;
};

// ---- the machine ----

std::string read_file(const char *path)
{
    std::ifstream f(path);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

struct Machine {
    std::string cpu, kernels, chosen, default_spec, os;
    long cpus = 0;
    int numa_nodes = 0;
    bool virt = false;
};

Machine probe_machine()
{
    Machine m;
    std::string info = read_file("/proc/cpuinfo");
    size_t p = info.find("model name");
    if (p != std::string::npos) {
        size_t c = info.find(':', p), e = info.find('\n', p);
        if (c != std::string::npos && c < e)
            m.cpu = info.substr(c + 2, e - c - 2);
    }
    if (m.cpu.empty())
        m.cpu = "unknown CPU";
    m.virt = info.find(" hypervisor") != std::string::npos;
    m.cpus = sysconf(_SC_NPROCESSORS_ONLN);
    for (int n = 0; n < 4096; n++) {
        char path[64];
        snprintf(path, sizeof path, "/sys/devices/system/node/node%d", n);
        struct stat st;
        if (stat(path, &st) == 0)
            m.numa_nodes++;
        else if (n > 64 && m.numa_nodes)
            break;
    }
    for (const char *k : {"avx512", "avx2", "scalar"})
        if (vmatch_simd_available(k))
            m.kernels += std::string(m.kernels.empty() ? "" : " ") + k;
    if (m.kernels.empty())
        m.kernels = "none";
    vmatch_engine_t *e = nullptr;
    if (vmatch_create("", &e) == 0) {
        m.default_spec = vmatch_describe(e);
        m.chosen = vmatch_kernel(e);
        vmatch_destroy(e);
    }
    // The kernel storage=llv would choose, when the default engine has none (ll, lla).
    if (m.chosen == "none") {
        if (vmatch_create("storage=llv", &e) == 0) {
            m.chosen = std::string("none for the default storage; storage=llv picks ") +
                       vmatch_kernel(e);
            vmatch_destroy(e);
        } else {
            m.chosen = "none (the default storage has no vector kernel, and this build no "
                       "storage=llv)";
        }
    }
    struct utsname u;
    if (uname(&u) == 0)
        m.os = std::string(u.sysname) + " " + u.release;
    return m;
}

void print_machine(FILE *f, const Machine &m)
{
    fprintf(f, "machine: %s, %ld CPUs online, %d NUMA node%s%s\n", m.cpu.c_str(), m.cpus,
            m.numa_nodes, m.numa_nodes == 1 ? "" : "s", m.virt ? ", virtual machine" : "");
    fprintf(f, "vector kernels this CPU and build offer: %s; vmatch chose: %s\n",
            m.kernels.c_str(), m.chosen.empty() ? "?" : m.chosen.c_str());
    fprintf(f, "default engine: %s\n", m.default_spec.c_str());
    fprintf(f, "system: %s\n", m.os.c_str());
}

// ---- running ----

std::string fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
std::string fmt(const char *f, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, f);
    vsnprintf(buf, sizeof buf, f, ap);
    va_end(ap);
    return buf;
}

class Report
{
  public:
    Report(const Options &o, std::vector<Engine> engines) : o_(o), engines_(std::move(engines))
    {
        for (size_t i = 0; i < engines_.size(); i++)
            if (engines_[i].label == kYardstick)
                yard_ = i;
    }

    // Generate, check and time one workload.
    void run(const std::string &name, const std::string &spec, bool sweep, size_t idx,
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
                fprintf(stderr, "vmatch_report: %s: recording a profile: %s\n", name.c_str(),
                        err);
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
                double ns = timed(engines_[i], mine, preps[i], reusable, row.iter_ops, want,
                                  got, c, ns1, ns2);
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
        printf("  [%2zu/%zu] %-28s %8zu ops, longest PRQ %6llu UMQ %6llu, %5.1f s\n", idx,
               total, name.c_str(), row.ops, (unsigned long long)row.ref.max_prq,
               (unsigned long long)row.ref.max_umq, secs);
        fflush(stdout);
        rows_.push_back(std::move(row));
    }

    bool failed() const { return failed_; }
    const std::vector<Row> &rows() const { return rows_; }
    const std::vector<Engine> &engines() const { return engines_; }
    size_t yard() const { return yard_; }
    const Options &options() const { return o_; }

  private:
    // Whether the yardstick runs in repetition r: yard_reps of the reps, spread evenly.
    bool yard_runs(int r) const
    {
        int n = o_.reps, k = o_.yard_reps;
        if (k <= 0 || k >= n)
            return true;
        return (r + 1) * k / n > r * k / n;
    }

    // The N of "iters=N" in a generator's description, or 1.
    static unsigned iters_of(const std::string &desc)
    {
        size_t at = (" " + desc).find(" iters=");
        if (at == std::string::npos)
            return 1;
        long v = strtol(desc.c_str() + at + 6, nullptr, 10);
        return v > 1 && v < 1000000 ? (unsigned)v : 1;
    }

    // Replay t once, untimed, on kRecorderSpec with profile.record=on and save its profile
    // into a new temporary file, whose name goes to profile_.  False with err on failure.
    bool record_profile(const vm_trace_t &t, char *err, size_t errlen)
    {
        const char *tmp = getenv("TMPDIR");
        std::string path = std::string(tmp && *tmp ? tmp : "/tmp") + "/vmatch-profile-XXXXXX";
        std::vector<char> name(path.begin(), path.end());
        name.push_back('\0');
        int fd = mkstemp(name.data());
        if (fd < 0) {
            snprintf(err, errlen, "cannot create %s: %s", path.c_str(), strerror(errno));
            return false;
        }
        close(fd);
        profile_ = name.data();
        Engine rec;
        rec.label = "recorder";
        rec.spec = kRecorderSpec;
        std::string why;
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

    // The correct outcomes: the trace on the reference model.
    static bool reference(const vm_trace_t &t, uint32_t *out, vm_wl_measure_t &m, char *err,
                          size_t errlen)
    {
        ref_model_t ref;
        ref_init(&ref);
        vm_wl_backend_t b{};
        b.self = &ref;
        b.ctx_bits = 16;
        b.src_bits = 24;
        b.tag_bits = 24;
        b.post = ref_b_post;
        b.arrive = ref_b_arrive;
        b.probe = ref_b_probe;
        b.cancel = ref_b_cancel;
        b.remove = ref_b_remove;
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

    // One repetition: replays until min_ms of CPU time are timed; ns per operation.  A trace
    // that ends with both queues empty is replayed again on the same instance (its pools
    // warm), unless the options ask for a fresh one each time; any other gets a new instance
    // each time.  split (a repeating workload, the operations of its first iteration, less
    // than t.n): the first iteration and the rest are timed apart, into ns1 and ns2.
    double timed(const Engine &en, const vm_trace_t &t, vm_wl_prep_t &p, bool reusable,
                 size_t split, const std::vector<uint32_t> &want, std::vector<uint32_t> &got,
                 Cell &c, double &ns1, double &ns2)
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
            uint64_t t0 = vm_wl_cpu_ns();
            int rc = vm_wl_run(&p, &in->b, 0, k, got.data(), err, sizeof err);
            uint64_t t1 = vm_wl_cpu_ns();
            if (rc == 0 && k < t.n)
                rc = vm_wl_run(&p, &in->b, k, t.n, got.data(), err, sizeof err);
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

    Options o_;
    std::vector<Engine> engines_;
    std::vector<Row> rows_;
    size_t yard_ = (size_t)-1;
    std::mt19937_64 rng_{20260101};
    bool failed_ = false;
    // The profile file of the workload being run, for profiled engines ("-": none was made).
    std::string profile_;
};

// ---- output ----

// Ratio of an engine's time to the yardstick's within each repetition.
std::vector<double> rep_ratios(const Cell &c, const Cell &y)
{
    std::vector<double> v;
    for (size_t r = 0; r < c.ns.size() && r < y.ns.size(); r++)
        if (!std::isnan(c.ns[r]) && !std::isnan(y.ns[r]) && y.ns[r] > 0)
            v.push_back(c.ns[r] / y.ns[r]);
    return v;
}

double bytes_per_entry(const Cell &c)
{
    if (!c.m.max_pending)
        return NAN;
    return ((double)c.m.bytes_peak - (double)c.m.bytes_empty) / (double)c.m.max_pending;
}

// s right-aligned in w columns; UTF-8 continuation bytes (of the ±) take no column.
std::string pad(const std::string &s, int w)
{
    int cols = 0;
    for (unsigned char ch : s)
        cols += (ch & 0xc0) != 0x80;
    return std::string(cols < w ? (size_t)(w - cols) : 0, ' ') + s;
}

std::string cell_text(const Cell &c, const Cell &y, bool is_yard)
{
    if (c.wrong)
        return "WRONG";
    if (!c.error.empty() || c.ns.empty())
        return "error";
    std::vector<double> ok;
    for (double x : c.ns)
        if (!std::isnan(x))
            ok.push_back(x);
    if (ok.empty())
        return "-";
    if (is_yard)
        return fmt("%.1fns", median(ok));
    std::vector<double> r = rep_ratios(c, y);
    if (r.empty())
        return "-";
    double m = median(r), spread = 100 * (quantile(r, 0.75) - quantile(r, 0.25)) / 2 / m;
    // Two decimals, or two significant digits for ratios below 0.1 (0.0034, not 0.00).
    std::string v = m >= 0.1 ? fmt("%.2f", m) : fmt("%.2g", m);
    return r.size() > 1 ? v + fmt("±%.0f", spread) : v;
}

void print_tables(FILE *f, const Report &rep, const Options &o)
{
    const std::vector<Engine> &en = rep.engines();
    size_t y = rep.yard();
    const int w = 10, namew = 27;
    fprintf(f,
            "\nTime per operation as a ratio to the MPICH-style baseline (%s column: its "
            "ns per operation).\n",
            kYardstick);
    fprintf(f,
            "Below 1 is faster than %s.  A cell is the median over %d repetitions of the "
            "ratio measured\nwithin each repetition, ±half its interquartile range in "
            "percent; WRONG: the engine\nmatched differently from the reference model.\n\n",
            kYardstick, o.reps);
    fprintf(f, "%-*s %8s %6s", namew, "workload", "ops", "max q");
    for (const Engine &e : en)
        fprintf(f, " %*s", w, e.label.c_str());
    fprintf(f, "\n");
    std::vector<std::vector<double>> logs(en.size());
    for (const Row &row : rep.rows()) {
        if (row.sweep)
            continue;
        fprintf(f, "%-*s %8zu %6llu", namew, row.name.c_str(), row.ops,
                (unsigned long long)row.ref.max_pending);
        for (size_t i = 0; i < en.size(); i++) {
            fprintf(f, " %s", pad(cell_text(row.cells[i], row.cells[y], i == y), w).c_str());
            std::vector<double> r = rep_ratios(row.cells[i], row.cells[y]);
            if (!r.empty() && !row.cells[i].wrong)
                logs[i].push_back(std::log(median(r)));
        }
        fprintf(f, "\n");
    }
    fprintf(f, "%-*s %8s %6s", namew, "geometric mean", "", "");
    for (size_t i = 0; i < en.size(); i++) {
        double s = 0;
        for (double l : logs[i])
            s += l;
        double g = logs[i].empty() ? NAN : std::exp(s / (double)logs[i].size());
        std::string c = i == y          ? "1"
                        : std::isnan(g) ? "-"
                        : g >= 0.1      ? fmt("%.2f", g)
                                        : fmt("%.2g", g);
        fprintf(f, " %*s", w, c.c_str());
    }
    fprintf(f, "\n\nBytes held per queued entry at the peak: (bytes at the peak - bytes of the "
               "empty engine) /\nentries queued then.  Where few entries are queued this is "
               "the first allocation (vmatch:\na 64 KiB pool slab); baselines count what "
               "matching adds beyond MPI's request objects\n(see bench/baseline_*.cc).\n\n");
    fprintf(f, "%-*s %8s %6s", namew, "workload", "", "max q");
    for (const Engine &e : en)
        fprintf(f, " %*s", w, e.label.c_str());
    fprintf(f, "\n");
    for (const Row &row : rep.rows()) {
        if (row.sweep)
            continue;
        fprintf(f, "%-*s %8s %6llu", namew, row.name.c_str(), "",
                (unsigned long long)row.ref.max_pending);
        for (size_t i = 0; i < en.size(); i++) {
            double b = bytes_per_entry(row.cells[i]);
            std::string c = row.cells[i].ok && !std::isnan(b) ? fmt("%.1f", b) : "-";
            fprintf(f, " %*s", w, c.c_str());
        }
        fprintf(f, "\n");
    }
    fprintf(f, "\nengines:\n");
    for (const Engine &e : en)
        fprintf(f, "  %-11s %s\n", e.label.c_str(),
                e.base ? e.base->models : e.resolved.c_str());
    for (const Row &row : rep.rows())
        for (size_t i = 0; i < en.size(); i++) {
            const Cell &c = row.cells[i];
            if (c.wrong)
                fprintf(f, "WRONG: %s on %s: first differs at operation %zu%s%s\n",
                        en[i].label.c_str(), row.name.c_str(), c.diff_at,
                        c.error.empty() ? "" : ": ", c.error.c_str());
            else if (!c.error.empty())
                fprintf(f, "error: %s on %s: %s\n", en[i].label.c_str(), row.name.c_str(),
                        c.error.c_str());
        }
}

std::string json_str(const std::string &s)
{
    std::string o = "\"";
    for (char ch : s) {
        if (ch == '"' || ch == '\\')
            o += '\\', o += ch;
        else if ((unsigned char)ch < 0x20)
            o += fmt("\\u%04x", ch);
        else
            o += ch;
    }
    return o + "\"";
}

std::string json_num(double x)
{
    return std::isnan(x) || std::isinf(x) ? "null" : fmt("%.6g", x);
}

// The engines of a report as a JSON array (ind: the indentation of the array's lines).
void write_json_engines(FILE *f, const Report &rep, const char *ind)
{
    const std::vector<Engine> &en = rep.engines();
    fprintf(f, "[\n");
    for (size_t i = 0; i < en.size(); i++)
        fprintf(f,
                "%s  {\"label\": %s, \"kind\": %s, \"spec\": %s, \"resolved\": %s, "
                "\"first_iteration_only\": %s}%s\n",
                ind, json_str(en[i].label).c_str(), en[i].base ? "\"baseline\"" : "\"vmatch\"",
                json_str(en[i].base ? en[i].base->models
                                    : en[i].spec + (en[i].profiled ? " profile=FILE" : ""))
                    .c_str(),
                json_str(en[i].resolved).c_str(), en[i].first_iter ? "true" : "false",
                i + 1 < en.size() ? "," : "");
    fprintf(f, "%s]", ind);
}

// The workloads of a report as a JSON array: every repetition of every cell, the ratios to the
// yardstick (null when the report has none), memory, and vmatch_stats after the untimed pass.
void write_json_workloads(FILE *f, const Report &rep, const char *ind)
{
    const std::vector<Engine> &en = rep.engines();
    const std::vector<Row> &rows = rep.rows();
    bool have_yard = rep.yard() < en.size();
    fprintf(f, "[\n");
    for (size_t w = 0; w < rows.size(); w++) {
        const Row &r = rows[w];
        fprintf(f,
                "%s  {\"name\": %s, \"spec\": %s, \"sweep\": %s, \"ops\": %zu, "
                "\"searches\": %llu, \"max_prq\": %llu, \"max_umq\": %llu, \"max_pending\": "
                "%llu, \"mean_search_len\": %s, \"iters\": %u, \"iteration_ops\": %zu, "
                "\"results\": {\n",
                ind, json_str(r.name).c_str(), json_str(r.desc).c_str(),
                r.sweep ? "true" : "false", r.ops, (unsigned long long)r.ref.searches,
                (unsigned long long)r.ref.max_prq, (unsigned long long)r.ref.max_umq,
                (unsigned long long)r.ref.max_pending, json_num(r.ref.mean_search_len).c_str(),
                r.iters, r.iter_ops);
        for (size_t i = 0; i < en.size(); i++) {
            const Cell &c = r.cells[i];
            auto arr = [](const std::vector<double> &v) {
                std::string a = "[";
                for (size_t k = 0; k < v.size(); k++)
                    a += (k ? ", " : "") + json_num(v[k]);
                return a + "]";
            };
            std::string ns = arr(c.ns);
            // Repeating workloads: the same replays, split into the first iteration and the
            // later ones.
            if (r.iter_ops)
                ns += ", \"ns_per_op_first_iteration\": " + arr(c.ns_first) +
                      ", \"ns_per_op_later_iterations\": " + arr(c.ns_later);
            std::vector<double> rr;
            if (have_yard)
                rr = rep_ratios(c, r.cells[rep.yard()]);
            std::string end = "null";
            if (c.has_end)
                end = fmt("{\"partners\": %llu, \"levels\": %llu, \"queues\": %llu, "
                          "\"bytes\": %llu, \"searches\": %llu, \"inspected\": %llu}",
                          (unsigned long long)c.end.partners, (unsigned long long)c.end.levels,
                          (unsigned long long)c.end.queues, (unsigned long long)c.end.bytes,
                          (unsigned long long)c.end.searches,
                          (unsigned long long)c.end.inspected);
            fprintf(f,
                    "%s    %s: {\"ok\": %s, \"wrong\": %s, \"error\": %s, \"ns_per_op\": %s, "
                    "\"ratio_median\": %s, \"ratio_q1\": %s, \"ratio_q3\": %s, "
                    "\"inspected_per_search\": %s, \"bytes_empty\": %llu, \"bytes_peak\": "
                    "%llu, \"queues_peak\": %llu, \"bytes_per_entry\": %s, \"stats_end\": "
                    "%s}%s\n",
                    ind, json_str(en[i].label).c_str(), c.ok ? "true" : "false",
                    c.wrong ? "true" : "false", json_str(c.error).c_str(), ns.c_str(),
                    json_num(median(rr)).c_str(), json_num(quantile(rr, 0.25)).c_str(),
                    json_num(quantile(rr, 0.75)).c_str(),
                    json_num(c.m.searches ? (double)c.m.inspected / (double)c.m.searches : NAN)
                        .c_str(),
                    (unsigned long long)c.m.bytes_empty, (unsigned long long)c.m.bytes_peak,
                    (unsigned long long)c.m.queues_peak, json_num(bytes_per_entry(c)).c_str(),
                    end.c_str(), i + 1 < en.size() ? "," : "");
        }
        fprintf(f, "%s  }}%s\n", ind, w + 1 < rows.size() ? "," : "");
    }
    fprintf(f, "%s]", ind);
}

// A part of the pnp section, for the JSON file.
struct JsonPart {
    std::string key;
    const Report *rep;
};

bool write_json(const std::string &path, const Report &rep, const Machine &m, const Options &o,
                const std::vector<std::string> &notes, const std::vector<JsonPart> &pnp)
{
    FILE *f = fopen(path.c_str(), "w");
    if (!f)
        return false;
    fprintf(f,
            "{\n  \"machine\": {\"cpu\": %s, \"cpus\": %ld, \"numa_nodes\": %d, "
            "\"virtual\": %s, \"kernels\": %s, \"chosen\": %s, \"default_spec\": %s, "
            "\"system\": %s},\n",
            json_str(m.cpu).c_str(), m.cpus, m.numa_nodes, m.virt ? "true" : "false",
            json_str(m.kernels).c_str(), json_str(m.chosen).c_str(),
            json_str(m.default_spec).c_str(), json_str(m.os).c_str());
    fprintf(f, "  \"mode\": %s, \"repetitions\": %d, \"min_ms\": %g, \"yardstick\": %s,\n",
            o.full ? "\"full\"" : "\"default\"", o.reps, o.min_ms,
            json_str(kYardstick).c_str());
    fprintf(f, "  \"notes\": [");
    for (size_t i = 0; i < notes.size(); i++)
        fprintf(f, "%s%s", i ? ", " : "", json_str(notes[i]).c_str());
    fprintf(f, "],\n  \"engines\": ");
    write_json_engines(f, rep, "  ");
    fprintf(f, ",\n  \"workloads\": ");
    write_json_workloads(f, rep, "  ");
    // The pnp section: one object per part, each with its own engines and repetitions.
    fprintf(f, ",\n  \"pnp\": {");
    for (size_t k = 0; k < pnp.size(); k++) {
        fprintf(f,
                "%s\n    %s: {\"repetitions\": %d, \"min_ms\": %g, \"engines\": ", k ? "," : "",
                json_str(pnp[k].key).c_str(), pnp[k].rep->options().reps,
                pnp[k].rep->options().min_ms);
        write_json_engines(f, *pnp[k].rep, "      ");
        fprintf(f, ",\n      \"workloads\": ");
        write_json_workloads(f, *pnp[k].rep, "      ");
        fprintf(f, "}");
    }
    fprintf(f, "%s}\n}\n", pnp.empty() ? "" : "\n  ");
    return fclose(f) == 0;
}

// The plot: data (one column per engine) and a gnuplot script writing plot.png.  Library
// engines are solid lines, baselines dashed; every engine has its own colour.
bool write_plot(const std::string &dir, const Report &rep, const Machine &m)
{
    static const char *const colours[] = {"#1f77b4", "#2ca02c", "#d62728", "#ff7f0e",
                                          "#9467bd", "#000000", "#8c564b", "#e377c2",
                                          "#17becf", "#7f7f7f", "#bcbd22", "#393b79"};
    const size_t ncol = sizeof colours / sizeof *colours;
    const std::vector<Engine> &en = rep.engines();
    FILE *d = fopen((dir + "/plot.dat").c_str(), "w");
    if (!d)
        return false;
    fprintf(d, "# hot-spot gather, P-1 peers x 4 messages, receives pre-posted in random "
               "order:\n# entries queued at the peak, then ns per operation of each engine\n"
               "# queued");
    for (const Engine &e : en)
        fprintf(d, " %s", e.label.c_str());
    fprintf(d, "\n");
    for (const Row &r : rep.rows()) {
        if (!r.sweep)
            continue;
        fprintf(d, "%llu", (unsigned long long)r.ref.max_pending);
        for (size_t i = 0; i < en.size(); i++) {
            const Cell &c = r.cells[i];
            std::vector<double> ok;
            for (double x : c.ns)
                if (!std::isnan(x))
                    ok.push_back(x);
            fprintf(d, " %s", c.ok && !ok.empty() ? fmt("%.3f", median(ok)).c_str() : "NaN");
        }
        fprintf(d, "\n");
    }
    fclose(d);
    FILE *g = fopen((dir + "/plot.gp").c_str(), "w");
    if (!g)
        return false;
    fprintf(g,
            "# gnuplot plot.gp (in this folder) writes plot.png\n"
            "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
            "  set terminal pngcairo size 1200,760 font 'Sans,11'\n"
            "} else {\n"
            "  set terminal png size 1200,760\n"
            "}\n"
            "set output 'plot.png'\n"
            "set title \"Hot-spot gather (FDS pattern), receives pre-posted in random "
            "order: time per operation against queue length\\n%s\"\n"
            "set xlabel 'entries queued (P-1 peers x 4 messages)'\n"
            "set ylabel 'ns per operation (median of the repetitions)'\n"
            "set logscale xy\n"
            "set grid xtics ytics mxtics mytics lc rgb '#dddddd'\n"
            "set key top left box opaque title 'solid: vmatch, dashed: baselines'\n"
            "set datafile missing 'NaN'\n",
            m.cpu.c_str());
    fprintf(g, "plot ");
    for (size_t i = 0; i < en.size(); i++)
        fprintf(g,
                "%s'plot.dat' using 1:%zu with linespoints title '%s' lw 2 pt %zu lc rgb '%s' "
                "dt %d",
                i ? ", \\\n     " : "", i + 2, en[i].label.c_str(), (i % 12) + 1,
                colours[i % ncol], en[i].base ? 2 : 1);
    fprintf(g, "\n");
    return fclose(g) == 0;
}

// ---- setup ----

void usage(FILE *f)
{
    fprintf(
        f,
        "usage: vmatch_report [--full] [--out DIR] [--reps N] [--min-ms MS] [--budget S]\n"
        "                     [--only TEXT] [--engines L1,L2,...] [--no-pnp | --pnp-only]\n"
        "       vmatch_report --machine | --list\n"
        "  --full        the large sizes (slow: list designs take seconds per replay), and a\n"
        "                longer pnp section (one-shot gathers, more thresholds, pnp.move=off\n"
        "                at c=8, mpich over every iteration, N = 16384)\n"
        "  --out DIR     write results.json, table.txt, plot.dat and plot.gp there\n"
        "  --reps N      timed repetitions (default 7, --full 3; pnp section: its gathers 7,\n"
        "                mpich in 4 of them, --full 9; its short-queue part 15, --full 27;\n"
        "                given: N, and 3N for the short-queue part)\n"
        "  --min-ms MS   time at least MS per repetition, replaying again (default 5)\n"
        "  --budget S    an engine whose replay takes longer gets one repetition\n"
        "  --only TEXT   only the workloads whose name contains TEXT (pnp section too)\n"
        "  --engines L   only these columns (mpich is always kept; not the pnp section)\n"
        "  --no-pnp      leave out the pnp section; --pnp-only: run only the pnp section\n"
        "The pnp section (after the workload table; about 30 s of CPU) compares policy=pnp\n"
        "and policy=pnp-static with single and the baselines: (a) the hot-spot gather at\n"
        "P=2048, m=10, repeated 5 times (iters=5), against mpich and single+llv for several\n"
        "pnp.threshold / pnp.cap / pnp.move, over all iterations and over the first alone\n"
        "and the later ones, with vmatch_stats partners, levels, queues and which settings\n"
        "meet the target; mpich replays the first iteration alone, in 4 of the 7\n"
        "repetitions, so x mpich is a lower bound (--full: all iterations and repetitions);\n"
        "(b) sparse neighbour and short-queue workloads, pnp / single over ll, lla, llv;\n"
        "(c) bytes and queues at the peak of a gather with N = 1024 and 4096 peers\n"
        "pending, against the ob1-style lists.\n"
        "Environment: VMATCH_REPORT_SPECS='label=spec;...' adds library engines;\n"
        "TMPDIR: where pnp-static's recorded profiles are written (and removed).\n");
}

// Whether vmatch_create takes spec; resolved gets vmatch_describe's text, or why the reason.
// Some policies (pnp) need nprocs, which the replay adds from the trace: such a spec is tried
// again with a stand-in nprocs, and resolved then says "nprocs=P (the trace's)".
bool check_spec(const std::string &spec, std::string &resolved, std::string &why)
{
    vmatch_engine_t *e = nullptr;
    int rc = vmatch_create(spec.c_str(), &e);
    if (rc < 0) {
        why = fmt("%s (%s)", vmatch_strerror(rc), vmatch_last_error());
        const std::string standin = "nprocs=4096";
        if (spec.find("nprocs=") != std::string::npos ||
            vmatch_create((standin + " " + spec).c_str(), &e) < 0)
            return false;
        resolved = vmatch_describe(e);
        size_t at = resolved.find(standin);
        if (at != std::string::npos)
            resolved.replace(at, standin.size(), "nprocs=P (the trace's)");
    } else {
        resolved = vmatch_describe(e);
    }
    vmatch_destroy(e);
    return true;
}

// The engines: library specs (deduplicated by resolved spec, left out when rejected),
// extra specs from the environment, then the baselines.
std::vector<Engine> collect_engines(const Options &o, std::vector<std::string> &notes)
{
    std::vector<std::pair<std::string, std::string>> specs;
    for (const LibSpec &l : kLibSpecs)
        specs.push_back({l.label, l.spec});
    if (const char *env = getenv("VMATCH_REPORT_SPECS")) {
        std::stringstream ss(env);
        std::string item;
        while (std::getline(ss, item, ';')) {
            size_t eq = item.find('=');
            if (eq == std::string::npos || eq == 0) {
                notes.push_back("VMATCH_REPORT_SPECS: '" + item + "' is not label=spec");
                continue;
            }
            specs.push_back({item.substr(0, eq), item.substr(eq + 1)});
        }
    }
    auto wanted = [&](const std::string &label) {
        if (o.engines.empty() || label == kYardstick)
            return true;
        std::string list = "," + o.engines + ",";
        return list.find("," + label + ",") != std::string::npos;
    };
    std::vector<Engine> out;
    for (auto &s : specs) {
        if (!wanted(s.first))
            continue;
        Engine en;
        en.label = s.first;
        en.spec = s.second;
        std::string why;
        if (!check_spec(en.spec, en.resolved, why)) {
            notes.push_back(fmt("%s (\"%s\") left out: %s", s.first.c_str(), s.second.c_str(),
                                why.c_str()));
            continue;
        }
        bool dup = false;
        for (const Engine &x : out)
            if (!x.base && x.resolved == en.resolved) {
                notes.push_back(
                    fmt("%s is the same engine as %s here", en.label.c_str(), x.label.c_str()));
                dup = true;
            }
        if (!dup)
            out.push_back(en);
    }
    for (const vmb::BaselineInfo &b : vmb::baselines()) {
        if (!wanted(b.name))
            continue;
        Engine en;
        en.label = b.name;
        en.base = &b;
        en.resolved = b.models;
        out.push_back(en);
    }
    return out;
}

// ---- the pnp section ----
//
// Partner / non-partner queues (policy=pnp, policy=pnp-static) against the targets of their
// issue, in three parts that each run like the workload report (reference check, untimed
// pass, interleaved timed repetitions, ratios within each repetition):
//   gather  the hot-spot gather at P = 2048, m = 10, repeated 5 times (iters=5, as FDS
//           gathers at every time step), receives in rr and in random order: time per
//           operation as a speedup over mpich and over single+llv for thresholds (t), caps
//           (c) and pnp.move on / off, pnp over ll, and pnp-static with a profile recorded
//           from the same workload; the same over the first iteration alone and over the
//           later ones (x single+llv); vmatch_stats (partners, levels, queues) after one
//           replay and the bytes at the peak; which (t, c, move) settings meet the target.
//           Every replay is on a new instance (pnp would keep its partners otherwise).
//           mpich, 35 us per operation here, replays the first iteration alone and runs in
//           4 of the 7 repetitions (--full: every iteration, every repetition, and the
//           shortcut next to it); its first iteration is its fastest (1.1-1.4x in --full
//           runs), so x mpich is a lower bound.  --full also adds one-shot gathers;
//   sparse  neighbour exchanges and short queues: pnp / single over the same storage;
//   memory  bytes held and queues allocated at the peak of a gather whose every peer has
//           receives pending, N = 1024 and 4096, against the ob1-style per-peer lists.

// What a pnp-section engine is for, in the verdict lines.
enum PnpRole { kRoleOther, kRoleSingleLlv, kRolePnpLlv };

struct PnpSpec {
    const char *label, *spec; // spec nullptr: the baseline of that name
    bool profiled;            // pnp-static: a profile of the same workload is recorded first
    PnpRole role;
    bool full_only;
};

// sqrt(2048) = 45.25, so with c = 46 the bound floor(c * sqrt(N)) = 2081 admits every peer.
// pnp.move is on (the default) unless the label says move=off.
const PnpSpec kPnpGatherSpecs[] = {
    {"mpich", nullptr, false, kRoleOther, false},
    {"ob1", nullptr, false, kRoleOther, false}, // one list per peer, unbounded: a reference
    {"single+ll", "policy=single storage=ll", false, kRoleOther, true},
    {"single+llv", "policy=single storage=llv", false, kRoleSingleLlv, false},
    {"pnp t=100 c=1", "policy=pnp storage=llv pnp.threshold=100 pnp.cap=1", false, kRolePnpLlv,
     false},
    {"pnp t=100 c=8", "policy=pnp storage=llv pnp.threshold=100 pnp.cap=8", false, kRolePnpLlv,
     false},
    {"pnp t=100 c=46", "policy=pnp storage=llv pnp.threshold=100 pnp.cap=46", false,
     kRolePnpLlv, false},
    // The thesis's levels: a new partner's older entries stay in the shared queues.
    {"pnp t=100 c=46 move=off",
     "policy=pnp storage=llv pnp.threshold=100 pnp.cap=46 pnp.move=off", false, kRolePnpLlv,
     false},
    {"pnp t=100 c=8 move=off",
     "policy=pnp storage=llv pnp.threshold=100 pnp.cap=8 pnp.move=off", false, kRolePnpLlv,
     true},
    {"pnp t=20 c=1", "policy=pnp storage=llv pnp.threshold=20 pnp.cap=1", false, kRolePnpLlv,
     true},
    {"pnp t=1000 c=1", "policy=pnp storage=llv pnp.threshold=1000 pnp.cap=1", false,
     kRolePnpLlv, true},
    {"pnp t=1000 c=46", "policy=pnp storage=llv pnp.threshold=1000 pnp.cap=46", false,
     kRolePnpLlv, true},
    {"pnp t=5000 c=1", "policy=pnp storage=llv pnp.threshold=5000 pnp.cap=1", false,
     kRolePnpLlv, true},
    {"pnp+ll t=100 c=46", "policy=pnp storage=ll pnp.threshold=100 pnp.cap=46", false,
     kRoleOther, false},
    {"static+llv c=1", "policy=pnp-static storage=llv pnp.cap=1", true, kRoleOther, false},
    {"static+llv c=46", "policy=pnp-static storage=llv pnp.cap=46", true, kRoleOther, false},
};

// The gather repeated 5 times (iters=5: FDS gathers at every time step; each iteration ends
// with both queues empty), arrivals interleaved at random with the posts.  The report times
// the first iteration apart from the later ones, so the one-shot figure comes with each row.
// --full adds one-shot gathers: some messages early (the standard suite's P=1024 shapes),
// and receives all pre-posted (interleave=0), the FDS shape.
const Workload kPnpGathers[] = {
    {"gather P=2048 m=10 rr x5", "gather P=2048 m=10 order=rr iters=5"},
    {"gather P=2048 m=10 random x5", "gather P=2048 m=10 order=random iters=5"},
};
const Workload kPnpFullGathers[] = {
    {"gather P=2048 m=10 random", "gather P=2048 m=10 order=random early=25"},
    {"gather P=2048 m=10 rr", "gather P=2048 m=10 order=rr early=50"},
    {"gather P=2048 m=10 reverse pre", "gather P=2048 m=10 order=reverse interleave=0"},
    {"gather P=2048 m=10 random pre", "gather P=2048 m=10 order=random interleave=0"},
};

// Storages compared in the sparse part: single and pnp (defaults t=100, c=1) over each.
const char *const kPnpStorages[] = {"ll", "lla", "llv"};

const Workload kPnpSparse[] = {
    {"neighbours 26 x2", "neighbours P=512 k=26 msgs=2 steps=200"},
    {"neighbours 6 random x4", "neighbours P=512 k=6 topo=random msgs=4 steps=400"},
    {"mixed", "mixed P=512 k=26 steps=200"},
    {"short: neighbours 6 x1", "neighbours P=64 k=6 msgs=1 steps=3000"},
    {"neighbours 26 rnd x8 skew",
     "neighbours P=4096 k=26 topo=random msgs=8 steps=100 skew=300"},
    // Queues of one entry: the fixed cost of a call, which the partner lookup must not raise.
    {"short: allreduce-rd P=200", "allreduce-rd P=200 calls=1000"},
};

const PnpSpec kPnpMemorySpecs[] = {
    {"mpich", nullptr, false, kRoleOther, false},
    {"ob1", nullptr, false, kRoleOther, false},
    {"single+ll", "policy=single storage=ll", false, kRoleOther, false},
    {"single+llv", "policy=single storage=llv", false, kRoleOther, false},
    {"pnp c=1", "policy=pnp storage=llv pnp.cap=1", false, kRoleOther, false},
    {"pnp c=46", "policy=pnp storage=llv pnp.cap=46", false, kRoleOther, false},
    {"pnp+ll c=46", "policy=pnp storage=ll pnp.cap=46", false, kRoleOther, false},
};

// Every peer has m = 4 receives pending at the peak (all posted before any message).
const Workload kPnpMemory[] = {
    {"memory N=1024", "gather P=1024 m=4 order=random interleave=0"},
    {"memory N=4096", "gather P=4096 m=4 order=random interleave=0"},
};
const Workload kPnpFullMemory[] = {
    {"memory N=16384", "gather P=16384 m=4 order=random interleave=0"},
};

// Repetitions of the gather part (without --full or --reps), and how many of them mpich
// runs in.
const int kPnpGatherReps = 7, kPnpGatherYardReps = 4;

struct PnpSection {
    std::unique_ptr<Report> gather, sparse, memory;
    std::vector<PnpRole> gather_roles;
    std::vector<std::string> notes;
};

// Engines of a part: baselines by name, vmatch specs checked as in collect_engines (a spec
// this build rejects is left out with a note).  Profiled specs cannot be checked before a
// profile exists; an error shows in their cells.
std::vector<Engine> pnp_engines(const PnpSpec *specs, size_t n, bool full,
                                std::vector<PnpRole> *roles, std::vector<std::string> &notes)
{
    std::vector<Engine> out;
    for (size_t i = 0; i < n; i++) {
        const PnpSpec &s = specs[i];
        if (s.full_only && !full)
            continue;
        Engine en;
        en.label = s.label;
        if (!s.spec) {
            for (const vmb::BaselineInfo &b : vmb::baselines())
                if (en.label == b.name) {
                    en.base = &b;
                    en.resolved = b.models;
                }
            if (!en.base)
                continue;
        } else {
            en.spec = s.spec;
            en.profiled = s.profiled;
            std::string why;
            if (s.profiled) {
                en.resolved = en.spec + " profile=FILE (recorded from the same workload with " +
                              kRecorderSpec + ")";
            } else if (!check_spec(en.spec, en.resolved, why)) {
                notes.push_back(
                    fmt("pnp section: %s (\"%s\") left out: %s", s.label, s.spec, why.c_str()));
                continue;
            }
        }
        out.push_back(en);
        if (roles)
            roles->push_back(s.role);
    }
    return out;
}

void pnp_run_part(Report &rep, const Workload *w, size_t n, const Workload *more, size_t nmore,
                  const Options &o)
{
    std::vector<Workload> list(w, w + n);
    if (o.full)
        list.insert(list.end(), more, more + nmore);
    std::vector<Workload> keep;
    for (const Workload &x : list)
        if (o.only.empty() || strstr(x.name, o.only.c_str()))
            keep.push_back(x);
    for (size_t i = 0; i < keep.size(); i++)
        rep.run(keep[i].name, keep[i].spec, false, i + 1, keep.size());
}

PnpSection run_pnp_section(const Options &o)
{
    PnpSection s;
    // Timed repetitions.  The repeated gathers: kPnpGatherReps (9 with --full), each replay
    // on a new instance.  One replay of the 5 iterations takes mpich about 7 s of CPU (35 us
    // per operation), the others 0.01 to 0.07 s; so mpich replays the first iteration alone
    // (1.5 s; a list keeps nothing between iterations) in kPnpGatherYardReps of them, which
    // keeps the section within about 30 s of CPU.  --full: mpich replays every iteration in
    // every repetition.  The short workloads get three times 5 (9), because their ratios are
    // judged against 1.05.
    Options og = o, os = o, om = o;
    int base = o.reps_given ? o.reps : o.full ? 9 : 5;
    og.reps = o.reps_given ? o.reps : o.full ? 9 : kPnpGatherReps;
    og.yard_reps = o.full ? 0 : std::min(og.reps, kPnpGatherYardReps);
    og.fresh = true;
    os.reps = 3 * base;
    om.reps = 0; // memory: the untimed pass alone
    std::vector<Engine> ge =
        pnp_engines(kPnpGatherSpecs, sizeof kPnpGatherSpecs / sizeof *kPnpGatherSpecs, o.full,
                    &s.gather_roles, s.notes);
    for (size_t i = 0, n = ge.size(); i < n; i++) {
        if (ge[i].label != kYardstick)
            continue;
        if (!o.full) {
            ge[i].first_iter = true;
        } else {
            // --full: mpich replays every iteration; a second mpich column replays the first
            // alone, which shows whether the default run's shortcut holds.
            Engine one = ge[i];
            one.label = std::string(kYardstick) + " it.1 only";
            one.first_iter = true;
            ge.insert(ge.begin() + (long)i + 1, one);
            s.gather_roles.insert(s.gather_roles.begin() + (long)i + 1, kRoleOther);
            break;
        }
    }
    if (og.yard_reps && og.yard_reps < og.reps)
        printf("\n== pnp section: hot-spot gather (%d repetitions, %s in %d of them)\n",
               og.reps, kYardstick, og.yard_reps);
    else
        printf("\n== pnp section: hot-spot gather (%d repetitions)\n", og.reps);
    fflush(stdout);
    s.gather.reset(new Report(og, ge));
    pnp_run_part(*s.gather, kPnpGathers, sizeof kPnpGathers / sizeof *kPnpGathers,
                 kPnpFullGathers, sizeof kPnpFullGathers / sizeof *kPnpFullGathers, o);

    printf("\n== pnp section: sparse neighbours and short queues (%d repetitions)\n", os.reps);
    fflush(stdout);
    std::vector<PnpSpec> sp;
    std::vector<std::string> specs; // keeps the strings PnpSpec points into
    for (const char *st : kPnpStorages) {
        specs.push_back(std::string("single+") + st);
        specs.push_back(std::string("policy=single storage=") + st);
        specs.push_back(std::string("pnp+") + st);
        specs.push_back(std::string("policy=pnp storage=") + st);
    }
    for (size_t i = 0; i < specs.size(); i += 2)
        sp.push_back({specs[i].c_str(), specs[i + 1].c_str(), false, kRoleOther, false});
    s.sparse.reset(new Report(os, pnp_engines(sp.data(), sp.size(), o.full, nullptr, s.notes)));
    pnp_run_part(*s.sparse, kPnpSparse, sizeof kPnpSparse / sizeof *kPnpSparse, nullptr, 0, o);

    printf("\n== pnp section: memory at the peak\n");
    fflush(stdout);
    s.memory.reset(new Report(om, pnp_engines(kPnpMemorySpecs,
                                              sizeof kPnpMemorySpecs / sizeof *kPnpMemorySpecs,
                                              o.full, nullptr, s.notes)));
    pnp_run_part(*s.memory, kPnpMemory, sizeof kPnpMemory / sizeof *kPnpMemory, kPnpFullMemory,
                 sizeof kPnpFullMemory / sizeof *kPnpFullMemory, o);
    return s;
}

// Median of a/b over the repetitions both ran, and half the interquartile range in percent.
bool rep_speedup(const Cell &a, const Cell &b, double &med, double &spread)
{
    std::vector<double> r = rep_ratios(a, b);
    if (r.empty() || a.wrong || b.wrong)
        return false;
    med = median(r);
    spread = 100 * (quantile(r, 0.75) - quantile(r, 0.25)) / 2 / med;
    return true;
}

std::string ratio_text(const Cell &a, const Cell &b, const char *unit)
{
    double m, sp;
    if (!rep_speedup(a, b, m, sp))
        return "-";
    std::string v = m >= 0.1 ? fmt("%.2f", m) : fmt("%.2g", m);
    return v + unit + fmt("±%.0f%%", sp);
}

double median_ns(const Cell &c)
{
    std::vector<double> ok;
    for (double x : c.ns)
        if (!std::isnan(x))
            ok.push_back(x);
    return ok.empty() ? NAN : median(ok);
}

size_t find_engine(const Report &rep, const std::string &label)
{
    for (size_t i = 0; i < rep.engines().size(); i++)
        if (rep.engines()[i].label == label)
            return i;
    return (size_t)-1;
}

// Why a cell shows no figure (or the empty string when it has one).
std::string cell_problem(const Cell &c)
{
    if (c.wrong)
        return "WRONG";
    if (!c.ok || !c.error.empty())
        return "error";
    return "";
}

// Median and quartiles of a[r] / b[r] over the repetitions where both are numbers.
bool vec_ratio(const std::vector<double> &a, const std::vector<double> &b, double &med,
               double &q1, double &q3)
{
    std::vector<double> r;
    for (size_t k = 0; k < a.size() && k < b.size(); k++)
        if (!std::isnan(a[k]) && !std::isnan(b[k]) && b[k] > 0)
            r.push_back(a[k] / b[k]);
    if (r.empty())
        return false;
    med = median(r);
    q1 = quantile(r, 0.25);
    q3 = quantile(r, 0.75);
    return true;
}

// "t=100 c=46 move=on": the pnp keys of a resolved spec.
std::string pnp_setting(const std::string &resolved)
{
    auto val = [&](const char *key) {
        size_t at = resolved.find(std::string(" ") + key + "=");
        if (at == std::string::npos)
            return std::string("?");
        at += strlen(key) + 2;
        return resolved.substr(at, resolved.find(' ', at) - at);
    };
    return "t=" + val("pnp.threshold") + " c=" + val("pnp.cap") + " move=" + val("pnp.move");
}

void print_pnp_gather(FILE *f, const PnpSection &s)
{
    const Report &rep = *s.gather;
    const std::vector<Engine> &en = rep.engines();
    const Options &o = rep.options();
    size_t y = rep.yard(), sl = find_engine(rep, "single+llv");
    bool yard_first = y < en.size() && en[y].first_iter;
    int yard_reps = o.yard_reps > 0 && o.yard_reps < o.reps ? o.yard_reps : o.reps;
    fprintf(f,
            "\npnp (a): hot-spot gather, P-1 = 2047 peers x m = 10 messages to rank 0, "
            "repeated (xN: iters=N,\nthe FDS time steps; every iteration ends with both "
            "queues empty).  pnp finds its partners and\nmakes their queues in the first "
            "iteration and gains in the later ones.\n"
            "  ns/op: median CPU ns per operation over all iterations, %d repetition%s, each "
            "replay on a\n  new instance.  x mpich, x single+llv: how many times faster "
            "than that engine (above 1:\n  faster), the median of the ratio taken within "
            "each repetition, ±half its interquartile\n  range.  it.1 | 2-N: x single+llv "
            "over the first iteration alone | over the later ones\n  (medians, the same "
            "replays timed in two parts).\n",
            o.reps, o.reps == 1 ? "" : "s");
    bool fewer = yard_reps < o.reps;
    if (yard_first)
        fprintf(f,
                "  %s replays the first iteration alone%s.\n  x %s divides its ns/op there by "
                "the engine's over all iterations in the same\n  repetition.  A lower bound: "
                "mpich's later iterations are slower than its first (its\n  request pool "
                "hands cells back in scrambled order, so its list walks jump in memory);\n  "
                "--full times every iteration, with the first-iteration mpich next to it.\n",
                kYardstick,
                fewer ? fmt(", in %d of the %d repetitions", yard_reps, o.reps).c_str() : "",
                kYardstick);
    else if (fewer)
        fprintf(
            f,
            "  %s runs in %d of the %d repetitions; the ratios to it are taken over those.\n",
            kYardstick, yard_reps, o.reps);
    for (size_t i = 0; i < en.size(); i++)
        if (i != y && en[i].first_iter)
            fprintf(f,
                    "  %s: replays the first iteration alone (the default run's shortcut for "
                    "%s); its\n  x %s says how much faster per operation that is than all "
                    "iterations.\n",
                    en[i].label.c_str(), kYardstick, kYardstick);
    fprintf(f, "  inspected: entries a list walk would compare per search.  partners, levels "
               "(extraction\n  rounds that took partners), queues: vmatch_stats after one "
               "replay (the untimed one);\n  KiB: bytes held at the peak.  t = pnp.threshold, "
               "c = pnp.cap, pnp.move on unless the\n  label says move=off (the thesis's "
               "levels); static: policy=pnp-static with a profile\n  recorded from the same "
               "workload.\n");
    // Per pnp+llv engine: whether it met the target on every row, and on a row only within
    // the spread of x single+llv.
    std::vector<int> met_all(en.size(), 1), noisy(en.size(), 0);
    int rows_judged = 0;
    for (const Row &row : rep.rows()) {
        fprintf(f,
                "\n%s  (%s)\n  %zu ops%s, longest PRQ %llu, UMQ %llu, %llu entries at the "
                "peak\n",
                row.name.c_str(), row.desc.c_str(), row.ops,
                row.iter_ops ? fmt(" (%u iterations of %zu)", row.iters, row.iter_ops).c_str()
                             : "",
                (unsigned long long)row.ref.max_prq, (unsigned long long)row.ref.max_umq,
                (unsigned long long)row.ref.max_pending);
        fprintf(f, "  %-23s %8s %12s %12s %11s %9s %8s %6s %6s %6s\n", "engine", "ns/op",
                "x mpich", "x single+llv", row.iter_ops ? "it.1 | 2-N" : "", "inspected",
                "partners", "levels", "queues", "KiB");
        for (size_t i = 0; i < en.size(); i++) {
            const Cell &c = row.cells[i];
            if (en[i].first_iter && !row.iter_ops && i != y)
                continue; // a first-iteration column on a workload that does not repeat
            std::string bad = cell_problem(c);
            if (!bad.empty()) {
                fprintf(f, "  %-23s %8s  %s\n", en[i].label.c_str(), bad.c_str(),
                        c.error.c_str());
                continue;
            }
            double ns = median_ns(c);
            std::string xm = i == y          ? "1"
                             : y < en.size() ? ratio_text(row.cells[y], c, "x")
                                             : "-";
            std::string xs = i == sl          ? "1"
                             : sl < en.size() ? ratio_text(row.cells[sl], c, "x")
                                              : "-";
            std::string split;
            if (row.iter_ops && sl < en.size() && !en[i].first_iter) {
                double m1, m2, lo, hi;
                bool a1 = vec_ratio(row.cells[sl].ns_first, c.ns_first, m1, lo, hi);
                bool a2 = vec_ratio(row.cells[sl].ns_later, c.ns_later, m2, lo, hi);
                split = (a1 ? fmt("%.2f", m1) : std::string("-")) + " | " +
                        (a2 ? fmt("%.2f", m2) : std::string("-"));
            } else if (row.iter_ops) {
                split = "-";
            }
            std::string part = "-", lev = "-", q = "-";
            if (c.has_end) {
                part = fmt("%llu", (unsigned long long)c.end.partners);
                lev = fmt("%llu", (unsigned long long)c.end.levels);
                q = fmt("%llu", (unsigned long long)c.end.queues);
            } else if (en[i].base) {
                q = fmt("%llu", (unsigned long long)c.m.queues_peak);
            }
            fprintf(f, "  %-23s %8s %s %s %11s %9.1f %8s %6s %6s %6.0f\n", en[i].label.c_str(),
                    std::isnan(ns) ? "-" : fmt("%.1f", ns).c_str(), pad(xm, 12).c_str(),
                    pad(xs, 12).c_str(), split.c_str(),
                    c.m.searches ? (double)c.m.inspected / (double)c.m.searches : NAN,
                    part.c_str(), lev.c_str(), q.c_str(), (double)c.m.bytes_peak / 1024);
        }
        // The target: pnp+llv >= 28x faster than mpich and faster than single+llv, per
        // operation over the whole workload.  Each (t, c, move) setting is judged.
        fprintf(f, "  target: pnp+llv >= 28x faster than mpich and faster than single+llv "
                   "(medians; \"noise\":\n  the lower quartile of x single+llv is at or below "
                   "1).\n");
        std::string meet, miss;
        int n_pnp = 0, n_both = 0;
        for (size_t i = 0; i < en.size(); i++) {
            if (s.gather_roles[i] != kRolePnpLlv)
                continue;
            double m = NAN, msp = 0, v = NAN, vlo = NAN, vhi = NAN, m1 = NAN, lo, hi;
            bool hm = y < en.size() && rep_speedup(row.cells[y], row.cells[i], m, msp);
            bool hv = sl < en.size() && !row.cells[i].wrong && !row.cells[sl].wrong &&
                      vec_ratio(row.cells[sl].ns, row.cells[i].ns, v, vlo, vhi);
            if (row.iter_ops && y < en.size())
                vec_ratio(row.cells[y].ns_first, row.cells[i].ns_first, m1, lo, hi);
            if (!hm || !hv) {
                met_all[i] = 0;
                miss += fmt("\n    %-20s no figure", pnp_setting(en[i].resolved).c_str());
                continue;
            }
            n_pnp++;
            bool ok = m >= 28 && v > 1;
            n_both += ok;
            met_all[i] &= ok;
            noisy[i] |= ok && vlo <= 1;
            std::string line =
                fmt("\n    %-20s %6.0fx mpich, %5.2fx single+llv (quartiles %.2f-%.2f)%s",
                    pnp_setting(en[i].resolved).c_str(), m, v, vlo, vhi,
                    ok && vlo <= 1 ? " noise" : "");
            if (!std::isnan(m1))
                line += fmt("; it.1: %.0fx mpich", m1);
            (ok ? meet : miss) += line;
        }
        rows_judged++;
        fprintf(f, "  meet both: %d of %d settings%s\n", n_both, n_pnp, meet.c_str());
        if (!miss.empty())
            fprintf(f, "  miss:%s\n", miss.c_str());
    }
    if (rows_judged > 1) {
        std::string all;
        for (size_t i = 0; i < en.size(); i++)
            if (s.gather_roles[i] == kRolePnpLlv && met_all[i])
                all += "\n    " + pnp_setting(en[i].resolved) +
                       (noisy[i] ? " (noise on some rows)" : "");
        fprintf(f, "\n  pnp+llv settings meeting both targets on every gather above:%s\n",
                all.empty() ? " none" : all.c_str());
    }
}

void print_pnp_sparse(FILE *f, const PnpSection &s)
{
    const Report &rep = *s.sparse;
    fprintf(f,
            "\npnp (b): sparse neighbours and short queues: pnp (t=100, c=1) against single "
            "over the same\nstorage.  single: its median ns per operation; pnp/single: the "
            "ratio of their times taken\nwithin each of %d repetitions, median ±half the "
            "interquartile range (target: at most 1.05).\npartners: vmatch_stats of pnp+llv "
            "after one replay.\n\n",
            rep.options().reps);
    fprintf(f, "  %-27s %6s %8s", "workload", "max q", "partners");
    for (const char *st : kPnpStorages)
        fprintf(f, " %9s %13s", fmt("%s ns", st).c_str(), "pnp/single");
    fprintf(f, "\n");
    double worst = 0;
    std::string worst_at;
    int n = 0, within = 0;
    for (const Row &row : rep.rows()) {
        size_t pl = find_engine(rep, "pnp+llv");
        std::string part = pl < row.cells.size() && row.cells[pl].has_end
                               ? fmt("%llu", (unsigned long long)row.cells[pl].end.partners)
                               : "-";
        fprintf(f, "  %-27s %6llu %8s", row.name.c_str(),
                (unsigned long long)row.ref.max_pending, part.c_str());
        for (const char *st : kPnpStorages) {
            size_t a = find_engine(rep, std::string("single+") + st);
            size_t b = find_engine(rep, std::string("pnp+") + st);
            if (a >= row.cells.size() || b >= row.cells.size()) {
                fprintf(f, " %9s %13s", "-", "-");
                continue;
            }
            std::string bad = cell_problem(row.cells[b]);
            if (bad.empty())
                bad = cell_problem(row.cells[a]);
            double sn = median_ns(row.cells[a]), m, sp;
            if (!bad.empty() || !rep_speedup(row.cells[b], row.cells[a], m, sp)) {
                fprintf(f, " %9s %13s", "-", bad.empty() ? "-" : bad.c_str());
                continue;
            }
            n++;
            within += m <= 1.05;
            if (m > worst) {
                worst = m;
                worst_at = row.name + " (" + st + ")";
            }
            fprintf(f, " %9.1f %13s", sn, pad(fmt("%.3f±%.0f%%", m, sp), 13).c_str());
        }
        fprintf(f, "\n");
    }
    if (n)
        fprintf(f, "  target (pnp/single <= 1.05): %d of %d cells; the worst is %.3f, %s.\n",
                within, n, worst, worst_at.c_str());
}

void print_pnp_memory(FILE *f, const PnpSection &s)
{
    const Report &rep = *s.memory;
    const std::vector<Engine> &en = rep.engines();
    fprintf(f,
            "\npnp (c): memory at the peak of a gather whose every peer has m = 4 receives "
            "pending (all\nposted before the first message arrives).  bytes: vmatch_stats "
            "bytes (the baselines' bytes())\nwhen the most entries were queued; x ob1: bytes / "
            "ob1's bytes; B/entry: (bytes - bytes of the\nempty engine) / entries; queues: "
            "vmatch_stats queues (ob1: two lists per peer seen and one\nwildcard list); "
            "B/queue: bytes / queues; partners and levels after the replay.  Baselines\ncount "
            "what matching adds beyond MPI's request objects (bench/baseline_*.cc).\n\n");
    fprintf(f, "  %-15s %-12s %8s %11s %7s %8s %7s %9s %8s %6s\n", "workload", "engine",
            "entries", "bytes", "x ob1", "B/entry", "queues", "B/queue", "partners", "levels");
    size_t ob1 = find_engine(rep, "ob1");
    for (const Row &row : rep.rows()) {
        double ob1_bytes =
            ob1 < en.size() && row.cells[ob1].ok ? (double)row.cells[ob1].m.bytes_peak : NAN;
        for (size_t i = 0; i < en.size(); i++) {
            const Cell &c = row.cells[i];
            std::string bad = cell_problem(c);
            if (!bad.empty()) {
                fprintf(f, "  %-15s %-12s %s %s\n", row.name.c_str(), en[i].label.c_str(),
                        bad.c_str(), c.error.c_str());
                continue;
            }
            std::string part =
                c.has_end ? fmt("%llu", (unsigned long long)c.end.partners) : "-";
            std::string lev = c.has_end ? fmt("%llu", (unsigned long long)c.end.levels) : "-";
            fprintf(f, "  %-15s %-12s %8llu %11llu %7.2f %8.1f %7llu %9.0f %8s %6s\n",
                    row.name.c_str(), en[i].label.c_str(), (unsigned long long)c.m.max_pending,
                    (unsigned long long)c.m.bytes_peak, (double)c.m.bytes_peak / ob1_bytes,
                    bytes_per_entry(c), (unsigned long long)c.m.queues_peak,
                    c.m.queues_peak ? (double)c.m.bytes_peak / (double)c.m.queues_peak : NAN,
                    part.c_str(), lev.c_str());
        }
    }
}

void print_pnp_section(FILE *f, const PnpSection &s)
{
    fprintf(f, "\n== pnp: partner / non-partner queues\n");
    print_pnp_gather(f, s);
    print_pnp_sparse(f, s);
    print_pnp_memory(f, s);
    fprintf(f, "\npnp engines:\n");
    std::vector<std::string> shown;
    for (const Report *r : {s.gather.get(), s.sparse.get(), s.memory.get()})
        for (const Engine &e : r->engines()) {
            std::string line = fmt("  %-23s %s\n", e.label.c_str(), e.resolved.c_str());
            if (e.base || std::find(shown.begin(), shown.end(), line) != shown.end())
                continue;
            shown.push_back(line);
            fputs(line.c_str(), f);
        }
    for (const std::string &n : s.notes)
        fprintf(f, "note: %s\n", n.c_str());
}

bool make_dir(const std::string &d)
{
    if (mkdir(d.c_str(), 0755) == 0 || errno == EEXIST)
        return true;
    return false;
}

} // namespace

int main(int argc, char **argv)
{
    Options o;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        bool more = i + 1 < argc;
        if (a == "--full") {
            o.full = true;
        } else if (a == "--machine") {
            o.machine_only = true;
        } else if (a == "--list") {
            o.list = true;
        } else if (a == "--out" && more) {
            o.out = argv[++i];
        } else if (a == "--reps" && more) {
            o.reps = atoi(argv[++i]);
            o.reps_given = o.reps > 0;
        } else if (a == "--no-pnp") {
            o.pnp = false;
        } else if (a == "--pnp-only") {
            o.main_suite = false;
        } else if (a == "--min-ms" && more) {
            o.min_ms = atof(argv[++i]);
        } else if (a == "--budget" && more) {
            o.budget_s = atof(argv[++i]);
        } else if (a == "--only" && more) {
            o.only = argv[++i];
        } else if (a == "--engines" && more) {
            o.engines = argv[++i];
        } else if (a == "--help" || a == "-h") {
            usage(stdout);
            return 0;
        } else {
            fprintf(stderr, "vmatch_report: unknown argument or missing value: %s\n",
                    a.c_str());
            usage(stderr);
            return 1;
        }
    }
    if (o.reps <= 0)
        o.reps = o.full ? 3 : 7;
    if (o.reps > 1000)
        o.reps = 1000;

    Machine m = probe_machine();
    if (o.machine_only) {
        print_machine(stdout, m);
        return 0;
    }
    std::vector<std::string> notes;
    std::vector<Engine> engines = collect_engines(o, notes);
    bool have_yard = false;
    for (const Engine &e : engines)
        have_yard |= e.label == kYardstick;
    if (!have_yard) {
        fprintf(stderr, "vmatch_report: the %s baseline is missing\n", kYardstick);
        return 1;
    }

    std::vector<std::pair<std::string, std::string>> work; // name, spec
    std::vector<bool> sweep;
    const Workload *suite = o.full ? kFullSuite : kSuite;
    size_t nsuite =
        o.full ? sizeof kFullSuite / sizeof *kFullSuite : sizeof kSuite / sizeof *kSuite;
    if (!o.main_suite)
        nsuite = 0;
    for (size_t i = 0; i < nsuite; i++)
        if (o.only.empty() || strstr(suite[i].name, o.only.c_str())) {
            work.push_back({suite[i].name, suite[i].spec});
            sweep.push_back(false);
        }
    const unsigned *sp = o.full ? kFullSweepP : kSweepP;
    size_t nsp =
        o.full ? sizeof kFullSweepP / sizeof *kFullSweepP : sizeof kSweepP / sizeof *kSweepP;
    if (o.main_suite &&
        (o.only.empty() || std::string("sweep").find(o.only) != std::string::npos))
        for (size_t i = 0; i < nsp; i++) {
            work.push_back({fmt("sweep: gather P=%u m=4", sp[i]),
                            fmt("gather P=%u m=4 order=random interleave=0", sp[i])});
            sweep.push_back(true);
        }

    if (o.list) {
        printf("engines:\n");
        for (const Engine &e : engines)
            printf("  %-11s %s\n", e.label.c_str(),
                   e.base ? e.base->models : e.resolved.c_str());
        for (const std::string &n : notes)
            printf("  note: %s\n", n.c_str());
        printf("workloads:\n");
        for (size_t i = 0; i < work.size(); i++)
            printf("  %-30s %s\n", work[i].first.c_str(), work[i].second.c_str());
        if (o.pnp) {
            printf("pnp section (engines: vmatch_report --help):\n");
            auto show = [](const Workload *w, size_t n) {
                for (size_t i = 0; i < n; i++)
                    printf("  %-30s %s\n", w[i].name, w[i].spec);
            };
            show(kPnpGathers, sizeof kPnpGathers / sizeof *kPnpGathers);
            if (o.full)
                show(kPnpFullGathers, sizeof kPnpFullGathers / sizeof *kPnpFullGathers);
            show(kPnpSparse, sizeof kPnpSparse / sizeof *kPnpSparse);
            show(kPnpMemory, sizeof kPnpMemory / sizeof *kPnpMemory);
            if (o.full)
                show(kPnpFullMemory, sizeof kPnpFullMemory / sizeof *kPnpFullMemory);
        }
        return 0;
    }

    uint64_t t0 = vm_wl_now_ns();
    Report rep(o, engines);
    if (o.main_suite) {
        printf("vmatch workload report (%s sizes, %d repetitions): %zu workloads x %zu "
               "engines\n",
               o.full ? "large" : "moderate", o.reps, work.size(), engines.size());
        for (const std::string &n : notes)
            printf("  note: %s\n", n.c_str());
        fflush(stdout);
        for (size_t i = 0; i < work.size(); i++)
            rep.run(work[i].first, work[i].second, sweep[i], i + 1, work.size());
        print_tables(stdout, rep, o);
        for (const std::string &n : notes)
            printf("note: %s\n", n.c_str());
        printf("report time: %.0f s\n", (double)(vm_wl_now_ns() - t0) / 1e9);
    }
    PnpSection pnp;
    std::vector<JsonPart> parts;
    if (o.pnp) {
        uint64_t p0 = vm_wl_now_ns(), c0 = vm_wl_cpu_ns();
        pnp = run_pnp_section(o);
        print_pnp_section(stdout, pnp);
        // CPU time too: on a shared machine the wall time says more about the neighbours.
        printf("pnp section time: %.0f s (%.0f s of CPU)\n",
               (double)(vm_wl_now_ns() - p0) / 1e9, (double)(vm_wl_cpu_ns() - c0) / 1e9);
        parts = {{"gather", pnp.gather.get()},
                 {"sparse", pnp.sparse.get()},
                 {"memory", pnp.memory.get()}};
    }
    fflush(stdout);
    if (!o.out.empty()) {
        if (!make_dir(o.out)) {
            fprintf(stderr, "vmatch_report: cannot create %s: %s\n", o.out.c_str(),
                    strerror(errno));
            return 1;
        }
        FILE *tf = fopen((o.out + "/table.txt").c_str(), "w");
        bool plot = false;
        for (const Row &r : rep.rows())
            plot |= r.sweep;
        if (tf) {
            print_machine(tf, m);
            if (o.main_suite)
                print_tables(tf, rep, o);
            for (const std::string &n : notes)
                fprintf(tf, "note: %s\n", n.c_str());
            if (o.pnp)
                print_pnp_section(tf, pnp);
            fclose(tf);
        }
        if (!tf || !write_json(o.out + "/results.json", rep, m, o, notes, parts) ||
            (plot && !write_plot(o.out, rep, m))) {
            fprintf(stderr, "vmatch_report: cannot write into %s: %s\n", o.out.c_str(),
                    strerror(errno));
            return 1;
        }
    }
    bool wrong = false, failed = rep.failed();
    std::vector<const Report *> all = {&rep};
    for (const JsonPart &p : parts)
        all.push_back(p.rep);
    for (const Report *r : all) {
        failed |= r->failed();
        for (const Row &row : r->rows())
            for (const Cell &c : row.cells)
                wrong |= c.wrong;
    }
    return failed || wrong ? 1 : 0;
}
