/*
 * ingest/internal.h - the ingest framework's own pieces (not for formats: see format.h).
 *
 *   reader.c   bytes -> logical lines: gzip/zstd by magic bytes, \n and \r split, line limit
 *              (declared in ingest/reader.h, which src/trace reads its traces with too)
 *   clean.c    one logical line -> mfu__line: ANSI escapes, launcher/logging prefixes
 *   ingest.c   the session: detection, dispatch to the format, counters, errors
 */
#ifndef MFU_INGEST_INTERNAL_H
#define MFU_INGEST_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "ingest/format.h"
#include "ingest/reader.h"

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
