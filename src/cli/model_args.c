/*
 * model_args.c - turn the shared model/workload/counting options into the library's mfu_arch,
 * mfu_workload and mfu_flops_options (see model_args.h).
 */
#include "cli/model_args.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "util/util.h"

int model_args_exit_status(mfu_status st)
{
    switch (st) {
    case MFU_E_INVALID:
    case MFU_E_MISSING:
    case MFU_E_UNKNOWN:
    case MFU_E_RANGE:
    case MFU_E_AMBIGUOUS: return CLI_EXIT_USAGE;
    default: return CLI_EXIT_FAIL;
    }
}

void model_args_free(model_args *m)
{
    if (!m)
        return;
    free(m->docs);
    m->docs = NULL;
    m->workload.doc_lengths = NULL;
    m->workload.doc_count = 0;
}

/* Integer flags that set one int64 field of mfu_arch. A few take 0 as a real value, as the
 * configs they come from write it (first_k_dense_replace: 0, n_shared_experts: 0,
 * q_lora_rank: null): zero_ok, and 0 then clears what a preset or config set. */
static const struct int_flag {
    const char *name;
    size_t offset;
    bool zero_ok;
} int_flags[] = {
    {"layers", offsetof(mfu_arch, layers), false},
    {"hidden", offsetof(mfu_arch, hidden), false},
    {"heads", offsetof(mfu_arch, heads), false},
    {"kv-heads", offsetof(mfu_arch, kv_heads), false},
    {"head-dim", offsetof(mfu_arch, head_dim), false},
    {"ffn", offsetof(mfu_arch, ffn), false},
    {"vocab", offsetof(mfu_arch, vocab), false},
    {"learned-positions", offsetof(mfu_arch, learned_positions), true},
    {"norms-per-layer", offsetof(mfu_arch, norms_per_layer), false},
    {"experts", offsetof(mfu_arch, experts), false},
    {"experts-per-token", offsetof(mfu_arch, experts_per_token), false},
    {"shared-experts", offsetof(mfu_arch, shared_experts), true},
    {"moe-ffn", offsetof(mfu_arch, moe_ffn), false},
    {"shared-ffn", offsetof(mfu_arch, shared_ffn), false},
    {"first-dense", offsetof(mfu_arch, first_dense_layers), true},
    {"moe-layer-freq", offsetof(mfu_arch, moe_layer_freq), false},
    {"moe-layers", offsetof(mfu_arch, moe_layers), false},
    {"q-lora-rank", offsetof(mfu_arch, q_lora_rank), true},
    {"kv-lora-rank", offsetof(mfu_arch, kv_lora_rank), false},
    {"qk-nope-dim", offsetof(mfu_arch, qk_nope_head_dim), false},
    {"qk-rope-dim", offsetof(mfu_arch, qk_rope_head_dim), false},
    {"v-head-dim", offsetof(mfu_arch, v_head_dim), false},
    {"global-every", offsetof(mfu_arch, global_every), true},
    {"window-layers", offsetof(mfu_arch, window_layers), false},
};

/* A yes/no pair: --gated / --no-gated; the last one given wins. */
static bool flag_pair(const cli_args *a, const char *yes, const char *no, mfu_flag *out)
{
    for (size_t i = a->nocc; i-- > 0;) {
        const char *name = a->specs[a->occ_spec[i]].name;
        if (strcmp(name, yes) == 0) {
            *out = MFU_FLAG_YES;
            return true;
        }
        if (strcmp(name, no) == 0) {
            *out = MFU_FLAG_NO;
            return true;
        }
    }
    return false;
}

/* A count with an optional scale suffix: 540e9, 8.03B, 70b, 124M, 1.2T, 5000k. */
static bool parse_count(const char *s, int64_t *out)
{
    char buf[64];
    if (!s || mfu__strlcpy(buf, s, sizeof buf) >= sizeof buf || !buf[0])
        return false;
    size_t n = strlen(buf);
    double mul = 1;
    switch (buf[n - 1]) {
    case 'k':
    case 'K': mul = 1e3; break;
    case 'm':
    case 'M': mul = 1e6; break;
    case 'b':
    case 'B':
    case 'g':
    case 'G': mul = 1e9; break;
    case 't':
    case 'T': mul = 1e12; break;
    default: break;
    }
    if (mul != 1)
        buf[n - 1] = '\0';
    double v = 0;
    if (!mfu__parse_double(buf, &v))
        return false;
    v = round(v * mul);
    if (!(v >= 1 && v <= (double)MFU_PARAMS_MAX))
        return false;
    *out = (int64_t)v;
    return true;
}

