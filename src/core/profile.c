/* profile.c -- per-(context, source) insertion counts: recorded by the engine, saved with
 * vmatch_profile_save and read back for the static designs.
 *
 * File format (text, one record per line; blank lines and lines starting with '#' are
 * ignored; fields separated by blanks; numbers are unsigned decimals):
 *
 *     vmatch-profile 2            (version 1 has no rank, program or end lines)
 *     layout CTX_BITS SRC_BITS TAG_BITS
 *     nprocs N                    (0 when the spec gave none)
 *     rank R                      (optional: the rank that recorded it)
 *     program NAME                (optional: the program that recorded it)
 *     CTX SRC PRQ UMQ             (zero or more, one per (context, source), no repeats)
 *     end N                       (N entry lines; a file without it was cut short)
 */
#define _POSIX_C_SOURCE 200809L
#include "profile.h"
#include "engine.h"
#include "error.h"
#include "record.h"
#include "spec.h"
#include "threads.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

enum { PROF_MIN_CAP = 64 };

/* Bounds of the reader, so that a file that is not a profile (/dev/zero, a binary, a FIFO
 * that never ends) is refused after a bounded read instead of exhausting memory or time.
 * A valid line is at most four 20-digit numbers and blanks, under 90 bytes: 4 KiB leaves
 * room for any indentation or comment a person adds.  A profile has one entry per
 * (context, source) that carried traffic: a million-rank job with a dozen communicators
 * stays under 2^24 entries (384 MiB once read), and 1 GiB of text holds 2^24 lines of 64
 * bytes; past either bound the file is refused. */
#define PROF_MAX_LINE    4096
#define PROF_MAX_ENTRIES ((size_t)1 << 24)
#define PROF_MAX_BYTES   ((uint64_t)1 << 30)

static uint64_t hash64(uint64_t k)
{
    /* The finalizer of SplitMix64: cheap and mixes every input bit into the low bits. */
    k ^= k >> 30;
    k *= 0xbf58476d1ce4e5b9ull;
    k ^= k >> 27;
    k *= 0x94d049bb133111ebull;
    return k ^ (k >> 31);
}

static int slot_used(const vm_prof_slot_t *s)
{
    return s->count[0] || s->count[1];
}

static vm_prof_slot_t *prof_slot(vm_prof_slot_t *slots, uint64_t cap, uint64_t key)
{
    uint64_t i = hash64(key) & (cap - 1);
    while (slot_used(&slots[i]) && slots[i].key != key)
        i = (i + 1) & (cap - 1);
    return &slots[i];
}

int vm_prof_reserve(vm_prof_table_t *t, vm_mem_t *m, vm_prof_table_t *undo)
{
    if (2 * (t->used + 1) <= t->cap)
        return 0;
    uint64_t cap = t->cap ? 2 * t->cap : PROF_MIN_CAP;
    vm_prof_slot_t *slots = vm_mem_calloc(m, cap * sizeof *slots);
    if (!slots)
        return VMATCH_ENOMEM;
    for (uint64_t i = 0; i < t->cap; i++)
        if (slot_used(&t->slots[i]))
            *prof_slot(slots, cap, t->slots[i].key) = t->slots[i];
    *undo = *t;
    t->slots = slots;
    t->cap = cap;
    return 1;
}

void vm_prof_settle(vm_prof_table_t *t, vm_mem_t *m, vm_prof_table_t *undo, int grew, int kept)
{
    if (!grew)
        return;
    if (kept) {
        vm_mem_free(m, undo->slots, undo->cap * sizeof *undo->slots);
    } else {
        vm_mem_free(m, t->slots, t->cap * sizeof *t->slots);
        *t = *undo;
    }
}

void vm_prof_count(vm_prof_table_t *t, uint64_t key, int side)
{
    vm_prof_slot_t *s = prof_slot(t->slots, t->cap, key);
    if (!slot_used(s)) {
        s->key = key;
        t->used++;
    }
    s->count[side]++;
}

void vm_prof_free(vm_prof_table_t *t, vm_mem_t *m)
{
    vm_mem_free(m, t->slots, t->cap * sizeof *t->slots);
    *t = (vm_prof_table_t){0};
}

static int by_key(const void *a, const void *b)
{
    uint64_t x = ((const vm_prof_slot_t *)a)->key, y = ((const vm_prof_slot_t *)b)->key;
    return (x > y) - (x < y);
}

