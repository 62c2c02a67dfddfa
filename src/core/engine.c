/* engine.c -- the public API: argument checks, the PRQ/UMQ protocol, statistics, MPI
 * packing and collective classes.  Where entries live is the policy's business. */
#include "engine.h"
#include "error.h"
#include "hooks.h"
#include "module.h"
#include "policy.h"
#include "record.h"
#include "simd.h"
#include "spec.h"
#include "threads.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_CLASSES = 65535 };

/* The single-threaded calls (defined below with their functions). */
static const vm_calls_t calls_exchange, calls_plain;

/* The engine's first bytes as vmatch_inline.h publishes them. */
#define VM_HOT_AT(f, g) (offsetof(vmatch_hot_t, f) == offsetof(struct vmatch_engine, g))
_Static_assert(VM_HOT_AT(seq, call.seq) && VM_HOT_AT(inspected, call.inspected) &&
                   VM_HOT_AT(abi, call.abi) && VM_HOT_AT(searches, searches) &&
                   VM_HOT_AT(side, hot) && VM_HOT_AT(pack, packing),
               "the engine starts as vmatch_hot_t says");

static uint64_t field_mask(unsigned bits)
{
    return bits >= 64 ? ~0ull : (1ull << bits) - 1;
}

void vmatch_destroy(vmatch_engine_t *e)
{
    if (!e)
        return;
    if (e->threads)
        vm_threads_destroy(e);
    for (int s = 0; s < 2; s++)
        if (e->side[s])
            e->side[s]->ops->destroy(e->side[s]);
    vm_prof_free(&e->prof, &e->env.mem);
    vm_record_destroy(e);
    vm_mem_free(&e->env.mem, e->env.classes, e->env.classes_cap * sizeof *e->env.classes);
    vm_mem_free(&e->env.mem, e->describe, e->describe_bytes);
    vm_spec_free(&e->cfg);
    for (unsigned i = 0; i < e->env.npools; i++)
        vm_pool_fini(&e->env.pools[i]);
    free(e);
}

unsigned vmatch_inline_abi(void)
{
    return VMATCH_INLINE_ABI;
}

int vmatch_create_abi(const char *spec, unsigned abi, vmatch_engine_t **out)
{
    if (abi != VMATCH_INLINE_ABI)
        return vm_fail(VMATCH_EINVAL,
                       "create: the caller's vmatch_inline.h is of version %u, this library's "
                       "of version %u: rebuild the caller against this library's header",
                       abi, VMATCH_INLINE_ABI);
    return vmatch_create(spec, out);
}

int vmatch_create(const char *spec, vmatch_engine_t **out)
{
    if (!out)
        return vm_fail(VMATCH_EINVAL, "create: NULL out");
    if (!spec) {
        const char *env = getenv("VMATCH_SPEC");
        spec = env ? env : "";
    }
    vm_config_t cfg;
    int rc = vm_spec_parse(spec, &cfg);
    if (rc < 0)
        return rc;
    vmatch_engine_t *e = calloc(1, sizeof *e);
    if (!e) {
        vm_spec_free(&cfg);
        return vm_fail(VMATCH_ENOMEM, "create: out of memory");
    }
    e->cfg = cfg;
    e->env.cfg = &e->cfg;
    e->env.mem = (vm_mem_t){.bytes = sizeof *e, .numa = cfg.numa, .fail_after = -1};
    e->packing = (vm_packing_t){.tag_mask = field_mask(cfg.tag_bits),
                                .src_mask = field_mask(cfg.src_bits),
                                .ctx_mask = field_mask(cfg.ctx_bits),
                                .tag_shift = cfg.tag_shift,
                                .src_shift = cfg.src_shift,
                                .ctx_shift = cfg.ctx_shift};
    e->packing.tag_wild =
        (cfg.layout == VM_LAYOUT_OMPI_UCX ? e->packing.tag_mask >> 1 : e->packing.tag_mask)
        << cfg.tag_shift;
    for (int s = 0; s < 2; s++) {
        rc = cfg.policy->create(&e->env, s, &e->side[s]);
        if (rc < 0) { /* a policy explains EINVAL and EIO itself (bad spec or profile) */
            vmatch_destroy(e);
            if (rc == VMATCH_EINVAL || rc == VMATCH_EIO)
                return rc;
            return vm_fail(rc, "create: policy %s: %s", cfg.policy->name, vmatch_strerror(rc));
        }
    }
    e->describe_bytes = vm_spec_describe(&e->cfg, NULL, 0) + 1;
    e->describe = vm_mem_alloc(&e->env.mem, e->describe_bytes);
    if (!e->describe) {
        e->describe_bytes = 0;
        vmatch_destroy(e);
        return vm_fail(VMATCH_ENOMEM, "create: out of memory");
    }
    vm_spec_describe(&e->cfg, e->describe, e->describe_bytes);
    e->exchange = cfg.policy->exchange;
    int record = cfg.profile_record || cfg.trace_record;
    e->calls = e->exchange && !record ? calls_exchange : calls_plain;
    e->fast = cfg.threads == VM_THREADS_OFF && !record ? e->exchange : NULL;
    if (e->fast && cfg.policy->hot) { /* the callers' inline calls may run (vmatch_inline.h) */
        e->call.abi = VMATCH_INLINE_ABI;
        for (int s = 0; s < 2; s++)
            e->hot[s] = &e->side[s]->hot;
    }
    rc = vm_record_create(e); /* in front of the calls, under the threads' layer */
    if (rc < 0) {
        vmatch_destroy(e);
        return rc;
    }
    if (cfg.threads != VM_THREADS_OFF) {
        rc = vm_threads_create(e);
        if (rc < 0) {
            vmatch_destroy(e);
            return vm_fail(rc, "create: out of memory for the threads' state");
        }
    }
    /* The profile path served the policies' create; the description keeps it. */
    vm_spec_free(&e->cfg);
    *out = e;
    return VMATCH_OK;
}

