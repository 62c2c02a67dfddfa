/* pool.c -- accounted allocation and slab pools of fixed-size objects.
 *
 * A slab is a power-of-two sized, equally aligned region from mmap, so the slab of an object
 * is found by masking its address.  Its header (the first 64 bytes) keeps a free list and a
 * count of live objects; slabs with free objects sit on the pool's partial list.  A slab
 * that empties is unmapped, except one kept to absorb a queue that oscillates around a slab
 * boundary.  mmap gives fresh pages, so a NUMA policy set before first touch places them.
 */
#define _GNU_SOURCE
#include "pool.h"

#include <stdlib.h>
#include <sys/mman.h>

#ifdef VMATCH_HAVE_NUMA
#include <numa.h>
#include <numaif.h>
#endif

enum { SLAB_HEADER = 64, SLAB_MIN = 64 * 1024, SLAB_MIN_OBJECTS = 8, CACHE_BYTES = 8192 };

struct vm_slab {
    vm_slab_t *prev, *next;         /* partial list */
    vm_slab_t *all_prev, *all_next; /* every slab of the pool */
    void *free;                     /* returned objects, linked through their first word */
    uint32_t used;                  /* live objects */
    uint32_t bump;                  /* objects never handed out start here */
    int on_partial;
};

_Static_assert(sizeof(vm_slab_t) <= SLAB_HEADER, "slab header fits its cache line");

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
    if (p)
        m->bytes += n;
    return p;
}

void *vm_mem_calloc(vm_mem_t *m, size_t n)
{
    void *p = mem_take(m) ? calloc(1, n) : NULL;
    if (p)
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

/* An aligned region of `size` bytes (a power of two), placed as m->numa asks. */
static void *slab_map(vm_mem_t *m, size_t size)
{
    if (!mem_take(m))
        return NULL;
    /* Map twice the size and trim both ends to get a region aligned to its size. */
    char *raw =
        mmap(NULL, 2 * size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED)
        return NULL;
    char *start = (char *)(((uintptr_t)raw + size - 1) & ~(uintptr_t)(size - 1));
    if (start > raw)
        munmap(raw, (size_t)(start - raw));
    if (start + size < raw + 2 * size)
        munmap(start + size, (size_t)(raw + 2 * size - (start + size)));
#ifdef VMATCH_HAVE_NUMA
    /* Placement is a preference, set before first touch.  mbind is called directly because
     * libnuma's helpers print to the caller's stderr when the kernel refuses (containers);
     * a refusal leaves the kernel's default placement, which is still correct memory. */
    if (m->numa != VM_NUMA_OFF && vm_numa_available()) {
        unsigned long node_mask[16] = {0};
        if (m->numa >= 0)
            node_mask[m->numa / 64] = 1ul << (m->numa % 64);
        /* MPOL_PREFERRED with an empty mask means "the node of the CPU that touches it". */
        (void)mbind(start, size, MPOL_PREFERRED, node_mask, 16 * 64, 0);
    }
#endif
    m->bytes += size;
    return start;
}

static void slab_unmap(vm_mem_t *m, void *s, size_t size)
{
    munmap(s, size);
    m->bytes -= size;
}

static void partial_push(vm_pool_t *p, vm_slab_t *s)
{
    s->on_partial = 1;
    s->prev = NULL;
    s->next = p->partial;
    if (p->partial)
        p->partial->prev = s;
    p->partial = s;
}

static void partial_unlink(vm_pool_t *p, vm_slab_t *s)
{
    if (s->prev)
        s->prev->next = s->next;
    else
        p->partial = s->next;
    if (s->next)
        s->next->prev = s->prev;
    s->on_partial = 0;
}

void vm_pool_init(vm_pool_t *p, vm_mem_t *m, size_t obj_size)
{
    size_t slab = SLAB_MIN;
    obj_size = (obj_size + 15) & ~(size_t)15;
    while (slab < SLAB_HEADER + SLAB_MIN_OBJECTS * obj_size)
        slab *= 2;
    *p = (vm_pool_t){.mem = m, .obj_size = obj_size, .slab_size = slab};
    p->per_slab = (uint32_t)((slab - SLAB_HEADER) / obj_size);
    size_t cache = CACHE_BYTES / obj_size;
    p->cache_max = cache < 1 ? 1 : cache > VM_POOL_CACHE ? VM_POOL_CACHE : (uint32_t)cache;
}

void vm_pool_fini(vm_pool_t *p)
{
    vm_slab_t *s = p->slabs;
    while (s) {
        vm_slab_t *next = s->all_next;
        slab_unmap(p->mem, s, p->slab_size);
        s = next;
    }
    p->slabs = p->partial = p->spare = NULL;
    p->nslabs = 0;
    p->ncached = 0;
}

void *vm_pool_get(vm_pool_t *p)
{
    if (p->ncached)
        return p->cache[--p->ncached];
    vm_slab_t *s = p->partial;
    if (!s && p->spare) {
        s = p->spare;
        p->spare = NULL;
        partial_push(p, s);
    } else if (!s) {
        s = slab_map(p->mem, p->slab_size);
        if (!s)
            return NULL;
        *s = (vm_slab_t){.all_next = p->slabs};
        if (p->slabs)
            p->slabs->all_prev = s;
        p->slabs = s;
        p->nslabs++;
        partial_push(p, s);
    }
    void *obj;
    if (s->free) {
        obj = s->free;
        s->free = *(void **)obj;
    } else {
        obj = (char *)s + SLAB_HEADER + (size_t)s->bump * p->obj_size;
        s->bump++;
    }
    if (++s->used == p->per_slab)
        partial_unlink(p, s);
    return obj;
}

void vm_pool_put(vm_pool_t *p, void *obj)
{
    if (p->ncached < p->cache_max) {
        p->cache[p->ncached++] = obj;
        return;
    }
    vm_slab_t *s = (vm_slab_t *)((uintptr_t)obj & ~(uintptr_t)(p->slab_size - 1));
    *(void **)obj = s->free;
    s->free = obj;
    if (!s->on_partial)
        partial_push(p, s);
    if (--s->used > 0)
        return;
    partial_unlink(p, s);
    if (!p->spare) {
        p->spare = s;
        return;
    }
    if (s->all_prev)
        s->all_prev->all_next = s->all_next;
    else
        p->slabs = s->all_next;
    if (s->all_next)
        s->all_next->all_prev = s->all_prev;
    p->nslabs--;
    slab_unmap(p->mem, s, p->slab_size);
}
