// stats.h -- order statistics of repeated measurements, shared by the bench programs.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace vmb
{

// The q-quantile of v (0 <= q <= 1), interpolating between neighbours; NaN when v is empty.
inline double quantile(std::vector<double> v, double q)
{
    if (v.empty())
        return NAN;
    std::sort(v.begin(), v.end());
    double pos = q * (double)(v.size() - 1);
    size_t i = (size_t)pos;
    return i + 1 < v.size() ? v[i] + (pos - (double)i) * (v[i + 1] - v[i]) : v[i];
}

inline double median(const std::vector<double> &v)
{
    return quantile(v, 0.5);
}

// The median and the quartiles of v; false (nothing set) when v is empty.
inline bool quartiles(const std::vector<double> &v, double &med, double &q1, double &q3)
{
    if (v.empty())
        return false;
    med = median(v);
    q1 = quantile(v, 0.25);
    q3 = quantile(v, 0.75);
    return true;
}

} // namespace vmb
