/*
 * fmt_axolotl.c - Axolotl fine-tuning logs (log-formats.md §13): Hugging Face Trainer log
 * dicts with Axolotl's extra keys, 'memory/max_active (GiB)', 'memory/max_allocated (GiB)',
 * 'memory/device_reserved (GiB)' (GiB, kept as bytes: reserved first, else allocated, else
 * active) and 'tokens/train_per_sec_per_gpu' (trainable tokens per second per GPU over the
 * logging window; '0' means not measured and is kept as absent), values usually quoted
 * strings; the HF run summary with the same extra keys; Axolotl's own logger lines
 * "[date] [INFO] [axolotl.train] ...". Reader shared with "hf" (hftrainer.c).
 *
 * Detection: a dict with an Axolotl key is a step line here (a hint for "hf"); a line from an
 * axolotl.* logger and the HF banner lines are hints. A log whose dicts are plain HF dicts is
 * taken by "hf" (see fmt_hf.c); forcing --format axolotl reads it the same way.
 */
#include "ingest/format.h"
#include "ingest/hftrainer.h"

static int axolotl_detect(const mfu__line *ln)
{
    return mfu__hft_detect(ln, true);
}

static mfu_status axolotl_init(void *state, const mfu_ingest_opts *opts, mfu_error *err)
{
    (void)opts;
    (void)err;
    ((mfu__hft *)state)->axolotl = true;
    return MFU_OK;
}

static mfu_status axolotl_line(void *state, mfu__ictx *c, const mfu__line *ln)
{
    mfu__span raw = {ln->raw, ln->raw_len};
    mfu__hft *st = state;
    mfu_status rc = mfu__hft_line(st, c, ln);
    if (rc == MFU_OK && mfu__span_find(raw, "[axolotl.") >= 0)
        mfu__used(c); /* Axolotl's own progress messages: recognised, nothing to keep */
    return rc;
}

static mfu_status axolotl_finish(void *state, mfu__ictx *c)
{
    return mfu__hft_finish(state, c);
}

const mfu__format mfu__fmt_axolotl = {
    .name = "axolotl",
    .summary = "Axolotl: HF Trainer dicts with memory/... and tokens/train_per_sec_per_gpu keys",
    .detect = axolotl_detect,
    .state_size = sizeof(mfu__hft),
    .init = axolotl_init,
    .line = axolotl_line,
    .finish = axolotl_finish,
};