const char *vmatch_describe(const vmatch_engine_t *e)
{
    return e ? e->describe : "";
}

const char *vmatch_kernel(const vmatch_engine_t *e)
{
    return e && e->cfg.storage->simd ? vm_simd_name((int)e->cfg.simd) : "none";
}

/* ---- the single-threaded calls (vm_calls_t) ---- */

/* The call's part of e->call: one more sequence number (for every call that may queue an
 * entry: one that matched or failed leaves a gap, which orders nothing differently), its
 * class and where a match goes. */
static inline vm_call_t *begin(vmatch_engine_t *e, uint32_t cls, void **out)
{
    e->call.seq++;
    e->call.cls = cls;
    e->call.out = out;
    return &e->call;
}

/* A post's or an arrival's exchange through the policy's own, a tail call: the engine keeps
 * no frame around it (the policy counts the result on the sides, vm_side_counted).  A failed
 * append returns the storage's code, and the pool has said why (vmatch_last_error). */
static inline __attribute__((always_inline)) int exchange(vmatch_engine_t *e, int side,
                                                          vmatch_bits_t bits,
                                                          vmatch_bits_t care, uint32_t cls,
                                                          void *payload, void **out)
{
    e->searches++;
    return e->exchange(begin(e, cls, out), bits, care, e->side[!side], payload, e->side[side]);
}

static int post_exchange(vmatch_engine_t *e, vmatch_bits_t bits, vmatch_bits_t care,
                         uint32_t cls, void *req, void **msg_out)
{
    return exchange(e, VM_PRQ, bits, care, cls, req, msg_out);
}

static int arrive_exchange(vmatch_engine_t *e, vmatch_bits_t bits, uint32_t cls, void *msg,
                           void **req_out)
{
    return exchange(e, VM_UMQ, bits, ~(vmatch_bits_t)0, cls, msg, req_out);
}

/* enqueue with profile.record=on: count the insertion too (receives that name their source,
 * and every message).  Out of line, so the common path saves no registers for it. */
static __attribute__((noinline)) int enqueue_recorded(vmatch_engine_t *e, int side,
                                                      vmatch_bits_t bits, vmatch_bits_t care,
                                                      void *payload)
{
    const vm_packing_t *k = &e->packing;
    vmatch_bits_t src_field = k->src_mask << k->src_shift;
    int record = side == VM_UMQ || (care & src_field) == src_field;
    vm_prof_table_t undo;
    int grew = record ? vm_prof_reserve(&e->prof, &e->env.mem, &undo) : 0;
    if (grew < 0)
        return vm_fail(VMATCH_ENOMEM, "out of memory for the profile");
    int rc = vm_side_append(e->side[side], bits, care, payload, &e->call);
    vm_prof_settle(&e->prof, &e->env.mem, &undo, grew, rc >= 0);
    if (rc < 0)
        return rc;
    if (record) {
        vm_source_key_t key = vm_source_key_of(&e->cfg);
        vm_prof_count(&e->prof, vm_source_key(&key, bits), side);
    }
    return VMATCH_QUEUED;
}

/* Queue an entry on a side (after its search found nothing) with the call's sequence number:
 * VMATCH_QUEUED or an error. */
