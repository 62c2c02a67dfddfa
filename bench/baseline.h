// baseline.h -- comparators: the receive queues of shipped MPI libraries, reimplemented from
// their published designs so that benchmarks measure vmatch against them in the same run.
// They live in bench/ only: they are yardsticks, not library engines.  Each one passes the
// differential test against the reference model (a comparator that matches wrongly would
// make every ratio meaningless).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace vmb
{

// The MPI layout of the match bits, as vmatch packs them (vmatch_mpi_pack): the tag in the
// low bits, the source above it, the context on top.  Baselines decode what they index by.
struct Layout {
    unsigned ctx_bits = 16, src_bits = 24, tag_bits = 24;

    static uint64_t mask(unsigned n) { return n >= 64 ? ~0ull : (1ull << n) - 1; }
    uint64_t tag(uint64_t bits) const { return bits & mask(tag_bits); }
    uint64_t src(uint64_t bits) const { return (bits >> tag_bits) & mask(src_bits); }
    uint64_t ctx(uint64_t bits) const
    {
        return (bits >> (tag_bits + src_bits)) & mask(ctx_bits);
    }
    // A receive's care mask from vmatch_mpi_recv clears a whole field for a wildcard.
    bool any_src(uint64_t care) const { return ((care >> tag_bits) & mask(src_bits)) == 0; }
    bool any_tag(uint64_t care) const { return (care & mask(tag_bits)) == 0; }
};

// One process's posted-receive and unexpected-message queues with the contract of the
// vmatch API (vmatch.h): the same calls, the same VMATCH_* results, the same MPI order.
// Receives are MPI receives (care masks as vmatch_mpi_recv makes them: full, or with the
// source and/or tag field cleared); arbitrary masks are outside what these designs support.
class Baseline
{
  public:
    virtual ~Baseline() = default;
    virtual int post(uint64_t bits, uint64_t care, void *req, void **msg_out) = 0;
    virtual int arrive(uint64_t bits, void *msg, void **req_out) = 0;
    virtual int probe(uint64_t bits, uint64_t care, int remove, void **msg_out) = 0;
    virtual int cancel(void *req) = 0;
    virtual int remove_unexpected(void *msg) = 0;
    virtual uint64_t inspected() const = 0; // entries (or keys) compared so far
    virtual uint64_t bytes() const = 0;     // bytes held now, tables and entries
    virtual uint64_t queues() const = 0;    // lists / buckets / vectors allocated now
};

// A design defined as a concrete class Q (baseline_ob1.h, baseline_ucx.h: the calls above,
// non-virtual, in the header) behind the virtual calls: the baseline of the tables, which
// pays a call per operation as vmatch's library calls do.  A caller that knows Q calls it
// directly instead and gets the calls compiled into its loop (replay_inline.h).
template <class Q> class BaselineOf final : public Baseline
{
  public:
    BaselineOf(const Layout &layout, uint32_t nprocs) : q_(layout, nprocs) {}
    int post(uint64_t bits, uint64_t care, void *req, void **msg_out) override
    {
        return q_.post(bits, care, req, msg_out);
    }
    int arrive(uint64_t bits, void *msg, void **req_out) override
    {
        return q_.arrive(bits, msg, req_out);
    }
    int probe(uint64_t bits, uint64_t care, int remove, void **msg_out) override
    {
        return q_.probe(bits, care, remove, msg_out);
    }
    int cancel(void *req) override { return q_.cancel(req); }
    int remove_unexpected(void *msg) override { return q_.remove_unexpected(msg); }
    uint64_t inspected() const override { return q_.inspected(); }
    uint64_t bytes() const override { return q_.bytes(); }
    uint64_t queues() const override { return q_.queues(); }

  private:
    Q q_;
};

struct BaselineInfo {
    const char *name;   // short label for tables: "mpich", "ob1", "ucx", "fuzzy"
    const char *models; // one line: what it models
    std::unique_ptr<Baseline> (*make)(const Layout &layout, uint32_t nprocs);
};

// Every baseline, in table order (baselines.cc).
const std::vector<BaselineInfo> &baselines();

// The compact peers (baseline_ob1_compact.h, baseline_ucx_compact.h: ob1's and UCX's
// algorithms with the match fields in small pooled nodes) behind the virtual calls.  Not
// columns of the tables (the report runs them inline, as the headline's peers); the
// differential test checks them both ways.
const std::vector<BaselineInfo> &compact_baselines();

// The factories: mpich and fuzzy in baseline_<name>.cc, ob1, ucx and the compact peers in
// baselines.cc (their designs are the classes of baseline_<name>.h).
std::unique_ptr<Baseline> make_mpich(const Layout &layout, uint32_t nprocs);
std::unique_ptr<Baseline> make_ob1(const Layout &layout, uint32_t nprocs);
std::unique_ptr<Baseline> make_ucx(const Layout &layout, uint32_t nprocs);
std::unique_ptr<Baseline> make_fuzzy(const Layout &layout, uint32_t nprocs);
std::unique_ptr<Baseline> make_ob1_compact(const Layout &layout, uint32_t nprocs);
std::unique_ptr<Baseline> make_ucx_compact(const Layout &layout, uint32_t nprocs);

} // namespace vmb
