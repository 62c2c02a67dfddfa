// baseline_ob1.h -- an Open MPI ob1-style receive queue (ompi/mca/pml/ob1, without the
// custommatch option), reimplemented from its published design.
//
// One implementation, two ways to call it: Ob1Queue is a concrete class defined here, so a
// caller that knows the type compiles its calls into its own loop with no call boundary, as
// the library it models inlines them (the report's ob1-inl, replay_inline.h); the
// baseline ob1 is the same class behind Baseline's virtual calls (BaselineOf, baseline.h).
//
// What it models:
//   - Per communicator (context id): an array with one slot per peer rank (sized to the
//     communicator when it is first used), each peer's state created on first traffic with
//     its list of specific posted receives and its list of unexpected fragments; one list of
//     wildcard-source receives; a counter that stamps every posted receive with a sequence
//     number.
//   - A receive for a specific source searches only that peer's unexpected fragments; if
//     none matches it is appended to that peer's specific list.  An MPI_ANY_SOURCE receive
//     looks at every peer's unexpected list, then joins the wildcard list.
//   - An arriving message from peer p searches p's specific list and the wildcard list.
//     When both hold receives, the first match of each is found and the one with the lower
//     sequence number (the earlier posted) wins -- ob1's reconciliation of the two lists.
//   - Lists are doubly linked (opal_list_t) through the ob1 receive request and the receive
//     fragment, whose match fields sit in other cache lines than the links (stand-ins of
//     the modelled sizes, baseline_util.h).
//
// What it leaves out or changes:
//   - ob1 takes, for an MPI_ANY_SOURCE receive, the first match of the first peer in a
//     round-robin scan, which MPI allows (no order is promised across sources).  The vmatch
//     contract asks for exactly what one ordered list returns, so here every fragment also
//     carries an arrival number and the wildcard receive takes the oldest of the peers'
//     first matches: the same walk over every peer, but it cannot stop at the first peer
//     with a match.  Probes do the same.
//   - Per-peer message sequence numbers, the out-of-order (cant_match) list, the matching
//     lock, and the fragment's payload buffers.  Messages here arrive in order.
//   - Open MPI unlinks a cancelled request in O(1); the harness hands back the caller's
//     pointer, so cancel and remove-by-handle scan the lists.  Both are rare in the
//     workloads.
//
// bytes(): the communicator headers, the peer arrays (a pointer per rank), the peer states,
// and the opal_list_item_t part of each queued object (object header and two links, 32
// bytes) -- what matching holds beyond the requests and fragments MPI keeps anyway.
// queues(): the wildcard list of each communicator and two lists per peer state.
#pragma once

