/*
 * test_ingest_formats2.c - the formats hf, axolotl, deepspeed, neox, maxtext, composer,
 * lightning and torchtune:
 *   - golden tests on every fixture of tests/data/logs/{hf-transformers,axolotl,deepspeed,
 *     gpt-neox,maxtext,composer-llm-foundry,lightning,torchtune} (copied from the shared
 *     excerpts with their .md): step counts and field values read off the excerpts;
 *   - detection: each fixture goes to its format, and none of these formats takes a fixture
 *     of another directory of tests/data/logs (whatever formats exist there);
 *   - a synthetic log of thousands of steps per format, written here;
 *   - mess: the same lines with ANSI colours, rank prefixes, CRLF, tqdm redraws and no final
 *     newline read as the clean log does; NaN / inf values;
 *   - the helpers of pyrepr.c, the named column limit of lightning, and bad input.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "ingest/format.h"
#include "ingest/pyrepr.h"
#include "ingest_test.h"

/* ---- helpers ------------------------------------------------------------------------------ */

static const char *const mine[] = {"hf",      "axolotl",  "deepspeed", "neox",
                                   "maxtext", "composer", "lightning", "torchtune"};

static bool is_mine(const char *fmt)
{
    for (size_t i = 0; i < sizeof mine / sizeof mine[0]; i++)
        if (strcmp(fmt, mine[i]) == 0)
            return true;
    return false;
}

/* A growable text buffer. */
typedef struct buf {
    char *p;
    size_t n, cap;
} buf;

