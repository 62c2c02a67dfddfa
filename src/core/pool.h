/* pool.h -- per-engine memory: byte accounting, NUMA placement and fixed-size block pools.
 *
 * Every allocation of an engine goes through a vm_mem_t so that vmatch_stats can report the
 * bytes held, tests can make the n-th allocation fail, and queue blocks land on the NUMA
 * node the spec asks for.  Queue entries and most blocks come from vm_pool_t pools, never
 * from one malloc per entry; the blocks of a queue's middle sizes, one per queue at most,
 * from vm_mem_alloc_line (docs/storages.md, "Block sizes").
 */
#ifndef VM_POOL_H
#define VM_POOL_H

#include "list.h"

#include <stddef.h>
#include <stdint.h>

enum { VM_NUMA_OFF = -2, VM_NUMA_LOCAL = -1 }; /* or a node number >= 0 */

typedef struct vm_mem {
    uint64_t bytes;     /* bytes held now: slabs plus tables */
    int numa;           /* VM_NUMA_OFF, VM_NUMA_LOCAL or a node */
    int64_t fail_after; /* test hook: allocations left before one fails; < 0: never */
    uint32_t kept;      /* first blocks kept by empty queues (lla, llv), at most VM_MEM_KEPT
                           + keep_more */
    uint32_t keep_more; /* more first blocks a policy lets its empty queues keep: cluster's
                           few queues each empty and refill on every match (docs/cluster.md) */
} vm_mem_t;

/* Empty queues of an engine that may keep their first block for the next append: a queue
 * that empties and refills on every match (a 1-entry queue) then takes no block from a pool,
 * while a policy with thousands of queues (pnp) pays for at most this many.  Measured in
 * docs/storages.md. */
enum { VM_MEM_KEPT = 8 };

/* May one more empty queue keep its first block? */
static inline int vm_mem_may_keep(const vm_mem_t *m)
{
    return m->kept < VM_MEM_KEPT + m->keep_more;
}

/* malloc / free with accounting; vm_mem_free needs the size given to vm_mem_alloc. */
void *vm_mem_alloc(vm_mem_t *m, size_t n);
void *vm_mem_calloc(vm_mem_t *m, size_t n);
void vm_mem_free(vm_mem_t *m, void *p, size_t n);

/* True when the library was built with libnuma and the kernel supports it. */
int vm_numa_available(void);
/* Number of NUMA nodes (1 without libnuma). */
int vm_numa_nodes(void);

/* A cache-line aligned block of n bytes from malloc, with accounting (n + VM_LINE_PAD: the
 * alignment costs up to a line): for objects too few of a size to fill a slab (the middle
 * blocks of a growing queue).  Release with vm_mem_free_line and the same n. */
enum { VM_LINE_PAD = 64 };
void *vm_mem_alloc_line(vm_mem_t *m, size_t n);
void vm_mem_free_line(vm_mem_t *m, void *p, size_t n);

typedef struct vm_slab vm_slab_t;

enum { VM_POOL_CACHE = 32 }; /* most objects the cache of returned ones holds */

typedef struct vm_pool {
    vm_mem_t *mem;
    uint32_t obj_size;   /* rounded up to 16; a multiple of 64 gives 64-byte aligned objects */
    uint32_t align;      /* power of two, at least the largest slab: a slab starts there */
    uint32_t first_cap;  /* objects of the first page-sized slab */
    uint32_t max_cap;    /* objects of the largest slab (64 KiB) */
    uint32_t tiny_bytes; /* the first slab when objects are small: 1 KiB or less, so that a
                            few objects do not take a page; 0: none */
    uint8_t big;         /* objects over half a page: each its own allocation, no slabs */
    uint8_t mapped;      /* big objects from mmap, placed on the node m->numa names */
    vm_list_t partial;   /* slabs with a free object, by their link `part` */
    vm_list_t slabs;     /* every slab, for vm_pool_fini, by their link `all` */
    vm_slab_t *tiny;     /* the tiny slab (found by address range, not alignment), or NULL */
    uint64_t nslabs;
    uint64_t capacity; /* objects the slabs hold in all */
    uint64_t bytes;    /* bytes of the slabs, or of the big objects */
    uint64_t nbig;     /* big objects allocated, in the cache or out */
    uint64_t empty;    /* bytes of the empty slabs kept (on the partial list) */
    /* Recently returned objects, handed out again first (LIFO, linked through their first
     * word, so they are warm in cache).  A queue that oscillates around one length then never
     * touches slab bookkeeping.  At most cache_max objects and about 8 KiB. */
    void *cache;
    uint32_t ncached, cache_max;
} vm_pool_t;

/* Set up a pool of objects of obj_size bytes (no memory is taken until the first get). */
void vm_pool_init(vm_pool_t *p, vm_mem_t *m, size_t obj_size);
/* Give every slab back. */
void vm_pool_fini(vm_pool_t *p);
/* An object, or NULL when memory runs out. */
void *vm_pool_get(vm_pool_t *p);
/* Return an object.  Past the cache, a slab that empties is given back unless the empty
 * slabs kept hold less than 64 KiB; when the last big object out comes back, it and the
 * cache are given back. */
void vm_pool_put(vm_pool_t *p, void *obj);
/* Give back what the pool keeps for later: its cache of returned objects and its empty
 * slabs (policy=hash, once its tables shrank after quiet traffic). */
void vm_pool_trim(vm_pool_t *p);

#endif
