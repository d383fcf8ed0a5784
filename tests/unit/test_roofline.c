/*
 * test_roofline.c - the roofline view (src/analysis/roofline.c): shapes, FLOPs, bytes and
 * intensity of a small model computed by hand; the GEMM bounds on the H100 SXM table entry;
 * agreement with the exact convention's FLOPs; how the ceiling moves with the micro-batch,
 * the sequence, TP and the number of experts; the finding; bad input.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "mfu/roofline.h"
#include "synth.h"

static bool close_rel(double got, double want, double rel)
{
    return fabs(got - want) <= rel * fabs(want);
}

#define ASSERT_NEAR(got, want, rel)                                                                \
    do {                                                                                           \
        double g_ = (got), w_ = (want);                                                            \
        if (!close_rel(g_, w_, rel))                                                               \
            fail_msg("%s = %.12g, want %.12g", #got, g_, w_);                                      \
    } while (0)

/* 2 layers, hidden 64, 4 query heads of 16 sharing 2 key/value heads, plain MLP 256, vocab
 * 1000; sequence 32, micro-batch 2 (64 tokens); 2-byte operands on a device with a ridge
 * point of 100 FLOP/byte. */
static mfu_arch small_arch(void)
{
    mfu_arch a;
    memset(&a, 0, sizeof a);
    a.layers = 2;
    a.hidden = 64;
    a.heads = 4;
    a.kv_heads = 2;
    a.head_dim = 16;
    a.ffn = 256;
    a.vocab = 1000;
    return a;
}

static mfu_roofline_config small_cfg(void)
{
    mfu_roofline_config c;
    mfu_roofline_config_init(&c);
    c.micro_batch = 2;
    c.peak_flops_per_s = 100e12;
    c.memory_bandwidth_bytes_per_s = 1e12;
    return c;
}

static const mfu_roofline_product *find(const mfu_roofline *r, const char *name,
                                        mfu_roofline_pass pass)
{
    for (size_t i = 0; i < r->nproducts; i++)
        if (strcmp(r->products[i].name, name) == 0 && r->products[i].pass == pass)
            return &r->products[i];
    fail_msg("no product %s/%s", name, mfu_roofline_pass_name(pass));
    return NULL;
}

static void assert_shape(const mfu_roofline_product *p, double m, double n, double k)
{
    if (p->m != m || p->n != n || p->k != k)
        fail_msg("%s/%s is %gx%gx%g, want %gx%gx%g", p->name, mfu_roofline_pass_name(p->pass), p->m,
                 p->n, p->k, m, n, k);
}

static mfu_roofline rl; /* large: kept off the stack of each test */

static void compute_ok(const mfu_arch *a, const mfu_workload *wl, const mfu_roofline_config *c)
{
    mfu_error err = {0};
    if (mfu_roofline_compute(a, wl, c, &rl, &err) != MFU_OK)
        fail_msg("mfu_roofline_compute: %s", err.message);
}