static void bput(buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void bput(buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    assert_true(k >= 0);
    if (b->n + (size_t)k + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->n + (size_t)k + 1)
            cap *= 2;
        char *p = realloc(b->p, cap);
        assert_non_null(p);
        b->p = p;
        b->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(b->p + b->n, (size_t)k + 1, fmt, ap);
    va_end(ap);
    b->n += (size_t)k;
}

static void bfree(buf *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

static mfu_run *ingest_buf(const buf *b, const char *format, mfu_ingest_stats *st)
{
    mfu_ingest_opts o;
    memset(&o, 0, sizeof o);
    o.format = format;
    mfu_run *run = NULL;
    mfu_error e;
    memset(&e, 0, sizeof e);
    mfu_status rc = ingest_buffer_opts(b->p, b->n, &o, &run, st, &e);
    if (rc != MFU_OK)
        fail_msg("ingest: %s", e.message);
    return run;
}

static mfu_status fixture_status(const char *rel, const char *format, mfu_ingest_stats *st,
                                 mfu_error *e)
{
    char path[1024];
    ingest_data_path(path, sizeof path, rel);
    mfu_ingest_opts o;
    memset(&o, 0, sizeof o);
    o.format = format;
    mfu_run *run = NULL;
    memset(e, 0, sizeof *e);
    mfu_status rc = mfu_ingest_path(path, &o, &run, st, e);
    mfu_run_free(run);
    return rc;
}

#define GIB 1073741824.0

/* ---- Hugging Face Trainer ----------------------------------------------------------------- */

static void hf_bigdl_fixture(void **state)
{
    (void)state;
    mfu_ingest_stats st;
    mfu_run *run =
        ingest_fixture("logs/hf-transformers/hf-bigdl-qlora-llama2-7b-intel-gpu.log", NULL, &st);
    assert_string_equal(st.format, "hf");
    assert_int_equal(mfu_run_count(run), 10); /* 10 log dicts; the summary completes the last */
    mfu_step s = ingest_row(run, 0);
    assert_int_equal(s.step, 1); /* no progress bar before the dicts: rows are ordinals */
    assert_near(s.loss, 3.1898, 1e-12);
    assert_near(s.lr, 2e-05, 1e-12);
    assert_true(isnan(s.grad_norm)); /* pre-v4.38: no grad_norm key */
    assert_true(isnan(s.step_time_s));
    s = ingest_row(run, 1);
    assert_near(s.lr, 1.7777777777777777e-05, 1e-12);
    s = ingest_row(run, 9);
    assert_int_equal(s.step, 10);
    assert_near(s.loss, 2.5744, 1e-12); /* the step's loss, not train_loss 2.8197 */
    assert_near(s.lr, 0.0, 0);
    assert_near(s.step_time_s, 1.0 / 1.721, 1e-12); /* train_steps_per_second */
    assert_near(s.samples_per_s, 6.885, 1e-12);
    assert_int_equal(s.samples_per_s_scope, MFU_SCOPE_GLOBAL);
    assert_true(isnan(s.tokens_per_s));
    assert_true(isnan(s.flops_per_s)); /* no total_flos in the console dict */
    assert_int_equal(st.skipped, 0);
    assert_non_null(strstr(mfu_run_meta_get(run)->convention, "HF Trainer"));
    mfu_run_free(run);
}

static void hf_string_values_fixture(void **state)
{
    (void)state;
    mfu_ingest_stats st;
    mfu_run *run =
        ingest_fixture("logs/hf-transformers/hf-qwen25-7b-lora-string-values.log", NULL, &st);
    assert_string_equal(st.format, "hf");
    assert_int_equal(mfu_run_count(run), 3);
    mfu_step s = ingest_row(run, 0);
    assert_near(s.loss, 3.41, 1e-12); /* '3.41' */
    assert_near(s.grad_norm, 5.312, 1e-12);
    assert_near(s.lr, 0.0002, 1e-12);
    s = ingest_row(run, 2);
    assert_int_equal(s.step, 3);
    assert_near(s.loss, 1.764, 1e-12);
    assert_near(s.lr, 6.667e-05, 1e-12);
    assert_near(s.samples_per_s, 0.414, 1e-12); /* the summary, which has no steps/s */
    assert_true(isnan(s.step_time_s));
    /* PEFT's "all params: 7,655,986,688" is the model size (trainable ones are not) */
    assert_near(mfu_run_meta_get(run)->model_params, 7655986688.0, 0);
    mfu_run_free(run);
}

/* Plain HF dicts written by Axolotl go to "hf" (the documented precedence); forced axolotl
 * reads them the same way. */
static void axolotl_plain_dicts_fixture(void **state)
{
    (void)state;
    const char *rel = "logs/axolotl/axolotl-modal-llm-finetuning-pr82.log";
    mfu_ingest_stats st, st2;
    mfu_run *run = ingest_fixture(rel, NULL, &st);
    mfu_run *forced = ingest_fixture(rel, "axolotl", &st2);
    assert_string_equal(st.format, "hf");
    assert_string_equal(st2.format, "axolotl");
    assert_false(st2.detected);
    assert_int_equal(mfu_run_count(run), 13);
    assert_int_equal(mfu_run_count(forced), 13);
    for (size_t i = 0; i < 13; i++) {
        mfu_step a = ingest_row(run, i), b = ingest_row(forced, i);
        assert_int_equal(a.step, (int64_t)i + 1);
        assert_int_equal(a.step, b.step);
        assert_near(a.loss, b.loss, 0);
        assert_near(a.grad_norm, b.grad_norm, 0);
    }
    mfu_step s = ingest_row(run, 7); /* the grad-norm spike of the .md */
    assert_near(s.loss, 0.0787, 1e-12);
    assert_near(s.grad_norm, 10.746351508635772, 1e-12);
    assert_near(s.lr, 9.206267664155907e-05, 1e-12);
    assert_near(ingest_row(run, 9).grad_norm, 14.958441912749135, 1e-12);
    assert_string_equal(mfu_run_meta_get(forced)->format, "axolotl");
    mfu_run_free(run);
    mfu_run_free(forced);
}

static void axolotl_summary_fixture(void **state)
{
    (void)state;
    mfu_ingest_stats st;
    mfu_run *run =
        ingest_fixture("logs/axolotl/axolotl-tutorial-llama32-1b-lora-summary.log", NULL, &st);
    assert_string_equal(st.format, "axolotl");
    assert_int_equal(mfu_run_count(run), 1);
    mfu_step s = ingest_row(run, 0);
    assert_int_equal(s.step, 260); /* the final bar "260/260", printed after the summary */
    assert_near(s.step_time_s, 1.0 / 1.638, 1e-12);
    assert_near(s.samples_per_s, 26.2, 1e-12);
    assert_int_equal(s.samples_per_s_scope, MFU_SCOPE_GLOBAL);
    assert_near(s.loss, 1.567, 1e-12);
    assert_near(s.memory_bytes, 7.89 * GIB, 1e-12); /* device_reserved before max_allocated */
    assert_true(isnan(s.tokens_per_s));             /* '0' = not measured */
    assert_int_equal(st.used, 3); /* the summary, two axolotl.train lines (the record emitted
                                     at the end belongs to them) */
    assert_int_equal(st.used + st.ignored + st.skipped, st.lines);
    assert_non_null(strstr(mfu_run_meta_get(run)->convention, "Axolotl"));
    mfu_run_free(run);
}

/* Bars number the rows and give the step time; eval bars and eval dicts do not. */
static void hf_bars_banner_and_metrics_block(void **state)
{
    (void)state;
    const char *log = "***** Running training *****\n"
                      "  Num examples = 1,000\n"
                      "  Num Epochs = 3\n"
                      "  Instantaneous batch size per device = 8\n"
                      "  Total train batch size (w. parallel, distributed & accumulation) = 64\n"
                      "  Gradient Accumulation steps = 2\n"
                      "  Total optimization steps = 60\n"
                      "  Number of trainable parameters = 124,439,808\n"
                      "  0%|          | 0/60 [00:00<?, ?it/s]\r"
                      " 17%|#6        | 10/60 [00:05<00:25,  1.95it/s]\r"
                      "{'loss': 2.5, 'grad_norm': 1.5, 'learning_rate': 4e-05, 'epoch': 0.5}\n"
                      " 33%|###3      | 20/60 [00:10<00:20,  2.05s/it]"
                      "{'loss': 2.25, 'grad_norm': inf, 'learning_rate': 3e-05, 'epoch': 1.0}\n"
                      " 50%|#####     | 30/60 [00:15<00:15,  2.00it/s]\r"
                      "\r 80%|########  | 4/5 [00:01<00:00,  3.00it/s]\r"
                      "{'eval_loss': 2.4, 'eval_runtime': 1.2, 'epoch': 1.5}\n"
                      "{'loss': nan, 'learning_rate': 2e-05, 'epoch': 1.5}\n"
                      "{'loss': 2.0, 'learning_rate': 1e-05, 'epoch': 2.0}\n"
                      "100%|##########| 60/60 [00:30<00:00,  2.00it/s]\r"
                      "{'train_runtime': 30.5, 'train_samples_per_second': 125.9, "
                      "'train_steps_per_second': 1.967, 'train_tokens_per_second': 4096.5, "
                      "'train_loss': 2.2, 'epoch': 3.0}\n"
                      "***** train metrics *****\n"
                      "  epoch                    =        3.0\n"
                      "  total_flos               =     1024GF\n"
                      "  train_loss               =        2.2\n"
                      "  train_runtime            = 0:00:30.50\n"
                      "  train_samples_per_second =      125.9\n";
    mfu_ingest_stats st;
    mfu_run *run = ingest_text(log, NULL, &st);
    assert_string_equal(st.format, "hf");
    const mfu_run_meta *m = mfu_run_meta_get(run);
    assert_int_equal(m->micro_batch, 8);
    assert_int_equal(m->global_batch, 64);
    assert_int_equal(m->grad_accum, 2);
    assert_true(isnan(m->model_params)); /* trainable parameters are not the model size */
    assert_int_equal(mfu_run_count(run), 5);
    mfu_step s = ingest_row(run, 0);
    assert_int_equal(s.step, 10);
    assert_near(s.step_time_s, 1.0 / 1.95, 1e-12);
    s = ingest_row(run, 1); /* bar and dict on one line */
    assert_int_equal(s.step, 20);
    assert_near(s.step_time_s, 2.05, 1e-12);
    assert_true(isnan(s.grad_norm)); /* inf is stored as absent (mfu__emit) */
    s = ingest_row(run, 2);          /* the eval bar (4/5) was not taken for a step number */
    assert_int_equal(s.step, 30);
    assert_true(isnan(s.loss));
    assert_true(s.flags & MFU_STEP_LOSS_NAN);
    s = ingest_row(run, 3); /* no bar since: the next number */
    assert_int_equal(s.step, 31);
    assert_near(s.loss, 2.0, 0);
    s = ingest_row(run, 4); /* the summary at the last bar position */
    assert_int_equal(s.step, 60);
    assert_near(s.step_time_s, 1.0 / 1.967, 1e-12); /* the dict's, not the bar's */
    assert_near(s.samples_per_s, 125.9, 1e-12);
    assert_near(s.tokens_per_s, 4096.5, 1e-12);
    assert_int_equal(s.tokens_per_s_scope, MFU_SCOPE_DEVICE);
    /* 1024 GF = 1024 * 2^30 FLOPs over 30.5 s (the dict's runtime; the block's repeats it) */
    assert_near(s.flops_per_s, 1024.0 * GIB / 30.5, 1e-12);
    assert_int_equal(s.flops_per_s_scope, MFU_SCOPE_GLOBAL);
    assert_near(s.loss, 2.2, 1e-12);
    assert_int_equal(st.skipped, 0);
    mfu_run_free(run);
}

/* The metrics block alone (PrinterCallback-less scripts), runtime with days, TrainOutput. */
static void hf_metrics_block_only(void **state)
{
    (void)state;
    const char *log = "{'loss': 1.5, 'learning_rate': 1e-05, 'epoch': 1.0}\n"
                      "***** train metrics *****\n"
                      "  total_flos               = 2048GF\n"
                      "  train_runtime            = 1 day, 2:03:04.50\n"
                      "  train_steps_per_second   = 0.25\n"
                      "***** eval metrics *****\n"
                      "  eval_loss = 1.7\n"
                      "TrainOutput(global_step=500, training_loss=1.4, metrics={'train_runtime': "
                      "93784.5, 'train_loss': 1.4})\n";
    mfu_ingest_stats st;
    mfu_run *run = ingest_text(log, "hf", &st);
    assert_int_equal(mfu_run_count(run), 1); /* ordinal row 1, completed by the summary */
    mfu_step s = ingest_row(run, 0);
    assert_int_equal(s.step, 1);
    assert_near(s.loss, 1.5, 0);
    double runtime = 86400.0 + 2 * 3600.0 + 3 * 60.0 + 4.5;
    assert_near(s.flops_per_s, 2048.0 * GIB / runtime, 1e-12);
    assert_near(s.step_time_s, 4.0, 1e-12);
    assert_int_equal(st.ignored, 0);
    mfu_run_free(run);
}

/* ---- DeepSpeed ---------------------------------------------------------------------------- */

static void ds_profiler_fixture(void **state)
{
    (void)state;
    mfu_ingest_stats st;
    mfu_run *run = ingest_fixture(
        "logs/deepspeed/deepspeed-flops-profiler-tutorial-bert-large-a100.log", NULL, &st);
    assert_string_equal(st.format, "deepspeed");
    assert_int_equal(mfu_run_count(run), 1);
    mfu_step s = ingest_row(run, 0);
    assert_int_equal(s.step, 10);
    assert_near(s.step_time_s, 0.18473, 1e-12);  /* iter latency 184.73 ms */
    assert_near(s.flops_per_s, 102.0e12, 1e-12); /* fwd+bwd FLOPS per GPU */
    assert_int_equal(s.flops_per_s_scope, MFU_SCOPE_DEVICE);
    assert_near(s.samples_per_s, 433.07, 1e-12);
    assert_int_equal(s.samples_per_s_scope, MFU_SCOPE_GLOBAL);
    const mfu_run_meta *m = mfu_run_meta_get(run);
    assert_int_equal(m->world_size, 1);
    assert_int_equal(m->micro_batch, 80);
    assert_near(m->model_params, 336.23e6, 1e-12);
    mfu_run_free(run);
}

static void ds_2022_notebook_fixture(void **state)
{
    (void)state;
    mfu_ingest_stats st;
    mfu_run *run =
        ingest_fixture("logs/deepspeed/deepspeed-issue1825-2022-notebook.log", NULL, &st);
    assert_string_equal(st.format, "deepspeed");
    assert_int_equal(mfu_run_count(run), 2); /* step report and timer of each step merge */
    assert_int_equal(st.merged, 2);
    assert_int_equal(st.ignored, 20); /* the notebook widget lines */
    mfu_step s = ingest_row(run, 0);
    assert_int_equal(s.step, 40);
    assert_near(s.lr, 5e-05, 1e-12);
    assert_near(s.samples_per_s, 83.48609168106144, 1e-12);
    assert_int_equal(s.samples_per_s_scope, MFU_SCOPE_GLOBAL);
    assert_near(s.memory_bytes, 9.02 * GIB, 1e-12); /* MaxMemAllocated, GiB printed as GB */
    assert_true(s.flags & MFU_STEP_SKIPPED);        /* skipped=2 since the start */
    assert_int_equal(s.rank, 0);                    /* [Rank 0] */
    assert_near(s.time_s, 1646964418.985, 1e-12);   /* 2022-03-11 02:06:58,985 UTC */
    s = ingest_row(run, 1);
    assert_int_equal(s.step, 50);
    assert_near(s.samples_per_s, 83.73838805358588, 1e-12);
    assert_false(s.flags & MFU_STEP_SKIPPED); /* still 2 */
    mfu_run_free(run);
}

static void ds_2022_timer_fixture(void **state)
{
    (void)state;
    mfu_ingest_stats st;
    mfu_run *run =
        ingest_fixture("logs/deepspeed/deepspeed-issue2629-v077-timer-every-step.log", NULL, &st);
    assert_string_equal(st.format, "deepspeed");
    assert_int_equal(mfu_run_count(run), 6);
    mfu_step s = ingest_row(run, 0);
    assert_int_equal(s.step, 17);
    assert_near(s.samples_per_s, 159.628891629629, 1e-12); /* Curr, not RunningAvg */
    assert_near(s.memory_bytes, 2.6 * GIB, 1e-12);
    assert_near(s.time_s, 1671524786.101, 1e-12);
    s = ingest_row(run, 5);
    assert_int_equal(s.step, 22);
    assert_near(s.samples_per_s, 155.14401867030702, 1e-12);
    assert_near(s.memory_bytes, 2.62 * GIB, 1e-12);
    mfu_run_free(run);
}

/* 2023+ timer layout, config dump, timers, a profiler summary with the iter-latency line. */
static void ds_config_and_2023_layout(void **state)
{
    (void)state;
    const char *log =
        "[2024-01-02 03:04:05,000] [INFO] [config.py:999:print] DeepSpeedEngine configuration:\n"
        "[2024-01-02 03:04:05,000] [INFO] [config.py:1003:print]   bfloat16_enabled ....... True\n"
        "[2024-01-02 03:04:05,000] [INFO] [config.py:1003:print]   gradient_accumulation_steps .. "
        "4\n"
        "[2024-01-02 03:04:05,000] [INFO] [config.py:1003:print]   train_batch_size ....... 512\n"
        "[2024-01-02 03:04:05,000] [INFO] [config.py:1003:print]   "
        "train_micro_batch_size_per_gpu  16\n"
        "[2024-01-02 03:04:05,000] [INFO] [config.py:1003:print]   world_size ............. 8\n"
        "[2024-01-02 03:04:05,000] [INFO] [config.py:989:print_user_config]   json = {\n"
        "[2024-01-02 03:04:15,000] [INFO] [logging.py:96:log_dist] [Rank 0] step=10, skipped=0, "
        "lr=[0.0003, 0.0003], mom=[(0.9, 0.95), (0.9, 0.95)]\n"
        "[2024-01-02 03:04:15,000] [INFO] [timer.py:260:stop] epoch=0/micro_step=40/"
        "global_step=10, RunningAvgSamplesPerSec=250.5, CurrSamplesPerSec=260.25, "
        "MemAllocated=30.5GB, MaxMemAllocated=60.25GB\n"
        "[2024-01-02 03:04:15,000] [INFO] [logging.py:96:log_dist] [Rank 0] time (ms) | fwd: "
        "500.00 | bwd: 1000.00 | bwd_inner: 900.00 | bwd_allreduce: 100.00 | step: 20.00\n"
        "-------------------------- DeepSpeed Flops Profiler --------------------------\n"
        "Profile Summary at step 10:\n"
        "Notations:\n"
        "iter latency:                                                 1.5 s\n"
        "FLOPS per GPU = 3 * fwd flops per GPU / iter latency:         150.5 TFLOPS\n"
        "fwd+bwd FLOPS per GPU = 3 * fwd flops per GPU / (fwd+bwd latency):   160.0 TFLOPS\n"
        "samples/second:                                               341.33\n"
        "----------------------------- Aggregated Profile per GPU -----------------------------\n"
        "[2024-01-02 03:04:25,000] [INFO] [logging.py:96:log_dist] [Rank 0] step=20, skipped=1, "
        "lr=[0.0002], mom=[(0.9, 0.95)]\n";
    mfu_ingest_stats st;
    mfu_run *run = ingest_text(log, NULL, &st);
    assert_string_equal(st.format, "deepspeed");
    const mfu_run_meta *m = mfu_run_meta_get(run);
    assert_string_equal(m->dtype, "bf16");
    assert_int_equal(m->grad_accum, 4);
    assert_int_equal(m->global_batch, 512);
    assert_int_equal(m->micro_batch, 16);
    assert_int_equal(m->world_size, 8);
    assert_int_equal(mfu_run_count(run), 2);
    mfu_step s = ingest_row(run, 0); /* report + timer + profiler of step 10 */
    assert_int_equal(s.step, 10);
    assert_near(s.lr, 0.0003, 1e-12);
    assert_near(s.samples_per_s, 260.25, 1e-12); /* the timer's Curr, first in */
    assert_near(s.memory_bytes, 60.25 * GIB, 1e-12);
    assert_near(s.step_time_s, 1.5, 1e-12);
    assert_near(s.flops_per_s, 150.5e12, 1e-12); /* iter-latency figure before fwd+bwd */
    assert_false(s.flags & MFU_STEP_SKIPPED);
    s = ingest_row(run, 1);
    assert_int_equal(s.step, 20);
    assert_true(s.flags & MFU_STEP_SKIPPED); /* 0 -> 1 */
    assert_int_equal(st.skipped, 0);
    assert_int_equal(st.merged, 2);
    mfu_run_free(run);
}

/* ---- GPT-NeoX ----------------------------------------------------------------------------- */

/* The only NeoX excerpt holds DeepSpeed timer lines, no NeoX step line: both formats were tried
 * on it and read no step, so none is chosen and the error names both, with what they saw. */
static void neox_timer_only_fixture(void **state)
{
    (void)state;
    const char *rel = "logs/gpt-neox/gptneox-issue965-deepspeed-wallclock-breakdown.log";
    mfu_ingest_stats st;
    mfu_error e;
    assert_int_equal(fixture_status(rel, NULL, &st, &e), MFU_E_EMPTY);
    assert_string_equal(st.format, "");
    assert_non_null(strstr(e.message, "deepspeed: 5 of its side lines"));
    assert_non_null(strstr(e.message, "neox: 5 of its side lines"));
    assert_non_null(strstr(e.message, "--format"));
    assert_int_equal(fixture_status(rel, "neox", &st, &e), MFU_E_EMPTY);
    assert_int_equal(st.used, 5);
    assert_non_null(strstr(e.message, "'neox'"));
}

static const char neox_args[] =
    "NeoXArgs.configure_distributed_args() using world size: 16 and model-parallel size: 2 \n"
    "-------------------- arguments --------------------\n"
    "  gradient_accumulation_steps ..... 2...........updated\n"
    "  peak_theoretical_tflops ......... 312.0...........updated\n"
    "  precision ....................... bfloat16...........updated\n"
    "  seq_length ...................... 2048...........updated\n"
    "  train_batch_size ................ 256...........updated\n"
    "  train_micro_batch_size_per_gpu .. 16...........updated\n"
    "---------------- end of arguments ----------------\n";

static void neox_lines_and_args(void **state)
{
    (void)state;
    buf b = {0};
    bput(&b, "%s", neox_args);
    bput(&b, " samples/sec: 51.234 | iteration       10/     320 | elapsed time per iteration "
             "(ms): 9876.5 | learning rate: 1.234E-04 | approx flops per GPU: 150.3TFLOPS | "
             "MFU: 40.12%% | HFU: 52.30%% | lm_loss: 7.123456E+00 | loss scale: 65536.0 | "
             "number of skipped iterations:   0 | number of nan iterations:   0 |\n");
    bput(&b, "[2023-06-03 00:10:23,345] [INFO] [logging.py:96:log_dist] [Rank 0] step=20, "
             "skipped=0, lr=[0.0001], mom=[(0.9, 0.95)]\n");
    bput(&b,
         " samples/sec: 50.000 | iteration       20/     320 | elapsed time per iteration "
         "(ms): 10000.0 | learning rate: 1.000E-04 | approx flops per GPU: 0.2PFLOPS | "
         "lm_loss: nan | number of skipped iterations:   1 | number of nan iterations:   1 |\n");
    bput(&b, " validation results at iteration 20 | lm_loss value: 6.9E+00 | lm_loss_ppl value: "
             "990 |\n");
    mfu_ingest_stats st;
    mfu_run *run = ingest_buf(&b, NULL, &st);
    assert_string_equal(st.format, "neox");
    const mfu_run_meta *m = mfu_run_meta_get(run);
    assert_int_equal(m->world_size, 16);
    assert_int_equal(m->seq_len, 2048);
    assert_int_equal(m->global_batch, 256);
    assert_int_equal(m->micro_batch, 16);
    assert_int_equal(m->grad_accum, 2);
    assert_string_equal(m->dtype, "bf16");
    assert_near(m->reported_peak_flops_per_s, 312e12, 1e-12);
    assert_int_equal(mfu_run_count(run), 2); /* DeepSpeed's step=20 line is not a NeoX row */
    mfu_step s = ingest_row(run, 0);
    assert_int_equal(s.step, 10);
    assert_near(s.samples_per_s, 51.234, 1e-12);
    assert_int_equal(s.samples_per_s_scope, MFU_SCOPE_GLOBAL);
    assert_near(s.step_time_s, 9.8765, 1e-12);
    assert_near(s.lr, 1.234e-4, 1e-12);
    assert_near(s.flops_per_s, 150.3e12, 1e-12);
    assert_int_equal(s.flops_per_s_scope, MFU_SCOPE_DEVICE);
    assert_near(s.mfu, 0.4012, 1e-12);
    assert_int_equal(s.mfu_scope, MFU_SCOPE_DEVICE);
    assert_near(s.loss, 7.123456, 1e-12);
    assert_near(s.tokens, 256.0 * 2048.0, 0); /* batch x seq of the header */
    assert_true(s.flags & MFU_STEP_TOKENS_DERIVED);
    s = ingest_row(run, 1);
    assert_near(s.flops_per_s, 0.2e15, 1e-12);
    assert_true(isnan(s.loss));
    assert_true(s.flags & MFU_STEP_LOSS_NAN);
    assert_true(s.flags & MFU_STEP_SKIPPED);
    assert_true(isnan(s.mfu)); /* not printed on this line */
    assert_int_equal(st.skipped, 0);
    mfu_run_free(run);
    bfree(&b);
}

/* A NeoX log with many DeepSpeed engine lines (wall_clock_breakdown) is still NeoX's. */
static void neox_wins_over_engine_lines(void **state)
{
    (void)state;
    buf b = {0};
    for (int it = 1; it <= 40; it++) {
        for (int micro = 0; micro < 16; micro++)
            bput(&b, "[2023-06-03 00:10:23,345] [INFO] [logging.py:96:log_dist] [Rank 0] rank=0 "
                     "time (ms) | forward_microstep: 1330.05 | backward_microstep: 4766.88 | "
                     "step_microstep: 0.05\n");
        bput(&b,
             "[2023-06-03 00:10:23,345] [INFO] [logging.py:96:log_dist] [Rank 0] step=%d, "
             "skipped=0, lr=[0.0001], mom=[(0.9, 0.95)]\n",
             it);
        if (it % 10 == 0)
            bput(&b,
                 " samples/sec: 50.000 | iteration %8d/     320 | elapsed time per "
                 "iteration (ms): 6100.0 | learning rate: 1.000E-04 | approx flops per GPU: "
                 "140.0TFLOPS | lm_loss: 5.0E+00 |\n",
                 it);
    }
    mfu_ingest_stats st;
    mfu_run *run = ingest_buf(&b, NULL, &st);
    assert_string_equal(st.format, "neox");
    assert_int_equal(mfu_run_count(run), 4);
    assert_int_equal(ingest_row(run, 3).step, 40);
    mfu_run_free(run);
    bfree(&b);
}

/* Megatron-DeepSpeed prints DeepSpeed's lines too; Megatron's own lines keep the log. */
static void megatron_deepspeed_stays_megatron(void **state)
{
    (void)state;
    buf b = {0};
    for (int it = 10; it <= 100; it += 10) {
        bput(&b,
             "[2024-01-02 03:04:05,000] [INFO] [logging.py:96:log_dist] [Rank 0] step=%d, "
             "skipped=0, lr=[0.0001], mom=[(0.9, 0.95)]\n",
             it);
        bput(&b,
             "[2024-01-02 03:04:05,000] [INFO] [timer.py:260:stop] epoch=0/micro_step=%d/"
             "global_step=%d, RunningAvgSamplesPerSec=250.5, CurrSamplesPerSec=260.25, "
             "MemAllocated=30.5GB, MaxMemAllocated=60.25GB\n",
             it * 4, it);
        bput(&b,
             " iteration %8d/    1000 | consumed samples:        10240 | elapsed time per "
             "iteration (ms): 2000.0 | learning rate: 1.000E-04 | global batch size:  1024 | "
             "lm loss: 5.000000E+00 |\n",
             it);
    }
    mfu_ingest_stats st;
    mfu_run *run = ingest_buf(&b, NULL, &st);
    assert_string_equal(st.format, "megatron");
    mfu_run_free(run);
    bfree(&b);
}

/* ---- MaxText ------------------------------------------------------------------------------ */

static void maxtext_docs_fixture(void **state)
{
    (void)state;
    mfu_ingest_stats st;
    mfu_run *run = ingest_fixture(
        "logs/maxtext/maxtext-docs-understand-logs-deepseek2-16b-v5p8.log", NULL, &st);
    assert_string_equal(st.format, "maxtext");
    assert_int_equal(mfu_run_count(run), 10);
    mfu_step s = ingest_row(run, 0);
    assert_int_equal(s.step, 0);
    assert_near(s.step_time_s, 44.923, 1e-12); /* compilation */
    s = ingest_row(run, 1);
    assert_near(s.flops_per_s, 2400.734e12, 1e-12); /* above peak: kept as printed */
    s = ingest_row(run, 9);
    assert_int_equal(s.step, 9);
    assert_near(s.step_time_s, 5.667, 1e-12);
    assert_near(s.flops_per_s, 134.924e12, 1e-12);
    assert_int_equal(s.flops_per_s_scope, MFU_SCOPE_DEVICE);
    assert_near(s.tokens_per_s, 8672.758, 1e-12);
    assert_int_equal(s.tokens_per_s_scope, MFU_SCOPE_DEVICE);
    assert_near(s.tokens, 196608.0, 0); /* total_weights */
    assert_false(s.flags & MFU_STEP_TOKENS_DERIVED);
    assert_near(s.loss, 10.374, 1e-12);
    mfu_run_free(run);
}

static void maxtext_old_fixture(void **state)
{
    (void)state;
    mfu_ingest_stats st;
    mfu_run *run = ingest_fixture("logs/maxtext/maxtext-issue8-v3-8-old-format.log", NULL, &st);
    assert_string_equal(st.format, "maxtext");
    assert_int_equal(mfu_run_count(run), 3);
    mfu_step s = ingest_row(run, 0);
    assert_int_equal(s.step, 15107);
    assert_near(s.step_time_s, 2.167, 1e-12);
    assert_near(s.flops_per_s, 36.722e12, 1e-12); /* "TFLOP/s": per device (issue #8) */
    assert_int_equal(s.flops_per_s_scope, MFU_SCOPE_DEVICE);
    assert_true(isnan(s.tokens_per_s));
    assert_true(isnan(s.tokens));
    assert_near(ingest_row(run, 2).loss, 2.191, 1e-12);
    mfu_run_free(run);
}

static void maxtext_maxtest_fixture(void **state)
{
    (void)state;
    mfu_ingest_stats st;
    mfu_run *run =
        ingest_fixture("logs/maxtext/maxtext-maxtest-getting-started-v5p128.log", NULL, &st);
    assert_string_equal(st.format, "maxtext");
    assert_int_equal(mfu_run_count(run), 5); /* the "..." lines are not steps */
    mfu_step s = ingest_row(run, 2);
    assert_int_equal(s.step, 2);
    assert_near(s.step_time_s, 0.002, 1e-12);
    assert_near(s.flops_per_s, 917442.589e12, 1e-12);
    assert_near(s.tokens_per_s, 19907654.921, 1e-12);
    assert_near(s.tokens, 1572864.0, 0);
    assert_near(ingest_row(run, 4).loss, 9.61, 1e-12);
    const mfu_run_meta *m = mfu_run_meta_get(run); /* the tuning-params dict at the end */
    assert_int_equal(m->micro_batch, 12);
    assert_int_equal(m->seq_len, 4096);
    mfu_run_free(run);
}

static void maxtext_header_rampup_and_absl(void **state)
{
    (void)state;
    const char *log =
        "I0811 21:54:50.000000  514 pyconfig.py:413] Config param per_device_batch_size: 24.0\n"
        "I0811 21:54:50.000000  514 pyconfig.py:413] Config param max_target_length: 2048\n"
        "I0811 21:54:50.000000  514 pyconfig.py:413] Config param model_name: deepseek2-16b\n"
        "I0811 21:54:50.000000  514 pyconfig.py:413] Config param dtype: bfloat16\n"
        "Num_devices: 4, shape (1, 1, 4, 1, 1, 1, 1, 1, 1, 1, 1, 1)\n"
        "number parameters: 15.933 billion\n"
        "I0811 21:54:55.531340  514 metric_logger.py:226] [Rampup Batch Size Phase] completed "
        "step: 0, seconds: 2.000, TFLOP/s/device: 10.000, Tokens/s/device: 100.000, "
        "total_weights: 4096, loss: 12.000\n"
        "I0811 21:54:57.531340  514 metric_logger.py:226] completed step: 1, seconds: 5.667, "
        "TFLOP/s/device: 134.924, Tokens/s/device: 8672.758, total_weights: 163259, loss: "
        "11.000, lm_loss: 10.990, perplexity: 59000.000, moe_lb_loss: 0.010000\n"
        "completed profiler activation/deactivation step: 2\n"
        "completed step: 2, seconds: 5.667, TFLOP/s/device: 134.924, Tokens/s/device: 8672.758, "
        "total_weights: 196608, loss: nan\n";
    mfu_ingest_stats st;
    mfu_run *run = ingest_text(log, NULL, &st);
    assert_string_equal(st.format, "maxtext");
    const mfu_run_meta *m = mfu_run_meta_get(run);
    assert_int_equal(m->micro_batch, 24);
    assert_int_equal(m->seq_len, 2048);
    assert_string_equal(m->model, "deepseek2-16b");
    assert_string_equal(m->dtype, "bf16");
    assert_int_equal(m->world_size, 4);
    assert_near(m->model_params, 15.933e9, 1e-12);
    assert_int_equal(mfu_run_count(run), 3);
    assert_near(ingest_row(run, 0).tokens, 4096.0, 0);
    mfu_step s = ingest_row(run, 1);
    assert_near(s.loss, 11.0, 0); /* loss, not lm_loss */
    assert_near(s.tokens, 163259.0, 0);
    assert_true(isnan(ingest_row(run, 2).loss));
    assert_true(ingest_row(run, 2).flags & MFU_STEP_LOSS_NAN);
    assert_int_equal(st.ignored, 0);
    mfu_run_free(run);
}

/* ---- Composer ----------------------------------------------------------------------------- */

static void composer_tab_fixture(void **state)
{
    (void)state;
    mfu_ingest_stats st;
    mfu_run *run = ingest_fixture(
        "logs/composer-llm-foundry/composer-moe-research-tab-indented.log", NULL, &st);
    assert_string_equal(st.format, "composer");
    assert_int_equal(mfu_run_count(run), 1);
    mfu_step s = ingest_row(run, 0);
    assert_int_equal(s.step, 20); /* [batch=20/20] */
    assert_near(s.tokens_per_s, 222.2194, 1e-12);
    assert_int_equal(s.tokens_per_s_scope, MFU_SCOPE_GLOBAL);
    assert_near(s.samples_per_s, 0.2170, 1e-12);
    assert_int_equal(s.samples_per_s_scope, MFU_SCOPE_GLOBAL);
    assert_near(s.loss, 10.4162, 1e-12); /* LanguageCrossEntropy, not loss/train/total 0.0051 */
    assert_near(s.lr, 0.0001, 1e-12);
    assert_near(s.memory_bytes, 4.0643 * GIB, 1e-12); /* peak_reserved_mem */
    assert_true(isnan(s.flops_per_s));
    assert_true(isnan(s.mfu));
    assert_int_equal(mfu_run_meta_get(run)->micro_batch, 2);
    assert_int_equal(st.used, 43); /* header, 42 metrics (Image objects too) */
    assert_int_equal(st.used + st.ignored + st.skipped, st.lines);
    mfu_run_free(run);
}

static void composer_rocm_fixture(void **state)
{
    (void)state;
    mfu_ingest_stats st;
    mfu_run *run =
        ingest_fixture("logs/composer-llm-foundry/rocm-blog-mpt30b-mi300x-1node.log", NULL, &st);
    assert_string_equal(st.format, "composer");
    assert_int_equal(mfu_run_count(run), 1);
    mfu_step s = ingest_row(run, 0);
    assert_int_equal(s.step, 3); /* [epoch=1][batch=3/5] */
    assert_near(s.tokens_per_s, 10347.9543, 1e-12);
    assert_near(s.samples_per_s, 1.4307, 1e-12);
    assert_near(s.loss, 8.4361, 1e-12);
    assert_near(s.lr, 0.0, 0);
    const mfu_run_meta *m = mfu_run_meta_get(run);
    assert_int_equal(m->world_size, 8); /* num_gpus_per_node 8 x num_nodes 1 */
    assert_int_equal(m->micro_batch, 8);
    mfu_run_free(run);
}

static void composer_mfu_token_header_eval(void **state)
{
    (void)state;
    const char *log = "max_seq_len: 2048\n"
                      "global_train_batch_size: 256\n"
                      "precision: amp_bf16\n"
                      "[token=1048576/100000000]:\n"
                      "\t Train time/batch: 1\n"
                      "\t Train throughput/device/tokens_per_sec: 4096.5\n"
                      "\t Train throughput/device/flops_per_sec: 123450000000000.0\n"
                      "\t Train throughput/flops_per_sec: 987600000000000.0\n"
                      "\t Train throughput/device/mfu: 0.3957\n"
                      "\t Train loss/train/total: nan\n"
                      "[Eval batch=1/5] Eval on eval data:\n"
                      "\t Eval metrics/eval/LanguageCrossEntropy: 2.5\n"
                      "[batch=3/100]:\n"
                      "\t Train memory/peak_allocated_mem: 10.5\n"
                      "\t Train lr-DecoupledAdamW/group0: 0.0006\n";
    mfu_ingest_stats st;
    mfu_run *run = ingest_text(log, NULL, &st);
    assert_string_equal(st.format, "composer");
    const mfu_run_meta *m = mfu_run_meta_get(run);
    assert_int_equal(m->seq_len, 2048);
    assert_int_equal(m->global_batch, 256);
    assert_string_equal(m->dtype, "bf16");
    assert_int_equal(mfu_run_count(run), 2);
    mfu_step s = ingest_row(run, 0);
    assert_int_equal(s.step, 2); /* time/batch + 1 */
    assert_near(s.tokens_per_s, 4096.5, 1e-12);
    assert_int_equal(s.tokens_per_s_scope, MFU_SCOPE_DEVICE); /* no global figure printed */
    assert_near(s.flops_per_s, 123.45e12, 1e-12);             /* per device before global */
    assert_int_equal(s.flops_per_s_scope, MFU_SCOPE_DEVICE);
    assert_near(s.mfu, 0.3957, 1e-12);
    assert_int_equal(s.mfu_scope, MFU_SCOPE_DEVICE);
    assert_true(s.flags & MFU_STEP_LOSS_NAN);
    assert_near(s.tokens, 256.0 * 2048.0, 0);
    s = ingest_row(run, 1);
    assert_int_equal(s.step, 3);
    assert_near(s.memory_bytes, 10.5 * GIB, 1e-12);
    assert_near(s.lr, 0.0006, 1e-12);
    assert_int_equal(st.ignored, 0);
    mfu_run_free(run);
}

/* ---- Lightning ---------------------------------------------------------------------------- */

static void litgpt_fixture(void **state)
{
    (void)state;
    mfu_ingest_stats st;
    mfu_run *run = ingest_fixture("logs/lightning/litgpt-issue1607-gpt2-124m-repro.log", NULL, &st);
    assert_string_equal(st.format, "lightning");
    assert_int_equal(mfu_run_count(run), 7);
    mfu_step s = ingest_row(run, 0);
    assert_int_equal(s.step, 610140); /* the optimizer step, not iter 3050700 */
    assert_near(s.loss, 2.846, 1e-12);
    assert_true(isnan(s.step_time_s)); /* iter time is one micro-iteration */
    s = ingest_row(run, 6);
    assert_int_equal(s.step, 610200);
    assert_near(s.loss, 2.857, 1e-12);
    mfu_run_free(run);
}

static void lightning_metrics_csv(void **state)
{
    (void)state;
    const char *csv =
        "epoch,lr-AdamW,step,train/batches,train/device/batches_per_sec,"
        "train/device/flops_per_sec,train/device/items_per_sec,train/device/mfu,"
        "train/device/samples_per_sec,train/flops_per_sec,train/items_per_sec,"
        "train/samples_per_sec,train/time,train_loss,validate/device/mfu\r\n"
        "0,0.0003,99,100,2.5,1.5e+14,40960.0,0.48,10.0,1.2e+15,327680.0,80.0,40.0,,\r\n"
        "0,,99,,,,,,,,,,,3.25,\r\n"
        "0,,149,,,,,,,,,,,,0.99\r\n"
        "0,0.0003,199,200,2.5,,40000.0,,,,,,80.0,nan,\r\n";
    mfu_ingest_stats st;
    mfu_run *run = ingest_text(csv, NULL, &st);
    assert_string_equal(st.format, "lightning");
    assert_int_equal(mfu_run_count(run), 2); /* 99 (two rows merged) and 199 */
    mfu_step s = ingest_row(run, 0);
    assert_int_equal(s.step, 99);
    assert_near(s.mfu, 0.48, 1e-12);
    assert_int_equal(s.mfu_scope, MFU_SCOPE_DEVICE);
    assert_near(s.flops_per_s, 1.5e14, 1e-12);
    assert_int_equal(s.flops_per_s_scope, MFU_SCOPE_DEVICE);
    assert_near(s.tokens_per_s, 327680.0, 1e-12); /* global items/s before per device */
    assert_int_equal(s.tokens_per_s_scope, MFU_SCOPE_GLOBAL);
    assert_near(s.samples_per_s, 80.0, 1e-12);
    assert_int_equal(s.samples_per_s_scope, MFU_SCOPE_GLOBAL);
    assert_near(s.lr, 0.0003, 1e-12);
    assert_near(s.loss, 3.25, 1e-12); /* from the second row of step 99 */
    s = ingest_row(run, 1);
    assert_int_equal(s.step, 199);
    assert_near(s.tokens_per_s, 40000.0, 1e-12); /* only the per-device column */
    assert_int_equal(s.tokens_per_s_scope, MFU_SCOPE_DEVICE);
    assert_true(s.flags & MFU_STEP_LOSS_NAN);
    assert_int_equal(st.merged, 1);
    assert_int_equal(st.used, 5); /* header, four rows (the validation-only row too) */
    mfu_run_free(run);
}

/* LIGHTNING_MAX_COLS (512): columns after it are not read. */
static void lightning_column_limit(void **state)
{
    (void)state;
    buf b = {0};
    bput(&b, "step,train_loss");
    for (int i = 0; i < 520; i++)
        bput(&b, ",extra%d", i);
    bput(&b, ",train/device/mfu\n");
    for (int row = 1; row <= 3; row++) {
        bput(&b, "%d,2.5", row);
        for (int i = 0; i < 520; i++)
            bput(&b, ",");
        bput(&b, ",0.5\n");
    }
    mfu_ingest_stats st;
    mfu_run *run = ingest_buf(&b, NULL, &st);
    assert_string_equal(st.format, "lightning");
    assert_int_equal(mfu_run_count(run), 3);
    assert_near(ingest_row(run, 2).loss, 2.5, 0);
    assert_true(isnan(ingest_row(run, 2).mfu)); /* column 523: past the limit */
    mfu_run_free(run);
    bfree(&b);
}

/* ---- torchtune ---------------------------------------------------------------------------- */

static void torchtune_fixture(void **state)
{
    (void)state;
    mfu_ingest_stats st;
    mfu_run *run = ingest_fixture("logs/torchtune/torchtune-pr1358-codellama7b.log", NULL, &st);
    assert_string_equal(st.format, "torchtune");
    assert_int_equal(mfu_run_count(run), 12);
    mfu_step s = ingest_row(run, 0);
    assert_int_equal(s.step, 1);
    assert_near(s.loss, 2.085338592529297, 1e-12);
    assert_near(s.lr, 2e-05, 1e-12);
    assert_near(s.tokens_per_s, 57.828881833956174, 1e-12);
    assert_int_equal(s.tokens_per_s_scope, MFU_SCOPE_DEVICE);
    s = ingest_row(run, 9);
    assert_int_equal(s.step, 10);
    assert_near(s.tokens_per_s, 962.2259327743811, 1e-12);
    assert_string_equal(mfu_run_meta_get(run)->dtype, "bf16");
    assert_int_equal(st.used, 14); /* 12 steps, the seed and precision lines */
    mfu_run_free(run);
}

static void torchtune_tqdm_config_memory(void **state)
{
    (void)state;
    const char *log =
        "INFO:torchtune.utils._logging:Running FullFinetuneRecipeDistributed with resolved "
        "config:\n"
        "\n"
        "batch_size: 4\n"
        "dtype: bf16\n"
        "gradient_accumulation_steps: 8\n"
        "tokenizer:\n"
        "  max_seq_len: 4096\n"
        "INFO:torchtune.utils._logging:Model is initialized with precision torch.bfloat16.\n"
        "1|1|Loss: 1.25:   0%|          | 1/100 [00:02<03:18,  2.00s/it]\r"
        "1|2|Loss: 1.125:   2%|2         | 2/100 [00:04<03:16,  2.00s/it]\r"
        "1|2|Loss: 1.125:   2%|2         | 2/100 [00:04<03:16,  1.90s/it]\r"
        "1|3|Loss: nan:   3%|3         | 3/100 [00:06<03:14,  1.95s/it]\n"
        "Step 4 | loss:1.0 lr:2e-05 tokens_per_second_per_gpu:1500.5 grad_norm:inf "
        "peak_memory_active:30.5 peak_memory_alloc:31.0 peak_memory_reserved:40.25 \n";
    mfu_ingest_stats st;
    mfu_run *run = ingest_text(log, NULL, &st);
    assert_string_equal(st.format, "torchtune");
    const mfu_run_meta *m = mfu_run_meta_get(run);
    assert_int_equal(m->micro_batch, 4);
    assert_int_equal(m->grad_accum, 8);
    assert_int_equal(m->seq_len, 4096);
    assert_string_equal(m->dtype, "bf16");
    assert_int_equal(mfu_run_count(run), 4);
    assert_int_equal(st.merged, 1); /* the second redraw of step 2 */
    mfu_step s = ingest_row(run, 0);
    assert_near(s.loss, 1.25, 0);
    assert_near(s.step_time_s, 2.0, 0);
    s = ingest_row(run, 1);
    assert_int_equal(s.step, 2);
    assert_near(s.loss, 1.125, 0);
    assert_near(s.step_time_s, 2.0, 0); /* the first redraw's; repeats only fill what is absent */
    assert_true(ingest_row(run, 2).flags & MFU_STEP_LOSS_NAN);
    s = ingest_row(run, 3);
    assert_near(s.tokens_per_s, 1500.5, 1e-12);
    assert_true(isnan(s.grad_norm));                 /* inf is stored as absent (mfu__emit) */
    assert_near(s.memory_bytes, 40.25 * GIB, 1e-12); /* reserved first */
    mfu_run_free(run);
}

/* ---- detection across all fixtures -------------------------------------------------------- */

static const struct {
    const char *rel;
    const char *format; /* expected auto-detected format */
} fixture_formats[] = {
    {"logs/hf-transformers/hf-bigdl-qlora-llama2-7b-intel-gpu.log", "hf"},
    {"logs/hf-transformers/hf-qwen25-7b-lora-string-values.log", "hf"},
    {"logs/axolotl/axolotl-modal-llm-finetuning-pr82.log", "hf"},
    {"logs/axolotl/axolotl-tutorial-llama32-1b-lora-summary.log", "axolotl"},
    {"logs/deepspeed/deepspeed-flops-profiler-tutorial-bert-large-a100.log", "deepspeed"},
    {"logs/deepspeed/deepspeed-issue1825-2022-notebook.log", "deepspeed"},
    {"logs/deepspeed/deepspeed-issue2629-v077-timer-every-step.log", "deepspeed"},
    {"logs/maxtext/maxtext-docs-understand-logs-deepseek2-16b-v5p8.log", "maxtext"},
    {"logs/maxtext/maxtext-issue8-v3-8-old-format.log", "maxtext"},
    {"logs/maxtext/maxtext-maxtest-getting-started-v5p128.log", "maxtext"},
    {"logs/composer-llm-foundry/composer-moe-research-tab-indented.log", "composer"},
    {"logs/composer-llm-foundry/rocm-blog-mpt30b-mi300x-1node.log", "composer"},
    {"logs/lightning/litgpt-issue1607-gpt2-124m-repro.log", "lightning"},
    {"logs/torchtune/torchtune-pr1358-codellama7b.log", "torchtune"},
};

static void detection_of_own_fixtures(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof fixture_formats / sizeof fixture_formats[0]; i++) {
        mfu_ingest_stats st;
        mfu_run *run = ingest_fixture(fixture_formats[i].rel, NULL, &st);
        if (strcmp(st.format, fixture_formats[i].format) != 0)
            fail_msg("%s: detected %s, expected %s", fixture_formats[i].rel, st.format,
                     fixture_formats[i].format);
        assert_true(st.detected);
        mfu_run_free(run);
    }
}

static bool own_dir(const char *name)
{
    static const char *const dirs[] = {
        "hf-transformers",      "axolotl",   "deepspeed", "gpt-neox", "maxtext",
        "composer-llm-foundry", "lightning", "torchtune", "litgpt",   "unsloth"};
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
        if (strcmp(name, dirs[i]) == 0)
            return true;
    return false;
}

/* Every .log of the other directories: none of these formats takes it, whatever formats the
 * registry holds (an unknown-format error is fine). */
static void detection_leaves_other_fixtures(void **state)
{
    (void)state;
    char root[1024];
    ingest_data_path(root, sizeof root, "logs");
    DIR *d = opendir(root);
    assert_non_null(d);
    int checked = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' || own_dir(e->d_name))
            continue;
        char sub[1300];
        snprintf(sub, sizeof sub, "%s/%s", root, e->d_name);
        DIR *d2 = opendir(sub);
        if (!d2)
            continue;
        struct dirent *f;
        while ((f = readdir(d2)) != NULL) {
            size_t n = strlen(f->d_name);
            if (n < 5 || strcmp(f->d_name + n - 4, ".log") != 0)
                continue;
            char rel[1400];
            snprintf(rel, sizeof rel, "logs/%s/%s", e->d_name, f->d_name);
            mfu_ingest_stats st;
            mfu_error err;
            memset(&st, 0, sizeof st);
            (void)fixture_status(rel, NULL, &st, &err);
            if (is_mine(st.format))
                fail_msg("%s was taken by %s", rel, st.format);
            checked++;
        }
        closedir(d2);
    }
    closedir(d);
    assert_true(checked >= 10); /* megatron-lm, nanogpt, nemo, llm.c, torchtitan at least */
}

