/*
 * config.c - read an architecture from a Hugging Face config.json (jansson).
 *
 * One table row per model_type says which key names the family uses, its class defaults that
 * configs routinely omit (tie_word_embeddings, Gemma 3's head_dim), how it lays out sliding
 * windows and experts. A key that a family requires and the file lacks is an error naming the
 * key and the flag that supplies it; flags (overrides) are applied before that check, so
 * `--config old-llama.json --kv-heads 32` works for a file without num_key_value_heads.
 * Values of null mean "not set" (sliding_window, q_lora_rank, n_inner, n_routed_experts).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "model/model_internal.h"
#include "util/util.h"

enum shape { S_HF, S_GPT2, S_NEOX, S_MPT, S_DEEPSEEK };
enum windows { W_NONE, W_ALL, W_QWEN, W_ALTERNATE, W_PATTERN };
enum moe { M_NONE, M_MIXTRAL, M_QWEN, M_DEEPSEEK };

static const struct family {
    const char *type;
    enum shape shape;
    bool gated;    /* MLP with a gate (SwiGLU/GeGLU) */
    bool tied;     /* the class default of tie_word_embeddings */
    bool qkv_bias; /* biases on Q, K, V whatever the config says (Qwen2 code) */
    mfu_norm norm;
    int norms_per_layer;
    enum windows windows;
    enum moe moe;
    int64_t head_dim;     /* class default for an omitted head_dim (0: hidden / heads) */
    int64_t vocab;        /* class default for an omitted vocab_size (0: required) */
    int64_t global_every; /* class default of the local/global pattern */
} families[] = {
    {"llama", S_HF, true, false, false, MFU_NORM_RMS, 2, W_NONE, M_NONE, 0, 0, 0},
    {"mistral", S_HF, true, false, false, MFU_NORM_RMS, 2, W_ALL, M_NONE, 0, 0, 0},
    {"mixtral", S_HF, true, false, false, MFU_NORM_RMS, 2, W_ALL, M_MIXTRAL, 0, 0, 0},
    {"qwen2", S_HF, true, false, true, MFU_NORM_RMS, 2, W_QWEN, M_NONE, 0, 0, 0},
    {"qwen2_moe", S_HF, true, false, true, MFU_NORM_RMS, 2, W_QWEN, M_QWEN, 0, 0, 0},
    {"qwen3", S_HF, true, false, false, MFU_NORM_RMS, 2, W_QWEN, M_NONE, 0, 0, 0},
    {"qwen3_moe", S_HF, true, false, false, MFU_NORM_RMS, 2, W_QWEN, M_QWEN, 0, 0, 0},
    {"gemma", S_HF, true, true, false, MFU_NORM_RMS, 2, W_NONE, M_NONE, 0, 0, 0},
    {"gemma2", S_HF, true, true, false, MFU_NORM_RMS, 4, W_ALTERNATE, M_NONE, 0, 0, 2},
    /* Gemma3TextConfig defaults: head_dim 256, vocab_size 262208, sliding_window_pattern 6 */
    {"gemma3_text", S_HF, true, true, false, MFU_NORM_RMS, 4, W_PATTERN, M_NONE, 256, 262208, 6},
    {"phi3", S_HF, true, false, false, MFU_NORM_RMS, 2, W_ALL, M_NONE, 0, 0, 0},
    {"olmo", S_HF, true, false, false, MFU_NORM_NONPARAMETRIC, 2, W_NONE, M_NONE, 0, 0, 0},
    {"olmo2", S_HF, true, false, false, MFU_NORM_RMS, 2, W_NONE, M_NONE, 0, 0, 0},
    {"deepseek_v2", S_DEEPSEEK, true, false, false, MFU_NORM_RMS, 2, W_NONE, M_DEEPSEEK, 0, 0, 0},
    {"deepseek_v3", S_DEEPSEEK, true, false, false, MFU_NORM_RMS, 2, W_NONE, M_DEEPSEEK, 0, 0, 0},
    {"gpt2", S_GPT2, false, true, false, MFU_NORM_LAYER, 2, W_NONE, M_NONE, 0, 0, 0},
    {"gpt_neox", S_NEOX, false, false, false, MFU_NORM_LAYER, 2, W_NONE, M_NONE, 0, 0, 0},
    {"mpt", S_MPT, false, true, false, MFU_NORM_LAYER, 2, W_NONE, M_NONE, 0, 0, 0},
};

