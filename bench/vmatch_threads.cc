// vmatch_threads.cc -- the threads section of scripts/bench: matches per second of one
// engine called from 1, 2, 4 and 8 threads, threads=mutex (one pthread mutex) against
// threads=multi (the lock-free inbox), on short and long queues; threads=off with one
// thread is the reference.
//
// Two shapes.  mixed: each thread owns a source (so no thread matches another's traffic) and
// repeats pairs: on even pairs it posts an exact receive and then the message arrives, on odd
// pairs the message arrives first and the receive is posted after it; each pair is one match.
// split (2 threads or more): half the threads only deliver messages (network progress
// threads) and half only post receives (application threads), one source per pair of them,
// the arrivals at most kWindow ahead of the posts or behind them.  Short queues:
// nothing else is queued.  Long queues: 1024 wildcard receives of another context are queued
// first, and every arrival searches them (the default engine, policy=hash over llv, keeps
// wildcards in one queue of the storage).  A cell runs all its threads for a fixed time and
// counts the pairs; cells are repeated, the order of the repetitions interleaved, and the
// median and quartiles of matches per second are printed.  Every run checks that the engine
// made exactly one match per pair (deferred ones through vmatch_on_match's callback).
//
//   vmatch_threads [--reps N] [--ms MS] [--summary FILE]
#include <vmatch.h>

#include "stats.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sched.h>
#include <string>
#include <thread>
#include <vector>

