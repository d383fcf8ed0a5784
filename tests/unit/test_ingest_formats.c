/*
 * test_ingest_formats.c - golden tests of the nanoGPT, llm.c, torchtitan and NeMo formats on
 * every fixture of tests/data/logs (values read off the excerpts), their messy variants
 * (ANSI colours, rank prefixes, interleaved ranks, tqdm redraws, old layouts, NaN / inf,
 * -100% sentinels, foreign lines), and a synthetic log of thousands of steps per format,
 * streamed plain, through gzip and through zstd.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <zlib.h>
#include <zstd.h>

#include "ingest_test.h"

/* 2023-03-22 09:30:39 UTC */
#define T_2023_03_22_093039 1679477439.0

static void nanogpt_fixtures(void **state)
{
    (void)state;
    mfu_ingest_stats st;
    mfu_run *run =
        ingest_fixture("logs/nanogpt/nanogpt-issue110-gpt2-124m-8xa100-preMFU.log", NULL, &st);
    assert_string_equal(st.format, "nanogpt");
    assert_int_equal(mfu_run_count(run), 11);
    mfu_step s = ingest_row(run, 0);
    assert_int_equal(s.step, 1631);
    assert_near(s.loss, 4.0863, 1e-12);
    assert_near(s.step_time_s, 0.56194, 1e-12);
    assert_true(isnan(s.mfu)); /* pre-MFU layout */
    assert_false(s.flags & MFU_STEP_MFU_SENTINEL);
    s = ingest_row(run, 10);
    assert_int_equal(s.step, 1641);
    assert_near(s.step_time_s, 0.56731, 1e-12);
    assert_int_equal(st.ignored, 2); /* "$ torchrun ..." and "..." */
    mfu_run_free(run);

    run = ingest_fixture("logs/nanogpt/nanogpt-issue215-v100-fp16-nan.log", NULL, &st);
    assert_int_equal(mfu_run_count(run), 15); /* 2920..2990 and 3000..3060 */
    s = ingest_row(run, 0);
    assert_int_equal(s.step, 2920);
    assert_near(s.mfu, 0.1534, 1e-12);
    assert_int_equal(s.mfu_scope, MFU_SCOPE_DEVICE);
    assert_near(s.time_s, T_2023_03_22_093039, 0); /* the user's timestamp prefix */
    s = ingest_row(run, 8);
    assert_int_equal(s.step, 3000);
    assert_near(s.step_time_s, 35.39233, 1e-12); /* eval + checkpoint inside */
    assert_near(s.mfu, 0.1385, 1e-12);
    assert_near(s.loss, 4.2490, 1e-12);
    s = ingest_row(run, 9);
    assert_int_equal(s.step, 3010);
    assert_true(isnan(s.loss));
    assert_true(s.flags & MFU_STEP_LOSS_NAN);
    assert_near(s.step_time_s, 1.01995, 1e-12);
    const mfu_run_meta *m = mfu_run_meta_get(run);
    assert_near(m->reported_peak_flops_per_s, 312e12, 0);
    assert_non_null(strstr(m->convention, "A100"));
    assert_int_equal(st.used, 16); /* 15 steps + the eval line */
    assert_int_equal(st.skipped, 0);
    mfu_run_free(run);
}

