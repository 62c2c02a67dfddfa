/* vmatch_inline.h -- the common calls of vmatch.h compiled into the caller, for MPI libraries
 * and network layers that inline their own matching today (UCX's tag_match.inl, ob1's
 * per-peer lists): a post, arrival, probe, posted-receive take and enqueue with no call into
 * the library when the side is short (its entries in a vector, wildcard receives included)
 * or the entry is exact and hits a bucket line, and the library's own call for everything
 * else.
 *
 * Each function here has the arguments, results and MPI order of its vmatch.h namesake
 * (vmatch_inline_post is vmatch_post, and so on): a caller may mix the two freely on one
 * engine.  The inline part runs on a single-threaded engine of policy=hash without
 * profile.record: on a short side whatever the care mask (while its vector has room), on a
 * side with a table for an exact entry (a receive whose care mask is all ones, or a
 * message) when its bucket line holds the match, or has a free way and the table need not
 * grow, also while a table's wildcard receives wait in its vector; it counts exactly what
 * the library would (vmatch_stats).  Anything else -- a wildcard on a table, a bucket that
 * overflowed, more wildcard receives queued than the vector holds, unexpected messages kept
 * flat, a full vector or line, another policy, threads -- is the library's call, made with
 * nothing changed.
 *
 * The structures below are the library's own (the engine's first bytes and policy=hash's
 * tables), published at version VMATCH_INLINE_ABI.  An engine whose library has another
 * version never runs the inline part: its version (vmatch_hot_t.abi, at offset 28 in every
 * version) is compared with this header's on every call, and vmatch_inline_create refuses
 * the engine with VMATCH_EINVAL and a message instead.  Callers read nothing here
 * themselves: only these functions do.  docs/inline.md has the design and the figures.
 */
#ifndef VMATCH_INLINE_H
#define VMATCH_INLINE_H

#include "vmatch.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The helpers below are folded into each caller, with the side known there. */
#define VMATCH_INLINE_ static inline __attribute__((always_inline))

/* The version of the layouts below; the library says which it has (vmatch_inline_abi). */
#ifdef __SIZEOF_INT128__
#define VMATCH_INLINE_ABI 5u
#else /* the same layouts, another bucket hash (vmatch_line_mix): a version of its own */
#define VMATCH_INLINE_ABI 0x10005u
#endif

/* A bucket line: one cache line holding the first two exact entries of its bucket, oldest
 * first (way 0 holds the older; a NULL payload is a free way, and the ways in use come
 * first), their sequence numbers, and in one word the ways in use (the low 32 bits) and how
 * many of the bucket's entries went on past the line, which only the library reads (the high
 * 32 bits):
 * fill < 2 says at once that the bucket has not overflowed and that a way is free. */
typedef struct vmatch_line {
    vmatch_bits_t bits[2];
    void *payload[2];
    uint64_t seq[2];
    uint64_t fill;
    struct vm_queue *queue; /* the library's */
} vmatch_line_t;

/* One entry of the bucket in overflow, in vmatch_line_t.fill. */
#define VMATCH_LINE_OVER1 (1ull << 32)

/* The most entries a short side holds (hash.short's bound): its vector is 8 entries of 32
 * bytes, four cache lines, of which a queue of one or two reads the first. */
#define VMATCH_SHORT_MAX 8

/* An entry of a short side: a receive's bits and care mask, or a message's bits with an
 * all-ones care; the payload; the sequence number it took. */
typedef struct vmatch_short_entry {
    vmatch_bits_t bits, care;
    void *payload;
    uint64_t seq;
} vmatch_short_entry_t;

