/* fuzz_profile.c -- the bytes as a profile file: through vm_profile_load, and when it is
 * read, through vmatch_create with policy=pnp-static.
 *
 * Promises checked: a refused file leaves the profile empty and explains itself (engine.h);
 * a read one is sorted by (context, source) without repeats and fits its own layout and
 * nprocs; an engine built from it matches each listed source's messages with its receives
 * (the partners' perfect hash finds them) or refuses with a message. */
#include "fuzz.h"

#include "profile.h"

#include <string.h>
#include <unistd.h>

/* Entries whose traffic is tried on the engine: enough to meet several partners. */
enum { TRY_ENTRIES = 32 };

/* True when v does not fit in bits bits. */
static int too_wide(uint64_t v, unsigned bits)
{
    return bits < 64 && (v >> bits) != 0;
}

/* A read profile must keep the reader's promises. */
static void check_profile(const vm_profile_t *p)
{
    FUZZ_CHECK(p->ctx_bits + p->src_bits + p->tag_bits <= 64 && p->src_bits >= 1 &&
                   p->tag_bits >= 1,
               "layout %u/%u/%u", p->ctx_bits, p->src_bits, p->tag_bits);
    FUZZ_CHECK(p->n == 0 || p->entries, "%zu entries, no array", p->n);
    for (size_t i = 0; i < p->n; i++) {
        const vm_profile_entry_t *x = &p->entries[i];
        FUZZ_CHECK(!too_wide(x->ctx, p->ctx_bits) && !too_wide(x->src, p->src_bits),
                   "entry %zu: %u %u does not fit the layout", i, x->ctx, x->src);
        FUZZ_CHECK(!p->nprocs || x->src < p->nprocs, "entry %zu: source %u, nprocs %u", i,
                   x->src, p->nprocs);
        if (i > 0) {
            const vm_profile_entry_t *w = &p->entries[i - 1];
            FUZZ_CHECK(w->ctx < x->ctx || (w->ctx == x->ctx && w->src < x->src),
                       "entries %zu and %zu out of order or repeated", i - 1, i);
        }
    }
}

/* Build a pnp-static engine on the profile at path (read as p) with keys chosen by sel, and
 * see that every tried source's message finds its receive. */
static void try_engine(const char *path, const vm_profile_t *p, unsigned sel)
{
    static const char *const storages[] = {"ll", "lla", "llv"};
    static const char *const metrics[] = {"average", "median", "fence"};
    char spec[512], nprocs[32] = "";
    /* Mostly the profile's own nprocs, sometimes none (taken from the file), sometimes a
     * different one (refused, unless equal by chance). */
    if (sel % 4 == 1)
        snprintf(nprocs, sizeof nprocs, " nprocs=%u", p->nprocs ? p->nprocs : 1);
    else if (sel % 4 == 2)
        snprintf(nprocs, sizeof nprocs, " nprocs=%u", 1 + (sel >> 8) % 64);
    snprintf(spec, sizeof spec,
             "policy=pnp-static profile=%s layout.ctx=%u layout.src=%u layout.tag=%u%s "
             "storage=%s pnp.cap=%u pnp.metric=%s",
             path, p->ctx_bits, p->src_bits, p->tag_bits, nprocs, storages[(sel >> 2) % 3],
             1 + (sel >> 4) % 4, metrics[(sel >> 6) % 3]);
    vmatch_engine_t *e = NULL;
    int rc = vmatch_create(spec, &e);
    if (rc < 0) {
        FUZZ_CHECK(fuzz_is_error(rc) && vmatch_last_error()[0], "'%s': error %d (%s)", spec, rc,
                   vmatch_last_error());
        return;
    }
    for (size_t i = 0; i < p->n && i < TRY_ENTRIES; i++) {
        uint32_t ctx = p->entries[i].ctx;
        int32_t src = (int32_t)p->entries[i].src;
        vmatch_bits_t bits, care, msg;
        void *out = NULL;
        if (src < 0 || vmatch_mpi_pack(e, ctx, src, 0, &bits, &care) != VMATCH_OK ||
            vmatch_mpi_pack(e, ctx, src, 0, &msg, NULL) != VMATCH_OK)
            continue; /* a source past int32_t cannot be packed */
        rc = vmatch_post(e, bits, care, 0, (void *)&p->entries[i], &out);
        FUZZ_CHECK(rc == VMATCH_QUEUED, "'%s': post %u/%d = %d", spec, ctx, src, rc);
        rc = vmatch_arrive(e, msg, 0, (void *)p, &out);
        FUZZ_CHECK(rc == VMATCH_MATCHED && out == &p->entries[i], "'%s': arrive %u/%d = %d",
                   spec, ctx, src, rc);
    }
    vmatch_stats_t st;
    vmatch_stats(e, &st);
    FUZZ_CHECK(st.posted == 0 && st.unexpected == 0, "'%s': entries left", spec);
    vmatch_destroy(e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64];
    int fd = fuzz_memfile(data, size, path, sizeof path);
    if (fd < 0)
        return 0;
    vm_profile_t p = {.n = 77};
    int rc = vm_profile_load(path, &p);
    if (rc < 0) {
        FUZZ_CHECK(rc == VMATCH_EINVAL || rc == VMATCH_EIO || rc == VMATCH_ENOMEM, "rc %d", rc);
        FUZZ_CHECK(vmatch_last_error()[0], "error %d without a message", rc);
        FUZZ_CHECK(p.n == 0 && p.entries == NULL, "error %d left %zu entries", rc, p.n);
    } else {
        FUZZ_CHECK(rc == VMATCH_OK, "rc %d", rc);
        check_profile(&p);
        /* The selector comes from the bytes, so each input builds the same engine. */
        unsigned sel = 0;
        for (size_t i = 0; i < size; i++)
            sel = sel * 31 + data[i];
        try_engine(path, &p, sel);
        vm_profile_free(&p);
    }
    close(fd);
    return 0;
}
