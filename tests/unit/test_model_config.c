/*
 * test_model_config.c - unit tests of the model module's inputs: Hugging Face config.json for
 * every supported family (files under tests/data/model/), errors that name the field and the
 * flag, field overrides, and the bundled presets.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mfu/mfu.h"

static const char *data_path(const char *file)
{
    static char buf[1024];
    const char *dir = getenv("MFU_TEST_DATA");
    snprintf(buf, sizeof buf, "%s/model/%s", dir ? dir : "tests/data", file);
    return buf;
}

static mfu_arch load(const char *file)
{
    mfu_arch a;
    mfu_error err = {0};
    if (mfu_arch_from_config_json(data_path(file), NULL, &a, &err) != MFU_OK)
        fail_msg("%s: %s", file, err.message);
    return a;
}

static mfu_param_counts params(const mfu_arch *a)
{
    mfu_param_counts p;
    mfu_error err = {0};
    if (mfu_arch_params(a, &p, &err) != MFU_OK)
        fail_msg("%s", err.message);
    return p;
}

static void llama_family(void **state)
{
    (void)state;
    mfu_arch a = load("llama3-8b.json");
    assert_int_equal(a.layers, 32);
    assert_int_equal(a.hidden, 4096);
    assert_int_equal(a.kv_heads, 8);
    assert_int_equal(a.head_dim, 128);
    assert_int_equal(a.ffn, 14336);
    assert_int_equal(a.gated_mlp, MFU_FLAG_YES);
    assert_int_equal(a.tied_embeddings, MFU_FLAG_NO);
    assert_int_equal(a.window, 0);
    assert_string_equal(a.name, "llama");
    assert_true(params(&a).total == 8030261248LL);
    /* the file and the preset describe the same model */
    mfu_arch p;
    assert_int_equal(mfu_preset_find("llama3-8b", &p, NULL), MFU_OK);
    assert_true(params(&p).total == params(&a).total);
}

static void mistral_mixtral(void **state)
{
    (void)state;
    mfu_arch m = load("mistral-7b-v0.1.json");
    assert_int_equal(m.window, 4096);
    assert_int_equal(m.global_every, 0); /* every layer windowed */
    mfu_arch x = load("mixtral-8x7b.json");
    assert_int_equal(x.experts, 8);
    assert_int_equal(x.experts_per_token, 2);
    assert_int_equal(x.moe_ffn, 14336);
    assert_int_equal(x.window, 0); /* sliding_window: null */
    mfu_param_counts p = params(&x);
    assert_true(p.total == 46702792704LL);
    assert_true(p.active == 12879925248LL);
}

static void qwen_family(void **state)
{
    (void)state;
    mfu_arch q = load("qwen2.5-7b.json");
    assert_int_equal(q.qkv_bias, MFU_FLAG_YES); /* Qwen2 always has Q/K/V biases */
    assert_int_equal(q.out_bias, MFU_FLAG_NO);
    assert_int_equal(q.window, 0); /* use_sliding_window: false */
    /* 6.53B non-embedding (Qwen2.5 model card): total minus both embeddings */
    mfu_param_counts p = params(&q);
    assert_true(p.total - 2 * 152064LL * 3584 == 6525621760LL);

    mfu_arch s = load("qwen2-swa.json");
    assert_int_equal(s.window, 2048);
    assert_int_equal(s.window_layers, 3); /* layers 21..23 use the window */

    /* Qwen1.5-MoE-A2.7B: 60 experts, top-4, one shared expert of 5632; 14.3B total and 2.7B
     * active on its model card. */
    mfu_arch m = load("qwen1.5-moe-a2.7b.json");
    assert_int_equal(m.experts, 60);
    assert_int_equal(m.shared_experts, 1);
    assert_int_equal(m.shared_ffn, 5632);
    assert_int_equal(m.moe_ffn, 1408);
    p = params(&m);
    assert_true(p.total > 14.25e9 && p.total < 14.35e9);
    assert_true(p.active > 2.65e9 && p.active < 2.75e9);

    /* decoder_sparse_step 2 and mlp_only_layers [1]: blocks 3, 5, 7, 9, 11 are MoE */
    mfu_arch t = load("qwen3-moe-sparse-step.json");
    assert_int_equal(t.moe_layers, 5);
    mfu_workload wl = {.seq = 512};
    mfu_flops f;
    assert_int_equal(mfu_flops_compute(&t, &wl, NULL, &f, NULL), MFU_OK);
    assert_true(f.training.mlp == 6.0 * 7 * 3 * 1024 * 3072);
    assert_true(f.training.experts == 6.0 * 5 * 4 * 3 * 1024 * 512);
}

