/*
 * arch.c - the architecture description: overriding fields, resolving defaults with checks that
 * name the flag to fix, and counting parameters by component.
 *
 * Every count is computed in double (exact for integers below 2^53, MFU_PARAMS_MAX) so that
 * absurd dimensions cannot overflow; the public counts are range-checked before they become
 * int64.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "model/model_internal.h"
#include "util/util.h"

void mfu_arch_apply(mfu_arch *arch, const mfu_arch *o)
{
#define APPLY(f)                                                                                   \
    do {                                                                                           \
        if (o->f != 0)                                                                             \
            arch->f = o->f;                                                                        \
    } while (0)
    if (o->name[0])
        mfu__strlcpy(arch->name, o->name, sizeof arch->name);
    if (o->source[0])
        mfu__strlcpy(arch->source, o->source, sizeof arch->source);
    APPLY(published_params);
    APPLY(published_active_params);
    APPLY(layers);
    APPLY(hidden);
    APPLY(heads);
    APPLY(kv_heads);
    APPLY(head_dim);
    APPLY(ffn);
    APPLY(vocab);
    APPLY(gated_mlp);
    APPLY(tied_embeddings);
    APPLY(learned_positions);
    APPLY(qkv_bias);
    APPLY(out_bias);
    APPLY(mlp_bias);
    APPLY(norm);
    APPLY(norms_per_layer);
    APPLY(experts);
    APPLY(experts_per_token);
    APPLY(shared_experts);
    APPLY(moe_ffn);
    APPLY(shared_ffn);
    /* A new layer pattern replaces a count that a config derived from its own pattern. */
    if (o->first_dense_layers != 0 || o->moe_layer_freq != 0)
        arch->moe_layers = 0;
    APPLY(first_dense_layers);
    APPLY(moe_layer_freq);
    APPLY(moe_layers);
    APPLY(q_lora_rank);
    APPLY(kv_lora_rank);
    APPLY(qk_nope_head_dim);
    APPLY(qk_rope_head_dim);
    APPLY(v_head_dim);
    APPLY(window);
    if (o->global_every != 0)
        arch->window_layers = 0;
    APPLY(global_every);
    APPLY(window_layers);
    if (o->trained_seq != 0) {
        arch->trained_seq = o->trained_seq;
        mfu__strlcpy(arch->trained_seq_source, o->trained_seq_source,
                     sizeof arch->trained_seq_source);
    }
#undef APPLY
}

/* Every integer field with the flag that sets it and a few words for messages. */
static const struct dim {
    size_t offset;
    const char *flag;
    const char *what;
} dims[] = {
    {offsetof(mfu_arch, layers), "--layers", "the number of layers"},
    {offsetof(mfu_arch, hidden), "--hidden", "the hidden size"},
    {offsetof(mfu_arch, heads), "--heads", "the number of attention heads"},
    {offsetof(mfu_arch, kv_heads), "--kv-heads", "the number of key/value heads"},
    {offsetof(mfu_arch, head_dim), "--head-dim", "the head dimension"},
    {offsetof(mfu_arch, ffn), "--ffn", "the MLP hidden size"},
    {offsetof(mfu_arch, vocab), "--vocab", "the vocabulary size"},
    {offsetof(mfu_arch, learned_positions), "--learned-positions", "the learned positions"},
    {offsetof(mfu_arch, norms_per_layer), "--norms-per-layer", "the norms per layer"},
    {offsetof(mfu_arch, experts), "--experts", "the number of experts"},
    {offsetof(mfu_arch, experts_per_token), "--experts-per-token", "the experts per token"},
    {offsetof(mfu_arch, shared_experts), "--shared-experts", "the number of shared experts"},
    {offsetof(mfu_arch, moe_ffn), "--moe-ffn", "the expert hidden size"},
    {offsetof(mfu_arch, shared_ffn), "--shared-ffn", "the shared-expert hidden size"},
    {offsetof(mfu_arch, first_dense_layers), "--first-dense", "the leading dense layers"},
    {offsetof(mfu_arch, moe_layer_freq), "--moe-layer-freq", "the MoE layer frequency"},
    {offsetof(mfu_arch, moe_layers), "--moe-layers", "the number of MoE layers"},
    {offsetof(mfu_arch, q_lora_rank), "--q-lora-rank", "the query LoRA rank"},
    {offsetof(mfu_arch, kv_lora_rank), "--kv-lora-rank", "the key/value LoRA rank"},
    {offsetof(mfu_arch, qk_nope_head_dim), "--qk-nope-dim", "the non-rotary head dimension"},
    {offsetof(mfu_arch, qk_rope_head_dim), "--qk-rope-dim", "the rotary head dimension"},
    {offsetof(mfu_arch, v_head_dim), "--v-head-dim", "the value head dimension"},
    {offsetof(mfu_arch, window), "--window", "the attention window"},
    {offsetof(mfu_arch, global_every), "--global-every", "the global-layer period"},
    {offsetof(mfu_arch, window_layers), "--window-layers", "the number of windowed layers"},
};

