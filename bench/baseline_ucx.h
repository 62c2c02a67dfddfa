// baseline_ucx.h -- a UCX-style tag-matching queue (ucp/tag/tag_match.h and .inl, UCX
// 1.13), reimplemented from its published design.
//
// One implementation, two ways to call it: UcxQueue is a concrete class defined here, so a
// caller that knows the type compiles its calls into its own loop with no call boundary, as
// the library it models inlines them (the report's ucx-inl, replay_inline.h); the
// baseline ucx is the same class behind Baseline's virtual calls (BaselineOf, baseline.h).
//
// What it models:
//   - One tag-matching context for everything: the 64 match bits are UCX's tag, receives
//     are (tag, tag_mask) and the context id is just more tag bits.
//   - Expected (posted) requests whose mask is full go into one of 1021 hash buckets
//     (1024 allocated: the index is the low 32 bits modulo 1021 XOR the high 32 bits modulo
//     1021); every other request (any wildcard) goes into one wildcard queue.  Every posted
//     request takes a sequence number from one counter.  The queues are singly linked.
//   - An arriving message hashes its tag.  With the wildcard queue empty it walks only its
//     bucket; otherwise it walks the bucket and the wildcard queue together in
//     sequence-number order and takes the first request that matches, so the earliest
//     posted receive wins.
//   - Unexpected messages are receive descriptors linked into two doubly linked lists: one
//     of all of them, in arrival order, and their hash bucket's.  A receive or probe with a
//     full mask walks its bucket's list; one with a wildcard walks the list of all.  A match
//     is unlinked from both in O(1).
//   - Requests and descriptors are stand-ins: the ucp_request_t (the queue link and the
//     tag, mask and sequence number a cache line into a few hundred bytes) and the receive
//     descriptor with the eager header after it, where the message's tag is read.
//   - A "full" mask is one that covers every field of the layout: pml_ucx makes exact
//     receives with all 64 bits set, and the default layout uses all 64.
//
// What it leaves out:
//   - Hardware tag-matching offload and its thresholds, the rendezvous and multi-fragment
//     paths (only the first fragment matches), the per-bucket counters for offload, the
//     worker lock.
//   - UCX removes a cancelled request from its queue by walking that queue for the
//     predecessor; the harness hands back the caller's pointer rather than the request, so
//     cancel walks the wildcard queue and the buckets, and remove-by-handle walks the list
//     of all unexpected messages.  Both are rare in the workloads.
//
// bytes(): the two tables of 1024 bucket heads, the queue link and sequence number of each
// posted request (16 bytes), the two list links of each descriptor (32 bytes) -- what
// matching holds beyond the request and descriptor objects.  queues(): the buckets of both
// tables plus the wildcard queue and the list of all unexpected messages.
#pragma once

