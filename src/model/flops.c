/*
 * flops.c - training FLOPs per token under each counting convention.
 *
 * Three kinds of convention:
 *   - the exact family (exact, megatron-2025, maxtext-2025) sums every forward matmul of the
 *     architecture and multiplies by 3 (forward, weight gradient, input gradient);
 *   - the N-based family (palm, 6n, nanogpt, llmc, torchtitan, llm-foundry, maxtext-2023) is
 *     6N plus an attention term, where each source picks its own N and attention term;
 *   - closed forms in h (nemo-2024, megatron-2021, korthikanti) that assume a shape (MHA, a 4h
 *     MLP for the last two) and read only a few dimensions.
 * Every FLOPs figure is per token; a multiply-add counts 2.
 */
#include <math.h>
#include <string.h>

#include "model/model_internal.h"
#include "util/util.h"

double mfu_flops_breakdown_total(const mfu_flops_breakdown *b)
{
    if (!b)
        return 0;
    return b->attention_projections + b->attention_core + b->mlp + b->experts + b->router +
           b->logits + b->embedding + b->other;
}

static void scale(mfu_flops_breakdown *dst, const mfu_flops_breakdown *src, double f)
{
    dst->attention_projections = src->attention_projections * f;
    dst->attention_core = src->attention_core * f;
    dst->mlp = src->mlp * f;
    dst->experts = src->experts * f;
    dst->router = src->router * f;
    dst->logits = src->logits * f;
    dst->embedding = src->embedding * f;
    dst->other = src->other * f;
}

static bool default_causal(mfu_convention c)
{
    switch (c) {
    case MFU_CONV_EXACT:
    case MFU_CONV_MEGATRON_2025:
    case MFU_CONV_MAXTEXT_2025:
    case MFU_CONV_LLMC:
    case MFU_CONV_MAXTEXT_2023: return true;
    default: return false;
    }
}

bool mfu_convention_n_based(mfu_convention c)
{
    switch (c) {
    case MFU_CONV_PALM:
    case MFU_CONV_6N:
    case MFU_CONV_NANOGPT:
    case MFU_CONV_LLMC:
    case MFU_CONV_TORCHTITAN:
    case MFU_CONV_LLM_FOUNDRY:
    case MFU_CONV_MAXTEXT_2023: return true;
    default: return false;
    }
}

static mfu_status missing(mfu_error *err, const char *flag, const char *what, mfu_convention c)
{
    return mfu__fail_field(err, MFU_E_MISSING, flag,
                           "%s is not known (convention %s needs it): pass %s", what,
                           mfu_convention_name(c), flag);
}

/* A dimension a closed form reads straight from the architecture: present and positive. */
static mfu_status need_dim(int64_t v, const char *flag, const char *what, mfu_convention c,
                           mfu_error *err)
{
    if (v < 0)
        return mfu__fail_field(err, MFU_E_INVALID, flag, "%s must be positive (got %lld): fix %s",
                               what, (long long)v, flag);
    if (v > MFU_DIM_MAX)
        return mfu__fail_field(err, MFU_E_RANGE, flag, "%s %lld is above the limit %lld: check %s",
                               what, (long long)v, (long long)MFU_DIM_MAX, flag);
    if (v == 0)
        return missing(err, flag, what, c);
    return MFU_OK;
}