/* JSON lines look like dicts but are not str(dict) output: not hf's. */
static void json_lines_are_not_hf(void **state)
{
    (void)state;
    buf b = {0};
    for (int i = 1; i <= 20; i++)
        bput(&b, "{\"loss\": 2.5, \"learning_rate\": 1e-05, \"epoch\": %d}\n", i);
    mfu_ingest_opts o;
    memset(&o, 0, sizeof o);
    mfu_run *run = NULL;
    mfu_ingest_stats st;
    mfu_error e;
    memset(&st, 0, sizeof st);
    (void)ingest_buffer_opts(b.p, b.n, &o, &run, &st, &e);
    assert_false(is_mine(st.format));
    mfu_run_free(run);
    /* forced, the reader still takes them (a dict with a double-quoted key is valid repr) */
    run = ingest_buf(&b, "hf", &st);
    assert_int_equal(mfu_run_count(run), 20);
    mfu_run_free(run);
    bfree(&b);
}

/* ---- synthetic logs of thousands of steps -------------------------------------------------- */

#define NSYN 3000

static void synth_check(buf *b, const char *format, size_t rows, int64_t first, int64_t last)
{
    mfu_ingest_stats st;
    mfu_run *run = ingest_buf(b, NULL, &st);
    if (strcmp(st.format, format) != 0)
        fail_msg("synthetic %s log detected as %s", format, st.format);
    assert_int_equal(mfu_run_count(run), rows);
    assert_int_equal(ingest_row(run, 0).step, first);
    assert_int_equal(ingest_row(run, rows - 1).step, last);
    assert_int_equal(st.skipped, 0);
    /* the loss column follows what was written: loss = 10 - i / 1000 */
    const double *loss = mfu_run_column(run, MFU_COL_LOSS);
    assert_non_null(loss);
    assert_near(loss[rows / 2], 10.0 - (double)(rows / 2) / 1000.0, 1e-9);
    mfu_run_free(run);
    bfree(b);
}

