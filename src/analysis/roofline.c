/*
 * roofline.c - the matrix products of one training micro-step, their arithmetic intensity
 * against the device's ridge point, and the MFU ceiling their shapes allow.
 *
 * The architecture is read once through the model module's mfu__arch_shape() (layer counts:
 * dense/MoE, global/windowed), so the products here and the exact convention's FLOPs count
 * the same layers; the per-matrix shapes are built here from the resolved mfu_arch. The byte
 * model, the parallel splits and the limits are in docs/internals/roofline.md.
 */
#include "mfu/roofline.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "analysis/internal.h"
#include "model/model.h"
#include "util/util.h"

void mfu_roofline_config_init(mfu_roofline_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->micro_batch = 1;
    cfg->tp = 1;
    cfg->ep = 1;
    cfg->etp = 0;
    cfg->dtype = MFU_DTYPE_BF16;
}

double mfu_roofline_dtype_bytes(mfu_dtype dtype)
{
    switch (dtype) {
    case MFU_DTYPE_FP64: return 8;
    case MFU_DTYPE_FP32:
    case MFU_DTYPE_TF32: return 4;
    case MFU_DTYPE_BF16:
    case MFU_DTYPE_FP16: return 2;
    case MFU_DTYPE_FP8:
    case MFU_DTYPE_INT8: return 1;
    default: return 0;
    }
}

mfu_status mfu_roofline_config_set_device(mfu_roofline_config *cfg, const mfu_device_info *dev,
                                          mfu_error *err)
{
    if (!cfg || !dev)
        return mfu__fail(err, MFU_E_INVALID, 0, "mfu_roofline_config_set_device: NULL argument");
    double peak = 0;
    mfu_status st = mfu_device_peak_flops_per_s(dev, cfg->dtype, false, &peak, err);
    if (st != MFU_OK)
        return st;
    double bw = dev->memory_bandwidth_bytes_per_s;
    if (!(isfinite(bw) && bw > 0))
        return mfu__fail_field(err, MFU_E_UNSUPPORTED, "--bandwidth-tbs",
                               "the device table has no memory bandwidth for %s: pass "
                               "--bandwidth-tbs X",
                               dev->id);
    cfg->peak_flops_per_s = peak;
    cfg->memory_bandwidth_bytes_per_s = bw;
    return MFU_OK;
}

const char *mfu_roofline_group_name(mfu_roofline_group g)
{
    static const char *const names[MFU_RL_GROUP_COUNT] = {
        "attention_projections", "attention_core", "mlp", "router", "experts", "logits"};
    return (unsigned)g < MFU_RL_GROUP_COUNT ? names[g] : "?";
}

const char *mfu_roofline_pass_name(mfu_roofline_pass p)
{
    switch (p) {
    case MFU_RL_FWD: return "fwd";
    case MFU_RL_DGRAD: return "dgrad";
    case MFU_RL_WGRAD: return "wgrad";
    default: return "?";
    }
}

/* ---- checks -------------------------------------------------------------------------------- */

static mfu_status check_size(int64_t v, const char *flag, const char *what, mfu_error *err)
{
    if (v < 0)
        return mfu__fail_field(err, MFU_E_INVALID, flag, "%s must be positive (got %lld): fix %s",
                               what, (long long)v, flag);
    if (v > MFU_DIM_MAX)
        return mfu__fail_field(err, MFU_E_RANGE, flag, "%s %lld is above the limit %lld: fix %s",
                               what, (long long)v, (long long)MFU_DIM_MAX, flag);
    return MFU_OK;
}

static bool positive(double v)
{
    return isfinite(v) && v > 0;
}

/* The device part of cfg: dtype, peak, bandwidth. */
static mfu_status check_device(const mfu_roofline_config *cfg, mfu_error *err)
{
    if (mfu_roofline_dtype_bytes(cfg->dtype) <= 0)
        return mfu__fail_field(err, MFU_E_INVALID, "--dtype",
                               "unknown dtype %d: pass --dtype bf16, fp16, fp8, tf32, fp32, fp64 "
                               "or int8",
                               (int)cfg->dtype);
    if (!positive(cfg->peak_flops_per_s))
        return mfu__fail_field(err, MFU_E_INVALID, "--peak-tflops",
                               "the peak FLOP/s must be finite and > 0: give --device or "
                               "--peak-tflops");
    if (!positive(cfg->memory_bandwidth_bytes_per_s))
        return mfu__fail_field(err, MFU_E_INVALID, "--bandwidth-tbs",
                               "the memory bandwidth must be finite and > 0: give --device or "
                               "--bandwidth-tbs");
    return MFU_OK;
}

