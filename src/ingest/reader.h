/*
 * ingest/reader.h - the ingest module's byte reader (reader.c): plain, gzip or zstd input by
 * its magic bytes, cut into logical lines (\n and \r split, a line limit) or handed out in
 * decoded blocks. Cross-module header: the session (ingest.c) reads logs with it, src/trace
 * reads profiler traces with it (mfu__reader_block); not installed.
 */
#ifndef MFU_INGEST_READER_H
#define MFU_INGEST_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "mfu/common.h"

#define MFU__READER_CHUNK (64 * 1024)

typedef struct mfu__reader mfu__reader;

/* A reader over an open stream (not closed by the reader) or a memory block (not copied: it
 * must outlive the reader). max_line is the line limit in bytes. NULL when out of memory. */
mfu__reader *mfu__reader_file(FILE *f, size_t max_line);
/* The compression the first n bytes of a stream announce: "gzip" (1f 8b), "zstd" (28 b5 2f fd)
 * or NULL (plain text: read as it is). The readers pick their decoder by it. */
const char *mfu__reader_compression(const unsigned char *b, size_t n);
mfu__reader *mfu__reader_mem(const void *data, size_t n, size_t max_line);
void mfu__reader_free(mfu__reader *r);

/* One logical line: text between \n or \r separators (empty pieces are not returned). */
typedef struct mfu__rline {
    const char *text; /* not NUL-terminated; valid until the next call */
    size_t len;
    long lineno;   /* physical line (counts \n) */
    bool too_long; /* the line exceeded max_line: text is empty, the line was dropped */
    bool clean;    /* text holds no byte the cleaner removes (mfu__has_ctrl is false); false
                      when not known */
    char *wtext;   /* text itself when a buffer of the reader's holds it and text[len] may be
                      written (the separator or spare room is there): mfu__clean_line_inplace
                      may clean it; NULL when text lies in the caller's memory (a memory
                      source) */
} mfu__rline;

/* Next logical line. Returns MFU_OK with *eof false and *out filled, MFU_OK with *eof true at
 * the end, or MFU_E_IO (corrupt compressed data, read error) / MFU_E_PARSE (binary data) with
 * err filled (message without the input name; the caller prefixes it). */
mfu_status mfu__reader_next(mfu__reader *r, mfu__rline *out, bool *eof, mfu_error *err);

/* The next decoded block as it is, not cut into lines (for readers of other structured text,
 * such as src/trace's JSON tokenizer): *p and *n are valid until the next call; MFU_OK with
 * *eof true at the end. Errors as mfu__reader_next. A reader is read either by blocks or by
 * lines, never both. */
mfu_status mfu__reader_block(mfu__reader *r, const char **p, size_t *n, bool *eof, mfu_error *err);

/* After the end: physical lines seen, whether the last one had no newline, the compression
 * ("", "gzip", "zstd") and the largest line buffer held. */
long mfu__reader_lines(const mfu__reader *r);
bool mfu__reader_truncated(const mfu__reader *r);
const char *mfu__reader_codec(const mfu__reader *r);
size_t mfu__reader_peak_line(const mfu__reader *r);

/* Decoded bytes handed out as lines so far (separators included), or waiting in the line
 * buffer: for estimating how much of an input is left. */
size_t mfu__reader_consumed(const mfu__reader *r);

#endif /* MFU_INGEST_READER_H */
