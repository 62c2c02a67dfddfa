// baseline_ucx_compact.h -- UCX's tag-matching algorithm (baseline_ucx.h) as a performance
// engineer would write it today: the same buckets, queues and order, but the match fields
// in small nodes of the matcher's own, taken from a free list.
//
// Why a second UCX: UcxQueue models the shipped library, whose match fields sit a cache line
// into a request object of a few hundred bytes (and an unexpected message's tag behind its
// receive descriptor).  A new library written with the same algorithm would not pay those
// loads; the headline compares vmatch with the fastest of both kinds (report_inline.cc).
//
// The algorithm (the same as UcxQueue's):
//   - Posted receives with a full mask go into one of 1021 buckets of exact tags (1024
//     allocated: the index is the low 32 bits modulo 1021 XOR the high 32 modulo 1021);
//     any other receive joins one wildcard queue.  Every posted receive takes a sequence
//     number; an arrival walks its bucket alone when the wildcard queue is empty, else its
//     bucket and the wildcard queue merged by sequence number (the earliest posted wins).
//   - Unexpected messages are linked into their bucket's list and into the list of all of
//     them in arrival order: a full-mask receive or probe walks its bucket's list, a
//     wildcard one the list of all; a match is unlinked from both in O(1).
// What changes: a posted node is {tag, mask, sequence number, payload, next} (40 bytes), an
// unexpected node {tag, payload, two pairs of links} (48 bytes), both from ObjPool free
// lists; a bucket is one head pointer plus a tail (a posted bucket appends at its tail).
//
// bytes(): the two tables and the node pools' chunks (nodes in use and free: what the
// matcher holds).  queues(): the buckets of both tables, the wildcard queue and the list of
// all unexpected messages, as UcxQueue counts them.
#pragma once

#include "baseline.h"
#include "baseline_ucx.h"
#include "baseline_util.h"
#include "vmatch.h"

#include <cstdint>
#include <vector>

namespace vmb
{
namespace ucxc
{

using ucx::hash_of;
using ucx::kHashAlloc;

struct PNode { // a posted receive
    uint64_t tag, mask, sn;
    void *user;
    PNode *next;
};

struct UNode { // an unexpected message
    uint64_t tag;
    void *user;
    UNode *hnext, *hprev; // its bucket's list
    UNode *anext, *aprev; // the list of all
};

struct PQueue {
    PNode *head = nullptr, *tail = nullptr;

    void push(PNode *n)
    {
        n->next = nullptr;
        (tail ? tail->next : head) = n;
        tail = n;
    }

    void remove(PNode *prev, PNode *n)
    {
        (prev ? prev->next : head) = n->next;
        if (tail == n)
            tail = prev;
    }
};

struct UList {
    UNode *head = nullptr, *tail = nullptr;
};

class UcxCompact final
{
  public:
    // nprocs: unused (one tag-matching context for every peer), for the interface of Ob1Queue.
    UcxCompact(const Layout &l, uint32_t /*nprocs*/)
        : full_(Layout::mask(l.ctx_bits + l.src_bits + l.tag_bits)), exp_(kHashAlloc),
          unexp_(kHashAlloc)
    {
    }

    UcxCompact(const UcxCompact &) = delete;
    UcxCompact &operator=(const UcxCompact &) = delete;

    VMB_INLINE int post(uint64_t bits, uint64_t care, void *req, void **msg_out)
    {
        uint32_t h;
        UNode *u = find_unexpected(bits, care, h);
        if (u) {
            *msg_out = u->user;
            drop(u, h);
            return VMATCH_MATCHED;
        }
        PNode *n = pnodes_.get();
        n->tag = bits;
        n->mask = care;
        n->sn = sn_++;
        n->user = req;
        (care == full_ ? exp_[hash_of(bits)] : wild_).push(n);
        return VMATCH_QUEUED;
    }

    VMB_INLINE int arrive(uint64_t bits, void *msg, void **req_out)
    {
        uint32_t h = hash_of(bits);
        PQueue &bucket = exp_[h];
        if (!wild_.head) { // the common case: the bucket alone, exact tags
            for (PNode *n = bucket.head, *prev = nullptr; n; prev = n, n = n->next) {
                inspected_++;
                if (n->tag == bits)
                    return take(bucket, prev, n, req_out);
            }
        } else if (PNode *n = merged(bucket, bits, req_out)) {
            (void)n;
            return VMATCH_MATCHED;
        }
        UNode *u = unodes_.get();
        u->tag = bits;
        u->user = msg;
        link_tail(unexp_[h], u, &UNode::hnext, &UNode::hprev);
        link_tail(all_, u, &UNode::anext, &UNode::aprev);
        return VMATCH_QUEUED;
    }