/* ---- one product --------------------------------------------------------------------------- */

/* A forward product and how its operands are charged. Operands by their forward shape:
 * A m x k, B k x n, C m x n; each pass touches all three once (docs/internals/roofline.md). */
typedef struct fwd_spec {
    const char *name;
    mfu_roofline_group group;
    double m, n, k, count, mask;
    double a_factor, b_factor, c_factor; /* bytes per element of each operand, in elements of
                                            the dtype: 1, the mask fraction or 0 for a score
                                            matrix, 1/g for grouped keys and values */
    bool weight;                         /* B is a weight (the fp32 gradient option applies) */
    bool recompute_selective;            /* re-run under selective recomputation */
    bool recompute_full;                 /* re-run under full recomputation */
} fwd_spec;

static void finish(mfu_roofline_product *p, double peak, double bw, double ridge)
{
    p->intensity_flops_per_byte = p->flops / p->bytes;
    p->memory_bound = p->intensity_flops_per_byte < ridge;
    p->attainable_flops_per_s = p->memory_bound ? p->intensity_flops_per_byte * bw : peak;
    p->time_s = p->flops / p->attainable_flops_per_s;
}

/* The three passes of one forward product, appended to r. */
static void expand(mfu_roofline *r, const fwd_spec *f)
{
    double e = r->bytes_per_element;
    double a = f->m * f->k * f->a_factor, b = f->k * f->n * f->b_factor;
    double c = f->m * f->n * f->c_factor;
    double flops = 2 * f->m * f->n * f->k * f->mask * f->count;
    for (int pass = MFU_RL_FWD; pass <= MFU_RL_WGRAD; pass++) {
        mfu_roofline_product *p = &r->products[r->nproducts++];
        memset(p, 0, sizeof *p);
        mfu__strlcpy(p->name, f->name, sizeof p->name);
        p->group = f->group;
        p->pass = (mfu_roofline_pass)pass;
        p->count = f->count;
        p->mask_fraction = f->mask;
        p->flops = flops;
        double bytes = e * (a + b + c);
        switch (pass) {
        case MFU_RL_FWD: /* C = A B */
            p->m = f->m, p->n = f->n, p->k = f->k;
            p->recomputed = (r->recompute == MFU_RECOMPUTE_SELECTIVE && f->recompute_selective) ||
                            (r->recompute == MFU_RECOMPUTE_FULL && f->recompute_full);
            break;
        case MFU_RL_DGRAD: /* dA = dC B^T */ p->m = f->m, p->n = f->k, p->k = f->n; break;
        default: /* dB = A^T dC; an fp32 accumulator is read and written */
            p->m = f->k, p->n = f->n, p->k = f->m;
            if (f->weight && r->fp32_weight_grad)
                bytes = e * (a + c) + 2 * 4 * b;
            break;
        }
        p->bytes = bytes * f->count;
        finish(p, r->peak_flops_per_s, r->memory_bandwidth_bytes_per_s, r->ridge_flops_per_byte);
    }
}

