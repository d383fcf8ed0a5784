/*
 * test_ingest_formats2.c - the formats hf and axolotl (HF Trainer console output): golden
 * tests on the fixtures of tests/data/logs/{hf-transformers,axolotl} (copied from the shared
 * excerpts with their .md), bars, banner, summary and metrics block, the hf / axolotl
 * precedence, and the helpers of pyrepr.c.
 */
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
    assert_int_equal(st.used, 4); /* summary, two axolotl.train lines, the emitted summary */
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
    assert_true(isinf(s.grad_norm));
    s = ingest_row(run, 2); /* the eval bar (4/5) was not taken for a step number */
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

/* ---- detection ---------------------------------------------------------------------------- */

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hf_bigdl_fixture),
        cmocka_unit_test(hf_string_values_fixture),
        cmocka_unit_test(axolotl_plain_dicts_fixture),
        cmocka_unit_test(axolotl_summary_fixture),
        cmocka_unit_test(hf_bars_banner_and_metrics_block),
        cmocka_unit_test(hf_metrics_block_only),
        cmocka_unit_test(json_lines_are_not_hf),
        cmocka_unit_test(pydict_walk),
        cmocka_unit_test(tqdm_forms),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
