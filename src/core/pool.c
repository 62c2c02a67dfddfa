/* pool.c -- accounted allocation and pools of fixed-size objects.
 *
 * Small objects live in slabs: regions aligned to the pool's largest slab size, so the slab
 * of an object is found by masking its address (the tiny first slab, anywhere, by its
 * address range).  A slab's header (its first 64 bytes) keeps a free list and a count of
 * live objects; slabs with free objects sit on the pool's partial list.  Objects of more
 * than half a page are allocated one by one.  Memory comes from malloc, or from mmap with a
 * NUMA policy set before first touch when the engine names a node.
 */
#define _GNU_SOURCE
#include "pool.h"
#include "error.h"
#include "queue.h"
#include "vmatch.h"

#include <stdlib.h>
#include <sys/mman.h>

#ifdef VMATCH_HAVE_NUMA
#include <numa.h>
#include <numaif.h>
#endif

/* Slabs start small and grow as the pool does: a first slab of at most TINY bytes from malloc
 * when it holds at least two objects, else one page; then each new slab holds as many objects
 * as the pool already has, up to SLAB_MAX.  So an engine that queued a few entries holds a
 * KiB, not 64 KiB, and one that queued millions has few slabs.  Empty slabs are kept up to
 * RESERVE bytes (what the one spare 64 KiB slab of the fixed-size design held), so a queue
 * that fills and drains over and over does not map and unmap each time (mmap and munmap
 * were measured at 5 to 15 times the cost of the operations).  Objects over BIG bytes are
 * allocated one by one from malloc (mmap when the engine names a NUMA node), and the cache
 * of returned ones is emptied when the last object out comes back: a drained engine holds
 * none. */
enum {
    SLAB_HEADER = 64,
    PAGE = 4096,
    SLAB_MAX = 64 * 1024,
    RESERVE = 64 * 1024,
    CACHE_BYTES = 8192,
    TINY = 1024,
    TINY_MIN_OBJECTS = 2,
    BIG = PAGE / 2
};

struct vm_slab {
    vm_link_t part; /* in the partial list (first: a slab is its link there) */
    vm_link_t all;  /* in the list of every slab of the pool */
    void *free;     /* returned objects, linked through their first word */
    uint32_t used;  /* live objects */
    uint32_t bump;  /* objects never handed out start here */
    uint32_t cap;   /* objects it holds */
    int on_partial;
    size_t bytes; /* its size */
};

_Static_assert(sizeof(vm_slab_t) <= SLAB_HEADER, "slab header fits its cache line");

/* Every allocation that fails says so here (vmatch_last_error): a post or an arrival whose
 * append fails returns the storage's VMATCH_ENOMEM as it is, with this message. */
static __attribute__((noinline, cold)) void *out_of_memory(size_t n)
{
    vm_fail(VMATCH_ENOMEM, "out of memory (%zu bytes)", n);
    return NULL;
}

static int mem_take(vm_mem_t *m)
{
    if (m->fail_after == 0)
        return 0;
    if (m->fail_after > 0)
        m->fail_after--;
    return 1;
}

void *vm_mem_alloc(vm_mem_t *m, size_t n)
{
    void *p = mem_take(m) ? malloc(n) : NULL;
    if (!p)
        return out_of_memory(n);
    m->bytes += n;
    return p;
}

void *vm_mem_calloc(vm_mem_t *m, size_t n)
{
    void *p = mem_take(m) ? calloc(1, n) : NULL;
    if (!p)
        return out_of_memory(n);
    m->bytes += n;
    return p;
}

void vm_mem_free(vm_mem_t *m, void *p, size_t n)
{
    if (!p)
        return;
    m->bytes -= n;
    free(p);
}

/* n bytes on a cache line from malloc: LINE_PAD more, the start moved up to a line, and the
 * distance kept in the byte before it.  glibc's aligned_alloc takes a slow path that was
 * measured at several times a malloc's cost, and short queues grow and shrink often. */
static void *line_alloc(size_t n)
{
    unsigned char *raw = malloc(n + VM_LINE_PAD);
    if (!raw)
        return NULL;
    unsigned char *a = (unsigned char *)(((uintptr_t)raw + VM_LINE_PAD) & ~(uintptr_t)63);
    a[-1] = (unsigned char)(a - raw);
    return a;
}

static void line_free(void *a)
{
    free((unsigned char *)a - ((unsigned char *)a)[-1]);
}

void *vm_mem_alloc_line(vm_mem_t *m, size_t n)
{
    void *p = mem_take(m) ? line_alloc(n) : NULL;
    if (!p)
        return out_of_memory(n);
    m->bytes += n + VM_LINE_PAD;
    return p;
}

