/* ports/mpich/pvars.c -- check MPICH's receive-queue performance variables through MPI_T.
 *
 * MPICH configured with --enable-mpit-pvars=recvq registers the RECVQ pvars of the CH4
 * active-message queues; the vmatch patches feed them from vmatch_stats.  This program
 * finds them with MPI_T_pvar_get_num / MPI_T_pvar_get_info, allocates a handle for each in
 * one session, and reads them on rank 0 (the receiver) while rank 1 (the sender) creates
 * known queue contents, compared with a model of the two queues:
 *
 *   1. unexpected: K messages on two communicators, received in reverse order
 *   2. posted:     P receives on two communicators, matched by messages sent in reverse
 *   3. wildcards and cancel: MPI_ANY_TAG receives mixed with specific ones that are
 *      cancelled, then matched in posting order
 *   4. probe:      MPI_Iprobe (hit and miss), MPI_Improbe + MPI_Mrecv, MPI_ANY_TAG receives
 *
 * posted_recvq_length and unexpected_recvq_length must equal the model's queue lengths
 * after every step and be 0 at the end.  The match-attempt counters must grow by what a
 * walk of MPICH's lists compares (entries looked at until the match, the whole queue on a
 * miss), which is what vmatch reports as `inspected` for a policy with one queue per side;
 * with "lengths" as the argument (for policies that split the queues, such as pnp) a
 * difference there is printed as a note instead of failing.  The two timers must be
 * readable, never go backwards and have grown by the end.
 *
 * Two quirks of MPICH 4.0.2's MPI_T, stock and patched alike, are why only differences
 * are compared: MPIR_T_pvar_handle_alloc_impl overwrites the handle's SUM flag with the
 * pvar's flags, so counters and timers read as totals since MPI_Init rather than since
 * the handle was allocated; and a timer's total goes through MPL_wtime_todouble, which
 * subtracts MPL's clock epoch (meant for absolute times), so timers read as large
 * negative numbers of seconds.
 *
 * Every failed check prints "pvars: FAIL ..."; the exit status is then 1 on every rank.
 * The last line is "pvars: N checks passed" or "pvars: FAILED, F of N checks".
 * Usage: mpiexec -n 2 pvars [exact|lengths]     (more ranks just wait until rank 0 is done)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { POSTED_LEN, UNEXP_LEN, POSTED_ATT, UNEXP_ATT, T_POSTED, T_UNEXP, NPV };

static struct {
    const char *name;
    int cls;
    int index;
    MPI_Datatype dt;
    MPI_T_pvar_handle h;
} pv[NPV] = {
    [POSTED_LEN] = {"posted_recvq_length", MPI_T_PVAR_CLASS_LEVEL, -1, 0, 0},
    [UNEXP_LEN] = {"unexpected_recvq_length", MPI_T_PVAR_CLASS_LEVEL, -1, 0, 0},
    [POSTED_ATT] = {"posted_recvq_match_attempts", MPI_T_PVAR_CLASS_COUNTER, -1, 0, 0},
    [UNEXP_ATT] = {"unexpected_recvq_match_attempts", MPI_T_PVAR_CLASS_COUNTER, -1, 0, 0},
    [T_POSTED] = {"time_failed_matching_postedq", MPI_T_PVAR_CLASS_TIMER, -1, 0, 0},
    [T_UNEXP] = {"time_matching_unexpectedq", MPI_T_PVAR_CLASS_TIMER, -1, 0, 0},
};

static int rank, exact = 1, checks, failures;
static MPI_T_pvar_session session;

#define K 100 /* unexpected messages in phase 1 */
#define P 100 /* posted receives in phase 2 */
#define W 30  /* receives in phase 3, every third one specific and cancelled */
#define M 50  /* messages in phase 4 */

/* ---- model of rank 0's two queues, as MPICH's lists hold them ---- */
typedef struct {
    int ctx; /* 0: world, 1: c1, 2: sync */
    int tag; /* -1: MPI_ANY_TAG (posted side only) */
} entry_t;
typedef struct {
    entry_t e[256];
    int n;
} queue_t;
static queue_t prq, umq;
static unsigned long long att_prq, att_umq; /* list-walk compares so far (model) */

static void q_append(queue_t *q, int ctx, int tag)
{
    q->e[q->n++] = (entry_t){ctx, tag};
}

