/*
 * util/embed.h - data files compiled into the library (see cmake/embed.cmake).
 * A table generated at build time is an array of these, ended by an entry with name == NULL.
 * bytes is NUL-terminated (size excludes the NUL), so text files can be used as C strings.
 */
#ifndef MFU_EMBED_H
#define MFU_EMBED_H
#include <stddef.h>

struct mfu__embedded {
    const char *name;           /* file name without directory, e.g. "llama3-8b.json" */
    const unsigned char *bytes; /* contents, followed by a NUL byte */
    size_t size;                /* bytes, without the trailing NUL */
};

#endif
