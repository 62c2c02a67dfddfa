/* stress.c -- a matching stress test for an MPI library, run with 2 or more processes.
 *
 * Every round each process sends messages to every other process on several
 * communicators with several tags, most of them before the receiver posts anything (so
 * they wait as unexpected messages), some of them large (rendezvous).  The receivers take
 * them with a mix of exact receives, MPI_ANY_SOURCE, MPI_ANY_TAG and both, MPI_Iprobe,
 * MPI_Improbe + MPI_Mrecv, and pre-posted wildcard receives; they post and cancel receives
 * that can never match; collectives run while messages are still queued.  Every payload is
 * checked: its header names the round, communicator, source, tag and sequence number, the
 * status must agree with it, messages of one (communicator, source, tag) must arrive in
 * sending order (MPI's non-overtaking rule), and the body is a pattern derived from the
 * header.  Exit 0 and "stress: ok" on rank 0 when everything matched.
 *
 * Arguments: [rounds] (default 20).
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { NCOMM = 3, NTAG = 6, PER_TAG = 3, HDR = 6, MAGIC = 0x5eed };
/* Every LARGE_EVERY-th message is LARGE_INTS long: above the shared-memory eager limit,
 * so it takes the rendezvous path; the others are short. */
enum { SMALL_INTS = 16, LARGE_INTS = 40000, LARGE_EVERY = 7 };

static int failures;

#define CHECK(cond, ...)                                                                       \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            if (failures++ < 20) {                                                             \
                fprintf(stderr, "stress: rank %d: ", world_rank);                              \
                fprintf(stderr, __VA_ARGS__);                                                  \
                fputc('\n', stderr);                                                           \
            }                                                                                  \
        }                                                                                      \
    } while (0)

static int world_rank;

/* Body word i of the message (round, comm, src, tag, seq). */
static int pattern(int round, int c, int src, int tag, int seq, int i)
{
    return (int)((uint32_t)round * 2654435761u ^
                 (uint32_t)(c * 97 + src * 31 + tag * 7 + seq) * 40503u ^
                 (uint32_t)i * 2246822519u);
}

static int msg_len(int seq, int tag)
{
    return (seq + tag) % LARGE_EVERY == 0 ? LARGE_INTS : SMALL_INTS;
}

static void fill(int *buf, int len, int round, int c, int src, int tag, int seq)
{
    buf[0] = MAGIC;
    buf[1] = round;
    buf[2] = c;
    buf[3] = src;
    buf[4] = tag;
    buf[5] = seq;
    for (int i = HDR; i < len; i++)
        buf[i] = pattern(round, c, src, tag, seq, i);
}

