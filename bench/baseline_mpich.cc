// baseline_mpich.cc -- an MPICH-style receive queue: MPICH 4's CH4 active-message path
// (ch4r_recvq.h), reimplemented from its published design.  The yardstick of the report:
// every ratio there is a time divided by this baseline's time.
//
// What it models:
//   - One doubly linked list of posted receives and one of unexpected messages (utlist
//     DL_APPEND, appended at the tail, searched from the head).  All contexts share the list
//     and the context id is compared per entry, like the tag and the source.
//   - A list node is the rreq link (prev, next, and a pointer back to the request) inside
//     the request's 256-byte extension cell (MPIDIG_req_ext_t, from the device's request
//     pool); the match fields (rank, tag, context id) live in the MPIR_Request itself, in its
//     device area.  So each entry inspected is two dependent loads from two objects of a few
//     hundred bytes: the cell for the links, the request for the fields.  An unexpected
//     message is a request too (MPICH creates one when the message arrives).
//   - A posted receive matches with MPI's rule (source or MPI_ANY_SOURCE, tag or
//     MPI_ANY_TAG, same context); a receive or probe searching the unexpected list applies
//     the receive's wildcards to each message.
//
// What it leaves out:
//   - The netmod's own matching (OFI / UCX offload the common case to the network layer),
//     the error bits of the tag, request reference counts and completion counters, the
//     per-VCI split of the queues and the VCI lock, and the per-communicator lists of the
//     MPIDI_CH4U_USE_PER_COMM_QUEUE build (the workloads keep collectives on their own
//     context, which MPICH would also keep in the same communicator's list).
//   - MPICH unlinks a cancelled request in O(1) because MPI_Cancel hands it the request; the
//     harness hands back the caller's pointer, which the request stand-in holds, so cancel
//     and remove walk the list.  Both are rare in the workloads.
//   - The request sizes are stand-ins (384 bytes for MPIR_Request, 256 for the cell); the
//     real ones depend on the build.
//
// bytes(): the list nodes (prev, next, request, peer_req_ptr, match_req: 40 bytes per
// entry) -- what matching holds beyond the request objects MPI keeps anyway.  queues(): 2.
#include "baseline.h"
#include "baseline_util.h"
#include "vmatch.h"

#include <cstdint>
#include <memory>

namespace vmb
{
namespace
{

constexpr size_t kRequestBytes = 384;             // MPIR_Request with the CH4 device part
constexpr size_t kRequestMatchOffset = 192;       // rank, tag, context id in dev.ch4.am
constexpr size_t kCellBytes = 256;                // MPIDIG_req_ext_t pool cell
constexpr size_t kNodeBytes = 5 * sizeof(void *); // MPIDIG_rreq_t

struct Cell;

struct Request {
    void *user = nullptr; // the caller's request or message pointer
    Cell *ext = nullptr;
    unsigned char pad0[kRequestMatchOffset - 2 * sizeof(void *)];
    int32_t rank = 0, tag = 0;
    uint32_t context_id = 0;
    unsigned char pad1[kRequestBytes - kRequestMatchOffset - 12];
};
static_assert(sizeof(Request) == kRequestBytes, "MPIR_Request stand-in size");

struct Cell {
    Cell *prev = nullptr, *next = nullptr; // the rreq list node
    Request *request = nullptr;
    unsigned char pad[kCellBytes - 3 * sizeof(void *)];
};
static_assert(sizeof(Cell) == kCellBytes, "request extension cell stand-in size");

// A utlist-style doubly linked list: head->prev is the tail, the tail's next is NULL.
struct List {
    Cell *head = nullptr;

    void append(Cell *c)
    {
        c->next = nullptr;
        if (!head) {
            head = c;
            c->prev = c;
        } else {
            c->prev = head->prev;
            head->prev->next = c;
            head->prev = c;
        }
    }

    void unlink(Cell *c)
    {
        if (c == head)
            head = c->next;
        else
            c->prev->next = c->next;
        if (c->next)
            c->next->prev = c->prev;
        else if (head)
            head->prev = c->prev;
    }
};

class Mpich final : public Baseline
{
  public:
    explicit Mpich(const Layout &l) : layout_(l) {}

    int post(uint64_t bits, uint64_t care, void *req, void **msg_out) override
    {
        MpiKey k = decode_recv(layout_, bits, care);
        for (Cell *c = unexp_.head; c; c = c->next) {
            inspected_++;
            const Request *m = c->request;
            if (m->context_id == k.ctx && mpi_match(k.src, k.tag, m->rank, m->tag)) {
                *msg_out = m->user;
                unexp_.unlink(c);
                release(c);
                return VMATCH_MATCHED;
            }
        }
        posted_.append(make(k, req));
        n_++;
        return VMATCH_QUEUED;
    }

    int arrive(uint64_t bits, void *msg, void **req_out) override
    {
        MpiKey k = decode_msg(layout_, bits);
        for (Cell *c = posted_.head; c; c = c->next) {
            inspected_++;
            const Request *r = c->request;
            if (r->context_id == k.ctx && mpi_match(r->rank, r->tag, k.src, k.tag)) {
                *req_out = r->user;
                posted_.unlink(c);
                release(c);
                return VMATCH_MATCHED;
            }
        }
        unexp_.append(make(k, msg));
        n_++;
        return VMATCH_QUEUED;
    }

    int probe(uint64_t bits, uint64_t care, int remove, void **msg_out) override
    {
        MpiKey k = decode_recv(layout_, bits, care);
        for (Cell *c = unexp_.head; c; c = c->next) {
            inspected_++;
            const Request *m = c->request;
            if (m->context_id == k.ctx && mpi_match(k.src, k.tag, m->rank, m->tag)) {
                *msg_out = m->user;
                if (remove) {
                    unexp_.unlink(c);
                    release(c);
                }
                return VMATCH_MATCHED;
            }
        }
        return VMATCH_ENOTFOUND;
    }

    int cancel(void *req) override { return remove_user(posted_, req); }
    int remove_unexpected(void *msg) override { return remove_user(unexp_, msg); }

    uint64_t inspected() const override { return inspected_; }
    uint64_t bytes() const override { return sizeof(*this) + n_ * kNodeBytes; }
    uint64_t queues() const override { return 2; }

  private:
    Cell *make(const MpiKey &k, void *user)
    {
        Request *r = reqs_.get();
        Cell *c = cells_.get();
        r->user = user;
        r->ext = c;
        r->rank = k.src;
        r->tag = k.tag;
        r->context_id = k.ctx;
        c->request = r;
        return c;
    }

    void release(Cell *c)
    {
        reqs_.put(c->request);
        cells_.put(c);
        n_--;
    }

    int remove_user(List &l, void *user)
    {
        for (Cell *c = l.head; c; c = c->next) {
            inspected_++;
            if (c->request->user == user) {
                l.unlink(c);
                release(c);
                return VMATCH_OK;
            }
        }
        return VMATCH_ENOTFOUND;
    }

    Layout layout_;
    List posted_, unexp_;
    uint64_t inspected_ = 0, n_ = 0;
    ObjPool<Request> reqs_;
    ObjPool<Cell> cells_;
};

} // namespace

std::unique_ptr<Baseline> make_mpich(const Layout &layout, uint32_t /*nprocs*/)
{
    return std::unique_ptr<Baseline>(new Mpich(layout));
}

} // namespace vmb
