/* wildcards.c -- MPI matching checks aimed at a tag-matching layer under the MPI library
 * (ports/ucx: Open MPI's pml/ucx over UCX with vmatch).  Run with 2 or more processes.
 *
 * Every phase checks every payload and status:
 * - pending wildcards across collectives: each rank posts MPI_ANY_SOURCE / MPI_ANY_TAG
 *   receives, then runs barrier, bcast, allreduce, alltoall and allgather (whose internal
 *   messages must not match them: Open MPI sends collectives with negative tags, whose
 *   top bit the ANY_TAG mask keeps), then the messages meant for the wildcards are sent;
 * - ordering under wildcards: rank 0 gets messages from every other rank on NTAG tags,
 *   small and large (rendezvous), with synchronous sends among them, and takes them with
 *   a rotation of exact, ANY_SOURCE, ANY_TAG and double-wildcard receives, MPI_Probe,
 *   MPI_Improbe + MPI_Mrecv and MPI_Mprobe + MPI_Imrecv; per (source, tag) the sequence
 *   numbers must come in sending order (MPI's non-overtaking rule);
 * - cancel: receives that can never match are posted among matching ones and cancelled
 *   (MPI_Test_cancelled must say so); a receive that matched cannot be cancelled.
 * Exit 0 and "wildcards: ok" on rank 0 when everything matched.
 *
 * Arguments: [rounds] (default 5).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { NTAG = 5, PER_TAG = 4, HDR = 4, SMALL = 8, LARGE = 50000, WILD_TAG = 777 };

static int rank, size, failures;

#define CHECK(cond, ...)                                                                       \
    do {                                                                                       \
        if (!(cond) && failures++ < 20) {                                                      \
            fprintf(stderr, "wildcards: rank %d: ", rank);                                     \
            fprintf(stderr, __VA_ARGS__);                                                      \
            fputc('\n', stderr);                                                               \
        }                                                                                      \
    } while (0)

static int len_of(int src, int tag, int seq)
{
    return (src + tag + seq) % 5 == 0 ? LARGE : SMALL;
}

static int word(const int *h, int i)
{
    return h[0] * 7919 + h[1] * 104729 + h[2] * 31 + h[3] + i * 2654435761u;
}

static void fill(int *buf, int len, int round, int src, int tag, int seq)
{
    buf[0] = round;
    buf[1] = src;
    buf[2] = tag;
    buf[3] = seq;
    for (int i = HDR; i < len; i++)
        buf[i] = word(buf, i);
}

/* Check a received message against its status and its header; returns its sequence. */
static int verify(const int *buf, const MPI_Status *st, int round, int want_src, int want_tag)
{
    int count;
    MPI_Get_count(st, MPI_INT, &count);
    CHECK(st->MPI_SOURCE == buf[1] && st->MPI_TAG == buf[2],
          "status says source %d tag %d, header %d/%d", st->MPI_SOURCE, st->MPI_TAG, buf[1],
          buf[2]);
    CHECK(buf[0] == round, "round %d, expected %d", buf[0], round);
    CHECK(want_src == MPI_ANY_SOURCE || buf[1] == want_src, "source %d for a receive from %d",
          buf[1], want_src);
    CHECK(want_tag == MPI_ANY_TAG || buf[2] == want_tag, "tag %d for a receive of tag %d",
          buf[2], want_tag);
    CHECK(count == len_of(buf[1], buf[2], buf[3]), "count %d for message %d/%d/%d", count,
          buf[1], buf[2], buf[3]);
    for (int i = HDR; i < count; i++)
        if (buf[i] != word(buf, i)) {
            CHECK(0, "payload word %d of message %d/%d/%d differs", i, buf[1], buf[2], buf[3]);
            break;
        }
    return buf[3];
}