/* Every figure of the small model, computed by hand. */
static void hand_computed_small_model(void **state)
{
    (void)state;
    mfu_arch a = small_arch();
    mfu_workload wl = {.seq = 32};
    mfu_roofline_config c = small_cfg();
    compute_ok(&a, &wl, &c);
    assert_true(rl.tokens == 64);
    assert_true(rl.ridge_flops_per_byte == 100);
    assert_true(rl.bytes_per_element == 2);
    /* 4 projections + scores + values + up + down + logits, 3 passes each */
    assert_int_equal(rl.nproducts, 27);

    /* attn.q: 64 tokens x 64 -> 64, twice (2 layers): 2*64^3*2 FLOPs; bytes 2 * 3 * 64^2 * 2 */
    const mfu_roofline_product *q = find(&rl, "attn.q", MFU_RL_FWD);
    assert_shape(q, 64, 64, 64);
    assert_true(q->count == 2);
    assert_true(q->flops == 1048576);
    assert_true(q->bytes == 49152);
    ASSERT_NEAR(q->intensity_flops_per_byte, 64.0 / 3, 1e-12);
    assert_true(q->memory_bound);
    ASSERT_NEAR(q->attainable_flops_per_s, 64.0 / 3 * 1e12, 1e-12);
    ASSERT_NEAR(q->time_s, 1048576 / (64.0 / 3 * 1e12), 1e-12);

    /* attn.k: 2 key/value heads of 16 = 32 outputs; dgrad and wgrad transpose the shape and
     * touch the same three matrices, so their bytes and intensity equal the forward's */
    const mfu_roofline_product *k = find(&rl, "attn.k", MFU_RL_FWD);
    assert_shape(k, 64, 32, 64);
    assert_true(k->flops == 524288);
    assert_true(k->bytes == 2 * 2 * (64 * 64 + 64 * 32 + 64 * 32));
    ASSERT_NEAR(k->intensity_flops_per_byte, 16, 1e-12);
    const mfu_roofline_product *kd = find(&rl, "attn.k", MFU_RL_DGRAD);
    const mfu_roofline_product *kw = find(&rl, "attn.k", MFU_RL_WGRAD);
    assert_shape(kd, 64, 64, 32);
    assert_shape(kw, 64, 32, 64);
    assert_true(kd->flops == k->flops && kw->flops == k->flops);
    assert_true(kd->bytes == k->bytes && kw->bytes == k->bytes);
    assert_shape(find(&rl, "attn.o", MFU_RL_FWD), 64, 64, 64);

    /* scores per (sequence, head): 32x32x16, 2 layers x 2 sequences x 4 heads = 16 runs, half
     * the matrix computed (causal); fused: Q (32x16) read, K (32x16) read once per 2 heads,
     * the scores stay on chip */
    const mfu_roofline_product *s = find(&rl, "attn.scores", MFU_RL_FWD);
    assert_shape(s, 32, 32, 16);
    assert_true(s->count == 16);
    assert_true(s->mask_fraction == 0.5);
    assert_true(s->flops == 2.0 * 32 * 32 * 16 * 0.5 * 16);
    assert_true(s->bytes == 2 * (512 + 256) * 16);
    ASSERT_NEAR(s->intensity_flops_per_byte, 262144.0 / 24576, 1e-12);
    const mfu_roofline_product *v = find(&rl, "attn.values", MFU_RL_FWD);
    assert_shape(v, 32, 16, 32);
    assert_true(v->flops == s->flops);
    assert_true(v->bytes == 2 * (256 + 512) * 16); /* V per group read, O written */
    assert_shape(find(&rl, "attn.scores", MFU_RL_DGRAD), 32, 16, 32); /* dQ = dS K */
    assert_shape(find(&rl, "attn.scores", MFU_RL_WGRAD), 16, 32, 32); /* dK^T = Q^T dS */

    /* plain MLP: up 64x256x64, down 64x64x256 */
    const mfu_roofline_product *up = find(&rl, "mlp.up", MFU_RL_FWD);
    assert_shape(up, 64, 256, 64);
    assert_true(up->flops == 4194304);
    assert_true(up->bytes == 147456);
    ASSERT_NEAR(up->intensity_flops_per_byte, 4194304.0 / 147456, 1e-12);
    assert_shape(find(&rl, "mlp.down", MFU_RL_FWD), 64, 64, 256);
    assert_shape(find(&rl, "mlp.down", MFU_RL_WGRAD), 256, 64, 64);

    /* logits: 64x1000x64 once */
    const mfu_roofline_product *lg = find(&rl, "logits", MFU_RL_FWD);
    assert_shape(lg, 64, 1000, 64);
    assert_true(lg->count == 1);
    assert_true(lg->flops == 8192000);
    assert_true(lg->bytes == 2 * (4096 + 64000 + 64000));

    /* Totals: every product's time adds; the ceiling is the FLOP-weighted harmonic mean of
     * the attainable fractions, all below 1 here (everything is memory-bound). */
    double flops = 0, time = 0, harm = 0;
    for (size_t i = 0; i < rl.nproducts; i++) {
        const mfu_roofline_product *p = &rl.products[i];
        assert_true(p->memory_bound);
        flops += p->flops;
        time += p->time_s;
        harm += p->flops_share / (p->attainable_flops_per_s / c.peak_flops_per_s);
    }
    ASSERT_NEAR(rl.flops, flops, 1e-12);
    ASSERT_NEAR(rl.time_s, time, 1e-12);
    ASSERT_NEAR(rl.ceiling, flops / (c.peak_flops_per_s * time), 1e-12);
    ASSERT_NEAR(rl.ceiling, 1 / harm, 1e-12);
    assert_true(rl.memory_bound_share == 1);
    assert_true(rl.ceiling < 0.32 && rl.ceiling > 0.10); /* every AI between 10.7 and 31 */
}

/* Unfused attention writes and reads the masked score matrix; the fp32 weight gradient reads
 * and writes a 4-byte accumulator: only the wgrad of weights changes. */