static int parse_docs(const char *cmd, const char *list, model_args *m)
{
    size_t n = 1;
    for (const char *p = list; *p; p++)
        n += *p == ',';
    if (n > MODEL_ARGS_MAX_DOCS)
        return cli_failf(cmd, CLI_EXIT_USAGE,
                         "--doc-lengths: %zu documents, more than the limit of %d (use "
                         "--mean-doc-len)",
                         n, MODEL_ARGS_MAX_DOCS);
    m->docs = calloc(n, sizeof *m->docs);
    if (!m->docs)
        return cli_failf(cmd, CLI_EXIT_FAIL, "out of memory");
    size_t k = 0;
    const char *p = list;
    for (;;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char item[32];
        int64_t v = 0;
        if (len == 0 || len >= sizeof item) {
            return cli_failf(cmd, CLI_EXIT_USAGE,
                             "--doc-lengths: expected positive whole numbers separated by "
                             "commas (got '%s')",
                             list);
        }
        memcpy(item, p, len);
        item[len] = '\0';
        if (!mfu__parse_int64(item, &v) || v <= 0)
            return cli_failf(cmd, CLI_EXIT_USAGE,
                             "--doc-lengths: '%s' is not a positive whole number", item);
        m->docs[k++] = v;
        if (!end)
            break;
        p = end + 1;
    }
    m->workload.doc_lengths = m->docs;
    m->workload.doc_count = k;
    return CLI_EXIT_OK;
}

static int lib_fail(const char *cmd, mfu_status st, const mfu_error *err)
{
    return cli_failf(cmd, model_args_exit_status(st), "%s",
                     err->message[0] ? err->message : mfu_strerror(st));
}