/* Wildcard receives left pending while collectives run. */
static void collectives(int round)
{
    int pend[2][HDR], val = rank + round, sum = 0, root = round % size;
    MPI_Request r[2];
    MPI_Status st[2];
    int from = (rank + size - 1) % size, to = (rank + 1) % size;
    MPI_Irecv(pend[0], HDR, MPI_INT, MPI_ANY_SOURCE, WILD_TAG, MPI_COMM_WORLD, &r[0]);
    MPI_Irecv(pend[1], HDR, MPI_INT, from, MPI_ANY_TAG, MPI_COMM_WORLD, &r[1]);

    int *all = malloc(sizeof(int) * (size_t)size * 2);
    MPI_Barrier(MPI_COMM_WORLD);
    int b = rank == root ? 1000 + round : -1;
    MPI_Bcast(&b, 1, MPI_INT, root, MPI_COMM_WORLD);
    CHECK(b == 1000 + round, "bcast gave %d", b);
    MPI_Allreduce(&val, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(sum == size * (size - 1) / 2 + size * round, "allreduce gave %d", sum);
    for (int i = 0; i < size; i++)
        all[i] = rank * 100 + i;
    MPI_Alltoall(all, 1, MPI_INT, all + size, 1, MPI_INT, MPI_COMM_WORLD);
    for (int i = 0; i < size; i++)
        CHECK(all[size + i] == i * 100 + rank, "alltoall from %d gave %d", i, all[size + i]);
    MPI_Allgather(&rank, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
    for (int i = 0; i < size; i++)
        CHECK(all[i] == i, "allgather slot %d gave %d", i, all[i]);
    free(all);

    int flag;
    MPI_Testall(2, r, &flag, st);
    CHECK(!flag, "a wildcard receive completed before its message was sent");
    MPI_Barrier(MPI_COMM_WORLD); /* no rank sends before every rank has tested */
    int msg[2][HDR] = {{round, rank, WILD_TAG, 0}, {round, rank, 3, 1}};
    MPI_Send(msg[0], HDR, MPI_INT, to, WILD_TAG, MPI_COMM_WORLD);
    MPI_Send(msg[1], HDR, MPI_INT, to, 3, MPI_COMM_WORLD);
    MPI_Waitall(2, r, st);
    /* r[0] (ANY_SOURCE, WILD_TAG) was posted first: it takes the first message */
    CHECK(pend[0][1] == from && pend[0][2] == WILD_TAG && st[0].MPI_TAG == WILD_TAG,
          "ANY_SOURCE receive got %d/%d", pend[0][1], pend[0][2]);
    CHECK(pend[1][1] == from && pend[1][2] == 3 && st[1].MPI_TAG == 3 &&
              st[1].MPI_SOURCE == from,
          "ANY_TAG receive got %d/%d", pend[1][1], pend[1][2]);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Rank 0 receives everything the others send, in a rotation of receive kinds. */
static void ordering(int round)
{
    int total = (size - 1) * NTAG * PER_TAG;
    int *buf = malloc(sizeof(int) * LARGE);
    if (rank != 0) {
        MPI_Request *r = malloc(sizeof(MPI_Request) * NTAG * PER_TAG);
        int **bufs = malloc(sizeof(int *) * NTAG * PER_TAG), n = 0;
        for (int seq = 0; seq < PER_TAG; seq++)
            for (int tag = 0; tag < NTAG; tag++) {
                int len = len_of(rank, tag, seq);
                bufs[n] = malloc(sizeof(int) * (size_t)len);
                fill(bufs[n], len, round, rank, tag, seq);
                if ((tag + seq) % 4 == 1)
                    MPI_Issend(bufs[n], len, MPI_INT, 0, tag, MPI_COMM_WORLD, &r[n]);
                else
                    MPI_Isend(bufs[n], len, MPI_INT, 0, tag, MPI_COMM_WORLD, &r[n]);
                n++;
            }
        MPI_Waitall(n, r, MPI_STATUSES_IGNORE);
        for (int i = 0; i < n; i++)
            free(bufs[i]);
        free(bufs);
        free(r);
    } else {
        int next[64][NTAG] = {{0}};
        for (int k = 0; k < total; k++) {
            /* a source and tag that still have messages, for the exact kinds */
            int src = 1 + k % (size - 1), tag = (k / (size - 1)) % NTAG;
            for (int tries = 0; next[src][tag] == PER_TAG && tries < (size - 1) * NTAG;
                 tries++) {
                tag = (tag + 1) % NTAG;
                if (tag == 0)
                    src = src % (size - 1) + 1;
            }
            int want_src = src, want_tag = tag;
            MPI_Status st;
            MPI_Message m;
            MPI_Request r;
            int flag = 0;
            switch (k % 7) {
            case 0:
                MPI_Recv(buf, LARGE, MPI_INT, src, tag, MPI_COMM_WORLD, &st);
                break;
            case 1:
                want_src = MPI_ANY_SOURCE;
                MPI_Recv(buf, LARGE, MPI_INT, MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &st);
                break;
            case 2:
                want_tag = MPI_ANY_TAG;
                MPI_Recv(buf, LARGE, MPI_INT, src, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
                break;
            case 3:
                want_src = MPI_ANY_SOURCE;
                want_tag = MPI_ANY_TAG;
                MPI_Recv(buf, LARGE, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
                break;
            case 4: {
                MPI_Status pst;
                want_src = MPI_ANY_SOURCE;
                MPI_Probe(MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &pst);
                MPI_Recv(buf, LARGE, MPI_INT, pst.MPI_SOURCE, tag, MPI_COMM_WORLD, &st);
                CHECK(st.MPI_SOURCE == pst.MPI_SOURCE, "probe said source %d, recv got %d",
                      pst.MPI_SOURCE, st.MPI_SOURCE);
                break;
            }
            case 5:
                want_tag = MPI_ANY_TAG;
                while (!flag)
                    MPI_Improbe(src, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &m, &st);
                MPI_Mrecv(buf, LARGE, MPI_INT, &m, &st);
                break;
            default:
                want_src = MPI_ANY_SOURCE;
                want_tag = MPI_ANY_TAG;
                MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &m, &st);
                MPI_Imrecv(buf, LARGE, MPI_INT, &m, &r);
                MPI_Wait(&r, &st);
                break;
            }
            int seq = verify(buf, &st, round, want_src, want_tag);
            if (buf[1] >= 1 && buf[1] < size && buf[1] < 64 && buf[2] >= 0 && buf[2] < NTAG) {
                CHECK(seq == next[buf[1]][buf[2]], "message %d/%d/%d overtook %d", buf[1],
                      buf[2], seq, next[buf[1]][buf[2]]);
                next[buf[1]][buf[2]] = seq + 1;
            }
        }
    }
    free(buf);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Receives that never match, cancelled among ones that do. */
static void cancels(int round)
{
    int from = (rank + size - 1) % size, to = (rank + 1) % size;
    int never[3], got[HDR], msg[HDR] = {round, rank, 11, 0};
    MPI_Request r[4];
    MPI_Status st[4];
    MPI_Irecv(&never[0], 1, MPI_INT, MPI_ANY_SOURCE, 9999, MPI_COMM_WORLD, &r[0]);
    MPI_Irecv(got, HDR, MPI_INT, from, 11, MPI_COMM_WORLD, &r[1]);
    MPI_Irecv(&never[1], 1, MPI_INT, from, 9998, MPI_COMM_WORLD, &r[2]);
    MPI_Irecv(&never[2], 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &r[3]);
    MPI_Send(msg, HDR, MPI_INT, to, 11, MPI_COMM_WORLD);
    MPI_Wait(&r[1], &st[1]);
    CHECK(got[1] == from && got[2] == 11 && st[1].MPI_SOURCE == from,
          "receive before the cancels got %d/%d", got[1], got[2]);
    int cancelled;
    MPI_Test_cancelled(&st[1], &cancelled);
    CHECK(!cancelled, "a receive that matched says it was cancelled");
    for (int i = 0; i < 4; i += (i == 0 ? 2 : 1))
        MPI_Cancel(&r[i]);
    for (int i = 0; i < 4; i += (i == 0 ? 2 : 1)) {
        MPI_Wait(&r[i], &st[i]);
        MPI_Test_cancelled(&st[i], &cancelled);
        CHECK(cancelled, "receive %d was not cancelled", i);
    }
    /* the cancelled ANY_SOURCE/ANY_TAG receive must not take this one (sent only when
     * every rank has cancelled: before, it could take it) */
    MPI_Barrier(MPI_COMM_WORLD);
    msg[2] = 12;
    MPI_Send(msg, HDR, MPI_INT, to, 12, MPI_COMM_WORLD);
    MPI_Recv(got, HDR, MPI_INT, MPI_ANY_SOURCE, 12, MPI_COMM_WORLD, &st[0]);
    CHECK(got[1] == from && got[2] == 12 && st[0].MPI_SOURCE == from,
          "receive after the cancels got %d/%d", got[1], got[2]);
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int rounds = argc > 1 ? atoi(argv[1]) : 5;
    if (size < 2 || size > 64) {
        if (rank == 0)
            fprintf(stderr, "wildcards: run with 2 to 64 processes\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (int round = 0; round < rounds; round++) {
        collectives(round);
        ordering(round);
        cancels(round);
    }
    int all = 0;
    MPI_Reduce(&failures, &all, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf(all ? "wildcards: %d FAILURES\n" : "wildcards: ok (%d failures)\n", all);
    MPI_Finalize();
    return all != 0;
}
