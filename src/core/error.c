/* error.c -- result codes and the per-thread message of the last failure. */
#include "error.h"

#include "vmatch.h"

#include <stdarg.h>

#include <stdio.h>

static _Thread_local char last_error[256];

int vm_fail(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return code;
}

const char *vmatch_last_error(void)
{
    return last_error;
}

const char *vmatch_strerror(int code)
{
    switch (code) {
    case VMATCH_OK: /* == VMATCH_QUEUED */
        return "VMATCH_OK / VMATCH_QUEUED: success (a post or arrival: its entry was queued)";
    case VMATCH_MATCHED:
        return "VMATCH_MATCHED: matched";
    case VMATCH_DEFERRED:
        return "VMATCH_DEFERRED: left in the inbox, matched later (threads=multi)";
    case VMATCH_EINVAL:
        return "VMATCH_EINVAL: invalid argument";
    case VMATCH_ENOMEM:
        return "VMATCH_ENOMEM: out of memory";
    case VMATCH_ENOTFOUND:
        return "VMATCH_ENOTFOUND: not found";
    case VMATCH_EUNSUPPORTED:
        return "VMATCH_EUNSUPPORTED: not supported on this machine or build";
    case VMATCH_EIO:
        return "VMATCH_EIO: input/output error";
    default:
        return "unknown vmatch result code";
    }
}
