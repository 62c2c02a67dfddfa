/* A receive posted before its message, and a message that arrives before its receive. */
#include <stdio.h>
#include <vmatch.h>

int main(void)
{
    vmatch_engine_t *e;
    int rc = vmatch_create("policy=single storage=lla", &e);
    if (rc < 0) {
        fprintf(stderr, "vmatch: %s (%s)\n", vmatch_strerror(rc), vmatch_last_error());
        return 1;
    }
    int req1 = 1, req2 = 2, msg1 = 10, msg2 = 20;
    vmatch_bits_t bits, care;
    void *found;

    /* MPI_Irecv(source 3, tag 7, context 0) is posted first: no message yet, so it queues. */
    vmatch_mpi_recv(e, 0, 3, 7, &bits, &care);
    rc = vmatch_post(e, bits, care, 0, &req1, &found);
    printf("post recv(3, 7): %s\n", rc == VMATCH_MATCHED ? "matched" : "queued");

    /* A message from rank 3 with tag 7 arrives and finds the posted receive. */
    rc = vmatch_arrive(e, vmatch_mpi_msg(e, 0, 3, 7), 0, &msg1, &found);
    printf("arrive (3, 7): %s request %d\n", rc == VMATCH_MATCHED ? "matched" : "queued",
           rc == VMATCH_MATCHED ? *(int *)found : 0);

    /* A message from rank 5 arrives with no receive posted: it waits in the UMQ ... */
    vmatch_arrive(e, vmatch_mpi_msg(e, 0, 5, 9), 0, &msg2, &found);
    /* ... until MPI_Irecv(MPI_ANY_SOURCE, MPI_ANY_TAG) takes it. */
    vmatch_mpi_recv(e, 0, VMATCH_ANY_SOURCE, VMATCH_ANY_TAG, &bits, &care);
    rc = vmatch_post(e, bits, care, 0, &req2, &found);
    printf("post recv(any, any): %s message %d\n", rc == VMATCH_MATCHED ? "matched" : "queued",
           rc == VMATCH_MATCHED ? *(int *)found : 0);

    vmatch_stats_t st;
    vmatch_stats(e, &st);
    printf("posted %llu, unexpected %llu, entries inspected %llu\n",
           (unsigned long long)st.posted, (unsigned long long)st.unexpected,
           (unsigned long long)st.inspected);
    vmatch_destroy(e);
    return 0;
}