static void llmc_fixtures(void **state)
{
    (void)state;
    mfu_ingest_stats st;
    mfu_run *run = ingest_fixture("logs/llm.c/llmc-discussion677-gpt2-1558m-8xh100.log", NULL, &st);
    assert_string_equal(st.format, "llmc");
    assert_int_equal(mfu_run_count(run), 10);
    const mfu_run_meta *m = mfu_run_meta_get(run);
    assert_int_equal(m->micro_batch, 16);
    assert_int_equal(m->seq_len, 1024);
    assert_int_equal(m->world_size, 8);
    assert_int_equal(m->grad_accum, 8);
    assert_near(m->tokens_per_step, 1048576, 0);
    assert_near(m->model_params, 1557686400, 0);
    mfu_step s = ingest_row(run, 0);
    assert_int_equal(s.step, 1);
    assert_near(s.loss, 11.133732, 1e-12);
    assert_near(s.grad_norm, 52.9732, 1e-12);
    assert_near(s.lr, 8.57e-07, 1e-12);
    assert_near(s.step_time_s, 3.05636, 1e-12);
    assert_near(s.mfu, 0.426, 1e-12);
    assert_near(s.tokens_per_s, 343080, 0);
    assert_int_equal(s.tokens_per_s_scope, MFU_SCOPE_GLOBAL);
    assert_near(s.tokens, 1048576, 0);
    assert_true(s.flags & MFU_STEP_TOKENS_DERIVED);
    s = ingest_row(run, 9);
    assert_int_equal(s.step, 10);
    assert_near(s.step_time_s, 2.7494, 1e-12);
    assert_near(s.tokens_per_s, 381369, 0);
    mfu_run_free(run);

    run = ingest_fixture("logs/llm.c/llmc-issue796-blackwell-unknown-mfu.log", NULL, &st);
    assert_int_equal(mfu_run_count(run), 11);
    for (size_t i = 0; i < 11; i++) { /* -100.0% on every line: unknown GPU */
        s = ingest_row(run, i);
        assert_true(isnan(s.mfu));
        assert_true(s.flags & MFU_STEP_MFU_SENTINEL);
    }
    s = ingest_row(run, 0);
    assert_int_equal(s.step, 61);
    assert_near(s.step_time_s, 0.04457, 1e-12);
    assert_near(s.tokens_per_s, 91886, 0);
    assert_true(isnan(s.tokens)); /* no header in the excerpt */
    mfu_run_free(run);
}

static void torchtitan_fixtures(void **state)
{
    (void)state;
    mfu_ingest_stats st;
    mfu_run *run = ingest_fixture(
        "logs/torchtitan/torchtitan-pr1287-llama3-8b-h100-gc-profiler.log", NULL, &st);
    assert_string_equal(st.format, "torchtitan");
    assert_int_equal(mfu_run_count(run), 6);
    mfu_step s = ingest_row(run, 0);
    assert_int_equal(s.step, 200);
    assert_near(s.loss, 6.1384, 1e-12);
    assert_near(s.memory_bytes, 49.66 * 1073741824.0, 1e-12);
    assert_near(s.tokens_per_s, 5856, 0);
    assert_int_equal(s.tokens_per_s_scope, MFU_SCOPE_DEVICE);
    assert_near(s.flops_per_s, 339.16e12, 1e-12);
    assert_int_equal(s.flops_per_s_scope, MFU_SCOPE_DEVICE);
    assert_near(s.mfu, 0.3429, 1e-12);
    assert_int_equal(s.rank, 0);
    assert_near(s.time_s, 1750113050.322, 1e-12); /* 2025-06-16 22:30:50,322 */
    assert_true(isnan(s.grad_norm));
    s = ingest_row(run, 1);
    assert_int_equal(s.step, 210);
    assert_near(s.tokens_per_s, 5593, 0); /* the interval with the profiler dump */
    assert_int_equal(st.ignored, 4);      /* GC and profiler lines */
    mfu_run_free(run);

    run =
        ingest_fixture("logs/torchtitan/torchtitan-pr2389-moe-b200-8rank-noprefix.log", NULL, &st);
    assert_int_equal(mfu_run_count(run), 2); /* 7 copies of step 4 merged */
    assert_int_equal(st.merged, 6);
    s = ingest_row(run, 0);
    assert_int_equal(s.step, 4);
    assert_near(s.loss, 7.62585, 1e-12);
    assert_near(s.grad_norm, 26.625, 1e-12);
    assert_near(s.tokens_per_s, 10050, 0); /* the first copy */
    assert_near(s.flops_per_s, 314.71e12, 1e-12);
    assert_near(s.mfu, 0.1399, 1e-12);
    s = ingest_row(run, 1);
    assert_int_equal(s.step, 5);
    assert_near(s.grad_norm, 46.5, 1e-12);
    mfu_run_free(run);
}