/* A side of the engine (the posted receives, or the unexpected messages). */
typedef struct vmatch_hot_side {
    uint64_t len;         /* entries of the side */
    vmatch_line_t *table; /* nb bucket lines; NULL until the side's first entry */
    uint32_t nb;          /* buckets */
    uint8_t slow;         /* nonzero: exact calls on this side are the library's, but for
                             VMATCH_SLOW_WILD (below) */
    uint8_t head;         /* a short side: the place of its oldest entry (below) */
    uint8_t shortcap;     /* a short side: its vector's places; 0 while the side has a table */
    uint8_t nwild;        /* a table's wildcard receives in the vector (VMATCH_SLOW_WILD) */
    uint64_t count;       /* the entries of the table (lines and what overflowed them) and its
                             wildcard receives */
    uint64_t room;        /* count at which an append is the library's (the table grows, or
                             the library watches how full it gets); 0 while slow is set (but
                             for VMATCH_SLOW_WILD) or table is NULL */
    uint64_t check;       /* an append with a higher sequence number is the library's (it
                             checks whether the tables should shrink); UINT64_MAX: never */
} vmatch_hot_side_t;

/* The short vector (docs/hash.md#short-sides) that follows a side's vmatch_hot_side_t.  A
 * short side (shortcap not 0) has no table: its len entries, wildcard receives included, are
 * vec[head] .. vec[head + len - 1], oldest first.  An append that finds vec[shortcap - 1]
 * taken is the library's, which moves them into a table (shortcap 0 from then on); quiet
 * windows that find the table holding at most hash.short entries give them back to the
 * vector and the table back to memory. */
VMATCH_INLINE_ vmatch_short_entry_t *vmatch_short_vec(const vmatch_hot_side_t *s)
{
    return (vmatch_short_entry_t *)(uintptr_t)(const void *)(s + 1);
}

/* slow of a side with a table (the posted receives) whose only wildcard receives are its
 * vector's nwild, vec[0] .. vec[nwild - 1], oldest first, while exact receives go to the
 * lines (room as when fast): an exact message takes the older of its line's first match and
 * the vector's.  Its puts are those of a fast side; only the library puts a wildcard
 * receive there (a header that does not know this value leaves every search of the side
 * to the library, as for any nonzero slow). */
#define VMATCH_SLOW_WILD 2

/* The MPI layout of the match bits (vmatch_mpi_pack), as masks and shifts. */
typedef struct vmatch_hot_pack {
    uint64_t tag_mask, src_mask, ctx_mask;    /* each field's width, in the low bits */
    unsigned tag_shift, src_shift, ctx_shift; /* each field's lowest bit */
    vmatch_bits_t tag_wild; /* the tag bits VMATCH_ANY_TAG clears: all of the field, or all
                               but its top bit for layout=ompi-ucx (Open MPI keeps that bit
                               in every mask, so that ANY_TAG never takes the negative tags
                               of its collectives) */
} vmatch_hot_pack_t;

/* The engine's first bytes. */
typedef struct vmatch_hot {
    uint64_t seq;       /* the last sequence number handed out */
    uint64_t inspected; /* vmatch_stats's inspected */
    void *reserved[1];
    uint32_t reserved_cls;
    uint32_t abi;               /* (offset 28 in every version) VMATCH_INLINE_ABI while the
                                   inline part may run on this engine, else 0 */
    uint64_t searches;          /* vmatch_stats's searches */
    vmatch_hot_side_t *side[2]; /* [0] the posted receives, [1] the unexpected messages */
    vmatch_hot_pack_t pack;
} vmatch_hot_t;

/* The library's VMATCH_INLINE_ABI. */
unsigned vmatch_inline_abi(void);

/* vmatch_create for a caller built with an inline header of version abi: VMATCH_EINVAL with
 * a message (vmatch_last_error) and no engine when the library's version differs. */
int vmatch_create_abi(const char *spec, unsigned abi, vmatch_engine_t **out);

/* vmatch_create, refused when this header is not the library's. */
static inline int vmatch_inline_create(const char *spec, vmatch_engine_t **out)
{
    return vmatch_create_abi(spec, VMATCH_INLINE_ABI, out);
}

/* 32 well-mixed bits of the match bits (policy=hash's bucket hash: the top half of the two
 * halves of a 128-bit product folded together, or without 128-bit products multiply, fold,
 * multiply;
 * docs/hash.md), and their bucket among nb (multiply-shift). */
