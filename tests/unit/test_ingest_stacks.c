/*
 * test_ingest_stacks.c - golden tests on the real excerpts added for issue 10 (each with its .md
 * of provenance in tests/data/logs/<stack>/): fairseq, nanotron, llama2.c, modded-nanogpt,
 * ColossalAI, Lightning's TQDM bar, LitGPT's old and new lines, DeepSpeed 2020, Unsloth,
 * Axolotl's renamed keys, HF Trainer with "^M" redraws, and the stacks no format knows, read by
 * the generic reader (MLX, tinygrad, GluonNLP, OneFlow-Benchmark, OpenPCDet, CLTR,
 * LLaMA-Factory, NVIDIA DLLogger). For each: the format detected, the rows, the figures read
 * off the excerpt, the framework's own MFU / FLOP/s / tokens/s kept with its scope, and the
 * lines counted. Every expected number is the one printed in the excerpt (or, where a row's
 * value is derived, the arithmetic is written next to it).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "ingest_test.h"

#define GIB 1073741824.0

static mfu_run *fixture(const char *rel, const char *want_format, size_t rows, mfu_ingest_stats *st)
{
    mfu_run *run = ingest_fixture(rel, NULL, st);
    if (strcmp(st->format, want_format) != 0)
        fail_msg("%s: detected as '%s', expected '%s'", rel, st->format, want_format);
    if (mfu_run_count(run) != rows)
        fail_msg("%s: %zu rows, expected %zu", rel, mfu_run_count(run), rows);
    return run;
}

/* ---- fairseq ------------------------------------------------------------------------------- */

static void fairseq_2018_epoch_progress(void **state)
{
    (void)state;
    mfu_ingest_stats st;
    mfu_run *run =
        fixture("logs/fairseq/fairseq-issue301-2018-epoch-progress.log", "fairseq", 10, &st);
    mfu_step s = ingest_row(run, 0);
    assert_int_equal(s.step, 9 * 8223 + 2000); /* (epoch - 1) x batches per epoch + batch */
    assert_near(s.loss, 1.27, 1e-15);          /* not the running mean (1.50) */
    assert_near(s.tokens_per_s, 962, 0);
    assert_int_equal(s.tokens_per_s_scope, MFU_SCOPE_GLOBAL);
    assert_near(s.tokens, 908, 0);
    assert_near(s.samples, 32, 0);
    assert_near(s.lr, 0.001, 0);
    assert_near(s.grad_norm, 2.1427, 1e-15);
    assert_true(isnan(s.step_time_s)); /* none printed: wpb / wps is implied */
    s = ingest_row(run, 7);
    assert_int_equal(s.step, 10 * 8223 + 1000); /* epoch 11 */
    assert_near(s.loss, 1.89, 1e-15);
    assert_near(s.tokens_per_s, 963, 0);
    assert_int_equal(st.used, 13); /* the summary and the two validation lines too */
    mfu_run_free(run);
}

static void fairseq_2019_num_updates(void **state)
{
    (void)state;
    mfu_ingest_stats st;
    mfu_run *run = fixture("logs/fairseq/fairseq-issue940-2019-num-updates.log", "fairseq", 5, &st);
    mfu_step s = ingest_row(run, 0);
    assert_int_equal(s.step, 445); /* num_updates, not the batch (450) */
    assert_near(s.loss, 11.521, 1e-15);
    assert_near(s.tokens_per_s, 52922, 0);
    assert_near(s.tokens, 104928, 0);
    assert_near(s.samples, 5325, 0);
    assert_near(s.lr, 8.90889e-05, 1e-15);
    assert_near(s.grad_norm, 1.543, 1e-15);
    s = ingest_row(run, 4);
    assert_int_equal(s.step, 645);
    assert_near(s.tokens_per_s, 53573, 0);
    assert_int_equal(st.used, 6); /* the validation line */
    mfu_run_free(run);
}

