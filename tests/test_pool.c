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
    CHECK_EQ(m.bytes, p.bytes);
    /* Each new slab holds as many objects as the pool had (up to 64 KiB): the slabs hold at
     * most about twice what is handed out, and they are few. */
    CHECK(p.capacity >= MANY && p.capacity <= 2 * (uint64_t)MANY + p.max_cap);
    CHECK(m.bytes <= (uint64_t)MANY * size * 2 + 2 * 65536);
    CHECK(p.nslabs >= 2 && p.nslabs <= MANY / p.max_cap + 16);

    /* The last object returned is the next one handed out. */
    vm_pool_put(&p, objs[7]);
    CHECK(vm_pool_get(&p) == objs[7]);

    /* Returning everything keeps the slabs of the objects in the cache of recently returned
     * ones (at most cache_max, about 8 KiB) and empty slabs of at most 64 KiB in all, so a
     * queue that fills and drains again maps nothing. */
    CHECK(p.cache_max >= 1 && p.cache_max <= VM_POOL_CACHE);
    CHECK(p.cache_max * p.obj_size <= 8192 || p.cache_max == 1);
    for (int i = 0; i < MANY; i++)
        vm_pool_put(&p, objs[i]);
    CHECK_EQ(p.ncached, p.cache_max);
    CHECK(p.empty <= 65536);
    CHECK(m.bytes <= p.empty + (uint64_t)p.cache_max * 65536 + 65536);
    /* The cache hands out its newest first, without allocating. */
    uint64_t held = m.bytes;
    m.fail_after = 0;
    void *again = vm_pool_get(&p);
    CHECK(again == objs[p.cache_max - 1]);
    CHECK_EQ(m.bytes, held);
    m.fail_after = -1;
    vm_pool_put(&p, again);
    vm_pool_fini(&p);
    CHECK_EQ(m.bytes, 0);

    /* A fresh pool's first slab: 1 KiB from malloc (and the malloc alignment pad) when two
     * objects fit, else a page, then slabs as large as all before them. */
    vm_pool_init(&p, &m, size);
    void *one = vm_pool_get(&p);
    REQUIRE(one != NULL);
    CHECK_EQ((uintptr_t)one % align, 0);
    CHECK_EQ(p.tiny_bytes != 0, size <= (1024 - 64) / 2);
    CHECK_EQ(m.bytes, p.tiny_bytes ? p.tiny_bytes + VM_LINE_PAD : 4096);
    CHECK(p.tiny_bytes <= 1024);
    /* Drained, it keeps the slab, so a short queue that empties and refills allocates
     * nothing. */
    vm_pool_put(&p, one);
    m.fail_after = 0;
    CHECK(vm_pool_get(&p) == one);
    m.fail_after = -1;
    vm_pool_put(&p, one);
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
    CHECK_EQ(served, (1024 - 64) / 64); /* the first slab is 1 KiB from malloc */
    CHECK_EQ(m.bytes, 1024 + VM_LINE_PAD);
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

/* Objects over half a page are allocated one by one, with a small cache. */
static void test_large_objects(void)
{
    enum { SIZE = 40000 };
    vm_mem_t m = {.numa = VM_NUMA_LOCAL, .fail_after = -1};
    vm_pool_t p;
    vm_pool_init(&p, &m, SIZE);
    CHECK(p.big);
    CHECK_EQ(p.cache_max, 1);
    void *o[3];
    for (int i = 0; i < 3; i++) {
        o[i] = vm_pool_get(&p);
        REQUIRE(o[i] != NULL);
        CHECK_EQ((uintptr_t)o[i] % 64, 0);
        memset(o[i], 1, SIZE);
        CHECK_EQ(m.bytes, (i + 1) * (SIZE + VM_LINE_PAD));
    }
    vm_pool_put(&p, o[0]); /* kept in the cache */
    CHECK_EQ(m.bytes, 3 * (SIZE + VM_LINE_PAD));
    CHECK(vm_pool_get(&p) == o[0]);
    vm_pool_put(&p, o[0]);
    vm_pool_put(&p, o[1]); /* past the cache: freed */
    CHECK_EQ(m.bytes, 2 * (SIZE + VM_LINE_PAD));
    vm_pool_put(&p, o[2]); /* the last one out: the cache is emptied too */
    CHECK_EQ(m.bytes, 0);
    m.fail_after = 0; /* a new object is an allocation */
    CHECK(vm_pool_get(&p) == NULL);
    m.fail_after = -1;
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