static inline int enqueue(vmatch_engine_t *e, int side, vmatch_bits_t bits, vmatch_bits_t care,
                          uint32_t cls, void *payload)
{
    begin(e, cls, NULL);
    if (e->cfg.profile_record)
        return enqueue_recorded(e, side, bits, care, payload);
    int rc = vm_side_append(e->side[side], bits, care, payload, &e->call);
    return rc < 0 ? rc : VMATCH_QUEUED;
}

/* The search of a post or an arrival on the other side, then the append on a miss. */
static inline __attribute__((always_inline)) int
search_or_enqueue(vmatch_engine_t *e, int side, vmatch_bits_t bits, vmatch_bits_t care,
                  uint32_t cls, void *payload, void **out)
{
    vmatch_bits_t keycare = side == VM_PRQ ? care : ~(vmatch_bits_t)0;
    if (vm_side_match(e->side[!side], bits, keycare, cls, 1, out, &e->call.inspected))
        return VMATCH_MATCHED;
    return enqueue(e, side, bits, care, cls, payload);
}

/* Out of line (at most six arguments, so the callers jump to them): when the other side is
 * empty, the callers append at once, without its search and the registers it needs. */
static __attribute__((noinline)) int post_search(vmatch_engine_t *e, vmatch_bits_t bits,
                                                 vmatch_bits_t care, uint32_t cls, void *req,
                                                 void **msg_out)
{
    return search_or_enqueue(e, VM_PRQ, bits, care, cls, req, msg_out);
}

static __attribute__((noinline)) int arrive_search(vmatch_engine_t *e, vmatch_bits_t bits,
                                                   uint32_t cls, void *msg, void **req_out)
{
    return search_or_enqueue(e, VM_UMQ, bits, ~(vmatch_bits_t)0, cls, msg, req_out);
}

/* A post or an arrival of a policy without an exchange, or with profile.record on. */
static int post_plain(vmatch_engine_t *e, vmatch_bits_t bits, vmatch_bits_t care, uint32_t cls,
                      void *req, void **msg_out)
{
    e->searches++;
    if (!e->side[VM_UMQ]->len)
        return enqueue(e, VM_PRQ, bits, care, cls, req);
    return post_search(e, bits, care, cls, req, msg_out);
}

static int arrive_plain(vmatch_engine_t *e, vmatch_bits_t bits, uint32_t cls, void *msg,
                        void **req_out)
{
    e->searches++;
    if (!e->side[VM_PRQ]->len)
        return enqueue(e, VM_UMQ, bits, ~(vmatch_bits_t)0, cls, msg);
    return arrive_search(e, bits, cls, msg, req_out);
}

static int probe(vmatch_engine_t *e, vmatch_bits_t bits, vmatch_bits_t care, uint32_t cls,
                 int remove, void **msg_out)
{
    e->searches++;
    return vm_side_match(e->side[VM_UMQ], bits, care, cls, remove, msg_out, &e->call.inspected)
               ? VMATCH_MATCHED
               : VMATCH_ENOTFOUND;
}

static int remove_entry(vmatch_engine_t *e, int side, const void *payload)
{
    e->searches++;
    return vm_side_remove(e->side[side], payload, &e->call.inspected) ? VMATCH_OK
                                                                      : VMATCH_ENOTFOUND;
}

static int match_posted(vmatch_engine_t *e, vmatch_bits_t bits, uint32_t cls, void **req_out)
{
    e->searches++;
    return vm_side_match(e->side[VM_PRQ], bits, ~(vmatch_bits_t)0, cls, 1, req_out,
                         &e->call.inspected)
               ? VMATCH_MATCHED
               : VMATCH_ENOTFOUND;
}

static int enqueue_split(vmatch_engine_t *e, int side, vmatch_bits_t bits, vmatch_bits_t care,
                         uint32_t cls, void *payload)
{
    return enqueue(e, side, bits, care, cls, payload);
}

static const vm_calls_t calls_exchange = {post_exchange, arrive_exchange, probe,
                                          remove_entry,  match_posted,    enqueue_split};
static const vm_calls_t calls_plain = {post_plain,   arrive_plain, probe,
                                       remove_entry, match_posted, enqueue_split};

/* ---- the API ---- */

int vmatch_post(vmatch_engine_t *e, vmatch_bits_t bits, vmatch_bits_t care, uint32_t cls,
                void *req, void **msg_out)
{
    if (!e || !req || !msg_out)
        return vm_fail(VMATCH_EINVAL, "post: NULL argument");
    if (e->fast)
        return exchange(e, VM_PRQ, bits, care, cls, req, msg_out);
    return e->calls.post(e, bits, care, cls, req, msg_out);
}