mfu_status mfu_roofline_gemm(const mfu_roofline_config *cfg, double m, double n, double k,
                             mfu_roofline_product *out, mfu_error *err)
{
    if (out)
        memset(out, 0, sizeof *out);
    if (!cfg || !out)
        return mfu__fail(err, MFU_E_INVALID, 0, "mfu_roofline_gemm: NULL argument");
    if (!positive(m) || !positive(n) || !positive(k))
        return mfu__fail_field(err, MFU_E_INVALID, "shape",
                               "a GEMM shape must be finite and > 0 (got %g x %g x %g): fix m, "
                               "n and k",
                               m, n, k);
    mfu_status st = check_device(cfg, err);
    if (st != MFU_OK)
        return st;
    double e = mfu_roofline_dtype_bytes(cfg->dtype);
    mfu__strlcpy(out->name, "gemm", sizeof out->name);
    out->group = MFU_RL_MLP;
    out->pass = MFU_RL_FWD;
    out->m = m, out->n = n, out->k = k;
    out->count = 1;
    out->mask_fraction = 1;
    out->flops = 2 * m * n * k;
    out->bytes = e * (m * k + k * n + m * n);
    out->flops_share = 1;
    double peak = cfg->peak_flops_per_s, bw = cfg->memory_bandwidth_bytes_per_s;
    finish(out, peak, bw, peak / bw);
    return MFU_OK;
}

/* ---- attention masks ----------------------------------------------------------------------- */

/* The fraction of the seq x seq score matrix computed: keys per query averaged over the
 * tokens, over seq. Packed documents mask per document. */
static double mask_fraction(const mfu_workload *wl, double w)
{
    return mfu__causal_keys_per_query(wl, w) / (double)wl->seq;
}

/* ---- the step ------------------------------------------------------------------------------ */

static double ceil_div(double a, double b)
{
    return ceil(a / b);
}

/* Check the parallel sizes against the architecture; fill r's. */
static mfu_status check_parallel(const mfu_roofline_config *cfg, const mfu_arch *a, mfu_roofline *r,
                                 mfu_error *err)
{
    mfu_status st;
    if (cfg->micro_batch < 1)
        return mfu__fail_field(err, MFU_E_INVALID, "--micro-batch",
                               "the micro-batch must be at least 1 sequence (got %lld): fix "
                               "--micro-batch",
                               (long long)cfg->micro_batch);
    if ((st = check_size(cfg->micro_batch, "--micro-batch", "the micro-batch", err)) != MFU_OK ||
        (st = check_size(cfg->tp, "--tp", "the tensor-parallel size", err)) != MFU_OK ||
        (st = check_size(cfg->ep, "--ep", "the expert-parallel size", err)) != MFU_OK ||
        (st = check_size(cfg->etp, "--etp", "the expert tensor-parallel size", err)) != MFU_OK)
        return st;
    int64_t tp = cfg->tp > 0 ? cfg->tp : 1, ep = cfg->ep > 0 ? cfg->ep : 1;
    int64_t etp = cfg->etp > 0 ? cfg->etp : tp;
    if (a->heads % tp != 0)
        return mfu__fail_field(err, MFU_E_INVALID, "--tp",
                               "--tp %lld does not divide the %lld attention heads: pass a --tp "
                               "that divides --heads",
                               (long long)tp, (long long)a->heads);
    if (a->kv_heads >= tp ? a->kv_heads % tp != 0 : tp % a->kv_heads != 0)
        return mfu__fail_field(err, MFU_E_INVALID, "--tp",
                               "--tp %lld and the %lld key/value heads must divide one another: "
                               "fix --tp",
                               (long long)tp, (long long)a->kv_heads);
    if (a->experts == 0 && (ep > 1 || cfg->etp > 1))
        return mfu__fail_field(err, MFU_E_INVALID, ep > 1 ? "--ep" : "--etp",
                               "expert parallelism applies to mixture-of-experts models: drop "
                               "%s or pass --experts",
                               ep > 1 ? "--ep" : "--etp");
    if (a->experts > 0 && a->experts % ep != 0)
        return mfu__fail_field(err, MFU_E_INVALID, "--ep",
                               "--ep %lld does not divide the %lld experts: pass a --ep that "
                               "divides --experts",
                               (long long)ep, (long long)a->experts);
    r->micro_batch = cfg->micro_batch;
    r->tp = tp;
    r->ep = ep;
    r->etp = etp;
    return MFU_OK;
}