static void fairseq_2020_train_inner(void **state)
{
    (void)state;
    mfu_ingest_stats st;
    mfu_run *run =
        fixture("logs/fairseq/fairseq-issue2338-2020-train-inner-tpu.log", "fairseq", 5, &st);
    mfu_step s = ingest_row(run, 0);
    assert_int_equal(s.step, 2800);
    assert_near(s.time_s, 1594969862.0, 0); /* 2020-07-17 07:11:02 from the logging prefix */
    assert_near(s.tokens_per_s, 57.3, 1e-15);
    assert_near(s.tokens, 1613, 0);
    assert_near(s.samples, 80, 0);
    assert_near(s.loss, 9.255, 1e-15);
    s = ingest_row(run, 2);
    assert_int_equal(s.step, 3000);
    assert_near(s.tokens_per_s, 16.2, 1e-15);
    assert_near(s.tokens, 469, 0);
    assert_near(s.samples, 8, 0);
    mfu_run_free(run);
}

static void fairseq_json_epoch_records(void **state)
{
    (void)state;
    mfu_ingest_stats st;
    mfu_run *run = fixture("logs/fairseq/fairseq-issue233-json-epoch.log", "fairseq", 3, &st);
    mfu_step s = ingest_row(run, 0);
    assert_int_equal(s.step, 53749);
    assert_near(s.loss, 3.097, 1e-15); /* a quoted string in the record */
    assert_near(s.tokens_per_s, 1667443, 0);
    assert_near(s.tokens, 617156, 0);
    assert_near(s.samples, 16626, 0);
    assert_near(s.grad_norm, 0.194, 1e-15);
    s = ingest_row(run, 2);
    assert_int_equal(s.step, 58049);
    assert_near(s.tokens_per_s, 1658188, 0);
    assert_int_equal(st.used, 7); /* the validation records are recognised */
    mfu_run_free(run);
}

/* ---- nanotron ------------------------------------------------------------------------------ */

static void nanotron_small_run(void **state)
{
    (void)state;
    mfu_ingest_stats st;
    mfu_run *run = fixture("logs/nanotron/nanotron-pr23-tiny-llama-8gpu.log", "nanotron", 3, &st);
    mfu_step s = ingest_row(run, 0);
    assert_int_equal(s.step, 991);
    assert_near(s.step_time_s, 0.045, 1e-15);
    assert_near(s.tokens_per_s, 14200, 0); /* 14.2K */
    assert_int_equal(s.tokens_per_s_scope, MFU_SCOPE_GLOBAL);
    assert_near(s.flops_per_s, 8.69e9, 1e-15); /* model_tflops_per_gpu 0.00869 */
    assert_int_equal(s.flops_per_s_scope, MFU_SCOPE_DEVICE);
    assert_near(s.memory_bytes, 547e6, 0); /* cuda_max_memory_reserved: 547M */
    assert_near(s.samples, 20, 0);
    assert_near(s.loss, 10.6, 1e-15);
    assert_near(s.lr, 1e-05, 1e-15);
    assert_near(s.grad_norm, 0.515, 1e-15);
    assert_near(s.time_s, 1705499247.0, 0); /* 01/17/2024 13:47:27, a US date */
    s = ingest_row(run, 2);
    assert_near(s.step_time_s, 0.0394, 1e-15);
    assert_near(s.flops_per_s, 9.92e9, 1e-15);
    assert_true(isnan(s.memory_bytes));
    const mfu_run_meta *m = mfu_run_meta_get(run);
    assert_int_equal(m->world_size, 8); /* 14.2K / 1.78K = 7.98 */
    mfu_run_free(run);
}

static void nanotron_long_run(void **state)
{
    (void)state;
    mfu_ingest_stats st;
    mfu_run *run = fixture("logs/nanotron/nanotron-issue390-pp2-long-run.log", "nanotron", 4, &st);
    mfu_step s = ingest_row(run, 3);
    assert_int_equal(s.step, 327284);
    assert_near(s.step_time_s, 11.5, 0); /* 11.5K ms */
    assert_near(s.tokens_per_s, 22800, 0);
    assert_near(s.flops_per_s, 38.3e12, 1e-15);
    assert_near(s.loss, 2.36, 1e-15);
    assert_int_equal(mfu_run_meta_get(run)->world_size, 2);
    mfu_run_free(run);
}