static void synthetic_thousands(void **state)
{
    (void)state;
    buf b = {0};
    /* hf: a bar before every dict (logging every 5 steps) */
    for (int i = 0; i < NSYN; i++)
        bput(&b,
             "\r%3d%%|#         | %d/%d [00:10<01:00,  2.50it/s]\r{'loss': %.4f, "
             "'grad_norm': 1.0, 'learning_rate': 1e-05, 'epoch': 0.1}\n",
             i * 100 / NSYN, (i + 1) * 5, NSYN * 5, 10.0 - i / 1000.0);
    synth_check(&b, "hf", NSYN, 5, NSYN * 5);
    for (int i = 0; i < NSYN; i++)
        bput(&b,
             "{'loss': '%.4f', 'grad_norm': '1.0', 'learning_rate': '1e-05', "
             "'memory/max_allocated (GiB)': '2.5', 'tokens/train_per_sec_per_gpu': '1234.5', "
             "'epoch': '0.1'}\n",
             10.0 - i / 1000.0);
    synth_check(&b, "axolotl", NSYN, 1, NSYN);
    for (int i = 1; i <= NSYN; i++) {
        bput(&b,
             "[2024-01-02 03:04:05,000] [INFO] [logging.py:96:log_dist] [Rank 0] step=%d, "
             "skipped=0, lr=[0.0001], mom=[(0.9, 0.95)]\n",
             i);
        bput(&b,
             "[2024-01-02 03:04:05,000] [INFO] [timer.py:260:stop] epoch=0/micro_step=%d/"
             "global_step=%d, RunningAvgSamplesPerSec=250.5, CurrSamplesPerSec=260.25, "
             "MemAllocated=30.5GB, MaxMemAllocated=60.25GB\n",
             i * 4, i);
    }
    /* deepspeed prints no loss: check the merged rows instead */
    {
        mfu_ingest_stats st;
        mfu_run *run = ingest_buf(&b, NULL, &st);
        assert_string_equal(st.format, "deepspeed");
        assert_int_equal(mfu_run_count(run), NSYN);
        assert_int_equal(st.merged, NSYN);
        assert_near(ingest_row(run, NSYN - 1).samples_per_s, 260.25, 1e-12);
        mfu_run_free(run);
        bfree(&b);
    }
    for (int i = 0; i < NSYN; i++)
        bput(&b,
             " samples/sec: 51.234 | iteration %8d/%8d | elapsed time per iteration (ms): "
             "9876.5 | learning rate: 1.234E-04 | approx flops per GPU: 150.3TFLOPS | "
             "lm_loss: %.6E | number of skipped iterations:   0 | number of nan "
             "iterations:   0 |\n",
             (i + 1) * 10, NSYN * 10, 10.0 - i / 1000.0);
    synth_check(&b, "neox", NSYN, 10, NSYN * 10);
    for (int i = 0; i < NSYN; i++)
        bput(&b,
             "completed step: %d, seconds: 5.667, TFLOP/s/device: 134.924, Tokens/s/device: "
             "8672.758, total_weights: 196608, loss: %.3f\n",
             i, 10.0 - i / 1000.0);
    synth_check(&b, "maxtext", NSYN, 0, NSYN - 1);
    for (int i = 0; i < NSYN; i++)
        bput(&b,
             "[batch=%d/%d]:\n\t Train throughput/tokens_per_sec: 10347.9543\n\t Train "
             "metrics/train/LanguageCrossEntropy: %.4f\n",
             i + 1, NSYN, 10.0 - i / 1000.0);
    synth_check(&b, "composer", NSYN, 1, NSYN);
    bput(&b, "step,train/device/mfu,train_loss\n");
    for (int i = 0; i < NSYN; i++)
        bput(&b, "%d,0.45,%.4f\n", i, 10.0 - i / 1000.0);
    synth_check(&b, "lightning", NSYN, 0, NSYN - 1);
    for (int i = 0; i < NSYN; i++)
        bput(&b,
             "Epoch 1 | iter %d step %d | loss train: %.3f, val: n/a | iter time: 112.20 ms "
             "(step) remaining time: 0:01:54\n",
             (i + 1) * 4, i + 1, 10.0 - i / 1000.0);
    synth_check(&b, "lightning", NSYN, 1, NSYN);
    for (int i = 0; i < NSYN; i++)
        bput(&b, "Step %d | loss:%.4f lr:2e-05 tokens_per_second_per_gpu:400.5 \n", i + 1,
             10.0 - i / 1000.0);
    synth_check(&b, "torchtune", NSYN, 1, NSYN);
}