static mfu_status check_workload(const mfu_workload *wl, mfu_error *err)
{
    if (wl->seq < 0)
        return mfu__fail_field(err, MFU_E_INVALID, "--seq",
                               "the sequence length must be positive (got %lld): fix --seq",
                               (long long)wl->seq);
    if (wl->seq > MFU_DIM_MAX)
        return mfu__fail_field(err, MFU_E_RANGE, "--seq",
                               "the sequence length %lld is above the limit %lld: fix --seq",
                               (long long)wl->seq, (long long)MFU_DIM_MAX);
    if ((unsigned)wl->recompute > MFU_RECOMPUTE_FULL)
        return mfu__fail_field(err, MFU_E_INVALID, "--recompute",
                               "unknown recompute mode %d: pass --recompute none, selective or "
                               "full",
                               (int)wl->recompute);
    if (wl->doc_count > 0 && !wl->doc_lengths)
        return mfu__fail_field(err, MFU_E_INVALID, "--doc-lengths",
                               "doc_count is %zu but doc_lengths is NULL", wl->doc_count);
    if (wl->doc_count > 0 && wl->mean_doc_len != 0)
        return mfu__fail_field(err, MFU_E_INVALID, "--doc-lengths",
                               "both document lengths and a mean document length were given: "
                               "pass --doc-lengths or --mean-doc-len, not both");
    for (size_t i = 0; i < wl->doc_count; i++) {
        int64_t d = wl->doc_lengths[i];
        if (d <= 0)
            return mfu__fail_field(err, MFU_E_INVALID, "--doc-lengths",
                                   "document %zu has length %lld: every --doc-lengths entry must "
                                   "be positive",
                                   i + 1, (long long)d);
        if (wl->seq > 0 && d > wl->seq)
            return mfu__fail_field(err, MFU_E_INVALID, "--doc-lengths",
                                   "document %zu has length %lld, longer than --seq %lld: fix "
                                   "--doc-lengths or --seq",
                                   i + 1, (long long)d, (long long)wl->seq);
    }
    double m = wl->mean_doc_len;
    if (!isfinite(m) || m < 0 || (m > 0 && m < 1))
        return mfu__fail_field(err, MFU_E_INVALID, "--mean-doc-len",
                               "the mean document length must be at least 1 token: fix "
                               "--mean-doc-len");
    if (m > 0 && wl->seq > 0 && m > (double)wl->seq)
        return mfu__fail_field(err, MFU_E_INVALID, "--mean-doc-len",
                               "the mean document length %g is longer than --seq %lld: fix "
                               "--mean-doc-len",
                               m, (long long)wl->seq);
    return MFU_OK;
}

double mfu__causal_band(double n, double w)
{
    if (w <= 0 || w >= n)
        return n * n / 2;
    return n * w - w * w / 2;
}

/* Keys per query under a causal mask, averaged over the tokens of the workload. */
double mfu__causal_keys_per_query(const mfu_workload *wl, double w)
{
    if (wl->doc_count > 0) {
        double num = 0, den = 0;
        for (size_t i = 0; i < wl->doc_count; i++) {
            num += mfu__causal_band((double)wl->doc_lengths[i], w);
            den += (double)wl->doc_lengths[i];
        }
        return num / den;
    }
    double n = wl->mean_doc_len > 0 ? wl->mean_doc_len : (double)wl->seq;
    return mfu__causal_band(n, w) / n;
}

/* The exact family: forward matmuls of the architecture. */
static void exact_forward(const mfu_arch *r, const mfu__shape *s, const mfu_workload *wl,
                          bool causal, bool router, bool windows, bool count_embeddings,
                          mfu_flops_breakdown *f, double *context)
{
    double L = (double)r->layers, h = (double)r->hidden, V = (double)r->vocab;
    double H = (double)r->heads;
    double mask = causal ? 1 : 2; /* full attention sees twice the causal band */
    double k_global = mfu__causal_keys_per_query(wl, 0) * mask;
    double n_local = windows ? (double)s->n_local : 0, n_global = L - n_local;
    double k_local = n_local > 0 ? mfu__causal_keys_per_query(wl, (double)r->window) * mask : 0;
    f->attention_projections = 2 * L * s->attn_w;
    f->attention_core = 2 * H * (s->d_qk + s->d_v) * (n_global * k_global + n_local * k_local);
    *context = (n_global * k_global + n_local * k_local) / L;
    f->mlp = 2 * (double)s->n_dense * s->mlp_w;
    f->experts = 2 * (double)s->n_moe * ((double)r->experts_per_token * s->expert_w + s->shared_w);
    f->router = router ? 2 * (double)s->n_moe * s->router_w : 0;
    f->logits = 2 * h * V;
    f->embedding = count_embeddings ? 2 * h * V : 0;
}

/* N of an N-based convention split by component (parameters, not FLOPs). */
static void n_split(mfu_convention c, bool count_embeddings, const mfu_arch *r, const mfu__shape *s,
                    mfu_flops_breakdown *p)
{
    bool tied = r->tied_embeddings == MFU_FLAG_YES;
    bool all_experts = c == MFU_CONV_LLMC || c == MFU_CONV_MAXTEXT_2023;
    double k = all_experts ? (double)r->experts : (double)r->experts_per_token;
    bool in_emb = false, pos = false;
    switch (c) {
    case MFU_CONV_TORCHTITAN: /* subtracts nn.Embedding children only when untied */
        in_emb = !tied && count_embeddings;
        pos = tied || count_embeddings;
        break;
    case MFU_CONV_NANOGPT: /* get_num_params(non_embedding=True) drops wpe only */
        in_emb = !tied;
        pos = count_embeddings;
        break;
    case MFU_CONV_LLM_FOUNDRY: /* mpt_param_count subtracts wte unless tied; wpe stays */
        in_emb = !tied && count_embeddings;
        pos = true;
        break;
    case MFU_CONV_LLMC:
    case MFU_CONV_MAXTEXT_2023: /* every parameter */
        in_emb = !tied;
        pos = true;
        break;
    default: /* palm, 6n: matmul parameters */
        in_emb = !tied && count_embeddings;
        pos = count_embeddings;
        break;
    }
    memset(p, 0, sizeof *p);
    p->attention_projections = (double)r->layers * (s->attn_w + s->attn_extra);
    p->mlp = (double)s->n_dense * (s->mlp_w + s->mlp_b);
    p->experts = (double)s->n_moe * (k * s->expert_w + s->shared_w);
    p->router = (double)s->n_moe * s->router_w;
    p->logits = tied ? s->embed_in : s->lm_head;
    p->embedding = (in_emb ? s->embed_in : 0) + (pos ? s->positions : 0);
    p->other = s->norms;
}