namespace
{

const int kThreads[] = {1, 2, 4, 8};
const unsigned kLongQueue = 1024; // wildcard receives queued in the long-queue runs
const int kTags = 16;
const uint64_t kWindow = 64; // split: arrivals ahead of posts, or behind, before one side waits

// split: the arrivals and posts of one pair of threads (one source), each on its own line.
struct alignas(64) Count {
    std::atomic<uint64_t> n{0};
};

struct Run {
    vmatch_engine_t *e = nullptr;
    std::atomic<int> ready{0};
    std::atomic<bool> go{false}, stop{false};
    std::atomic<uint64_t> deferred_matches{0};
    Count arrived[8], posted[8];
};

void on_match(void *arg, int rc, void *, void *)
{
    if (rc == VMATCH_MATCHED)
        static_cast<Run *>(arg)->deferred_matches.fetch_add(1, std::memory_order_relaxed);
}

// A worker's receive and message bits for source src's kTags tags; then it waits with the
// others for go.
void start(Run *r, int src, vmatch_bits_t *bits, vmatch_bits_t *care, vmatch_bits_t *mbits)
{
    for (int t = 0; t < kTags; t++) {
        vmatch_mpi_recv(r->e, 0, src, t, &bits[t], &care[t]);
        mbits[t] = vmatch_mpi_msg(r->e, 0, src, t);
    }
    r->ready.fetch_add(1);
    while (!r->go.load(std::memory_order_acquire))
        sched_yield();
}

// One thread's pairs until stop; returns the pairs and adds its synchronous matches.
void worker(Run *r, int id, uint64_t *pairs, uint64_t *matches)
{
    static char handles[2]; // payloads: only their addresses matter, never dereferenced
    void *req = &handles[0], *msg = &handles[1], *out;
    vmatch_bits_t bits[kTags], care[kTags], mbits[kTags];
    start(r, id, bits, care, mbits);
    uint64_t n = 0, m = 0;
    while (!r->stop.load(std::memory_order_relaxed)) {
        int t = (int)(n % kTags);
        if (n & 1) {
            m += vmatch_arrive(r->e, mbits[t], 0, msg, &out) == VMATCH_MATCHED;
            m += vmatch_post(r->e, bits[t], care[t], 0, req, &out) == VMATCH_MATCHED;
        } else {
            m += vmatch_post(r->e, bits[t], care[t], 0, req, &out) == VMATCH_MATCHED;
            m += vmatch_arrive(r->e, mbits[t], 0, msg, &out) == VMATCH_MATCHED;
        }
        n++;
    }
    *pairs = n;
    *matches = m;
}

// split: thread id < threads/2 delivers the messages of source id, the others post the
// receives of source id - threads/2.  *pairs: its operations; *matches: its MATCHED results.
void split_worker(Run *r, int id, int threads, uint64_t *ops, uint64_t *matches)
{
    static char handles[2];
    void *req = &handles[0], *msg = &handles[1], *out;
    int half = threads / 2, src = id % half;
    bool arrive = id < half;
    std::atomic<uint64_t> &mine = (arrive ? r->arrived : r->posted)[src].n;
    std::atomic<uint64_t> &other = (arrive ? r->posted : r->arrived)[src].n;
    vmatch_bits_t bits[kTags], care[kTags], mbits[kTags];
    start(r, src, bits, care, mbits);
    uint64_t n = 0, m = 0;
    while (!r->stop.load(std::memory_order_relaxed)) {
        if (n >= other.load(std::memory_order_relaxed) + kWindow) {
            sched_yield();
            continue;
        }
        int t = (int)(n % kTags);
        if (arrive)
            m += vmatch_arrive(r->e, mbits[t], 0, msg, &out) == VMATCH_MATCHED;
        else
            m += vmatch_post(r->e, bits[t], care[t], 0, req, &out) == VMATCH_MATCHED;
        mine.store(++n, std::memory_order_relaxed);
    }
    *ops = n;
    *matches = m;
}

// Matches per second of one run, or a negative value (with a message) when it went wrong.
double run_cell(const std::string &mode, int threads, bool long_q, bool split, int ms)
{
    Run r;
    std::string spec = "threads=" + mode;
    if (vmatch_create(spec.c_str(), &r.e) != VMATCH_OK) {
        fprintf(stderr, "vmatch_threads: %s: %s\n", spec.c_str(), vmatch_last_error());
        return -1;
    }
    vmatch_on_match(r.e, on_match, &r);
    static char filler;
    void *out;
    for (unsigned i = 0; long_q && i < kLongQueue; i++) {
        vmatch_bits_t b, c;
        vmatch_mpi_recv(r.e, 1, VMATCH_ANY_SOURCE, (int32_t)(i % kTags), &b, &c);
        vmatch_post(r.e, b, c, 0, &filler, &out);
    }
    std::vector<uint64_t> pairs(threads), matches(threads);
    std::vector<std::thread> th;
    for (int i = 0; i < threads; i++)
        if (split)
            th.emplace_back(split_worker, &r, i, threads, &pairs[i], &matches[i]);
        else
            th.emplace_back(worker, &r, i, &pairs[i], &matches[i]);
    while (r.ready.load() < threads)
        sched_yield();
    auto t0 = std::chrono::steady_clock::now();
    r.go.store(true, std::memory_order_release);
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    r.stop.store(true);
    for (auto &t : th)
        t.join();
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    vmatch_progress(r.e);
    uint64_t np = 0, nm = r.deferred_matches.load(), left[2] = {0, 0};
    for (int i = 0; i < threads; i++)
        nm += matches[i];
    if (!split) {
        for (int i = 0; i < threads; i++)
            np += pairs[i];
    } else { /* a pair of threads matched the smaller count; the rest is queued */
        for (int p = 0; p < threads / 2; p++) {
            uint64_t a = r.arrived[p].n.load(), b = r.posted[p].n.load();
            np += a < b ? a : b;
            left[a < b] += a < b ? b - a : a - b;
        }
    }
    vmatch_stats_t st;
    vmatch_stats(r.e, &st);
    vmatch_destroy(r.e);
    if (nm != np || st.posted != (long_q ? kLongQueue : 0) + left[1] ||
        st.unexpected != left[0]) {
        fprintf(stderr, "vmatch_threads: %s, %d threads: %llu pairs but %llu matches\n",
                spec.c_str(), threads, (unsigned long long)np, (unsigned long long)nm);
        return -1;
    }
    return (double)np / s;
}

struct Cell {
    std::string mode;
    int threads;
    bool long_q, split;
    std::vector<double> mps;
};

int cpus()
{
    cpu_set_t set;
    return sched_getaffinity(0, sizeof set, &set) == 0
               ? CPU_COUNT(&set)
               : (int)std::thread::hardware_concurrency();
}

std::string fig(const Cell &c)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%.2f (%.2f-%.2f)", vmb::median(c.mps) / 1e6,
             vmb::quantile(c.mps, 0.25) / 1e6, vmb::quantile(c.mps, 0.75) / 1e6);
    return buf;
}

