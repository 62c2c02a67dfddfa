// baseline_fuzzy.cc -- an Open MPI custommatch "fuzzy512" style queue (the short-key variant
// of ompi/mca/pml/ob1/custommatch, Open MPI 5), reimplemented from its published design.
//
// What it models:
//   - One posted-receive queue and one unexpected queue per communicator (context id), each a
//     singly linked list of 64-byte aligned blocks of 32 slots, filled at the tail.  A block
//     holds 32 16-bit keys (one 512-bit vector), on the PRQ side 32 16-bit masks (a second
//     vector), the 32 object pointers, and the range [start, end] of slots still in use.
//   - The key is the low 16 bits of source XOR tag.  A receive with MPI_ANY_SOURCE or
//     MPI_ANY_TAG gets mask 0, so it is a candidate for every message; an exact receive gets
//     mask 0xffff.  Searching the PRQ for a message compares (keys & masks) with
//     (key & masks) for 32 slots at once (AVX-512BW vpcmpeqw into a 32-bit mask; a scalar
//     loop with the same result when the CPU lacks AVX-512BW).  Searching the UMQ for a
//     receive compares keys with the receive's key under the receive's mask (0 for a
//     wildcard receive: every message is a candidate).
//   - Keys are fuzzy: different (source, tag) pairs share a key, so every candidate, in slot
//     order, is verified by dereferencing the object -- the ob1 receive request (peer, tag)
//     or the receive fragment's match header (source, tag) -- and the first verified one is
//     the match.  That keeps MPI order: blocks and slots are in arrival order, wildcards
//     included, so no sequence numbers are needed.
//   - Removal writes key and mask 0xffff and a NULL pointer into the slot (a hole), moves
//     start/end past holes at the edges, and returns a block that empties to a per-queue
//     free list; holes in the middle stay until their block empties.
//   - Cancel and remove-by-handle scan the blocks for the object, as custommatch does.
//
// What it leaves out:
//   - ob1's per-peer sequence numbers and the out-of-order fragment list (messages here
//     arrive in order), the probe/mprobe bookkeeping beyond finding and removing the match,
//     and the matching lock.
//   - Candidates are visited with count-trailing-zeros over the compare mask rather than a
//     loop over every slot of the range, which gives fuzzy512 its best case.
//   - Open MPI hands cancel its request object; the harness hands back the caller's
//     pointer, which the stand-in object holds, so cancel and remove compare that field.
//   - Request and fragment objects are stand-ins of the modelled sizes (baseline_util.h).
//
// bytes(): the blocks (in use and on the free lists) and the per-communicator headers --
// what the matching structure holds beyond the request and fragment objects MPI keeps
// anyway.  queues(): the lists, two per communicator seen.
#include "baseline.h"
#include "baseline_util.h"
#include "vmatch.h"

#include <immintrin.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