static void byte_model_options(void **state)
{
    (void)state;
    mfu_arch a = small_arch();
    mfu_workload wl = {.seq = 32};
    mfu_roofline_config c = small_cfg();
    c.unfused_attention = true;
    c.fp32_weight_grad = true;
    compute_ok(&a, &wl, &c);
    const mfu_roofline_product *s = find(&rl, "attn.scores", MFU_RL_FWD);
    assert_true(s->bytes == 2 * (512 + 256 + 32 * 32 * 0.5) * 16);
    const mfu_roofline_product *v = find(&rl, "attn.values", MFU_RL_DGRAD);
    assert_true(v->bytes == 2 * (512 + 256 + 512) * 16); /* dP written (masked), V, dO */
    /* attn.q wgrad: X and dY at 2 bytes, the 64x64 fp32 gradient read and written */
    const mfu_roofline_product *qw = find(&rl, "attn.q", MFU_RL_WGRAD);
    assert_true(qw->bytes == (2.0 * (4096 + 4096) + 8.0 * 4096) * 2);
    assert_true(qw->intensity_flops_per_byte <
                find(&rl, "attn.q", MFU_RL_FWD)->intensity_flops_per_byte);
    assert_true(find(&rl, "attn.q", MFU_RL_DGRAD)->bytes == 49152);
    /* the attention core has no weight: its wgrad (dK, dV) is not an fp32 accumulator */
    assert_true(find(&rl, "attn.scores", MFU_RL_WGRAD)->bytes == s->bytes);
}

/* A square 8192 GEMM is compute-bound on H100 SXM bf16; one token through a 4096x4096 weight
 * is memory-bound at about 1 FLOP/byte; the ridge point is 989.5e12 / 3.35e12. */
static void gemm_bounds_on_h100(void **state)
{
    (void)state;
    const mfu_device_info *h100 = NULL;
    assert_int_equal(mfu_device_find("h100-sxm", &h100, NULL), MFU_OK);
    mfu_roofline_config c;
    mfu_roofline_config_init(&c);
    assert_int_equal(mfu_roofline_config_set_device(&c, h100, NULL), MFU_OK);
    assert_true(c.peak_flops_per_s == 989.5e12);
    assert_true(c.memory_bandwidth_bytes_per_s == 3.35e12);
    ASSERT_NEAR(c.peak_flops_per_s / c.memory_bandwidth_bytes_per_s, 295.373, 1e-5);

    mfu_roofline_product p;
    assert_int_equal(mfu_roofline_gemm(&c, 8192, 8192, 8192, &p, NULL), MFU_OK);
    ASSERT_NEAR(p.intensity_flops_per_byte, 8192.0 / 3, 1e-12);
    assert_false(p.memory_bound);
    assert_true(p.attainable_flops_per_s == 989.5e12);

    assert_int_equal(mfu_roofline_gemm(&c, 1, 4096, 4096, &p, NULL), MFU_OK);
    double ai = 2.0 * 4096 * 4096 / (2.0 * (4096 + 4096.0 * 4096 + 4096));
    ASSERT_NEAR(p.intensity_flops_per_byte, ai, 1e-12);
    assert_true(p.intensity_flops_per_byte < 1);
    assert_true(p.memory_bound);
    ASSERT_NEAR(p.attainable_flops_per_s, ai * 3.35e12, 1e-12);

    /* fp8 halves the bytes and doubles the peak: the same ridge, twice the intensity */
    c.dtype = MFU_DTYPE_FP8;
    assert_int_equal(mfu_roofline_config_set_device(&c, h100, NULL), MFU_OK);
    assert_true(c.peak_flops_per_s == 1979e12);
    assert_int_equal(mfu_roofline_gemm(&c, 1, 4096, 4096, &p, NULL), MFU_OK);
    ASSERT_NEAR(p.intensity_flops_per_byte, 2 * ai, 1e-12);

    /* A device with no figure for the dtype is refused, naming what it has. */
    const mfu_device_info *a100 = NULL;
    assert_int_equal(mfu_device_find("a100-sxm4-80gb", &a100, NULL), MFU_OK);
    mfu_error err = {0};
    assert_int_equal(mfu_roofline_config_set_device(&c, a100, &err), MFU_E_UNSUPPORTED);
    assert_true(c.peak_flops_per_s == 1979e12); /* unchanged */
}

/* With tp = ep = 1 the products are the exact convention's: forward FLOPs per token, model
 * FLOPs (x3) and hardware FLOPs (recomputation) agree for dense, GQA, MLA, MoE, windowed and
 * packed workloads. */