static void q_remove(queue_t *q, int i)
{
    memmove(&q->e[i], &q->e[i + 1], (size_t)(q->n - i - 1) * sizeof(entry_t));
    q->n--;
}

/* A receive (ctx, tag or -1) searches the UMQ: compares until the first match. */
static int m_search_umq(int ctx, int tag, int remove)
{
    for (int i = 0; i < umq.n; i++) {
        att_umq++;
        if (umq.e[i].ctx == ctx && (tag == -1 || umq.e[i].tag == tag)) {
            if (remove)
                q_remove(&umq, i);
            return 1;
        }
    }
    return 0;
}

static void m_post(int ctx, int tag)
{
    if (!m_search_umq(ctx, tag, 1))
        q_append(&prq, ctx, tag);
}

static void m_arrive(int ctx, int tag)
{
    for (int i = 0; i < prq.n; i++) {
        att_prq++;
        if (prq.e[i].ctx == ctx && (prq.e[i].tag == -1 || prq.e[i].tag == tag)) {
            q_remove(&prq, i);
            return;
        }
    }
    q_append(&umq, ctx, tag);
}

/* Cancel the posted receive at position i (the list walk compares up to it). */
static void m_cancel(int i)
{
    att_prq += (unsigned long long)i + 1;
    q_remove(&prq, i);
}