/* Key names of the core fields, per shape. */
static const struct keys {
    const char *layers, *hidden, *heads, *ffn;
} shape_keys[] = {
    [S_HF] = {"num_hidden_layers", "hidden_size", "num_attention_heads", "intermediate_size"},
    [S_GPT2] = {"n_layer", "n_embd", "n_head", "n_inner"},
    [S_NEOX] = {"num_hidden_layers", "hidden_size", "num_attention_heads", "intermediate_size"},
    [S_MPT] = {"n_layers", "d_model", "n_heads", "expansion_ratio"},
    [S_DEEPSEEK] = {"num_hidden_layers", "hidden_size", "num_attention_heads", "intermediate_size"},
};

/* ---- typed field access ------------------------------------------------------------------- */

typedef struct reader {
    json_t *obj; /* the object fields are read from (text_config for Gemma 3) */
    mfu_error *err;
    mfu_status st; /* first failure, MFU_OK while none */
} reader;

static const char *json_kind(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER: return "an integer";
    case JSON_REAL: return "a number";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    case JSON_NULL: return "null";
    }
    return "a value";
}

static bool type_error(reader *r, const char *key, const char *want, const json_t *v)
{
    if (r->st == MFU_OK)
        r->st = mfu__fail_field(r->err, MFU_E_PARSE, key,
                                "config.json field '%s' must be %s (got %s): fix the file", key,
                                want, json_kind(v));
    return false;
}

/* A whole number: true and *out set when present; false when absent or null (or on a type
 * error, recorded in r->st). */
static bool get_int(reader *r, json_t *obj, const char *key, int64_t *out)
{
    json_t *v = json_object_get(obj, key);
    if (!v || json_is_null(v))
        return false;
    if (json_is_integer(v)) {
        *out = (int64_t)json_integer_value(v);
        return true;
    }
    if (json_is_real(v)) {
        double d = json_real_value(v);
        if (d == floor(d) && fabs(d) <= (double)MFU_DIM_MAX) {
            *out = (int64_t)d;
            return true;
        }
    }
    return type_error(r, key, "a whole number", v);
}

static bool get_num(reader *r, json_t *obj, const char *key, double *out)
{
    json_t *v = json_object_get(obj, key);
    if (!v || json_is_null(v))
        return false;
    if (json_is_number(v)) {
        *out = json_number_value(v);
        return true;
    }
    return type_error(r, key, "a number", v);
}

static bool get_bool(reader *r, json_t *obj, const char *key, bool *out)
{
    json_t *v = json_object_get(obj, key);
    if (!v || json_is_null(v))
        return false;
    if (json_is_boolean(v)) {
        *out = json_is_true(v);
        return true;
    }
    return type_error(r, key, "true or false", v);
}

static mfu_flag yes_no(bool b)
{
    return b ? MFU_FLAG_YES : MFU_FLAG_NO;
}

/* ---- family readers ----------------------------------------------------------------------- */

static void read_windows(reader *r, const struct family *f, mfu_arch *a)
{
    json_t *o = r->obj;
    int64_t w = 0;
    bool has_w = get_int(r, o, "sliding_window", &w);
    switch (f->windows) {
    case W_NONE: break;
    case W_ALL:
        if (has_w)
            a->window = w;
        break;
    case W_QWEN: {
        bool use = false;
        get_bool(r, o, "use_sliding_window", &use);
        int64_t full = 0;
        if (use && has_w) {
            a->window = w;
            if (get_int(r, o, "max_window_layers", &full) && full > 0) {
                /* blocks i >= max_window_layers use the window */
                if (full >= a->layers)
                    a->window = 0;
                else
                    a->window_layers = a->layers - full;
            }
        }
        break;
    }
    case W_ALTERNATE:
    case W_PATTERN:
        if (has_w) {
            a->window = w;
            int64_t every = f->global_every;
            get_int(r, o, "sliding_window_pattern", &every);
            a->global_every = every;
        }
        break;
    }
    json_t *types = json_object_get(o, "layer_types");
    if (types && !json_is_null(types)) {
        if (!json_is_array(types)) {
            type_error(r, "layer_types", "an array of strings", types);
            return;
        }
        int64_t local = 0;
        size_t n = json_array_size(types);
        for (size_t i = 0; i < n; i++) {
            json_t *t = json_array_get(types, i);
            if (!json_is_string(t)) {
                type_error(r, "layer_types", "an array of strings", t);
                return;
            }
            if (strcmp(json_string_value(t), "sliding_attention") == 0)
                local++;
        }
        if (a->layers > 0 && (int64_t)n != a->layers && r->st == MFU_OK)
            r->st = mfu__fail_field(r->err, MFU_E_PARSE, "layer_types",
                                    "config.json layer_types has %zu entries for %lld layers: "
                                    "fix the file",
                                    n, (long long)a->layers);
        a->global_every = 0;
        if (local == 0) {
            a->window = 0;
            a->window_layers = 0;
        } else {
            if (has_w)
                a->window = w;
            a->window_layers = local;
        }
    }
}