static void agrees_with_exact_convention(void **state)
{
    (void)state;
    static const char *const models[] = {
        "llama3-8b", "deepseek-v2-lite", "mixtral-8x7b", "gemma3-27b", "gpt2", "qwen3-30b-a3b"};
    const int64_t docs[] = {100, 900, 24, 1000};
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
        mfu_arch a;
        assert_int_equal(mfu_preset_find(models[i], &a, NULL), MFU_OK);
        for (int variant = 0; variant < 3; variant++) {
            mfu_workload wl = {.seq = 1024};
            if (variant == 1) {
                wl.recompute = MFU_RECOMPUTE_SELECTIVE;
                wl.mean_doc_len = 300;
            } else if (variant == 2) {
                wl.recompute = MFU_RECOMPUTE_FULL;
                wl.doc_lengths = docs;
                wl.doc_count = 4;
            }
            mfu_roofline_config c = small_cfg();
            c.micro_batch = 3;
            compute_ok(&a, &wl, &c);
            mfu_flops f;
            assert_int_equal(mfu_flops_compute(&a, &wl, NULL, &f, NULL), MFU_OK);
            double fwd = 0;
            for (size_t j = 0; j < rl.nproducts; j++)
                if (rl.products[j].pass == MFU_RL_FWD)
                    fwd += rl.products[j].flops;
            ASSERT_NEAR(fwd / rl.tokens, f.forward_flops, 1e-12);
            ASSERT_NEAR(rl.flops / rl.tokens, f.model_flops, 1e-12);
            ASSERT_NEAR((rl.flops + rl.recompute_flops) / rl.tokens, f.hardware_flops, 1e-12);
        }
    }
}

/* TP splits the head, FFN and vocabulary dimensions: with tp dividing everything the
 * per-device FLOPs are the whole / tp, and the shapes are the column/row-parallel ones. */
static void tensor_parallel_shapes(void **state)
{
    (void)state;
    mfu_arch a;
    assert_int_equal(mfu_preset_find("llama3-8b", &a, NULL), MFU_OK);
    mfu_workload wl = {.seq = 2048};
    mfu_roofline_config c = small_cfg();
    c.micro_batch = 1;
    compute_ok(&a, &wl, &c);
    double whole = rl.flops;
    c.tp = 8;
    compute_ok(&a, &wl, &c);
    ASSERT_NEAR(rl.flops, whole / 8, 1e-12);
    assert_shape(find(&rl, "attn.q", MFU_RL_FWD), 2048, 4 * 128, 4096); /* 32/8 heads */
    assert_shape(find(&rl, "attn.k", MFU_RL_FWD), 2048, 1 * 128, 4096); /* 8/8 kv heads */
    assert_shape(find(&rl, "attn.o", MFU_RL_FWD), 2048, 4096, 4 * 128); /* row parallel */
    assert_shape(find(&rl, "mlp.gate", MFU_RL_FWD), 2048, 14336 / 8, 4096);
    assert_shape(find(&rl, "mlp.down", MFU_RL_FWD), 2048, 4096, 14336 / 8);
    assert_shape(find(&rl, "logits", MFU_RL_FWD), 2048, 128256 / 8, 4096);
    assert_true(find(&rl, "attn.scores", MFU_RL_FWD)->count == 32 * 1 * 4);

    /* fused projections (Megatron-LM's linear_qkv, linear_fc1): the same FLOPs in fewer,
     * wider GEMMs; at TP 8 the 128-wide K (AI 2^31 / 18350080 = 117.0, below H100's 295)
     * becomes part of a 768-wide QKV */
    ASSERT_NEAR(find(&rl, "attn.k", MFU_RL_FWD)->intensity_flops_per_byte, 2147483648.0 / 18350080,
                1e-12);
    double split_flops = rl.flops;
    c.fused_projections = true;
    compute_ok(&a, &wl, &c);
    ASSERT_NEAR(rl.flops, split_flops, 1e-12);
    assert_shape(find(&rl, "attn.qkv", MFU_RL_FWD), 2048, (4 + 2) * 128, 4096);
    assert_shape(find(&rl, "mlp.up_gate", MFU_RL_FWD), 2048, 2 * 14336 / 8, 4096);
    assert_int_equal(rl.nproducts, 3 * 7); /* qkv, o, scores, values, up_gate, down, logits */
    assert_true(find(&rl, "attn.qkv", MFU_RL_FWD)->intensity_flops_per_byte > 400);
    c.fused_projections = false;

    /* tp 16 > 8 kv heads: each key/value head is replicated on 2 ranks */
    c.tp = 16;
    compute_ok(&a, &wl, &c);
    assert_shape(find(&rl, "attn.k", MFU_RL_FWD), 2048, 128, 4096);
    assert_shape(find(&rl, "attn.q", MFU_RL_FWD), 2048, 2 * 128, 4096);

    /* MLA's down-projections are replicated on every TP rank */
    mfu_arch ds;
    assert_int_equal(mfu_preset_find("deepseek-v3", &ds, NULL), MFU_OK);
    c.tp = 8;
    compute_ok(&ds, &wl, &c);
    assert_shape(find(&rl, "mla.q_down", MFU_RL_FWD), 2048, 1536, 7168);
    assert_shape(find(&rl, "mla.kv_down", MFU_RL_FWD), 2048, 512 + 64, 7168);
    assert_shape(find(&rl, "mla.q_up", MFU_RL_FWD), 2048, 16 * (128 + 64), 1536);
    assert_shape(find(&rl, "mla.kv_up", MFU_RL_FWD), 2048, 16 * (128 + 128), 512);
    assert_shape(find(&rl, "attn.o", MFU_RL_FWD), 2048, 7168, 16 * 128);
}

