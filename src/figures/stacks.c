/*
 * stacks.c - the framework profiles: for each log format, how that framework computes the
 * figures it prints (its FLOPs convention, its peak table, its quirks), so that the report can
 * recompute "what this framework would have printed" and explain a difference.
 *
 * Every fact below comes from shared/reference/flops-and-peaks.md (FP §n) or
 * shared/reference/log-formats.md (LF §n); the source files they were read from are named
 * there. Peak tables are keyed by mfu's device ids (src/device): each row is what the
 * framework's own table (or name matching) gives for that device, bf16 / fp16 / fp8 dense,
 * in FLOP/s. A device missing from a table is one the framework does not know.
 *
 * Profiles for formats this build may not read yet (hf, deepspeed, neox, maxtext, composer,
 * lightning, axolotl, torchtune) are here too, so they apply as soon as the format exists.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "figures/figures.h"
#include "util/util.h"

#define T12 1e12

/* torchtitan get_peak_flops (FP §3.2): BF16 dense by substring of the device name; anything
 * else (including "NVIDIA L40S": the code tests a lower-case "l40s") falls back to 312e12.
 * "GH200" contains "H200". The table is used whatever the training dtype (FP8 prints N/A). */
static const mfu__peak_row torchtitan_peaks[] = {
    {"a100-sxm4-80gb", 312 * T12, 312 * T12, 0},
    {"a100-sxm4-40gb", 312 * T12, 312 * T12, 0},
    {"a100-pcie-80gb", 312 * T12, 312 * T12, 0},
    {"a100-pcie-40gb", 312 * T12, 312 * T12, 0},
    {"rtx-a6000", 154.85 * T12, 154.85 * T12, 0},
    {"h100-nvl", 835 * T12, 835 * T12, 0},
    {"h100-pcie", 756 * T12, 756 * T12, 0},
    {"h100-sxm", 989 * T12, 989 * T12, 0},
    {"h200-sxm", 989 * T12, 989 * T12, 0},
    {"h200-nvl", 989 * T12, 989 * T12, 0},
    {"gh200", 989 * T12, 989 * T12, 0},
    {"gh200-144gb", 989 * T12, 989 * T12, 0},
    {"h20", 148 * T12, 148 * T12, 0},
    {"gb200", 2500 * T12, 2500 * T12, 0},
    {"gb300", 2500 * T12, 2500 * T12, 0},
    {"b200", 2250 * T12, 2250 * T12, 0},
    {"b300", 2250 * T12, 2250 * T12, 0},
    {"mi355x", 2500 * T12, 2500 * T12, 0},
    {"mi300x", 1300 * T12, 1300 * T12, 0},
    {"mi325x", 1300 * T12, 1300 * T12, 0},
    {"mi250x", 191.5 * T12, 191.5 * T12, 0},
    {"tpu-v4", 275 * T12, 275 * T12, 0},
    {"tpu-v5e", 197 * T12, 197 * T12, 0},
    {"tpu-v5p", 459 * T12, 459 * T12, 0},
    {"tpu-v6e", 918 * T12, 918 * T12, 0},
    {"tpu-v7", 1153.5 * T12, 1153.5 * T12, 0},
};

/* llm.c llmc/mfu.h gpu_db (FP §2.2): exact cudaDeviceProp.name, fp32-accumulate columns scaled
 * by tensor cores and clock. Only "NVIDIA H100 80GB HBM3" and "NVIDIA H100 PCIe" exist for
 * Hopper; V100 has no bf16 column. A device not here makes llm.c print "-100.0% bf16 MFU". */
static const mfu__peak_row llmc_peaks[] = {
    {"v100-sxm2", 0, 125 * T12, 0},
    {"v100-pcie", 0, 125 * T12, 0},
    {"a100-sxm4-80gb", 312 * T12, 312 * T12, 0},
    {"a100-sxm4-40gb", 312 * T12, 312 * T12, 0},
    {"a100-pcie-80gb", 312 * T12, 312 * T12, 0},
    {"a100-pcie-40gb", 312 * T12, 312 * T12, 0},
    {"rtx-a4000", 38.3 * T12, 38.3 * T12, 0},
    {"rtx-a5000", 55.5 * T12, 55.5 * T12, 0},
    {"rtx-a6000", 77.4 * T12, 77.4 * T12, 0},
    {"rtx-3090", 71.2 * T12, 71.2 * T12, 0},
    {"rtx-4090", 165.2 * T12, 165.2 * T12, 0},
    {"h100-pcie", 756 * T12, 756 * T12, 0},
    {"h100-sxm", 988.8 * T12, 988.8 * T12, 0},
};