static int cmp_int64(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return (a > b) - (a < b);
}

/* MoE blocks of a Qwen MoE model: block i is MoE iff (i + 1) % decoder_sparse_step == 0 and i is
 * not in mlp_only_layers. Counted arithmetically (no loop over layers): floor(L / step) minus
 * the distinct listed blocks that the step would have made MoE. */
static void read_qwen_moe_layers(reader *r, mfu_arch *a)
{
    int64_t step = 1;
    get_int(r, r->obj, "decoder_sparse_step", &step);
    if (step <= 0)
        step = 1;
    json_t *only = json_object_get(r->obj, "mlp_only_layers");
    if (only && !json_is_null(only) && !json_is_array(only)) {
        type_error(r, "mlp_only_layers", "an array of layer numbers", only);
        return;
    }
    if (a->layers <= 0 || a->layers > MFU_DIM_MAX)
        return; /* resolve reports the layer count */
    size_t n_only = only ? json_array_size(only) : 0;
    if (step == 1 && n_only == 0)
        return; /* every block is MoE: the default pattern says so */
    int64_t count = a->layers / step;
    if (n_only > 0) {
        int64_t *v = malloc(n_only * sizeof *v);
        if (!v) {
            if (r->st == MFU_OK)
                r->st = mfu__fail(r->err, MFU_E_NOMEM, 0, "out of memory reading config.json");
            return;
        }
        size_t n = 0;
        for (size_t j = 0; j < n_only; j++) {
            json_t *e = json_array_get(only, j);
            if (!json_is_integer(e)) {
                free(v);
                type_error(r, "mlp_only_layers", "an array of layer numbers", e);
                return;
            }
            int64_t i = (int64_t)json_integer_value(e);
            if (i >= 0 && i < a->layers && (i + 1) % step == 0)
                v[n++] = i;
        }
        qsort(v, n, sizeof *v, cmp_int64);
        for (size_t j = 0; j < n; j++)
            if (j == 0 || v[j] != v[j - 1])
                count--;
        free(v);
    }
    if (count == 0) {
        a->experts = 0;
        a->experts_per_token = 0;
        a->moe_ffn = 0;
        a->shared_experts = 0;
        a->shared_ffn = 0;
    } else {
        a->moe_layers = count;
    }
}

static void read_moe(reader *r, const struct family *f, mfu_arch *a)
{
    json_t *o = r->obj;
    switch (f->moe) {
    case M_NONE: break;
    case M_MIXTRAL:
        get_int(r, o, "num_local_experts", &a->experts);
        get_int(r, o, "num_experts_per_tok", &a->experts_per_token);
        a->moe_ffn = a->ffn;
        break;
    case M_QWEN: {
        get_int(r, o, "num_experts", &a->experts);
        if (a->experts <= 0)
            break;
        get_int(r, o, "num_experts_per_tok", &a->experts_per_token);
        get_int(r, o, "moe_intermediate_size", &a->moe_ffn);
        int64_t sh = 0;
        if (get_int(r, o, "shared_expert_intermediate_size", &sh) && sh > 0) {
            a->shared_experts = 1;
            a->shared_ffn = sh;
        }
        read_qwen_moe_layers(r, a);
        break;
    }
    case M_DEEPSEEK:
        get_int(r, o, "n_routed_experts", &a->experts);
        if (a->experts <= 0)
            break;
        get_int(r, o, "num_experts_per_tok", &a->experts_per_token);
        get_int(r, o, "moe_intermediate_size", &a->moe_ffn);
        if (get_int(r, o, "n_shared_experts", &a->shared_experts) && a->shared_experts > 0)
            a->shared_ffn = a->moe_ffn;
        get_int(r, o, "first_k_dense_replace", &a->first_dense_layers);
        get_int(r, o, "moe_layer_freq", &a->moe_layer_freq);
        break;
    }
}

