/*
 * fmt_hf.c - Hugging Face transformers Trainer console output (log-formats.md §7): the log
 * dicts ProgressCallback prints at every logging step ({'loss': 1.23, 'grad_norm': ...,
 * 'learning_rate': ..., 'epoch': ...}, bare or quoted values), tqdm bars, the run summary
 * (train_runtime, train_samples_per_second global, train_steps_per_second,
 * train_tokens_per_second per device, total_flos, train_loss), the "***** Running training
 * *****" banner and TrainOutput(...). The reader is shared with Axolotl: see hftrainer.c for
 * the fields, their units and scopes, and how rows are numbered.
 *
 * Detection: a dict line with 'loss' and one of 'learning_rate' / 'grad_norm' / 'epoch', or a
 * summary dict, is a step line; eval dicts, banner lines and PEFT's parameter line are hints.
 * A dict with Axolotl's keys (memory/..., tokens/..., ppl) is only a hint here, so that the
 * "axolotl" format (earlier in the registry) takes Axolotl logs; a log of plain HF dicts, also
 * one written by Axolotl, is "hf" (the two read the same dicts the same way).
 */
#include "ingest/format.h"
#include "ingest/hftrainer.h"

static int hf_detect(const mfu__line *ln)
{
    return mfu__hft_detect(ln, false);
}

static mfu_status hf_line(void *state, mfu__ictx *c, const mfu__line *ln)
{
    return mfu__hft_line(state, c, ln);
}

static mfu_status hf_finish(void *state, mfu__ictx *c)
{
    return mfu__hft_finish(state, c);
}

const mfu__format mfu__fmt_hf = {
    .name = "hf",
    .summary = "Hugging Face Trainer log dicts {'loss': ...}, tqdm bars, train_runtime summary",
    .detect = hf_detect,
    .state_size = sizeof(mfu__hft),
    .line = hf_line,
    .finish = hf_finish,
};