static void gemma_family(void **state)
{
    (void)state;
    /* Gemma 7B: head_dim 256 with hidden 3072 and 16 heads (16 x 256 != 3072); the Gemma
     * report gives 7,751,248,896 non-embedding parameters. */
    mfu_arch g = load("gemma-7b.json");
    assert_int_equal(g.head_dim, 256);
    assert_int_equal(g.tied_embeddings, MFU_FLAG_YES);
    mfu_param_counts p = params(&g);
    assert_true(p.total - p.embedding == 7751248896LL);

    mfu_arch g2 = load("gemma2-9b-layer-types.json");
    assert_int_equal(g2.window, 4096);
    assert_int_equal(g2.window_layers, 3);
    assert_int_equal(g2.norms_per_layer, 4);

    /* Gemma 3: the text model nested in text_config; head_dim, vocab and the 5:1 pattern come
     * from Gemma3TextConfig's defaults */
    mfu_arch g3 = load("gemma3-12b.json");
    assert_int_equal(g3.layers, 48);
    assert_int_equal(g3.hidden, 3840);
    assert_int_equal(g3.head_dim, 256);
    assert_int_equal(g3.vocab, 262208);
    assert_int_equal(g3.window, 1024);
    assert_int_equal(g3.global_every, 6);
    mfu_arch pre;
    assert_int_equal(mfu_preset_find("gemma3-12b", &pre, NULL), MFU_OK);
    assert_true(params(&pre).total == params(&g3).total);
}

static void phi3_olmo(void **state)
{
    (void)state;
    mfu_arch p = load("phi3-mini-4k.json");
    assert_int_equal(p.window, 2047);
    assert_true(params(&p).total == 3821079552LL);
    /* OLMo 1: non-parametric layer norm, tied: only the matrices and the embedding count */
    mfu_arch o = load("olmo-1b.json");
    assert_int_equal(o.norm, MFU_NORM_NONPARAMETRIC);
    double expect = 16.0 * (4 * 2048.0 * 2048 + 3 * 2048.0 * 8192) + 50304.0 * 2048;
    assert_true((double)params(&o).total == expect);
    mfu_arch o2 = load("olmo2-7b.json");
    assert_int_equal(o2.norm, MFU_NORM_RMS);
    assert_int_equal(o2.vocab, 100352);
}

static void gpt2_neox_mpt(void **state)
{
    (void)state;
    mfu_arch g = load("gpt2.json");
    assert_int_equal(g.ffn, 4 * 768); /* n_inner absent: 4 n_embd */
    assert_int_equal(g.learned_positions, 1024);
    assert_int_equal(g.tied_embeddings, MFU_FLAG_YES);
    assert_int_equal(g.norm, MFU_NORM_LAYER);
    assert_true(params(&g).total == 124439808LL);
    /* Pythia-160M: 162,322,944 parameters, 85,056,000 without embeddings (Pythia paper) */
    mfu_arch n = load("pythia-160m.json");
    mfu_param_counts p = params(&n);
    assert_true(p.total == 162322944LL);
    assert_true(p.total - 2 * p.embedding == 85056000LL);
    /* MPT-7B as released: ALiBi (no learned positions), no biases, vocab 50432 */
    mfu_arch m = load("mpt-7b.json");
    assert_int_equal(m.learned_positions, 0);
    assert_int_equal(m.qkv_bias, MFU_FLAG_NO);
    assert_int_equal(m.ffn, 4 * 4096);
    assert_true(params(&m).total == 6649286656LL);
}