int vm_profile_write(const vmatch_engine_t *e, const char *path)
{
    if (!e->cfg.profile_record)
        return vm_fail(VMATCH_EINVAL,
                       "profile_save: recording is off (spec profile.record=on)");
    const vm_prof_table_t *t = &e->prof;
    vm_prof_slot_t *rows = malloc((t->used ? t->used : 1) * sizeof *rows);
    if (!rows)
        return vm_fail(VMATCH_ENOMEM, "profile_save: out of memory");
    size_t n = 0;
    for (uint64_t i = 0; i < t->cap; i++)
        if (slot_used(&t->slots[i]))
            rows[n++] = t->slots[i];
    qsort(rows, n, sizeof *rows, by_key);

    FILE *f = fopen(path, "w");
    if (!f) {
        free(rows);
        return vm_fail(VMATCH_EIO, "profile_save: cannot open '%s': %s", path, strerror(errno));
    }
    const vm_config_t *c = &e->cfg;
    char program[64];
    int64_t rank = vm_rank_of(c);
    vm_program_name(program, sizeof program);
    fprintf(f, "vmatch-profile 2\nlayout %u %u %u\nnprocs %u\n", c->ctx_bits, c->src_bits,
            c->tag_bits, c->nprocs);
    if (rank >= 0)
        fprintf(f, "rank %lld\n", (long long)rank);
    if (program[0])
        fprintf(f, "program %s\n", program);
    fputs("# ctx src prq umq\n", f);
    uint64_t src_mask = (c->src_bits >= 64) ? ~0ull : (1ull << c->src_bits) - 1;
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%llu %llu %llu %llu\n", (unsigned long long)(rows[i].key >> c->src_bits),
                (unsigned long long)(rows[i].key & src_mask),
                (unsigned long long)rows[i].count[VM_PRQ],
                (unsigned long long)rows[i].count[VM_UMQ]);
    fprintf(f, "end %zu\n", n);
    free(rows);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad)
        return vm_fail(VMATCH_EIO, "profile_save: cannot write '%s'", path);
    return VMATCH_OK;
}

/* ---- reading ---- */

/* Split line into at most max unsigned fields; returns the count, or -1 on a bad field. */
static int fields(char *line, unsigned long long *v, int max)
{
    int n = 0;
    char *save = NULL;
    for (char *tok = strtok_r(line, " \t\r\n", &save); tok;
         tok = strtok_r(NULL, " \t\r\n", &save)) {
        if (n == max || tok[0] < '0' || tok[0] > '9')
            return -1;
        char *end;
        errno = 0;
        v[n] = strtoull(tok, &end, 10);
        if (errno || *end)
            return -1;
        n++;
    }
    return n;
}

static int by_ctx_src(const void *a, const void *b)
{
    const vm_profile_entry_t *x = a, *y = b;
    if (x->ctx != y->ctx)
        return (x->ctx > y->ctx) - (x->ctx < y->ctx);
    return (x->src > y->src) - (x->src < y->src);
}

/* Check the header values; returns an error message or NULL. */
static const char *check_header(const vm_profile_t *p)
{
    if (p->ctx_bits > 62 || p->src_bits < 1 || p->src_bits > 63 || p->tag_bits < 1 ||
        p->tag_bits > 63 || p->ctx_bits + p->src_bits + p->tag_bits > 64)
        return "layout widths out of range or wider than 64 bits";
    return NULL;
}

/* A line reader with the bounds above: the whole file is never held, a line at most. */
typedef struct prof_reader {
    FILE *f;
    const char *path;
    uint64_t total;              /* bytes read so far */
    size_t lineno;               /* of the line in buf */
    int cut;                     /* the line in buf ends the file without a newline */
    char buf[PROF_MAX_LINE + 1]; /* without its newline, NUL-terminated */
} prof_reader_t;

/* Read the next line into r->buf.  Returns 1 for a line, 0 at the end of the file, or
 * VMATCH_EINVAL with vm_fail's message naming the file and line (a NUL byte, a line or a
 * file past its bound). */