void vm_mem_free_line(vm_mem_t *m, void *p, size_t n)
{
    m->bytes -= n + VM_LINE_PAD;
    line_free(p);
}

int vm_numa_available(void)
{
#ifdef VMATCH_HAVE_NUMA
    return numa_available() >= 0;
#else
    return 0;
#endif
}

int vm_numa_nodes(void)
{
#ifdef VMATCH_HAVE_NUMA
    if (vm_numa_available())
        return numa_max_node() + 1;
#endif
    return 1;
}

/* A region of `bytes` bytes (a multiple of PAGE) starting at a multiple of align (a power of
 * two) from mmap, placed as m->numa asks. */
static void *region_map(vm_mem_t *m, size_t bytes, size_t align)
{
    /* Map enough to hold an aligned region, then trim both ends. */
    size_t span = bytes + (align > PAGE ? align - PAGE : 0);
    char *raw = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED)
        return NULL;
    char *start = (char *)(((uintptr_t)raw + align - 1) & ~(uintptr_t)(align - 1));
    if (start > raw)
        munmap(raw, (size_t)(start - raw));
    if (start + bytes < raw + span)
        munmap(start + bytes, (size_t)(raw + span - (start + bytes)));
#ifdef VMATCH_HAVE_NUMA
    /* Placement is a preference, set before first touch.  mbind is called directly because
     * libnuma's helpers print to the caller's stderr when the kernel refuses (containers);
     * a refusal leaves the kernel's default placement, which is still correct memory. */
    if (m->numa != VM_NUMA_OFF && vm_numa_available()) {
        unsigned long node_mask[16] = {0};
        if (m->numa >= 0)
            node_mask[m->numa / 64] = 1ul << (m->numa % 64);
        /* MPOL_PREFERRED with an empty mask means "the node of the CPU that touches it". */
        (void)mbind(start, bytes, MPOL_PREFERRED, node_mask, 16 * 64, 0);
    }
#else
    (void)m;
#endif
    return start;
}

/* A region of p: bytes at a multiple of align, with accounting; NULL when memory runs out.
 * Slabs are mapped (their alignment is large, and the NUMA policy applies); the tiny slab
 * and big objects come from malloc unless they are to be placed on a named node. */
static void *region_get(vm_pool_t *p, size_t bytes, size_t align, int map)
{
    vm_mem_t *m = p->mem;
    if (!mem_take(m))
        return out_of_memory(bytes);
    bytes = map ? (bytes + PAGE - 1) & ~(size_t)(PAGE - 1) : bytes + VM_LINE_PAD;
    void *r = map ? region_map(m, bytes, align) : line_alloc(bytes - VM_LINE_PAD);
    if (!r)
        return out_of_memory(bytes);
    m->bytes += bytes;
    p->bytes += bytes;
    return r;
}

static void region_put(vm_pool_t *p, void *r, size_t bytes, int map)
{
    if (map) {
        bytes = (bytes + PAGE - 1) & ~(size_t)(PAGE - 1);
        munmap(r, bytes);
    } else {
        bytes += VM_LINE_PAD;
        line_free(r);
    }
    p->mem->bytes -= bytes;
    p->bytes -= bytes;
}

/* Put slab s on the partial list of p, last: the next object is taken from it (slab_get). */
static void partial_push(vm_pool_t *p, vm_slab_t *s)
{
    s->on_partial = 1;
    vm_list_push_tail(&p->partial, &s->part);
}

/* Take slab s off the partial list of p. */
static void partial_unlink(vm_pool_t *p, vm_slab_t *s)
{
    vm_list_unlink(&p->partial, &s->part);
    s->on_partial = 0;
}

/* Bytes of a slab of cap objects of p, rounded up to a page. */
static size_t slab_bytes(const vm_pool_t *p, uint64_t cap)
{
    return (SLAB_HEADER + (size_t)cap * p->obj_size + PAGE - 1) & ~(size_t)(PAGE - 1);
}