/* ---- mess --------------------------------------------------------------------------------- */

/* Write lines[] twice: clean (one line each, bar lines of their own) and messy (ANSI colour,
 * a [rank0]: prefix, CRLF endings, a tqdm redraw before each line with \r, no newline at the
 * end). Both must give the same rows. */
static void mess_case(const char *format, const char *const *lines, size_t n, size_t rows)
{
    buf clean = {0}, messy = {0};
    for (size_t i = 0; i < n; i++) {
        bput(&clean, "%s\n", lines[i]);
        if (i % 2 == 1)
            bput(&messy, " 50%%|#####     | 1/2 [00:01<00:01,  1.00it/s]\r");
        if (i % 3 == 0)
            bput(&messy, "[rank0]:");
        bput(&messy, "\x1b[32m%s\x1b[0m%s", lines[i], i + 1 < n ? "\r\n" : "");
    }
    mfu_ingest_stats sc, sm;
    mfu_run *a = ingest_buf(&clean, NULL, &sc);
    mfu_run *b = ingest_buf(&messy, NULL, &sm);
    if (strcmp(sc.format, format) != 0 || strcmp(sm.format, format) != 0)
        fail_msg("mess %s: detected %s / %s", format, sc.format, sm.format);
    assert_true(sm.truncated_last_line);
    assert_int_equal(mfu_run_count(a), rows);
    assert_int_equal(mfu_run_count(b), rows);
    for (size_t i = 0; i < rows; i++) {
        mfu_step x = ingest_row(a, i), y = ingest_row(b, i);
        assert_int_equal(x.step, y.step);
        assert_int_equal(x.flags, y.flags);
        const double xs[] = {x.step_time_s, x.tokens,    x.samples,      x.loss,
                             x.lr,          x.grad_norm, x.memory_bytes, x.tokens_per_s,
                             x.flops_per_s, x.mfu,       x.samples_per_s};
        const double ys[] = {y.step_time_s, y.tokens,    y.samples,      y.loss,
                             y.lr,          y.grad_norm, y.memory_bytes, y.tokens_per_s,
                             y.flops_per_s, y.mfu,       y.samples_per_s};
        for (size_t k = 0; k < sizeof xs / sizeof xs[0]; k++)
            if (!(xs[k] == ys[k] || (isnan(xs[k]) && isnan(ys[k]))))
                fail_msg("mess %s row %zu field %zu: %g vs %g", format, i, k, xs[k], ys[k]);
    }
    mfu_run_free(a);
    mfu_run_free(b);
    bfree(&clean);
    bfree(&messy);
}

