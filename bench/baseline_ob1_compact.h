// baseline_ob1_compact.h -- Open MPI ob1's matching algorithm (baseline_ob1.h) as a
// performance engineer would write it today: the same per-source lists and the same order,
// but the lists' heads in an array indexed directly by source and the match fields in small
// nodes of the matcher's own, taken from a free list.
//
// Why a second ob1: Ob1Queue models the shipped library, whose match fields sit inside
// receive requests of about 512 bytes and fragments of about 192, reached through a pointer
// per peer to a lazily made peer object.  A new library with the same algorithm would not
// pay those loads; the headline compares vmatch with the fastest of both kinds.
//
// The algorithm (the same as Ob1Queue's):
//   - Per communicator (context id): an array with one slot per source (sized to nprocs,
//     grown if a larger source appears) holding the heads of that source's posted receives
//     and of its unexpected messages; one list of MPI_ANY_SOURCE receives; a counter that
//     stamps every posted receive with a sequence number and one that stamps every
//     unexpected message with its arrival number.
//   - A receive for one source walks that source's unexpected messages; if none matches it
//     joins that source's posted list.  An MPI_ANY_SOURCE receive takes the oldest (lowest
//     arrival number) of every source's first match, then joins the wildcard list.
//   - An arrival from source s walks s's posted list and, when it is not empty, the
//     wildcard list; with a match in both the earlier posted (lower sequence number) wins.
// What changes: a node is {tag, sequence number, payload, next} (32 bytes, singly linked:
// a search knows the predecessor of what it takes), from ObjPool free lists; a source's
// slot is 32 bytes (two heads and two tails) in the communicator's array.
//
// bytes(): the communicator table, each communicator and its array of source slots, and
// the node pools' chunks (nodes in use and free).  queues(): per communicator its wildcard
// list and two lists per source slot.
#pragma once

#include "baseline.h"
#include "baseline_util.h"
#include "vmatch.h"

#include <cstdint>
#include <vector>

namespace vmb
{
namespace ob1c
{

struct Node {
    int32_t tag;  // VMATCH_ANY_TAG in a posted receive for any tag
    uint64_t seq; // posted: the receive's sequence number; unexpected: its arrival number
    void *user;
    Node *next;
};

struct List {
    Node *head = nullptr, *tail = nullptr;

    VMB_INLINE void push(Node *n)
    {
        n->next = nullptr;
        (tail ? tail->next : head) = n;
        tail = n;
    }

    VMB_INLINE void remove(Node *prev, Node *n)
    {
        (prev ? prev->next : head) = n->next;
        if (tail == n)
            tail = prev;
    }
};

struct Slot { // one source of a communicator
    List posted, unexpected;
};

struct Comm {
    uint64_t recv_seq = 0, arrival = 0;
    List wild;
    // src's data and size, read on every call (a vector's size is a subtraction and a
    // shift: a tenth of a compact ob1's instructions per pair).
    Slot *slots = nullptr;
    size_t nslots = 0;
    std::vector<Slot> src;

    void resize(size_t n)
    {
        src.resize(n);
        slots = src.data();
        nslots = n;
    }
};

// A node found in a list, with its predecessor (for the unlink).
struct Found {
    Node *n = nullptr, *prev = nullptr;
};

class Ob1Compact final
{
  public:
    Ob1Compact(const Layout &l, uint32_t nprocs)
        : tag_mask_(Layout::mask(l.tag_bits)), src_mask_(Layout::mask(l.src_bits)),
          ctx_mask_(Layout::mask(l.ctx_bits)), src_shift_(l.tag_bits),
          ctx_shift_(l.tag_bits + l.src_bits), nprocs_(nprocs ? nprocs : 1)
    {
    }

    Ob1Compact(const Ob1Compact &) = delete;
    Ob1Compact &operator=(const Ob1Compact &) = delete;

