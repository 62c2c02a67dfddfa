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

#endif
