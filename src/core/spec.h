/* spec.h -- the spec string: parsed into a vm_config_t, and written back resolved. */
#ifndef VM_SPEC_H
#define VM_SPEC_H

#include "queue.h"

#include <stddef.h>

/* Parse spec into *cfg (defaults first).  VMATCH_OK, with *cfg to release with vm_spec_free,
 * or an error with vm_fail's message and nothing to release. */
int vm_spec_parse(const char *spec, vm_config_t *cfg);
/* Release what a parsed config holds (the profile path). */
void vm_spec_free(vm_config_t *cfg);
/* Write the resolved spec of cfg into buf (terminated when len > 0): the engine's keys and
 * those of its storage's and policy's modules.  Returns the length it needs, as snprintf. */
size_t vm_spec_describe(const vm_config_t *cfg, char *buf, size_t len);
/* The spec words that give a layout of these widths into buf: "layout=NAME" for a named
 * layout's (the default's included), else "layout.ctx=C layout.src=S layout.tag=T". */
void vm_layout_words(uint32_t ctx_bits, uint32_t src_bits, uint32_t tag_bits, char *buf,
                     size_t len);

#endif
