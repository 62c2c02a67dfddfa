// baselines.cc -- the registry of comparators (baseline.h), in table order, and the factories
// of the designs defined as classes in headers (ob1, ucx and their compact forms).
#include "baseline.h"
#include "baseline_ob1.h"
#include "baseline_ob1_compact.h"
#include "baseline_ucx.h"
#include "baseline_ucx_compact.h"

namespace vmb
{

std::unique_ptr<Baseline> make_ob1(const Layout &layout, uint32_t nprocs)
{
    return std::unique_ptr<Baseline>(new BaselineOf<Ob1Queue>(layout, nprocs));
}

std::unique_ptr<Baseline> make_ucx(const Layout &layout, uint32_t nprocs)
{
    return std::unique_ptr<Baseline>(new BaselineOf<UcxQueue>(layout, nprocs));
}

std::unique_ptr<Baseline> make_ob1_compact(const Layout &layout, uint32_t nprocs)
{
    return std::unique_ptr<Baseline>(new BaselineOf<Ob1Compact>(layout, nprocs));
}

std::unique_ptr<Baseline> make_ucx_compact(const Layout &layout, uint32_t nprocs)
{
    return std::unique_ptr<Baseline>(new BaselineOf<UcxCompact>(layout, nprocs));
}

const std::vector<BaselineInfo> &compact_baselines()
{
    static const std::vector<BaselineInfo> list = {
        {"ob1-compact",
         "ob1's algorithm, per-source list heads indexed by source, 32-byte pooled nodes",
         make_ob1_compact},
        {"ucx-compact",
         "UCX's algorithm, 1021 buckets of 40-byte pooled nodes holding tag, mask, sequence",
         make_ucx_compact},
    };
    return list;
}

const std::vector<BaselineInfo> &baselines()
{
    static const std::vector<BaselineInfo> list = {
        {"mpich", "MPICH 4 CH4: one doubly linked list per side of request-sized objects",
         make_mpich},
        {"ob1",
         "Open MPI ob1: per-communicator per-source lists + a wildcard list, by sequence",
         make_ob1},
        {"ucx", "UCX: exact tags in 1021 hash buckets + a wildcard queue, by sequence",
         make_ucx},
        {"fuzzy", "Open MPI custommatch fuzzy512: 16-bit src^tag keys, 32 per AVX-512 vector",
         make_fuzzy},
    };
    return list;
}

} // namespace vmb
