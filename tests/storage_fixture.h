/* storage_fixture.h -- one storage queue on its own environment, for the storage tests
 * (test_storage.c, test_blocks.c). */
#ifndef VM_STORAGE_FIXTURE_H
#define VM_STORAGE_FIXTURE_H

#include "check.h"
#include "spec.h"
#include "vmatch.h"

#include <stdint.h>
#include <string.h>

#define P(i) ((void *)(uintptr_t)(((i) + 1) * 8))
#define ALL  (~(vmatch_bits_t)0)

/* Every storage, at the edges of its block key and with each kernel (a kernel the machine
 * lacks is skipped with a note by the test). */
static const char *const storage_specs[] = {"storage=ll",
                                            "storage=lla",
                                            "storage=lla lla.block=4",
                                            "storage=lla lla.block=100",
                                            "storage=lla lla.block=1024",
                                            "storage=llv llv.block=64",
                                            "storage=llv simd=scalar llv.block=192",
                                            "storage=llv simd=avx2 llv.block=128",
                                            "storage=llv simd=avx512 llv.block=4096"};

typedef struct fixture {
    vm_config_t cfg;
    vm_env_t env;
    vm_queue_t *q;
} fixture_t;

static inline void setup(fixture_t *f, const char *spec, int side)
{
    REQUIRE(vm_spec_parse(spec, &f->cfg) == VMATCH_OK);
    f->env = (vm_env_t){.cfg = &f->cfg, .mem = {.numa = VM_NUMA_OFF, .fail_after = -1}};
    REQUIRE(f->cfg.storage->create(&f->env, side, &f->q) == VMATCH_OK);
}

static inline void teardown(fixture_t *f)
{
    f->q->ops->destroy(f->q);
    for (unsigned i = 0; i < f->env.npools; i++)
        vm_pool_fini(&f->env.pools[i]);
    CHECK_EQ(f->env.mem.bytes, 0); /* nothing leaked past the pools */
}

/* Find on the PRQ (entry care) or the UMQ (search care): returns the payload or NULL. */
static inline void *find(vm_queue_t *q, vmatch_bits_t key, vmatch_bits_t care, vm_hit_t *hit,
                         uint64_t *seen)
{
    *seen = 0;
    return q->ops->find(q, key, care, hit, seen) ? hit->payload : NULL;
}

static inline int take(vm_queue_t *q, vmatch_bits_t key)
{
    vm_hit_t h;
    uint64_t seen = 0;
    if (!q->ops->find(q, key, ALL, &h, &seen))
        return 0;
    q->ops->remove(q, &h);
    return 1;
}

/* True when spec names a kernel this CPU cannot run (said once, on stdout). */
static inline int kernel_missing(const char *spec)
{
    const char *k = strstr(spec, "simd=");
    char name[16];
    if (!k)
        return 0;
    snprintf(name, sizeof name, "%.*s", (int)strcspn(k + 5, " "), k + 5);
    if (vmatch_simd_available(name) == 1)
        return 0;
    printf("\"%s\" NOT RUN: this CPU or build has no %s kernel\n", spec, name);
    return 1;
}

#endif