/* Append every forward product of the architecture (per device) to specs; returns how many. */
static size_t forward_specs(const mfu_arch *a, const mfu__shape *s, const mfu_workload *wl,
                            const mfu_roofline *r, fwd_spec *specs)
{
    size_t n = 0;
    double T = r->tokens, h = (double)a->hidden, L = (double)a->layers;
    double t = (double)r->tp, Hl = (double)a->heads / t;
    double Gl = a->kv_heads >= r->tp ? (double)a->kv_heads / t : 1;
    double g = Hl / Gl; /* query heads sharing one key/value head on this device */
    double score = r->unfused_attention ? -1 : 0; /* -1: replaced by the mask below */
    bool fused = r->fused_projections;
#define ADD(...)                                                                                   \
    do {                                                                                           \
        specs[n] = (fwd_spec){__VA_ARGS__};                                                        \
        n++;                                                                                       \
    } while (0)
    /* A linear layer: tokens x in -> tokens x out, B a weight; re-run by full recompute. */
#define LINEAR(nm, grp, m_, out_, in_, cnt)                                                        \
    ADD(.name = (nm), .group = (grp), .m = (m_), .n = (out_), .k = (in_), .count = (cnt),          \
        .mask = 1, .a_factor = 1, .b_factor = 1, .c_factor = 1, .weight = true,                    \
        .recompute_full = true)

    /* attention projections: column parallel in, row parallel out; MLA's down-projections are
     * replicated on every tensor-parallel rank (DeepSeek-V3's reference layout) */
    if (a->kv_lora_rank > 0) {
        double rq = (double)a->q_lora_rank, rkv = (double)a->kv_lora_rank;
        double dn = (double)a->qk_nope_head_dim, dr = (double)a->qk_rope_head_dim;
        double dv = (double)a->v_head_dim;
        if (rq > 0) {
            LINEAR("mla.q_down", MFU_RL_ATTN_PROJ, T, rq, h, L);
            LINEAR("mla.q_up", MFU_RL_ATTN_PROJ, T, Hl * (dn + dr), rq, L);
        } else {
            LINEAR("attn.q", MFU_RL_ATTN_PROJ, T, Hl * (dn + dr), h, L);
        }
        LINEAR("mla.kv_down", MFU_RL_ATTN_PROJ, T, rkv + dr, h, L);
        LINEAR("mla.kv_up", MFU_RL_ATTN_PROJ, T, Hl * (dn + dv), rkv, L);
        LINEAR("attn.o", MFU_RL_ATTN_PROJ, T, h, Hl * dv, L);
    } else {
        double d = (double)a->head_dim;
        if (fused) {
            LINEAR("attn.qkv", MFU_RL_ATTN_PROJ, T, (Hl + 2 * Gl) * d, h, L);
        } else {
            LINEAR("attn.q", MFU_RL_ATTN_PROJ, T, Hl * d, h, L);
            LINEAR("attn.k", MFU_RL_ATTN_PROJ, T, Gl * d, h, L);
            LINEAR("attn.v", MFU_RL_ATTN_PROJ, T, Gl * d, h, L);
        }
        LINEAR("attn.o", MFU_RL_ATTN_PROJ, T, h, Hl * d, L);
    }

    /* attention core, per (sequence, head): scores S = Q K^T (seq x seq x d_qk, S is C) and
     * values O = P V (seq x d_v x seq, P is A); K and V are read once per key/value head */
    double sq = (double)wl->seq;
    double n_win = a->window > 0 ? (double)s->n_local : 0, n_glob = L - n_win;
    for (int win = 0; win < 2; win++) {
        double layers = win ? n_win : n_glob;
        if (layers <= 0)
            continue;
        double mask = mask_fraction(wl, win ? (double)a->window : 0);
        double sm = score < 0 ? mask : 0; /* bytes of the score matrix, per element */
        double cnt = layers * (double)r->micro_batch * Hl;
        ADD(.name = win ? "attn.scores.window" : "attn.scores", .group = MFU_RL_ATTN_CORE, .m = sq,
            .n = sq, .k = s->d_qk, .count = cnt, .mask = mask, .a_factor = 1, .b_factor = 1 / g,
            .c_factor = sm, .recompute_selective = true, .recompute_full = true);
        ADD(.name = win ? "attn.values.window" : "attn.values", .group = MFU_RL_ATTN_CORE, .m = sq,
            .n = s->d_v, .k = sq, .count = cnt, .mask = mask, .a_factor = sm, .b_factor = 1 / g,
            .c_factor = 1, .recompute_selective = true, .recompute_full = true);
    }

    /* dense MLP: up and gate column parallel, down row parallel */
    bool gated = a->gated_mlp == MFU_FLAG_YES;
    if (s->n_dense > 0) {
        double Fl = ceil_div((double)a->ffn, t), nd = (double)s->n_dense;
        if (gated && fused) {
            LINEAR("mlp.up_gate", MFU_RL_MLP, T, 2 * Fl, h, nd);
        } else {
            LINEAR("mlp.up", MFU_RL_MLP, T, Fl, h, nd);
            if (gated)
                LINEAR("mlp.gate", MFU_RL_MLP, T, Fl, h, nd);
        }
        LINEAR("mlp.down", MFU_RL_MLP, T, h, Fl, nd);
    }

    /* MoE: a replicated router; experts / ep experts per device, each seeing the average
     * r->tokens_per_expert tokens, split by etp; shared experts as one MLP split by tp */
    if (s->n_moe > 0) {
        double nm = (double)s->n_moe, E = (double)a->experts;
        LINEAR("moe.router", MFU_RL_ROUTER, T, E, h, nm);
        double Fe = ceil_div((double)a->moe_ffn, (double)r->etp);
        double cnt = nm * E / (double)r->ep, Te = r->tokens_per_expert;
        if (gated && fused) {
            LINEAR("moe.expert.up_gate", MFU_RL_EXPERTS, Te, 2 * Fe, h, cnt);
        } else {
            LINEAR("moe.expert.up", MFU_RL_EXPERTS, Te, Fe, h, cnt);
            if (gated)
                LINEAR("moe.expert.gate", MFU_RL_EXPERTS, Te, Fe, h, cnt);
        }
        LINEAR("moe.expert.down", MFU_RL_EXPERTS, Te, h, Fe, cnt);
        if (a->shared_experts > 0) {
            double Fs = ceil_div((double)a->shared_experts * (double)a->shared_ffn, t);
            if (gated && fused) {
                LINEAR("moe.shared.up_gate", MFU_RL_EXPERTS, T, 2 * Fs, h, nm);
            } else {
                LINEAR("moe.shared.up", MFU_RL_EXPERTS, T, Fs, h, nm);
                if (gated)
                    LINEAR("moe.shared.gate", MFU_RL_EXPERTS, T, Fs, h, nm);
            }
            LINEAR("moe.shared.down", MFU_RL_EXPERTS, T, h, Fs, nm);
        }
    }

    /* logits: vocabulary parallel; never recomputed (as the exact convention counts) */
    ADD(.name = "logits", .group = MFU_RL_LOGITS, .m = T, .n = ceil_div((double)a->vocab, t),
        .k = h, .count = 1, .mask = 1, .a_factor = 1, .b_factor = 1, .c_factor = 1, .weight = true);
#undef LINEAR
#undef ADD
    return n;
}