#include "baseline.h"
#include "baseline_util.h"
#include "vmatch.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace vmb
{
namespace ucx
{

constexpr uint32_t kHashSize = 1021;  // a prime just below 1024, as UCX uses
constexpr uint32_t kHashAlloc = 1024; // buckets allocated: the index can exceed 1020
constexpr size_t kRequestBytes = 256; // ucp_request_t
constexpr size_t kRequestLinkOffset = 64;
constexpr size_t kDescBytes = 64;         // ucp_recv_desc_t and the eager tag header
constexpr uint64_t kExpEntryBytes = 16;   // queue link and sequence number
constexpr uint64_t kUnexpEntryBytes = 32; // two list links

inline uint32_t hash_of(uint64_t tag)
{
    return ((uint32_t)tag % kHashSize) ^ ((uint32_t)(tag >> 32) % kHashSize);
}

struct Request {
    void *user = nullptr;
    unsigned char pad0[kRequestLinkOffset - sizeof(void *)];
    Request *next = nullptr; // ucs_queue_elem_t
    uint64_t tag = 0, mask = 0, sn = 0;
    unsigned char pad1[kRequestBytes - kRequestLinkOffset - 32];
};
static_assert(sizeof(Request) == kRequestBytes, "ucp_request_t stand-in size");

struct Desc {
    Desc *all_next = nullptr, *all_prev = nullptr;   // tag_list[UCP_RDESC_ALL_LIST]
    Desc *hash_next = nullptr, *hash_prev = nullptr; // tag_list[UCP_RDESC_HASH_LIST]
    void *user = nullptr;
    uint32_t bucket = 0;
    uint32_t flags = 0;
    uint64_t tag = 0; // the eager header right after the descriptor
    unsigned char pad[kDescBytes - 56];
};
static_assert(sizeof(Desc) == kDescBytes, "receive descriptor stand-in size");

// A singly linked queue with a tail pointer (ucs_queue_head_t).
struct Queue {
    Request *head = nullptr, *tail = nullptr;

    void push(Request *r)
    {
        r->next = nullptr;
        (tail ? tail->next : head) = r;
        tail = r;
    }

    void remove(Request *prev, Request *r)
    {
        (prev ? prev->next : head) = r->next;
        if (tail == r)
            tail = prev;
    }
};

// Head of a doubly linked descriptor list.
struct DList {
    Desc *head = nullptr, *tail = nullptr;
};

class UcxQueue final
{
  public:
    // nprocs: unused (one tag-matching context for every peer), for the interface of Ob1Queue.
    UcxQueue(const Layout &l, uint32_t /*nprocs*/)
        : layout_(l), full_(Layout::mask(l.ctx_bits + l.src_bits + l.tag_bits)),
          exp_(kHashAlloc), unexp_(kHashAlloc)
    {
    }

    VMB_INLINE int post(uint64_t bits, uint64_t care, void *req, void **msg_out)
    {
        Desc *d = find_unexpected(bits, care);
        if (d) {
            *msg_out = d->user;
            drop(d);
            return VMATCH_MATCHED;
        }
        Request *r = reqs_.get();
        r->user = req;
        r->tag = bits;
        r->mask = care;
        r->sn = sn_++;
        (care == full_ ? exp_[hash_of(bits)] : wild_).push(r);
        nexp_++;
        return VMATCH_QUEUED;
    }

    VMB_INLINE int arrive(uint64_t bits, void *msg, void **req_out)
    {
        uint32_t h = hash_of(bits);
        Queue &bucket = exp_[h];
        // Walk the bucket and the wildcard queue merged by sequence number.
        Request *b = bucket.head, *bp = nullptr, *w = wild_.head, *wp = nullptr;
        while (b || w) {
            bool from_bucket = b && (!w || b->sn < w->sn);
            Request *r = from_bucket ? b : w;
            inspected_++;
            if (((bits ^ r->tag) & r->mask) == 0) {
                (from_bucket ? bucket : wild_).remove(from_bucket ? bp : wp, r);
                *req_out = r->user;
                reqs_.put(r);
                nexp_--;
                return VMATCH_MATCHED;
            }
            if (from_bucket) {
                bp = b;
                b = b->next;
            } else {
                wp = w;
                w = w->next;
            }
        }
        Desc *d = descs_.get();
        d->user = msg;
        d->tag = bits;
        d->bucket = h;
        link(all_, d, &Desc::all_next, &Desc::all_prev);
        link(unexp_[h], d, &Desc::hash_next, &Desc::hash_prev);
        nunexp_++;
        return VMATCH_QUEUED;
    }

    VMB_INLINE int probe(uint64_t bits, uint64_t care, int remove, void **msg_out)
    {
        Desc *d = find_unexpected(bits, care);
        if (!d)
            return VMATCH_ENOTFOUND;
        *msg_out = d->user;
        if (remove)
            drop(d);
        return VMATCH_MATCHED;
    }

    int cancel(void *req)
    {
        if (cancel_in(wild_, req))
            return VMATCH_OK;
        for (Queue &q : exp_)
            if (q.head && cancel_in(q, req))
                return VMATCH_OK;
        return VMATCH_ENOTFOUND;
    }

    int remove_unexpected(void *msg)
    {
        for (Desc *d = all_.head; d; d = d->all_next) {
            inspected_++;
            if (d->user == msg) {
                drop(d);
                return VMATCH_OK;
            }
        }
        return VMATCH_ENOTFOUND;
    }

    uint64_t inspected() const { return inspected_; }

    uint64_t bytes() const
    {
        return sizeof(*this) + kHashAlloc * (sizeof(Queue) + sizeof(DList)) +
               nexp_ * kExpEntryBytes + nunexp_ * kUnexpEntryBytes;
    }

    uint64_t queues() const { return 2 * kHashAlloc + 2; }

  private:
    // The oldest unexpected message a receive (bits, care) takes: its bucket's list when
    // the mask is full (a message with these exact bits hashes there), else the list of all.
    VMB_INLINE Desc *find_unexpected(uint64_t bits, uint64_t care)
    {
        if (care == full_) {
            for (Desc *d = unexp_[hash_of(bits)].head; d; d = d->hash_next) {
                inspected_++;
                if (((d->tag ^ bits) & care) == 0)
                    return d;
            }
            return nullptr;
        }
        for (Desc *d = all_.head; d; d = d->all_next) {
            inspected_++;
            if (((d->tag ^ bits) & care) == 0)
                return d;
        }
        return nullptr;
    }

    static void link(DList &l, Desc *d, Desc *Desc::*next, Desc *Desc::*prev)
    {
        d->*next = nullptr;
        d->*prev = l.tail;
        (l.tail ? l.tail->*next : l.head) = d;
        l.tail = d;
    }

    static void unlink(DList &l, Desc *d, Desc *Desc::*next, Desc *Desc::*prev)
    {
        (d->*prev ? d->*prev->*next : l.head) = d->*next;
        (d->*next ? d->*next->*prev : l.tail) = d->*prev;
    }

    void drop(Desc *d)
    {
        unlink(all_, d, &Desc::all_next, &Desc::all_prev);
        unlink(unexp_[d->bucket], d, &Desc::hash_next, &Desc::hash_prev);
        descs_.put(d);
        nunexp_--;
    }

    bool cancel_in(Queue &q, void *req)
    {
        for (Request *r = q.head, *prev = nullptr; r; prev = r, r = r->next) {
            inspected_++;
            if (r->user == req) {
                q.remove(prev, r);
                reqs_.put(r);
                nexp_--;
                return true;
            }
        }
        return false;
    }

    Layout layout_;
    uint64_t full_;
    std::vector<Queue> exp_;
    Queue wild_;
    std::vector<DList> unexp_;
    DList all_;
    uint64_t sn_ = 0, nexp_ = 0, nunexp_ = 0, inspected_ = 0;
    ObjPool<Request> reqs_;
    ObjPool<Desc> descs_;
};

} // namespace ucx

using ucx::UcxQueue;

} // namespace vmb
