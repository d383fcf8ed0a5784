/*
 * test_report_noalarm.c - 300 seeded clean logs, written as five frameworks print them, through
 * detection, ingest and the whole report: no boundary, no warning, no context break.
 *
 * Each seed writes one log of 200-1200 steps in the line format of torchtitan (tps, tflops and
 * mfu rounded as it prints them, no sequence length), Megatron-LM (argument dump; iteration
 * time, TFLOP/s/GPU and the global batch), llm.c (header; ms, MFU to 0.1 %, tok/s), nanoGPT (the
 * tokens per iteration header; time and its EMA'd MFU, -100 % for the first iterations) or the
 * Hugging Face Trainer (the bar's s/it and the dicts with num_input_tokens_seen). The noise is
 * that of real runs (tests/unit/synth.h: 2 % lognormal step times with AR(1) ρ = 0.3, rare
 * spikes 1.2-2x slower, a slow first step). Each log is reported twice: with no flags (the
 * framework's own figures) and with the right context (model, device, batch). A false boundary,
 * a warning or error finding, a context break or a note that the log's FLOPs per token moved
 * fails the test and names the seed and format.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mfu/mfu.h"
#include "flops_test.h"
#include "synth.h"

enum { F_TORCHTITAN, F_MEGATRON, F_LLMC, F_NANOGPT, F_HF, F_COUNT };
static const char *const NAMES[F_COUNT] = {"torchtitan", "megatron", "llmc", "nanogpt", "hf"};

typedef struct buf {
    char *p;
    size_t n, cap;
} buf;

static void put(buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char line[1024];
    int k = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    assert_true(k > 0 && (size_t)k < sizeof line);
    if (b->n + (size_t)k + 1 > b->cap) {
        b->cap = (b->cap + (size_t)k + 1) * 2;
        b->p = realloc(b->p, b->cap);
        assert_non_null(b->p);
    }
    memcpy(b->p + b->n, line, (size_t)k + 1);
    b->n += (size_t)k;
}

/* "12,345" as torchtitan prints its tps. */
static void commas(char *out, size_t n, long v)
{
    char d[32];
    snprintf(d, sizeof d, "%ld", v);
    size_t len = strlen(d), o = 0;
    for (size_t i = 0; i < len && o + 2 < n; i++) {
        if (i > 0 && (len - i) % 3 == 0)
            out[o++] = ',';
        out[o++] = d[i];
    }
    out[o] = 0;
}

/* A timestamp t seconds after 2025-06-16 22:30:00 (after Megatron's causal-attention date). */
static void stamp(char *out, size_t n, double t)
{
    long s = (long)t;
    int h = (int)((22 + (30 * 60 + s) / 3600) % 1000000), m = (int)(((30 * 60 + s) / 60) % 60);
    snprintf(out, n, "2025-06-%02d %02d:%02d:%02d", (16 + h / 24) % 100, h % 24, m, (int)(s % 60));
}