mfu_status mfu_roofline_compute(const mfu_arch *arch, const mfu_workload *wl,
                                const mfu_roofline_config *cfg, mfu_roofline *out, mfu_error *err)
{
    if (out)
        memset(out, 0, sizeof *out);
    if (!arch || !wl || !cfg || !out)
        return mfu__fail(err, MFU_E_INVALID, 0, "mfu_roofline_compute: NULL argument");
    mfu_status st = check_device(cfg, err);
    if (st != MFU_OK)
        return st;
    /* The exact convention validates the architecture and workload with its own messages. */
    mfu_flops f;
    mfu_flops_options fo = {0};
    fo.convention = MFU_CONV_EXACT;
    if ((st = mfu_flops_compute(arch, wl, &fo, &f, err)) != MFU_OK)
        return st;
    mfu_arch a;
    if ((st = mfu_arch_resolve(arch, &a, err)) != MFU_OK)
        return st;
    mfu__shape s;
    mfu__arch_shape(&a, &s);

    mfu_roofline r;
    memset(&r, 0, sizeof r);
    if ((st = check_parallel(cfg, &a, &r, err)) != MFU_OK)
        return st;
    r.seq = wl->seq;
    r.tokens = (double)r.micro_batch * (double)wl->seq;
    if (a.experts > 0)
        r.tokens_per_expert =
            r.tokens * (double)a.experts_per_token * (double)r.ep / (double)a.experts;
    r.dtype = cfg->dtype;
    r.bytes_per_element = mfu_roofline_dtype_bytes(cfg->dtype);
    r.peak_flops_per_s = cfg->peak_flops_per_s;
    r.memory_bandwidth_bytes_per_s = cfg->memory_bandwidth_bytes_per_s;
    r.ridge_flops_per_byte = r.peak_flops_per_s / r.memory_bandwidth_bytes_per_s;
    r.unfused_attention = cfg->unfused_attention;
    r.fp32_weight_grad = cfg->fp32_weight_grad;
    r.fused_projections = cfg->fused_projections;
    r.recompute = wl->recompute;

    fwd_spec specs[MFU_ROOFLINE_MAX_PRODUCTS / 3];
    size_t nspecs = forward_specs(&a, &s, wl, &r, specs);
    for (size_t i = 0; i < nspecs; i++)
        expand(&r, &specs[i]);

    double group_flops[MFU_RL_GROUP_COUNT] = {0}, group_mem[MFU_RL_GROUP_COUNT] = {0};
    double mem = 0;
    for (size_t i = 0; i < r.nproducts; i++) {
        const mfu_roofline_product *p = &r.products[i];
        r.flops += p->flops;
        r.time_s += p->time_s;
        if (p->recomputed) {
            r.recompute_flops += p->flops;
            r.time_s += p->time_s;
        }
        group_flops[p->group] += p->flops;
        if (p->memory_bound) {
            mem += p->flops;
            group_mem[p->group] += p->flops;
        }
    }
    if (!(isfinite(r.flops) && r.flops > 0 && isfinite(r.time_s) && r.time_s > 0))
        return mfu__fail_field(err, MFU_E_RANGE, "--micro-batch",
                               "the step's FLOPs are not representable: check --micro-batch, "
                               "--seq and the model's dimensions");
    for (size_t i = 0; i < r.nproducts; i++)
        r.products[i].flops_share = r.products[i].flops / r.flops;
    for (int g = 0; g < MFU_RL_GROUP_COUNT; g++) {
        r.group_flops_share[g] = group_flops[g] / r.flops;
        r.group_memory_bound_share[g] = group_flops[g] > 0 ? group_mem[g] / group_flops[g] : 0;
    }
    r.memory_bound_share = mem / r.flops;
    r.ceiling = r.flops / (r.peak_flops_per_s * r.time_s);
    *out = r;
    return MFU_OK;
}

