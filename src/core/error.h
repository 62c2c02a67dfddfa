/* error.h -- the failure message behind vmatch_last_error. */
#ifndef VM_ERROR_H
#define VM_ERROR_H

/* Record a failure for vmatch_last_error and return code (printf-style message). */
int vm_fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