/* The log of seed under format fmt; n steps; mult the step-time multipliers. */
static void write_log(int fmt, size_t n, const double *mult, double mfu0, buf *b)
{
    double t = 0;
    char ts[64], num[32];
    switch (fmt) {
    case F_TORCHTITAN: {
        double ft = test_flops_per_token("llama3-8b", 8192, MFU_CONV_TORCHTITAN);
        double tps0 = mfu0 * 989e12 / ft;
        for (size_t i = 0; i < n; i++) {
            double tps = tps0 / mult[i];
            t += 10 * 8192 / tps;
            stamp(ts, sizeof ts, t);
            commas(num, sizeof num, lround(tps));
            put(b,
                "[rank0]:[titan] %s,%03d - root - INFO - step: %4zu  loss: %8.4f  memory: "
                "49.66GiB(52.28%%)  tps: %s  tflops: %.2f  mfu: %.2f%%\n",
                ts, (int)(1000 * (t - floor(t))), 10 * (i + 1), 7.0 - (double)i / 1000, num,
                ft * tps / 1e12, 100 * ft * tps / 989e12);
        }
        break;
    }
    case F_MEGATRON: {
        double fm = test_flops_per_token("llama3-8b", 4096, MFU_CONV_MEGATRON_2025);
        put(b, "------------------------ arguments ------------------------\n");
        put(b, "  global_batch_size ............................... 512\n");
        put(b, "  micro_batch_size ................................ 1\n");
        put(b, "  seq_length ...................................... 4096\n");
        put(b, "  world_size ...................................... 64\n");
        put(b, "  bf16 ............................................ True\n");
        put(b, "-------------------- end of arguments ---------------------\n");
        double it0 = fm * 512 * 4096 / (mfu0 * 989e12 * 64);
        for (size_t i = 0; i < n; i++) {
            double it = it0 * mult[i];
            t += 10 * it;
            stamp(ts, sizeof ts, t);
            put(b,
                " [%s] iteration %8zu/%8zu | consumed samples: %12zu | elapsed time per "
                "iteration (ms): %.1f | throughput per GPU (TFLOP/s/GPU): %.1f | learning rate: "
                "3.000000E-04 | global batch size:   512 | lm loss: %.6E | loss scale: 1.0 | "
                "grad norm: 1.234 | number of skipped iterations:   0 | number of nan "
                "iterations:   0 |\n",
                ts, 10 * (i + 1), 10 * n, 5120 * (i + 1), 1000 * it,
                fm * 512 * 4096 / (it * 64) / 1e12, 3.0 - (double)i / 2000);
        }
        break;
    }
    case F_LLMC: {
        double fl = test_flops_per_token("gpt2-xl", 1024, MFU_CONV_LLMC);
        put(b, "num_parameters: 1557686400 => bytes: 3115372800\n");
        put(b, "allocated 2971 MiB for model parameters\n");
        put(b, "batch_size B=16 * seq_len T=1024 * num_processes=8 and total_batch_size=1048576\n");
        put(b, "=> setting grad_accum_steps=8\n");
        double tps0 = mfu0 * 988.8e12 * 8 / fl;
        for (size_t i = 0; i < n; i++) {
            double tps = tps0 / mult[i];
            put(b,
                "step %4zu/%zu | loss %.6f (+nanz)| norm 1.2345 (+nanz)| lr 3.00e-04 | %.2f ms | "
                "%.1f%% bf16 MFU | %ld tok/s\n",
                i + 1, n, 4.0 - (double)i / 2000, 1048576 / tps * 1000,
                100 * tps * fl / (988.8e12 * 8), lround(tps));
        }
        break;
    }
    case F_NANOGPT: {
        double fn = test_flops_per_token("gpt2", 1024, MFU_CONV_NANOGPT);
        put(b, "tokens per iteration will be: 61,440\n");
        put(b, "Initializing from OpenAI GPT-2 weights: gpt2\n");
        put(b, "number of parameters: 123.65M\n");
        double dt0 = fn * 61440 / (mfu0 * 312e12), ema = -1;
        for (size_t i = 0; i < n; i++) {
            double dt = dt0 * mult[i], m = fn * 61440 / (dt * 312e12), shown = -1;
            if (i >= 5) {
                ema = ema < 0 ? m : 0.9 * ema + 0.1 * m;
                shown = ema;
            }
            put(b, "iter %zu: loss %.4f, time %.2fms, mfu %.2f%%\n", 10 * i, 4.0 - (double)i / 4000,
                dt * 1000, 100 * shown);
        }
        break;
    }
    default: { /* the HF Trainer: one device, batch 8 x 1024 tokens */
        put(b, "***** Running training *****\n");
        put(b, "  Num examples = 160,000\n");
        put(b, "  Instantaneous batch size per device = 8\n");
        put(b, "  Total train batch size (w. parallel, distributed & accumulation) = 8\n");
        put(b, "  Gradient Accumulation steps = 1\n");
        put(b, "  Total optimization steps = %zu\n", 10 * n);
        double fg = test_flops_per_token("gpt2", 1024, MFU_CONV_EXACT);
        double st0 = fg * 8192 / (mfu0 * 312e12);
        long seen = 0;
        for (size_t i = 0; i < n; i++) {
            double st = st0 * mult[i];
            for (int k = 0; k < 10; k++) { /* the bar prints its last step time */
                seen += 8192;
                t += st;
            }
            size_t step = 10 * (i + 1);
            /* tqdm's rate: it/s when above 1, else s/it, two decimals */
            char rate[32];
            if (st < 1)
                snprintf(rate, sizeof rate, "%.2fit/s", 1 / st);
            else
                snprintf(rate, sizeof rate, "%.2fs/it", st);
            put(b, "%3zu%%|%-20s| %zu/%zu [%02ld:%02ld<00:00, %s]\n", 100 * step / (10 * n),
                "#####", step, 10 * n, (long)t / 60 % 60, (long)t % 60, rate);
            put(b,
                "{'loss': %.4f, 'grad_norm': 1.2345, 'learning_rate': 5e-05, 'epoch': %.2f, "
                "'num_input_tokens_seen': %ld}\n",
                3.0 - (double)i / 1000, (double)step / (10.0 * (double)n), seen);
        }
        break;
    }
    }
}

