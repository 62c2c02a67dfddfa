/* instr.c -- the ping-pong of ports/ucx/bench inside one UCP worker, for instruction counts
 * (callgrind) and sampled profiles (perf record) of the matching path that do not depend on
 * a second process's timing: one worker sends eager messages to itself over UCX's `self`
 * transport, which delivers them inside the send call, so every step runs in this process
 * in a fixed order.
 *
 * Modes, as ports/mpich/qdepth.c's (D fillers with other tags, never matched):
 *   posted          D receives posted; then each iteration posts the ping's receive (exact
 *                   tag and source, a full mask) and sends the ping, which matches it
 *   unexpected      D messages sent first; then each iteration sends the ping (queued
 *                   unexpected) and receives it (an exact receive)
 *   unexpected-any  the same, the ping received with MPI_ANY_SOURCE's mask
 * An optional ORDER says which comes first in each iteration, the ping's receive
 * (recv-first: posted mode's order; under unexpected fillers the receive searches them,
 * misses and is queued) or its message (send-first: the unexpected modes' order).
 * Tags are packed as Open MPI 4.1's pml/ucx packs them (tag 63..40, source 39..20,
 * communicator 19..0): the engine may be given layout=ompi-ucx.
 *
 * Usage: instr MODE D ITERATIONS [recv-first|send-first].  The iterations run in pingpong_loop,
 * a function of its own, so that `valgrind --tool=callgrind --toggle-collect=pingpong_loop`
 * counts them alone; the program prints the wall time per iteration (for perf record, a long
 * run). UCX_TLS=self is set unless the caller set UCX_TLS.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ucp/api/ucp.h>

enum { PING = 0, FILLER = 1000 };

#define SRC_MASK  (0xfffffull << 20)
#define FULL_MASK (~0ull)

static ucp_worker_h worker;
static ucp_ep_h ep;

static uint64_t make_tag(int tag)
{
    return ((uint64_t)tag << 40) | (1ull << 20) | 5u;
}

static void die(const char *what, ucs_status_t st)
{
    fprintf(stderr, "instr: %s: %s\n", what, ucs_status_string(st));
    exit(1);
}

/* Wait for a request of an _nbx call (NULL: done at once) and free it. */
static void wait_req(void *req, const char *what)
{
    ucs_status_t st;
    if (req == NULL)
        return;
    if (UCS_PTR_IS_ERR(req))
        die(what, UCS_PTR_STATUS(req));
    while ((st = ucp_request_check_status(req)) == UCS_INPROGRESS)
        ucp_worker_progress(worker);
    if (st != UCS_OK)
        die(what, st);
    ucp_request_free(req);
}

static void send_tag(uint64_t tag, char *buf)
{
    ucp_request_param_t p = {0};
    wait_req(ucp_tag_send_nbx(ep, buf, 1, tag, &p), "send");
}

static void *recv_tag(uint64_t tag, uint64_t mask, char *buf)
{
    ucp_request_param_t p = {0};
    void *req = ucp_tag_recv_nbx(worker, buf, 1, tag, mask, &p);
    if (UCS_PTR_IS_ERR(req))
        die("recv", UCS_PTR_STATUS(req));
    return req;
}

/* noinline: callgrind's --toggle-collect names it */
__attribute__((noinline)) void pingpong_loop(int mode, int recv_first, long iters, char *buf)
{
    uint64_t ping = make_tag(PING);
    uint64_t mask = mode == 2 ? ~SRC_MASK : FULL_MASK;
    for (long i = 0; i < iters; i++) {
        if (recv_first) {
            void *req = recv_tag(ping, mask, buf);
            send_tag(ping, buf);
            wait_req(req, "ping receive");
        } else {
            send_tag(ping, buf);
            wait_req(recv_tag(ping, mask, buf), "ping receive");
        }
    }
}

static void setup(void)
{
    ucp_params_t params = {.field_mask = UCP_PARAM_FIELD_FEATURES, .features = UCP_FEATURE_TAG};
    ucp_worker_params_t wp = {.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
                              .thread_mode = UCS_THREAD_MODE_SINGLE};
    ucp_context_h ctx;
    ucp_address_t *addr;
    size_t len;
    ucs_status_t st;

    setenv("UCX_TLS", "self", 0);
    if ((st = ucp_init(&params, NULL, &ctx)) != UCS_OK)
        die("ucp_init", st);
    if ((st = ucp_worker_create(ctx, &wp, &worker)) != UCS_OK)
        die("ucp_worker_create", st);
    if ((st = ucp_worker_get_address(worker, &addr, &len)) != UCS_OK)
        die("ucp_worker_get_address", st);
    ucp_ep_params_t ep_params = {.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS,
                                 .address = addr};
    if ((st = ucp_ep_create(worker, &ep_params, &ep)) != UCS_OK)
        die("ucp_ep_create", st);
    ucp_worker_release_address(worker, addr);
}

int main(int argc, char **argv)
{
    static const char *modes[] = {"posted", "unexpected", "unexpected-any"};
    int mode = -1, recv_first = -1;
    for (int m = 0; m < 3 && (argc == 4 || argc == 5); m++)
        if (strcmp(argv[1], modes[m]) == 0)
            mode = m;
    if (mode >= 0)
        recv_first = argc == 4                            ? mode == 0
                     : strcmp(argv[4], "recv-first") == 0 ? 1
                     : strcmp(argv[4], "send-first") == 0 ? 0
                                                          : -1;
    if (mode < 0 || recv_first < 0) {
        fprintf(stderr, "usage: instr posted|unexpected|unexpected-any D ITERATIONS "
                        "[recv-first|send-first]\n");
        return 2;
    }
    int depth = atoi(argv[2]);
    long iters = atol(argv[3]);
    char buf = 0, *fill = calloc((size_t)depth + 1, 1);
    void **reqs = calloc((size_t)depth + 1, sizeof(void *));
    if (!fill || !reqs)
        return 1;
    setup();

    for (int i = 0; i < depth; i++) {
        if (mode == 0)
            reqs[i] = recv_tag(make_tag(FILLER + i), FULL_MASK, &fill[i]);
        else
            send_tag(make_tag(FILLER + i), &fill[i]);
    }
    pingpong_loop(mode, recv_first, iters / 10 + 1, &buf); /* warm up */
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pingpong_loop(mode, recv_first, iters, &buf);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    printf("%s %d %s %ld %.1f ns\n", modes[mode], depth,
           recv_first ? "recv-first" : "send-first", iters,
           ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) /
               (double)iters);

    /* drain the fillers, so that the worker ends with empty queues */
    for (int i = 0; i < depth; i++) {
        if (mode == 0) {
            send_tag(make_tag(FILLER + i), &fill[i]);
            wait_req(reqs[i], "filler receive");
        } else {
            wait_req(recv_tag(make_tag(FILLER + i), FULL_MASK, &fill[i]), "filler receive");
        }
    }
    free(fill);
    free(reqs);
    return 0;
}