static void deepseek_family(void **state)
{
    (void)state;
    mfu_arch v2 = load("deepseek-v2-lite.json");
    assert_int_equal(v2.q_lora_rank, 0); /* null: full-rank query projection */
    assert_int_equal(v2.kv_lora_rank, 512);
    assert_int_equal(v2.first_dense_layers, 1);
    assert_int_equal(v2.shared_experts, 2);
    assert_int_equal(v2.shared_ffn, 1408);
    mfu_arch pre;
    assert_int_equal(mfu_preset_find("deepseek-v2-lite", &pre, NULL), MFU_OK);
    assert_true(params(&pre).total == params(&v2).total);
    mfu_arch v3 = load("deepseek-v3.json");
    mfu_param_counts p = params(&v3);
    assert_true(p.total == 671026404352LL);
    assert_int_equal(v3.q_lora_rank, 1536);
}

static void config_errors(void **state)
{
    (void)state;
    mfu_arch a;
    memset(&a, 0x5A, sizeof a);
    mfu_arch before = a;
    mfu_error err = {0};
    /* malformed JSON: line and column */
    assert_int_equal(mfu_arch_from_config_json(data_path("malformed.json"), NULL, &a, &err),
                     MFU_E_PARSE);
    assert_int_equal(err.line, 5);
    assert_true(err.column > 0);
    assert_non_null(strstr(err.message, "line 5"));
    assert_memory_equal(&a, &before, sizeof a); /* unchanged on failure */
    /* a missing field names the field and the flag */
    assert_int_equal(mfu_arch_from_config_json(data_path("missing-kv-heads.json"), NULL, &a, &err),
                     MFU_E_MISSING);
    assert_non_null(strstr(err.message, "num_key_value_heads"));
    assert_non_null(strstr(err.message, "--kv-heads"));
    assert_string_equal(err.field, "--kv-heads");
    /* ... and the flag supplies it */
    mfu_arch o = {.kv_heads = 32};
    assert_int_equal(mfu_arch_from_config_json(data_path("missing-kv-heads.json"), &o, &a, &err),
                     MFU_OK);
    assert_true(params(&a).total == 6738415616LL); /* Llama 2 7B */
    /* unknown model_type */
    assert_int_equal(mfu_arch_from_config_json(data_path("unknown-type.json"), NULL, &a, &err),
                     MFU_E_UNKNOWN);
    assert_non_null(strstr(err.message, "falcon"));
    assert_non_null(strstr(err.message, "--layers"));
    /* a field of the wrong type */
    assert_int_equal(mfu_arch_from_config_json(data_path("wrong-type.json"), NULL, &a, &err),
                     MFU_E_PARSE);
    assert_non_null(strstr(err.message, "hidden_size"));
    /* no file */
    assert_int_equal(mfu_arch_from_config_json(data_path("no-such.json"), NULL, &a, &err),
                     MFU_E_IO);
    assert_string_equal(err.field, "--config");
    /* texts */
    const char *t1 = "[1, 2]";
    assert_int_equal(mfu_arch_from_config_text(t1, strlen(t1), NULL, &a, &err), MFU_E_PARSE);
    const char *t2 = "{\"hidden_size\": 8}";
    assert_int_equal(mfu_arch_from_config_text(t2, strlen(t2), NULL, &a, &err), MFU_E_MISSING);
    assert_string_equal(err.field, "model_type");
    const char *t3 = "{\"model_type\": 7}";
    assert_int_equal(mfu_arch_from_config_text(t3, strlen(t3), NULL, &a, &err), MFU_E_PARSE);
    const char *t4 = "{\"model_type\": \"llama\", \"model_type\": \"gpt2\"}";
    assert_int_equal(mfu_arch_from_config_text(t4, strlen(t4), NULL, &a, &err), MFU_E_PARSE);
    const char *t5 = "{\"model_type\": \"gpt2\", \"n_layer\": -2, \"n_embd\": 64, \"n_head\": 4, "
                     "\"vocab_size\": 10}";
    assert_int_equal(mfu_arch_from_config_text(t5, strlen(t5), NULL, &a, &err), MFU_E_INVALID);
    assert_string_equal(err.field, "--layers");
    const char *t6 = "{\"model_type\": \"gemma2\", \"num_hidden_layers\": 2, \"hidden_size\": 8, "
                     "\"num_attention_heads\": 2, \"num_key_value_heads\": 2, "
                     "\"intermediate_size\": 16, \"vocab_size\": 10, "
                     "\"layer_types\": [\"full_attention\"]}";
    assert_int_equal(mfu_arch_from_config_text(t6, strlen(t6), NULL, &a, &err), MFU_E_PARSE);
    assert_string_equal(err.field, "layer_types");
    const char *t7 = "{\"model_type\": \"gpt2\", \"n_layer\": 1e300, \"n_embd\": 64, "
                     "\"n_head\": 4, \"vocab_size\": 10}";
    assert_int_equal(mfu_arch_from_config_text(t7, strlen(t7), NULL, &a, &err), MFU_E_PARSE);
    /* Qwen MoE layers are counted without a loop over layers; duplicates count once */
    const char *t8 = "{\"model_type\": \"qwen3_moe\", \"num_hidden_layers\": 12, "
                     "\"hidden_size\": 64, \"num_attention_heads\": 4, "
                     "\"num_key_value_heads\": 4, \"intermediate_size\": 128, "
                     "\"vocab_size\": 10, \"num_experts\": 4, \"num_experts_per_tok\": 2, "
                     "\"moe_intermediate_size\": 32, \"decoder_sparse_step\": 2, "
                     "\"mlp_only_layers\": [1, 1, 3, 2, 99, -1]}";
    assert_int_equal(mfu_arch_from_config_text(t8, strlen(t8), NULL, &a, &err), MFU_OK);
    assert_int_equal(a.moe_layers, 4); /* 1, 3, 5, 7, 9, 11 minus 1 and 3 */
    const char *t9 = "{\"model_type\": \"qwen3_moe\", \"num_hidden_layers\": 2000000000, "
                     "\"hidden_size\": 64, \"num_attention_heads\": 4, "
                     "\"num_key_value_heads\": 4, \"intermediate_size\": 128, "
                     "\"vocab_size\": 10, \"num_experts\": 4, \"num_experts_per_tok\": 2, "
                     "\"moe_intermediate_size\": 32, \"decoder_sparse_step\": 2}";
    assert_int_equal(mfu_arch_from_config_text(t9, strlen(t9), NULL, &a, &err), MFU_OK);
    assert_int_equal(a.moe_layers, 1000000000);
    /* the size limit */
    size_t big = (size_t)MFU_CONFIG_MAX_BYTES + 1;
    char *huge = malloc(big);
    assert_non_null(huge);
    memset(huge, ' ', big);
    assert_int_equal(mfu_arch_from_config_text(huge, big, NULL, &a, &err), MFU_E_LIMIT);
    free(huge);
    assert_int_equal(mfu_arch_from_config_text(NULL, 0, NULL, &a, &err), MFU_E_INVALID);
}

