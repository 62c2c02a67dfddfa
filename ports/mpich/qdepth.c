/* qdepth.c -- ping-pong latency between ranks 0 and 1 while rank 1's receive queues are
 * deep.  Mode "posted": rank 1 keeps D receives posted that never match (same source and
 * communicator, other tags), so every ping is matched behind them.  Mode "unexpected":
 * rank 0 first sends D messages rank 1 does not receive yet, so every receive of a ping
 * searches past them.  Prints one line per D: "mode D usec" (one-way latency, the best
 * of several batches, to keep the noise of a shared machine out).
 *
 * Arguments: MODE D1,D2,... [iterations per batch] [batches]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { PING = 0, PONG = 1, FILLER = 1000 };

static double pingpong(int rank, int iters)
{
    char byte = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++) {
        if (rank == 0) {
            MPI_Send(&byte, 1, MPI_CHAR, 1, PING, MPI_COMM_WORLD);
            MPI_Recv(&byte, 1, MPI_CHAR, 1, PONG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(&byte, 1, MPI_CHAR, 0, PING, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(&byte, 1, MPI_CHAR, 0, PONG, MPI_COMM_WORLD);
        }
    }
    return (MPI_Wtime() - t0) / iters / 2 * 1e6;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 3 || size != 2 || (strcmp(argv[1], "posted") && strcmp(argv[1], "unexpected"))) {
        if (rank == 0)
            fprintf(stderr,
                    "usage: mpiexec -n 2 %s posted|unexpected D1,D2,... [iters] [batches]\n",
                    argv[0]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int posted = strcmp(argv[1], "posted") == 0;
    int iters = argc > 3 ? atoi(argv[3]) : 2000;
    int batches = argc > 4 ? atoi(argv[4]) : 5;
    char *list = strdup(argv[2]);

    for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
        int d = atoi(tok);
        char *fill = calloc(d > 0 ? d : 1, 1);
        MPI_Request *req = malloc(sizeof(MPI_Request) * (d > 0 ? d : 1));
        MPI_Status *st = malloc(sizeof(MPI_Status) * (d > 0 ? d : 1));

        if (posted && rank == 1) {
            for (int i = 0; i < d; i++)
                MPI_Irecv(&fill[i], 1, MPI_CHAR, 0, FILLER + i, MPI_COMM_WORLD, &req[i]);
        } else if (!posted && rank == 0) {
            for (int i = 0; i < d; i++)
                MPI_Isend(&fill[i], 1, MPI_CHAR, 1, FILLER + i, MPI_COMM_WORLD, &req[i]);
            MPI_Waitall(d, req, st); /* eager: they now sit at rank 1 */
        }
        pingpong(rank, iters / 10 + 1); /* warm up */
        double best = 1e30;
        for (int b = 0; b < batches; b++) {
            double us = pingpong(rank, iters);
            best = us < best ? us : best;
        }
        /* drain: cancel the posted fillers, receive the unexpected ones */
        if (posted && rank == 1) {
            for (int i = 0; i < d; i++)
                MPI_Cancel(&req[i]);
            MPI_Waitall(d, req, st);
        } else if (!posted && rank == 1) {
            for (int i = 0; i < d; i++)
                MPI_Recv(&fill[i], 1, MPI_CHAR, 0, FILLER + i, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
        }
        if (rank == 0)
            printf("%s %d %.3f\n", argv[1], d, best);
        fflush(stdout);
        free(fill);
        free(req);
        free(st);
    }
    free(list);
    MPI_Finalize();
    return 0;
}
