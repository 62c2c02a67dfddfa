/* vmatch_hot.h -- the library's structures that vmatch_inline.h publishes (the engine's first
 * bytes, a side's published part, policy=hash's bucket lines and short vector) and the
 * functions on them that the library and the inline calls share: one definition, two
 * callers (docs/inline.md, "The contract").  Published at vmatch_inline.h's version
 * VMATCH_INLINE_ABI; include vmatch_inline.h, which includes this. */
#ifndef VMATCH_HOT_H
#define VMATCH_HOT_H

#ifndef VMATCH_INLINE_H
#error "include vmatch_inline.h, not vmatch_hot.h"
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

/* The first (so the oldest) of line s's ways that holds exactly these bits, or 2.  The ways
 * in use are (unsigned)s->fill. */
VMATCH_INLINE_ unsigned vmatch_line_way(const vmatch_line_t *s, vmatch_bits_t bits)
{
    unsigned n = (unsigned)s->fill;
    return n && s->bits[0] == bits ? 0 : n > 1 && s->bits[1] == bits ? 1 : 2;
}

/* Take way w (in use) of line s into *payload, the line closed up. */
VMATCH_INLINE_ void vmatch_line_take_way(vmatch_line_t *s, unsigned w, void **payload)
{
    uint64_t f = s->fill;
    unsigned n = (unsigned)f;
    *payload = s->payload[w];
    if (n > w + 1) { /* way 0 taken with way 1 in use: way 1 moves up */
        s->bits[0] = s->bits[1];
        s->payload[0] = s->payload[1];
        s->seq[0] = s->seq[1];
    }
    s->payload[n - 1] = NULL;
    s->fill = f - 1;
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
    unsigned w = vmatch_line_way(s, bits);
    if (w == 2) {
        *compared = (unsigned)s->fill;
        return 0;
    }
    *compared = w + 1;
    vmatch_line_take_way(s, w, payload);
    return 1;
}

/* The first of entries from .. end - 1 of side s's vector that matches key where keycare and
 * the entry's care are set, as an index into the vector, or -1; *compared: the entries
 * compared (up to the match, or all).  The short side's search and the wildcard receives'.
 * The range is not empty (from < end): the callers test that, where an inline call has
 * tested it already and the compiler drops the repeat.  The indices are ints counting up
 * from from >= 0, so that a caller given one knows without a test that it is not -1. */
VMATCH_INLINE_ int vmatch_vec_find(const vmatch_hot_side_t *s, int from, int end,
                                   vmatch_bits_t key, vmatch_bits_t keycare, unsigned *compared)
{
    const vmatch_short_entry_t *v = vmatch_short_vec(s);
    int i = from;
    do
        if (!((v[i].bits ^ key) & v[i].care & keycare)) {
            *compared = (unsigned)(i - from + 1);
            return i;
        }
    while (++i < end);
    *compared = (unsigned)(end - from);
    return -1;
}

/* Move entries i + 1 .. end - 1 of side s's vector up one place, over entry i. */
VMATCH_INLINE_ void vmatch_vec_close(vmatch_hot_side_t *s, unsigned i, unsigned end)
{
    vmatch_short_entry_t *v = vmatch_short_vec(s);
    for (; i + 1 < end; i++)
        v[i] = v[i + 1];
}

/* The first entry of side s's short vector that matches key where keycare and the entry's
 * care are set (oldest first), as vmatch_vec_find. */
VMATCH_INLINE_ int vmatch_short_find(const vmatch_hot_side_t *s, vmatch_bits_t key,
                                     vmatch_bits_t keycare, unsigned *compared)
{
    *compared = 0;
    if (!s->len)
        return -1;
    return vmatch_vec_find(s, s->head, s->head + (int)s->len, key, keycare, compared);
}

/* Drop entry i of side s's short vector, the others keeping their order (the oldest goes by
 * moving the head, another by moving those after it up); the caller then counts len. */
VMATCH_INLINE_ void vmatch_short_drop(vmatch_hot_side_t *s, unsigned i)
{
    if (i == s->head) /* the head moves on, or back to the front when it was the last */
        s->head = (uint8_t)((i + 1) & -(unsigned)(s->len > 1));
    else
        vmatch_vec_close(s, i, s->head + (unsigned)s->len);
}

/* Close up short side s's vector, whose entries reach its last place without filling it
 * (the oldest went first: the head moved on): they move to the front, in order, and the
 * places after them are free.  The library's append does the same.  Out of line: a side
 * that keeps a few entries while its oldest go first (a pipeline) comes here once every few
 * appends, and the inline calls stay small. */
static __attribute__((noinline, cold, unused)) void vmatch_short_close_(vmatch_hot_side_t *s)
{
    vmatch_short_entry_t *v = vmatch_short_vec(s);
    unsigned n = (unsigned)s->len, h = s->head, i;
    for (i = 0; i < n; i++)
        v[i] = v[h + i];
    s->head = 0;
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
    *compared = 0;
    if (!s->nwild)
        return -1;
    return vmatch_vec_find(s, 0, s->nwild, key, ~(vmatch_bits_t)0, compared);
}

/* Drop wildcard receive i of table side s's vector, the others keeping their order (the
 * caller then counts len and count, and sets slow). */
VMATCH_INLINE_ void vmatch_wild_drop(vmatch_hot_side_t *s, unsigned i)
{
    vmatch_vec_close(s, i, s->nwild);
    s->nwild--;
}

#endif