static void overrides_apply(void **state)
{
    (void)state;
    mfu_arch base = {.layers = 4,
                     .hidden = 64,
                     .heads = 4,
                     .experts = 8,
                     .experts_per_token = 2,
                     .moe_layers = 3,
                     .window = 16,
                     .window_layers = 2,
                     .gated_mlp = MFU_FLAG_YES};
    mfu_arch o = {
        .hidden = 128, .gated_mlp = MFU_FLAG_NO, .first_dense_layers = 1, .global_every = 2};
    mfu_arch_apply(&base, &o);
    assert_int_equal(base.hidden, 128);
    assert_int_equal(base.layers, 4);              /* unset fields keep their value */
    assert_int_equal(base.gated_mlp, MFU_FLAG_NO); /* a flag can say no */
    assert_int_equal(base.moe_layers, 0);          /* a new pattern replaces the count */
    assert_int_equal(base.first_dense_layers, 1);
    assert_int_equal(base.window_layers, 0);
    assert_int_equal(base.global_every, 2);
    assert_int_equal(base.window, 16);
    /* resolve fills defaults and keeps what is set */
    mfu_arch r;
    assert_int_equal(mfu_arch_resolve(&base, &r, NULL), MFU_OK);
    assert_int_equal(r.kv_heads, 4);
    assert_int_equal(r.head_dim, 32);
    assert_int_equal(r.ffn, 512);
    assert_int_equal(r.norm, MFU_NORM_RMS);
    assert_int_equal(r.norms_per_layer, 2);
    assert_int_equal(r.tied_embeddings, MFU_FLAG_NO);
}