/* H (d_qk + d_v) of the attention term, or 2 d_model for llmc and llm-foundry, read from a
 * possibly partial architecture (an explicit N needs only a few dimensions). */
static mfu_status attention_width(mfu_convention c, const mfu_arch *a, double *out, mfu_error *err)
{
    mfu_status st;
    if (c == MFU_CONV_LLMC || c == MFU_CONV_LLM_FOUNDRY) {
        if ((st = need_dim(a->hidden, "--hidden", "the hidden size", c, err)) != MFU_OK)
            return st;
        *out = 2 * (double)a->hidden;
        return MFU_OK;
    }
    if (a->heads < 0 || a->head_dim < 0 || a->kv_lora_rank < 0 || a->hidden < 0)
        return mfu__fail_field(err, MFU_E_INVALID, "--heads",
                               "a negative dimension was given: fix --heads, --head-dim, "
                               "--hidden or --kv-lora-rank");
    if (a->heads > 0 && a->kv_lora_rank > 0 && a->qk_nope_head_dim > 0 && a->v_head_dim > 0) {
        *out =
            (double)a->heads * (double)(a->qk_nope_head_dim + a->qk_rope_head_dim + a->v_head_dim);
    } else if (a->heads > 0 && a->head_dim > 0) {
        *out = 2 * (double)a->heads * (double)a->head_dim;
    } else if (a->hidden > 0) {
        *out = 2 * (double)a->hidden; /* H Q = d_model when the heads split it evenly */
    } else {
        return missing(err, "--hidden", "the attention width (hidden, or heads x head-dim)", c);
    }
    if (*out > 2 * (double)MFU_DIM_MAX * (double)MFU_DIM_MAX)
        return mfu__fail_field(err, MFU_E_RANGE, "--heads", "the attention width is too large");
    return MFU_OK;
}

static mfu_status compute_n_based(const mfu_arch *arch, const mfu_workload *wl,
                                  const mfu_flops_options *o, bool causal, mfu_flops *out,
                                  mfu_error *err)
{
    mfu_convention c = o->convention;
    mfu_flops_breakdown p = {0};
    mfu_arch r;
    mfu__shape s;
    mfu_status st;
    if (o->params > 0) {
        p.other = (double)o->params;
    } else {
        if ((st = mfu_arch_resolve(arch, &r, err)) != MFU_OK)
            return st;
        if (r.vocab == 0)
            return missing(err, "--vocab", "the vocabulary size", c);
        mfu__arch_shape(&r, &s);
        n_split(c, o->count_embeddings, &r, &s, &p);
    }
    double n = mfu_flops_breakdown_total(&p);
    if (!(n < (double)MFU_PARAMS_MAX))
        return mfu__fail_field(err, MFU_E_RANGE, "--params",
                               "N = %.3g parameters is above the limit 2^53: check the "
                               "dimensions",
                               n);
    out->n_params = (int64_t)n;
    mfu_flops_breakdown f;
    scale(&f, &p, 2);
    if (c != MFU_CONV_6N) {
        double width = 0;
        const mfu_arch *dims = o->params > 0 ? arch : &r;
        if ((st = need_dim(dims->layers, "--layers", "the number of layers", c, err)) != MFU_OK)
            return st;
        if ((st = attention_width(c, dims, &width, err)) != MFU_OK)
            return st;
        if ((st = need_dim(wl->seq, "--seq", "the sequence length", c, err)) != MFU_OK)
            return st;
        double keys = (double)wl->seq * (causal ? 0.5 : 1);
        f.attention_core = 2 * (double)dims->layers * width * keys;
        out->attention_context = keys;
    }
    out->forward = f;
    scale(&out->training, &f, 3);
    return MFU_OK;
}