static int next_line(prof_reader_t *r)
{
    size_t n = 0;
    int c;
    r->lineno++;
    while ((c = getc_unlocked(r->f)) != EOF) {
        if (++r->total > PROF_MAX_BYTES)
            return vm_fail(VMATCH_EINVAL, "profile %s:%zu: file longer than %llu bytes",
                           r->path, r->lineno, (unsigned long long)PROF_MAX_BYTES);
        if (c == '\n')
            break;
        if (c == '\0')
            return vm_fail(VMATCH_EINVAL, "profile %s:%zu: a NUL byte: not a text profile",
                           r->path, r->lineno);
        if (n == PROF_MAX_LINE)
            return vm_fail(VMATCH_EINVAL, "profile %s:%zu: line longer than %d bytes", r->path,
                           r->lineno, PROF_MAX_LINE);
        r->buf[n++] = (char)c;
    }
    r->buf[n] = '\0';
    r->cut = c == EOF && n > 0;
    return c != EOF || n > 0;
}

static int parse(prof_reader_t *r, vm_profile_t *p)
{
    enum { MAGIC, LAYOUT, NPROCS, ENTRIES, ENDED } want = MAGIC;
    static const char *const expect[] = {"'vmatch-profile 1' or 'vmatch-profile 2'",
                                         "'layout CTX SRC TAG'", "'nprocs N'",
                                         "'CTX SRC PRQ UMQ'", "nothing after 'end N'"};
    const char *path = r->path;
    size_t alloc = 0;
    uint64_t sum[2] = {0, 0}; /* of the PRQ and the UMQ counts so far */
    int rc = VMATCH_OK, got;
    while ((got = next_line(r)) > 0) {
        size_t lineno = r->lineno;
        char *s = r->buf + strspn(r->buf, " \t\r\n");
        if (*s == '\0' || *s == '#')
            continue;
        char word[16] = "";
        size_t wl = strcspn(s, " \t\r\n");
        if (wl < sizeof word && (*s < '0' || *s > '9')) {
            memcpy(word, s, wl);
            s += wl;
        }
        if (want == ENTRIES && p->version == 2 && !p->n && strcmp(word, "program") == 0) {
            s += strspn(s, " \t");
            s[strcspn(s, "\r\n")] = '\0';
            snprintf(p->program, sizeof p->program, "%s", s);
            continue;
        }
        unsigned long long v[4];
        int n = fields(s, v, 4);
        if (want == MAGIC && strcmp(word, "vmatch-profile") == 0 && n == 1 &&
            (v[0] == 1 || v[0] == 2)) {
            p->version = (unsigned)v[0];
            want = LAYOUT;
        } else if (want == LAYOUT && strcmp(word, "layout") == 0 && n == 3 && v[0] < 64 &&
                   v[1] < 64 && v[2] < 64) {
            p->ctx_bits = (unsigned)v[0];
            p->src_bits = (unsigned)v[1];
            p->tag_bits = (unsigned)v[2];
            const char *why = check_header(p);
            if (why) {
                rc = vm_fail(VMATCH_EINVAL, "profile %s:%zu: %s", path, lineno, why);
                break;
            }
            want = NPROCS;
        } else if (want == NPROCS && strcmp(word, "nprocs") == 0 && n == 1 &&
                   v[0] <= (1u << 30)) {
            p->nprocs = (uint32_t)v[0];
            want = ENTRIES;
        } else if (want == ENTRIES && p->version == 2 && strcmp(word, "rank") == 0 && n == 1 &&
                   !p->n && p->rank < 0 && v[0] <= INT32_MAX) {
            p->rank = (int64_t)v[0];
        } else if (want == ENTRIES && p->version == 2 && strcmp(word, "end") == 0 && n == 1) {
            if (v[0] != p->n) {
                rc = vm_fail(VMATCH_EINVAL,
                             "profile %s:%zu: 'end %llu' but %zu entries were read: the file "
                             "was cut or edited",
                             path, lineno, v[0], p->n);
                break;
            }
            want = ENDED;
        } else if (want == ENTRIES && word[0] == '\0' && n == 4) {
            if ((p->ctx_bits < 32 && v[0] >> p->ctx_bits) || v[0] > UINT32_MAX ||
                (p->src_bits < 32 && v[1] >> p->src_bits) || v[1] > UINT32_MAX ||
                (p->nprocs && v[1] >= p->nprocs)) {
                rc = vm_fail(VMATCH_EINVAL, "profile %s:%zu: context or source out of range",
                             path, lineno);
                break;
            }
            if (p->n == PROF_MAX_ENTRIES) {
                rc = vm_fail(VMATCH_EINVAL, "profile %s:%zu: more than %zu entries", path,
                             lineno, PROF_MAX_ENTRIES);
                break;
            }
            if (p->n == alloc) {
                alloc = alloc ? 2 * alloc : 64;
                void *grown = realloc(p->entries, alloc * sizeof *p->entries);
                if (!grown) {
                    rc = vm_fail(VMATCH_ENOMEM, "profile %s: out of memory", path);
                    break;
                }
                p->entries = grown;
            }
            /* The tools sum a side's counts (totals, shares); a sum past 2^64 - 1 would wrap
             * and print a wrong total with 100% for each source.  No run counts that far. */
            if (v[2] > UINT64_MAX - sum[0] || v[3] > UINT64_MAX - sum[1]) {
                rc = vm_fail(VMATCH_EINVAL,
                             "profile %s:%zu: the %s counts sum past 2^64 - 1: not a recorded "
                             "profile",
                             path, lineno, v[2] > UINT64_MAX - sum[0] ? "PRQ" : "UMQ");
                break;
            }
            sum[0] += v[2];
            sum[1] += v[3];
            p->entries[p->n++] = (vm_profile_entry_t){
                .ctx = (uint32_t)v[0], .src = (uint32_t)v[1], .prq = v[2], .umq = v[3]};
        } else if (r->cut && want != MAGIC) {
            /* a file that began as a profile ends inside this line: its writer stopped, or
             * a copy was cut (a first line that is not one is not a profile at all) */
            rc = vm_fail(VMATCH_EINVAL,
                         "profile %s:%zu: truncated: the file ends inside a line (expected %s)",
                         path, lineno, expect[want]);
            break;
        } else {
            rc = vm_fail(VMATCH_EINVAL, "profile %s:%zu: expected %s", path, lineno,
                         expect[want]);
            break;
        }
    }
    if (got < 0)
        rc = got;
    if (rc == VMATCH_OK && ferror(r->f))
        rc = vm_fail(VMATCH_EIO, "profile %s: read error: %s", path, strerror(errno));
    if (rc == VMATCH_OK && want < ENTRIES)
        rc = vm_fail(VMATCH_EINVAL, "profile %s: %s before %s", path,
                     want == MAGIC ? "empty: the file ends" : "the file ends", expect[want]);
    if (rc == VMATCH_OK && want == ENTRIES && p->version == 2)
        rc = vm_fail(VMATCH_EINVAL,
                     "profile %s: truncated: no closing 'end N' line (the file was cut, or its "
                     "writer stopped)",
                     path);
    if (rc == VMATCH_OK && p->n > 1) {
        qsort(p->entries, p->n, sizeof *p->entries, by_ctx_src);
        for (size_t i = 1; i < p->n; i++)
            if (by_ctx_src(&p->entries[i - 1], &p->entries[i]) == 0) {
                rc = vm_fail(VMATCH_EINVAL, "profile %s: context %u source %u appears twice",
                             path, p->entries[i].ctx, p->entries[i].src);
                break;
            }
    }
    return rc;
}

