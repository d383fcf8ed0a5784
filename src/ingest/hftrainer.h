/*
 * ingest/hftrainer.h - the Hugging Face Trainer console reader shared by the formats "hf"
 * (fmt_hf.c) and "axolotl" (fmt_axolotl.c), which differ only in detection and convention.
 * See hftrainer.c for the lines read and how rows are numbered.
 */
#ifndef MFU_INGEST_HFTRAINER_H
#define MFU_INGEST_HFTRAINER_H

#include "ingest/format.h"

/* The run summary (train_runtime, ...) waiting for the end of the input. */
typedef struct mfu__hft_summary {
    bool pending;         /* read, not emitted yet */
    bool seen;            /* one was read at some point */
    double runtime_s;     /* train_runtime */
    double samples_per_s; /* train_samples_per_second (global) */
    double steps_per_s;   /* train_steps_per_second */
    double tokens_per_s;  /* train_tokens_per_second or Axolotl's tokens/train_per_sec_per_gpu */
    double total_flos;    /* total_flos, FLOPs of the whole run (6 N tokens) */
    double loss;          /* train_loss (mean over the run) */
    double memory_bytes;  /* Axolotl memory keys */
} mfu__hft_summary;

/* Parser state (lives in the format's zeroed state). */
typedef struct mfu__hft {
    bool axolotl;         /* flavour: which convention text to record */
    int64_t last_step;    /* step number of the last row emitted (0 before) */
    bool numbered_by_bar; /* a row took its number from a progress bar */
    bool bar_fresh;       /* a training bar was read since the last dict */
    int64_t bar_n, bar_total;
    double bar_s_per_it;
    int64_t train_total; /* total of the bar that numbered a row (0 unknown) */
    int64_t bar_max_n;   /* largest position of a training bar */
    int64_t total_steps; /* "Total optimization steps = N" */
    int64_t final_step;  /* TrainOutput(global_step=N) */
    int block;           /* inside "***** train metrics *****" (1) or another metrics block (2) */
    mfu__hft_summary sum;
    /* step dicts that carry the run's clock (Unsloth: train_runtime, num_input_tokens_seen):
     * the previous row's, to difference */
    bool clock_prev;
    bool clock_prev_bar; /* that row was numbered by a bar */
    int64_t clock_step;
    double clock_runtime_s, clock_tokens;
} mfu__hft;

/* Detection score of one line; axolotl selects the Axolotl flavour (see hftrainer.c). */
int mfu__hft_detect(const mfu__line *ln, bool axolotl);

/* Read one line / end of input. */
mfu_status mfu__hft_line(mfu__hft *st, mfu__ictx *c, const mfu__line *ln);
mfu_status mfu__hft_finish(mfu__hft *st, mfu__ictx *c);

#endif /* MFU_INGEST_HFTRAINER_H */
