/* Unit tests of the block pool and the accounted allocator (src/core/pool.c). */
#include "check.h"
#include "pool.h"

#include <stdint.h>
#include <string.h>

enum { MANY = 20000 };

static void *objs[MANY];

static int by_address(const void *a, const void *b)
{
    uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;
    return (x > y) - (x < y);
}

static void test_get_put(size_t size, size_t align)
{
    vm_mem_t m = {.numa = VM_NUMA_OFF, .fail_after = -1};
    vm_pool_t p;
    vm_pool_init(&p, &m, size);
    CHECK_EQ(m.bytes, 0); /* nothing until the first get */
    for (int i = 0; i < MANY; i++) {
        objs[i] = vm_pool_get(&p);
        REQUIRE(objs[i] != NULL);
        CHECK_EQ((uintptr_t)objs[i] % align, 0);
        memset(objs[i], 0xA5, size); /* the whole object is usable */
    }
    /* Objects do not overlap: sorted addresses are at least `size` apart. */
    static uintptr_t sorted[MANY];
    for (int i = 0; i < MANY; i++)
        sorted[i] = (uintptr_t)objs[i];
    qsort(sorted, MANY, sizeof sorted[0], by_address);
    int overlap = 0;
    for (int i = 1; i < MANY; i++)
        overlap += sorted[i] - sorted[i - 1] < size;
    CHECK_EQ(overlap, 0);
    CHECK(m.bytes >= (uint64_t)MANY * size);
    CHECK(m.bytes <= (uint64_t)MANY * size * 2 + 2 * p.slab_size);
    uint64_t slabs = p.nslabs;
    CHECK(slabs >= 2);

    /* The last object returned is the next one handed out. */
    vm_pool_put(&p, objs[7]);
    CHECK(vm_pool_get(&p) == objs[7]);

    /* Returning everything unmaps every slab but the spare and those holding the objects
     * kept in the cache of recently returned ones (at most cache_max, about 8 KiB). */
    CHECK(p.cache_max >= 1 && p.cache_max <= VM_POOL_CACHE);
    CHECK(p.cache_max * p.obj_size <= 8192 || p.cache_max == 1);
    for (int i = 0; i < MANY; i++)
        vm_pool_put(&p, objs[i]);
    CHECK_EQ(p.ncached, p.cache_max);
    CHECK(p.nslabs >= 1 && p.nslabs <= 1 + p.cache_max);
    CHECK_EQ(m.bytes, p.nslabs * p.slab_size);
    /* The cache filled with the first objects returned and hands out its newest first,
     * without mapping a slab. */
    void *again = vm_pool_get(&p);
    CHECK(again == objs[p.cache_max - 1]);
    CHECK_EQ(m.bytes, p.nslabs * p.slab_size);
    vm_pool_put(&p, again);
    vm_pool_fini(&p);
    CHECK_EQ(m.bytes, 0);
}

static void test_failure(void)
{
    vm_mem_t m = {.numa = VM_NUMA_OFF, .fail_after = -1};
    vm_pool_t p;
    vm_pool_init(&p, &m, 64);
    void *first = vm_pool_get(&p);
    REQUIRE(first != NULL);
    /* With allocations failing, a pool still serves from the slab it has ... */
    m.fail_after = 0;
    uint32_t served = 1;
    while (vm_pool_get(&p))
        served++;
    CHECK_EQ(served, p.per_slab);
    /* ... and a new slab (the next allocation) fails cleanly. */
    CHECK(vm_pool_get(&p) == NULL);
    CHECK_EQ(p.nslabs, 1);
    m.fail_after = -1;
    CHECK(vm_pool_get(&p) != NULL);
    CHECK_EQ(p.nslabs, 2);
    vm_pool_fini(&p);
    CHECK_EQ(m.bytes, 0);

    /* fail_after = n lets n allocations through. */
    m.fail_after = 2;
    void *a = vm_mem_alloc(&m, 10), *b = vm_mem_alloc(&m, 20), *c = vm_mem_alloc(&m, 30);
    CHECK(a && b && !c);
    CHECK_EQ(m.bytes, 30);
    vm_mem_free(&m, a, 10);
    vm_mem_free(&m, b, 20);
    vm_mem_free(&m, NULL, 99);
    CHECK_EQ(m.bytes, 0);
}

static void test_large_objects(void)
{
    vm_mem_t m = {.numa = VM_NUMA_LOCAL, .fail_after = -1};
    vm_pool_t p;
    vm_pool_init(&p, &m, 40000);
    CHECK(p.per_slab >= 8);
    CHECK_EQ(p.slab_size & (p.slab_size - 1), 0);
    void *o = vm_pool_get(&p);
    REQUIRE(o != NULL);
    memset(o, 1, 40000);
    vm_pool_put(&p, o);
    vm_pool_fini(&p);
    CHECK_EQ(m.bytes, 0);
}

int main(void)
{
    test_get_put(48, 16);
    test_get_put(64, 64);
    test_get_put(1088, 64);
    test_failure();
    test_large_objects();
    return check_report("test_pool");
}