/* The right context of format fmt (the "with flags" report). */
static void context_of(int fmt, mfu_report_input *in)
{
    memset(in, 0, sizeof *in);
    static const char *const model[F_COUNT] = {"llama3-8b", "llama3-8b", "gpt2-xl", "gpt2", "gpt2"};
    static const char *const device[F_COUNT] = {"h100-sxm", "h100-sxm", "h100-sxm",
                                                "a100-sxm4-80gb", "a100-sxm4-80gb"};
    assert_int_equal(mfu_preset_find(model[fmt], &in->arch, NULL), MFU_OK);
    in->has_arch = true;
    in->device = device[fmt];
    if (fmt == F_TORCHTITAN)
        in->workload.seq = 8192;
    if (fmt == F_NANOGPT || fmt == F_HF) {
        in->workload.seq = 1024;
        in->global_batch = fmt == F_NANOGPT ? 60 : 8;
        in->devices = 1;
    }
}

/* "" when the report of log b under in is clean; else what is wrong. */
static const char *judge(const buf *b, const mfu_report_input *in, char *why, size_t nwhy)
{
    mfu_ingest *ing = NULL;
    mfu_error e;
    memset(&e, 0, sizeof e);
    assert_int_equal(mfu_ingest_new(NULL, &ing, &e), MFU_OK);
    mfu_run *run = NULL;
    if (mfu_ingest_feed_buffer(ing, b->p, b->n, "clean.log", &e) != MFU_OK ||
        mfu_ingest_finish(ing, &run, &e) != MFU_OK) {
        mfu_ingest_free(ing);
        snprintf(why, nwhy, "ingest: %.300s", e.message);
        return why;
    }
    mfu_ingest_free(ing);
    mfu_report *r = NULL;
    if (mfu_report_compute(run, in, &r, &e) != MFU_OK) {
        mfu_run_free(run);
        snprintf(why, nwhy, "report: %.300s", e.message);
        return why;
    }
    why[0] = 0;
    const mfu_analysis *a = mfu_report_analysis(r);
    const mfu_report_context *c = mfu_report_get_context(r);
    if (!a)
        snprintf(why, nwhy, "no analysis");
    else if (mfu_analysis_segment_count(a) != 1)
        snprintf(why, nwhy, "%zu segments (a false boundary at step %lld)",
                 mfu_analysis_segment_count(a), (long long)mfu_analysis_segment(a, 1)->start_step);
    else if (c->context_breaks)
        snprintf(why, nwhy, "%zu context breaks", c->context_breaks);
    for (size_t i = 0; a && !why[0] && i < mfu_analysis_finding_count(a); i++) {
        const mfu_finding *f = mfu_analysis_finding(a, i);
        if (f->severity >= MFU_SEV_WARNING)
            snprintf(why, nwhy, "finding %s: %.300s", f->kind, f->summary);
    }
    for (size_t i = 0; !why[0] && i < mfu_report_note_count(r); i++)
        if (strstr(mfu_report_note_at(r, i), "move by"))
            snprintf(why, nwhy, "note: %.300s", mfu_report_note_at(r, i));
    /* every log here prints or implies a throughput: the headline must exist */
    if (!why[0] && !(mfu_report_summary(r, MFU_RS_TOKENS_PER_S).n > 0 ||
                     mfu_report_summary(r, MFU_RS_TOKENS_PER_S_PER_DEVICE).n > 0))
        snprintf(why, nwhy, "no tokens/s");
    mfu_report_free(r);
    mfu_run_free(run);
    return why[0] ? why : "";
}

static const double SLOW_FIRST[] = {4.0};

static void clean_logs_raise_nothing(void **state)
{
    (void)state;
    int bad = 0;
    for (int seed = 1; seed <= 300; seed++) {
        int fmt = (seed - 1) % F_COUNT;
        syn_rng rng = {(uint64_t)seed * 104729u};
        size_t n = 200 + (size_t)(syn_uniform(&rng) * 1000);
        double mfu0 = 0.30 + 0.2 * syn_uniform(&rng);
        double *mult = malloc(n * sizeof *mult);
        assert_non_null(mult);
        syn_noise nz = {0.02, 0.3, 0.005, 1.2, 2.0, SLOW_FIRST, 1};
        syn_multipliers((uint64_t)seed, n, &nz, mult);
        buf b = {NULL, 0, 0};
        write_log(fmt, n, mult, mfu0, &b);
        free(mult);
        char why[MFU_REPORT_TEXT_MAX + 64];
        const char *w = judge(&b, NULL, why, sizeof why);
        if (w[0]) {
            print_error("seed %d (%s, %zu steps), no flags: %s\n", seed, NAMES[fmt], n, w);
            bad++;
        }
        mfu_report_input in;
        context_of(fmt, &in);
        w = judge(&b, &in, why, sizeof why);
        if (w[0]) {
            print_error("seed %d (%s, %zu steps), with its context: %s\n", seed, NAMES[fmt], n, w);
            bad++;
        }
        free(b.p);
    }
    assert_int_equal(bad, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(clean_logs_raise_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