namespace vmb
{
namespace
{

constexpr int kSlots = 32; // 32 keys of 16 bits fill one 512-bit vector
constexpr uint16_t kHole = 0xffff;
constexpr uint32_t kAllSlots = 0xffffffffu;

// One block.  The key (and mask) vectors come first so each is one aligned 64-byte line.
template <bool HasMask> struct alignas(64) Block {
    uint16_t keys[kSlots];
    uint16_t mask[HasMask ? kSlots : 1];
    Block *next;
    int start, end; // slots in use are within [start, end]; end < start: empty
    void *value[kSlots];
};

// Compare masks: bit i set when (keys[i] & m[i]) == (key & m[i]).  `masks` is the block's
// mask vector (PRQ) or NULL with `qmask` applying to every slot (UMQ).
using CmpFn = uint32_t (*)(const uint16_t *keys, const uint16_t *masks, uint16_t key,
                           uint16_t qmask);

uint32_t cmp_scalar(const uint16_t *keys, const uint16_t *masks, uint16_t key, uint16_t qmask)
{
    uint32_t r = 0;
    for (int i = 0; i < kSlots; i++) {
        uint16_t m = masks ? masks[i] : qmask;
        r |= (uint32_t)((keys[i] & m) == (key & m)) << i;
    }
    return r;
}

__attribute__((target("avx512f,avx512bw"))) uint32_t
cmp_avx512(const uint16_t *keys, const uint16_t *masks, uint16_t key, uint16_t qmask)
{
    __m512i k = _mm512_load_si512(keys);
    __m512i m = masks ? _mm512_load_si512(masks) : _mm512_set1_epi16((short)qmask);
    __m512i s = _mm512_set1_epi16((short)key);
    return (uint32_t)_mm512_cmpeq_epi16_mask(_mm512_and_si512(k, m), _mm512_and_si512(s, m));
}

// A queue of blocks: the PRQ (with masks, holding receive requests) or the UMQ (holding
// fragments).
template <bool HasMask> class BlockQueue
{
  public:
    using B = Block<HasMask>;

    BlockQueue() = default;
    BlockQueue(const BlockQueue &) = delete;
    BlockQueue &operator=(const BlockQueue &) = delete;
    ~BlockQueue()
    {
        free_chain(head_);
        free_chain(pool_);
    }

    void append(uint16_t key, uint16_t mask, void *obj)
    {
        if (!tail_ || tail_->end == kSlots - 1) {
            B *b = pool_;
            if (b) {
                pool_ = b->next;
            } else {
                b = static_cast<B *>(std::aligned_alloc(64, sizeof(B)));
                if (!b)
                    throw std::bad_alloc();
                nblocks_++;
            }
            for (int i = 0; i < kSlots; i++) {
                b->keys[i] = kHole;
                if (HasMask)
                    b->mask[i] = kHole;
                b->value[i] = nullptr;
            }
            b->next = nullptr;
            b->start = 0;
            b->end = -1;
            (tail_ ? tail_->next : head_) = b;
            tail_ = b;
        }
        int i = ++tail_->end;
        tail_->keys[i] = key;
        if (HasMask)
            tail_->mask[i] = mask;
        tail_->value[i] = obj;
    }

    // The first object, in queue order, whose compare bit is set and that `verify` accepts;
    // removed when `take`.  `inspected` grows by the slots compared.
    template <class Verify>
    void *find(CmpFn cmp, uint16_t key, uint16_t qmask, bool take, uint64_t &inspected,
               Verify verify)
    {
        B *prev = nullptr;
        for (B *b = head_; b; prev = b, b = b->next) {
            inspected += (uint64_t)(b->end - b->start + 1);
            uint32_t hit = cmp(b->keys, HasMask ? b->mask : nullptr, key, qmask);
            hit &= range_mask(b->start, b->end);
            for (; hit; hit &= hit - 1) {
                int i = __builtin_ctz(hit);
                void *obj = b->value[i];
                if (obj && verify(obj)) {
                    if (take)
                        remove_slot(prev, b, i);
                    return obj;
                }
            }
        }
        return nullptr;
    }

    // Remove the slot holding an object for which `is` is true (cancel / remove by handle).
    template <class Is> void *remove_if(uint64_t &inspected, Is is)
    {
        B *prev = nullptr;
        for (B *b = head_; b; prev = b, b = b->next)
            for (int i = b->start; i <= b->end; i++) {
                inspected++;
                if (b->value[i] && is(b->value[i])) {
                    void *obj = b->value[i];
                    remove_slot(prev, b, i);
                    return obj;
                }
            }
        return nullptr;
    }

    size_t bytes() const { return nblocks_ * sizeof(B); }

  private:
    static uint32_t range_mask(int start, int end)
    {
        if (end < start)
            return 0;
        uint32_t hi = end == kSlots - 1 ? kAllSlots : (1u << (end + 1)) - 1;
        return hi & ~((1u << start) - 1);
    }

    void remove_slot(B *prev, B *b, int i)
    {
        b->keys[i] = kHole;
        if (HasMask)
            b->mask[i] = kHole;
        b->value[i] = nullptr;
        while (b->start <= b->end && !b->value[b->start])
            b->start++;
        while (b->start <= b->end && !b->value[b->end])
            b->end--;
        if (b->start <= b->end)
            return;
        // The block emptied: unlink it and keep it for reuse.
        (prev ? prev->next : head_) = b->next;
        if (tail_ == b)
            tail_ = prev;
        b->next = pool_;
        pool_ = b;
    }

    static void free_chain(B *b)
    {
        while (b) {
            B *n = b->next;
            std::free(b);
            b = n;
        }
    }

    B *head_ = nullptr, *tail_ = nullptr, *pool_ = nullptr;
    size_t nblocks_ = 0;
};

uint16_t key_of(int32_t src, int32_t tag)
{
    return (uint16_t)((uint32_t)src ^ (uint32_t)tag);
}

class Fuzzy final : public Baseline
{
  public:
    // The AVX-512BW compare when the CPU has it; VMB_FUZZY_KERNEL=scalar forces the scalar
    // one (test_baselines runs both).
    explicit Fuzzy(const Layout &l) : layout_(l)
    {
        const char *k = std::getenv("VMB_FUZZY_KERNEL");
        bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw");
        cmp_ = avx512 && !(k && std::strcmp(k, "scalar") == 0) ? cmp_avx512 : cmp_scalar;
    }