static int64_t field(const mfu_arch *a, size_t offset)
{
    int64_t v;
    memcpy(&v, (const char *)a + offset, sizeof v);
    return v;
}

static mfu_status missing(mfu_error *err, const char *flag, const char *what)
{
    return mfu__fail_field(err, MFU_E_MISSING, flag, "%s is not known: pass %s", what, flag);
}

static mfu_status invalid(mfu_error *err, const char *flag, const char *fmt, ...) MFU__PRINTF(3, 4);
static mfu_status invalid(mfu_error *err, const char *flag, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return mfu__fail_field(err, MFU_E_INVALID, flag, "%s", msg);
}

static bool flag_ok(mfu_flag f)
{
    return f == MFU_FLAG_UNSET || f == MFU_FLAG_NO || f == MFU_FLAG_YES;
}

static mfu_flag flag_or(mfu_flag f, mfu_flag dflt)
{
    return f == MFU_FLAG_UNSET ? dflt : f;
}

mfu_status mfu_arch_resolve(const mfu_arch *in, mfu_arch *out, mfu_error *err)
{
    if (!in || !out)
        return mfu__fail(err, MFU_E_INVALID, 0, "mfu_arch_resolve: NULL argument");
    mfu_arch r = *in;
    for (size_t i = 0; i < MFU__ARRAY_LEN(dims); i++) {
        int64_t v = field(&r, dims[i].offset);
        if (v < 0)
            return invalid(err, dims[i].flag, "%s must be positive (got %lld): fix %s",
                           dims[i].what, (long long)v, dims[i].flag);
        if (v > MFU_DIM_MAX)
            return mfu__fail_field(err, MFU_E_RANGE, dims[i].flag,
                                   "%s %lld is above the limit %lld: check %s", dims[i].what,
                                   (long long)v, (long long)MFU_DIM_MAX, dims[i].flag);
    }
    if (r.trained_seq < 0 || r.trained_seq > MFU_DIM_MAX)
        return invalid(err, "--seq", "the trained sequence length %lld is out of range: fix it",
                       (long long)r.trained_seq);
    if (!flag_ok(r.gated_mlp) || !flag_ok(r.tied_embeddings) || !flag_ok(r.qkv_bias) ||
        !flag_ok(r.out_bias) || !flag_ok(r.mlp_bias) || r.norm < MFU_NORM_UNSET ||
        r.norm > MFU_NORM_NONPARAMETRIC)
        return mfu__fail(err, MFU_E_INVALID, 0, "an mfu_arch yes/no field holds an unknown value");
    if (r.layers == 0)
        return missing(err, "--layers", "the number of layers");
    if (r.hidden == 0)
        return missing(err, "--hidden", "the hidden size");
    if (r.heads == 0)
        return missing(err, "--heads", "the number of attention heads");

    bool mla = r.kv_lora_rank > 0;
    if (mla) {
        if (r.qk_nope_head_dim == 0)
            return missing(err, "--qk-nope-dim", "MLA's non-rotary head dimension");
        if (r.qk_rope_head_dim == 0)
            return missing(err, "--qk-rope-dim", "MLA's rotary head dimension");
        if (r.v_head_dim == 0)
            return missing(err, "--v-head-dim", "MLA's value head dimension");
        if (r.kv_heads == 0)
            r.kv_heads = r.heads; /* MLA expands keys and values to every head */
    } else if (r.q_lora_rank || r.qk_nope_head_dim || r.qk_rope_head_dim || r.v_head_dim) {
        return mfu__fail_field(err, MFU_E_INVALID, "--kv-lora-rank",
                               "MLA dimensions were given without a key/value rank: pass "
                               "--kv-lora-rank (or drop --q-lora-rank/--qk-*-dim/--v-head-dim)");
    }
    if (r.kv_heads == 0)
        r.kv_heads = r.heads;
    if (r.kv_heads > r.heads || r.heads % r.kv_heads != 0)
        return invalid(err, "--kv-heads",
                       "--kv-heads (%lld) must divide --heads (%lld): fix --kv-heads",
                       (long long)r.kv_heads, (long long)r.heads);
    if (r.head_dim == 0) {
        if (r.hidden % r.heads != 0)
            return invalid(err, "--head-dim",
                           "--heads (%lld) does not divide --hidden (%lld): pass --head-dim",
                           (long long)r.heads, (long long)r.hidden);
        r.head_dim = r.hidden / r.heads;
    }
    if (r.ffn == 0)
        r.ffn = 4 * r.hidden;
    r.gated_mlp = flag_or(r.gated_mlp, MFU_FLAG_NO);
    r.tied_embeddings = flag_or(r.tied_embeddings, MFU_FLAG_NO);
    r.qkv_bias = flag_or(r.qkv_bias, MFU_FLAG_NO);
    r.out_bias = flag_or(r.out_bias, MFU_FLAG_NO);
    r.mlp_bias = flag_or(r.mlp_bias, MFU_FLAG_NO);
    if (r.norm == MFU_NORM_UNSET)
        r.norm = MFU_NORM_RMS;
    if (r.norms_per_layer == 0)
        r.norms_per_layer = 2;

    if (r.experts > 0) {
        if (r.experts_per_token == 0)
            return missing(err, "--experts-per-token", "the experts per token (top-k)");
        if (r.experts_per_token > r.experts)
            return invalid(err, "--experts-per-token",
                           "--experts-per-token (%lld) exceeds --experts (%lld): fix either",
                           (long long)r.experts_per_token, (long long)r.experts);
        if (r.moe_ffn == 0)
            r.moe_ffn = r.ffn;
        if (r.shared_ffn == 0)
            r.shared_ffn = r.moe_ffn;
        if (r.moe_layer_freq == 0)
            r.moe_layer_freq = 1;
        if (r.first_dense_layers > r.layers)
            return invalid(err, "--first-dense",
                           "--first-dense (%lld) exceeds --layers (%lld): fix --first-dense",
                           (long long)r.first_dense_layers, (long long)r.layers);
        if (r.moe_layers > r.layers)
            return invalid(err, "--moe-layers",
                           "--moe-layers (%lld) exceeds --layers (%lld): fix --moe-layers",
                           (long long)r.moe_layers, (long long)r.layers);
    } else if (r.experts_per_token || r.shared_experts || r.moe_ffn || r.first_dense_layers ||
               r.moe_layers) {
        return mfu__fail_field(err, MFU_E_INVALID, "--experts",
                               "mixture-of-experts settings were given without experts: pass "
                               "--experts");
    }
    if (r.window > 0) {
        if (r.window_layers > r.layers)
            return invalid(err, "--window-layers",
                           "--window-layers (%lld) exceeds --layers (%lld): fix it",
                           (long long)r.window_layers, (long long)r.layers);
    } else if (r.global_every || r.window_layers) {
        return mfu__fail_field(err, MFU_E_INVALID, "--window",
                               "a sliding-window layer pattern was given without a window: "
                               "pass --window");
    }
    *out = r;
    return MFU_OK;
}