int vmatch_arrive(vmatch_engine_t *e, vmatch_bits_t bits, uint32_t cls, void *msg,
                  void **req_out)
{
    if (!e || !msg || !req_out)
        return vm_fail(VMATCH_EINVAL, "arrive: NULL argument");
    if (e->fast)
        return exchange(e, VM_UMQ, bits, ~(vmatch_bits_t)0, cls, msg, req_out);
    return e->calls.arrive(e, bits, cls, msg, req_out);
}

int vmatch_probe(vmatch_engine_t *e, vmatch_bits_t bits, vmatch_bits_t care, uint32_t cls,
                 int remove, void **msg_out)
{
    if (!e || !msg_out)
        return vm_fail(VMATCH_EINVAL, "probe: NULL argument");
    return e->calls.probe(e, bits, care, cls, remove, msg_out);
}

int vmatch_cancel(vmatch_engine_t *e, void *req)
{
    if (!e || !req)
        return vm_fail(VMATCH_EINVAL, "cancel: NULL argument");
    return e->calls.remove(e, VM_PRQ, req);
}

int vmatch_remove_unexpected(vmatch_engine_t *e, void *msg)
{
    if (!e || !msg)
        return vm_fail(VMATCH_EINVAL, "remove_unexpected: NULL argument");
    return e->calls.remove(e, VM_UMQ, msg);
}

/* The split calls take a threaded engine as a probe does (threads=multi drains the inbox
 * first): they never defer. */
int vmatch_match_posted(vmatch_engine_t *e, vmatch_bits_t bits, uint32_t cls, void **req_out)
{
    if (!e || !req_out)
        return vm_fail(VMATCH_EINVAL, "match_posted: NULL argument");
    return e->calls.match_posted(e, bits, cls, req_out);
}

int vmatch_enqueue_unexpected(vmatch_engine_t *e, vmatch_bits_t bits, uint32_t cls, void *msg)
{
    if (!e || !msg)
        return vm_fail(VMATCH_EINVAL, "enqueue_unexpected: NULL argument");
    return e->calls.enqueue(e, VM_UMQ, bits, ~(vmatch_bits_t)0, cls, msg);
}

int vmatch_enqueue_posted(vmatch_engine_t *e, vmatch_bits_t bits, vmatch_bits_t care,
                          uint32_t cls, void *req)
{
    if (!e || !req)
        return vm_fail(VMATCH_EINVAL, "enqueue_posted: NULL argument");
    return e->calls.enqueue(e, VM_PRQ, bits, care, cls, req);
}

/* The id of the key (op, size class of msg_bytes, comm_size) in *id: VMATCH_OK, or
 * VMATCH_ENOMEM (with vm_fail's message) when it has none and the table takes no new class:
 * it is full, or an allocation fails now or failed before (the table then closes, so that a
 * key never gets 0 once and an id later). */
static int coll_class(vmatch_engine_t *e, uint32_t op, uint64_t msg_bytes, uint32_t comm_size,
                      uint32_t *id)
{
    vm_env_t *env = &e->env;
    vm_class_t k = {.op = op,
                    .comm_size = comm_size,
                    .size_class = msg_bytes ? 64 - (uint32_t)__builtin_clzll(msg_bytes) : 0};
    for (uint32_t i = 0; i < env->nclasses; i++)
        if (env->classes[i].op == k.op && env->classes[i].comm_size == k.comm_size &&
            env->classes[i].size_class == k.size_class) {
            *id = i + 1;
            return VMATCH_OK;
        }
    if (env->classes_closed)
        return vm_fail(VMATCH_ENOMEM,
                       "coll_class: the class table closed at an earlier failure; new classes "
                       "get 0 (point-to-point) for the engine's lifetime");
    if (env->nclasses == MAX_CLASSES) {
        env->classes_closed = 1;
        return vm_fail(VMATCH_ENOMEM,
                       "coll_class: %u classes, the most an engine holds; new "
                       "classes get 0 (point-to-point)",
                       (unsigned)MAX_CLASSES);
    }
    if (env->nclasses == env->classes_cap) {
        uint32_t cap = env->classes_cap ? 2 * env->classes_cap : 16;
        vm_class_t *grown = vm_mem_alloc(&env->mem, cap * sizeof *grown);
        if (!grown) {
            env->classes_closed = 1;
            return vm_fail(VMATCH_ENOMEM, "coll_class: out of memory for the class table; new "
                                          "classes get 0 (point-to-point) from now on");
        }
        if (env->nclasses)
            memcpy(grown, env->classes, env->nclasses * sizeof *grown);
        vm_mem_free(&env->mem, env->classes, env->classes_cap * sizeof *grown);
        env->classes = grown;
        env->classes_cap = cap;
    }
    env->classes[env->nclasses++] = k;
    *id = env->nclasses;
    return VMATCH_OK;
}