    VMB_INLINE int probe(uint64_t bits, uint64_t care, int remove, void **msg_out)
    {
        uint32_t h;
        UNode *u = find_unexpected(bits, care, h);
        if (!u)
            return VMATCH_ENOTFOUND;
        *msg_out = u->user;
        if (remove)
            drop(u, h);
        return VMATCH_MATCHED;
    }

    int cancel(void *req)
    {
        if (cancel_in(wild_, req))
            return VMATCH_OK;
        for (PQueue &q : exp_)
            if (q.head && cancel_in(q, req))
                return VMATCH_OK;
        return VMATCH_ENOTFOUND;
    }

    int remove_unexpected(void *msg)
    {
        for (UNode *u = all_.head; u; u = u->anext) {
            inspected_++;
            if (u->user == msg) {
                drop(u, hash_of(u->tag));
                return VMATCH_OK;
            }
        }
        return VMATCH_ENOTFOUND;
    }

    uint64_t inspected() const { return inspected_; }

    uint64_t bytes() const
    {
        return sizeof(*this) + kHashAlloc * (sizeof(PQueue) + sizeof(UList)) + pnodes_.bytes() +
               unodes_.bytes();
    }

    uint64_t queues() const { return 2 * kHashAlloc + 2; }

  private:
    VMB_INLINE int take(PQueue &q, PNode *prev, PNode *n, void **req_out)
    {
        q.remove(prev, n);
        *req_out = n->user;
        pnodes_.put(n);
        return VMATCH_MATCHED;
    }

    // The bucket and the wildcard queue walked together in sequence-number order; the
    // first receive that takes bits is removed (its node, or nullptr when none matches).
    PNode *merged(PQueue &bucket, uint64_t bits, void **req_out)
    {
        PNode *b = bucket.head, *bp = nullptr, *w = wild_.head, *wp = nullptr;
        while (b || w) {
            bool from_bucket = b && (!w || b->sn < w->sn);
            PNode *n = from_bucket ? b : w;
            inspected_++;
            if (((bits ^ n->tag) & n->mask) == 0) {
                take(from_bucket ? bucket : wild_, from_bucket ? bp : wp, n, req_out);
                return n;
            }
            if (from_bucket)
                bp = b, b = b->next;
            else
                wp = w, w = w->next;
        }
        return nullptr;
    }

    // The oldest unexpected message a receive (bits, care) takes: its bucket's list when
    // the mask is full, else the list of all.  h: its bucket (hashed once for an exact
    // receive, from the message's tag for a wildcard one that found it).
    VMB_INLINE UNode *find_unexpected(uint64_t bits, uint64_t care, uint32_t &h)
    {
        if (care == full_) {
            h = hash_of(bits);
            for (UNode *u = unexp_[h].head; u; u = u->hnext) {
                inspected_++;
                if (u->tag == bits)
                    return u;
            }
            return nullptr;
        }
        for (UNode *u = all_.head; u; u = u->anext) {
            inspected_++;
            if (((u->tag ^ bits) & care) == 0) {
                h = hash_of(u->tag);
                return u;
            }
        }
        return nullptr;
    }

    static VMB_INLINE void link_tail(UList &l, UNode *u, UNode *UNode::*next,
                                     UNode *UNode::*prev)
    {
        u->*next = nullptr;
        u->*prev = l.tail;
        (l.tail ? l.tail->*next : l.head) = u;
        l.tail = u;
    }

    static VMB_INLINE void unlink(UList &l, UNode *u, UNode *UNode::*next, UNode *UNode::*prev)
    {
        (u->*prev ? u->*prev->*next : l.head) = u->*next;
        (u->*next ? u->*next->*prev : l.tail) = u->*prev;
    }

    VMB_INLINE void drop(UNode *u, uint32_t h)
    {
        unlink(unexp_[h], u, &UNode::hnext, &UNode::hprev);
        unlink(all_, u, &UNode::anext, &UNode::aprev);
        unodes_.put(u);
    }

    bool cancel_in(PQueue &q, void *req)
    {
        for (PNode *n = q.head, *prev = nullptr; n; prev = n, n = n->next) {
            inspected_++;
            if (n->user == req) {
                q.remove(prev, n);
                pnodes_.put(n);
                return true;
            }
        }
        return false;
    }

    uint64_t full_;
    std::vector<PQueue> exp_;
    PQueue wild_;
    std::vector<UList> unexp_;
    UList all_;
    uint64_t sn_ = 0, inspected_ = 0;
    ObjPool<PNode> pnodes_;
    ObjPool<UNode> unodes_;
};

} // namespace ucxc

using ucxc::UcxCompact;

} // namespace vmb