static mfu_run *messy_run(const char *const *lines, size_t n)
{
    buf b = {0};
    for (size_t i = 0; i < n; i++)
        bput(&b, "%s\n", lines[i]);
    mfu_run *run = ingest_buf(&b, NULL, NULL);
    bfree(&b);
    return run;
}

#define MESS(fmt, arr, rows) mess_case(fmt, arr, sizeof arr / sizeof arr[0], rows)

static void mess_hf_axolotl(void **state)
{
    (void)state;
    static const char *const hf[] = {
        "{'loss': 2.5, 'grad_norm': 1.5, 'learning_rate': 4e-05, 'epoch': 0.5}",
        "{'loss': nan, 'grad_norm': inf, 'learning_rate': 3e-05, 'epoch': 1.0}",
        "{'loss': inf, 'grad_norm': nan, 'learning_rate': 2e-05, 'epoch': 1.5}",
        "{'train_runtime': 30.5, 'train_samples_per_second': 125.9, 'train_loss': 2.2, 'epoch': 3}",
    };
    MESS("hf", hf, 3);
    mfu_run *run = messy_run(hf, 4);
    assert_true(ingest_row(run, 1).flags & MFU_STEP_LOSS_NAN);
    assert_true(isnan(ingest_row(run, 1).grad_norm));          /* inf -> absent */
    assert_true(ingest_row(run, 2).flags & MFU_STEP_LOSS_NAN); /* inf loss */
    assert_true(isnan(ingest_row(run, 2).loss));
    mfu_run_free(run);
    static const char *const ax[] = {
        "{'loss': '1.5', 'grad_norm': '0.5', 'learning_rate': '2e-05', 'ppl': '4.48', "
        "'memory/max_active (GiB)': '2.42', 'tokens/train_per_sec_per_gpu': '1500.5', 'epoch': "
        "'0.1'}",
        "{'loss': 'nan', 'grad_norm': 'nan', 'learning_rate': '2e-05', 'ppl': 'nan', "
        "'memory/max_active (GiB)': '2.42', 'tokens/train_per_sec_per_gpu': '0', 'epoch': '0.2'}",
    };
    MESS("axolotl", ax, 2);
    run = messy_run(ax, 2);
    assert_near(ingest_row(run, 0).memory_bytes, 2.42 * GIB, 1e-12);
    assert_near(ingest_row(run, 0).tokens_per_s, 1500.5, 1e-12);
    assert_true(ingest_row(run, 1).flags & MFU_STEP_LOSS_NAN);
    assert_true(isnan(ingest_row(run, 1).tokens_per_s));
    mfu_run_free(run);
}