void vm_pool_init(vm_pool_t *p, vm_mem_t *m, size_t obj_size)
{
    obj_size = (obj_size + 15) & ~(size_t)15;
    *p = (vm_pool_t){.mem = m, .obj_size = obj_size, .big = obj_size > BIG};
    size_t cache = CACHE_BYTES / obj_size;
    p->cache_max = cache < 1 ? 1 : cache > VM_POOL_CACHE ? VM_POOL_CACHE : (uint32_t)cache;
    if (p->big) { /* objects one by one: mapped (a page each) only to place them on a node */
        p->mapped = m->numa >= 0 && vm_numa_available();
        return;
    }
    size_t tiny = (TINY - SLAB_HEADER) / obj_size;
    if (tiny >= TINY_MIN_OBJECTS && m->numa < 0) /* a multiple of 64: objects stay aligned */
        p->tiny_bytes = (uint32_t)((SLAB_HEADER + tiny * obj_size + 63) & ~(size_t)63);
    p->first_cap = (uint32_t)((PAGE - SLAB_HEADER) / obj_size);
    p->max_cap = (uint32_t)((SLAB_MAX - SLAB_HEADER) / obj_size);
    p->align = PAGE;
    while (p->align < slab_bytes(p, p->max_cap))
        p->align *= 2;
}

/* Take slab s (empty, off the partial list) off the list of every slab and give it back. */
static void slab_drop(vm_pool_t *p, vm_slab_t *s)
{
    vm_list_unlink(&p->slabs, &s->all);
    p->nslabs--;
    p->capacity -= s->cap;
    int tiny = s == p->tiny;
    if (tiny)
        p->tiny = NULL;
    region_put(p, s, s->bytes, !tiny);
}

/* Give back the big objects in the cache. */
static void cache_flush(vm_pool_t *p)
{
    while (p->ncached) {
        void *obj = p->cache;
        p->cache = *(void **)obj;
        p->ncached--;
        region_put(p, obj, p->obj_size, p->mapped);
        p->nbig--;
    }
}

void vm_pool_fini(vm_pool_t *p)
{
    if (p->big)
        cache_flush(p);
    while (p->slabs.head)
        slab_drop(p, VM_CONTAINER_OF(p->slabs.head, vm_slab_t, all));
    p->partial = (vm_list_t){NULL, NULL};
    p->cache = NULL;
    p->ncached = 0;
    p->nbig = p->empty = 0;
}

/* A new slab on the partial list: as many objects as the pool holds (the footprint doubles),
 * at least a first slab's and at most max_cap; the tiny slab when the pool has none.  NULL
 * when memory runs out. */
static vm_slab_t *slab_new(vm_pool_t *p)
{
    uint64_t cap = p->capacity < p->first_cap ? p->first_cap
                   : p->capacity > p->max_cap ? p->max_cap
                                              : p->capacity;
    int tiny = !p->capacity && p->tiny_bytes;
    size_t bytes = tiny ? p->tiny_bytes : slab_bytes(p, cap);
    vm_slab_t *s = region_get(p, bytes, tiny ? 64 : p->align, !tiny);
    if (!s)
        return NULL;
    if (tiny)
        p->tiny = s;
    /* The page rounding may leave room for more objects: use it. */
    cap = (bytes - SLAB_HEADER) / p->obj_size;
    *s = (vm_slab_t){.cap = (uint32_t)cap, .bytes = bytes};
    vm_list_push_tail(&p->slabs, &s->all);
    p->nslabs++;
    p->capacity += cap;
    p->empty += bytes; /* until its first object goes out */
    partial_push(p, s);
    return s;
}

/* An object from a slab, or NULL. */
static void *slab_get(vm_pool_t *p)
{
    vm_slab_t *s = (vm_slab_t *)p->partial.tail; /* (its link `part` is its first member) */
    if (!s && !(s = slab_new(p)))
        return NULL;
    void *obj;
    if (s->free) {
        obj = s->free;
        s->free = *(void **)obj;
    } else {
        obj = (char *)s + SLAB_HEADER + (size_t)s->bump * p->obj_size;
        s->bump++;
    }
    if (s->used++ == 0)
        p->empty -= s->bytes;
    if (s->used == s->cap)
        partial_unlink(p, s);
    return obj;
}

void *vm_pool_get(vm_pool_t *p)
{
    void *obj;
    if (p->ncached) {
        obj = p->cache;
        p->cache = *(void **)obj;
        p->ncached--;
    } else {
        obj =
            p->big ? region_get(p, p->obj_size, p->mapped ? PAGE : 64, p->mapped) : slab_get(p);
        if (!obj)
            return NULL;
        p->nbig += p->big;
    }
    return obj;
}

/* The slab holding obj.  The tiny slab is wherever malloc put it; the others start at a
 * multiple of align.  (With no tiny slab the difference is the address itself, never below
 * tiny_bytes.) */
static vm_slab_t *slab_of(const vm_pool_t *p, const void *obj)
{
    return (uintptr_t)obj - (uintptr_t)p->tiny < p->tiny_bytes
               ? p->tiny
               : (vm_slab_t *)((uintptr_t)obj & ~(uintptr_t)(p->align - 1));
}