/* Composer GPU_AVAILABLE_FLOPS (FP §6a): "nvidia publishes spec sheet with a 2x sparsity
 * factor", hence 1.979e15/2; any "h200" is taken as SXM; H100 NVL has no key; an unknown
 * device gets 0 (no MFU). */
static const mfu__peak_row composer_peaks[] = {
    {"h100-sxm", 989.5 * T12, 989.5 * T12, 1979 * T12},
    {"h200-sxm", 989.5 * T12, 989.5 * T12, 1979 * T12},
    {"h200-nvl", 989.5 * T12, 989.5 * T12, 1979 * T12},
    {"gh200", 989.5 * T12, 989.5 * T12, 1979 * T12},
    {"gh200-144gb", 989.5 * T12, 989.5 * T12, 1979 * T12},
    {"h100-pcie", 756.5 * T12, 756.5 * T12, 1513 * T12},
    {"a100-sxm4-80gb", 312 * T12, 312 * T12, 0},
    {"a100-sxm4-40gb", 312 * T12, 312 * T12, 0},
    {"a100-pcie-80gb", 312 * T12, 312 * T12, 0},
    {"a100-pcie-40gb", 312 * T12, 312 * T12, 0},
    {"a10", 125 * T12, 125 * T12, 0},
    {"a10g", 125 * T12, 125 * T12, 0},
    {"v100-sxm2", 0, 125 * T12, 0},
    {"v100-pcie", 0, 112 * T12, 0},
};

/* Lightning _CUDA_FLOPS / _TPU_FLOPS (FP §5.3), after PR #21743: the GeForce and RTX A6000
 * bf16/fp16 entries are the non-tensor-core rates; a plain "NVIDIA H200" matches no key. */
static const mfu__peak_row lightning_peaks[] = {
    {"h100-sxm", 989.5 * T12, 989.5 * T12, 0},
    {"h100-pcie", 756 * T12, 756 * T12, 0},
    {"h100-nvl", 835.5 * T12, 835.5 * T12, 0},
    {"rtx-4090", 82.6 * T12, 82.6 * T12, 0},
    {"rtx-3090", 35.6 * T12, 35.6 * T12, 0},
    {"l4", 121 * T12, 121 * T12, 0},
    {"l40", 181 * T12, 181 * T12, 0},
    {"a100-sxm4-80gb", 312 * T12, 312 * T12, 0},
    {"a100-sxm4-40gb", 312 * T12, 312 * T12, 0},
    {"a100-pcie-80gb", 312 * T12, 312 * T12, 0},
    {"a100-pcie-40gb", 312 * T12, 312 * T12, 0},
    {"rtx-a6000", 38.7 * T12, 38.7 * T12, 0},
    {"a40", 149.7 * T12, 149.7 * T12, 0},
    {"a10g", 125 * T12, 125 * T12, 0},
    {"v100-sxm2", 0, 125 * T12, 0},
    {"v100-pcie", 0, 112 * T12, 0},
    {"tpu-v4", 275 * T12, 275 * T12, 0},
    {"tpu-v5e", 197 * T12, 197 * T12, 0},
};

/* MaxText prints no MFU; its benchmark upload divides by hardware_id_to_bf16_tflops
 * (FP §6b): v4 275, v5e 197, v5p 459, v6e 918, a3mega / a3ultra (H100) 989. */
static const mfu__peak_row maxtext_peaks[] = {
    {"tpu-v4", 275 * T12, 275 * T12, 0},   {"tpu-v5e", 197 * T12, 197 * T12, 0},
    {"tpu-v5p", 459 * T12, 459 * T12, 0},  {"tpu-v6e", 918 * T12, 918 * T12, 0},
    {"h100-sxm", 989 * T12, 989 * T12, 0},
};

#define PEAKS(t) t, MFU__ARRAY_LEN(t)

