/* hooks.h -- the engine's test hooks, for tests/ and fuzz/: what they reach of an engine
 * without its private state (engine.h). */
#ifndef VM_HOOKS_H
#define VM_HOOKS_H

#include "queue.h"
#include "vmatch.h"

/* The engine's memory, to make its allocations fail (vm_mem_t.fail_after). */
vm_mem_t *vm_engine_mem(vmatch_engine_t *e);
/* The policy's state of one side (VM_PRQ or VM_UMQ), to check its structure. */
vm_side_t *vm_engine_side(vmatch_engine_t *e, int side);
/* The policy's exchange, which the engine calls for every post and arrival (vm_policy_t):
 * make it fn (a test's, that counts the calls and calls the policy's) and return the one it
 * was; NULL for a policy without one, and then nothing changes. */
typedef int vm_exchange_fn(vm_call_t *call, vmatch_bits_t bits, vmatch_bits_t care,
                           vm_side_t *search, void *payload, vm_side_t *queue);
vm_exchange_fn *vm_engine_swap_exchange(vmatch_engine_t *e, vm_exchange_fn *fn);

#endif