static void mess_deepspeed_neox(void **state)
{
    (void)state;
    static const char *const ds[] = {
        "[2024-01-02 03:04:05,000] [INFO] [logging.py:96:log_dist] [Rank 0] step=10, skipped=0, "
        "lr=[0.0001], mom=[(0.9, 0.95)]",
        "[2024-01-02 03:04:05,000] [INFO] [timer.py:260:stop] epoch=0/micro_step=40/"
        "global_step=10, RunningAvgSamplesPerSec=nan, CurrSamplesPerSec=inf, MemAllocated=30.5GB, "
        "MaxMemAllocated=60.25GB",
        "[2024-01-02 03:04:06,000] [INFO] [timer.py:260:stop] 0/11, SamplesPerSec=100.5, "
        "MemAllocated=0.26GB, MaxMemAllocated=9.02GB",
    };
    MESS("deepspeed", ds, 2);
    mfu_run *run = messy_run(ds, 3);
    assert_true(isnan(ingest_row(run, 0).samples_per_s)); /* inf and nan are not rates */
    assert_near(ingest_row(run, 1).samples_per_s, 100.5, 1e-12);
    mfu_run_free(run);
    static const char *const nx[] = {
        " samples/sec: 51.234 | iteration       10/     320 | elapsed time per iteration (ms): "
        "9876.5 | learning rate: 1.234E-04 | approx flops per GPU: 150.3TFLOPS | lm_loss: "
        "7.123456E+00 |",
        " samples/sec: 51.234 | iteration       20/     320 | elapsed time per iteration (ms): "
        "9876.5 | learning rate: 1.234E-04 | approx flops per GPU: 150.3TFLOPS | lm_loss: inf |",
    };
    MESS("neox", nx, 2);
    run = messy_run(nx, 2);
    assert_true(ingest_row(run, 1).flags & MFU_STEP_LOSS_NAN);
    mfu_run_free(run);
}

static void mess_maxtext_composer(void **state)
{
    (void)state;
    static const char *const mx[] = {
        "completed step: 1, seconds: 5.667, TFLOP/s/device: 134.924, Tokens/s/device: 8672.758, "
        "total_weights: 196608, loss: 10.374",
        "completed step: 2, seconds: 5.667, TFLOP/s/device: 134.924, Tokens/s/device: 8672.758, "
        "total_weights: 196608, loss: nan",
        "completed step: 3, seconds: 5.667, TFLOP/s/device: 134.924, Tokens/s/device: 8672.758, "
        "total_weights: 196608, loss: -inf",
    };
    MESS("maxtext", mx, 3);
    mfu_run *run = messy_run(mx, 3);
    assert_true(ingest_row(run, 2).flags & MFU_STEP_LOSS_NAN);
    mfu_run_free(run);
    static const char *const cp[] = {
        "[batch=1/10]:",
        "\t Train throughput/tokens_per_sec: 10347.9543",
        "\t Train metrics/train/LanguageCrossEntropy: 8.4361",
        "[batch=2/10]:",
        "\t Train throughput/tokens_per_sec: 10347.9543",
        "\t Train metrics/train/LanguageCrossEntropy: nan",
    };
    MESS("composer", cp, 2);
    run = messy_run(cp, 6);
    assert_true(ingest_row(run, 1).flags & MFU_STEP_LOSS_NAN);
    mfu_run_free(run);
}

static void mess_lightning_torchtune(void **state)
{
    (void)state;
    static const char *const lg[] = {
        "Epoch 1 | iter 4 step 1 | loss train: 2.846, val: n/a | iter time: 112.20 ms (step) "
        "remaining time: 0:01:54",
        "Epoch 1 | iter 8 step 2 | loss train: nan, val: n/a | iter time: 112.20 ms (step) "
        "remaining time: 0:01:50",
    };
    MESS("lightning", lg, 2);
    static const char *const csv[] = {
        "step,train/device/mfu,train_loss",
        "1,0.45,2.5",
        "2,inf,nan",
    };
    MESS("lightning", csv, 2);
    mfu_run *run = messy_run(csv, 3);
    assert_true(isnan(ingest_row(run, 1).mfu)); /* inf is not a fraction */
    assert_true(ingest_row(run, 1).flags & MFU_STEP_LOSS_NAN);
    mfu_run_free(run);
    static const char *const tt[] = {
        "Step 1 | loss:2.085338592529297 lr:2e-05 tokens_per_second_per_gpu:57.828881833956174 ",
        "Step 2 | loss:nan lr:2e-05 tokens_per_second_per_gpu:405.044978758513 ",
    };
    MESS("torchtune", tt, 2);
    run = messy_run(tt, 2);
    assert_true(ingest_row(run, 1).flags & MFU_STEP_LOSS_NAN);
    mfu_run_free(run);
}