VMATCH_INLINE_ uint32_t vmatch_line_mix(vmatch_bits_t bits)
{
#ifdef __SIZEOF_INT128__
    /* the top half of the fold: its bottom half steps by the multiplier's low 32 bits from
     * one small key to the next (tags 0, 1, 2...), which piles them into a few buckets of a
     * small table (tags 0-63 in 7 of 32 buckets).  The multiplier: of 8000 random odd ones,
     * among those with the fewest entries overflowing on average over 265 sets of MPI keys
     * in the three named layouts, the one with the mildest worst set, checked on 66 others
     * (docs/hash.md, "The multiplier"; test_hash's test_index_spread) */
    __extension__ unsigned __int128 p = (unsigned __int128)bits * 0xCFAA6FE074F070F9ull;
    return (uint32_t)(((uint64_t)(p >> 64) ^ (uint64_t)p) >> 32);
#else
    uint64_t h = bits * 0xCFAA6FE074F070F9ull;
    h = (h ^ (h >> 29)) * 0xFF51AFD7ED558CCDull;
    return (uint32_t)(h >> 32);
#endif
}

VMATCH_INLINE_ uint32_t vmatch_line_bucket(uint32_t mixed, uint32_t nb)
{
    return (uint32_t)(((uint64_t)mixed * nb) >> 32);
}

/* Put an entry into the first free way of line s when the bucket has nothing in overflow
 * (else the entry must go after those): 1 when it did, 0 when not. */
VMATCH_INLINE_ int vmatch_line_put(vmatch_line_t *s, vmatch_bits_t bits, void *payload,
                                   uint64_t seq)
{
    uint64_t w = s->fill;
    if (w >= 2)
        return 0;
    s->bits[w] = bits;
    s->payload[w] = payload;
    s->seq[w] = seq;
    s->fill = w + 1;
    return 1;
}

/* Take the first (so the oldest) of the line's ways that holds exactly these bits: 1 with
 * *payload, or 0; *compared gets the entries inspected (the ways up to the match, or all
 * those in use). */
VMATCH_INLINE_ int vmatch_line_take(vmatch_line_t *s, vmatch_bits_t bits, void **payload,
                                    unsigned *compared)
{
    /* Branches, not flags: the ways are in age order, so an exact match is in way 0 unless
     * its bucket holds two entries and it is the newer.  Against flags (both ways compared,
     * the line closed up by conditional moves) this is 19-22 instructions a pair fewer,
     * faster in the UCX port (1.01-1.14x stock over four runs, against 1.14-1.17x in one)
     * and on the report's one-entry collectives, slower where buckets hold two entries (the
     * gather in rank order, neighbours); docs/inline.md. */
    uint64_t f = s->fill;
    unsigned n = (unsigned)f, w;
    if (n && s->bits[0] == bits)
        w = 0;
    else if (n > 1 && s->bits[1] == bits)
        w = 1;
    else {
        *compared = n;
        return 0;
    }
    *compared = w + 1;
    *payload = s->payload[w];
    if (n > w + 1) { /* way 0 taken with way 1 in use: way 1 moves up */
        s->bits[0] = s->bits[1];
        s->payload[0] = s->payload[1];
        s->seq[0] = s->seq[1];
    }
    s->payload[n - 1] = NULL;
    s->fill = f - 1;
    return 1;
}

/* The first entry of side s's short vector that matches key where keycare and the entry's
 * care are set (oldest first), as an index into the vector, or -1; *compared: the entries
 * compared (up to the match, or all). */
VMATCH_INLINE_ int vmatch_short_find(const vmatch_hot_side_t *s, vmatch_bits_t key,
                                     vmatch_bits_t keycare, unsigned *compared)
{
    const vmatch_short_entry_t *v = vmatch_short_vec(s);
    unsigned i = s->head, end = i + (unsigned)s->len;
    for (; i < end; i++)
        if (!((v[i].bits ^ key) & v[i].care & keycare)) {
            *compared = i - s->head + 1;
            return (int)i;
        }
    *compared = (unsigned)s->len;
    return -1;
}