/* The ceiling rises with micro-batch x sequence and falls with TP. */
static void ceiling_moves_with_shape(void **state)
{
    (void)state;
    const mfu_device_info *h100 = NULL;
    assert_int_equal(mfu_device_find("h100-sxm", &h100, NULL), MFU_OK);
    mfu_arch a;
    assert_int_equal(mfu_preset_find("llama3-8b", &a, NULL), MFU_OK);
    mfu_roofline_config c;
    mfu_roofline_config_init(&c);
    assert_int_equal(mfu_roofline_config_set_device(&c, h100, NULL), MFU_OK);

    /* a grid of micro-batch x sequence: the ceiling rises along both */
    const int64_t seqs[] = {16, 32, 64, 128};
    double grid[3][4];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 4; j++) {
            mfu_workload wl = {.seq = seqs[j]};
            c.micro_batch = (int64_t)1 << i;
            compute_ok(&a, &wl, &c);
            grid[i][j] = rl.ceiling;
            assert_true(rl.ceiling > 0 && rl.ceiling < 1);
            if (i > 0)
                assert_true(grid[i][j] > grid[i - 1][j]);
            if (j > 0)
                assert_true(grid[i][j] > grid[i][j - 1]);
        }
    /* the same tokens split differently give the same projections: 4 x 64 = 1 x 256 tokens
     * in every product but the attention core, so only the core differs */
    mfu_workload w64 = {.seq = 64}, w256 = {.seq = 256};
    c.micro_batch = 4;
    compute_ok(&a, &w64, &c);
    double c_4x64 = rl.ceiling;
    c.micro_batch = 1;
    compute_ok(&a, &w256, &c);
    assert_true(rl.ceiling > c_4x64); /* longer sequences also feed the attention core */

    /* one token: every product is memory-bound and the ceiling is tiny */
    mfu_workload w1 = {.seq = 1};
    compute_ok(&a, &w1, &c);
    assert_true(rl.memory_bound_share == 1);
    assert_true(rl.ceiling < 0.01);

    /* TP at a fixed micro-batch: each rank's products shrink, the ceiling falls */
    mfu_workload w = {.seq = 256};
    c.micro_batch = 1;
    double prev = 2;
    for (int64_t tp = 1; tp <= 8; tp *= 2) {
        c.tp = tp;
        compute_ok(&a, &w, &c);
        assert_true(rl.ceiling < prev);
        prev = rl.ceiling;
    }
}

/* At a fixed top-k and token count, more experts means fewer tokens per expert: the expert
 * products lose intensity until they are memory-bound; EP gathers the tokens back. */
static void experts_grow_memory_bound(void **state)
{
    (void)state;
    mfu_arch a = small_arch();
    a.hidden = 2048;
    a.heads = 16;
    a.kv_heads = 4;
    a.head_dim = 128;
    a.ffn = 1024;
    a.gated_mlp = MFU_FLAG_YES;
    a.vocab = 32000;
    a.experts_per_token = 2;
    mfu_workload wl = {.seq = 4096};
    mfu_roofline_config c = small_cfg();
    c.micro_batch = 1;
    c.peak_flops_per_s = 989.5e12;
    c.memory_bandwidth_bytes_per_s = 3.35e12;
    double prev_ai = INFINITY, prev_ceiling = 2, first_ceiling = 0;
    bool saw_compute = false, saw_memory = false;
    for (int64_t e = 4; e <= 256; e *= 2) {
        a.experts = e;
        compute_ok(&a, &wl, &c);
        ASSERT_NEAR(rl.tokens_per_expert, 4096.0 * 2 / (double)e, 1e-12);
        const mfu_roofline_product *up = find(&rl, "moe.expert.up", MFU_RL_FWD);
        assert_true(up->m == rl.tokens_per_expert);
        assert_true(up->count == 2.0 * (double)e);
        assert_true(up->intensity_flops_per_byte < prev_ai);
        /* once the experts are memory-bound every doubling lowers the ceiling (before that,
         * the router's growing N can lift it by a hair: 0.99077 -> 0.99087 from 4 to 8) */
        if (saw_memory)
            assert_true(rl.ceiling < prev_ceiling);
        if (e == 4)
            first_ceiling = rl.ceiling;
        prev_ai = up->intensity_flops_per_byte;
        prev_ceiling = rl.ceiling;
        saw_compute |= !up->memory_bound;
        saw_memory |= up->memory_bound;
    }
    assert_true(saw_compute && saw_memory);
    assert_true(prev_ceiling < 0.5 * first_ceiling);
    /* 256 experts: 32 tokens each; EP 8 brings 8 devices' tokens, 256 per expert, 32 experts
     * per device: the same FLOPs per device, higher intensity */
    double flops = rl.flops, ai = prev_ai;
    c.ep = 8;
    compute_ok(&a, &wl, &c);
    assert_true(rl.tokens_per_expert == 256);
    const mfu_roofline_product *up = find(&rl, "moe.expert.up", MFU_RL_FWD);
    assert_true(up->count == 2.0 * 32);
    ASSERT_NEAR(rl.flops, flops, 1e-12);
    assert_true(up->intensity_flops_per_byte > ai);
}