/* ---- the finding ----------------------------------------------------------------------------- */

static const char *group_words(mfu_roofline_group g)
{
    static const char *const words[MFU_RL_GROUP_COUNT] = {
        "attention projection", "attention core", "MLP", "router", "expert", "logit"};
    return words[g];
}

/* "43 %"; one decimal below 10 % and from 99.5 % up ("4.3 %", "99.6 %"), so that a ceiling
 * is never rounded up to 100 %. */
static void fmt_pct(char *buf, size_t n, double f)
{
    double p = 100 * f;
    snprintf(buf, n, p < 10 || p >= 99.5 ? "%.1f %%" : "%.0f %%", p);
}

/* Above this ceiling the shapes are no limit worth a number (issue 15: "at most 99 %"). */
#define ROOFLINE_NO_LIMIT 0.9

bool mfu_roofline_sentence(const mfu_roofline *r, char *buf, size_t n)
{
    if (!r || !buf || n == 0)
        return false;
    buf[0] = '\0';
    /* groups mostly memory-bound and holding at least 1 % of the FLOPs, largest share first */
    int order[MFU_RL_GROUP_COUNT], k = 0;
    for (int g = 0; g < MFU_RL_GROUP_COUNT; g++)
        if (r->group_flops_share[g] >= 0.01 && r->group_memory_bound_share[g] >= 0.5)
            order[k++] = g;
    for (int i = 1; i < k; i++)
        for (int j = i;
             j > 0 && r->group_flops_share[order[j]] > r->group_flops_share[order[j - 1]]; j--) {
            int tmp = order[j];
            order[j] = order[j - 1];
            order[j - 1] = tmp;
        }
    if (k > 3)
        k = 3;
    bool ok = mfu__appendf(buf, n, "at micro-batch %lld × %lld tokens", (long long)r->micro_batch,
                           (long long)r->seq);
    if (r->tp > 1 && r->ep > 1)
        ok = ok && mfu__appendf(buf, n, " (TP %lld, EP %lld)", (long long)r->tp, (long long)r->ep);
    else if (r->tp > 1)
        ok = ok && mfu__appendf(buf, n, " (TP %lld)", (long long)r->tp);
    else if (r->ep > 1)
        ok = ok && mfu__appendf(buf, n, " (EP %lld)", (long long)r->ep);
    if (k == 0) {
        ok = ok && mfu__appendf(buf, n, " the main matrix products are compute-bound");
    } else {
        ok = ok && mfu__appendf(buf, n, " the ");
        for (int i = 0; i < k; i++)
            ok = ok && mfu__appendf(buf, n, "%s%s",
                                    i == 0       ? ""
                                    : i == k - 1 ? " and "
                                                 : ", ",
                                    group_words((mfu_roofline_group)order[i]));
        ok = ok && mfu__appendf(buf, n, " products are memory-bound");
    }
    /* a ceiling near 100 % tells nothing as a number ("at most 99 %"): say what it means */
    if (r->ceiling >= ROOFLINE_NO_LIMIT)
        return ok && mfu__appendf(buf, n,
                                  k == 0 ? ": their shapes do not limit MFU"
                                         : ", yet the shapes allow MFU above %.0f %%",
                                  100 * ROOFLINE_NO_LIMIT);
    char pct[32];
    fmt_pct(pct, sizeof pct, r->ceiling);
    ok = ok && mfu__appendf(buf, n,
                            "; expect MFU at most %s (a roofline ceiling, not a "
                            "prediction)",
                            pct);
    return ok;
}

