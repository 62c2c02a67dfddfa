// baselines.cc -- the registry of comparators (baseline.h), in table order.
#include "baseline.h"

namespace vmb
{

const std::vector<BaselineInfo> &baselines()
{
    static const std::vector<BaselineInfo> list = {
        {"fuzzy", "Open MPI custommatch fuzzy512: 16-bit src^tag keys, 32 per AVX-512 vector",
         make_fuzzy},
    };
    return list;
}

} // namespace vmb
