/*
 * ingest/internal.h - the ingest framework's own pieces (not for formats: see format.h).
 *
 *   reader.c   bytes -> logical lines: gzip/zstd by magic bytes, \n and \r split, line limit
 *   clean.c    one logical line -> mfu__line: ANSI escapes, launcher/logging prefixes
 *   ingest.c   the session: detection, dispatch to the format, counters, errors
 */
#ifndef MFU_INGEST_INTERNAL_H
#define MFU_INGEST_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "ingest/format.h"

/* ---- reader ----------------------------------------------------------------------------- */

#define MFU__READER_CHUNK (64 * 1024)

typedef struct mfu__reader mfu__reader;

/* A reader over an open stream (not closed by the reader) or a memory block (not copied: it
 * must outlive the reader). max_line is the line limit in bytes. NULL when out of memory. */
mfu__reader *mfu__reader_file(FILE *f, size_t max_line);
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

/* ---- cleaner ---------------------------------------------------------------------------- */

/* Clean text[0..len) into buf (capacity >= len + 1) and describe it in *ln (pointers into buf).
 * lineno is copied into ln. */
void mfu__clean_line(const char *text, size_t len, long lineno, char *buf, mfu__line *ln);

/* The prefix rules for pasted logs and less common loggers (clean.c's file comment): strip one
 * from *sp and return true, else false. *sp lies in a writable buffer: a wrapper that ends the
 * line (a closing backtick, </code>) is cut off with a NUL. Part of mfu__clean_line; the
 * reference cleaner of the tests calls it too. */
bool mfu__strip_more(mfu__span *sp, mfu__line *ln);
/* After the prefixes: a closing </code> or </pre> left by a paste whose opening tag was on an
 * earlier line, cut off with a NUL. */
void mfu__strip_tail(mfu__span *sp);

/* mfu__clean_line for a line without control bytes (mfu__rline.clean) in place: text[0..len]
 * is written (the NUL after the text, trailing blanks), *ln points into text. The result is
 * mfu__clean_line's. */
void mfu__clean_line_inplace(char *text, size_t len, long lineno, mfu__line *ln);

#endif /* MFU_INGEST_INTERNAL_H */