static void read_family(reader *r, const struct family *f, mfu_arch *a)
{
    json_t *o = r->obj;
    const struct keys *k = &shape_keys[f->shape];
    get_int(r, o, k->layers, &a->layers);
    get_int(r, o, k->hidden, &a->hidden);
    get_int(r, o, k->heads, &a->heads);
    get_int(r, o, "vocab_size", &a->vocab);
    if (a->vocab == 0)
        a->vocab = f->vocab;
    a->gated_mlp = yes_no(f->gated);
    bool tied = f->tied;
    get_bool(r, o, "tie_word_embeddings", &tied);
    a->tied_embeddings = yes_no(tied);
    a->norm = f->norm;
    a->norms_per_layer = f->norms_per_layer;
    bool b = false;
    switch (f->shape) {
    case S_HF:
    case S_DEEPSEEK:
        get_int(r, o, "num_key_value_heads", &a->kv_heads);
        if (!get_int(r, o, "head_dim", &a->head_dim))
            a->head_dim = f->head_dim;
        get_int(r, o, k->ffn, &a->ffn);
        if (get_bool(r, o, "attention_bias", &b)) {
            a->qkv_bias = yes_no(b || f->qkv_bias);
            a->out_bias = yes_no(b);
        } else {
            a->qkv_bias = yes_no(f->qkv_bias);
        }
        if (get_bool(r, o, "mlp_bias", &b))
            a->mlp_bias = yes_no(b);
        if (f->shape == S_DEEPSEEK) {
            get_int(r, o, "q_lora_rank", &a->q_lora_rank);
            get_int(r, o, "kv_lora_rank", &a->kv_lora_rank);
            get_int(r, o, "qk_nope_head_dim", &a->qk_nope_head_dim);
            get_int(r, o, "qk_rope_head_dim", &a->qk_rope_head_dim);
            get_int(r, o, "v_head_dim", &a->v_head_dim);
            a->kv_heads = 0; /* MLA: every head has its own expanded K and V */
            a->head_dim = 0;
        }
        break;
    case S_GPT2:
        get_int(r, o, "n_inner", &a->ffn); /* null: 4 n_embd */
        if (!get_int(r, o, "n_positions", &a->learned_positions))
            get_int(r, o, "n_ctx", &a->learned_positions);
        a->qkv_bias = a->out_bias = a->mlp_bias = MFU_FLAG_YES;
        break;
    case S_NEOX:
        get_int(r, o, k->ffn, &a->ffn);
        b = true;
        get_bool(r, o, "attention_bias", &b);
        a->qkv_bias = a->out_bias = yes_no(b);
        a->mlp_bias = MFU_FLAG_YES;
        break;
    case S_MPT: {
        double ratio = 4;
        get_num(r, o, "expansion_ratio", &ratio);
        if (a->hidden > 0 && ratio > 0 && ratio * (double)a->hidden <= (double)MFU_DIM_MAX)
            a->ffn = (int64_t)llround(ratio * (double)a->hidden);
        bool no_bias = false, learned = true;
        get_bool(r, o, "no_bias", &no_bias);
        get_bool(r, o, "learned_pos_emb", &learned);
        json_t *attn = json_object_get(o, "attn_config");
        if (json_is_object(attn)) {
            reader sub = {attn, r->err, MFU_OK};
            bool alibi = false, rope = false;
            get_bool(&sub, attn, "alibi", &alibi);
            get_bool(&sub, attn, "rope", &rope);
            if (sub.st != MFU_OK && r->st == MFU_OK)
                r->st = sub.st;
            if (alibi || rope)
                learned = false; /* MPTConfig turns learned_pos_emb off with ALiBi or RoPE */
        }
        json_t *ffn_cfg = json_object_get(o, "ffn_config");
        json_t *ffn_type = json_is_object(ffn_cfg) ? json_object_get(ffn_cfg, "ffn_type") : NULL;
        if (json_is_string(ffn_type) && strcmp(json_string_value(ffn_type), "mptglu") == 0)
            a->gated_mlp = MFU_FLAG_YES;
        if (learned) {
            a->learned_positions = 2048;
            get_int(r, o, "max_seq_len", &a->learned_positions);
        }
        mfu_flag bias = yes_no(!no_bias);
        a->qkv_bias = a->out_bias = a->mlp_bias = bias;
        a->norm = no_bias ? MFU_NORM_RMS : MFU_NORM_LAYER; /* LPLayerNorm without its bias */
        break;
    }
    }
    read_moe(r, f, a);
    read_windows(r, f, a);
}