/* Drop entry i of side s's short vector, the others keeping their order (the oldest goes by
 * moving the head, another by moving those after it up); the caller then counts len. */
VMATCH_INLINE_ void vmatch_short_drop(vmatch_hot_side_t *s, unsigned i)
{
    vmatch_short_entry_t *v = vmatch_short_vec(s);
    unsigned end = s->head + (unsigned)s->len;
    if (i == s->head)
        s->head = (uint8_t)(s->len > 1 ? i + 1 : 0);
    else
        for (; i + 1 < end; i++)
            v[i] = v[i + 1];
}

/* Append an entry to short side s, whose last place the caller knows is free (len not
 * counted). */
VMATCH_INLINE_ void vmatch_short_put(vmatch_hot_side_t *s, vmatch_bits_t bits,
                                     vmatch_bits_t care, void *payload, uint64_t seq)
{
    vmatch_short_vec(s)[s->head + s->len] = (vmatch_short_entry_t){bits, care, payload, seq};
}

/* The first of table side s's wildcard receives in its vector (VMATCH_SLOW_WILD) that a
 * message's bits match, as an index into the vector, or -1; *compared: the receives
 * compared (up to the match, or all). */
VMATCH_INLINE_ int vmatch_wild_find(const vmatch_hot_side_t *s, vmatch_bits_t key,
                                    unsigned *compared)
{
    const vmatch_short_entry_t *v = vmatch_short_vec(s);
    unsigned i, n = s->nwild;
    for (i = 0; i < n; i++)
        if (!((v[i].bits ^ key) & v[i].care)) {
            *compared = i + 1;
            return (int)i;
        }
    *compared = n;
    return -1;
}

/* Drop wildcard receive i of table side s's vector, the others keeping their order (the
 * caller then counts len and count, and sets slow). */
VMATCH_INLINE_ void vmatch_wild_drop(vmatch_hot_side_t *s, unsigned i)
{
    vmatch_short_entry_t *v = vmatch_short_vec(s);
    unsigned n = s->nwild;
    for (; i + 1 < n; i++)
        v[i] = v[i + 1];
    s->nwild = (uint8_t)(n - 1);
}

/* The engine's inline part, or NULL when the library takes every call. */
VMATCH_INLINE_ vmatch_hot_t *vmatch_hot_(const vmatch_engine_t *e)
{
    vmatch_hot_t *h = (vmatch_hot_t *)(uintptr_t)(const void *)e;
    return __builtin_expect(h->abi == VMATCH_INLINE_ABI, 1) ? h : NULL;
}

/* Match bits (and, when care is not NULL, the care mask of a receive) of (ctx, src, tag):
 * vmatch_mpi_recv's packing, which the library makes with this code too. */
VMATCH_INLINE_ void vmatch_hot_pack_(const vmatch_hot_pack_t *k, uint32_t ctx, int32_t src,
                                     int32_t tag, vmatch_bits_t *bits, vmatch_bits_t *care)
{
    vmatch_bits_t b = (((uint64_t)(uint32_t)tag & k->tag_mask) << k->tag_shift) |
                      (((uint64_t)(uint32_t)src & k->src_mask) << k->src_shift) |
                      (((uint64_t)ctx & k->ctx_mask) << k->ctx_shift);
    if (care) {
        /* a wildcard field packs as 0; its care bits are clear but for those the layout
         * keeps (tag_wild) */
        vmatch_bits_t src_wild = src == VMATCH_ANY_SOURCE ? k->src_mask << k->src_shift : 0;
        vmatch_bits_t tag_wild = tag == VMATCH_ANY_TAG ? k->tag_mask << k->tag_shift : 0;
        b &= ~(src_wild | tag_wild);
        *care = ~(src_wild | (tag_wild & k->tag_wild));
    }
    *bits = b;
}

/* Queue an exact entry into its line of side q (mixed: its bits' hash), with the calls'
 * counts: 1 when done, 0 when the library must take the call (nothing changed). */