mfu_status mfu_roofline_finding(const mfu_roofline *r, double warn_below, int64_t first_step,
                                int64_t last_step, mfu_finding *out, mfu_error *err)
{
    if (out)
        memset(out, 0, sizeof *out);
    if (!r || !out)
        return mfu__fail(err, MFU_E_INVALID, 0, "mfu_roofline_finding: NULL argument");
    if (!(warn_below >= 0 && warn_below <= 1))
        return mfu__fail_field(err, MFU_E_INVALID, "warn_below",
                               "the warning threshold must be a fraction in [0, 1] (e.g. "
                               "MFU_ROOFLINE_WARN_BELOW = 0.60)");
    mfu__strlcpy(out->kind, "roofline", sizeof out->kind);
    out->severity = r->ceiling < warn_below ? MFU_SEV_WARNING : MFU_SEV_INFO;
    out->first_step = first_step;
    out->last_step = last_step;
    mfu_roofline_sentence(r, out->summary, sizeof out->summary);
    if (r->memory_bound_share > 0)
        snprintf(out->next_step, sizeof out->next_step,
                 "raise the tokens per product (micro-batch × sequence, fewer TP ranks, more EP "
                 "ranks) until the memory-bound products pass the ridge point of %.0f FLOP/byte",
                 r->ridge_flops_per_byte);
    else
        snprintf(out->next_step, sizeof out->next_step,
                 "the matrix shapes allow this MFU: look for the loss outside the products "
                 "(communication, stalls, non-matmul kernels)");
    mfu__evidence(out, "ceiling_fraction", r->ceiling);
    mfu__evidence(out, "ridge_flops_per_byte", r->ridge_flops_per_byte);
    mfu__evidence(out, "memory_bound_share", r->memory_bound_share);
    mfu__evidence(out, "micro_batch", (double)r->micro_batch);
    mfu__evidence(out, "seq_tokens", (double)r->seq);
    mfu__evidence(out, "tp", (double)r->tp);
    mfu__evidence(out, "ep", (double)r->ep);
    mfu__evidence(out, "tokens_per_expert", r->tokens_per_expert);
    return MFU_OK;
}