// multi / mutex within each repetition: median and quartiles.
void ratio(const Cell &multi, const Cell &mutex, double &m, double &q1, double &q3)
{
    std::vector<double> r;
    for (size_t i = 0; i < multi.mps.size() && i < mutex.mps.size(); i++)
        r.push_back(multi.mps[i] / mutex.mps[i]);
    m = vmb::median(r);
    q1 = vmb::quantile(r, 0.25);
    q3 = vmb::quantile(r, 0.75);
}

} // namespace

int main(int argc, char **argv)
{
    int reps = 7, ms = 100;
    const char *summary = nullptr;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--ms") && i + 1 < argc)
            ms = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--summary") && i + 1 < argc)
            summary = argv[++i];
        else {
            fprintf(stderr, "usage: vmatch_threads [--reps N] [--ms MS] [--summary FILE]\n");
            return 2;
        }
    }
    std::vector<Cell> cells;
    for (int sp = 0; sp < 2; sp++)
        for (int q = 0; q < 2; q++) {
            if (!sp)
                cells.push_back({"off", 1, q == 1, false, {}});
            for (int t : kThreads)
                for (const char *mode : {"mutex", "multi"})
                    if (!sp || t >= 2)
                        cells.push_back({mode, t, q == 1, sp == 1, {}});
        }
    // Repetitions interleaved: each round runs every cell once, in an order rotated per round,
    // so a noisy neighbour slows some repetitions of every cell rather than all of one.
    for (int rep = 0; rep < reps; rep++)
        for (size_t k = 0; k < cells.size(); k++) {
            Cell &c = cells[(k + (size_t)rep * 5) % cells.size()];
            double v = run_cell(c.mode, c.threads, c.long_q, c.split, ms);
            if (v < 0)
                return 1;
            c.mps.push_back(v);
        }
    int ncpu = cpus();
    printf("matches per second (millions; median and quartiles of %d runs of %d ms), "
           "%d CPU%s available, engine \"\" (policy=hash over llv) with threads=...\n",
           reps, ms, ncpu, ncpu == 1 ? "" : "s");
    printf("mixed: every thread posts and delivers (its own source); split: half the threads "
           "deliver, half post\n");
    printf("short: nothing else queued; long: %u wildcard receives of another context queued, "
           "searched by every arrival\n",
           kLongQueue);
    std::vector<std::string> lines;
    for (int sp = 0; sp < 2; sp++)
        for (int q = 0; q < 2; q++) {
            const char *qn = q ? "long" : "short", *shape = sp ? "split" : "mixed";
            printf("\n%-5s %-5s threads  %-20s %-20s multi/mutex\n", shape, qn, "mutex",
                   "multi (inbox)");
            for (const Cell &c : cells)
                if (c.long_q == (q == 1) && c.mode == "off" && !sp)
                    printf("%-5s %-5s 1 off    %s\n", shape, qn, fig(c).c_str());
            for (int t : kThreads) {
                const Cell *mu = nullptr, *mt = nullptr;
                for (const Cell &c : cells)
                    if (c.long_q == (q == 1) && c.split == (sp == 1) && c.threads == t &&
                        c.mode == "mutex")
                        mu = &c;
                    else if (c.long_q == (q == 1) && c.split == (sp == 1) && c.threads == t &&
                             c.mode == "multi")
                        mt = &c;
                if (!mu || !mt)
                    continue;
                double m, q1, q3;
                ratio(*mt, *mu, m, q1, q3);
                printf("%-5s %-5s %-8d %-20s %-20s %.2f (%.2f-%.2f)\n", shape, qn, t,
                       fig(*mu).c_str(), fig(*mt).c_str(), m, q1, q3);
                char line[400];
                snprintf(line, sizeof line,
                         "%-9s threads: %s, %s queues, %d thread%s on %d CPUs: threads=multi "
                         "(inbox) matches/s / threads=mutex >= 1: %.2f (%.2f-%.2f); %s M/s "
                         "against %s M/s",
                         m >= 1 ? "met" : "missed", shape, qn, t, t == 1 ? "" : "s", ncpu, m,
                         q1, q3, fig(*mt).c_str(), fig(*mu).c_str());
                lines.push_back(line);
            }
        }
    printf("\n");
    FILE *f = summary ? fopen(summary, "a") : nullptr;
    for (const std::string &l : lines) {
        printf("%s\n", l.c_str());
        if (f)
            fprintf(f, "%s\n", l.c_str());
    }
    if (f)
        fclose(f);
    return 0;
}