static void nemo_fixtures(void **state)
{
    (void)state;
    mfu_ingest_stats st;
    mfu_run *run = ingest_fixture("logs/nemo/nemo2-bionemo-pr740-progress-printer.log", NULL, &st);
    assert_string_equal(st.format, "nemo");
    assert_int_equal(mfu_run_count(run), 6);
    mfu_step s = ingest_row(run, 0);
    assert_int_equal(s.step, 120);
    assert_near(s.loss, 1.233, 1e-12);
    assert_near(s.step_time_s, 0.03146, 1e-12);
    assert_near(s.lr, 3e-05, 1e-12);
    assert_near(s.samples, 1, 0);
    s = ingest_row(run, 5);
    assert_int_equal(s.step, 125);
    assert_near(s.loss, 1.34, 1e-12);
    mfu_run_free(run);

    run = ingest_fixture("logs/nemo/nemo-automodel-pr3473-tps.log", NULL, &st);
    assert_int_equal(mfu_run_count(run), 7);
    assert_int_equal(mfu_run_meta_get(run)->world_size, 8); /* tps / per-gpu tps */
    s = ingest_row(run, 6);
    assert_int_equal(s.step, 15);
    assert_near(s.tokens_per_s, 20316.81, 1e-12);
    assert_int_equal(s.tokens_per_s_scope, MFU_SCOPE_GLOBAL);
    assert_near(s.tokens, 42959, 0);
    assert_near(s.memory_bytes, 29.31 * 1073741824.0, 1e-12);
    assert_near(s.loss, 0.7918, 1e-12);
    assert_near(s.grad_norm, 1.1589, 1e-12);
    assert_near(s.lr, 1e-05, 1e-12);
    mfu_run_free(run);
}

/* Every fixture's convention text fits the metadata field (not cut). */
static void conventions_fit(void **state)
{
    (void)state;
    static const char *const fx[] = {
        "logs/nanogpt/nanogpt-issue215-v100-fp16-nan.log",
        "logs/llm.c/llmc-issue796-blackwell-unknown-mfu.log",
        "logs/torchtitan/torchtitan-pr1287-llama3-8b-h100-gc-profiler.log",
        "logs/megatron-lm/fixstars-mdk-gpt3-7b-fp8-2node.log",
    };
    for (size_t i = 0; i < sizeof fx / sizeof fx[0]; i++) {
        mfu_run *run = ingest_fixture(fx[i], NULL, NULL);
        size_t n = strlen(mfu_run_meta_get(run)->convention);
        assert_true(n > 20 && n < MFU_META_STR - 1);
        mfu_run_free(run);
    }
}

/* ---- messy variants --------------------------------------------------------------------- */

