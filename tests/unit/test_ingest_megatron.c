/*
 * test_ingest_megatron.c - golden tests of the Megatron-LM / Megatron-DeepSpeed format on
 * every fixture (tests/data/logs/megatron-lm, copied from the shared excerpts with their .md),
 * plus an argument dump, Megatron-DeepSpeed fields and timers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "ingest_test.h"

static void fixstars_2node(void **state)
{
    (void)state;
    mfu_ingest_stats st;
    mfu_run *run = ingest_fixture("logs/megatron-lm/fixstars-mdk-gpt3-7b-fp8-2node.log", NULL, &st);
    assert_string_equal(st.format, "megatron");
    assert_true(st.detected);
    assert_int_equal(mfu_run_count(run), 10); /* iterations 10..100 */
    mfu_step s = ingest_row(run, 0);
    assert_int_equal(s.step, 10);
    assert_near(s.step_time_s, 15.2106, 1e-9);
    assert_near(s.flops_per_s, 748.3e12, 1e-9);
    assert_int_equal(s.flops_per_s_scope, MFU_SCOPE_DEVICE);
    assert_true(isnan(s.loss)); /* all 10 iterations skipped: no loss printed */
    assert_true(s.flags & MFU_STEP_SKIPPED);
    assert_near(s.samples, 1024, 0);
    /* " [2024-09-03 16:38:39]" = 1725381519 s since 1970 (UTC) */
    assert_near(s.time_s, 1725381519.0, 0);
    s = ingest_row(run, 1);
    assert_int_equal(s.step, 20);
    assert_near(s.loss, 10.62389, 1e-9);
    assert_near(s.lr, 6.976744e-07, 1e-9);
    assert_near(s.grad_norm, 46.226, 1e-9);
    assert_true(s.flags & MFU_STEP_SKIPPED); /* 5 of 10 skipped */
    /* memory report after iteration 20: max reserved 71202.0 MB (MiB) */
    assert_near(s.memory_bytes, 71202.0 * 1048576.0, 1e-12);
    s = ingest_row(run, 8);
    assert_int_equal(s.step, 90);
    assert_near(s.step_time_s, 14.1826, 1e-9);
    assert_near(s.flops_per_s, 802.6e12, 1e-9);
    assert_false(s.flags & MFU_STEP_SKIPPED);
    const mfu_run_meta *m = mfu_run_meta_get(run);
    assert_string_equal(m->format, "megatron");
    assert_int_equal(m->global_batch, 1024);
    assert_near(m->model_params, 6.44e9, 1e-9);
    assert_true(st.used >= 12);
    mfu_run_free(run);
}

static void epfllm_old_layout(void **state)
{
    (void)state;
    mfu_ingest_stats st;
    mfu_run *run = ingest_fixture("logs/megatron-lm/epfllm-megatron-llm-issue11-a.log", NULL, &st);
    assert_int_equal(mfu_run_count(run), 4);
    mfu_step s = ingest_row(run, 0);
    assert_int_equal(s.step, 2);
    assert_near(s.step_time_s, 17.4716, 1e-9);
    assert_near(s.lr, 1.5e-07, 1e-9);
    assert_near(s.loss, 3.198731, 1e-9);
    assert_true(isnan(s.time_s)); /* no timestamp before 2024 */
    assert_true(isnan(s.flops_per_s));
    s = ingest_row(run, 3);
    assert_int_equal(s.step, 5);
    assert_near(s.step_time_s, 16.2246, 1e-9);
    assert_near(s.grad_norm, 10.544, 1e-9);
    mfu_run_free(run);
}

static void mixtral_moe_loss(void **state)
{
    (void)state;
    mfu_ingest_stats st;
    mfu_run *run =
        ingest_fixture("logs/megatron-lm/megatron-issue756-mixtral-8x7b-16xh100-a.log", NULL, &st);
    assert_int_equal(mfu_run_count(run), 2);
    mfu_step s = ingest_row(run, 1);
    assert_int_equal(s.step, 3);
    assert_near(s.loss, 2.003316, 1e-9); /* lm loss, not load_balancing_loss */
    assert_near(s.flops_per_s, 241.4e12, 1e-9);
    assert_near(s.samples, 128, 0);
    /* the rank-1 memory report precedes any row: understood, attached to nothing */
    assert_true(isnan(ingest_row(run, 0).memory_bytes));
    assert_int_equal(st.skipped, 0);
    mfu_run_free(run);
}

