// vmatch_instr.cc -- exact post-then-arrive pairs on one queue implementation, for counting
// instructions per pair with callgrind (scripts/instr) and, run alone, a rough ns per pair.
//
//   vmatch_instr PATH QUEUE PAIRS
//     PATH   inline  the default engine through vmatch_inline.h (vmatch_inline_post/arrive)
//            call    the default engine through vmatch.h's library calls (vmatch_post/arrive)
//            ucx     the UCX design (baseline_ucx.h) compiled into the loop
//            ob1     the ob1 design (baseline_ob1.h) compiled into the loop
//            ucx-compact, ob1-compact  the same algorithms with compact pooled nodes
//                    (baseline_ucx_compact.h, baseline_ob1_compact.h), in the loop
//     QUEUE  0  each pair on empty queues: the receive queues, its message takes it
//            1  the same behind one receive of the same source and another tag, queued for
//               the whole run (a list design steps over it)
//            8  8 receives of the same source with distinct tags, then their 8 messages in
//               the reverse order (the last posted matches first)
//     PAIRS  pairs timed (QUEUE 8: rounded up to a multiple of 8)
//
// The pairs run in run_pairs, a function of its own per path (the calls compiled into it, as
// in the report's inline loop, replay_inline.h): scripts/instr counts the instructions
// callgrind attributes to it (--toggle-collect) for two numbers of pairs and divides the
// difference by the difference of the pairs, so set-up and first-entry costs cancel.  Every
// match is checked: a wrong payload makes the exit status 1.
#include "baseline_ob1.h"
#include "baseline_ob1_compact.h"
#include "baseline_ucx.h"
#include "baseline_ucx_compact.h"
#include "replay_inline.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace
{

// The default engine through the library's calls.
struct LibCalls {
    vmatch_engine_t *e;
    int post(uint64_t bits, uint64_t care, uint32_t cls, void *req, void **msg_out)
    {
        return vmatch_post(e, bits, care, cls, req, msg_out);
    }
    int arrive(uint64_t bits, uint32_t cls, void *msg, void **req_out)
    {
        return vmatch_arrive(e, bits, cls, msg, req_out);
    }
};

// The ports' way (UCX's and MPICH's receive queues): a receive searches the unexpected
// messages, then queues itself; an arrival searches the receives, then queues itself.
// Forced inline, as every other path's calls are: left to GCC, a change of the inline
// header's size (a hint, say) made it call post out of line, 26-32 instructions a pair
// that were the bench's, not the header's.
struct SplitInlineCalls {
    vmatch_engine_t *e;
    VMB_INLINE int post(uint64_t bits, uint64_t care, uint32_t cls, void *req, void **msg_out)
    {
        int rc = vmatch_inline_probe(e, bits, care, cls, 1, msg_out);
        return rc == VMATCH_MATCHED ? rc
                                    : vmatch_inline_enqueue_posted(e, bits, care, cls, req);
    }
    VMB_INLINE int arrive(uint64_t bits, uint32_t cls, void *msg, void **req_out)
    {
        int rc = vmatch_inline_match_posted(e, bits, cls, req_out);
        return rc == VMATCH_MATCHED ? rc : vmatch_inline_enqueue_unexpected(e, bits, cls, msg);
    }
};

const uint32_t kSource = 5, kStandingTag = 1000;
const size_t kShort = 8; // receives queued at once with QUEUE 8

// Match bits of (context 0, kSource, tag) in the default layout (16/24/24, the tag lowest).
uint64_t bits_of(uint32_t tag)
{
    vmb::Layout l;
    return ((uint64_t)kSource << l.tag_bits) | tag;
}

// PAIRS pairs through c; the number of wrong results.  queue: 0, 1 (the standing receive is
// posted by the caller) or 8.  req and msg: kShort payloads each.
template <class Calls>
__attribute__((noinline)) size_t run_pairs(Calls &c, int queue, size_t pairs, char *req,
                                           char *msg)
{
    size_t wrong = 0;
    const uint64_t all = ~0ull;
    void *got;
    if (queue != 8) {
        for (size_t i = 0; i < pairs; i++) {
            uint64_t bits = bits_of((uint32_t)(i % kShort));
            wrong += c.post(bits, all, 0, req, &got) != VMATCH_QUEUED;
            wrong += c.arrive(bits, 0, msg, &got) != VMATCH_MATCHED || got != req;
        }
        return wrong;
    }
    for (size_t i = 0; i < pairs; i += kShort) {
        for (size_t k = 0; k < kShort; k++)
            wrong += c.post(bits_of((uint32_t)k), all, 0, req + k, &got) != VMATCH_QUEUED;
        for (size_t k = kShort; k-- > 0;)
            wrong += c.arrive(bits_of((uint32_t)k), 0, msg + k, &got) != VMATCH_MATCHED ||
                     got != req + k;
    }
    return wrong;
}

// Posts the standing receive (QUEUE 1), runs the pairs, prints the figures; the exit status.
template <class Calls> int measure(Calls &c, const char *path, int queue, size_t pairs)
{
    std::vector<char> req(kShort + 1), msg(kShort);
    void *got;
    if (queue == 1 &&
        c.post(bits_of(kStandingTag), ~0ull, 0, &req[kShort], &got) != VMATCH_QUEUED) {
        fprintf(stderr, "vmatch_instr: the standing receive did not queue\n");
        return 1;
    }
    auto t0 = std::chrono::steady_clock::now();
    size_t wrong = run_pairs(c, queue, pairs, req.data(), msg.data());
    auto t1 = std::chrono::steady_clock::now();
    double ns = std::chrono::duration<double, std::nano>(t1 - t0).count();
    printf("%-6s queue %d: %zu pairs, %.1f ns per pair, %zu wrong\n", path, queue, pairs,
           pairs ? ns / (double)pairs : 0.0, wrong);
    return wrong ? 1 : 0;
}

template <class Q> int measure_design(const char *path, int queue, size_t pairs)
{
    Q q(vmb::Layout(), 64);
    vmb::QueueCalls<Q> c{q};
    return measure(c, path, queue, pairs);
}

// The default engine (vmatch_inline_create("") refuses a library of another inline ABI).
template <class Calls> int measure_engine(const char *path, int queue, size_t pairs)
{
    vmatch_engine_t *e = nullptr;
    int rc = vmatch_inline_create("", &e);
    if (rc < 0) {
        fprintf(stderr, "vmatch_instr: %s (%s)\n", vmatch_strerror(rc), vmatch_last_error());
        return 1;
    }
    Calls c{e};
    rc = measure(c, path, queue, pairs);
    vmatch_destroy(e);
    return rc;
}

} // namespace

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr,
                "usage: vmatch_instr inline|split|call|ucx|ob1|ucx-compact|ob1-compact 0|1|8 "
                "PAIRS\n");
        return 2;
    }
    std::string path = argv[1];
    int queue = atoi(argv[2]);
    size_t pairs = strtoull(argv[3], nullptr, 10);
    if (queue != 0 && queue != 1 && queue != 8) {
        fprintf(stderr, "vmatch_instr: QUEUE is 0, 1 or 8\n");
        return 2;
    }
    if (queue == 8)
        pairs = (pairs + kShort - 1) / kShort * kShort;
    if (path == "inline")
        return measure_engine<vmb::InlineEngineCalls>("inline", queue, pairs);
    if (path == "split")
        return measure_engine<SplitInlineCalls>("split", queue, pairs);
    if (path == "call")
        return measure_engine<LibCalls>("call", queue, pairs);
    if (path == "ucx")
        return measure_design<vmb::UcxQueue>("ucx", queue, pairs);
    if (path == "ob1")
        return measure_design<vmb::Ob1Queue>("ob1", queue, pairs);
    if (path == "ucx-compact")
        return measure_design<vmb::UcxCompact>("ucxc", queue, pairs);
    if (path == "ob1-compact")
        return measure_design<vmb::Ob1Compact>("ob1c", queue, pairs);
    fprintf(stderr, "vmatch_instr: unknown PATH %s\n", path.c_str());
    return 2;
}