/* ---- llama2.c -------------------------------------------------------------------------------- */

static void llama2c_with_mfu(void **state)
{
    (void)state;
    mfu_ingest_stats st;
    mfu_run *run =
        fixture("logs/llama2.c/llama2c-issue461-mps-tinystories.log", "llama2c", 17, &st);
    mfu_step s = ingest_row(run, 0);
    assert_int_equal(s.step, 490);
    assert_near(s.step_time_s, 8.06078, 1e-15);
    assert_near(s.loss, 5.7543, 1e-15);
    assert_near(s.lr, 4.9e-05, 1e-15);
    assert_near(s.mfu, 0.0021, 1e-15); /* the framework's own MFU is kept */
    assert_int_equal(s.mfu_scope, MFU_SCOPE_DEVICE);
    s = ingest_row(run, 1);
    assert_near(s.step_time_s, 870.06753, 1e-15); /* the eval and checkpoint in its timer */
    s = ingest_row(run, 16);
    assert_int_equal(s.step, 650);
    assert_near(s.mfu, 0.0019, 1e-15);
    assert_near(mfu_run_meta_get(run)->reported_peak_flops_per_s, 312e12, 0);
    assert_int_equal(st.used, 17 + 2 + 4); /* rows, eval lines, dataset lines */
    mfu_run_free(run);
}

static void llama2c_derived_without_mfu(void **state)
{
    (void)state;
    mfu_ingest_stats st;
    mfu_run *run = fixture("logs/llama2.c/modded-llama2-issue10-no-mfu.log", "llama2c", 26, &st);
    mfu_step s = ingest_row(run, 0);
    assert_int_equal(s.step, 0);
    assert_near(s.step_time_s, 104.57361, 1e-15);
    assert_true(isnan(s.mfu));
    s = ingest_row(run, 25);
    assert_int_equal(s.step, 250);
    assert_near(s.step_time_s, 13.70739, 1e-15); /* the line ends in blanks */
    assert_near(s.loss, 4.0938, 1e-15);
    mfu_run_free(run);
}

/* ---- modded-nanogpt -------------------------------------------------------------------------- */

static void modded_record_with_timer_restart(void **state)
{
    (void)state;
    mfu_ingest_stats st;
    mfu_run *run = fixture("logs/modded-nanogpt/modded-nanogpt-record-011625-sub3min-8xh100.log",
                           "modded_nanogpt", 36, &st);
    mfu_step s = ingest_row(run, 0);
    assert_int_equal(s.step, 1);
    assert_near(s.step_time_s, 17.555, 1e-15); /* from the step-0 validation line (0 ms) */
    assert_near(ingest_row(run, 1).step_time_s, 0.771, 1e-15);  /* 18326 - 17555 */
    assert_near(ingest_row(run, 10).step_time_s, 0.126, 1e-15); /* step 11: the timer restarted */
    assert_near(ingest_row(run, 11).step_time_s, 0.123, 1e-15); /* 249 - 126 */
    s = ingest_row(run, 25);
    assert_int_equal(s.step, 120);
    assert_near(s.step_time_s, (13547.0 - 1843.0) / 95.0 / 1000.0, 1e-12); /* over the gap */
    s = ingest_row(run, 31);
    assert_int_equal(s.step, 126);
    assert_near(s.step_time_s, 0.144, 1e-15); /* from the training line of 125, not its val */
    assert_true(isnan(s.loss));               /* this version prints no train loss */
    assert_int_equal(st.used, 38);            /* 36 rows and two validation lines */
    mfu_run_free(run);
}

