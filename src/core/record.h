/* record.h -- what an engine records for its user: the trace of its matching calls
 * (trace.record=on, record.c) and the files vmatch_save_recordings writes (profile.out,
 * trace.out), with the paths' %r and %p.  For src/core alone (engine.c, profile.c, stats.c). */
#ifndef VM_RECORD_H
#define VM_RECORD_H

#include "queue.h"

#include <stddef.h>
#include <stdint.h>

/* Expand pattern, the value of spec key `key`, into out (len bytes): %r is the rank (spec
 * key rank, else OMPI_COMM_WORLD_RANK, PMIX_RANK or PMI_RANK from the environment), %p the
 * process id, %% a percent sign.  VMATCH_OK, or VMATCH_EINVAL with vm_fail's message: another
 * %x, %r without a rank, a result of len bytes or more. */
int vm_path_expand(const vm_config_t *cfg, const char *key, const char *pattern, char *out,
                   size_t len);

/* The rank %r expands to (cfg->rank, else the launcher's environment), or -1. */
int64_t vm_rank_of(const vm_config_t *cfg);

/* This process's program name (/proc/self/comm), "" when the system does not say. */
void vm_program_name(char *buf, size_t len);

/* Set up e's recordings at create, once its calls are chosen and before threads wrap them:
 * the output paths expanded, and with trace.record=on the recording calls in front of e's
 * calls.  VMATCH_OK, or VMATCH_EINVAL (a path) / VMATCH_ENOMEM with vm_fail's message. */
int vm_record_create(vmatch_engine_t *e);
void vm_record_destroy(vmatch_engine_t *e);

/* Figure `which` of the recordings: 0 operations the trace recorded, 1 operations left out.
 * 0 for an engine that records no trace. */
uint64_t vm_record_stat(const vmatch_engine_t *e, int which);

/* Write e's profile to path (profile.c; the caller holds the engine). */
int vm_profile_write(const vmatch_engine_t *e, const char *path);

#endif
