// cli.h -- strict numbers for the command lines of vmatch_report and vmatch_rank: a value is
// taken only when all of it is a number of the option's range, so "--reps abc" or
// "--reps 0" is refused with a message that names the option instead of running with a
// default (atoi's 0 for "abc").
#ifndef VMB_CLI_H
#define VMB_CLI_H

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace vmcli
{

// A whole decimal number in [lo, hi] from all of s; else false.
inline bool whole(const char *s, long lo, long hi, long &v)
{
    if (!s || !*s || strspn(s, "0123456789") != strlen(s))
        return false;
    errno = 0;
    char *end = nullptr;
    v = strtol(s, &end, 10);
    return errno == 0 && *end == '\0' && v >= lo && v <= hi;
}

// A plain decimal number (digits, a point, an exponent; no hex, inf or nan) in [lo, hi]
// from all of s; else false.
inline bool real(const char *s, double lo, double hi, double &v)
{
    if (!s || !*s || strspn(s, "0123456789.eE+-") != strlen(s))
        return false;
    char *end = nullptr;
    v = strtod(s, &end);
    return end != s && *end == '\0' && std::isfinite(v) && v >= lo && v <= hi;
}

} // namespace vmcli

#endif