static int build(const char *cmd, const cli_args *a, bool allow_all, model_args *out)
{
    mfu_arch o = {0};
    bool zero[MFU__ARRAY_LEN(int_flags)] = {false};
    for (size_t i = 0; i < MFU__ARRAY_LEN(int_flags); i++) {
        int64_t v = 0;
        bool present = false;
        const char *z = cli_get(a, int_flags[i].name);
        if (int_flags[i].zero_ok && z && mfu__parse_int64(z, &v) && v <= 0) {
            if (v < 0)
                return cli_failf(cmd, CLI_EXIT_USAGE, "--%s must be 0 or more (got %s)",
                                 int_flags[i].name, z);
            zero[i] = true;
            continue;
        }
        if (!cli_get_pos_int64(cmd, a, int_flags[i].name, &v, &present))
            return CLI_EXIT_USAGE;
        if (present)
            memcpy((char *)&o + int_flags[i].offset, &v, sizeof v);
    }
    bool no_window = false;
    const char *w = cli_get(a, "window");
    if (w && (mfu__strcasecmp(w, "none") == 0 || strcmp(w, "0") == 0)) {
        no_window = true;
    } else if (!cli_get_pos_int64(cmd, a, "window", &o.window, NULL)) {
        return CLI_EXIT_USAGE;
    }
    flag_pair(a, "gated", "no-gated", &o.gated_mlp);
    flag_pair(a, "tied", "untied", &o.tied_embeddings);

    const char *preset = cli_get(a, "model");
    const char *config = cli_get(a, "config");
    mfu_error err = {0};
    mfu_status st = MFU_OK;
    if (preset && config)
        return cli_failf(cmd, CLI_EXIT_USAGE, "pass --model or --config, not both");
    if (preset) {
        /* the flags go in before the preset is resolved, as for --config */
        if ((st = mfu__preset_find_with(preset, &o, &out->arch, &err)) != MFU_OK)
            return lib_fail(cmd, st, &err);
        out->from_file = true;
    } else if (config) {
        if ((st = mfu_arch_from_config_json(config, &o, &out->arch, &err)) != MFU_OK)
            return cli_failf(cmd, st == MFU_E_MISSING ? CLI_EXIT_USAGE : CLI_EXIT_FAIL, "%s%s%s",
                             st == MFU_E_IO ? "" : config, st == MFU_E_IO ? "" : ": ", err.message);
        out->from_file = true;
    } else {
        out->arch = o;
    }
    if (no_window) {
        out->arch.window = 0;
        out->arch.global_every = 0;
        out->arch.window_layers = 0;
    }
    for (size_t i = 0; i < MFU__ARRAY_LEN(int_flags); i++) {
        if (!zero[i])
            continue;
        int64_t z0 = 0;
        memcpy((char *)&out->arch + int_flags[i].offset, &z0, sizeof z0);
        /* a layer pattern replaces the count a config derived from its own (mfu_arch_apply) */
        if (int_flags[i].offset == offsetof(mfu_arch, first_dense_layers))
            out->arch.moe_layers = 0;
        if (int_flags[i].offset == offsetof(mfu_arch, global_every))
            out->arch.window_layers = 0;
    }

    if (!cli_get_pos_int64(cmd, a, "seq", &out->workload.seq, NULL))
        return CLI_EXIT_USAGE;
    if (!cli_get_pos_double(cmd, a, "mean-doc-len", &out->workload.mean_doc_len, NULL))
        return CLI_EXIT_USAGE;
    const char *docs = cli_get(a, "doc-lengths");
    if (docs) {
        int rc = parse_docs(cmd, docs, out);
        if (rc != CLI_EXIT_OK)
            return rc;
    }
    const char *rc_name = cli_get(a, "recompute");
    if (rc_name && (st = mfu_recompute_parse(rc_name, &out->workload.recompute, &err)) != MFU_OK)
        return lib_fail(cmd, st, &err);

    const char *conv = cli_get(a, "convention");
    if (conv && allow_all && mfu__strcasecmp(conv, "all") == 0) {
        out->all_conventions = true;
    } else if (conv &&
               (st = mfu_convention_parse(conv, &out->options.convention, &err)) != MFU_OK) {
        if (allow_all)
            return cli_failf(cmd, CLI_EXIT_USAGE, "%s, or all", err.message);
        return lib_fail(cmd, st, &err);
    }
    const char *att = cli_get(a, "attention");
    if (att && (st = mfu_attention_parse(att, &out->options.attention, &err)) != MFU_OK)
        return lib_fail(cmd, st, &err);
    out->options.count_embeddings = cli_has(a, "count-embeddings");
    const char *params = cli_get(a, "params");
    if (params && !parse_count(params, &out->options.params))
        return cli_failf(cmd, CLI_EXIT_USAGE,
                         "--params: '%s' is not a parameter count (e.g. 540e9 or 8.03B, at "
                         "most 2^53)",
                         params);
    return CLI_EXIT_OK;
}

void model_args_default_seq(model_args *m)
{
    if (m->workload.seq > 0 || m->arch.trained_seq <= 0)
        return;
    m->workload.seq = m->arch.trained_seq;
    m->seq_from_arch = true;
}

void model_args_print_seq_note(const model_args *m, const char *label)
{
    if (!m->seq_from_arch)
        return;
    printf("%sseq %lld, the length %s was trained at: %s. --seq N overrides it\n", label,
           (long long)m->workload.seq, m->arch.name[0] ? m->arch.name : "the model",
           m->arch.trained_seq_source);
}

void model_args_seq_json(const model_args *m, json_t *w)
{
    const char *src = m->seq_from_arch ? "trained_seq" : m->workload.seq > 0 ? "--seq" : NULL;
    cli_json_set(w, "seq_source", src ? cli_json_str(src) : json_null());
    cli_json_set(w, "trained_seq",
                 m->arch.trained_seq > 0 ? json_integer((json_int_t)m->arch.trained_seq)
                                         : json_null());
    cli_json_set(w, "trained_seq_source",
                 m->arch.trained_seq > 0 ? cli_json_str(m->arch.trained_seq_source) : json_null());
}

int model_args_build(const char *cmd, const cli_args *a, bool allow_all, model_args *out)
{
    memset(out, 0, sizeof *out);
    int rc = build(cmd, a, allow_all, out);
    if (rc != CLI_EXIT_OK)
        model_args_free(out);
    return rc;
}
