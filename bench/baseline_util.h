// baseline_util.h -- pieces the baselines share: MPI fields decoded from match bits, and a
// pool of fixed-size stand-ins for the request and fragment objects the real libraries
// search through.
//
// Why stand-ins: the baselines get the caller's payload pointer (opaque, like vmatch's), but
// the designs they model keep their match fields inside large request or fragment objects,
// so every entry inspected costs a load from a different object, often from a different
// cache line than the list links.  Each baseline allocates an object of the modelled size,
// places the links and match fields at offsets like the real structure's, and keeps the
// caller's pointer in it.  The sizes are approximations for x86-64 builds (they vary with
// the configuration); what matters for the timing is that entries are a few hundred bytes
// apart and that a search touches the cache lines the real search touches.
#pragma once

#include "baseline.h"
#include "vmatch.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <vector>

// On the calls of a design's class that a match runs through: compiled into the caller
// whatever the compiler's size heuristics say, as UCX's tag_match.inl and ob1's static
// matching functions are in those libraries (GCC keeps ob1's post and arrival out of line
// otherwise, and the inline baselines would pay a call after all).
#define VMB_INLINE __attribute__((always_inline))

namespace vmb
{

// A receive or message in MPI terms.  Wildcards are -1, as MPI_ANY_SOURCE / MPI_ANY_TAG;
// sources and tags are fields of at most 31 bits (every layout the benchmarks use).
struct MpiKey {
    uint32_t ctx;
    int32_t src, tag;
};

inline MpiKey decode_msg(const Layout &l, uint64_t bits)
{
    return {(uint32_t)l.ctx(bits), (int32_t)l.src(bits), (int32_t)l.tag(bits)};
}

inline MpiKey decode_recv(const Layout &l, uint64_t bits, uint64_t care)
{
    MpiKey k = decode_msg(l, bits);
    if (l.any_src(care))
        k.src = VMATCH_ANY_SOURCE;
    if (l.any_tag(care))
        k.tag = VMATCH_ANY_TAG;
    return k;
}

// Does a receive (src, tag, possibly wildcards) take a message (msrc, mtag)?  The context is
// compared by the caller where the design compares it.
inline bool mpi_match(int32_t src, int32_t tag, int32_t msrc, int32_t mtag)
{
    return (src == msrc || src == VMATCH_ANY_SOURCE) && (tag == mtag || tag == VMATCH_ANY_TAG);
}

// A free list of objects of one type, carved from 64-byte aligned chunks, as MPI libraries
// keep request and fragment free lists: allocation on the matching path is a pop, not a
// malloc.  Objects are not constructed or destroyed beyond placement-new of T.
template <class T> class ObjPool
{
  public:
    ObjPool() = default;
    ObjPool(const ObjPool &) = delete;
    ObjPool &operator=(const ObjPool &) = delete;
    ~ObjPool()
    {
        for (void *c : chunks_)
            std::free(c);
    }

    T *get()
    {
        if (!free_)
            grow();
        Free *f = free_;
        free_ = f->next;
        return new (f) T; // default-initialised: the padding is not written
    }

    void put(T *p)
    {
        p->~T();
        Free *f = reinterpret_cast<Free *>(p);
        f->next = free_;
        free_ = f;
    }

    // Bytes of every chunk allocated so far (objects in use and free).
    size_t bytes() const { return chunks_.size() * kPerChunk * sizeof(T); }

  private:
    struct Free {
        Free *next;
    };
    static_assert(sizeof(T) >= sizeof(Free), "pooled objects hold a free-list link");
    static constexpr size_t kPerChunk = 64; // objects per chunk: a few pages at most

    void grow()
    {
        size_t sz = kPerChunk * sizeof(T);
        void *c = std::aligned_alloc(64, (sz + 63) / 64 * 64);
        if (!c)
            throw std::bad_alloc();
        chunks_.push_back(c);
        char *p = static_cast<char *>(c);
        for (size_t i = kPerChunk; i-- > 0;) {
            Free *f = reinterpret_cast<Free *>(p + i * sizeof(T));
            f->next = free_;
            free_ = f;
        }
    }

    Free *free_ = nullptr;
    std::vector<void *> chunks_;
};

// Open MPI's ob1 receive request (mca_pml_ob1_recv_request_t) as the ob1 and fuzzy
// baselines see it: an opal_list_item_t at the start (the list links), the match fields
// (req_peer, req_tag, req_sequence) of mca_pml_base_request_t after the ompi_request_t
// header, about 160 bytes in; the whole object is several hundred bytes with the convertor
// and the RDMA bookkeeping.
constexpr size_t kOb1RequestBytes = 512;
constexpr size_t kOb1RequestMatchOffset = 160;
struct Ob1Request {
    Ob1Request *next = nullptr, *prev = nullptr; // opal_list_item_t
    void *list = nullptr;                        // which list holds it (bookkeeping)
    void *user = nullptr;                        // the caller's request pointer
    unsigned char pad0[kOb1RequestMatchOffset - 4 * sizeof(void *)];
    int32_t peer = 0, tag = 0;
    uint64_t seq = 0;
    unsigned char pad1[kOb1RequestBytes - kOb1RequestMatchOffset - 16];
};
static_assert(sizeof(Ob1Request) == kOb1RequestBytes, "ob1 request stand-in size");

// Open MPI's ob1 receive fragment (mca_pml_ob1_recv_frag_t) of an unexpected message: the
// list links first, then the match header (hdr_ctx, hdr_src, hdr_tag, hdr_seq) a little
// further in, then the segment descriptors; the eager payload lives in a separate buffer.
constexpr size_t kOb1FragBytes = 192;
constexpr size_t kOb1FragMatchOffset = 64;
struct Ob1Frag {
    Ob1Frag *next = nullptr, *prev = nullptr;
    void *list = nullptr;
    void *user = nullptr; // the caller's message pointer
    unsigned char pad0[kOb1FragMatchOffset - 4 * sizeof(void *)];
    int32_t src = 0, tag = 0;
    uint64_t seq = 0; // arrival order (see baseline_ob1.cc)
    unsigned char pad1[kOb1FragBytes - kOb1FragMatchOffset - 16];
};
static_assert(sizeof(Ob1Frag) == kOb1FragBytes, "ob1 fragment stand-in size");

} // namespace vmb