    int post(uint64_t bits, uint64_t care, void *req, void **msg_out) override
    {
        MpiKey k = decode_recv(layout_, bits, care);
        Comm &c = comm(k.ctx);
        bool wild = k.src == VMATCH_ANY_SOURCE || k.tag == VMATCH_ANY_TAG;
        uint16_t qmask = wild ? 0 : 0xffff;
        void *o = c.umq.find(cmp_, key_of(k.src, k.tag), qmask, true, inspected_, [&](void *p) {
            const Ob1Frag *f = static_cast<const Ob1Frag *>(p);
            return mpi_match(k.src, k.tag, f->src, f->tag);
        });
        if (o) {
            Ob1Frag *f = static_cast<Ob1Frag *>(o);
            *msg_out = f->user;
            frags_.put(f);
            return VMATCH_MATCHED;
        }
        Ob1Request *r = reqs_.get();
        r->peer = k.src;
        r->tag = k.tag;
        r->user = req;
        c.prq.append(key_of(k.src, k.tag), qmask, r);
        return VMATCH_QUEUED;
    }

    int arrive(uint64_t bits, void *msg, void **req_out) override
    {
        MpiKey k = decode_msg(layout_, bits);
        Comm &c = comm(k.ctx);
        void *o = c.prq.find(cmp_, key_of(k.src, k.tag), 0, true, inspected_, [&](void *p) {
            const Ob1Request *r = static_cast<const Ob1Request *>(p);
            return mpi_match(r->peer, r->tag, k.src, k.tag);
        });
        if (o) {
            Ob1Request *r = static_cast<Ob1Request *>(o);
            *req_out = r->user;
            reqs_.put(r);
            return VMATCH_MATCHED;
        }
        Ob1Frag *f = frags_.get();
        f->src = k.src;
        f->tag = k.tag;
        f->user = msg;
        c.umq.append(key_of(k.src, k.tag), 0, f);
        return VMATCH_QUEUED;
    }

    int probe(uint64_t bits, uint64_t care, int remove, void **msg_out) override
    {
        MpiKey k = decode_recv(layout_, bits, care);
        Comm &c = comm(k.ctx);
        bool wild = k.src == VMATCH_ANY_SOURCE || k.tag == VMATCH_ANY_TAG;
        void *o = c.umq.find(cmp_, key_of(k.src, k.tag), wild ? 0 : 0xffff, remove != 0,
                             inspected_, [&](void *p) {
                                 const Ob1Frag *f = static_cast<const Ob1Frag *>(p);
                                 return mpi_match(k.src, k.tag, f->src, f->tag);
                             });
        if (!o)
            return VMATCH_ENOTFOUND;
        Ob1Frag *f = static_cast<Ob1Frag *>(o);
        *msg_out = f->user;
        if (remove)
            frags_.put(f);
        return VMATCH_MATCHED;
    }

    int cancel(void *req) override
    {
        for (auto &c : comms_) {
            if (!c)
                continue;
            void *o = c->prq.remove_if(inspected_, [&](void *p) {
                return static_cast<const Ob1Request *>(p)->user == req;
            });
            if (o) {
                reqs_.put(static_cast<Ob1Request *>(o));
                return VMATCH_OK;
            }
        }
        return VMATCH_ENOTFOUND;
    }

    int remove_unexpected(void *msg) override
    {
        for (auto &c : comms_) {
            if (!c)
                continue;
            void *o = c->umq.remove_if(inspected_, [&](void *p) {
                return static_cast<const Ob1Frag *>(p)->user == msg;
            });
            if (o) {
                frags_.put(static_cast<Ob1Frag *>(o));
                return VMATCH_OK;
            }
        }
        return VMATCH_ENOTFOUND;
    }

    uint64_t inspected() const override { return inspected_; }

    uint64_t bytes() const override
    {
        uint64_t b = comms_.capacity() * sizeof(comms_[0]);
        for (const auto &c : comms_)
            if (c)
                b += sizeof(Comm) + c->prq.bytes() + c->umq.bytes();
        return b;
    }

    uint64_t queues() const override { return 2 * ncomms_; }

  private:
    struct Comm {
        BlockQueue<true> prq;
        BlockQueue<false> umq;
    };

    // The communicator of a context id: Open MPI finds it in O(1) from the context id.
    Comm &comm(uint32_t ctx)
    {
        if (ctx >= comms_.size())
            comms_.resize((size_t)ctx + 1);
        if (!comms_[ctx]) {
            comms_[ctx].reset(new Comm());
            ncomms_++;
        }
        return *comms_[ctx];
    }

    Layout layout_;
    CmpFn cmp_;
    std::vector<std::unique_ptr<Comm>> comms_;
    uint64_t ncomms_ = 0, inspected_ = 0;
    ObjPool<Ob1Request> reqs_;
    ObjPool<Ob1Frag> frags_;
};

} // namespace

std::unique_ptr<Baseline> make_fuzzy(const Layout &layout, uint32_t /*nprocs*/)
{
    return std::unique_ptr<Baseline>(new Fuzzy(layout));
}

} // namespace vmb