/* nemo-2024: the closed forms of NeMo 24.07 (published-cases.md section 0). */
static mfu_status compute_nemo(const mfu_arch *arch, const mfu_workload *wl, bool causal,
                               mfu_flops *out, mfu_error *err)
{
    mfu_arch r;
    mfu_status st = mfu_arch_resolve(arch, &r, err);
    if (st != MFU_OK)
        return st;
    const mfu_convention c = MFU_CONV_NEMO_2024;
    if (r.vocab == 0)
        return missing(err, "--vocab", "the vocabulary size", c);
    if ((st = need_dim(wl->seq, "--seq", "the sequence length", c, err)) != MFU_OK)
        return st;
    if (r.experts > 0 || r.kv_lora_rank > 0)
        return mfu__fail_field(err, MFU_E_UNSUPPORTED, "--convention",
                               "nemo-2024 has no formula for mixture-of-experts or MLA models: "
                               "pass another --convention (exact, megatron-2025)");
    double L = (double)r.layers, h = (double)r.hidden, V = (double)r.vocab;
    double s = (double)wl->seq * (causal ? 0.5 : 1);
    mfu_flops_breakdown t = {0};
    if (r.gated_mlp == MFU_FLAG_YES) { /* Llama / Nemotron form */
        double g_over_a = (double)r.kv_heads / (double)r.heads;
        t.attention_projections = L * h * h * (12 + 12 * g_over_a);
        t.mlp = 18 * L * h * (double)r.ffn;
    } else { /* GPT-3 form: MHA and a 4h MLP assumed */
        t.attention_projections = 24 * L * h * h;
        t.mlp = 48 * L * h * h;
    }
    t.attention_core = 12 * L * s * h;
    t.logits = 6 * h * V;
    out->attention_context = s;
    out->training = t;
    scale(&out->forward, &t, 1.0 / 3);
    return MFU_OK;
}

/* megatron-2021 and korthikanti: closed forms in l, h, s, V (MHA, 4h MLP). */
static mfu_status compute_closed_h(const mfu_arch *a, const mfu_workload *wl, mfu_convention c,
                                   bool causal, mfu_flops *out, mfu_error *err)
{
    mfu_status st;
    if ((st = need_dim(a->layers, "--layers", "the number of layers", c, err)) != MFU_OK ||
        (st = need_dim(a->hidden, "--hidden", "the hidden size", c, err)) != MFU_OK ||
        (st = need_dim(a->vocab, "--vocab", "the vocabulary size", c, err)) != MFU_OK ||
        (st = need_dim(wl->seq, "--seq", "the sequence length", c, err)) != MFU_OK)
        return st;
    double l = (double)a->layers, h = (double)a->hidden, V = (double)a->vocab;
    double s = (double)wl->seq * (causal ? 0.5 : 1);
    mfu_flops_breakdown f = {0};
    f.attention_projections = 8 * l * h * h; /* QKV 6h^2 + output 2h^2 */
    f.mlp = 16 * l * h * h;                  /* 4h MLP: 2 x 8h^2 */
    f.attention_core = 4 * l * s * h;        /* QK^T and AV: 2 x 2 s h */
    f.logits = 2 * h * V;
    out->forward = f;
    out->attention_context = s;
    if (c == MFU_CONV_MEGATRON_2021) {
        /* Eq. 3: 4 passes over the layers (full recompute), 3 over the logits. */
        scale(&out->training, &f, 4);
        out->training.logits = 3 * f.logits;
    } else {
        scale(&out->training, &f, 3);
    }
    return MFU_OK;
}