/* Multiples of q in [lo, hi], for 0 <= lo and q > 0 (0 when the range is empty). */
static int64_t multiples_in(int64_t lo, int64_t hi, int64_t q)
{
    if (hi < lo)
        return 0;
    int64_t first = (lo + q - 1) / q;
    int64_t last = hi / q;
    return last >= first ? last - first + 1 : 0;
}

void mfu__arch_shape(const mfu_arch *a, mfu__shape *s)
{
    memset(s, 0, sizeof *s);
    double h = (double)a->hidden, H = (double)a->heads, G = (double)a->kv_heads;
    double Dh = (double)a->head_dim;
    if (a->kv_lora_rank > 0) {
        double rq = (double)a->q_lora_rank, rkv = (double)a->kv_lora_rank;
        double dn = (double)a->qk_nope_head_dim, dr = (double)a->qk_rope_head_dim;
        double dv = (double)a->v_head_dim;
        double q = rq > 0 ? h * rq + rq * H * (dn + dr) : h * H * (dn + dr);
        /* q (direct or down+up), kv down-projection with the shared rotary key, kv up, out */
        s->attn_w = q + h * (rkv + dr) + rkv * H * (dn + dv) + H * dv * h;
        s->attn_extra = rq + rkv; /* the norms after the q and kv down-projections */
        s->d_qk = dn + dr;
        s->d_v = dv;
    } else {
        s->attn_w = 2 * h * H * Dh + 2 * h * G * Dh;
        s->attn_extra = (a->qkv_bias == MFU_FLAG_YES ? H * Dh + 2 * G * Dh : 0) +
                        (a->out_bias == MFU_FLAG_YES ? h : 0);
        s->d_qk = s->d_v = Dh;
    }
    s->mlp_mats = a->gated_mlp == MFU_FLAG_YES ? 3 : 2;
    double F = (double)a->ffn;
    s->mlp_w = s->mlp_mats * h * F;
    s->mlp_b = a->mlp_bias == MFU_FLAG_YES ? (s->mlp_mats - 1) * F + h : 0;
    if (a->experts > 0) {
        s->n_moe = a->moe_layers > 0
                       ? a->moe_layers
                       : multiples_in(a->first_dense_layers, a->layers - 1, a->moe_layer_freq);
        s->expert_w = s->mlp_mats * h * (double)a->moe_ffn;
        s->shared_w = (double)a->shared_experts * s->mlp_mats * h * (double)a->shared_ffn;
        s->router_w = h * (double)a->experts;
    }
    s->n_dense = a->layers - s->n_moe;
    double per_norm = a->norm == MFU_NORM_LAYER ? 2 * h : a->norm == MFU_NORM_RMS ? h : 0;
    s->norms = ((double)a->layers * (double)a->norms_per_layer + 1) * per_norm;
    s->embed_in = (double)a->vocab * h;
    s->positions = (double)a->learned_positions * h;
    s->lm_head = a->tied_embeddings == MFU_FLAG_YES ? 0 : (double)a->vocab * h;
    if (a->window > 0) {
        if (a->window_layers > 0)
            s->n_local = a->window_layers;
        else if (a->global_every > 0)
            s->n_local = a->layers - a->layers / a->global_every;
        else
            s->n_local = a->layers;
    }
    s->n_global = a->layers - s->n_local;
}

