/* check.h -- the assertion macros of the test programs.
 * CHECK keeps going and counts failures; REQUIRE stops the program.  Each test's main ends
 * with `return check_report("name");`, which prints "name: N passed, M failed". */
#ifndef VM_CHECK_H
#define VM_CHECK_H

#include <stdio.h>
#include <stdlib.h>

static unsigned check_passed, check_failed;

#define CHECK(cond)                                                                            \
    do {                                                                                       \
        if (cond) {                                                                            \
            check_passed++;                                                                    \
        } else {                                                                               \
            check_failed++;                                                                    \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);           \
        }                                                                                      \
    } while (0)

#define CHECK_EQ(a, b)                                                                         \
    do {                                                                                       \
        long long check_a_ = (long long)(a), check_b_ = (long long)(b);                        \
        if (check_a_ == check_b_) {                                                            \
            check_passed++;                                                                    \
        } else {                                                                               \
            check_failed++;                                                                    \
            fprintf(stderr, "%s:%d: CHECK failed: %s == %s (%lld != %lld)\n", __FILE__,        \
                    __LINE__, #a, #b, check_a_, check_b_);                                     \
        }                                                                                      \
    } while (0)

#define REQUIRE(cond)                                                                          \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            fprintf(stderr, "%s:%d: REQUIRE failed: %s\n", __FILE__, __LINE__, #cond);         \
            exit(1);                                                                           \
        }                                                                                      \
        check_passed++;                                                                        \
    } while (0)

static inline int check_report(const char *name)
{
    printf("%s: %u passed, %u failed\n", name, check_passed, check_failed);
    return check_failed ? 1 : 0;
}

#endif