static const mfu__stack stacks[] = {
    {"megatron", "Megatron-LM", true, MFU_CONV_MEGATRON_2025, MFU_ATTENTION_DEFAULT, false, false,
     false, MFU__PEAK_NONE, 0, NULL, 0, false, 0,
     "throughput per GPU (TFLOP/s/GPU) = model FLOPs of the global batch / (iteration time x "
     "world size), no recompute; no MFU printed",
     "FP §4, LF §2"},
    {"nemo", "NeMo", true, MFU_CONV_NEMO_2024, MFU_ATTENTION_DEFAULT, false, false, false,
     MFU__PEAK_NONE, 0, NULL, 0, false, 0,
     "TFLOPS_per_GPU = analytic model FLOPs / step time / GPUs; tokens_per_sec_per_gpu per "
     "GPU; AutoModel tps global; no MFU printed",
     "LF §3, docs/conventions.md nemo-2024"},
    {"nanogpt", "nanoGPT", true, MFU_CONV_NANOGPT, MFU_ATTENTION_DEFAULT, false, false, true,
     MFU__PEAK_FIXED, 312 * T12, NULL, 0, true, 0.9,
     "mfu per GPU = (6N + 12 L H Q T) x tokens per process / dt / 312 TFLOP/s (A100 bf16, "
     "whatever the GPU), printed as an EMA (0.9) over log lines",
     "FP §1, LF §4"},
    {"llmc", "llm.c", true, MFU_CONV_LLMC, MFU_ATTENTION_DEFAULT, false, false, true,
     MFU__PEAK_TABLE, 0, PEAKS(llmc_peaks), true, 0,
     "MFU per GPU = (6N + 6 L C T) x tokens per process / dt / its table's bf16 peak "
     "(-100% = GPU not in its table); tok/s global, an EMA",
     "FP §2, LF §5"},
    {"torchtitan", "torchtitan", true, MFU_CONV_TORCHTITAN, MFU_ATTENTION_DEFAULT, false, false,
     false, MFU__PEAK_TABLE_FALLBACK, 312 * T12, PEAKS(torchtitan_peaks), true, 0,
     "tps per device (labels.numel(), padding included); tflops = FLOPs per token x tps; mfu "
     "vs its bf16 table, A100 312 TFLOP/s for a device it lacks; N/A under FP8",
     "FP §3, LF §6"},
    {"hf", "Hugging Face Trainer", true, MFU_CONV_6N, MFU_ATTENTION_DEFAULT, false, false, false,
     MFU__PEAK_NONE, 0, NULL, 0, false, 0,
     "no MFU or TFLOP/s; total_flos = 6 N x tokens (whole run); train_tokens_per_second per "
     "device when enabled",
     "LF §7"},
    {"axolotl", "Axolotl", true, MFU_CONV_6N, MFU_ATTENTION_DEFAULT, false, false, false,
     MFU__PEAK_NONE, 0, NULL, 0, false, 0,
     "Hugging Face Trainer dicts; tokens/train_per_sec_per_gpu = trainable tokens per second "
     "per GPU (0 = not measured); no MFU",
     "LF §13"},
    {"deepspeed", "DeepSpeed", true, MFU_CONV_EXACT, MFU_ATTENTION_FULL, false, true, false,
     MFU__PEAK_NONE, 0, NULL, 0, false, 0,
     "flops profiler: measured forward FLOPs x 3 per GPU (SDPA counted full); SamplesPerSec "
     "global; no MFU",
     "FP §8.1, LF §8"},
    {"neox", "GPT-NeoX", true, MFU_CONV_MEGATRON_2021, MFU_ATTENTION_DEFAULT, true, false, false,
     MFU__PEAK_USER, 0, NULL, 0, false, 0,
     "approx flops per GPU counts activation recompute (hardware FLOPs); MFU/HFU only vs the "
     "configured peak_theoretical_tflops; samples/sec global",
     "LF §11, FP §7.2"},
    {"maxtext", "MaxText", true, MFU_CONV_MAXTEXT_2025, MFU_ATTENTION_DEFAULT, false, false, false,
     MFU__PEAK_TABLE, 0, PEAKS(maxtext_peaks), true, 0,
     "TFLOP/s/device = analytic per-device TFLOPs per step / seconds; Tokens/s/device counts "
     "padding, total_weights the real tokens; no MFU (its docs divide by the chip's peak)",
     "FP §6b, LF §10"},
    {"composer", "Composer / llm-foundry", true, MFU_CONV_LLM_FOUNDRY, MFU_ATTENTION_DEFAULT, false,
     false, false, MFU__PEAK_TABLE, 0, PEAKS(composer_peaks), false, 0,
     "throughput/device/mfu = device flops_per_sec / GPU_AVAILABLE_FLOPS (0 for a device it "
     "lacks: no MFU); flops from flops_per_batch (6N + 12 L d s)",
     "FP §6a, LF §12"},
    {"lightning", "Lightning", true, MFU_CONV_EXACT, MFU_ATTENTION_FULL, true, true, false,
     MFU__PEAK_TABLE, 0, PEAKS(lightning_peaks), false, 0,
     "device/mfu = device/flops_per_sec / get_available_flops(device, dtype); FLOPs from the "
     "model's flops_per_batch (LitGPT: measure_flops, executed FLOPs, recompute included)",
     "FP §5, LF §9"},
    {"torchtune", "torchtune", false, MFU_CONV_EXACT, MFU_ATTENTION_DEFAULT, false, false, false,
     MFU__PEAK_NONE, 0, NULL, 0, false, 0,
     "tokens_per_second_per_gpu = tokens in the step / step time / world size; no FLOPs", "LF §14"},
};

