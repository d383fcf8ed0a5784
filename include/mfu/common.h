/*
 * mfu/common.h - status codes, the error struct and conventions shared by every public header.
 *
 * Ownership rule (stated once, followed everywhere): an object made by mfu_X_new() is freed by
 * mfu_X_free(), which accepts NULL. A function keeps no pointer it was passed unless its name
 * says so (..._borrow, ..._take). Strings returned as `const char *` belong to the object they
 * came from and live as long as it does.
 *
 * Errors: fallible calls return mfu_status (MFU_OK == 0). Detail goes into an optional
 * caller-owned mfu_error (pass NULL to ignore it). The library never prints and never exits.
 *
 * Units live in names: *_s seconds, *_flops FLOPs (a count), *_flops_per_s FLOP/s, ratios are
 * fractions 0..1 (the CLI prints them as %).
 *
 * Thread safety: functions are re-entrant; an object is used by one thread at a time.
 */
#ifndef MFU_COMMON_H
#define MFU_COMMON_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(MFU_BUILDING_LIBRARY) && defined(__GNUC__)
#define MFU_API __attribute__((visibility("default")))
#else
#define MFU_API
#endif

/* Status codes. Only ever appended to: the numbers are part of the ABI. */
typedef enum mfu_status {
    MFU_OK = 0,
    MFU_E_INVALID = 1,     /* an argument is out of its domain (zero, negative, NULL) */
    MFU_E_NOMEM = 2,       /* an allocation failed */
    MFU_E_IO = 3,          /* reading or writing a file failed */
    MFU_E_PARSE = 4,       /* input text is malformed (line/column in mfu_error) */
    MFU_E_MISSING = 5,     /* a required field is absent (name in mfu_error.field) */
    MFU_E_UNKNOWN = 6,     /* a name (device, model, convention, format) is not known */
    MFU_E_AMBIGUOUS = 7,   /* a name matches more than one entry */
    MFU_E_UNSUPPORTED = 8, /* a valid request this version cannot answer */
    MFU_E_LIMIT = 9,       /* a named size limit was hit (see the module's docs) */
    MFU_E_EMPTY = 10,      /* the input had nothing usable */
    MFU_E_RANGE = 11       /* a number is outside what can be represented or is not finite */
} mfu_status;

#define MFU_ERROR_MESSAGE_MAX 512
#define MFU_ERROR_FIELD_MAX 64

/* Detail of a failure. Zero-initialise before use; every fallible call overwrites it on error
 * and leaves it untouched on success. */
typedef struct mfu_error {
    mfu_status code;
    long line;                           /* 1-based input line, 0 when not applicable */
    long column;                         /* 1-based column (byte), 0 when not applicable */
    char field[MFU_ERROR_FIELD_MAX];     /* the field or option concerned, "" when none */
    char message[MFU_ERROR_MESSAGE_MAX]; /* one line, no trailing newline, names the fix */
} mfu_error;

/* A short static description of a status code ("invalid argument", ...). Never NULL. */
MFU_API const char *mfu_strerror(mfu_status code);

/* The library version as "MAJOR.MINOR.PATCH". Never NULL. */
MFU_API const char *mfu_version(void);

#ifdef __cplusplus
}
#endif
#endif /* MFU_COMMON_H */