/* Return obj to its slab.  A slab that empties stays (on the partial list) while the empty
 * slabs hold at most RESERVE bytes; past that it is given back. */
static void slab_put(vm_pool_t *p, void *obj)
{
    vm_slab_t *s = slab_of(p, obj);
    *(void **)obj = s->free;
    s->free = obj;
    if (!s->on_partial)
        partial_push(p, s);
    if (--s->used > 0)
        return;
    if (p->empty + s->bytes <= RESERVE) {
        p->empty += s->bytes;
        return;
    }
    partial_unlink(p, s);
    slab_drop(p, s);
}

/* vm_pool_put past the cache, or of a big pool's last object out. */
__attribute__((noinline)) static void pool_put_slow(vm_pool_t *p, void *obj)
{
    if (!p->big) {
        slab_put(p, obj);
        return;
    }
    region_put(p, obj, p->obj_size, p->mapped);
    p->nbig--;
    if (p->nbig == p->ncached) /* none out */
        cache_flush(p);
}

void vm_pool_put(vm_pool_t *p, void *obj)
{
    /* (a big object goes to the cache only while others are out) */
    if (p->ncached < p->cache_max && (!p->big || p->nbig > p->ncached + 1)) {
        *(void **)obj = p->cache;
        p->cache = obj;
        p->ncached++;
        return;
    }
    pool_put_slow(p, obj);
}

void vm_pool_trim(vm_pool_t *p)
{
    if (p->big) {
        if (p->nbig == p->ncached)
            cache_flush(p);
        return;
    }
    while (p->ncached) { /* the cached objects back to their slabs */
        void *obj = p->cache;
        p->cache = *(void **)obj;
        p->ncached--;
        slab_put(p, obj);
    }
    vm_link_t *l = p->slabs.head;
    while (l) {
        vm_slab_t *s = VM_CONTAINER_OF(l, vm_slab_t, all);
        l = l->next;
        if (s->used)
            continue;
        p->empty -= s->bytes;
        partial_unlink(p, s);
        slab_drop(p, s);
    }
}

/* Is slab s among those made after the pool's first n? */
static int slab_after(const vm_pool_t *p, const vm_slab_t *s, uint64_t n)
{
    const vm_link_t *l = p->slabs.head;
    for (uint64_t i = 0; l && i < n; i++)
        l = l->next;
    for (; l; l = l->next)
        if (VM_CONTAINER_OF(l, vm_slab_t, all) == s)
            return 1;
    return 0;
}

/* Give back the slabs made after the pool's first n, which hold nothing again: their objects
 * in the cache go back to them first, the other slabs' stay cached. */
static void pool_undo(vm_pool_t *p, uint64_t n)
{
    if (p->big || p->nslabs <= n)
        return;
    void **at = &p->cache;
    while (*at) {
        void *obj = *at;
        if (slab_after(p, slab_of(p, obj), n)) {
            *at = *(void **)obj;
            p->ncached--;
            slab_put(p, obj);
        } else {
            at = (void **)obj;
        }
    }
    while (p->nslabs > n) {
        vm_slab_t *s = VM_CONTAINER_OF(p->slabs.tail, vm_slab_t, all);
        if (s->used)
            return; /* not the caller's alone: kept */
        p->empty -= s->bytes;
        partial_unlink(p, s);
        slab_drop(p, s);
    }
}

void vm_env_mark(const vm_env_t *env, vm_env_mark_t *m)
{
    m->npools = env->npools;
    for (unsigned i = 0; i < env->npools; i++)
        m->nslabs[i] = env->pools[i].nslabs;
}

void vm_env_undo(vm_env_t *env, const vm_env_mark_t *m)
{
    for (unsigned i = 0; i < env->npools; i++)
        pool_undo(&env->pools[i], i < m->npools ? m->nslabs[i] : 0);
}

void vm_env_trim(vm_env_t *env)
{
    for (unsigned i = 0; i < env->npools; i++)
        vm_pool_trim(&env->pools[i]);
}

/* The env's pools by object size (queue.h): what the storages allocate their nodes and
 * blocks from. */
vm_pool_t *vm_env_pool(vm_env_t *env, size_t obj_size)
{
    size_t rounded = (obj_size + 15) & ~(size_t)15;
    for (unsigned i = 0; i < env->npools; i++)
        if (env->pools[i].obj_size == rounded)
            return &env->pools[i];
    if (env->npools == VM_MAX_POOLS)
        return NULL;
    vm_pool_init(&env->pools[env->npools], &env->mem, obj_size);
    return &env->pools[env->npools++];
}