static void bert_2022_timers(void **state)
{
    (void)state;
    mfu_ingest_stats st;
    mfu_run *run =
        ingest_fixture("logs/megatron-lm/nccl-issue743-megatron-bert-2022-timers.log", NULL, &st);
    assert_int_equal(mfu_run_count(run), 1);
    mfu_step s = ingest_row(run, 0);
    assert_int_equal(s.step, 10);
    assert_near(s.step_time_s, 0.3562, 1e-9);
    assert_near(s.lr, 0.0, 0);
    assert_true(s.flags & MFU_STEP_SKIPPED);
    assert_int_equal(st.used, 3); /* datetime line, iteration line, timer line */
    mfu_run_free(run);
}

/* An argument dump fills the metadata, and tokens per step follow from batch x seq. */
static void argument_dump_and_deepspeed(void **state)
{
    (void)state;
    const char *log =
        "using world size: 16, data-parallel size: 16, tensor-model-parallel size: 1\n"
        "------------------------ arguments ------------------------\n"
        "  bf16 ............................................ True\n"
        "  global_batch_size ............................... 1024\n"
        "  hidden_size ..................................... 4096\n"
        "  micro_batch_size ................................ 2\n"
        "  num_attention_heads ............................. 32\n"
        "  num_layers ...................................... 30\n"
        "  seq_length ...................................... 4096\n"
        "  world_size ...................................... 16\n"
        "-------------------- end of arguments ---------------------\n"
        " iteration       10/    1000 | consumed samples:        10240 | consumed tokens:     "
        "41943040 | elapsed time per iteration (ms): 2000.0 | learning rate: 1.000E-04 | global "
        "batch size:  1024 | lm loss: 5.000000E+00 | actual seqlen:  4096 | samples per second: "
        "512.000 | tokens per gpu per second (tgs): 131072.000 | TFLOPs: 125.18 |\n"
        "(min, max) time across ranks (ms):\n"
        "    forward-backward ...............................: (1800.00, 1810.00)\n"
        " iteration       20/    1000 | consumed samples:        20480 | elapsed time per "
        "iteration (ms): 2000.0 | learning rate: 1.000E-04 | global batch size:  1024 | lm loss: "
        "nan | number of skipped iterations:   0 | number of nan iterations:  10 |\n";
    mfu_ingest_stats st;
    mfu_run *run = ingest_text(log, NULL, &st);
    const mfu_run_meta *m = mfu_run_meta_get(run);
    assert_int_equal(m->seq_len, 4096);
    assert_int_equal(m->world_size, 16);
    assert_int_equal(m->global_batch, 1024);
    assert_int_equal(m->micro_batch, 2);
    assert_string_equal(m->dtype, "bf16");
    assert_string_equal(m->model, "layers 30, hidden 4096, heads 32");
    assert_non_null(strstr(m->convention, "Megatron-DeepSpeed"));
    assert_int_equal(mfu_run_count(run), 2);
    mfu_step s = ingest_row(run, 0);
    assert_near(s.tokens_per_s, 131072.0, 0);
    assert_int_equal(s.tokens_per_s_scope, MFU_SCOPE_DEVICE);
    assert_near(s.flops_per_s, 125.18e12, 1e-12);
    assert_near(s.samples_per_s, 512.0, 0);
    assert_int_equal(s.samples_per_s_scope, MFU_SCOPE_GLOBAL);
    assert_near(s.tokens, 1024.0 * 4096.0, 0); /* batch x actual seqlen, from the line */
    assert_false(s.flags & MFU_STEP_TOKENS_DERIVED);
    s = ingest_row(run, 1);
    assert_near(s.tokens, 1024.0 * 4096.0, 0); /* batch x seq_length of the argument dump */
    assert_true(s.flags & MFU_STEP_TOKENS_DERIVED);
    assert_true(isnan(s.loss));
    assert_true(s.flags & MFU_STEP_LOSS_NAN);
    assert_int_equal(st.skipped, 0);
    assert_int_equal(st.ignored, 0);
    mfu_run_free(run);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fixstars_2node),
        cmocka_unit_test(epfllm_old_layout),
        cmocka_unit_test(mixtral_moe_loss),
        cmocka_unit_test(bert_2022_timers),
        cmocka_unit_test(argument_dump_and_deepspeed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