static void modded_parameter_golf_header(void **state)
{
    (void)state;
    mfu_ingest_stats st;
    mfu_run *run = fixture("logs/modded-nanogpt/parameter-golf-baseline-train-loss.log",
                           "modded_nanogpt", 20, &st);
    const mfu_run_meta *m = mfu_run_meta_get(run);
    assert_near(m->tokens_per_step, 524288, 0);
    assert_int_equal(m->seq_len, 1024);
    assert_int_equal(m->world_size, 8);
    assert_int_equal(m->grad_accum, 1);
    assert_near(m->model_params, 17059912, 0);
    mfu_step s = ingest_row(run, 0);
    assert_int_equal(s.step, 1);
    assert_near(s.step_time_s, 0.024, 1e-15);
    assert_near(s.loss, 6.9408, 1e-15);
    assert_near(s.tokens, 524288, 0);
    assert_true(s.flags & MFU_STEP_TOKENS_DERIVED);
    s = ingest_row(run, 10);
    assert_int_equal(s.step, 50);
    assert_near(s.step_time_s, (2126.0 - 409.0) / 40.0 / 1000.0, 1e-12); /* the log interval */
    s = ingest_row(run, 19);
    assert_int_equal(s.step, 500);
    assert_near(s.loss, 2.5265, 1e-15);
    mfu_run_free(run);
}

/* ---- ColossalAI --------------------------------------------------------------------------------
 */

static void colossalai_rich_step_times(void **state)
{
    (void)state;
    mfu_ingest_stats st;
    mfu_run *run =
        fixture("logs/colossalai/colossalai-issue4551-llama2-13b-gemini.log", "colossalai", 2, &st);
    assert_int_equal(ingest_row(run, 0).step, 1);
    assert_near(ingest_row(run, 0).step_time_s, 22.885, 1e-15);
    assert_near(ingest_row(run, 0).time_s, 1693379254.0, 0); /* [08/30/23 07:07:34] */
    assert_int_equal(ingest_row(run, 1).step, 2);
    assert_near(ingest_row(run, 1).step_time_s, 19.714, 1e-15);
    assert_true(isnan(ingest_row(run, 1).time_s)); /* its record is glued to the bar */
    mfu_run_free(run);
}

/* ---- Lightning TQDM bar, LitGPT -----------------------------------------------------------------
 */

static void lightning_bar_last_redraw_wins(void **state)
{
    (void)state;
    mfu_ingest_stats st;
    mfu_run *run =
        fixture("logs/lightning/lightning-issue4225-tqdm-s-per-it.log", "lightning", 5, &st);
    mfu_step s = ingest_row(run, 0);
    assert_int_equal(s.step, 1);
    assert_near(s.step_time_s, 8.77, 1e-15);
    assert_near(s.loss, 10.473, 1e-15); /* the second redraw of count 1 brought the loss */
    s = ingest_row(run, 1);
    assert_near(s.step_time_s, 5.82, 1e-15);
    assert_near(s.loss, 10.224, 1e-15); /* not 10.473, the stale postfix of the first redraw */
    s = ingest_row(run, 4);
    assert_int_equal(s.step, 5);
    assert_near(s.step_time_s, 4.14, 1e-15);
    assert_near(s.loss, 9.847, 1e-15);
    assert_int_equal(st.ignored, 2); /* "Training: 0it", "Training: 0/18" */
    mfu_run_free(run);
}

static void lightning_bar_pasted_as_code(void **state)
{
    (void)state;
    mfu_ingest_stats st;
    mfu_run *run =
        fixture("logs/lightning/lightning-issue12939-tqdm-backticks.log", "lightning", 5, &st);
    mfu_step s = ingest_row(run, 0);
    assert_int_equal(s.step, 9);
    assert_near(s.step_time_s, 133.50, 1e-15); /* as shown (the bug of the issue) */
    assert_near(s.loss, 0.111, 1e-15);         /* "loss/loss=0.111" */
    assert_near(s.lr, 0.00791, 1e-15);
    assert_int_equal(ingest_row(run, 4).step, 41);
    mfu_run_free(run);
}