static void torchtitan_ansi_interleaved_ranks(void **state)
{
    (void)state;
    const char *text =
        "[rank0]:[titan] 2026-01-01 00:00:00,000 - root - INFO - \x1b[31mstep:  1  \x1b[32mloss: "
        " 9.00000  \x1b[38;5;214mgrad_norm:  1.0000  \x1b[33mmemory: 10.00GiB(10.00%)  "
        "\x1b[34mtps: "
        "1,000  \x1b[36mtflops: 10.00  \x1b[35mmfu: N/A\x1b[39m\n"
        "[rank1]:[titan] 2026-01-01 00:00:00,001 - root - INFO - \x1b[31mstep:  1  \x1b[32mloss: "
        " 9.00000  \x1b[38;5;214mgrad_norm:  1.0000  \x1b[33mmemory: 10.00GiB(10.00%)  "
        "\x1b[34mtps: "
        "1,001  \x1b[36mtflops: 10.01  \x1b[35mmfu: N/A\x1b[39m\n"
        "[rank0]:W0101 00:00:01.000000 123 torch/distributed/foo.py:10] a warning from torch\n"
        "[rank0]:[titan] 2026-01-01 00:00:02,000 - root - INFO - step:  2  loss:      nan  "
        "grad_norm:     inf  memory: 10.00GiB(10.00%)  tps: 2,000  tflops: 20.00  mfu: 2.00%\n"
        "[rank1]:[titan] 2026-01-01 00:00:02,000 - root - INFO - step:  2  loss:      nan  "
        "grad_norm:     inf  memory: 10.00GiB(10.00%)  tps: 2,002  tflops: 20.02  mfu: 2.00%\n"
        "[rank1]:Traceback (most recent call last):\n"
        "[rank0]:[titan] 2026-01-01 00:00:03,000 - root - INFO - validate step: 2  loss: 9.1  "
        "memory: 10.00GiB(10.00%)  tps: 3,000\n";
    mfu_ingest_stats st;
    mfu_run *run = ingest_text(text, NULL, &st);
    assert_string_equal(st.format, "torchtitan");
    assert_int_equal(mfu_run_count(run), 2);
    assert_int_equal(st.merged, 2);
    mfu_step s = ingest_row(run, 0);
    assert_near(s.tokens_per_s, 1000, 0); /* rank 0's copy, first */
    assert_int_equal(s.rank, 0);
    assert_true(isnan(s.mfu));
    assert_true(s.flags & MFU_STEP_MFU_SENTINEL); /* "mfu: N/A" under FP8 */
    assert_near(s.loss, 9.0, 0);
    s = ingest_row(run, 1);
    assert_true(s.flags & MFU_STEP_LOSS_NAN);
    assert_true(isnan(s.loss));
    assert_true(isnan(s.grad_norm)); /* inf: not a number we keep */
    assert_near(s.mfu, 0.02, 1e-12);
    assert_int_equal(st.ignored, 2); /* the torch warning and the traceback */
    assert_int_equal(st.used, 5);    /* 4 step lines + validate */
    mfu_run_free(run);
}

static void nemo_tqdm_redraws(void **state)
{
    (void)state;
    /* NeMo 1.x: the bar redraws with \r on one physical line, a plain Lightning bar first */
    const char *text =
        "Sanity Checking DataLoader 0: 100%|##########| 2/2 [00:00<00:00,  3.10it/s]\n"
        "Epoch 0:   1%|          | 795/77225 [9:07:58<878:01:48, 41.36s/it, loss=3.1, v_num=, "
        "reduced_train_loss=3.090, global_step=794.0, consumed_samples=1.63e+6]\r"
        "Epoch 0:   1%|          | 796/77225 [9:08:39<878:00:00, 41.30s/it, loss=3.1, v_num=, "
        "reduced_train_loss=3.080, global_step=795.0, consumed_samples=1.63e+6]\r"
        "Epoch 0:   1%|          | 796/77225 [9:08:39<878:00:00, 41.30s/it, loss=3.1, v_num=, "
        "reduced_train_loss=3.080, global_step=795.0, consumed_samples=1.63e+6]\r\n"
        "Epoch 0:   1%|          | 797/77225 [9:09:20<877:59:00,  2.00it/s, loss=3.1, v_num=, "
        "reduced_train_loss=nan, global_step=796.0, train_step_timing in s=40.5]\n";
    mfu_ingest_stats st;
    mfu_run *run = ingest_text(text, NULL, &st);
    assert_string_equal(st.format, "nemo");
    assert_int_equal(mfu_run_count(run), 3);
    assert_int_equal(st.merged, 1); /* the repeated redraw */
    mfu_step s = ingest_row(run, 0);
    assert_int_equal(s.step, 794);
    assert_near(s.loss, 3.090, 1e-12);
    assert_near(s.step_time_s, 41.36, 1e-12); /* tqdm's rate when no timing key */
    s = ingest_row(run, 2);
    assert_int_equal(s.step, 796);
    assert_near(s.step_time_s, 40.5, 1e-12); /* train_step_timing wins over the rate */
    assert_true(s.flags & MFU_STEP_LOSS_NAN);
    assert_int_equal(st.lines, 3);
    assert_int_equal(st.ignored, 1); /* the sanity-check bar */
    mfu_run_free(run);

    /* ProgressPrinter with TFLOPS_per_GPU and tokens_per_sec_per_gpu */
    run = ingest_text("Training epoch 1, iteration 9/99 | lr: 1.5e-04 | global_batch_size: 256 | "
                      "global_step: 109 | reduced_train_loss: 2.5 | train_step_timing in s: 1.25 "
                      "| TFLOPS_per_GPU: 412.5 | tokens_per_sec_per_gpu: 1.2e+04\n",
                      NULL, &st);
    s = ingest_row(run, 0);
    assert_int_equal(s.step, 109);
    assert_near(s.flops_per_s, 412.5e12, 1e-12);
    assert_int_equal(s.flops_per_s_scope, MFU_SCOPE_DEVICE);
    assert_near(s.tokens_per_s, 12000, 0);
    assert_int_equal(s.tokens_per_s_scope, MFU_SCOPE_DEVICE);
    assert_near(s.samples, 256, 0);
    mfu_run_free(run);
}