VMATCH_INLINE_ int vmatch_hot_put_(vmatch_hot_t *h, vmatch_hot_side_t *q, uint32_t mixed,
                                   vmatch_bits_t bits, void *payload)
{
    if (q->count >= q->room || h->seq >= q->check ||
        !vmatch_line_put(&q->table[vmatch_line_bucket(mixed, q->nb)], bits, payload,
                         h->seq + 1))
        return 0;
    h->seq++;
    q->len++;
    q->count++;
    return 1;
}

/* Queue an entry (a receive with any care mask, or a message: all ones) on side q: into its
 * short vector while it has no table, else, exact, into its line.  1 when done, 0 when the
 * library must take the call (nothing changed).  *mixed: the bits mixed, made here when
 * *have is 0. */
VMATCH_INLINE_ int vmatch_hot_queue_(vmatch_hot_t *h, vmatch_hot_side_t *q, vmatch_bits_t bits,
                                     vmatch_bits_t care, void *payload, uint32_t *mixed,
                                     int *have)
{
    if (q->head + q->len < q->shortcap) { /* a short side with room */
        if (h->seq >= q->check)
            return 0;
        vmatch_short_put(q, bits, care, payload, ++h->seq);
        q->len++;
        return 1;
    }
    if (care != ~(vmatch_bits_t)0)
        return 0;
    if (!*have)
        *mixed = vmatch_line_mix(bits), *have = 1;
    return vmatch_hot_put_(h, q, *mixed, bits, payload);
}

/* Search side s for the oldest entry that matches (bits, keycare) and take it:
 * VMATCH_MATCHED, VMATCH_ENOTFOUND, or -1 when the library must search (nothing changed).
 * A short side's vector is searched whatever keycare is; a table, for an exact search
 * (keycare all ones), on the bits' line.  *compared: the entries compared.  *mixed: the bits
 * mixed, made here when *have is 0 and a line is read. */
VMATCH_INLINE_ int vmatch_hot_take_(vmatch_hot_side_t *s, vmatch_bits_t bits,
                                    vmatch_bits_t keycare, void **out, unsigned *compared,
                                    uint32_t *mixed, int *have)
{
    vmatch_line_t *l;
    unsigned inline_;
    *compared = 0;
    if (!s->len) /* an empty side is not searched, whatever its state */
        return VMATCH_ENOTFOUND;
    if (s->shortcap) { /* a short side: the vector holds every entry */
        int i = vmatch_short_find(s, bits, keycare, compared);
        if (i < 0)
            return VMATCH_ENOTFOUND;
        *out = vmatch_short_vec(s)[i].payload;
        vmatch_short_drop(s, (unsigned)i);
        s->len--;
        return VMATCH_MATCHED;
    }
    if (s->slow || keycare != ~(vmatch_bits_t)0)
        return -1;
    if (!*have)
        *mixed = vmatch_line_mix(bits), *have = 1;
    l = &s->table[vmatch_line_bucket(*mixed, s->nb)];
    if (vmatch_line_take(l, bits, out, &inline_)) {
        *compared += inline_;
        s->len--;
        s->count--;
        return VMATCH_MATCHED;
    }
    *compared += inline_;
    return l->fill >= VMATCH_LINE_OVER1 ? -1 : VMATCH_ENOTFOUND;
}

/* A search of side `side` alone that takes what it finds (a posted receive for an arrival,
 * an unexpected message for a removing probe), counted as the library counts it:
 * VMATCH_MATCHED, VMATCH_ENOTFOUND, or -1 for the library. */
VMATCH_INLINE_ int vmatch_hot_search_(vmatch_hot_t *h, int side, vmatch_bits_t bits,
                                      vmatch_bits_t keycare, void **out)
{
    unsigned compared;
    uint32_t mixed = 0; /* set where a line is read (have) */
    int have = 0;
    int rc = vmatch_hot_take_(h->side[side], bits, keycare, out, &compared, &mixed, &have);
    if (rc != -1) {
        h->searches++;
        h->inspected += compared;
    }
    return rc;
}