static void lightning_bar_last_state_only(void **state)
{
    (void)state;
    mfu_ingest_stats st;
    mfu_run *run = fixture("logs/lightning/anemoi-issue614-tqdm-it-per-s.log", "lightning", 1, &st);
    mfu_step s = ingest_row(run, 0);
    assert_int_equal(s.step, 3744);
    assert_near(s.step_time_s, 1.0 / 0.32, 1e-15); /* 0.32 it/s */
    assert_int_equal(st.used, 2);                  /* epoch 1's first draw: no batch done */
    mfu_run_free(run);
}

static void litgpt_2023_grad_accum(void **state)
{
    (void)state;
    mfu_ingest_stats st;
    mfu_run *run = fixture("logs/litgpt/litgpt-issue689-grad-accum-2023.log", "lightning", 12, &st);
    mfu_step s = ingest_row(run, 0);
    assert_int_equal(s.step, 38);
    assert_true(isnan(s.step_time_s));
    s = ingest_row(run, 1);
    assert_int_equal(s.step, 39);
    assert_true(isnan(s.step_time_s)); /* its first iteration's step start was not printed */
    s = ingest_row(run, 2);
    assert_int_equal(s.step, 40);
    assert_near(s.step_time_s, 0.19800 + 0.21531, 1e-12); /* iterations 78 and 79 */
    assert_near(s.loss, 10.8259, 1e-15);
    s = ingest_row(run, 11);
    assert_int_equal(s.step, 49);
    assert_near(s.step_time_s, 0.19709 + 0.21537, 1e-12);
    assert_int_equal(st.merged, 11); /* the accumulating iteration printed under step S */
    mfu_run_free(run);
}

static void litgpt_2023_rank_prefix_no_loss(void **state)
{
    (void)state;
    mfu_ingest_stats st;
    mfu_run *run = fixture("logs/litgpt/litgpt-issue519-tpu-no-loss.log", "lightning", 21, &st);
    mfu_step s = ingest_row(run, 0);
    assert_int_equal(s.step, 35);
    assert_true(isnan(s.step_time_s)); /* the first line: its step's start is unknown */
    assert_int_equal(s.rank, 0);       /* "[rank: 0] " */
    assert_true(isnan(s.loss));
    assert_near(ingest_row(run, 1).step_time_s, 3.36929, 1e-15);
    assert_near(ingest_row(run, 10).step_time_s, 0.95372, 1e-15); /* iteration 44 */
    assert_near(ingest_row(run, 11).step_time_s, 5.78897, 1e-15);
    mfu_run_free(run);
}

static void litgpt_2024_inside_one_step(void **state)
{
    (void)state;
    mfu_ingest_stats st;
    mfu_run *run = fixture("logs/litgpt/litgpt-issue1224-epoch-iter-step.log", "lightning", 1, &st);
    mfu_step s = ingest_row(run, 0);
    assert_int_equal(s.step, 1);
    assert_near(s.loss, 3.724, 1e-15);
    assert_true(isnan(s.step_time_s)); /* no step completes in the window */
    assert_int_equal(st.merged, 16);
    mfu_run_free(run);
}

/* ---- DeepSpeed 2020, HF Trainer family
 * ----------------------------------------------------------- */

static void deepspeed_2020_samples_per_sec(void **state)
{
    (void)state;
    mfu_ingest_stats st;
    mfu_run *run =
        fixture("logs/deepspeed/deepspeed-issue255-2020-samplespersec.log", "deepspeed", 2, &st);
    mfu_step s = ingest_row(run, 0);
    assert_int_equal(s.step, 2650);
    assert_near(s.samples_per_s, 13.19749106827976, 1e-15);
    assert_int_equal(s.samples_per_s_scope, MFU_SCOPE_GLOBAL);
    assert_near(s.time_s, 1591593979.0, 0); /* ">[INFO 2020-06-08 05:26:19] " */
    assert_int_equal(ingest_row(run, 1).step, 2700);
    mfu_run_free(run);
}