const mfu__stack *mfu__stack_find(const char *format)
{
    if (!format || !*format)
        return NULL;
    for (size_t i = 0; i < MFU__ARRAY_LEN(stacks); i++)
        if (mfu__strcasecmp(stacks[i].format, format) == 0)
            return &stacks[i];
    return NULL;
}

const char *mfu_report_stack_name(size_t i)
{
    return i < MFU__ARRAY_LEN(stacks) ? stacks[i].format : NULL;
}

/* Dates of formula changes (s since 1970, UTC midnight). */
#define MEGATRON_CAUSAL_S 1741219200LL      /* 2025-03-06, MR !2789 (FP §4.4) */
#define MEGATRON_REAL_TOKENS_S 1779321600LL /* 2026-05-21, #4103 THD real tokens (FP §4.1) */
#define NEMO_CAUSAL_S 1754697600LL          /* 2025-08-09, NeMo 6251117f (docs/conventions.md) */
#define MAXTEXT_CAUSAL_S 1752796800LL       /* 2025-07-18, MaxText PR #1988 (FP §6b) */

static void date_str(int64_t t, char *buf, size_t n)
{
    /* civil date from days since 1970 (Howard Hinnant's algorithm), no locale, no tm */
    int64_t z = t / 86400 + 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t y = yoe + era * 400;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    int64_t d = doy - (153 * mp + 2) / 5 + 1;
    int64_t m = mp < 10 ? mp + 3 : mp - 9;
    int yy = (int)((y + (m <= 2)) % 10000), mm = (int)m % 100, dd = (int)d % 100;
    if (yy < 0)
        yy = 0;
    snprintf(buf, n, "%04d-%02d-%02d", yy, mm < 0 ? 0 : mm, dd < 0 ? 0 : dd);
}

/* Attention by a change date: full before it, causal from it; causal (the current formula)
 * when the log has no date. The rule names the change, not a formula: the convention keeps its
 * name (megatron-2025) on either side of it, only the attention term differs. */
static void by_date(mfu_report_stack *o, int64_t start, int64_t change, const char *what)
{
    char d[24], c[24];
    date_str(change, c, sizeof c);
    if (start <= 0) {
        o->attention = MFU_ATTENTION_CAUSAL;
        snprintf(o->rule, sizeof o->rule,
                 "no date in the log: assumed after %s, when %s began halving causal attention", c,
                 what);
        return;
    }
    date_str(start, d, sizeof d);
    o->attention = start < change ? MFU_ATTENTION_FULL : MFU_ATTENTION_CAUSAL;
    if (start < change)
        snprintf(o->rule, sizeof o->rule,
                 "log dated %s: before %s, when %s began halving causal attention", d, c, what);
    else
        snprintf(o->rule, sizeof o->rule, "log dated %s: %s halves causal attention since %s", d,
                 what, c);
}

static bool any_tokens_per_s(const mfu_run *run)
{
    const double *c = mfu_run_column(run, MFU_COL_TOKENS_PER_S);
    size_t n = mfu_run_count(run);
    for (size_t i = 0; c && i < n; i++)
        if (isfinite(c[i]))
            return true;
    return false;
}