/* The sentence and the finding. */
static void finding_and_sentence(void **state)
{
    (void)state;
    mfu_arch a = small_arch();
    mfu_workload wl = {.seq = 32};
    mfu_roofline_config c = small_cfg();
    compute_ok(&a, &wl, &c);
    char buf[MFU_FINDING_TEXT_MAX];
    assert_true(mfu_roofline_sentence(&rl, buf, sizeof buf));
    /* MLP holds the most FLOPs, then logits, then the projections; at most three named */
    char want[MFU_FINDING_TEXT_MAX];
    char pct[16];
    snprintf(pct, sizeof pct, "%.0f %%", 100 * rl.ceiling);
    snprintf(want, sizeof want,
             "at micro-batch 2 × 32 tokens the MLP, logit and attention projection products are "
             "memory-bound; expect MFU at most %s (a roofline ceiling, not a prediction)",
             pct);
    assert_string_equal(buf, want);
    char tiny[20];
    assert_false(mfu_roofline_sentence(&rl, tiny, sizeof tiny));
    assert_int_equal(strlen(tiny), sizeof tiny - 1);
    assert_false(mfu_roofline_sentence(NULL, buf, sizeof buf));

    mfu_finding f;
    mfu_error err = {0};
    assert_int_equal(mfu_roofline_finding(&rl, MFU_ROOFLINE_WARN_BELOW, 10, 500, &f, &err), MFU_OK);
    assert_string_equal(f.kind, "roofline");
    assert_int_equal(f.severity, MFU_SEV_WARNING);
    assert_string_equal(f.summary, want);
    assert_non_null(strstr(f.next_step, "ridge point of 100 FLOP/byte"));
    assert_true(f.first_step == 10 && f.last_step == 500);
    assert_int_equal(f.nevidence, 8);
    assert_true(syn_evidence(&f, "ceiling_fraction") == rl.ceiling);
    assert_true(syn_evidence(&f, "ridge_flops_per_byte") == 100);
    assert_true(syn_evidence(&f, "micro_batch") == 2);
    assert_true(syn_evidence(&f, "seq_tokens") == 32);
    assert_true(syn_evidence(&f, "tokens_per_expert") == 0);
    /* below the threshold it is a warning, above it information */
    assert_int_equal(mfu_roofline_finding(&rl, rl.ceiling, 0, 0, &f, NULL), MFU_OK);
    assert_int_equal(f.severity, MFU_SEV_INFO);
    assert_int_equal(mfu_roofline_finding(&rl, 1.5, 0, 0, &f, &err), MFU_E_INVALID);
    assert_string_equal(err.field, "warn_below");
    assert_int_equal(f.kind[0], 0);

    /* the analysis accepts it as an external finding */
    size_t n = 60;
    double mult[60];
    syn_noise nz = {0.01, 0, 0, 1, 1, NULL, 0};
    syn_multipliers(7, n, &nz, mult);
    syn_phase ph = syn_default_phase(0, 0.40);
    mfu_series *s = syn_series(n, 1, &ph, 1, mult, NULL);
    mfu_analysis_options o;
    mfu_analysis_options_init(&o);
    o.intervals = false;
    mfu_analysis *an = NULL;
    assert_int_equal(mfu_analyze(s, &o, &an, NULL), MFU_OK);
    assert_int_equal(mfu_roofline_finding(&rl, MFU_ROOFLINE_WARN_BELOW, 1, 60, &f, NULL), MFU_OK);
    size_t before = mfu_analysis_finding_count(an);
    assert_int_equal(mfu_analysis_add_finding(an, &f, &err), MFU_OK);
    assert_int_equal(mfu_analysis_finding_count(an), before + 1);
    assert_string_equal(mfu_analysis_finding(an, before)->kind, "roofline");
    mfu_analysis_free(an);
    mfu_series_free(s);

    /* compute-bound everywhere: said so, and the next step looks elsewhere */
    c.peak_flops_per_s = 1e12; /* ridge 1 FLOP/byte */
    c.tp = 2;
    compute_ok(&a, &wl, &c);
    assert_true(rl.ceiling == 1);
    assert_true(mfu_roofline_sentence(&rl, buf, sizeof buf));
    assert_string_equal(buf, "at micro-batch 2 × 32 tokens (TP 2) the main matrix products are "
                             "compute-bound: their shapes do not limit MFU");
    assert_int_equal(mfu_roofline_finding(&rl, MFU_ROOFLINE_WARN_BELOW, 0, 0, &f, NULL), MFU_OK);
    assert_int_equal(f.severity, MFU_SEV_INFO);
    assert_non_null(strstr(f.next_step, "outside the products"));
}