static void unsloth_clock_in_step_dicts(void **state)
{
    (void)state;
    mfu_ingest_stats st;
    mfu_run *run = fixture("logs/unsloth/unsloth-pr4547-runtime-in-step-dicts.log", "hf", 2, &st);
    mfu_step s = ingest_row(run, 0);
    assert_int_equal(s.step, 1); /* no bar before it: the record's ordinal */
    assert_near(s.loss, 14.88, 1e-15);
    assert_near(s.lr, 0.000156, 1e-15);
    assert_true(isnan(s.tokens_per_s)); /* train_tokens_per_second: a mean since the start */
    s = ingest_row(run, 1);
    assert_int_equal(s.step, 18); /* the bar glued to a warning: 18/30 */
    assert_near(s.step_time_s, 1.65, 1e-15);
    assert_near(s.loss, 14.64, 1e-15);
    assert_true(isnan(s.tokens)); /* rows numbered two ways: the clock is not differenced */
    mfu_run_free(run);
}

static void axolotl_renamed_memory_keys(void **state)
{
    (void)state;
    mfu_ingest_stats st;
    mfu_run *run =
        fixture("logs/axolotl/axolotl-issue3196-memory-keys-2025.log", "axolotl", 5, &st);
    assert_near(ingest_row(run, 0).memory_bytes, 30.22 * GIB, 1e-12); /* device_mem_reserved */
    assert_near(ingest_row(run, 1).memory_bytes, 41.26 * GIB, 1e-12);
    assert_near(ingest_row(run, 4).loss, 0.2031, 1e-15);
    mfu_run_free(run);
}

static void hf_caret_m_redraws(void **state)
{
    (void)state;
    mfu_ingest_stats st;
    mfu_run *run = fixture("logs/hf-transformers/h2ogpt-pr86-caret-m-redraws.log", "hf", 5, &st);
    mfu_step s = ingest_row(run, 0);
    assert_int_equal(s.step, 1318); /* the bar position when the dict was written */
    assert_near(s.step_time_s, 1.0 / 1.86, 1e-15);
    assert_near(s.loss, 1.5545, 1e-15);
    s = ingest_row(run, 4);
    assert_int_equal(s.step, 1322);
    assert_near(s.step_time_s, 1.0 / 1.90, 1e-15);
    assert_near(s.loss, 1.0574, 1e-15);
    assert_int_equal(st.lines, 5);
    mfu_run_free(run);
}

/* ---- stacks no format knows: the generic reader ---------------------------------------------- */

static void generic_mlx(void **state)
{
    (void)state;
    mfu_ingest_stats st;
    mfu_run *run = fixture("logs/mlx/mlx-vlm-pr795-orpo.log", "generic", 11, &st);
    mfu_step s = ingest_row(run, 0);
    assert_int_equal(s.step, 36);
    assert_near(s.step_time_s, 1.0 / 1.472, 1e-15); /* It/sec 1.472 */
    assert_near(s.tokens_per_s, 67.707, 1e-15);     /* Tokens/sec */
    assert_int_equal(s.tokens_per_s_scope, MFU_SCOPE_GLOBAL);
    assert_near(s.loss, 4.040, 1e-15);
    assert_near(s.lr, 2e-08, 1e-15);
    assert_near(s.memory_bytes, 5.094e9, 1e-15);   /* Peak mem 5.094 GB */
    assert_true(isnan(s.tokens));                  /* the first row has no earlier Trained Tokens */
    assert_near(ingest_row(run, 1).tokens, 46, 0); /* 1702 - 1656 */
    assert_non_null(strstr(st.note, "tokens_per_s <- 'Tokens/sec'"));
    assert_non_null(strstr(st.note, "step_time_s <- 1/'It/sec'"));
    mfu_run_free(run);

    run = fixture("logs/mlx/unsloth-pr1289-mlx-apple-silicon.log", "generic", 10, &st);
    s = ingest_row(run, 1);
    assert_int_equal(s.step, 41);
    assert_near(s.tokens, 7189 - 7015, 0);
    assert_near(s.tokens_per_s, 100.901, 1e-15);
    mfu_run_free(run);
}

