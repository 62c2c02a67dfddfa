/* netdelay.c -- delay and reorder the packets of a network namespace's link, for kernels
 * without tc's netem (ports/hosts).  iptables hands the link's outgoing packets to
 * netfilter queue QUEUE (-j NFQUEUE --queue-bypass); this program holds each one for
 * DELAY_US microseconds plus a uniform draw in [-JITTER_US, +JITTER_US] and then lets it
 * go.  Packets whose draws differ leave in another order than they came: TCP puts one
 * connection's bytes back in order, so what changes is the order in which messages of
 * different connections (different MPI ranks) reach a receiver, and the retransmissions
 * and acknowledgements a reordered stream costs.
 *
 * Usage: netdelay QUEUE DELAY_US JITTER_US [SEED]
 * Runs until SIGINT or SIGTERM, then lets every held packet go and prints
 * "netdelay: N packets, R left out of order, held up to M us" on stderr.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <libnetfilter_queue/libnetfilter_queue.h>
#include <linux/netfilter.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

/* Packets held at once; beyond it a packet goes at once (TCP's window keeps far fewer
 * in flight between two hosts' worth of ranks). */
enum { HELD_MAX = 4096 };

struct held {
    uint64_t in_us;  /* when it came */
    uint64_t due_us; /* when it may go */
    uint32_t id;     /* the queue's packet id, for the verdict */
    uint64_t seq;    /* arrival order, to count the packets that leave out of it */
};

static struct held heap[HELD_MAX]; /* a min-heap on due_us */
static int nheld;
static uint64_t delay_us, jitter_us, rng = 88172645463325252u;
static uint64_t arrived, reordered, next_out, max_hold_us;
static volatile sig_atomic_t stop;

static uint64_t now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000u + (uint64_t)t.tv_nsec / 1000u;
}

/* xorshift64: the draws need no quality beyond spreading the delays */
static uint64_t draw(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static void heap_push(struct held h)
{
    int i = nheld++;
    while (i > 0 && heap[(i - 1) / 2].due_us > h.due_us) {
        heap[i] = heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    heap[i] = h;
}

static struct held heap_pop(void)
{
    struct held top = heap[0], last = heap[--nheld];
    int i = 0;
    for (;;) {
        int c = 2 * i + 1;
        if (c >= nheld)
            break;
        if (c + 1 < nheld && heap[c + 1].due_us < heap[c].due_us)
            c++;
        if (last.due_us <= heap[c].due_us)
            break;
        heap[i] = heap[c];
        i = c;
    }
    heap[i] = last;
    return top;
}

/* release: the verdict that lets packet H go; counts it out of order when a packet that
 * came after it went first. */
static void release(struct nfq_q_handle *q, struct held h, uint64_t t)
{
    if (h.seq < next_out)
        reordered++;
    else
        next_out = h.seq + 1;
    if (t - h.in_us > max_hold_us)
        max_hold_us = t - h.in_us;
    nfq_set_verdict(q, h.id, NF_ACCEPT, 0, NULL);
}

static int on_packet(struct nfq_q_handle *q, struct nfgenmsg *msg, struct nfq_data *d,
                     void *arg)
{
    (void)msg;
    (void)arg;
    struct nfqnl_msg_packet_hdr *ph = nfq_get_msg_packet_hdr(d);
    if (!ph)
        return 0;
    uint64_t t = now_us(), j = jitter_us ? draw() % (2 * jitter_us + 1) : 0;
    struct held h = {.id = ntohl(ph->packet_id), .seq = arrived++, .in_us = t};
    h.due_us = t + delay_us + j - jitter_us;
    if (nheld == HELD_MAX) {
        h.due_us = t;
        release(q, h, t);
        return 0;
    }
    heap_push(h);
    return 0;
}

static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

/* parse NAME's value S, a decimal number up to MAX; exits 2 naming it otherwise */
static uint64_t number(const char *name, const char *s, uint64_t max)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *end || s[0] == '-' || v > max) {
        fprintf(stderr, "netdelay: %s must be a number from 0 to %llu, not '%s'\n", name,
                (unsigned long long)max, s);
        exit(2);
    }
    return v;
}

int main(int argc, char **argv)
{
    if (argc < 4 || argc > 5) {
        fprintf(stderr, "usage: netdelay QUEUE DELAY_US JITTER_US [SEED]\n");
        return 2;
    }
    uint16_t qnum = (uint16_t)number("QUEUE", argv[1], 65535);
    delay_us = number("DELAY_US", argv[2], 10000000);
    jitter_us = number("JITTER_US", argv[3], delay_us);
    if (argc == 5)
        rng = number("SEED", argv[4], UINT64_MAX) | 1u; /* xorshift: never 0 */

    struct nfq_handle *nh = nfq_open();
    struct nfq_q_handle *q = nh ? nfq_create_queue(nh, qnum, on_packet, NULL) : NULL;
    if (!q || nfq_set_mode(q, NFQNL_COPY_META, 0) < 0) {
        fprintf(stderr, "netdelay: cannot take netfilter queue %u: %s\n", qnum,
                strerror(errno));
        return 1;
    }
    nfq_set_queue_maxlen(q, HELD_MAX);
    struct sigaction sa = {.sa_handler = on_signal};
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    fprintf(stderr, "netdelay: queue %u, %llu us +- %llu us\n", qnum,
            (unsigned long long)delay_us, (unsigned long long)jitter_us);

    int fd = nfq_fd(nh);
    char buf[4096] __attribute__((aligned));
    while (!stop) {
        uint64_t t = now_us();
        while (nheld && heap[0].due_us <= t)
            release(q, heap_pop(), t);
        int wait_ms = nheld ? (int)((heap[0].due_us - t + 999) / 1000) : 100;
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, wait_ms) <= 0)
            continue;
        /* every packet waiting, so that a burst is not held a poll round per packet */
        ssize_t n;
        while ((n = recv(fd, buf, sizeof buf, MSG_DONTWAIT)) > 0)
            nfq_handle_packet(nh, buf, (int)n);
    }
    while (nheld)
        release(q, heap_pop(), now_us());
    fprintf(stderr, "netdelay: %llu packets, %llu left out of order, held up to %llu us\n",
            (unsigned long long)arrived, (unsigned long long)reordered,
            (unsigned long long)max_hold_us);
    nfq_destroy_queue(q);
    nfq_close(nh);
    return 0;
}