/* ---- helpers of pyrepr.c ------------------------------------------------------------------ */

static void pydict_walk(void **state)
{
    (void)state;
    mfu__span body, k, v;
    const char *d = "{'a': 1, \"it's\": 'x, y', 'mom': [(0.9, 0.95), (0.9, 0.95)], 'n': {'q': "
                    "1}, 'obj': <Image object at 0x7f>, 'last': '3.41'}";
    assert_true(mfu__pydict_open(mfu__span_of(d), &body));
    const char *keys[] = {"a", "it's", "mom", "n", "obj", "last"};
    const char *vals[] = {
        "1",     "'x, y'", "[(0.9, 0.95), (0.9, 0.95)]", "{'q': 1}", "<Image object at 0x7f>",
        "'3.41'"};
    for (size_t i = 0; i < 6; i++) {
        assert_true(mfu__pydict_next(&body, &k, &v));
        assert_true(mfu__span_eq(k, keys[i]));
        assert_true(mfu__span_eq(v, vals[i]));
    }
    assert_false(mfu__pydict_next(&body, &k, &v));
    assert_false(mfu__pydict_open(mfu__span_of("{}"), &body));
    assert_false(mfu__pydict_open(mfu__span_of("{1: 2}"), &body));
    assert_true(mfu__pydict_open(mfu__span_of("{'a': 1, 'b"), &body) == false);
    assert_true(mfu__pydict_open(mfu__span_of("{'a': 1, 'b}"), &body));
    assert_true(mfu__pydict_next(&body, &k, &v));
    assert_false(mfu__pydict_next(&body, &k, &v)); /* unterminated key */
}

static void tqdm_forms(void **state)
{
    (void)state;
    mfu__tqdm t;
    assert_true(mfu__tqdm_parse(mfu__span_of("Epoch 1:  10%|█         | 20/200 "
                                             "[00:11<01:44,  1.72it/s, loss=0.4]{'x': 1}"),
                                &t));
    assert_true(mfu__span_eq(t.desc, "Epoch 1"));
    assert_int_equal(t.n, 20);
    assert_int_equal(t.total, 200);
    assert_near(t.s_per_it, 1.0 / 1.72, 1e-12);
    assert_true(mfu__span_eq(t.rest, "{'x': 1}"));
    assert_true(mfu__tqdm_parse(mfu__span_of("100%|##########| 5/5 [00:10<00:00,  2.05s/it]"), &t));
    assert_near(t.s_per_it, 2.05, 1e-12);
    assert_int_equal(t.desc.n, 0);
    assert_true(mfu__tqdm_parse(mfu__span_of("  0%|          | 0/60 [00:00<?, ?it/s]"), &t));
    assert_true(isnan(t.s_per_it));
    assert_false(mfu__tqdm_parse(mfu__span_of("mfu: 13.99%| not a bar"), &t));
    assert_false(mfu__tqdm_parse(mfu__span_of("1234%|#| 1/2 [00:01<00:01, 1.0it/s]"), &t));
    assert_false(mfu__tqdm_parse(mfu__span_of(" 50%|#####| 1/2 [00:01<00:01, 1.0it/s"), &t));
}

/* ---- bad input ---------------------------------------------------------------------------- */

/* Every prefix of tricky lines, forced into every format of this file: nothing crashes (the
 * sanitizer build checks the reads), and each returns a status. */
static void truncated_lines_never_crash(void **state)
{
    (void)state;
    static const char *const lines[] = {
        ("{'loss': '3.41', 'grad_norm': [1, (2, 3)], \"k'\": 'v', 'memory/max_active (GiB)': "
         "'2.4'}"),
        " 33%|###3      | 20/60 [00:10<00:20,  2.05s/it]{'loss': 2.25}",
        "TrainOutput(global_step=200, training_loss=2.8, metrics={'train_runtime': 116.19})",
        "[Rank 0] step=40, skipped=2, lr=[5e-05], mom=[[0.9, 0.999]]",
        "epoch=0/micro_step=40/global_step=10, RunningAvgSamplesPerSec=1, CurrSamplesPerSec=2",
        "fwd+bwd FLOPS per GPU = 3 * fwd flops per GPU / (fwd+bwd latency):   102.0 TFLOPS",
        " samples/sec: 51.234 | iteration       10/     320 | MFU: 40.12% | lm_loss: 7.1E+00 |",
        "[Rampup Batch Size Phase] completed step: 0, seconds: 2.000, TFLOP/s/device: 10.0",
        "[epoch=1][batch=3/5]:",
        "step,train/device/mfu,train_loss",
        "Epoch 34 | iter 3050700 step 610140 | loss train: 2.846, val: 2.861 | iter time: 1 ms",
        "1|2|Loss: 1.125:   2%|2         | 2/100 [00:04<03:16,  2.00s/it]",
        "Step 1 | loss:2.08 lr:2e-05 tokens_per_second_per_gpu:57.8",
        "Total train batch size (w. parallel, distributed & accumulation) = 64",
        "***** train metrics *****",
    };
    for (size_t f = 0; f < sizeof mine / sizeof mine[0]; f++)
        for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
            size_t len = strlen(lines[i]);
            for (size_t cut = 1; cut <= len; cut++) {
                char *copy = malloc(cut); /* exact size: ASan sees any over-read */
                assert_non_null(copy);
                memcpy(copy, lines[i], cut);
                mfu_ingest_opts o;
                memset(&o, 0, sizeof o);
                o.format = mine[f];
                o.max_line_bytes = 4096; /* small buffers: thousands of sessions */
                mfu_run *run = NULL;
                mfu_error e;
                mfu_status rc = ingest_buffer_opts(copy, cut, &o, &run, NULL, &e);
                mfu_run_free(run);
                assert_true(rc == MFU_OK || rc == MFU_E_EMPTY);
                free(copy);
            }
        }
}

/* Every fixture of tests/data/logs forced into every format here: a status, never a crash. */
static void forced_on_all_fixtures(void **state)
{
    (void)state;
    char root[1024];
    ingest_data_path(root, sizeof root, "logs");
    DIR *d = opendir(root);
    assert_non_null(d);
    struct dirent *e;
    int runs = 0;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char sub[1300];
        snprintf(sub, sizeof sub, "%s/%s", root, e->d_name);
        DIR *d2 = opendir(sub);
        if (!d2)
            continue;
        struct dirent *f;
        while ((f = readdir(d2)) != NULL) {
            size_t n = strlen(f->d_name);
            if (n < 5 || strcmp(f->d_name + n - 4, ".log") != 0)
                continue;
            char rel[1400];
            snprintf(rel, sizeof rel, "logs/%s/%s", e->d_name, f->d_name);
            for (size_t k = 0; k < sizeof mine / sizeof mine[0]; k++) {
                mfu_ingest_stats st;
                mfu_error err;
                mfu_status rc = fixture_status(rel, mine[k], &st, &err);
                assert_true(rc == MFU_OK || rc == MFU_E_EMPTY);
                runs++;
            }
        }
        closedir(d2);
    }
    closedir(d);
    assert_true(runs >= 8 * 20);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hf_bigdl_fixture),
        cmocka_unit_test(hf_string_values_fixture),
        cmocka_unit_test(axolotl_plain_dicts_fixture),
        cmocka_unit_test(axolotl_summary_fixture),
        cmocka_unit_test(hf_bars_banner_and_metrics_block),
        cmocka_unit_test(hf_metrics_block_only),
        cmocka_unit_test(ds_profiler_fixture),
        cmocka_unit_test(ds_2022_notebook_fixture),
        cmocka_unit_test(ds_2022_timer_fixture),
        cmocka_unit_test(ds_config_and_2023_layout),
        cmocka_unit_test(neox_timer_only_fixture),
        cmocka_unit_test(neox_lines_and_args),
        cmocka_unit_test(neox_wins_over_engine_lines),
        cmocka_unit_test(megatron_deepspeed_stays_megatron),
        cmocka_unit_test(maxtext_docs_fixture),
        cmocka_unit_test(maxtext_old_fixture),
        cmocka_unit_test(maxtext_maxtest_fixture),
        cmocka_unit_test(maxtext_header_rampup_and_absl),
        cmocka_unit_test(composer_tab_fixture),
        cmocka_unit_test(composer_rocm_fixture),
        cmocka_unit_test(composer_mfu_token_header_eval),
        cmocka_unit_test(litgpt_fixture),
        cmocka_unit_test(lightning_metrics_csv),
        cmocka_unit_test(lightning_column_limit),
        cmocka_unit_test(torchtune_fixture),
        cmocka_unit_test(torchtune_tqdm_config_memory),
        cmocka_unit_test(detection_of_own_fixtures),
        cmocka_unit_test(detection_leaves_other_fixtures),
        cmocka_unit_test(json_lines_are_not_hf),
        cmocka_unit_test(synthetic_thousands),
        cmocka_unit_test(mess_hf_axolotl),
        cmocka_unit_test(mess_deepspeed_neox),
        cmocka_unit_test(mess_maxtext_composer),
        cmocka_unit_test(mess_lightning_torchtune),
        cmocka_unit_test(pydict_walk),
        cmocka_unit_test(tqdm_forms),
        cmocka_unit_test(truncated_lines_never_crash),
        cmocka_unit_test(forced_on_all_fixtures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