/* Check one received message against its status and the per-(src, tag) order. */
static void check(const int *buf, const MPI_Status *st, int round, int c, int want_src,
                  int want_tag, int *next_seq /* [src][tag] */)
{
    int count, src = st->MPI_SOURCE, tag = st->MPI_TAG;
    MPI_Get_count(st, MPI_INT, &count);
    CHECK(buf[0] == MAGIC, "bad magic %x", buf[0]);
    CHECK(buf[1] == round && buf[2] == c, "round/comm %d/%d, expected %d/%d", buf[1], buf[2],
          round, c);
    CHECK(buf[3] == src && buf[4] == tag, "header says src %d tag %d, status %d %d", buf[3],
          buf[4], src, tag);
    CHECK(want_src == MPI_ANY_SOURCE || src == want_src, "source %d, asked %d", src, want_src);
    CHECK(want_tag == MPI_ANY_TAG || tag == want_tag, "tag %d, asked %d", tag, want_tag);
    if (src < 0 || tag < 0 || tag >= NTAG)
        return;
    int *next = &next_seq[src * NTAG + tag];
    CHECK(buf[5] == *next, "comm %d src %d tag %d: seq %d arrived, expected %d (overtaking)", c,
          src, tag, buf[5], *next);
    CHECK(count == msg_len(buf[5], tag), "count %d, expected %d", count, msg_len(buf[5], tag));
    for (int i = HDR; i < count; i++)
        if (buf[i] != pattern(round, c, src, tag, buf[5], i)) {
            CHECK(0, "body word %d differs (src %d tag %d seq %d)", i, src, tag, buf[5]);
            break;
        }
    *next = buf[5] + 1;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 20;
    MPI_Comm comm[NCOMM];
    int size[NCOMM], rank[NCOMM];
    long received = 0, sent = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    /* three communicators with different rank orders: a dup, a reversed split, a dup of
     * the dup (the same group, another context) */
    MPI_Comm_dup(MPI_COMM_WORLD, &comm[0]);
    MPI_Comm_split(MPI_COMM_WORLD, 0, -world_rank, &comm[1]);
    MPI_Comm_dup(comm[0], &comm[2]);
    for (int c = 0; c < NCOMM; c++) {
        MPI_Comm_size(comm[c], &size[c]);
        MPI_Comm_rank(comm[c], &rank[c]);
    }
    int n = size[0];
    int nsend = NCOMM * (n - 1) * NTAG * PER_TAG;
    MPI_Request *sreq = malloc(sizeof(MPI_Request) * nsend);
    MPI_Status *sstat = malloc(sizeof(MPI_Status) * nsend);
    int **sbuf = malloc(sizeof(int *) * nsend);
    int *rbuf = malloc(sizeof(int) * LARGE_INTS);
    int *next_seq = malloc(sizeof(int) * NCOMM * n * NTAG);

    for (int round = 0; round < rounds; round++) {
        memset(next_seq, 0, sizeof(int) * NCOMM * n * NTAG);
        int ns = 0;

        /* Pre-posted wildcard receives on comm 2 (posted queue): one per peer. */
        int npre = n - 1;
        MPI_Request *pre = malloc(sizeof(MPI_Request) * npre);
        int **prebuf = malloc(sizeof(int *) * npre);
        for (int i = 0; i < npre; i++) {
            prebuf[i] = malloc(sizeof(int) * LARGE_INTS);
            MPI_Irecv(prebuf[i], LARGE_INTS, MPI_INT, MPI_ANY_SOURCE, i % 2 ? MPI_ANY_TAG : 0,
                      comm[2], &pre[i]);
        }
        /* A receive that can never match, cancelled later (it sits in the posted queue). */
        MPI_Request never;
        int dummy;
        MPI_Irecv(&dummy, 1, MPI_INT, MPI_ANY_SOURCE, NTAG + 100, comm[1], &never);

        /* Send everything; the receivers are not posting yet. */
        for (int c = 0; c < NCOMM; c++)
            for (int seq = 0; seq < PER_TAG; seq++)
                for (int tag = 0; tag < NTAG; tag++)
                    for (int d = 1; d < n; d++) {
                        int dst = (rank[c] + d) % n, len = msg_len(seq, tag);
                        sbuf[ns] = malloc(sizeof(int) * len);
                        fill(sbuf[ns], len, round, c, rank[c], tag, seq);
                        MPI_Isend(sbuf[ns], len, MPI_INT, dst, tag, comm[c], &sreq[ns]);
                        ns++;
                    }
        sent += ns;

        /* A collective while the messages wait unexpected: it must not match them. */
        long in[2] = {round, ns}, out[2];
        MPI_Allreduce(in, out, 2, MPI_LONG, MPI_SUM, comm[1]);
        CHECK(out[0] == (long)round * n && out[1] == (long)ns * n, "allreduce gave %ld %ld",
              out[0], out[1]);

        /* The pre-posted receives on comm 2 took the first matching messages. */
        for (int i = 0; i < npre; i++) {
            MPI_Status st;
            MPI_Wait(&pre[i], &st);
            check(prebuf[i], &st, round, 2, MPI_ANY_SOURCE, i % 2 ? MPI_ANY_TAG : 0,
                  next_seq + 2 * n * NTAG);
            free(prebuf[i]);
            received++;
        }
        free(pre);
        free(prebuf);

        /* Receive the rest with a mix of matching styles. */
        for (int c = 0; c < NCOMM; c++) {
            int *next = next_seq + c * n * NTAG;
            int left = (n - 1) * NTAG * PER_TAG - (c == 2 ? npre : 0);
            int k = 0;
            while (left > 0) {
                MPI_Status st;
                int style = (k++ + round + c) % 5;
                int src = (rank[c] + 1 + k % (n - 1)) % n, tag = k % NTAG;
                if (style == 0) { /* exact, if anything is left for it */
                    int flag;
                    MPI_Iprobe(src, tag, comm[c], &flag, &st);
                    if (!flag && next[src * NTAG + tag] == PER_TAG)
                        continue;
                    MPI_Recv(rbuf, LARGE_INTS, MPI_INT, src, tag, comm[c], &st);
                    check(rbuf, &st, round, c, src, tag, next);
                } else if (style == 1) { /* any source, fixed tag */
                    int flag, more = 0;
                    for (int s = 0; s < n; s++)
                        more |= s != rank[c] && next[s * NTAG + tag] < PER_TAG;
                    if (!more)
                        continue;
                    MPI_Iprobe(MPI_ANY_SOURCE, tag, comm[c], &flag, &st);
                    MPI_Recv(rbuf, LARGE_INTS, MPI_INT, MPI_ANY_SOURCE, tag, comm[c], &st);
                    check(rbuf, &st, round, c, MPI_ANY_SOURCE, tag, next);
                } else if (style == 2) { /* fixed source, any tag */
                    int more = 0;
                    for (int t = 0; t < NTAG; t++)
                        more |= next[src * NTAG + t] < PER_TAG;
                    if (!more)
                        continue;
                    MPI_Recv(rbuf, LARGE_INTS, MPI_INT, src, MPI_ANY_TAG, comm[c], &st);
                    check(rbuf, &st, round, c, src, MPI_ANY_TAG, next);
                } else if (style == 3) { /* matched probe, then receive the message */
                    MPI_Message msg;
                    int count;
                    MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm[c], &msg, &st);
                    MPI_Get_count(&st, MPI_INT, &count);
                    int *buf = malloc(sizeof(int) * (count > 0 ? count : 1));
                    MPI_Status st2;
                    MPI_Mrecv(buf, count, MPI_INT, &msg, &st2);
                    CHECK(st2.MPI_SOURCE == st.MPI_SOURCE && st2.MPI_TAG == st.MPI_TAG,
                          "mrecv status differs from mprobe");
                    check(buf, &st2, round, c, MPI_ANY_SOURCE, MPI_ANY_TAG, next);
                    free(buf);
                } else { /* any source, any tag */
                    MPI_Recv(rbuf, LARGE_INTS, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, comm[c],
                             &st);
                    check(rbuf, &st, round, c, MPI_ANY_SOURCE, MPI_ANY_TAG, next);
                }
                received++;
                left--;
            }
            /* nothing of this communicator may be left over */
            int flag;
            MPI_Status st;
            MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm[c], &flag, &st);
            CHECK(!flag, "comm %d: a message from %d tag %d is left", c, st.MPI_SOURCE,
                  st.MPI_TAG);
        }

        /* The receive that never matched is cancelled. */
        MPI_Status st;
        int cancelled;
        MPI_Cancel(&never);
        MPI_Wait(&never, &st);
        MPI_Test_cancelled(&st, &cancelled);
        CHECK(cancelled, "round %d: cancel of an unmatched receive failed", round);

        MPI_Waitall(ns, sreq, sstat);
        for (int i = 0; i < ns; i++)
            free(sbuf[i]);

        /* Collectives between rounds: a broadcast from a moving root and an alltoall. */
        int root = round % n, token = rank[0] == root ? round * 1000 + 7 : -1;
        MPI_Bcast(&token, 1, MPI_INT, root, comm[0]);
        CHECK(token == round * 1000 + 7, "bcast gave %d", token);
        int *a = malloc(sizeof(int) * n), *b = malloc(sizeof(int) * n);
        for (int i = 0; i < n; i++)
            a[i] = rank[2] * n + i;
        MPI_Alltoall(a, 1, MPI_INT, b, 1, MPI_INT, comm[2]);
        for (int i = 0; i < n; i++)
            CHECK(b[i] == i * n + rank[2], "alltoall word %d is %d", i, b[i]);
        free(a);
        free(b);
    }

    long tot[3] = {sent, received, failures}, all[3];
    MPI_Reduce(tot, all, 3, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (world_rank == 0) {
        if (all[0] != all[1] || all[2] != 0)
            printf("stress: FAILED: %ld sent, %ld received, %ld errors\n", all[0], all[1],
                   all[2]);
        else
            printf("stress: ok: %d processes, %d rounds, %ld messages checked\n", n, rounds,
                   all[1]);
    }
    for (int c = 0; c < NCOMM; c++)
        MPI_Comm_free(&comm[c]);
    free(sreq);
    free(sstat);
    free(sbuf);
    free(rbuf);
    free(next_seq);
    int bad = failures != 0;
    MPI_Finalize();
    return bad;
}