static void llmc_old_layouts(void **state)
{
    (void)state;
    /* the printf of 2024-05 (with acc), 05-19 (norm), 05-25 (A100 fp16 MFU) */
    const char *text =
        "0: step    1/74: train loss 4.283451 (acc 4.283451) (1234.567890 ms, 3318 tok/s)\n"
        "0: step    2/74: train loss 4.1 norm 1.2345 (1200.00 ms, 3413 tok/s)\n"
        "1: step    2/74: train loss 4.1 norm 1.2345 (1200.00 ms, 3413 tok/s)\n"
        "0: step    3/74 | loss inf (+nanz)| norm 1.1000 (+nanz)| lr 3.00e-04 | 1100.00 ms | "
        "35.5% A100 fp16 MFU | 3724 tok/s\n";
    mfu_ingest_stats st;
    mfu_run *run = ingest_text(text, NULL, &st);
    assert_string_equal(st.format, "llmc");
    assert_int_equal(mfu_run_count(run), 3);
    mfu_step s = ingest_row(run, 0);
    assert_near(s.loss, 4.283451, 1e-12);
    assert_near(s.step_time_s, 1.23456789, 1e-12);
    assert_near(s.tokens_per_s, 3318, 0);
    assert_int_equal(s.rank, 0); /* srun --label */
    s = ingest_row(run, 1);
    assert_near(s.grad_norm, 1.2345, 1e-12);
    s = ingest_row(run, 2);
    assert_true(s.flags & MFU_STEP_LOSS_NAN);
    assert_near(s.mfu, 0.355, 1e-12);
    assert_near(s.lr, 3e-4, 1e-12);
    assert_int_equal(st.merged, 1);
    mfu_run_free(run);
}

static void nanogpt_sentinels_and_tokens(void **state)
{
    (void)state;
    const char *text = "tokens per iteration will be: 491,520\n"
                       "number of parameters: 123.69M\n"
                       "step 0: train loss 10.9, val loss 10.9\n"
                       "iter 0: loss 10.9000, time 30000.00ms, mfu -100.00%\n"
                       "iter 1: loss 10.1000, time 500.00ms, mfu -100.00%\n"
                       "iter 5: loss 9.5000, time 490.00ms, mfu 40.12%\n";
    mfu_ingest_stats st;
    mfu_run *run = ingest_text(text, NULL, &st);
    assert_int_equal(mfu_run_count(run), 3);
    assert_near(mfu_run_meta_get(run)->tokens_per_step, 491520, 0);
    mfu_step s = ingest_row(run, 0);
    assert_true(s.flags & MFU_STEP_MFU_SENTINEL);
    assert_near(s.tokens, 491520, 0);
    assert_true(s.flags & MFU_STEP_TOKENS_DERIVED);
    s = ingest_row(run, 2);
    assert_false(s.flags & MFU_STEP_MFU_SENTINEL);
    assert_near(s.mfu, 0.4012, 1e-12);
    assert_int_equal(st.ignored, 1); /* the parameter count is not read */
    mfu_run_free(run);
}

/* ---- synthetic logs of thousands of steps ----------------------------------------------- */

#define SYN_STEPS 3000

typedef struct synth {
    char *buf;
    size_t n, cap;
} synth;