static void generic_takes_the_shape_with_a_rate(void **state)
{
    (void)state;
    mfu_ingest_stats st;
    mfu_run *run = fixture("logs/mlx/mlx-lm-pr326-interleaved-debug.log", "generic", 1, &st);
    mfu_step s = ingest_row(run, 0);
    assert_int_equal(s.step, 70); /* the Iter line, not the nine [GRAD-DBG] it=N lines */
    assert_near(s.tokens_per_s, 1728.137, 1e-15);
    assert_near(s.step_time_s, 1.0 / 17.598, 1e-15);
    assert_near(s.memory_bytes, 1.437e9, 1e-15);
    assert_non_null(strstr(st.note, "10 other numeric lines left"));
    mfu_run_free(run);
}

static void generic_value_before_name(void **state)
{
    (void)state;
    mfu_ingest_stats st;
    mfu_run *run =
        fixture("logs/tinygrad/tinygrad-pr13803-llama3-8b-mlperf.log", "generic", 10, &st);
    mfu_step s = ingest_row(run, 0);
    assert_int_equal(s.step, 1);                   /* the line's first number */
    assert_near(s.step_time_s, 93.44, 1e-15);      /* "93.44 s run" */
    assert_near(s.loss, 11.875, 1e-15);            /* "11.8750 loss" */
    assert_near(s.lr, 1e-12, 1e-15);               /* "0.000000000001 LR" */
    assert_near(s.memory_bytes, 642.43e9, 1e-15);  /* "642.43 GB used" */
    assert_near(s.flops_per_s, 19644.30e9, 1e-15); /* the framework's own "19644.30 GFLOPS" */
    s = ingest_row(run, 3);
    assert_near(s.step_time_s, 4.32, 1e-15);
    assert_near(s.flops_per_s, 401488.40e9, 1e-15);
    mfu_run_free(run);
}

static void generic_interval_time(void **state)
{
    (void)state;
    mfu_ingest_stats st;
    mfu_run *run = fixture("logs/gluon-nlp/gluon-nlp-pr1261-squad-finetune.log", "generic", 6, &st);
    mfu_step s = ingest_row(run, 0);
    assert_int_equal(s.step, 2 * 8164 + 4134);  /* epoch x batches per epoch + batch */
    assert_true(isnan(s.step_time_s));          /* its interval's start is not in the excerpt */
    assert_near(s.samples_per_s, 53.79, 1e-15); /* "Throughput=53.79 samples/s" */
    s = ingest_row(run, 1);
    assert_int_equal(s.step, 2 * 8164 + 4434);
    /* "Time cost=92.57" is the wall time of the 300 batches since the line before (the
     * timestamps are 92.568 s apart): per step */
    assert_near(s.step_time_s, 92.57 / 300.0, 1e-12);
    assert_near(s.lr, 0.00001079, 1e-15);
    assert_near(s.grad_norm, 19.0388, 1e-15);
    assert_non_null(strstr(st.note, "per step of the interval 'Time cost'"));
    mfu_run_free(run);
}