void mfu__stack_resolve(const mfu__stack *p, const mfu_run *run, int64_t start_time_s,
                        mfu_report_stack *o)
{
    memset(o, 0, sizeof *o);
    o->attention = MFU_ATTENTION_DEFAULT;
    if (!p)
        return;
    mfu__strlcpy(o->name, p->format, sizeof o->name);
    mfu__strlcpy(o->framework, p->framework, sizeof o->framework);
    mfu__strlcpy(o->figures, p->figures, sizeof o->figures);
    o->has_convention = p->has_convention;
    o->convention = p->convention;
    o->attention = p->attention;
    o->counts_recompute = p->counts_recompute;
    o->approximate = p->approximate;
    o->counts_padding = true;
    const mfu_run_meta *m = mfu_run_meta_get(run);
    if (strcmp(p->format, "megatron") == 0) {
        if (strncmp(m->convention, "Megatron-DeepSpeed", 18) == 0) {
            mfu__strlcpy(o->framework, "Megatron-DeepSpeed", sizeof o->framework);
            o->convention = MFU_CONV_MEGATRON_2021;
            o->counts_recompute = true;
            mfu__strlcpy(o->figures,
                         "TFLOPs per GPU from throughput_calculator (Narayanan et al. Eq. 3, "
                         "counts activation recompute); tgs = tokens/s per GPU",
                         sizeof o->figures);
            mfu__strlcpy(o->rule, "Megatron-DeepSpeed: megatron-2021 (hardware FLOPs)",
                         sizeof o->rule);
        } else {
            by_date(o, start_time_s, MEGATRON_CAUSAL_S, "Megatron-LM");
            if (start_time_s >= MEGATRON_REAL_TOKENS_S)
                o->counts_padding = false;
        }
    } else if (strcmp(p->format, "nemo") == 0) {
        by_date(o, start_time_s, NEMO_CAUSAL_S, "NeMo");
    } else if (strcmp(p->format, "maxtext") == 0) {
        if (!any_tokens_per_s(run)) {
            o->convention = MFU_CONV_MAXTEXT_2023;
            mfu__strlcpy(o->rule,
                         "no Tokens/s/device in the log: the 2023 layout, whose TFLOP/s used "
                         "6N + 6 L H Q s (maxtext-2023)",
                         sizeof o->rule);
        } else {
            by_date(o, start_time_s, MAXTEXT_CAUSAL_S, "MaxText");
        }
    }
    /* an attention still DEFAULT is the convention's own; the caller resolves it */
}

double mfu__stack_peak(const mfu__stack *p, const mfu_device_info *dev, mfu_dtype dtype,
                       bool *fallback, char *why, size_t n)
{
    *fallback = false;
    if (why && n)
        why[0] = '\0';
    if (!p || p->peak_rule == MFU__PEAK_NONE || p->peak_rule == MFU__PEAK_USER)
        return 0;
    if (p->peak_rule == MFU__PEAK_FIXED) {
        if (why)
            snprintf(why, n, "%s's hard-coded %.0f TFLOP/s (A100 bf16), whatever the GPU",
                     p->framework, p->fixed_peak / T12);
        return p->fixed_peak;
    }
    if (!dev)
        return 0;
    mfu_dtype d = p->peak_bf16_only ? MFU_DTYPE_BF16 : dtype;
    for (size_t i = 0; i < p->npeaks; i++) {
        if (strcmp(p->peaks[i].id, dev->id) != 0)
            continue;
        double v = d == MFU_DTYPE_BF16   ? p->peaks[i].bf16
                   : d == MFU_DTYPE_FP16 ? p->peaks[i].fp16
                   : d == MFU_DTYPE_FP8  ? p->peaks[i].fp8
                                         : 0;
        if (v > 0 && why)
            snprintf(why, n, "%s's table: %.6g TFLOP/s for %s %s", p->framework, v / T12, dev->id,
                     mfu_dtype_name(d));
        if (v > 0)
            return v;
        break;
    }
    if (p->peak_rule == MFU__PEAK_TABLE_FALLBACK) {
        *fallback = true;
        if (why)
            snprintf(why, n, "%s has no %s in its table: its A100 fallback, %.0f TFLOP/s",
                     p->framework, dev->id, p->fixed_peak / T12);
        return p->fixed_peak;
    }
    if (why)
        snprintf(why, n, "%s has no %s peak for %s (it prints no MFU there)", p->framework,
                 mfu_dtype_name(d), dev->id);
    return 0;
}

size_t mfu__stack_devices_with_peak(const mfu__stack *p, double peak, double tol, char *buf,
                                    size_t n)
{
    size_t k = 0;
    if (n)
        buf[0] = '\0';
    if (!p || !(peak > 0))
        return 0;
    for (size_t i = 0; i < p->npeaks; i++) {
        double v = p->peaks[i].bf16;
        if (v > 0 && fabs(v / peak - 1) <= tol) {
            mfu__appendf(buf, n, "%s%s", k ? ", " : "", p->peaks[i].id);
            k++;
        }
    }
    if (p->peak_rule == MFU__PEAK_TABLE_FALLBACK && fabs(p->fixed_peak / peak - 1) <= tol) {
        mfu__appendf(buf, n, "%sits fallback for a device it lacks", k ? ", or " : "");
        k++;
    }
    return k;
}

const char *mfu__stack_device_for_peak(const mfu__stack *p, double peak, double tol)
{
    if (!p || !(peak > 0))
        return NULL;
    const char *id = NULL;
    for (size_t i = 0; i < p->npeaks; i++) {
        double v = p->peaks[i].bf16;
        if (!(v > 0) || fabs(v / peak - 1) > tol)
            continue;
        if (id)
            return NULL; /* several entries share the figure */
        id = p->peaks[i].id;
    }
    return id;
}
