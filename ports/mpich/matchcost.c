/* matchcost.c -- the receive-queue code of MPICH's CH4 active-message path alone, on the
 * sequences of ports/mpich/qdepth.c, for callgrind (ports/mpich/matchcost): one round trip
 * at rank 1 is a receive posted for the ping and the ping's arrival, in either order, behind
 * D filler receives (tags 1000...) or D filler messages.
 *
 * Compiled against an MPICH tree's own headers, three ways:
 *   default               stock MPICH: MPIDIG_rreq_dequeue / MPIDIG_enqueue_request on the
 *                         per-VCI lists, as MPIDIG_do_irecv and the arrival callback call them
 *   -DMATCHCOST_PATCHED   a patched tree: MPIDIG_recvq_post / MPIDIG_recvq_arrive (vmatch)
 *   -DMATCHCOST_FLOOR     no MPICH at all: vmatch_inline.h's exact calls with nothing around
 *                         them, the least a port of these calls can execute
 * The ping's source, tag and context id are read at run time (MPICH's are), so that no
 * packing folds into constants.  Requests are static; a queued one gets the fields MPICH's
 * match reads.
 *
 * Usage: matchcost-X posted|unexpected D N ORDER   (ORDER 1: the message arrives first) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef MATCHCOST_FLOOR
#include <vmatch_inline.h>

typedef void req_t;
static vmatch_engine_t *engine;
static int reqs[8192];
#define REQ(i) ((void *)&reqs[i])

__attribute__((noinline)) static req_t *post(int src, int tag, int ctx, req_t *r)
{
    void *found = NULL;
    int rc = vmatch_inline_post(engine, vmatch_inline_mpi_msg(engine, ctx, src, tag),
                                ~(vmatch_bits_t)0, 0, r, &found);
    return rc == VMATCH_MATCHED ? found : NULL;
}

__attribute__((noinline)) static req_t *arrive(int src, int tag, int ctx, req_t *m)
{
    void *found = NULL;
    int rc = vmatch_inline_arrive(engine, vmatch_inline_mpi_msg(engine, ctx, src, tag), 0, m,
                                  &found);
    return rc == VMATCH_MATCHED ? found : NULL;
}

static int setup(void)
{
    return vmatch_inline_create("layout.ctx=16 layout.src=19 layout.tag=29 nprocs=2 rank=1",
                                &engine);
}
#else
/* mpidimpl.h first, as MPICH's own sources include it */
/* clang-format off */
#include "mpidimpl.h"
#include "mpidig_recvq.h"
/* clang-format on */

/* What libmpi would define */
MPIDI_CH4_Global_t MPIDI_global;
MPIR_Process_t MPIR_Process;
int unexp_message_indices[2];

int MPIR_Assert_fail(const char *cond, const char *file, int line)
{
    fprintf(stderr, "matchcost: assertion %s failed at %s:%d\n", cond, file, line);
    abort();
}

typedef MPIR_Request req_t;
static MPIR_Request reqs[8192];
#define REQ(i) (&reqs[i])

static void set_recv(MPIR_Request *r, int src, int tag, int ctx)
{
    MPIDIG_REQUEST(r, u.recv.source) = src;
    MPIDIG_REQUEST(r, u.recv.tag) = tag;
    MPIDIG_REQUEST(r, u.recv.context_id) = ctx;
}

#ifdef MATCHCOST_PATCHED
int MPIDIG_recvq_max_rank;

__attribute__((noinline)) static req_t *post(int src, int tag, int ctx, req_t *r)
{
    MPIR_Request *u = MPIDIG_recvq_post(src, tag, ctx, 0, r);
    if (!u)
        set_recv(r, src, tag, ctx);
    return u;
}

__attribute__((noinline)) static req_t *arrive(int src, int tag, int ctx, req_t *m)
{
    MPIR_Request *p = MPIDIG_recvq_arrive(src, tag, ctx, 0, m);
    if (!p)
        set_recv(m, src, tag, ctx);
    return p;
}

/* The engine MPICH would make for 2 processes (create_engines), at rank 1 */
static int setup(void)
{
    MPIR_Process.tag_bits = 31;
    MPIDIG_recvq_max_rank = 1 << 19;
    return vmatch_inline_create("layout.ctx=16 layout.src=19 layout.tag=29 nprocs=2 rank=1",
                                &MPIDI_global.per_vci[0].recvq.engine);
}
#else
__attribute__((noinline)) static req_t *post(int src, int tag, int ctx, req_t *r)
{
    MPIR_Request *u = MPIDIG_rreq_dequeue(src, tag, ctx, &MPIDI_global.per_vci[0].unexp_list,
                                          MPIDIG_PT2PT_UNEXP);
    if (!u) {
        set_recv(r, src, tag, ctx);
        MPIDIG_enqueue_request(r, &MPIDI_global.per_vci[0].posted_list, MPIDIG_PT2PT_POSTED);
    }
    return u;
}

__attribute__((noinline)) static req_t *arrive(int src, int tag, int ctx, req_t *m)
{
    MPIR_Request *p = MPIDIG_rreq_dequeue(src, tag, ctx, &MPIDI_global.per_vci[0].posted_list,
                                          MPIDIG_PT2PT_POSTED);
    if (!p) {
        set_recv(m, src, tag, ctx);
        MPIDIG_enqueue_request(m, &MPIDI_global.per_vci[0].unexp_list, MPIDIG_PT2PT_UNEXP);
    }
    return p;
}

static int setup(void)
{
    MPIR_Process.tag_bits = 31;
    return 0;
}
#endif
#endif

/* The ping's (source, tag, context id): MPI_COMM_WORLD's point-to-point context, rank 0,
 * tag 0, as qdepth's PING */
volatile int ping_src, ping_tag, ping_ctx;

/* One round trip at rank 1 (callgrind counts this function, inclusive): 1 when the second
 * operation took the first one's request, as a match must, else 0. */
__attribute__((noinline)) int round_trip(int message_first)
{
    int s = ping_src, t = ping_tag, c = ping_ctx;
    if (message_first)
        return arrive(s, t, c, REQ(8000)) == NULL && post(s, t, c, REQ(8001)) == REQ(8000);
    return post(s, t, c, REQ(8001)) == NULL && arrive(s, t, c, REQ(8000)) == REQ(8001);
}

int main(int argc, char **argv)
{
    if (argc != 5 || (strcmp(argv[1], "posted") && strcmp(argv[1], "unexpected"))) {
        fprintf(stderr, "usage: %s posted|unexpected D N ORDER\n", argv[0]);
        return 2;
    }
    int posted = strcmp(argv[1], "posted") == 0;
    int d = atoi(argv[2]), n = atoi(argv[3]), message_first = atoi(argv[4]);
    if (d < 0 || d > 4096 || n < 1 || setup() != 0) {
        fprintf(stderr, "matchcost: bad D or N, or no engine\n");
        return 1;
    }
    for (int i = 0; i < d; i++) {
        if (posted)
            post(0, 1000 + i, 0, REQ(i));
        else
            arrive(0, 1000 + i, 0, REQ(i));
    }
    int bad = 0;
    for (int i = 0; i < n; i++)
        bad += !round_trip(message_first);
    if (bad) {
        fprintf(stderr, "matchcost: %d of %d round trips did not match\n", bad, n);
        return 1;
    }
    return 0;
}