int vmatch_coll_class_get(vmatch_engine_t *e, uint32_t op, uint64_t msg_bytes,
                          uint32_t comm_size, uint32_t *cls)
{
    if (cls)
        *cls = 0;
    if (!e || !cls)
        return vm_fail(VMATCH_EINVAL, "coll_class: NULL argument");
    vm_engine_take(e);
    int rc = coll_class(e, op, msg_bytes, comm_size, cls);
    vm_engine_give(e);
    return rc;
}

uint32_t vmatch_coll_class(vmatch_engine_t *e, uint32_t op, uint64_t msg_bytes,
                           uint32_t comm_size)
{
    uint32_t id;
    vmatch_coll_class_get(e, op, msg_bytes, comm_size, &id);
    return id;
}

/* Pack without checks: each value is cut to its field, wildcards clear care bits. */
int vmatch_mpi_pack(const vmatch_engine_t *e, uint32_t ctx, int32_t src, int32_t tag,
                    vmatch_bits_t *bits, vmatch_bits_t *care)
{
    if (!e || !bits)
        return vm_fail(VMATCH_EINVAL, "mpi_pack: NULL argument");
    const vm_config_t *c = &e->cfg;
    int wild_src = care && src == VMATCH_ANY_SOURCE, wild_tag = care && tag == VMATCH_ANY_TAG;
    if (ctx > field_mask(c->ctx_bits))
        return vm_fail(VMATCH_EINVAL, "mpi_pack: context %u does not fit %u bits", ctx,
                       c->ctx_bits);
    /* The wildcard note only where a wildcard was given for a message (care NULL). */
    if (!wild_src && (src < 0 || (uint64_t)src > field_mask(c->src_bits)))
        return vm_fail(VMATCH_EINVAL, "mpi_pack: source %d does not fit %u bits%s", src,
                       c->src_bits,
                       !care && src == VMATCH_ANY_SOURCE ? " (messages take no wildcard)" : "");
    if (!wild_tag && (tag < 0 || (uint64_t)tag > field_mask(c->tag_bits)))
        return vm_fail(VMATCH_EINVAL, "mpi_pack: tag %d does not fit %u bits%s", tag,
                       c->tag_bits,
                       !care && tag == VMATCH_ANY_TAG ? " (messages take no wildcard)" : "");
    vmatch_hot_pack_(&e->packing, ctx, src, tag, bits, care);
    return VMATCH_OK;
}

vmatch_bits_t vmatch_mpi_msg(const vmatch_engine_t *e, uint32_t ctx, int32_t src, int32_t tag)
{
    vmatch_bits_t bits = 0;
    if (e)
        vmatch_hot_pack_(&e->packing, ctx, src, tag, &bits, NULL);
    return bits;
}

void vmatch_mpi_recv(const vmatch_engine_t *e, uint32_t ctx, int32_t src, int32_t tag,
                     vmatch_bits_t *bits, vmatch_bits_t *care)
{
    if (e && bits && care)
        vmatch_hot_pack_(&e->packing, ctx, src, tag, bits, care);
}

void vmatch_layout_shifts(const vmatch_engine_t *e, unsigned *ctx_shift, unsigned *src_shift,
                          unsigned *tag_shift)
{
    if (ctx_shift)
        *ctx_shift = e ? e->cfg.ctx_shift : 0;
    if (src_shift)
        *src_shift = e ? e->cfg.src_shift : 0;
    if (tag_shift)
        *tag_shift = e ? e->cfg.tag_shift : 0;
}

void vmatch_layout(const vmatch_engine_t *e, unsigned *ctx_bits, unsigned *src_bits,
                   unsigned *tag_bits)
{
    if (ctx_bits)
        *ctx_bits = e ? e->cfg.ctx_bits : 0;
    if (src_bits)
        *src_bits = e ? e->cfg.src_bits : 0;
    if (tag_bits)
        *tag_bits = e ? e->cfg.tag_bits : 0;
}

vm_mem_t *vm_engine_mem(vmatch_engine_t *e)
{
    return &e->env.mem;
}

vm_side_t *vm_engine_side(vmatch_engine_t *e, int side)
{
    return e->side[side];
}

vm_exchange_fn *vm_engine_swap_exchange(vmatch_engine_t *e, vm_exchange_fn *fn)
{
    vm_exchange_fn *was = e->exchange;
    if (!was)
        return NULL;
    e->exchange = fn;
    if (e->fast)
        e->fast = fn;
    return was;
}
