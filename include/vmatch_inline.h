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
 * The structures of vmatch_hot.h, which this header includes, are the library's own (the
 * engine's first bytes and policy=hash's tables), published at version VMATCH_INLINE_ABI.  An
 * engine whose library has another version never runs the inline part: its version
 * (vmatch_hot_t.abi, at offset 28 in every version) is compared with this header's on every
 * call, and vmatch_inline_create refuses the engine with VMATCH_EINVAL and a message instead.
 * Callers read nothing here themselves: only these functions do.  docs/inline.md has the design
 * and the figures.
 */
#ifndef VMATCH_INLINE_H
#define VMATCH_INLINE_H

#include "vmatch.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The helpers below and vmatch_hot.h's are folded into each caller, with the side known
 * there. */
#define VMATCH_INLINE_ static inline __attribute__((always_inline))

/* The version of vmatch_hot.h's layouts and hash; the library says which it has
 * (vmatch_inline_abi). */
#ifdef __SIZEOF_INT128__
#define VMATCH_INLINE_ABI 5u
#else /* the same layouts, another bucket hash (vmatch_line_mix): a version of its own */
#define VMATCH_INLINE_ABI 0x10005u
#endif

#include "vmatch_hot.h"

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
    if (q->len < q->shortcap) { /* a short side with room */
        if (h->seq >= q->check)
            return 0;
        if (q->head + q->len >= q->shortcap) /* the oldest went first: close up */
            vmatch_short_close_(q);
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
    w = vmatch_line_way(l, bits);
    if (w == 2 && l->fill >= VMATCH_LINE_OVER1)
        return -1;
    i = vmatch_wild_find(s, bits, &cw);
    cl = w < 2 ? w + 1 : n;
    if (w < 2 && (i < 0 || l->seq[w] < v[i].seq)) {
        vmatch_line_take_way(l, w, out);
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