int vm_profile_load(const char *path, vm_profile_t *out)
{
    *out = (vm_profile_t){0};
    if (!path)
        return vm_fail(VMATCH_EINVAL, "profile: NULL path");
    FILE *f = fopen(path, "r");
    if (!f)
        return vm_fail(VMATCH_EIO, "profile: cannot open '%s': %s", path, strerror(errno));
    /* A folder opens for reading on Linux and fails only at the first read: say so here. */
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        fclose(f);
        return vm_fail(VMATCH_EIO, "profile: '%s' is a directory, not a profile file", path);
    }
    prof_reader_t *r = malloc(sizeof *r);
    if (!r) {
        fclose(f);
        return vm_fail(VMATCH_ENOMEM, "profile %s: out of memory", path);
    }
    *r = (prof_reader_t){.f = f, .path = path};
    vm_profile_t p = {.rank = -1};
    int rc = parse(r, &p);
    free(r);
    fclose(f);
    if (rc < 0) {
        vm_profile_free(&p);
        return rc;
    }
    *out = p;
    return VMATCH_OK;
}

void vm_profile_free(vm_profile_t *p)
{
    free(p->entries);
    *p = (vm_profile_t){0};
}

size_t vm_profile_side(const vm_profile_t *p, int side, uint32_t *idx, uint64_t *counts,
                       uint32_t *nctx)
{
    size_t u = 0;
    *nctx = 0;
    for (size_t i = 0; i < p->n; i++) {
        const vm_profile_entry_t *e = &p->entries[i];
        uint64_t c = side == VM_PRQ ? e->prq : e->umq;
        if (!c)
            continue;
        if (!u || p->entries[idx[u - 1]].ctx != e->ctx) /* entries are sorted by (ctx, src) */
            (*nctx)++;
        idx[u] = (uint32_t)i;
        counts[u++] = c;
    }
    return u;
}