/* ---- MPI_T ---- */
static void die(const char *what, int rc)
{
    fprintf(stderr, "pvars: FAIL rank %d: %s returned %d\n", rank, what, rc);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static void find_pvars(void)
{
    int num, rc, found = 0;

    if ((rc = MPI_T_pvar_get_num(&num)) != MPI_SUCCESS)
        die("MPI_T_pvar_get_num", rc);
    for (int i = 0; i < num; i++) {
        char name[256], desc[1024];
        int nlen = sizeof name, dlen = sizeof desc, verb, cls, bind, ro, cont, atomic;
        MPI_Datatype dt;
        MPI_T_enum en;

        if ((rc = MPI_T_pvar_get_info(i, name, &nlen, &verb, &cls, &dt, &en, desc, &dlen, &bind,
                                      &ro, &cont, &atomic)) != MPI_SUCCESS)
            continue; /* an index that went invalid */
        for (int k = 0; k < NPV; k++) {
            if (strcmp(name, pv[k].name) != 0 || cls != pv[k].cls)
                continue;
            if (pv[k].index >= 0) {
                fprintf(stderr, "pvars: FAIL rank %d: %s registered twice\n", rank, name);
                failures++;
            }
            if (bind != MPI_T_BIND_NO_OBJECT || !ro || !cont) {
                fprintf(stderr, "pvars: FAIL rank %d: %s: bind %d readonly %d continuous %d\n",
                        rank, name, bind, ro, cont);
                failures++;
            }
            pv[k].index = i;
            pv[k].dt = dt;
            found++;
        }
    }
    checks++;
    if (found != NPV) {
        for (int k = 0; k < NPV; k++)
            if (pv[k].index < 0)
                fprintf(stderr,
                        "pvars: FAIL rank %d: no pvar %s among %d (is MPICH configured "
                        "with --enable-mpit-pvars=recvq?)\n",
                        rank, pv[k].name, num);
        failures++;
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if ((rc = MPI_T_pvar_session_create(&session)) != MPI_SUCCESS)
        die("MPI_T_pvar_session_create", rc);
    for (int k = 0; k < NPV; k++) {
        int count;
        if ((rc = MPI_T_pvar_handle_alloc(session, pv[k].index, NULL, &pv[k].h, &count)) !=
            MPI_SUCCESS)
            die("MPI_T_pvar_handle_alloc", rc);
        if (count != 1) {
            fprintf(stderr, "pvars: FAIL rank %d: %s has %d values\n", rank, pv[k].name, count);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        /* continuous pvars run from the moment the handle exists: no MPI_T_pvar_start */
    }
}

typedef union {
    unsigned u;
    unsigned long ul;
    unsigned long long ull;
    double d;
} value_t;

static value_t rd_raw(int k, int want_double)
{
    value_t v;
    int rc = MPI_T_pvar_read(session, pv[k].h, &v);

    if (rc != MPI_SUCCESS)
        die("MPI_T_pvar_read", rc);
    if ((pv[k].dt == MPI_DOUBLE) != want_double) {
        fprintf(stderr, "pvars: FAIL rank %d: %s has an unexpected datatype\n", rank,
                pv[k].name);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return v;
}

/* The value of an integer pvar. */
static unsigned long long rd(int k)
{
    value_t v = rd_raw(k, 0);

    if (pv[k].dt == MPI_UNSIGNED)
        return v.u;
    if (pv[k].dt == MPI_UNSIGNED_LONG)
        return v.ul;
    if (pv[k].dt == MPI_UNSIGNED_LONG_LONG)
        return v.ull;
    fprintf(stderr, "pvars: FAIL rank %d: %s has an unexpected datatype\n", rank, pv[k].name);
    MPI_Abort(MPI_COMM_WORLD, 1);
    return 0;
}

static void expect(const char *step, const char *what, unsigned long long got,
                   unsigned long long want, int must)
{
    checks++;
    if (got == want)
        return;
    if (must) {
        failures++;
        fprintf(stderr, "pvars: FAIL %s: %s is %llu, expected %llu\n", step, what, got, want);
    } else {
        printf("pvars: note %s: %s is %llu, a list walk compares %llu\n", step, what, got,
               want);
    }
}

/* Queue lengths against the model. */
static void check_lengths(const char *step)
{
    expect(step, "posted_recvq_length", rd(POSTED_LEN), (unsigned long long)prq.n, 1);
    expect(step, "unexpected_recvq_length", rd(UNEXP_LEN), (unsigned long long)umq.n, 1);
}

/* Match attempts since the base values against the model's compares since then. */
static unsigned long long base_pa, base_ua, model_pa, model_ua;
static void mark(void)
{
    base_pa = rd(POSTED_ATT);
    base_ua = rd(UNEXP_ATT);
    model_pa = att_prq;
    model_ua = att_umq;
}
static void check_attempts(const char *step)
{
    unsigned long long pa = rd(POSTED_ATT), ua = rd(UNEXP_ATT);
    expect(step, "posted_recvq_match_attempts growth", pa - base_pa, att_prq - model_pa, exact);
    expect(step, "unexpected_recvq_match_attempts growth", ua - base_ua, att_umq - model_ua,
           exact);
    printf("pvars: %s: match attempts posted +%llu unexpected +%llu (list walk: +%llu +%llu)\n",
           step, pa - base_pa, ua - base_ua, att_prq - model_pa, att_umq - model_ua);
}

/* Timers (seconds, see the head comment): never backwards, grown by the end. */
static double first_t[NPV], last_t[NPV];
static void check_timers(const char *step, int first, int final)
{
    for (int k = T_POSTED; k <= T_UNEXP; k++) {
        double t = rd_raw(k, 1).d;
        checks++;
        if (first) {
            first_t[k] = t;
        } else if (t < last_t[k] || (final && !(t > first_t[k]))) {
            failures++;
            fprintf(stderr,
                    "pvars: FAIL %s: %s is %.9f s (before: %.9f s, at the start %.9f s)\n",
                    step, pv[k].name, t, last_t[k], first_t[k]);
        }
        if (final)
            printf("pvars: %s grew by %.6f s\n", pv[k].name, t - first_t[k]);
        last_t[k] = t;
    }
}

/* Drive progress until the UMQ holds what the model says (messages still in flight
 * otherwise), without touching rank 0's queues: probing a communicator nobody sends on
 * searches the UMQ, so the match-attempt base is taken after this. */
static void settle(MPI_Comm quiet, const char *step)
{
    double t0 = MPI_Wtime();
    int flag;
    while (rd(UNEXP_LEN) != (unsigned long long)umq.n && MPI_Wtime() - t0 < 20)
        MPI_Iprobe(1, 0, quiet, &flag, MPI_STATUS_IGNORE);
    check_lengths(step);
}

static void check_payload(const char *step, int got, int want)
{
    expect(step, "payload", (unsigned long long)got, (unsigned long long)want, 1);
}

int main(int argc, char **argv)
{
    int provided, size, rc, buf[W > P ? W : P], one = 1;
    MPI_Comm comm[3], quiet; /* world dup, c1, sync; quiet: never used for messages */
    MPI_Request req[P > W ? P : W];
    MPI_Status st, sts[P];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc > 1)
        exact = strcmp(argv[1], "lengths") != 0;
    if (size < 2) {
        fprintf(stderr, "pvars: needs at least 2 processes\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if ((rc = MPI_T_init_thread(MPI_THREAD_SINGLE, &provided)) != MPI_SUCCESS)
        die("MPI_T_init_thread", rc);
    find_pvars();
    MPI_Comm_dup(MPI_COMM_WORLD, &comm[0]);
    MPI_Comm_dup(MPI_COMM_WORLD, &comm[1]);
    MPI_Comm_dup(MPI_COMM_WORLD, &comm[2]);
    MPI_Comm_dup(MPI_COMM_WORLD, &quiet);
    MPI_Barrier(MPI_COMM_WORLD);

    if (rank == 0) {
        char step[64];

        check_lengths("start");
        check_timers("start", 1, 0);

        /* 1. K unexpected messages, alternating communicators, received in reverse */
        for (int i = 0; i < K; i++)
            m_arrive(i % 2, i);
        MPI_Recv(&one, 1, MPI_INT, 1, 0, comm[2], &st); /* sent after them */
        settle(quiet, "1 queued");
        mark();
        for (int i = K - 1; i >= 0; i--) {
            MPI_Recv(&buf[0], 1, MPI_INT, 1, i, comm[i % 2], &st);
            m_post(i % 2, i);
            snprintf(step, sizeof step, "1 received tag %d", i);
            check_payload(step, buf[0], 7 * i + 1);
            check_lengths(step);
        }
        check_attempts("1 unexpected");
        check_timers("1", 0, 0);

        /* 2. P posted receives, matched by messages sent in reverse */
        mark();
        for (int j = 0; j < P; j++) {
            MPI_Irecv(&buf[j], 1, MPI_INT, 1, 1000 + j, comm[j % 2], &req[j]);
            m_post(j % 2, 1000 + j);
            snprintf(step, sizeof step, "2 posted %d", j + 1);
            check_lengths(step);
        }
        MPI_Send(&one, 1, MPI_INT, 1, 1, comm[2]); /* go */
        MPI_Waitall(P, req, sts);
        for (int j = P - 1; j >= 0; j--)
            m_arrive(j % 2, 1000 + j);
        for (int j = 0; j < P; j++)
            check_payload("2 matched", buf[j], 3 * j + 2);
        check_lengths("2 matched");
        check_attempts("2 posted");
        check_timers("2", 0, 0);

        /* 3. MPI_ANY_TAG receives on c1 mixed with specific ones on world, which are
         * cancelled; the messages then match the wildcards in posting order */
        mark();
        int nany = 0, any_at[W];
        for (int i = 0; i < W; i++) {
            if (i % 3 == 2) {
                MPI_Irecv(&buf[i], 1, MPI_INT, 1, 5000 + i, comm[0], &req[i]);
                m_post(0, 5000 + i);
            } else {
                MPI_Irecv(&buf[i], 1, MPI_INT, 1, MPI_ANY_TAG, comm[1], &req[i]);
                m_post(1, -1);
                any_at[nany++] = i;
            }
        }
        check_lengths("3 posted");
        for (int i = 2; i < W; i += 3) {
            int cancelled, pos = 0;
            MPI_Cancel(&req[i]);
            MPI_Wait(&req[i], &st);
            MPI_Test_cancelled(&st, &cancelled);
            expect("3 cancel", "cancelled", (unsigned long long)cancelled, 1, 1);
            while (!(prq.e[pos].ctx == 0 && prq.e[pos].tag == 5000 + i))
                pos++;
            m_cancel(pos);
            snprintf(step, sizeof step, "3 cancelled receive %d", i);
            check_lengths(step);
        }
        MPI_Send(&one, 1, MPI_INT, 1, 3, comm[2]); /* go */
        for (int k = 0; k < nany; k++) {
            MPI_Wait(&req[any_at[k]], &st);
            m_arrive(1, 7000 + k);
            snprintf(step, sizeof step, "3 wildcard %d", k);
            expect(step, "tag", (unsigned long long)st.MPI_TAG, 7000ull + k, 1);
            check_payload(step, buf[any_at[k]], 5 * k + 3);
        }
        check_lengths("3 matched");
        check_attempts("3 wildcards and cancel");

        /* 4. probe */
        for (int i = 0; i < M; i++)
            m_arrive(0, i);
        MPI_Recv(&one, 1, MPI_INT, 1, 0, comm[2], &st); /* sent after them */
        settle(quiet, "4 queued");
        mark();
        int flag;
        MPI_Message msg;
        MPI_Iprobe(1, M - 1, comm[0], &flag, &st);
        m_search_umq(0, M - 1, 0);
        expect("4 iprobe hit", "flag", (unsigned long long)flag, 1, 1);
        check_lengths("4 iprobe hit");
        MPI_Iprobe(1, 9999, comm[0], &flag, &st);
        m_search_umq(0, 9999, 0);
        expect("4 iprobe miss", "flag", (unsigned long long)flag, 0, 1);
        check_lengths("4 iprobe miss");
        MPI_Improbe(1, M / 2, comm[0], &flag, &msg, &st);
        m_search_umq(0, M / 2, 1);
        expect("4 improbe", "flag", (unsigned long long)flag, 1, 1);
        check_lengths("4 improbe");
        MPI_Mrecv(&buf[0], 1, MPI_INT, &msg, &st);
        check_payload("4 mrecv", buf[0], 11 * (M / 2));
        check_lengths("4 mrecv");
        for (int i = 0; i < M; i++) {
            if (i == M / 2)
                continue;
            MPI_Recv(&buf[0], 1, MPI_INT, 1, MPI_ANY_TAG, comm[0], &st);
            m_post(0, -1);
            snprintf(step, sizeof step, "4 received tag %d", i);
            expect(step, "tag", (unsigned long long)st.MPI_TAG, (unsigned long long)i, 1);
            check_payload(step, buf[0], 11 * i);
            check_lengths(step);
        }
        check_attempts("4 probe");
        check_timers("end", 0, 1);
        check_lengths("end");
        expect("end", "posted_recvq_length", rd(POSTED_LEN), 0, 1);
        expect("end", "unexpected_recvq_length", rd(UNEXP_LEN), 0, 1);
        for (int r = 1; r < size; r++)
            MPI_Send(&one, 1, MPI_INT, r, 9, comm[2]); /* release */
    } else if (rank == 1) {
        for (int i = 0; i < K; i++) {
            int v = 7 * i + 1;
            MPI_Send(&v, 1, MPI_INT, 0, i, comm[i % 2]);
        }
        MPI_Send(&one, 1, MPI_INT, 0, 0, comm[2]);
        MPI_Recv(&one, 1, MPI_INT, 0, 1, comm[2], &st);
        for (int j = P - 1; j >= 0; j--) {
            int v = 3 * j + 2;
            MPI_Send(&v, 1, MPI_INT, 0, 1000 + j, comm[j % 2]);
        }
        MPI_Recv(&one, 1, MPI_INT, 0, 3, comm[2], &st);
        for (int k = 0; k < W - W / 3; k++) {
            int v = 5 * k + 3;
            MPI_Send(&v, 1, MPI_INT, 0, 7000 + k, comm[1]);
        }
        for (int i = 0; i < M; i++) {
            int v = 11 * i;
            MPI_Send(&v, 1, MPI_INT, 0, i, comm[0]);
        }
        MPI_Send(&one, 1, MPI_INT, 0, 0, comm[2]);
    }
    if (rank > 0) /* nothing may reach rank 0 while it counts: wait until it is done */
        MPI_Recv(&one, 1, MPI_INT, 0, 9, comm[2], &st);

    int f = failures, all_f, all_c;
    MPI_Allreduce(&f, &all_f, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&checks, &all_c, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        if (all_f)
            printf("pvars: FAILED, %d of %d checks\n", all_f, all_c);
        else
            printf("pvars: %d checks passed (%s)\n", all_c,
                   exact ? "lengths and match attempts"
                         : "lengths; match attempts not required");
        fflush(stdout);
    }
    for (int k = 0; k < NPV; k++)
        MPI_T_pvar_handle_free(session, &pv[k].h);
    MPI_T_pvar_session_free(&session);
    MPI_T_finalize();
    for (int c = 0; c < 3; c++)
        MPI_Comm_free(&comm[c]);
    MPI_Comm_free(&quiet);
    MPI_Finalize();
    return all_f ? 1 : 0;
}
