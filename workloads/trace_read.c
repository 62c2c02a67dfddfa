/* trace_read.c -- the text reader of traces (trace.h): vm_trace_parse and vm_trace_load,
 * with the bounds that make a file that is no trace fail fast. */
#include "trace.h"

#include "vmatch.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A token of a line: a pointer into the text and a length. */
typedef struct tok {
    const char *p;
    size_t n;
} tok_t;

#define MAX_TOKS 8 /* the longest line has 6 fields; more are reported as extra */

/* Bounds of the reader, so that a file that is not a trace (/dev/zero, a binary, a FIFO that
 * never ends) is refused after a bounded read.  The longest valid line, an improbe with a
 * class of three 20-digit numbers, is under 120 bytes: 4 KiB leaves room for any comment.
 * The loader holds the whole text, then 20 bytes per operation: 2 GiB of text is about 100
 * million operations (lines of 16 to 30 bytes), minutes of replay, and 4 GiB of memory at
 * the peak. */
#define TRACE_MAX_LINE  4096
#define TRACE_MAX_BYTES ((size_t)1 << 31)

typedef struct reader {
    vm_trace_t *t;
    const char *name;
    size_t line;
    char *err;
    size_t errlen;
    int have_header;
} reader_t;

/** Report a malformed line: "NAME:LINE: message"; returns VMATCH_EINVAL. */
static int bad(reader_t *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int bad(reader_t *r, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (r->err && r->errlen)
        snprintf(r->err, r->errlen, "%s:%zu: %s", r->name, r->line, msg);
    return VMATCH_EINVAL;
}

/** A token for messages: quoted and cut to 40 characters, or "the end of the line". */
static const char *show(const tok_t *k, char *buf, size_t len)
{
    if (!k || !k->p)
        return "the end of the line";
    int n = k->n > 40 ? 40 : (int)k->n;
    snprintf(buf, len, "'%.*s%s'", n, k->p, k->n > 40 ? "..." : "");
    return buf;
}

static int tok_is(const tok_t *k, const char *s)
{
    return k->p && strlen(s) == k->n && memcmp(k->p, s, k->n) == 0;
}

/** Parse a decimal number from 0 to max; returns 0 on success. */
static int parse_num(const tok_t *k, uint64_t max, uint64_t *out)
{
    uint64_t v = 0;
    if (!k->p || k->n == 0)
        return -1;
    for (size_t i = 0; i < k->n; i++) {
        unsigned d = (unsigned)(k->p[i] - '0');
        if (d > 9 || v > (max - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

/** A numbered field: `what` names it in messages.  Returns 0 or VMATCH_EINVAL. */
static int field_num(reader_t *r, const tok_t *k, const char *what, uint64_t min, uint64_t max,
                     uint64_t *out)
{
    char b[64];
    if (parse_num(k, max, out) < 0 || *out < min)
        return bad(r, "expected %s (a number from %" PRIu64 " to %" PRIu64 "), got %s", what,
                   min, max, show(k, b, sizeof b));
    return 0;
}

/** A source or tag: a number, or '*' when wildcards are allowed. */
static int field_wild(reader_t *r, const tok_t *k, const char *what, int wild_ok, int32_t *out)
{
    char b[64];
    uint64_t v;
    if (tok_is(k, "*")) {
        if (!wild_ok)
            return bad(r, "a message has a definite %s: '*' is only for receives and probes",
                       what);
        *out = VM_TRACE_ANY;
        return 0;
    }
    if (parse_num(k, VM_TRACE_MAX_FIELD, &v) < 0)
        return bad(r, "expected %s (a number from 0 to %d%s), got %s", what, VM_TRACE_MAX_FIELD,
                   wild_ok ? ", or '*' for any" : "", show(k, b, sizeof b));
    *out = (int32_t)v;
    return 0;
}

/** A class: "p2p" or OP/BYTES/SIZE. */
static int field_class(reader_t *r, const tok_t *k, uint16_t *out)
{
    char b[64];
    if (tok_is(k, "p2p")) {
        *out = 0;
        return 0;
    }
    const char *s1 = k->p ? memchr(k->p, '/', k->n) : NULL;
    const char *s2 = s1 ? memchr(s1 + 1, '/', (size_t)(k->p + k->n - s1 - 1)) : NULL;
    if (!s2)
        return bad(r,
                   "expected a class ('p2p', or OP/BYTES/SIZE such as allreduce/8/64), got %s",
                   show(k, b, sizeof b));
    tok_t op = {k->p, (size_t)(s1 - k->p)}, bytes = {s1 + 1, (size_t)(s2 - s1 - 1)},
          size = {s2 + 1, (size_t)(k->p + k->n - s2 - 1)};
    uint64_t vop = 0, vbytes, vsize;
    for (uint32_t i = 1; vm_trace_op_name(i) && !vop; i++)
        if (tok_is(&op, vm_trace_op_name(i)))
            vop = i;
    if (!vop && (parse_num(&op, UINT32_MAX, &vop) < 0 || vop == 0))
        return bad(r,
                   "unknown collective operation %s in the class (a number >= 1 or one of "
                   "barrier bcast gather scatter allgather reduce allreduce reduce_scatter "
                   "alltoall scan)",
                   show(&op, b, sizeof b));
    if (parse_num(&bytes, UINT64_MAX, &vbytes) < 0)
        return bad(r, "expected the message bytes of the class (a number), got %s",
                   show(&bytes, b, sizeof b));
    if (parse_num(&size, UINT32_MAX, &vsize) < 0 || vsize == 0)
        return bad(r, "expected the communicator size of the class (a number from 1), got %s",
                   show(&size, b, sizeof b));
    uint16_t c = vm_trace_class(r->t, (uint32_t)vop, vbytes, (uint32_t)vsize);
    if (r->t->failed)
        return r->t->nclasses > VM_TRACE_MAX_CLASSES - 1
                   ? bad(r, "more than %d classes in one trace", VM_TRACE_MAX_CLASSES - 1)
                   : VMATCH_ENOMEM;
    *out = c;
    return 0;
}

/** No fields after the last one. */
static int no_more(reader_t *r, const tok_t *k, size_t ntok, size_t used)
{
    char b[64];
    if (ntok > used)
        return bad(r, "unexpected extra field %s at the end of the line",
                   show(&k[used], b, sizeof b));
    return 0;
}

/** A line of the header (nprocs, layout, rank) or the trailer (end N [cut M]): 1 when k[0]
 * names none, else 0 or VMATCH_EINVAL. */
static int parse_meta(reader_t *r, const tok_t *k, size_t ntok)
{
    static const tok_t none = {NULL, 0};
    vm_trace_t *t = r->t;
    uint64_t v, w[3];
    int rc;
    if (tok_is(&k[0], "end")) {
        if ((rc = field_num(r, ntok > 1 ? &k[1] : &none, "the count of operations", 0,
                            UINT64_MAX, &v)))
            return rc;
        if (v != t->n)
            return bad(r,
                       "the trace says it holds %" PRIu64 " operations, but %zu were read: "
                       "it was cut or edited",
                       v, t->n);
        size_t used = 2;
        if (ntok > 2) {
            if (!tok_is(&k[2], "cut"))
                return bad(r, "expected 'cut M' or the end of the line after 'end N'");
            if ((rc = field_num(r, ntok > 3 ? &k[3] : &none, "the count of operations left out",
                                1, UINT64_MAX, &t->cut)))
                return rc;
            used = 4;
        }
        t->ended = 1;
        return no_more(r, k, ntok, used);
    }
    int is_layout = tok_is(&k[0], "layout"), is_rank = tok_is(&k[0], "rank");
    if (!is_layout && !is_rank)
        return 1;
    if (t->n)
        return bad(r, "%s must come before the first operation", is_layout ? "layout" : "rank");
    if (is_rank) {
        if (t->rank >= 0)
            return bad(r, "rank is given twice");
        if ((rc =
                 field_num(r, ntok > 1 ? &k[1] : &none, "the rank", 0, VM_TRACE_MAX_FIELD, &v)))
            return rc;
        t->rank = (int64_t)v;
        return no_more(r, k, ntok, 2);
    }
    if (t->has_layout)
        return bad(r, "layout is given twice");
    static const char *const what[3] = {"the context bits", "the source bits", "the tag bits"};
    for (int i = 0; i < 3; i++)
        if ((rc = field_num(r, (size_t)i + 1 < ntok ? &k[i + 1] : &none, what[i], i ? 1 : 0, 63,
                            &w[i])))
            return rc;
    if (w[0] + w[1] + w[2] > 64)
        return bad(r, "layout %" PRIu64 " %" PRIu64 " %" PRIu64 " is wider than 64 bits", w[0],
                   w[1], w[2]);
    t->has_layout = 1;
    t->ctx_bits = (unsigned)w[0];
    t->src_bits = (unsigned)w[1];
    t->tag_bits = (unsigned)w[2];
    return no_more(r, k, ntok, 4);
}

/** Whether value v fits a field of bits bits (always, when the trace declares no layout). */
static int fits(const vm_trace_t *t, uint64_t v, unsigned bits)
{
    return !t->has_layout || bits >= 64 || v >> bits == 0;
}

/** Parse one operation line (toks[0] is the keyword). */
static int parse_op(reader_t *r, const tok_t *k, size_t ntok)
{
    static const tok_t none = {NULL, 0};
#define TOK(i) ((i) < ntok ? &k[i] : &none)
    vm_trace_t *t = r->t;
    char b[64];
    int kind = -1, rc;
    if (t->ended)
        return bad(r, "a line after the trailer 'end N': the trace ended there");
    if ((rc = parse_meta(r, k, ntok)) <= 0)
        return rc;
    for (int i = 0; i < VM_TRACE_NKINDS; i++)
        if (tok_is(&k[0], vm_trace_kind_name((vm_trace_kind_t)i)))
            kind = i;
    if (tok_is(&k[0], "nprocs")) {
        uint64_t v;
        if (t->n)
            return bad(r, "nprocs must come before the first operation");
        if (t->nprocs)
            return bad(r, "nprocs is given twice");
        if ((rc = field_num(r, TOK(1), "the number of processes", 1, VM_TRACE_MAX_FIELD, &v)))
            return rc;
        t->nprocs = (uint32_t)v;
        return no_more(r, k, ntok, 2);
    }
    if (tok_is(&k[0], "vmatch-trace"))
        return bad(r, "the header 'vmatch-trace 1' may appear only once, on the first line");
    if (kind < 0)
        return bad(r,
                   "unknown operation %s (expected post, arrive, probe, improbe, cancel, "
                   "remove, nprocs, layout, rank or end)",
                   show(&k[0], b, sizeof b));

    if (kind == VM_TRACE_CANCEL || kind == VM_TRACE_REMOVE) {
        uint64_t id;
        int is_cancel = kind == VM_TRACE_CANCEL;
        uint32_t have = is_cancel ? t->nreq : t->nmsg;
        if ((rc = field_num(r, TOK(1), is_cancel ? "a request id" : "a message id", 0,
                            VM_TRACE_MAX_FIELD, &id)))
            return rc;
        if (id >= have)
            return bad(r, "%s names %s %" PRIu64 ", but only %u %s so far",
                       vm_trace_kind_name((vm_trace_kind_t)kind),
                       is_cancel ? "request" : "message", id, have,
                       is_cancel ? "were posted" : "arrived");
        if ((rc = no_more(r, k, ntok, 2)))
            return rc;
        if (is_cancel)
            vm_trace_cancel(t, (uint32_t)id);
        else
            vm_trace_remove(t, (uint32_t)id);
        return t->failed ? VMATCH_ENOMEM : 0;
    }

    /* post / arrive carry an id first; all four then ctx src tag class. */
    size_t f = 1;
    uint64_t id = 0, ctx;
    if (kind == VM_TRACE_POST || kind == VM_TRACE_ARRIVE) {
        int is_post = kind == VM_TRACE_POST;
        uint32_t next = is_post ? t->nreq : t->nmsg;
        if ((rc = field_num(r, TOK(1), is_post ? "a request id" : "a message id", 0,
                            VM_TRACE_MAX_FIELD - 1, &id)))
            return rc;
        if (id != next)
            return bad(r,
                       "%s id %" PRIu64 " out of order: %ss are numbered from 0 in the order "
                       "they appear, so this one is %u",
                       is_post ? "request" : "message", id, is_post ? "request" : "message",
                       next);
        f = 2;
    }
    int32_t src = 0, tag = 0;
    uint16_t cls = 0;
    int wild_ok = kind != VM_TRACE_ARRIVE;
    if ((rc = field_num(r, TOK(f), "a context id", 0, UINT32_MAX, &ctx)) ||
        (rc = field_wild(r, TOK(f + 1), "source", wild_ok, &src)) ||
        (rc = field_wild(r, TOK(f + 2), "tag", wild_ok, &tag)) ||
        (rc = field_class(r, TOK(f + 3), &cls)) || (rc = no_more(r, k, ntok, f + 4)))
        return rc;
    if (t->nprocs && src >= 0 && (uint32_t)src >= t->nprocs)
        return bad(r, "source %d is not below nprocs %u", src, t->nprocs);
    if (!fits(t, ctx, t->ctx_bits) || (src >= 0 && !fits(t, (uint64_t)src, t->src_bits)) ||
        (tag >= 0 && !fits(t, (uint64_t)tag, t->tag_bits)))
        return bad(r,
                   "context %" PRIu64 ", source %d or tag %d does not fit the layout %u %u %u",
                   ctx, src, tag, t->ctx_bits, t->src_bits, t->tag_bits);
    switch (kind) {
    case VM_TRACE_POST:
        vm_trace_post(t, (uint32_t)ctx, src, tag, cls);
        break;
    case VM_TRACE_ARRIVE:
        vm_trace_arrive(t, (uint32_t)ctx, src, tag, cls);
        break;
    default:
        vm_trace_probe(t, (uint32_t)ctx, src, tag, cls, kind == VM_TRACE_IMPROBE);
        break;
    }
    return t->failed ? VMATCH_ENOMEM : 0;
#undef TOK
}

/** Split a line into tokens at blanks, up to a '#'.  Returns the token count (at most
 * MAX_TOKS; further tokens are counted as one extra). */
static size_t split(const char *p, const char *end, tok_t *k)
{
    size_t n = 0;
    while (p < end) {
        while (p < end && (*p == ' ' || *p == '\t' || *p == '\r'))
            p++;
        if (p == end || *p == '#')
            break;
        const char *s = p;
        while (p < end && *p != ' ' && *p != '\t' && *p != '\r' && *p != '#')
            p++;
        if (n < MAX_TOKS)
            k[n] = (tok_t){s, (size_t)(p - s)};
        n++;
    }
    return n < MAX_TOKS ? n : MAX_TOKS;
}

int vm_trace_parse(vm_trace_t *t, const char *text, size_t len, const char *name, char *err,
                   size_t errlen)
{
    reader_t r = {t, name ? name : "trace", 0, err, errlen, 0};
    const char *p = text, *end = text + len;
    char b[64];
    if (err && errlen)
        err[0] = 0;
    if (t->failed)
        return VMATCH_ENOMEM;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *eol = nl ? nl : end;
        tok_t k[MAX_TOKS];
        r.line++;
        if (memchr(p, '\0', (size_t)(eol - p)))
            return bad(&r, "a NUL byte: this is not a text trace");
        if (eol - p > TRACE_MAX_LINE)
            return bad(&r, "line longer than %d bytes: this is not a text trace",
                       TRACE_MAX_LINE);
        size_t n = split(p, eol, k);
        p = nl ? nl + 1 : end;
        if (n == 0)
            continue;
        if (!r.have_header) {
            if (!tok_is(&k[0], "vmatch-trace"))
                return bad(&r, "expected the header 'vmatch-trace 1', got %s",
                           show(&k[0], b, sizeof b));
            if (n < 2 || !tok_is(&k[1], "1"))
                return bad(&r, "unsupported trace version %s (this reader knows version 1)",
                           show(n < 2 ? NULL : &k[1], b, sizeof b));
            if (n > 2)
                return bad(&r, "unexpected extra field %s after the header",
                           show(&k[2], b, sizeof b));
            r.have_header = 1;
            continue;
        }
        int rc = parse_op(&r, k, n);
        if (rc)
            return rc;
    }
    if (!r.have_header) {
        r.line = r.line ? r.line : 1;
        return bad(&r, "expected the header 'vmatch-trace 1', got the end of the file (an "
                       "empty trace is the header alone)");
    }
    return 0;
}

/** Check the bytes buf[from, to) just read, so that a NUL byte or an overlong line stops
 * the read at once: the parser refuses both, but only after the whole file.  r->line
 * counts the lines ended so far and *start is where the current one began.  0 or
 * VMATCH_EINVAL. */
static int scan_read(reader_t *r, const char *buf, size_t from, size_t to, size_t *start)
{
    const char *p = buf + from, *end = buf + to;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *eol = nl ? nl : end;
        r->line++; /* names the current line while it is checked */
        if (memchr(p, '\0', (size_t)(eol - p)))
            return bad(r, "a NUL byte: this is not a text trace");
        if ((size_t)(eol - buf) - *start > TRACE_MAX_LINE)
            return bad(r, "line longer than %d bytes: this is not a text trace",
                       TRACE_MAX_LINE);
        if (!nl) {
            r->line--;
            break;
        }
        *start = (size_t)(nl + 1 - buf);
        p = nl + 1;
    }
    return 0;
}

/** Read all of f into *out (*len bytes), within the reader's bounds.  0, VMATCH_EINVAL,
 * VMATCH_ENOMEM or VMATCH_EIO, with the message in r->err. */
static int read_all(reader_t *r, FILE *f, char **out, size_t *len)
{
    size_t cap = 1 << 16, n = 0, got, start = 0;
    char *buf = malloc(cap);
    int rc = 0;
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        if ((rc = scan_read(r, buf, n, n + got, &start)))
            break;
        n += got;
        if (n > TRACE_MAX_BYTES) {
            r->line++;
            rc = bad(r, "the trace is longer than %zu bytes", TRACE_MAX_BYTES);
            break;
        }
        if (n == cap) { /* at most one byte past the bound, to see that there is more */
            size_t grown = cap * 2 > TRACE_MAX_BYTES ? TRACE_MAX_BYTES + 1 : cap * 2;
            char *nb = realloc(buf, grown);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap = grown;
        }
    }
    if (!buf) {
        if (r->err && r->errlen)
            snprintf(r->err, r->errlen, "%s: out of memory reading the trace", r->name);
        return VMATCH_ENOMEM;
    }
    if (!rc && ferror(f)) {
        if (r->err && r->errlen)
            snprintf(r->err, r->errlen, "%s: read error: %s", r->name, strerror(errno));
        rc = VMATCH_EIO;
    }
    if (rc) {
        free(buf);
        return rc;
    }
    *out = buf;
    *len = n;
    return 0;
}

int vm_trace_load(vm_trace_t *t, const char *path, char *err, size_t errlen)
{
    int is_stdin = strcmp(path, "-") == 0;
    FILE *f = is_stdin ? stdin : fopen(path, "rb");
    if (!f) {
        if (err && errlen)
            snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return VMATCH_EIO;
    }
    const char *name = is_stdin ? "<stdin>" : path;
    reader_t r = {t, name, 0, err, errlen, 0};
    char *buf = NULL;
    size_t len = 0;
    int rc = read_all(&r, f, &buf, &len);
    if (!is_stdin)
        fclose(f);
    if (rc == 0)
        rc = vm_trace_parse(t, buf, len, name, err, errlen);
    free(buf);
    return rc;
}