#include "baseline.h"
#include "baseline_util.h"
#include "vmatch.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace vmb
{
namespace ob1
{

constexpr uint64_t kListItemBytes = 32; // opal_list_item_t: object header, next, prev

// An intrusive doubly linked list through T::next / T::prev, oldest at the head.
template <class T> struct IList {
    T *head = nullptr, *tail = nullptr;
    size_t n = 0;

    void append(T *x)
    {
        x->next = nullptr;
        x->prev = tail;
        (tail ? tail->next : head) = x;
        tail = x;
        x->list = this;
        n++;
    }

    void unlink(T *x)
    {
        (x->prev ? x->prev->next : head) = x->next;
        (x->next ? x->next->prev : tail) = x->prev;
        x->list = nullptr;
        n--;
    }
};

// One peer of a communicator (mca_pml_ob1_comm_proc_t).
struct Proc {
    uint64_t expected_sequence = 0; // unused here: messages arrive in order
    IList<Ob1Request> specific;
    IList<Ob1Frag> unexpected;
    IList<Ob1Frag> cant_match; // unused here, kept for the size
};

struct Comm {
    uint64_t recv_sequence = 0, arrival = 0;
    IList<Ob1Request> wild;
    std::vector<Proc *> procs;
};

inline bool tag_match(int32_t want, int32_t tag)
{
    return want == tag || (want == VMATCH_ANY_TAG && tag >= 0);
}

class Ob1Queue final
{
  public:
    Ob1Queue(const Layout &l, uint32_t nprocs) : layout_(l), nprocs_(nprocs) {}

    Ob1Queue(const Ob1Queue &) = delete;
    Ob1Queue &operator=(const Ob1Queue &) = delete;

    ~Ob1Queue()
    {
        for (Comm *c : comms_)
            if (c) {
                for (Proc *p : c->procs)
                    delete p;
                delete c;
            }
    }

    VMB_INLINE int post(uint64_t bits, uint64_t care, void *req, void **msg_out)
    {
        MpiKey k = decode_recv(layout_, bits, care);
        Comm &c = comm(k.ctx);
        Ob1Frag *f = find_unexpected(c, k);
        if (f) {
            *msg_out = f->user;
            drop(f);
            return VMATCH_MATCHED;
        }
        Ob1Request *r = reqs_.get();
        r->user = req;
        r->peer = k.src;
        r->tag = k.tag;
        r->seq = c.recv_sequence++;
        if (k.src == VMATCH_ANY_SOURCE)
            c.wild.append(r);
        else
            proc(c, k.src).specific.append(r);
        nitems_++;
        return VMATCH_QUEUED;
    }

    VMB_INLINE int arrive(uint64_t bits, void *msg, void **req_out)
    {
        MpiKey k = decode_msg(layout_, bits);
        Comm &c = comm(k.ctx);
        Proc &p = proc(c, k.src);
        Ob1Request *spec = p.specific.n ? first_request(p.specific, k.tag) : nullptr;
        Ob1Request *wild = c.wild.n ? first_request(c.wild, k.tag) : nullptr;
        Ob1Request *r = spec && wild ? (spec->seq < wild->seq ? spec : wild)
                        : spec       ? spec
                                     : wild;
        if (r) {
            *req_out = r->user;
            static_cast<IList<Ob1Request> *>(r->list)->unlink(r);
            reqs_.put(r);
            nitems_--;
            return VMATCH_MATCHED;
        }
        Ob1Frag *f = frags_.get();
        f->user = msg;
        f->src = k.src;
        f->tag = k.tag;
        f->seq = c.arrival++;
        p.unexpected.append(f);
        nitems_++;
        return VMATCH_QUEUED;
    }

    VMB_INLINE int probe(uint64_t bits, uint64_t care, int remove, void **msg_out)
    {
        MpiKey k = decode_recv(layout_, bits, care);
        Comm &c = comm(k.ctx);
        Ob1Frag *f = find_unexpected(c, k);
        if (!f)
            return VMATCH_ENOTFOUND;
        *msg_out = f->user;
        if (remove)
            drop(f);
        return VMATCH_MATCHED;
    }

    int cancel(void *req)
    {
        for (Comm *c : comms_) {
            if (!c)
                continue;
            if (Ob1Request *r = find_user(c->wild, req))
                return drop(r);
            for (Proc *p : c->procs)
                if (p)
                    if (Ob1Request *r = find_user(p->specific, req))
                        return drop(r);
        }
        return VMATCH_ENOTFOUND;
    }

    int remove_unexpected(void *msg)
    {
        for (Comm *c : comms_) {
            if (!c)
                continue;
            for (Proc *p : c->procs)
                if (p)
                    if (Ob1Frag *f = find_user(p->unexpected, msg))
                        return drop(f);
        }
        return VMATCH_ENOTFOUND;
    }

    uint64_t inspected() const { return inspected_; }

    uint64_t bytes() const
    {
        uint64_t b = sizeof(*this) + comms_.capacity() * sizeof(Comm *);
        for (const Comm *c : comms_)
            if (c)
                b += sizeof(Comm) + c->procs.capacity() * sizeof(Proc *);
        return b + nprocs_alloc_ * sizeof(Proc) + nitems_ * kListItemBytes;
    }

    uint64_t queues() const { return ncomms_ + 2 * nprocs_alloc_; }

  private:
    VMB_INLINE Comm &comm(uint32_t ctx)
    {
        if (ctx >= comms_.size())
            comms_.resize((size_t)ctx + 1, nullptr);
        Comm *&c = comms_[ctx];
        if (!c) {
            c = new Comm();
            c->procs.assign(nprocs_, nullptr); // one slot per rank of the communicator
            ncomms_++;
        }
        return *c;
    }

    // The peer state, created on first use (Open MPI 5 creates peers lazily too).
    VMB_INLINE Proc &proc(Comm &c, int32_t src)
    {
        if ((size_t)src >= c.procs.size())
            c.procs.resize((size_t)src + 1, nullptr);
        Proc *&p = c.procs[(size_t)src];
        if (!p) {
            p = new Proc();
            nprocs_alloc_++;
        }
        return *p;
    }

    VMB_INLINE Ob1Request *first_request(const IList<Ob1Request> &l, int32_t tag)
    {
        for (Ob1Request *r = l.head; r; r = r->next) {
            inspected_++;
            if (tag_match(r->tag, tag))
                return r;
        }
        return nullptr;
    }

    VMB_INLINE Ob1Frag *first_frag(const IList<Ob1Frag> &l, int32_t tag)
    {
        for (Ob1Frag *f = l.head; f; f = f->next) {
            inspected_++;
            if (tag_match(tag, f->tag))
                return f;
        }
        return nullptr;
    }

    // The oldest unexpected fragment matching a receive or probe.
    VMB_INLINE Ob1Frag *find_unexpected(Comm &c, const MpiKey &k)
    {
        if (k.src != VMATCH_ANY_SOURCE) {
            if ((size_t)k.src >= c.procs.size() || !c.procs[(size_t)k.src])
                return nullptr;
            Proc &p = *c.procs[(size_t)k.src];
            return p.unexpected.n ? first_frag(p.unexpected, k.tag) : nullptr;
        }
        Ob1Frag *best = nullptr;
        for (Proc *p : c.procs) {
            if (!p || !p->unexpected.n)
                continue;
            Ob1Frag *f = first_frag(p->unexpected, k.tag);
            if (f && (!best || f->seq < best->seq))
                best = f;
        }
        return best;
    }

    template <class T> T *find_user(const IList<T> &l, void *user)
    {
        for (T *x = l.head; x; x = x->next) {
            inspected_++;
            if (x->user == user)
                return x;
        }
        return nullptr;
    }

    int drop(Ob1Request *r)
    {
        static_cast<IList<Ob1Request> *>(r->list)->unlink(r);
        reqs_.put(r);
        nitems_--;
        return VMATCH_OK;
    }

    int drop(Ob1Frag *f)
    {
        static_cast<IList<Ob1Frag> *>(f->list)->unlink(f);
        frags_.put(f);
        nitems_--;
        return VMATCH_OK;
    }

    Layout layout_;
    uint32_t nprocs_;
    std::vector<Comm *> comms_;
    uint64_t ncomms_ = 0, nprocs_alloc_ = 0, nitems_ = 0, inspected_ = 0;
    ObjPool<Ob1Request> reqs_;
    ObjPool<Ob1Frag> frags_;
};

} // namespace ob1

using ob1::Ob1Queue;

} // namespace vmb