static void presets(void **state)
{
    (void)state;
    size_t n = mfu_preset_count();
    assert_true(n >= 36);
    assert_null(mfu_preset_name(n));
    const char *want[] = {"llama2-7b",    "llama2-13b",   "llama2-70b",       "llama3-8b",
                          "llama3-70b",   "llama3-405b",  "llama3.2-1b",      "llama3.2-3b",
                          "mistral-7b",   "mixtral-8x7b", "mixtral-8x22b",    "qwen2.5-7b",
                          "qwen2.5-72b",  "qwen3-8b",     "qwen3-30b-a3b",    "qwen3-235b-a22b",
                          "gemma2-9b",    "gemma2-27b",   "gemma3-12b",       "gemma3-27b",
                          "phi3-mini",    "gpt2",         "gpt2-xl",          "gpt3-175b",
                          "pythia-6.9b",  "olmo2-7b",     "deepseek-v2-lite", "deepseek-v3",
                          "palm-540b",    "mpt-7b",       "mpt-30b",          "mpt-70b",
                          "nemo-gpt3-5b", "nemo-gpt3-20b"};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        mfu_arch a;
        mfu_error err = {0};
        if (mfu_preset_find(want[i], &a, &err) != MFU_OK)
            fail_msg("%s: %s", want[i], err.message);
        assert_string_equal(a.name, want[i]);
        assert_true(strlen(a.source) > 20);
        mfu_workload wl = {.seq = 4096};
        for (int c = 0; c < MFU_CONV_COUNT; c++) {
            mfu_flops_options o = {.convention = (mfu_convention)c};
            mfu_flops f;
            mfu_status st = mfu_flops_compute(&a, &wl, &o, &f, &err);
            if (st == MFU_E_UNSUPPORTED)
                continue;
            assert_int_equal(st, MFU_OK);
            assert_true(f.model_flops > 0 && f.hardware_flops >= f.model_flops);
        }
    }
    /* every listed name loads, names are unique and sorted */
    for (size_t i = 0; i < n; i++) {
        mfu_arch a;
        assert_int_equal(mfu_preset_find(mfu_preset_name(i), &a, NULL), MFU_OK);
        if (i > 0)
            assert_true(strcmp(mfu_preset_name(i - 1), mfu_preset_name(i)) < 0);
    }
    mfu_arch a;
    assert_int_equal(mfu_preset_find("LLAMA3-8B", &a, NULL), MFU_OK);
    assert_string_equal(a.name, "llama3-8b");
    memset(&a, 0x11, sizeof a);
    mfu_arch before = a;
    mfu_error err = {0};
    assert_int_equal(mfu_preset_find("llama9-1t", &a, &err), MFU_E_UNKNOWN);
    assert_string_equal(err.field, "--model");
    assert_non_null(strstr(err.message, "llama9-1t"));
    assert_memory_equal(&a, &before, sizeof a);
    /* a near miss names the preset meant; a far one names none */
    assert_int_equal(mfu_preset_find("llama-3-70b", &a, &err), MFU_E_UNKNOWN);
    assert_non_null(strstr(err.message, "(did you mean llama3-70b?)"));
    assert_int_equal(mfu_preset_find("Mixtral-8x7B-v0.1", &a, &err), MFU_E_UNKNOWN);
    assert_non_null(strstr(err.message, "(did you mean mixtral-8x7b?)"));
    assert_int_equal(mfu_preset_find("bert-base-uncased", &a, &err), MFU_E_UNKNOWN);
    assert_null(strstr(err.message, "did you mean"));
    assert_int_equal(mfu_preset_find("qwen3-30b", &a, &err), MFU_E_UNKNOWN);
    assert_non_null(strstr(err.message, "did you mean qwen3-30b-a3b?"));
}

/* Every preset states the length it was trained at, with its source; a user's config.json
 * brings none (max_position_embeddings is a context limit, not a training length) unless it
 * says so with both mfu keys. */