static void generic_other_stacks(void **state)
{
    (void)state;
    mfu_ingest_stats st;
    mfu_run *run = fixture("logs/oneflow/oneflow-benchmark-pr104-resnet50.log", "generic", 6, &st);
    assert_int_equal(ingest_row(run, 0).step, 100);
    assert_near(ingest_row(run, 0).samples_per_s, 384.622, 1e-15);
    assert_near(ingest_row(run, 0).loss, 1.236110, 1e-15);
    assert_non_null(strstr(st.note, "left: 'top_1', 'top_k'"));
    mfu_run_free(run);

    run = fixture("logs/openpcdet/openpcdet-pr1229-timm-style.log", "generic", 4, &st);
    assert_int_equal(ingest_row(run, 0).step, 1); /* Acc_iter */
    assert_near(ingest_row(run, 0).step_time_s, 4.04, 1e-15);
    assert_near(ingest_row(run, 1).step_time_s, 0.31, 1e-15); /* current, not the mean (0.31) */
    assert_near(ingest_row(run, 3).step_time_s, 0.15, 1e-15); /* not the mean (0.25) */
    assert_near(ingest_row(run, 1).loss, 36.77, 1e-15);       /* not the mean (81.7) */
    assert_int_equal(ingest_row(run, 3).step, 150);
    mfu_run_free(run);

    run = fixture("logs/cltr/cltr-issue15-epoch-time.log", "generic", 7, &st);
    assert_int_equal(ingest_row(run, 0).step, 844); /* the epoch is the step */
    assert_near(ingest_row(run, 0).step_time_s, 150.973, 1e-15);
    assert_near(ingest_row(run, 4).step_time_s, 139.116, 1e-15);
    assert_near(ingest_row(run, 0).loss, 10.32482, 1e-15);
    mfu_run_free(run);

    run = fixture("logs/llamafactory/llamafactory-mire-issue1-trainer-log-jsonl.log", "generic", 5,
                  &st);
    assert_int_equal(ingest_row(run, 1).step, 2);
    assert_near(ingest_row(run, 1).step_time_s, 10, 0); /* elapsed 0:00:25 - 0:00:15 */
    assert_near(ingest_row(run, 3).step_time_s, 11, 0); /* 0:00:46 - 0:00:35 */
    assert_near(ingest_row(run, 2).loss, 1.5921, 1e-15);
    assert_int_equal(st.ignored, 1); /* the eval record is another shape */
    mfu_run_free(run);

    run = fixture("logs/nvidia-dle/dle-issue1107-bert-squad-dllogger.log", "generic", 9, &st);
    mfu_step s = ingest_row(run, 1);
    assert_int_equal(s.step, 2922);
    assert_near(s.loss, 2.592996120452881, 1e-15);
    /* no time on the line: the DLLogger timestamps, 02:23:00.608205 - 02:22:54.614486 */
    assert_near(s.step_time_s, 5.993719 / 50.0, 1e-6);
    assert_non_null(strstr(st.note, "the line timestamps"));
    mfu_run_free(run);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fairseq_2018_epoch_progress),
        cmocka_unit_test(fairseq_2019_num_updates),
        cmocka_unit_test(fairseq_2020_train_inner),
        cmocka_unit_test(fairseq_json_epoch_records),
        cmocka_unit_test(nanotron_small_run),
        cmocka_unit_test(nanotron_long_run),
        cmocka_unit_test(llama2c_with_mfu),
        cmocka_unit_test(llama2c_derived_without_mfu),
        cmocka_unit_test(modded_record_with_timer_restart),
        cmocka_unit_test(modded_parameter_golf_header),
        cmocka_unit_test(colossalai_rich_step_times),
        cmocka_unit_test(lightning_bar_last_redraw_wins),
        cmocka_unit_test(lightning_bar_pasted_as_code),
        cmocka_unit_test(lightning_bar_last_state_only),
        cmocka_unit_test(litgpt_2023_grad_accum),
        cmocka_unit_test(litgpt_2023_rank_prefix_no_loss),
        cmocka_unit_test(litgpt_2024_inside_one_step),
        cmocka_unit_test(deepspeed_2020_samples_per_sec),
        cmocka_unit_test(unsloth_clock_in_step_dicts),
        cmocka_unit_test(axolotl_renamed_memory_keys),
        cmocka_unit_test(hf_caret_m_redraws),
        cmocka_unit_test(generic_mlx),
        cmocka_unit_test(generic_takes_the_shape_with_a_rate),
        cmocka_unit_test(generic_value_before_name),
        cmocka_unit_test(generic_interval_time),
        cmocka_unit_test(generic_other_stacks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