/* A post or an arrival (side 0 or 1: the side the entry queues on; care all ones for an
 * arrival): -1 for the library.  The bits are mixed at most once, for the lines of both
 * sides. */
VMATCH_INLINE_ int vmatch_hot_exchange_(vmatch_hot_t *h, int side, vmatch_bits_t bits,
                                        vmatch_bits_t care, void *payload, void **out)
{
    unsigned compared;
    uint32_t mixed = 0; /* set where a line is read (have) */
    int have = 0;
    int rc = vmatch_hot_take_(h->side[!side], bits, care, out, &compared, &mixed, &have);
    if (rc == VMATCH_ENOTFOUND) {
        if (!vmatch_hot_queue_(h, h->side[side], bits, care, payload, &mixed, &have))
            return -1;
        rc = VMATCH_QUEUED;
    } else if (rc == VMATCH_MATCHED) {
        h->seq++; /* as the library: every post and arrival takes a number */
    } else {
        return -1;
    }
    h->searches++;
    h->inspected += compared;
    return rc;
}

/* An arrival (msg not NULL) or a take of a posted receive (msg NULL) that the calls above
 * left to the library (nothing changed) while the posted receives' only wildcard receives
 * wait in their vector (VMATCH_SLOW_WILD): the older of the bits' line's first match and
 * the vector's, else the message queued, as vmatch_hot_exchange_ and _search_ count them;
 * -1 for the library (the line holds no match and its bucket overflowed, or the queue
 * cannot take the message here).  Out of line and cold, behind the calls above: their
 * code stays as it was, and only a program with ANY_SOURCE or ANY_TAG receives queued
 * among exact ones comes here. */
static __attribute__((noinline, cold, unused)) int
vmatch_hot_wild_(vmatch_hot_t *h, vmatch_bits_t bits, void *msg, void **out)
{
    vmatch_hot_side_t *s = h->side[0];
    vmatch_short_entry_t *v = vmatch_short_vec(s);
    vmatch_line_t *l;
    uint32_t mixed;
    int have = 1, i, rc = VMATCH_MATCHED;
    unsigned n, w, cw, cl;
    if (s->slow != VMATCH_SLOW_WILD)
        return -1;
    mixed = vmatch_line_mix(bits);
    l = &s->table[vmatch_line_bucket(mixed, s->nb)];
    n = (unsigned)l->fill;
    w = n && l->bits[0] == bits ? 0 : n > 1 && l->bits[1] == bits ? 1 : 2;
    if (w == 2 && l->fill >= VMATCH_LINE_OVER1)
        return -1;
    i = vmatch_wild_find(s, bits, &cw);
    cl = w < 2 ? w + 1 : n;
    if (w < 2 && (i < 0 || l->seq[w] < v[i].seq)) {
        vmatch_line_take(l, bits, out, &cl);
    } else if (i >= 0) {
        *out = v[i].payload;
        vmatch_wild_drop(s, (unsigned)i);
        s->slow = s->nwild ? VMATCH_SLOW_WILD : 0;
    } else {
        rc = VMATCH_ENOTFOUND;
    }
    if (rc == VMATCH_MATCHED) {
        s->len--;
        s->count--;
        h->seq += msg != NULL; /* as the library: every arrival takes a number */
    } else if (msg) {
        if (!vmatch_hot_queue_(h, h->side[1], bits, ~(vmatch_bits_t)0, msg, &mixed, &have))
            return -1;
        rc = VMATCH_QUEUED;
    }
    h->searches++;
    h->inspected += cl + cw;
    return rc;
}

/* The library's calls where the inline part leaves the call to it, out of line and cold:
 * the compiler then moves what only they need (the arguments the inline part does not
 * read, a class say) off the caller's inline path (docs/inline.md). */
#define VMATCH_COLD_ static __attribute__((noinline, cold, unused))

VMATCH_COLD_ int vmatch_post_cold_(vmatch_engine_t *e, vmatch_bits_t bits, vmatch_bits_t care,
                                   uint32_t cls, void *req, void **msg_out)
{
    return vmatch_post(e, bits, care, cls, req, msg_out);
}