mfu_status mfu_flops_compute(const mfu_arch *arch, const mfu_workload *wl,
                             const mfu_flops_options *opt, mfu_flops *out, mfu_error *err)
{
    if (out)
        memset(out, 0, sizeof *out);
    if (!arch || !wl || !out)
        return mfu__fail(err, MFU_E_INVALID, 0, "mfu_flops_compute: NULL argument");
    mfu_flops_options o = {0};
    if (opt)
        o = *opt;
    if ((unsigned)o.convention >= MFU_CONV_COUNT)
        return mfu__fail_field(err, MFU_E_INVALID, "--convention", "unknown convention %d",
                               (int)o.convention);
    if ((unsigned)o.attention > MFU_ATTENTION_FULL)
        return mfu__fail_field(err, MFU_E_INVALID, "--attention", "unknown attention mode %d",
                               (int)o.attention);
    if (o.params < 0)
        return mfu__fail_field(err, MFU_E_INVALID, "--params",
                               "the parameter count must be positive (got %lld): fix --params",
                               (long long)o.params);
    if (o.params > MFU_PARAMS_MAX)
        return mfu__fail_field(err, MFU_E_RANGE, "--params",
                               "the parameter count %lld is above the limit 2^53: fix --params",
                               (long long)o.params);
    mfu_convention c = o.convention;
    if (o.params > 0 && !mfu_convention_n_based(c))
        return mfu__fail_field(err, MFU_E_INVALID, "--params",
                               "--params applies to the N-based conventions (palm, 6n, nanogpt, "
                               "llmc, torchtitan, llm-foundry, maxtext-2023); %s counts from the "
                               "architecture: drop --params",
                               mfu_convention_name(c));
    mfu_status st = check_workload(wl, err);
    if (st != MFU_OK)
        return st;
    bool causal = o.attention == MFU_ATTENTION_DEFAULT ? default_causal(c)
                                                       : o.attention == MFU_ATTENTION_CAUSAL;
    mfu_flops r = {0};
    r.convention = c;
    r.attention = causal ? MFU_ATTENTION_CAUSAL : MFU_ATTENTION_FULL;

    /* recompute extra in forward-pass units, filled per kind below */
    double extra = 0;
    if (c == MFU_CONV_EXACT || c == MFU_CONV_MEGATRON_2025 || c == MFU_CONV_MAXTEXT_2025) {
        mfu_arch a;
        if ((st = mfu_arch_resolve(arch, &a, err)) != MFU_OK)
            goto fail;
        if (a.vocab == 0) {
            st = missing(err, "--vocab", "the vocabulary size", c);
            goto fail;
        }
        if ((st = need_dim(wl->seq, "--seq", "the sequence length", c, err)) != MFU_OK)
            goto fail;
        mfu__shape s;
        mfu__arch_shape(&a, &s);
        bool megatron = c == MFU_CONV_MEGATRON_2025;
        exact_forward(&a, &s, wl, causal, !megatron, !megatron, o.count_embeddings, &r.forward,
                      &r.attention_context);
        scale(&r.training, &r.forward, 3);
        if (wl->recompute == MFU_RECOMPUTE_SELECTIVE)
            extra = r.forward.attention_core;
        else if (wl->recompute == MFU_RECOMPUTE_FULL)
            extra = mfu_flops_breakdown_total(&r.forward) - r.forward.logits - r.forward.embedding;
    } else if (mfu_convention_n_based(c)) {
        if ((st = compute_n_based(arch, wl, &o, causal, &r, err)) != MFU_OK)
            goto fail;
        if (wl->recompute == MFU_RECOMPUTE_SELECTIVE)
            extra = r.forward.attention_core;
        else if (wl->recompute == MFU_RECOMPUTE_FULL)
            extra = mfu_flops_breakdown_total(&r.forward); /* 8N + 16 L d s (Mosaic HFU) */
    } else if (c == MFU_CONV_NEMO_2024) {
        if ((st = compute_nemo(arch, wl, causal, &r, err)) != MFU_OK)
            goto fail;
        if (wl->recompute == MFU_RECOMPUTE_SELECTIVE)
            extra = r.forward.attention_core;
        else if (wl->recompute == MFU_RECOMPUTE_FULL)
            extra = mfu_flops_breakdown_total(&r.forward) - r.forward.logits;
    } else {
        if ((st = compute_closed_h(arch, wl, c, causal, &r, err)) != MFU_OK)
            goto fail;
        if (c == MFU_CONV_KORTHIKANTI && wl->recompute == MFU_RECOMPUTE_SELECTIVE)
            extra = 3 * r.forward.attention_core; /* s/6h -> s/3h in the paper's HFU */
        else if (c == MFU_CONV_KORTHIKANTI && wl->recompute == MFU_RECOMPUTE_FULL)
            extra = mfu_flops_breakdown_total(&r.forward) - r.forward.logits; /* -> 96 form */
        /* megatron-2021's figure already contains the recompute pass: hardware = model */
    }
    r.forward_flops = mfu_flops_breakdown_total(&r.forward);
    r.model_flops = mfu_flops_breakdown_total(&r.training);
    r.hardware_flops = r.model_flops + extra;
    if (mfu_arch_params(arch, &r.params, NULL) == MFU_OK)
        r.has_param_counts = true;
    *out = r;
    return MFU_OK;
fail:
    return st;
}