mfu_status mfu_arch_params(const mfu_arch *arch, mfu_param_counts *out, mfu_error *err)
{
    if (out)
        memset(out, 0, sizeof *out);
    if (!arch || !out)
        return mfu__fail(err, MFU_E_INVALID, 0, "mfu_arch_params: NULL argument");
    mfu_arch r;
    mfu_status st = mfu_arch_resolve(arch, &r, err);
    if (st != MFU_OK)
        return st;
    if (r.vocab == 0)
        return missing(err, "--vocab", "the vocabulary size");
    mfu__shape s;
    mfu__arch_shape(&r, &s);
    double L = (double)r.layers, nm = (double)s.n_moe, E = (double)r.experts;
    double k = (double)r.experts_per_token;
    double total = L * (s.attn_w + s.attn_extra) + (double)s.n_dense * (s.mlp_w + s.mlp_b) +
                   nm * (E * s.expert_w + s.shared_w + s.router_w) + s.norms + s.embed_in +
                   s.positions + s.lm_head;
    if (!(total < (double)MFU_PARAMS_MAX))
        return mfu__fail_field(err, MFU_E_RANGE, "--layers",
                               "the model would have %.3g parameters, above the limit 2^53: "
                               "check the dimensions",
                               total);
    double active = total - nm * (E - k) * s.expert_w;
    double gathered = (r.tied_embeddings == MFU_FLAG_YES ? 0 : s.embed_in) + s.positions;
    out->total = (int64_t)total;
    out->active = (int64_t)active;
    out->matmul = (int64_t)(active - gathered);
    out->embedding = (int64_t)(s.embed_in + s.positions);
    return MFU_OK;
}