VMATCH_COLD_ int vmatch_arrive_cold_(vmatch_engine_t *e, vmatch_bits_t bits, uint32_t cls,
                                     void *msg, void **req_out)
{
    return vmatch_arrive(e, bits, cls, msg, req_out);
}

VMATCH_COLD_ int vmatch_match_posted_cold_(vmatch_engine_t *e, vmatch_bits_t bits, uint32_t cls,
                                           void **req_out)
{
    return vmatch_match_posted(e, bits, cls, req_out);
}

/* vmatch_hot_wild_, else the library's call. */
VMATCH_COLD_ int vmatch_arrive_wild_cold_(vmatch_engine_t *e, vmatch_hot_t *h,
                                          vmatch_bits_t bits, uint32_t cls, void *msg,
                                          void **req_out)
{
    int rc = vmatch_hot_wild_(h, bits, msg, req_out);
    return rc != -1 ? rc : vmatch_arrive(e, bits, cls, msg, req_out);
}

VMATCH_COLD_ int vmatch_match_posted_wild_cold_(vmatch_engine_t *e, vmatch_hot_t *h,
                                                vmatch_bits_t bits, uint32_t cls,
                                                void **req_out)
{
    int rc = vmatch_hot_wild_(h, bits, NULL, req_out);
    return rc != -1 ? rc : vmatch_match_posted(e, bits, cls, req_out);
}

VMATCH_COLD_ int vmatch_enqueue_unexpected_cold_(vmatch_engine_t *e, vmatch_bits_t bits,
                                                 uint32_t cls, void *msg)
{
    return vmatch_enqueue_unexpected(e, bits, cls, msg);
}

VMATCH_COLD_ int vmatch_probe_cold_(vmatch_engine_t *e, vmatch_bits_t bits, vmatch_bits_t care,
                                    uint32_t cls, int remove, void **msg_out)
{
    return vmatch_probe(e, bits, care, cls, remove, msg_out);
}

VMATCH_COLD_ int vmatch_enqueue_posted_cold_(vmatch_engine_t *e, vmatch_bits_t bits,
                                             vmatch_bits_t care, uint32_t cls, void *req)
{
    return vmatch_enqueue_posted(e, bits, care, cls, req);
}

/* vmatch_post. */
static inline int vmatch_inline_post(vmatch_engine_t *e, vmatch_bits_t bits, vmatch_bits_t care,
                                     uint32_t cls, void *req, void **msg_out)
{
    vmatch_hot_t *h;
    if (e && req && msg_out && (h = vmatch_hot_(e))) {
        int rc = vmatch_hot_exchange_(h, 0, bits, care, req, msg_out);
        if (rc >= 0)
            return rc;
    }
    return vmatch_post_cold_(e, bits, care, cls, req, msg_out);
}

/* vmatch_arrive. */
static inline int vmatch_inline_arrive(vmatch_engine_t *e, vmatch_bits_t bits, uint32_t cls,
                                       void *msg, void **req_out)
{
    vmatch_hot_t *h;
    if (e && msg && req_out && (h = vmatch_hot_(e))) {
        int rc = vmatch_hot_exchange_(h, 1, bits, ~(vmatch_bits_t)0, msg, req_out);
        if (rc >= 0)
            return rc;
        return vmatch_arrive_wild_cold_(e, h, bits, cls, msg, req_out);
    }
    return vmatch_arrive_cold_(e, bits, cls, msg, req_out);
}

/* vmatch_match_posted: an arrival's exact take from the posted receives. */
static inline int vmatch_inline_match_posted(vmatch_engine_t *e, vmatch_bits_t bits,
                                             uint32_t cls, void **req_out)
{
    vmatch_hot_t *h;
    if (e && req_out && (h = vmatch_hot_(e))) {
        int rc = vmatch_hot_search_(h, 0, bits, ~(vmatch_bits_t)0, req_out);
        if (rc != -1)
            return rc;
        return vmatch_match_posted_wild_cold_(e, h, bits, cls, req_out);
    }
    return vmatch_match_posted_cold_(e, bits, cls, req_out);
}