/* Recomputation adds the time of the re-run forward products: full recompute of a
 * compute-bound step lowers the ceiling to about 3/4. */
static void recompute_lowers_the_ceiling(void **state)
{
    (void)state;
    mfu_arch a = small_arch();
    mfu_workload wl = {.seq = 32, .recompute = MFU_RECOMPUTE_FULL};
    mfu_roofline_config c = small_cfg();
    c.peak_flops_per_s = 1e12;
    compute_ok(&a, &wl, &c);
    double logits_fwd = find(&rl, "logits", MFU_RL_FWD)->flops;
    double fwd = rl.flops / 3;
    ASSERT_NEAR(rl.recompute_flops, fwd - logits_fwd, 1e-12);
    ASSERT_NEAR(rl.ceiling, rl.flops / (rl.flops + fwd - logits_fwd), 1e-12);
    assert_false(find(&rl, "logits", MFU_RL_FWD)->recomputed);
    assert_true(find(&rl, "mlp.up", MFU_RL_FWD)->recomputed);
    assert_false(find(&rl, "mlp.up", MFU_RL_DGRAD)->recomputed);
    wl.recompute = MFU_RECOMPUTE_SELECTIVE;
    compute_ok(&a, &wl, &c);
    assert_false(find(&rl, "mlp.up", MFU_RL_FWD)->recomputed);
    assert_true(find(&rl, "attn.values", MFU_RL_FWD)->recomputed);
    ASSERT_NEAR(rl.recompute_flops, 2 * find(&rl, "attn.scores", MFU_RL_FWD)->flops, 1e-12);
}

/* Sliding-window layers get their own core products with the window's share. */
static void window_layers(void **state)
{
    (void)state;
    mfu_arch a = small_arch();
    a.window = 8;
    a.global_every = 2; /* layer 1 windowed, layer 2 global */
    mfu_workload wl = {.seq = 32};
    mfu_roofline_config c = small_cfg();
    compute_ok(&a, &wl, &c);
    const mfu_roofline_product *g = find(&rl, "attn.scores", MFU_RL_FWD);
    const mfu_roofline_product *w = find(&rl, "attn.scores.window", MFU_RL_FWD);
    assert_true(g->count == 8 && w->count == 8);
    assert_true(g->mask_fraction == 0.5);
    /* band: 32 x 8 - 8^2/2 = 224 of 1024 */
    assert_true(w->mask_fraction == 224.0 / 1024);
    assert_true(w->intensity_flops_per_byte < g->intensity_flops_per_byte);
}