/* The refusal of a profile recorded under another layout, naming the spec words of both. */
static int layout_differs(const char *path, const vm_profile_t *prof, const vm_config_t *cfg)
{
    char theirs[80], ours[80];
    vm_layout_words(prof->ctx_bits, prof->src_bits, prof->tag_bits, theirs, sizeof theirs);
    vm_layout_words(cfg->ctx_bits, cfg->src_bits, cfg->tag_bits, ours, sizeof ours);
    return vm_fail(VMATCH_EINVAL,
                   "profile %s: recorded under %s (context/source/tag bits %u/%u/%u), this "
                   "spec has %s (%u/%u/%u): read it with %s",
                   path, theirs, prof->ctx_bits, prof->src_bits, prof->tag_bits, ours,
                   cfg->ctx_bits, cfg->src_bits, cfg->tag_bits, theirs);
}

int vm_profile_load_for(const vm_config_t *cfg, const char *policy, vm_profile_t *out,
                        uint32_t *nprocs)
{
    *out = (vm_profile_t){0};
    if (!cfg->profile)
        return vm_fail(VMATCH_EINVAL, "spec: policy=%s needs profile=PATH", policy);
    char path[PATH_MAX], mine[64];
    vm_profile_t prof;
    int rc = vm_path_expand(cfg, "profile", cfg->profile, path, sizeof path);
    if (rc == VMATCH_OK)
        rc = vm_profile_load(path, &prof);
    if (rc < 0)
        return rc; /* vm_path_expand or vm_profile_load said why */
    vm_program_name(mine, sizeof mine);
    int64_t me = vm_rank_of(cfg);
    if (prof.ctx_bits != cfg->ctx_bits || prof.src_bits != cfg->src_bits ||
        prof.tag_bits != cfg->tag_bits)
        rc = layout_differs(path, &prof, cfg);
    else if (!cfg->profile_program && prof.rank >= 0 && me >= 0 && prof.rank != me)
        rc = vm_fail(VMATCH_EINVAL,
                     "profile %s: recorded by rank %lld, this is rank %lld (%%r in profile= "
                     "gives each rank its own; profile.program=any takes it anyway)",
                     path, (long long)prof.rank, (long long)me);
    else if (cfg->nprocs && prof.nprocs && cfg->nprocs != prof.nprocs)
        rc = vm_fail(VMATCH_EINVAL,
                     "profile %s: recorded with nprocs %u, the spec's nprocs is %u (a profile "
                     "of another process count)",
                     path, prof.nprocs, cfg->nprocs);
    else if (!cfg->nprocs && !prof.nprocs)
        rc = vm_fail(VMATCH_EINVAL, "profile %s: no nprocs in the profile or the spec", path);
    else if (!cfg->profile_program && prof.program[0] && mine[0] && strcmp(prof.program, mine))
        rc = vm_fail(VMATCH_EINVAL,
                     "profile %s: recorded by program '%s', this is '%s' (record one of this "
                     "program, or take it anyway with profile.program=any)",
                     path, prof.program, mine);
    *nprocs = cfg->nprocs ? cfg->nprocs : prof.nprocs;
    for (size_t i = 0; rc == VMATCH_OK && i < prof.n; i++)
        if (prof.entries[i].src >= *nprocs)
            rc = vm_fail(VMATCH_EINVAL, "profile %s: source %u but nprocs is %u", path,
                         prof.entries[i].src, *nprocs);
    if (rc < 0)
        vm_profile_free(&prof);
    else
        *out = prof;
    return rc;
}

int vmatch_profile_save(const vmatch_engine_t *e, const char *path)
{
    if (!e || !path)
        return vm_fail(VMATCH_EINVAL, "profile_save: NULL argument");
    vm_engine_take(e);
    int rc = vm_profile_write(e, path);
    vm_engine_give(e);
    return rc;
}