/* vmatch_enqueue_unexpected. */
static inline int vmatch_inline_enqueue_unexpected(vmatch_engine_t *e, vmatch_bits_t bits,
                                                   uint32_t cls, void *msg)
{
    vmatch_hot_t *h;
    uint32_t mixed = 0; /* set where a line is read (have) */
    int have = 0;
    if (e && msg && (h = vmatch_hot_(e)) &&
        vmatch_hot_queue_(h, h->side[1], bits, ~(vmatch_bits_t)0, msg, &mixed, &have))
        return VMATCH_QUEUED;
    return vmatch_enqueue_unexpected_cold_(e, bits, cls, msg);
}

/* vmatch_mpi_msg. */
static inline vmatch_bits_t vmatch_inline_mpi_msg(const vmatch_engine_t *e, uint32_t ctx,
                                                  int32_t src, int32_t tag)
{
    vmatch_hot_t *h;
    vmatch_bits_t bits;
    if (!e || !(h = vmatch_hot_(e)))
        return vmatch_mpi_msg(e, ctx, src, tag);
    vmatch_hot_pack_(&h->pack, ctx, src, tag, &bits, NULL);
    return bits;
}

/* vmatch_mpi_recv. */
static inline void vmatch_inline_mpi_recv(const vmatch_engine_t *e, uint32_t ctx, int32_t src,
                                          int32_t tag, vmatch_bits_t *bits, vmatch_bits_t *care)
{
    vmatch_hot_t *h;
    if (e && bits && care && (h = vmatch_hot_(e)))
        vmatch_hot_pack_(&h->pack, ctx, src, tag, bits, care);
    else
        vmatch_mpi_recv(e, ctx, src, tag, bits, care);
}

/* vmatch_probe: any probe of an empty or short unexpected side (MPI_Iprobe with wildcards,
 * while few messages wait), and an exact probe that removes (MPI_Improbe, or a receive's
 * search of the unexpected messages before it queues) when its line holds the answer. */
static inline int vmatch_inline_probe(vmatch_engine_t *e, vmatch_bits_t bits,
                                      vmatch_bits_t care, uint32_t cls, int remove,
                                      void **msg_out)
{
    vmatch_hot_t *h;
    if (e && msg_out && (h = vmatch_hot_(e))) {
        vmatch_hot_side_t *u = h->side[1];
        unsigned compared;
        int i;
        if (!u->len) { /* not searched, whatever it matches: counted as the library */
            h->searches++;
            return VMATCH_ENOTFOUND;
        }
        if (u->shortcap) { /* a short side: any probe */
            i = vmatch_short_find(u, bits, care, &compared);
            h->searches++;
            h->inspected += compared;
            if (i < 0)
                return VMATCH_ENOTFOUND;
            *msg_out = vmatch_short_vec(u)[i].payload;
            if (remove) {
                vmatch_short_drop(u, (unsigned)i);
                u->len--;
            }
            return VMATCH_MATCHED;
        }
        if (remove && (i = vmatch_hot_search_(h, 1, bits, care, msg_out)) != -1)
            return i;
    }
    return vmatch_probe_cold_(e, bits, care, cls, remove, msg_out);
}

/* vmatch_enqueue_posted. */
static inline int vmatch_inline_enqueue_posted(vmatch_engine_t *e, vmatch_bits_t bits,
                                               vmatch_bits_t care, uint32_t cls, void *req)
{
    vmatch_hot_t *h;
    uint32_t mixed = 0; /* set where a line is read (have) */
    int have = 0;
    if (e && req && (h = vmatch_hot_(e)) &&
        vmatch_hot_queue_(h, h->side[0], bits, care, req, &mixed, &have))
        return VMATCH_QUEUED;
    return vmatch_enqueue_posted_cold_(e, bits, care, cls, req);
}

#undef VMATCH_INLINE_
#undef VMATCH_COLD_

#ifdef __cplusplus
}
#endif

#endif