static void put(synth *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(synth *s, const char *fmt, ...)
{
    for (;;) {
        if (!s->buf) { /* NULL + 0 is undefined (clang's UBSan says so): allocate first */
            s->cap = 4096;
            s->buf = malloc(s->cap);
            assert_non_null(s->buf);
        }
        va_list ap;
        va_start(ap, fmt);
        int r = vsnprintf(s->buf + s->n, s->cap - s->n, fmt, ap);
        va_end(ap);
        if (r >= 0 && (size_t)r < s->cap - s->n) {
            s->n += (size_t)r;
            return;
        }
        s->cap = s->cap * 2 + 4096;
        s->buf = realloc(s->buf, s->cap);
        assert_non_null(s->buf);
    }
}

/* Step i's values, known to the test. */
static double syn_loss(int i)
{
    return 10.0 - i * 0.001;
}
static double syn_ms(int i)
{
    return 100.0 + i % 10;
}

static void synth_log(const char *fmt, synth *s)
{
    if (strcmp(fmt, "megatron") == 0)
        put(s, "------------------------ arguments ------------------------\n"
               "  seq_length ........ 2048\n"
               "-------------------- end of arguments ---------------------\n");
    if (strcmp(fmt, "csv") == 0)
        put(s, "iter,loss,dt_ms\n");
    for (int i = 1; i <= SYN_STEPS; i++) {
        double loss = syn_loss(i), ms = syn_ms(i);
        if (strcmp(fmt, "megatron") == 0)
            put(s,
                " [2026-01-01 00:00:00] iteration %8d/%8d | consumed samples: %12d | elapsed "
                "time per iteration (ms): %.1f | throughput per GPU (TFLOP/s/GPU): %.1f | learning "
                "rate: %.6E | global batch size: %5d | lm loss: %.6E | loss scale: 1.0 | grad "
                "norm: %.3f | number of skipped iterations: %3d | number of nan iterations: %3d "
                "|\n",
                i, SYN_STEPS, i * 64, ms, 400.0 + i % 3, 1e-4, 64, loss, 1.5, 0, 0);
        else if (strcmp(fmt, "nemo") == 0)
            put(s,
                "Training epoch 0, iteration %d/%d | lr: 0.0001 | global_batch_size: 8 | "
                "global_step: %d | reduced_train_loss: %.4g | train_step_timing in s: %.4g\n",
                i, SYN_STEPS, i, loss, ms / 1000.0);
        else if (strcmp(fmt, "nanogpt") == 0)
            put(s, "iter %d: loss %.4f, time %.2fms, mfu %.2f%%\n", i, loss, ms, 30.0);
        else if (strcmp(fmt, "llmc") == 0)
            put(s,
                "step %4d/%d | loss %7.6f (+nanz)| norm %6.4f (+nanz)| lr %.2e | %.2f ms | "
                "%.1f%% bf16 MFU | %.0f tok/s\n",
                i, SYN_STEPS, loss, 1.0, 3e-4, ms, 45.0, 40960.0);
        else if (strcmp(fmt, "torchtitan") == 0)
            put(s,
                "[rank0]:[titan] 2026-01-01 00:00:00,000 - root - INFO - step: %2d  loss: %8.5f  "
                "grad_norm: %7.4f  memory: %5.2fGiB(%.2f%%)  tps: %d,%03d  tflops: %.2f  mfu: "
                "%.2f%%\n",
                i, loss, 1.0, 40.0, 50.0, 5 + i % 3, i % 1000, 300.0, 30.0);
        else if (strcmp(fmt, "jsonl") == 0)
            put(s, "{\"iter\": %d, \"loss\": %.6f, \"dt\": %.1f}\n", i, loss, ms);
        else if (strcmp(fmt, "csv") == 0)
            put(s, "%d,%.6f,%.1f\n", i, loss, ms);
    }
}

static unsigned char *compress_gz(const char *text, size_t n, size_t *out_n)
{
    uLong cap = compressBound((uLong)n) + 64;
    unsigned char *out = malloc(cap);
    z_stream z;
    memset(&z, 0, sizeof z);
    assert_int_equal(deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
    z.next_in = (unsigned char *)(uintptr_t)text;
    z.avail_in = (uInt)n;
    z.next_out = out;
    z.avail_out = (uInt)cap;
    assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
    *out_n = cap - z.avail_out;
    deflateEnd(&z);
    return out;
}

static unsigned char *compress_zst(const char *text, size_t n, size_t *out_n)
{
    size_t cap = ZSTD_compressBound(n);
    unsigned char *out = malloc(cap);
    *out_n = ZSTD_compress(out, cap, text, n, 1);
    assert_false(ZSTD_isError(*out_n));
    return out;
}

static void check_synth(const char *fmt, mfu_run *run, const mfu_ingest_stats *st)
{
    assert_string_equal(st->format, fmt);
    assert_int_equal(mfu_run_count(run), SYN_STEPS);
    assert_int_equal(st->skipped, 0);
    static const int probe[] = {1, 2, 999, 1500, SYN_STEPS};
    for (size_t k = 0; k < sizeof probe / sizeof probe[0]; k++) {
        int i = probe[k];
        mfu_step s = ingest_row(run, (size_t)i - 1);
        assert_int_equal(s.step, i);
        assert_near(s.loss, syn_loss(i), 5e-5); /* printed with 4..6 digits */
        if (strcmp(fmt, "torchtitan") != 0)     /* torchtitan prints no step time */
            assert_near(s.step_time_s, syn_ms(i) / 1000.0, 1e-9);
        if (strcmp(fmt, "torchtitan") == 0)
            assert_near(s.tokens_per_s, (5 + i % 3) * 1000 + i % 1000, 0);
        if (strcmp(fmt, "megatron") == 0) {
            assert_near(s.tokens, 64.0 * 2048.0, 0);
            assert_near(s.flops_per_s, (400.0 + i % 3) * 1e12, 1e-12);
        }
    }
}

static void synthetic_logs(void **state)
{
    (void)state;
    static const char *const fmts[] = {"megatron",   "nemo",  "nanogpt", "llmc",
                                       "torchtitan", "jsonl", "csv"};
    static const char *const maps[] = {"step=iter,step_time_s=dt*0.001"};
    static const char *const csv_maps[] = {"step=iter", "step_time_s=dt_ms*0.001"};
    for (size_t f = 0; f < sizeof fmts / sizeof fmts[0]; f++) {
        synth s = {NULL, 0, 0};
        synth_log(fmts[f], &s);
        mfu_ingest_opts o;
        memset(&o, 0, sizeof o);
        if (strcmp(fmts[f], "jsonl") == 0) {
            o.map = maps;
            o.nmap = 1;
        } else if (strcmp(fmts[f], "csv") == 0) {
            o.map = csv_maps;
            o.nmap = 2;
        }
        for (int codec = 0; codec < 3; codec++) {
            size_t n = s.n;
            unsigned char *data = NULL;
            if (codec == 1)
                data = compress_gz(s.buf, s.n, &n);
            else if (codec == 2)
                data = compress_zst(s.buf, s.n, &n);
            mfu_run *run = NULL;
            mfu_ingest_stats st;
            mfu_error e;
            memset(&e, 0, sizeof e);
            mfu_status rc =
                ingest_buffer_opts(data ? (const void *)data : s.buf, n, &o, &run, &st, &e);
            if (rc != MFU_OK)
                fail_msg("%s codec %d: %s", fmts[f], codec, e.message);
            check_synth(fmts[f], run, &st);
            mfu_run_free(run);
            free(data);
        }
        free(s.buf);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(nanogpt_fixtures),
        cmocka_unit_test(llmc_fixtures),
        cmocka_unit_test(torchtitan_fixtures),
        cmocka_unit_test(nemo_fixtures),
        cmocka_unit_test(conventions_fit),
        cmocka_unit_test(torchtitan_ansi_interleaved_ranks),
        cmocka_unit_test(nemo_tqdm_redraws),
        cmocka_unit_test(llmc_old_layouts),
        cmocka_unit_test(nanogpt_sentinels_and_tokens),
        cmocka_unit_test(synthetic_logs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
