/* pool.h -- per-engine memory: byte accounting, NUMA placement and fixed-size block pools.
 *
 * Every allocation of an engine goes through a vm_mem_t so that vmatch_stats can report the
 * bytes held, tests can make the n-th allocation fail, and queue blocks land on the NUMA
 * node the spec asks for.  Queue entries and blocks come from vm_pool_t slabs, never from
 * one malloc per entry.
 */
#ifndef VM_POOL_H
#define VM_POOL_H

#include <stddef.h>
#include <stdint.h>

enum { VM_NUMA_OFF = -2, VM_NUMA_LOCAL = -1 }; /* or a node number >= 0 */

typedef struct vm_mem {
    uint64_t bytes;     /* bytes held now: slabs plus tables */
    int numa;           /* VM_NUMA_OFF, VM_NUMA_LOCAL or a node */
    int64_t fail_after; /* test hook: allocations left before one fails; < 0: never */
} vm_mem_t;

/* malloc / free with accounting; vm_mem_free needs the size given to vm_mem_alloc. */
void *vm_mem_alloc(vm_mem_t *m, size_t n);
void *vm_mem_calloc(vm_mem_t *m, size_t n);
void vm_mem_free(vm_mem_t *m, void *p, size_t n);

/* True when the library was built with libnuma and the kernel supports it. */
int vm_numa_available(void);
/* Number of NUMA nodes (1 without libnuma). */
int vm_numa_nodes(void);

typedef struct vm_slab vm_slab_t;

enum { VM_POOL_CACHE = 32 };

typedef struct vm_pool {
    vm_mem_t *mem;
    size_t obj_size;    /* rounded up to 16; a multiple of 64 gives 64-byte aligned objects */
    size_t slab_size;   /* power of two; slabs are aligned to it */
    uint32_t per_slab;  /* objects per slab */
    vm_slab_t *partial; /* slabs holding objects and having a free one */
    vm_slab_t *spare;   /* one empty slab kept for reuse, or NULL */
    vm_slab_t *slabs;   /* every slab, for vm_pool_fini */
    uint64_t nslabs;
    /* Recently returned objects, handed out again first (LIFO, so they are warm in cache).
     * A queue that oscillates around one length then never touches slab bookkeeping.  At
     * most cache_max objects and about 8 KiB are held this way. */
    uint32_t ncached, cache_max;
    void *cache[VM_POOL_CACHE];
} vm_pool_t;

/* Set up a pool of objects of obj_size bytes (no memory is taken until the first get). */
void vm_pool_init(vm_pool_t *p, vm_mem_t *m, size_t obj_size);
/* Give every slab back. */
void vm_pool_fini(vm_pool_t *p);
/* An object, or NULL when memory runs out. */
void *vm_pool_get(vm_pool_t *p);
/* Return an object.  Past the cache, a slab that empties is unmapped unless it is the only
 * empty one. */
void vm_pool_put(vm_pool_t *p, void *obj);

#endif
