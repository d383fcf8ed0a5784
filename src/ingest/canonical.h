/*
 * ingest/canonical.h - the canonical JSON-lines writer (fmt_mfu.c) into memory, for a writer
 * that batches its own writes (the monitor: src/monitor/monitor.c). The public writers are
 * mfu_run_write_jsonl and mfu_run_write_jsonl_rows (mfu/ingest.h).
 */
#ifndef MFU_INGEST_CANONICAL_H
#define MFU_INGEST_CANONICAL_H

#include <stddef.h>

#include "mfu/common.h"
#include "mfu/run.h"

/* A growable byte buffer: zero-initialise; free p with free(). */
typedef struct mfu__wbuf {
    char *p;
    size_t n, cap;
} mfu__wbuf;

/* Room for need more bytes at b->p + b->n: the capacity doubled (from 64 KiB) until they fit.
 * false when out of memory (b unchanged). */
bool mfu__wbuf_room(mfu__wbuf *b, size_t need);

/* Append rows [from, mfu_run_count(run)) of run to b exactly as mfu_run_write_jsonl_rows
 * writes them without a header (each row with its per-rank observations, whole lines only).
 * On MFU_E_NOMEM b keeps what it had before the call. Errors: MFU_E_INVALID (NULL),
 * MFU_E_NOMEM. */
mfu_status mfu__run_jsonl_rows_to_mem(const mfu_run *run, size_t from, mfu__wbuf *b,
                                      mfu_error *err);

/* The most bytes mfu__jsonl_row writes (a row with every field at its longest, and room for
 * the number printer's 32-byte scratch at the last value). */
#define MFU__JSONL_ROW_MAX 2048

/* Write the canonical row object of s (a row as mfu_run_get reads it: no infinities), with
 * its "\n", into d (room for MFU__JSONL_ROW_MAX bytes), exactly the bytes
 * mfu_run_write_jsonl_rows writes for that row without its per-rank observations; returns the
 * length. From the step in hand: the monitor's record writes its row without reading it back
 * from the run. */
size_t mfu__jsonl_row(char *d, const mfu_step *s);

#endif /* MFU_INGEST_CANONICAL_H */