/* Bad input: each refused with the option to fix, *out zeroed. */
static void bad_input(void **state)
{
    (void)state;
    mfu_arch a = small_arch();
    mfu_workload wl = {.seq = 32};
    mfu_roofline_config c = small_cfg();
    mfu_error err = {0};

    mfu_roofline_config b = c;
    b.micro_batch = 0;
    assert_int_equal(mfu_roofline_compute(&a, &wl, &b, &rl, &err), MFU_E_INVALID);
    assert_string_equal(err.field, "--micro-batch");
    assert_int_equal(rl.nproducts, 0);
    b = c;
    b.micro_batch = MFU_DIM_MAX + 1;
    assert_int_equal(mfu_roofline_compute(&a, &wl, &b, &rl, &err), MFU_E_RANGE);
    assert_string_equal(err.field, "--micro-batch");
    b = c;
    b.tp = 3; /* 4 heads */
    assert_int_equal(mfu_roofline_compute(&a, &wl, &b, &rl, &err), MFU_E_INVALID);
    assert_string_equal(err.field, "--tp");
    assert_non_null(strstr(err.message, "--heads"));
    b = c;
    b.tp = -2;
    assert_int_equal(mfu_roofline_compute(&a, &wl, &b, &rl, &err), MFU_E_INVALID);
    assert_string_equal(err.field, "--tp");
    {
        mfu_arch g = a; /* 12 heads, 4 kv heads, tp 6: 6 does not divide 4 nor 4 6 */
        g.heads = 12;
        g.kv_heads = 4;
        g.hidden = 192;
        b = c;
        b.tp = 6;
        assert_int_equal(mfu_roofline_compute(&g, &wl, &b, &rl, &err), MFU_E_INVALID);
        assert_string_equal(err.field, "--tp");
    }
    b = c;
    b.ep = 2; /* dense model */
    assert_int_equal(mfu_roofline_compute(&a, &wl, &b, &rl, &err), MFU_E_INVALID);
    assert_string_equal(err.field, "--ep");
    b = c;
    b.etp = 2;
    assert_int_equal(mfu_roofline_compute(&a, &wl, &b, &rl, &err), MFU_E_INVALID);
    assert_string_equal(err.field, "--etp");
    {
        mfu_arch m = a;
        m.experts = 6;
        m.experts_per_token = 2;
        b = c;
        b.ep = 4;
        assert_int_equal(mfu_roofline_compute(&m, &wl, &b, &rl, &err), MFU_E_INVALID);
        assert_string_equal(err.field, "--ep");
        assert_non_null(strstr(err.message, "--experts"));
    }
    b = c;
    b.peak_flops_per_s = 0;
    assert_int_equal(mfu_roofline_compute(&a, &wl, &b, &rl, &err), MFU_E_INVALID);
    assert_string_equal(err.field, "--peak-tflops");
    b = c;
    b.memory_bandwidth_bytes_per_s = NAN;
    assert_int_equal(mfu_roofline_compute(&a, &wl, &b, &rl, &err), MFU_E_INVALID);
    assert_string_equal(err.field, "--bandwidth-tbs");
    b = c;
    b.memory_bandwidth_bytes_per_s = INFINITY;
    assert_int_equal(mfu_roofline_compute(&a, &wl, &b, &rl, &err), MFU_E_INVALID);
    b = c;
    b.dtype = (mfu_dtype)99;
    assert_int_equal(mfu_roofline_compute(&a, &wl, &b, &rl, &err), MFU_E_INVALID);
    assert_string_equal(err.field, "--dtype");
    /* the model's own errors, naming the model flag */
    {
        mfu_arch m = a;
        m.vocab = 0;
        assert_int_equal(mfu_roofline_compute(&m, &wl, &c, &rl, &err), MFU_E_MISSING);
        assert_string_equal(err.field, "--vocab");
        mfu_workload w0 = {.seq = 0};
        assert_int_equal(mfu_roofline_compute(&a, &w0, &c, &rl, &err), MFU_E_MISSING);
        assert_string_equal(err.field, "--seq");
    }
    assert_int_equal(mfu_roofline_compute(NULL, &wl, &c, &rl, &err), MFU_E_INVALID);
    assert_int_equal(mfu_roofline_compute(&a, &wl, NULL, &rl, &err), MFU_E_INVALID);
    assert_int_equal(mfu_roofline_compute(&a, &wl, &c, NULL, &err), MFU_E_INVALID);

    mfu_roofline_product p;
    assert_int_equal(mfu_roofline_gemm(&c, 0, 1, 1, &p, &err), MFU_E_INVALID);
    assert_string_equal(err.field, "shape");
    assert_int_equal(mfu_roofline_gemm(&c, 1, NAN, 1, &p, &err), MFU_E_INVALID);
    assert_int_equal(mfu_roofline_gemm(&c, 1, 1, INFINITY, &p, &err), MFU_E_INVALID);
    assert_true(p.flops == 0);
    assert_int_equal(mfu_roofline_config_set_device(&c, NULL, &err), MFU_E_INVALID);

    assert_true(mfu_roofline_dtype_bytes(MFU_DTYPE_BF16) == 2);
    assert_true(mfu_roofline_dtype_bytes(MFU_DTYPE_FP8) == 1);
    assert_true(mfu_roofline_dtype_bytes(MFU_DTYPE_TF32) == 4);
    assert_true(mfu_roofline_dtype_bytes((mfu_dtype)-1) == 0);
    assert_string_equal(mfu_roofline_group_name(MFU_RL_EXPERTS), "experts");
    assert_string_equal(mfu_roofline_group_name(MFU_RL_GROUP_COUNT), "?");
    assert_string_equal(mfu_roofline_pass_name(MFU_RL_WGRAD), "wgrad");
    assert_string_equal(mfu_roofline_pass_name((mfu_roofline_pass)7), "?");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hand_computed_small_model),
        cmocka_unit_test(byte_model_options),
        cmocka_unit_test(gemm_bounds_on_h100),
        cmocka_unit_test(agrees_with_exact_convention),
        cmocka_unit_test(tensor_parallel_shapes),
        cmocka_unit_test(ceiling_moves_with_shape),
        cmocka_unit_test(experts_grow_memory_bound),
        cmocka_unit_test(finding_and_sentence),
        cmocka_unit_test(recompute_lowers_the_ceiling),
        cmocka_unit_test(window_layers),
        cmocka_unit_test(bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