static void trained_seq(void **state)
{
    (void)state;
    for (size_t i = 0; i < mfu_preset_count(); i++) {
        mfu_arch a;
        assert_int_equal(mfu_preset_find(mfu_preset_name(i), &a, NULL), MFU_OK);
        if (!(a.trained_seq >= 1024 && a.trained_seq <= 131072))
            fail_msg("%s: trained_seq %lld", a.name, (long long)a.trained_seq);
        if (strlen(a.trained_seq_source) < 30)
            fail_msg("%s: no source for trained_seq", a.name);
    }
    struct {
        const char *preset;
        int64_t seq;
    } rows[] = {{"llama3-8b", 8192},  {"llama3-405b", 8192},   {"llama2-70b", 4096},
                {"gpt2", 1024},       {"gpt3-175b", 2048},     {"deepseek-v3", 4096},
                {"qwen2.5-7b", 4096}, {"mixtral-8x7b", 32768}, {"mpt-30b", 8192}};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        mfu_arch a;
        assert_int_equal(mfu_preset_find(rows[i].preset, &a, NULL), MFU_OK);
        if (a.trained_seq != rows[i].seq)
            fail_msg("%s: trained_seq %lld, want %lld", rows[i].preset, (long long)a.trained_seq,
                     (long long)rows[i].seq);
    }
    mfu_arch a = load("llama3-8b.json"); /* max_position_embeddings 8192 */
    assert_int_equal(a.trained_seq, 0);
    assert_string_equal(a.trained_seq_source, "");
    const char *with = "{\"model_type\": \"llama\", \"num_hidden_layers\": 2, \"hidden_size\": 64, "
                       "\"num_attention_heads\": 4, \"num_key_value_heads\": 4, "
                       "\"intermediate_size\": 128, \"vocab_size\": 100, "
                       "\"_trained_seq\": 2048, \"_trained_seq_source\": \"my run\"}";
    mfu_error err = {0};
    assert_int_equal(mfu_arch_from_config_text(with, strlen(with), NULL, &a, &err), MFU_OK);
    assert_int_equal(a.trained_seq, 2048);
    assert_string_equal(a.trained_seq_source, "my run");
    const char *nosrc =
        "{\"model_type\": \"llama\", \"num_hidden_layers\": 2, \"hidden_size\": 64, "
        "\"num_attention_heads\": 4, \"num_key_value_heads\": 4, "
        "\"intermediate_size\": 128, \"vocab_size\": 100, \"_trained_seq\": 2048}";
    assert_int_equal(mfu_arch_from_config_text(nosrc, strlen(nosrc), NULL, &a, &err), MFU_OK);
    assert_int_equal(a.trained_seq, 0);
    /* an override carries it over; the FLOPs never read it */
    mfu_arch base = {0}, over = {0};
    over.trained_seq = 4096;
    snprintf(over.trained_seq_source, sizeof over.trained_seq_source, "flag");
    mfu_arch_apply(&base, &over);
    assert_int_equal(base.trained_seq, 4096);
    assert_string_equal(base.trained_seq_source, "flag");
    mfu_arch p8;
    assert_int_equal(mfu_preset_find("llama3-8b", &p8, NULL), MFU_OK);
    mfu_workload wl = {0};
    mfu_flops_options o = {.convention = MFU_CONV_EXACT};
    mfu_flops f;
    assert_int_equal(mfu_flops_compute(&p8, &wl, &o, &f, &err), MFU_E_MISSING);
    p8.trained_seq = -1;
    wl.seq = 8192;
    assert_int_equal(mfu_arch_resolve(&p8, &p8, &err), MFU_E_INVALID);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(llama_family),    cmocka_unit_test(mistral_mixtral),
        cmocka_unit_test(qwen_family),     cmocka_unit_test(gemma_family),
        cmocka_unit_test(phi3_olmo),       cmocka_unit_test(gpt2_neox_mpt),
        cmocka_unit_test(deepseek_family), cmocka_unit_test(config_errors),
        cmocka_unit_test(overrides_apply), cmocka_unit_test(presets),
        cmocka_unit_test(trained_seq),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
