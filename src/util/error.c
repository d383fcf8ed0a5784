/*
 * error.c - mfu_strerror and mfu_version.
 */
#include "mfu/common.h"

const char *mfu_strerror(mfu_status code)
{
    switch (code) {
    case MFU_OK: return "no error";
    case MFU_E_INVALID: return "invalid argument";
    case MFU_E_NOMEM: return "out of memory";
    case MFU_E_IO: return "input/output error";
    case MFU_E_PARSE: return "malformed input";
    case MFU_E_MISSING: return "required field missing";
    case MFU_E_UNKNOWN: return "unknown name";
    case MFU_E_AMBIGUOUS: return "ambiguous name";
    case MFU_E_UNSUPPORTED: return "unsupported";
    case MFU_E_LIMIT: return "size limit exceeded";
    case MFU_E_EMPTY: return "no usable input";
    case MFU_E_RANGE: return "number out of range";
    }
    return "unknown status code";
}

const char *mfu_version(void)
{
    return "0.1.0";
}