    ~Ob1Compact()
    {
        for (Comm *c : comms_)
            delete c;
    }

    VMB_INLINE int post(uint64_t bits, uint64_t care, void *req, void **msg_out)
    {
        MpiKey k = decode_recv(bits, care);
        Comm &c = comm(k.ctx);
        List *ul = nullptr;
        Found f = k.src == VMATCH_ANY_SOURCE ? oldest_unexpected(c, k.tag, ul)
                                             : first_unexpected(c, k.src, k.tag, ul);
        if (f.n) {
            *msg_out = f.n->user;
            ul->remove(f.prev, f.n);
            nodes_.put(f.n);
            return VMATCH_MATCHED;
        }
        Node *n = nodes_.get();
        n->tag = k.tag;
        n->seq = c.recv_seq++;
        n->user = req;
        (k.src == VMATCH_ANY_SOURCE ? c.wild : slot(c, k.src).posted).push(n);
        return VMATCH_QUEUED;
    }

    VMB_INLINE int arrive(uint64_t bits, void *msg, void **req_out)
    {
        MpiKey k = decode_msg(bits);
        Comm &c = comm(k.ctx);
        Slot &s = slot(c, k.src);
        Found a = first_posted(s.posted, k.tag);
        List *from = &s.posted;
        if (c.wild.head) {
            Found w = first_posted(c.wild, k.tag);
            if (w.n && (!a.n || w.n->seq < a.n->seq))
                a = w, from = &c.wild;
        }
        if (a.n) {
            *req_out = a.n->user;
            from->remove(a.prev, a.n);
            nodes_.put(a.n);
            return VMATCH_MATCHED;
        }
        Node *n = nodes_.get();
        n->tag = k.tag;
        n->seq = c.arrival++;
        n->user = msg;
        s.unexpected.push(n);
        return VMATCH_QUEUED;
    }

    VMB_INLINE int probe(uint64_t bits, uint64_t care, int remove, void **msg_out)
    {
        MpiKey k = decode_recv(bits, care);
        Comm &c = comm(k.ctx);
        List *ul = nullptr;
        Found f = k.src == VMATCH_ANY_SOURCE ? oldest_unexpected(c, k.tag, ul)
                                             : first_unexpected(c, k.src, k.tag, ul);
        if (!f.n)
            return VMATCH_ENOTFOUND;
        *msg_out = f.n->user;
        if (remove) {
            ul->remove(f.prev, f.n);
            nodes_.put(f.n);
        }
        return VMATCH_MATCHED;
    }

    int cancel(void *req)
    {
        for (Comm *c : comms_) {
            if (!c)
                continue;
            if (remove_user(c->wild, req))
                return VMATCH_OK;
            for (Slot &s : c->src)
                if (s.posted.head && remove_user(s.posted, req))
                    return VMATCH_OK;
        }
        return VMATCH_ENOTFOUND;
    }

    int remove_unexpected(void *msg)
    {
        for (Comm *c : comms_)
            if (c)
                for (Slot &s : c->src)
                    if (s.unexpected.head && remove_user(s.unexpected, msg))
                        return VMATCH_OK;
        return VMATCH_ENOTFOUND;
    }

    uint64_t inspected() const { return inspected_; }

    uint64_t bytes() const
    {
        uint64_t b = sizeof(*this) + comms_.capacity() * sizeof(Comm *) + nodes_.bytes();
        for (const Comm *c : comms_)
            if (c)
                b += sizeof(Comm) + c->src.capacity() * sizeof(Slot);
        return b;
    }

    uint64_t queues() const
    {
        uint64_t q = 0;
        for (const Comm *c : comms_)
            if (c)
                q += 1 + 2 * c->src.size();
        return q;
    }

  private:
    // The fields of match bits with the shifts and masks worked out once (Layout's own
    // accessors compute them per call).
    VMB_INLINE MpiKey decode_msg(uint64_t bits) const
    {
        return {(uint32_t)((bits >> ctx_shift_) & ctx_mask_),
                (int32_t)((bits >> src_shift_) & src_mask_), (int32_t)(bits & tag_mask_)};
    }