/* The fields a family must provide (after overrides), with the key and the flag. */
static mfu_status check_required(const struct family *f, const mfu_arch *a, mfu_error *err)
{
    const struct keys *k = &shape_keys[f->shape];
    struct req {
        int64_t v;
        const char *key, *flag;
    } req[16];
    size_t n = 0;
    req[n++] = (struct req){a->layers, k->layers, "--layers"};
    req[n++] = (struct req){a->hidden, k->hidden, "--hidden"};
    req[n++] = (struct req){a->heads, k->heads, "--heads"};
    req[n++] = (struct req){a->vocab, "vocab_size", "--vocab"};
    if (f->shape == S_HF)
        req[n++] = (struct req){a->kv_heads, "num_key_value_heads", "--kv-heads"};
    if (f->shape == S_HF || f->shape == S_NEOX || f->shape == S_DEEPSEEK)
        req[n++] = (struct req){a->ffn, k->ffn, "--ffn"};
    if (a->experts > 0) {
        req[n++] = (struct req){a->experts_per_token, "num_experts_per_tok", "--experts-per-token"};
        if (f->moe == M_QWEN || f->moe == M_DEEPSEEK)
            req[n++] = (struct req){a->moe_ffn, "moe_intermediate_size", "--moe-ffn"};
    }
    if (f->shape == S_DEEPSEEK) {
        req[n++] = (struct req){a->kv_lora_rank, "kv_lora_rank", "--kv-lora-rank"};
        req[n++] = (struct req){a->qk_nope_head_dim, "qk_nope_head_dim", "--qk-nope-dim"};
        req[n++] = (struct req){a->qk_rope_head_dim, "qk_rope_head_dim", "--qk-rope-dim"};
        req[n++] = (struct req){a->v_head_dim, "v_head_dim", "--v-head-dim"};
    }
    if (a->window_layers > 0)
        req[n++] = (struct req){a->window, "sliding_window", "--window"};
    for (size_t i = 0; i < n; i++)
        if (req[i].v == 0)
            return mfu__fail_field(err, MFU_E_MISSING, req[i].flag,
                                   "config.json (model_type %s) has no %s: pass %s", f->type,
                                   req[i].key, req[i].flag);
    return MFU_OK;
}

static const struct family *find_family(const char *type)
{
    for (size_t i = 0; i < MFU__ARRAY_LEN(families); i++)
        if (strcmp(type, families[i].type) == 0)
            return &families[i];
    return NULL;
}

static void read_meta(json_t *root, mfu_arch *a, const char *type)
{
    json_t *v = json_object_get(root, "_name_or_path");
    const char *name = json_is_string(v) ? json_string_value(v) : "";
    if (!name[0])
        name = type;
    mfu__strlcpy(a->name, name, sizeof a->name);
    v = json_object_get(root, "_source");
    if (json_is_string(v))
        mfu__strlcpy(a->source, json_string_value(v), sizeof a->source);
    v = json_object_get(root, "_published_params");
    if (json_is_number(v) && json_number_value(v) > 0 &&
        json_number_value(v) < (double)MFU_PARAMS_MAX)
        a->published_params = (int64_t)json_number_value(v);
    v = json_object_get(root, "_published_active_params");
    if (json_is_number(v) && json_number_value(v) > 0 &&
        json_number_value(v) < (double)MFU_PARAMS_MAX)
        a->published_active_params = (int64_t)json_number_value(v);
    /* the length the model was trained at: only when stated with its source */
    v = json_object_get(root, "_trained_seq");
    json_t *src = json_object_get(root, "_trained_seq_source");
    if (json_is_integer(v) && json_integer_value(v) > 0 && json_integer_value(v) <= MFU_DIM_MAX &&
        json_is_string(src)) {
        a->trained_seq = (int64_t)json_integer_value(v);
        mfu__strlcpy(a->trained_seq_source, json_string_value(src), sizeof a->trained_seq_source);
    }
}