    VMB_INLINE MpiKey decode_recv(uint64_t bits, uint64_t care) const
    {
        MpiKey k = decode_msg(bits);
        if (((care >> src_shift_) & src_mask_) == 0)
            k.src = VMATCH_ANY_SOURCE;
        if ((care & tag_mask_) == 0)
            k.tag = VMATCH_ANY_TAG;
        return k;
    }

    VMB_INLINE Comm &comm(uint32_t ctx)
    {
        if (__builtin_expect(ctx < ncomms_ && comm_tab_[ctx], 1))
            return *comm_tab_[ctx];
        return new_comm(ctx);
    }

    __attribute__((noinline)) Comm &new_comm(uint32_t ctx)
    {
        if (ctx >= comms_.size())
            comms_.resize((size_t)ctx + 1, nullptr);
        comm_tab_ = comms_.data();
        ncomms_ = comms_.size();
        if (!comms_[ctx]) {
            comms_[ctx] = new Comm();
            comms_[ctx]->resize(nprocs_); // one slot per rank of the communicator
        }
        return *comms_[ctx];
    }

    VMB_INLINE Slot &slot(Comm &c, int32_t src)
    {
        if (__builtin_expect((size_t)src >= c.nslots, 0))
            c.resize((size_t)src + 1);
        return c.slots[(size_t)src];
    }

    // The first posted receive of l that takes a message with tag (a specific tag, or any).
    VMB_INLINE Found first_posted(const List &l, int32_t tag)
    {
        for (Node *n = l.head, *prev = nullptr; n; prev = n, n = n->next) {
            inspected_++;
            if (n->tag == tag || n->tag == VMATCH_ANY_TAG)
                return {n, prev};
        }
        return {};
    }

    // The first unexpected message of l that a receive for tag (or VMATCH_ANY_TAG) takes.
    VMB_INLINE Found first_message(const List &l, int32_t tag)
    {
        for (Node *n = l.head, *prev = nullptr; n; prev = n, n = n->next) {
            inspected_++;
            if (n->tag == tag || tag == VMATCH_ANY_TAG)
                return {n, prev};
        }
        return {};
    }

    VMB_INLINE Found first_unexpected(Comm &c, int32_t src, int32_t tag, List *&from)
    {
        if ((size_t)src >= c.nslots || !c.slots[(size_t)src].unexpected.head)
            return {};
        from = &c.slots[(size_t)src].unexpected;
        return first_message(*from, tag);
    }

    // An MPI_ANY_SOURCE search: the oldest of every source's first match.
    Found oldest_unexpected(Comm &c, int32_t tag, List *&from)
    {
        Found best;
        for (Slot &s : c.src) {
            if (!s.unexpected.head)
                continue;
            Found f = first_message(s.unexpected, tag);
            if (f.n && (!best.n || f.n->seq < best.n->seq))
                best = f, from = &s.unexpected;
        }
        return best;
    }

    bool remove_user(List &l, void *user)
    {
        for (Node *n = l.head, *prev = nullptr; n; prev = n, n = n->next) {
            inspected_++;
            if (n->user == user) {
                l.remove(prev, n);
                nodes_.put(n);
                return true;
            }
        }
        return false;
    }

    uint64_t tag_mask_, src_mask_, ctx_mask_;
    unsigned src_shift_, ctx_shift_;
    uint32_t nprocs_;
    std::vector<Comm *> comms_;
    Comm **comm_tab_ = nullptr; // comms_'s data and size (see Comm::slots)
    size_t ncomms_ = 0;
    uint64_t inspected_ = 0;
    ObjPool<Node> nodes_;
};

} // namespace ob1c

using ob1c::Ob1Compact;

} // namespace vmb