static mfu_status from_json(json_t *root, const mfu_arch *overrides, mfu_arch *out, mfu_error *err)
{
    if (!json_is_object(root))
        return mfu__fail(err, MFU_E_PARSE, 0,
                         "config.json must hold a JSON object (got %s): pass a Hugging Face "
                         "config.json",
                         json_kind(root));
    json_t *mt = json_object_get(root, "model_type");
    if (!mt)
        return mfu__fail_field(err, MFU_E_MISSING, "model_type",
                               "config.json has no model_type: describe the model with --layers, "
                               "--hidden, --heads, --ffn and --vocab instead of --config");
    if (!json_is_string(mt))
        return mfu__fail_field(err, MFU_E_PARSE, "model_type",
                               "config.json field 'model_type' must be a string (got %s): fix "
                               "the file",
                               json_kind(mt));
    const char *type = json_string_value(mt);
    json_t *obj = root;
    if (strcmp(type, "gemma3") == 0) {
        json_t *text = json_object_get(root, "text_config");
        if (json_is_object(text))
            obj = text;
        type = "gemma3_text";
    }
    const struct family *f = find_family(type);
    if (!f) {
        char list[400] = "";
        for (size_t i = 0; i < MFU__ARRAY_LEN(families); i++)
            mfu__appendf(list, sizeof list, "%s%s", i ? ", " : "", families[i].type);
        return mfu__fail_field(err, MFU_E_UNKNOWN, "model_type",
                               "config.json model_type '%.64s' is not supported (known: %s, "
                               "gemma3): describe the model with --layers, --hidden, --heads, "
                               "--ffn and --vocab instead",
                               type, list);
    }
    mfu_arch a = {0};
    reader r = {obj, err, MFU_OK};
    read_meta(root, &a, json_string_value(mt));
    read_family(&r, f, &a);
    if (r.st != MFU_OK)
        return r.st;
    if (overrides)
        mfu_arch_apply(&a, overrides);
    mfu_status st = check_required(f, &a, err);
    if (st != MFU_OK)
        return st;
    return mfu_arch_resolve(&a, out, err);
}

mfu_status mfu_arch_from_config_text(const char *text, size_t len, const mfu_arch *overrides,
                                     mfu_arch *out, mfu_error *err)
{
    if (!text || !out)
        return mfu__fail(err, MFU_E_INVALID, 0, "mfu_arch_from_config_text: NULL argument");
    if (len > (size_t)MFU_CONFIG_MAX_BYTES)
        return mfu__fail_field(err, MFU_E_LIMIT, "--config",
                               "config.json is %zu bytes, above the limit of %ld: pass a "
                               "Hugging Face config.json",
                               len, (long)MFU_CONFIG_MAX_BYTES);
    json_error_t jerr;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!root) {
        mfu_status st = mfu__fail(err, MFU_E_PARSE, jerr.line > 0 ? jerr.line : 0,
                                  "config.json is not valid JSON at line %d, column %d: %s",
                                  jerr.line, jerr.column, jerr.text);
        if (err)
            err->column = jerr.column > 0 ? jerr.column : 0;
        return st;
    }
    mfu_status st = from_json(root, overrides, out, err);
    json_decref(root);
    return st;
}

mfu_status mfu_arch_from_config_json(const char *path, const mfu_arch *overrides, mfu_arch *out,
                                     mfu_error *err)
{
    if (!path || !out)
        return mfu__fail(err, MFU_E_INVALID, 0, "mfu_arch_from_config_json: NULL argument");
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return mfu__fail_field(err, MFU_E_IO, "--config", "cannot open %s: %s", path,
                               strerror(errno));
    size_t cap = 64 * 1024, len = 0;
    char *buf = malloc(cap);
    mfu_status st = MFU_OK;
    if (!buf) {
        fclose(fp);
        return mfu__fail(err, MFU_E_NOMEM, 0, "out of memory reading %s", path);
    }
    for (;;) {
        if (len == cap) {
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                st = mfu__fail(err, MFU_E_NOMEM, 0, "out of memory reading %s", path);
                break;
            }
            buf = nb;
            cap *= 2;
        }
        size_t got = fread(buf + len, 1, cap - len, fp);
        len += got;
        if (len > (size_t)MFU_CONFIG_MAX_BYTES) {
            st = mfu__fail_field(err, MFU_E_LIMIT, "--config",
                                 "%s is larger than the limit of %ld bytes: pass a Hugging Face "
                                 "config.json",
                                 path, (long)MFU_CONFIG_MAX_BYTES);
            break;
        }
        if (got == 0) {
            if (ferror(fp))
                st = mfu__fail_field(err, MFU_E_IO, "--config", "cannot read %s: %s", path,
                                     strerror(errno));
            break;
        }
    }
    fclose(fp);
    if (st == MFU_OK)
        st = mfu_arch_from_config_text(buf, len, overrides, out, err);
    free(buf);
    return st;
}
