/*
 * report.c - mfu_report_compute(): resolve a run's context (log header + caller's input),
 * derive the per-step series, find the steady steps and summarise them. The comparisons with
 * the framework's own figures are in compare.c, the framework profiles in stacks.c.
 *
 * Order of precedence for every piece of context: the caller's input, then the log (step
 * line, then header). Tokens: in->tokens_per_step, in->global_batch x seq, the step's tokens,
 * the step's samples x seq, the header's tokens per step, the header's global batch x seq.
 * Tokens/s: tokens / step time when both are known, else the framework's own tokens/s (with
 * its scope). Per device: / devices, or the framework's per-device figure as printed.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/internal.h"
#include "util/util.h"

void mfu__report_note(mfu_report *r, const char *fmt, ...)
{
    if (r->nnotes >= MFU_REPORT_MAX_NOTES)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->notes[r->nnotes], MFU_REPORT_TEXT_MAX, fmt, ap);
    va_end(ap);
    r->nnotes++;
}

bool mfu__convention_n_based(mfu_convention c)
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

/* The attention mode a convention counts by default, learnt from a tiny model. */
static mfu_attention convention_attention(mfu_convention conv)
{
    mfu_arch a;
    memset(&a, 0, sizeof a);
    a.layers = 1;
    a.hidden = 64;
    a.heads = 1;
    a.vocab = 64;
    mfu_workload wl;
    memset(&wl, 0, sizeof wl);
    wl.seq = 8;
    mfu_flops_options o;
    memset(&o, 0, sizeof o);
    o.convention = conv;
    mfu_flops f;
    return mfu_flops_compute(&a, &wl, &o, &f, NULL) == MFU_OK ? f.attention : MFU_ATTENTION_DEFAULT;
}

static void add_missing(mfu_report *r, const char *what, const char *option, const char *needed_for)
{
    if (r->nmissing >= MFU_REPORT_MAX_MISSING)
        return;
    mfu_report_missing *m = &r->missing[r->nmissing++];
    mfu__strlcpy(m->what, what, sizeof m->what);
    mfu__strlcpy(m->option, option, sizeof m->option);
    mfu__strlcpy(m->needed_for, needed_for, sizeof m->needed_for);
}

void mfu_report_free(mfu_report *r)
{
    if (!r)
        return;
    free(r->steps);
    for (size_t i = 0; i < MFU_RS_COUNT_; i++)
        free(r->col[i]);
    free(r->state);
    for (size_t i = 0; i < MFU__PX_COUNT; i++)
        free(r->px[i]);
    free(r->recompute);
    free(r->dtype);
    mfu_analysis_free(r->analysis);
    free(r);
}

static mfu_status check_input(const mfu_report_input *in, mfu_error *err)
{
    if (in->devices < 0)
        return mfu__fail_field(err, MFU_E_INVALID, "--devices",
                               "the device count must be positive: give --devices N");
    if (in->global_batch < 0)
        return mfu__fail_field(err, MFU_E_INVALID, "--global-batch",
                               "the global batch must be positive: give --global-batch N");
    if (!isfinite(in->tokens_per_step) || in->tokens_per_step < 0)
        return mfu__fail_field(err, MFU_E_INVALID, "--tokens-per-step",
                               "tokens per step must be a positive number");
    if (!isfinite(in->real_tokens_per_step) || in->real_tokens_per_step < 0)
        return mfu__fail_field(err, MFU_E_INVALID, "--real-tokens-per-step",
                               "real tokens per step must be a positive number");
    if (!isfinite(in->peak_flops_per_s) || in->peak_flops_per_s < 0)
        return mfu__fail_field(err, MFU_E_INVALID, "--peak-tflops",
                               "the peak must be a positive, finite number of TFLOP/s");
    if (in->micro_batch < 0)
        return mfu__fail_field(err, MFU_E_INVALID, "--micro-batch",
                               "the micro-batch must be positive: give --micro-batch N");
    if (in->tp < 0)
        return mfu__fail_field(err, MFU_E_INVALID, "--tp",
                               "the tensor-parallel size must be positive: give --tp N");
    if (!isfinite(in->tolerance) || in->tolerance < 0 || in->tolerance >= 0.5)
        return mfu__fail_field(err, MFU_E_INVALID, "--tolerance",
                               "the tolerance must be a fraction in (0, 0.5), e.g. 0.01");
    if (in->dtype_given && ((int)in->dtype < 0 || in->dtype >= MFU_DTYPE_COUNT))
        return mfu__fail_field(err, MFU_E_INVALID, "--dtype", "unknown dtype value");
    return MFU_OK;
}

/* The first finite timestamp of the run, 0 when none. */
static int64_t start_time(const mfu_run *run)
{
    const double *t = mfu_run_column(run, MFU_COL_TIME_S);
    size_t n = mfu_run_count(run);
    for (size_t i = 0; t && i < n; i++)
        if (isfinite(t[i]) && t[i] > 0 && t[i] < 9.2e18)
            return (int64_t)t[i];
    return 0;
}

/* Resolve the device, dtype and peak. A device only the log names that mfu does not know is a
 * note, not an error. */
static mfu_status resolve_device(mfu_report *r, const mfu_report_input *in, const mfu_run_meta *m,
                                 mfu_error *err)
{
    mfu_report_context *c = &r->ctx;
    const char *name = in->device ? in->device : (m->device[0] ? m->device : NULL);
    c->device_source = in->device ? MFU_SRC_INPUT : name ? MFU_SRC_LOG : MFU_SRC_NONE;
    if (name)
        mfu__strlcpy(c->device_name, name, sizeof c->device_name);
    if (name) {
        mfu_error e;
        memset(&e, 0, sizeof e);
        /* "cpu" given by the caller is this machine's CPU; in a log it is another's */
        mfu_status st = mfu_device_resolve(name, in->device ? &r->cpu : NULL, &c->device, &e);
        if (st != MFU_OK) {
            if (in->device) {
                if (err)
                    *err = e;
                return st;
            }
            mfu__report_note(r,
                             "the log names the device '%s', which mfu's table does not "
                             "know: give --device ID or --peak-tflops X",
                             name);
        }
    }
    c->dtype = MFU_DTYPE_BF16;
    if (in->dtype_given) {
        c->dtype = in->dtype;
    } else if (m->dtype[0]) {
        mfu_dtype d;
        if (mfu_dtype_parse(m->dtype, &d, NULL) == MFU_OK)
            c->dtype = d;
    }
    c->peak_flops_per_s = NAN;
    if (in->peak_flops_per_s > 0) {
        c->peak_flops_per_s = in->peak_flops_per_s;
        c->peak_source = MFU_SRC_INPUT;
    } else if (c->device) {
        double p = 0;
        mfu_error e;
        memset(&e, 0, sizeof e);
        mfu_status st = mfu_device_peak_flops_per_s(c->device, c->dtype, false, &p, &e);
        if (st == MFU_OK) {
            c->peak_flops_per_s = p;
            c->peak_source = MFU_SRC_LOG;
        } else if (in->dtype_given) {
            if (err)
                *err = e;
            return st;
        } else {
            mfu__report_note(r,
                             "%s has no %s peak in mfu's table: give --dtype (the "
                             "precision of the matmuls) or --peak-tflops X",
                             c->device->id, mfu_dtype_name(c->dtype));
        }
    }
    return MFU_OK;
}

/* Count the FLOPs per token under the report's convention and under the framework's. */
static mfu_status resolve_flops(mfu_report *r, const mfu_report_input *in, const mfu_run *run,
                                const mfu__stack *prof, mfu__cmp_ctx *cc, mfu_error *err)
{
    mfu_report_context *c = &r->ctx;
    const mfu_run_meta *m = mfu_run_meta_get(run);
    c->model_flops_per_token = c->hardware_flops_per_token = c->stack_flops_per_token = NAN;
    c->convention = in->flops.convention;
    c->attention = in->flops.attention;
    if (!in->has_arch || cc->wl.seq <= 0)
        return MFU_OK;
    mfu_flops f;
    mfu_status st = mfu_flops_compute(&in->arch, &cc->wl, &in->flops, &f, err);
    if (st != MFU_OK)
        return st;
    c->has_model = true;
    mfu__strlcpy(c->model, in->arch.name, sizeof c->model);
    c->model_flops_per_token = f.model_flops;
    c->hardware_flops_per_token = f.hardware_flops;
    c->attention = f.attention;

    /* the framework's own count */
    if (!prof || !c->stack.has_convention) {
        /* a generic log (or a framework without FLOPs): mfu's own convention stands in */
        cc->sopt = in->flops;
        cc->stack_flops_ok = true;
        c->stack_flops_per_token = f.model_flops;
        return MFU_OK;
    }
    mfu_flops_options o;
    memset(&o, 0, sizeof o);
    o.convention = c->stack.convention;
    o.attention = c->stack.attention;
    if (mfu__convention_n_based(o.convention)) {
        if (in->flops.params > 0 && mfu__convention_n_based(in->flops.convention))
            o.params = in->flops.params;
        else if (prof->params_from_log && isfinite(m->model_params) && m->model_params > 0 &&
                 m->model_params < 9e15) {
            o.params = (int64_t)m->model_params;
            mfu__report_note(r, "N = %.0f in %s's formula, as the log printed it", m->model_params,
                             prof->framework);
        }
    }
    cc->sopt = o;
    mfu_flops fs;
    mfu_error e;
    memset(&e, 0, sizeof e);
    if (mfu_flops_compute(&in->arch, &cc->wl, &o, &fs, &e) != MFU_OK) {
        mfu__report_note(r, "cannot count FLOPs as %s does (%s): %s", prof->framework,
                         mfu_convention_name(o.convention), e.message);
        return MFU_OK;
    }
    cc->stack_flops_ok = true;
    c->stack.attention = fs.attention;
    cc->sopt.attention = fs.attention;
    c->stack_flops_per_token = c->stack.counts_recompute ? fs.hardware_flops : fs.model_flops;
    return MFU_OK;
}

/* FLOPs per token of one workload (sequence length, recomputation): model, hardware and as
 * the framework counts them. A few recent workloads are cached: a run changes its workload a
 * handful of times, not every step. */
#define FCACHE 8
typedef struct fcache {
    size_t n, next;
    struct {
        double seq;
        int rec;
        double f[3];
    } e[FCACHE];
} fcache;

static void flops_at(const mfu_report_input *in, const mfu__cmp_ctx *cc, bool counts_recompute,
                     double seq, int rec, fcache *fc, double out[3])
{
    for (size_t k = 0; k < fc->n; k++)
        if (fc->e[k].seq == seq && fc->e[k].rec == rec) {
            memcpy(out, fc->e[k].f, sizeof fc->e[k].f);
            return;
        }
    out[0] = out[1] = out[2] = NAN;
    mfu_workload wl = cc->wl;
    wl.seq = (int64_t)seq;
    wl.recompute = (mfu_recompute)rec;
    mfu_flops f;
    if (seq >= 1 && seq < 9e15 &&
        mfu_flops_compute(&in->arch, &wl, &in->flops, &f, NULL) == MFU_OK) {
        out[0] = f.model_flops;
        out[1] = f.hardware_flops;
    }
    if (cc->stack_flops_ok && isfinite(out[0]) &&
        mfu_flops_compute(&in->arch, &wl, &cc->sopt, &f, NULL) == MFU_OK)
        out[2] = counts_recompute ? f.hardware_flops : f.model_flops;
    size_t k = fc->n < FCACHE ? fc->n++ : fc->next++ % FCACHE;
    fc->e[k].seq = seq;
    fc->e[k].rec = rec;
    memcpy(fc->e[k].f, out, sizeof fc->e[k].f);
}

/* What each step's figures are computed with: its sequence length and recomputation (the
 * FLOPs per token they give), device count, dtype peak and batch. A value the step printed
 * wins over the run's for that step. */
static void step_context(mfu_report *r, const mfu_run *run, const mfu_report_input *in,
                         const mfu__cmp_ctx *cc)
{
    mfu_report_context *c = &r->ctx;
    const mfu_run_meta *m = mfu_run_meta_get(run);
    fcache fc;
    memset(&fc, 0, sizeof fc);
    double seq0 = c->seq > 0 ? (double)c->seq : NAN;
    int rec0 = (int)cc->wl.recompute;
    double batch0 = in->global_batch > 0  ? (double)in->global_batch
                    : m->global_batch > 0 ? (double)m->global_batch
                                          : NAN;
    for (size_t i = 0; i < r->n; i++) {
        mfu_step s;
        mfu_run_get(run, i, &s);
        double seq = s.seq_len >= 1 && s.seq_len < 9e15 ? floor(s.seq_len) : seq0;
        int rec = s.recompute >= 0 && s.recompute <= MFU_RECOMPUTE_FULL ? s.recompute : rec0;
        r->recompute[i] = (int8_t)rec;
        r->dtype[i] =
            (int8_t)(s.dtype >= 0 && s.dtype < (int32_t)MFU_DTYPE_COUNT ? s.dtype
                                                                        : (int32_t)c->dtype);
        double f[3] = {c->model_flops_per_token, c->hardware_flops_per_token,
                       c->stack_flops_per_token};
        if (!c->has_model)
            f[0] = f[1] = f[2] = NAN;
        else if (!(seq == seq0 && rec == rec0))
            flops_at(in, cc, c->stack.counts_recompute, seq, rec, &fc, f);
        r->px[MFU__PX_SEQ][i] = seq;
        r->px[MFU__PX_MODEL][i] = f[0];
        r->px[MFU__PX_HARDWARE][i] = f[1];
        r->px[MFU__PX_STACK][i] = f[2];
        r->px[MFU__PX_DEVICES][i] =
            s.devices >= 1 && s.devices < 1e9 ? floor(s.devices) : c->devices;
        double peak = c->peak_flops_per_s;
        if (r->dtype[i] != (int8_t)c->dtype && in->peak_flops_per_s <= 0 && c->device) {
            double p = NAN;
            peak = mfu_device_peak_flops_per_s(c->device, (mfu_dtype)r->dtype[i], false, &p,
                                               NULL) == MFU_OK
                       ? p
                       : NAN;
        }
        r->px[MFU__PX_PEAK][i] = peak;
        r->px[MFU__PX_REAL][i] = c->real_fraction;
        r->px[MFU__PX_BATCH][i] = s.samples > 0 && isfinite(s.samples) ? s.samples : batch0;
    }
}

/* Per-row throughput and figures (see the file comment for the precedence rules). */
static void derive_series(mfu_report *r, const mfu_run *run, double override_tokens,
                          double override_batch, double fallback_tokens, double fallback_batch,
                          double *derived_tps)
{
    mfu_report_context *c = &r->ctx;
    for (size_t i = 0; i < r->n; i++) {
        mfu_step s;
        mfu_run_get(run, i, &s);
        r->steps[i] = s.step;
        double dev = r->px[MFU__PX_DEVICES][i];
        double seq = r->px[MFU__PX_SEQ][i];
        double tokens = override_tokens;
        if (!(tokens > 0) && override_batch > 0 && isfinite(seq))
            tokens = override_batch * seq;
        if (!(tokens > 0))
            tokens = isfinite(s.tokens) && s.tokens > 0                      ? s.tokens
                     : isfinite(s.samples) && s.samples > 0 && isfinite(seq) ? s.samples * seq
                     : isfinite(fallback_tokens)                             ? fallback_tokens
                     : fallback_batch > 0 && isfinite(seq)                   ? fallback_batch * seq
                                                                             : NAN;
        double st = isfinite(s.step_time_s) && s.step_time_s > 0 ? s.step_time_s : NAN;
        double rg = NAN, rd = NAN; /* the framework's tokens/s, global and per device */
        if (isfinite(s.tokens_per_s) && s.tokens_per_s > 0) {
            if (s.tokens_per_s_scope == MFU_SCOPE_DEVICE) {
                rd = s.tokens_per_s;
                rg = rd * dev;
            } else {
                rg = s.tokens_per_s;
                rd = rg / dev;
            }
        }
        double tps = NAN;
        derived_tps[i] = NAN;
        if (isfinite(tokens) && tokens > 0 && isfinite(st)) {
            tps = tokens / st;
            derived_tps[i] = tps;
        } else if (isfinite(rg)) {
            tps = rg;
        } else if (isfinite(s.samples_per_s) && s.samples_per_s > 0 && isfinite(seq)) {
            /* sequences per second x tokens per sequence */
            double v = s.samples_per_s * seq;
            if (s.samples_per_s_scope == MFU_SCOPE_DEVICE) {
                rd = v;
                tps = v * dev;
            } else {
                tps = v;
            }
        }
        double tpd = isfinite(tps) && isfinite(dev) ? tps / dev : rd;
        if (!isfinite(st) && isfinite(tokens) && tokens > 0 && isfinite(tps) && tps > 0)
            st = tokens / tps;
        double rf = NAN;
        if (isfinite(s.flops_per_s))
            rf = s.flops_per_s_scope == MFU_SCOPE_GLOBAL ? s.flops_per_s / dev : s.flops_per_s;
        /* real (non-padding) fraction: the step's useful tokens, else --real-tokens-per-step */
        double rho = c->real_fraction;
        if (isfinite(s.useful_tokens) && s.useful_tokens >= 0 && isfinite(tokens) && tokens > 0)
            rho = s.useful_tokens >= tokens ? 1.0 : s.useful_tokens / tokens;
        r->px[MFU__PX_REAL][i] = rho;
        r->col[MFU_RS_STEP_TIME_S][i] = st;
        r->col[MFU_RS_TOKENS][i] = isfinite(tokens) && tokens > 0 ? tokens : NAN;
        r->col[MFU_RS_TOKENS_PER_S][i] = tps;
        r->col[MFU_RS_TOKENS_PER_S_PER_DEVICE][i] = tpd;
        r->col[MFU_RS_REPORTED_FLOPS_PER_S_PER_DEVICE][i] = rf;
        r->col[MFU_RS_REPORTED_MFU][i] = isfinite(s.mfu) ? s.mfu : NAN;
        r->col[MFU_RS_REPORTED_TOKENS_PER_S][i] = rg;
        r->col[MFU_RS_LOSS][i] = s.loss;
        double peak = r->px[MFU__PX_PEAK][i];
        double mf = r->px[MFU__PX_MODEL][i] * tpd * rho;
        double hf = r->px[MFU__PX_HARDWARE][i] * tpd;
        r->col[MFU_RS_MODEL_FLOPS_PER_S_PER_DEVICE][i] = mf;
        r->col[MFU_RS_HARDWARE_FLOPS_PER_S_PER_DEVICE][i] = hf;
        r->col[MFU_RS_MFU][i] = mf / peak;
        r->col[MFU_RS_HFU][i] = hf / peak;
        double sf = r->px[MFU__PX_STACK][i] * tpd * (c->stack.counts_padding ? 1.0 : rho);
        r->col[MFU_RS_STACK_FLOPS_PER_S_PER_DEVICE][i] = sf;
        r->col[MFU_RS_STACK_MFU][i] = sf / c->stack_peak_flops_per_s;
        /* a figure that overflowed (a garbled 1e308 token count, a step time of 1e-320 s) is
         * not a value: absent, so the step is unusable rather than infinite */
        for (int k = 0; k < MFU_RS_COUNT_; k++)
            if (isinf(r->col[k][i]))
                r->col[k][i] = NAN;
        if (isinf(derived_tps[i]))
            derived_tps[i] = NAN;
    }
}

/* nanoGPT prints an EMA of its MFU over log lines: replay it, seeded with the first value. */
static void replay_ema(mfu_report *r, double ema)
{
    double *x = r->col[MFU_RS_STACK_MFU];
    double state = NAN;
    for (size_t i = 0; i < r->n; i++) {
        if (!isfinite(x[i]))
            continue;
        state = isfinite(state) ? ema * state + (1 - ema) * x[i] : x[i];
        x[i] = state;
    }
}

/* The peak and FLOPs per token that the log's own figures imply (medians over all rows). */
static void implied(mfu_report *r, double *scratch)
{
    mfu_report_context *c = &r->ctx;
    const double *rf = r->col[MFU_RS_REPORTED_FLOPS_PER_S_PER_DEVICE];
    const double *rm = r->col[MFU_RS_REPORTED_MFU];
    const double *tpd = r->col[MFU_RS_TOKENS_PER_S_PER_DEVICE];
    double *tmp = scratch + r->n;
    for (size_t i = 0; i < r->n; i++)
        tmp[i] = rm[i] > 0 ? rf[i] / rm[i] : NAN;
    c->implied_peak_flops_per_s = mfu__median_finite(tmp, r->n, scratch);
    for (size_t i = 0; i < r->n; i++)
        tmp[i] = tpd[i] > 0 ? rf[i] / tpd[i] : NAN;
    c->implied_flops_per_token = mfu__median_finite(tmp, r->n, scratch);
}

/* Notes about what the log itself shows (sentinels, nan losses, skipped steps). */
static void log_notes(mfu_report *r, const mfu_run *run, const mfu__stack *prof)
{
    size_t sentinel = 0, nan_loss = 0, skipped = 0;
    for (size_t i = 0; i < r->n; i++) {
        mfu_step s;
        mfu_run_get(run, i, &s);
        sentinel += (s.flags & MFU_STEP_MFU_SENTINEL) != 0;
        nan_loss += (s.flags & MFU_STEP_LOSS_NAN) != 0;
        skipped += (s.flags & MFU_STEP_SKIPPED) != 0;
    }
    if (sentinel) {
        const char *why = "it did not know its peak";
        if (prof && strcmp(prof->format, "llmc") == 0)
            why = "llm.c's table (llmc/mfu.h) has no entry for this GPU's name, so it printed "
                  "-100%";
        else if (prof && strcmp(prof->format, "torchtitan") == 0)
            why = "torchtitan prints N/A under FP8/MX quantization (PR #2451)";
        else if (prof && strcmp(prof->format, "nanogpt") == 0)
            why = "nanoGPT prints -100% for the first 5 iterations, before its EMA starts";
        mfu__report_note(r, "the log's MFU is a sentinel on %zu step%s: %s", sentinel,
                         sentinel == 1 ? "" : "s", why);
    }
    if (nan_loss)
        mfu__report_note(r,
                         "the loss is nan on %zu step%s while the throughput goes on: "
                         "those steps are counted as throughput but learn nothing",
                         nan_loss, nan_loss == 1 ? "" : "s");
    if (skipped)
        mfu__report_note(r,
                         "%zu step%s report%s skipped optimizer steps (fp16 loss-scale "
                         "overflow): the time is counted, the update did not happen",
                         skipped, skipped == 1 ? "" : "s", skipped == 1 ? "s" : "");
}

mfu_status mfu_report_compute(const mfu_run *run, const mfu_report_input *in_, mfu_report **out,
                              mfu_error *err)
{
    if (!out)
        return mfu__fail(err, MFU_E_INVALID, 0, "mfu_report_compute: out is NULL");
    *out = NULL;
    if (!run)
        return mfu__fail(err, MFU_E_INVALID, 0, "mfu_report_compute: run is NULL");
    mfu_report_input zero;
    memset(&zero, 0, sizeof zero);
    const mfu_report_input *in = in_ ? in_ : &zero;
    mfu_status st = check_input(in, err);
    if (st != MFU_OK)
        return st;
    size_t n = mfu_run_count(run);
    if (n == 0)
        return mfu__fail(err, MFU_E_EMPTY, 0,
                         "the log has no training step: check the file, or force the format "
                         "with --format NAME");
    const mfu_run_meta *m = mfu_run_meta_get(run);
    const mfu__stack *prof = NULL;
    if (in->stack && *in->stack) {
        prof = mfu__stack_find(in->stack);
        if (!prof) {
            char names[400] = "";
            for (size_t i = 0; mfu_report_stack_name(i); i++)
                mfu__appendf(names, sizeof names, "%s%s", i ? ", " : "", mfu_report_stack_name(i));
            return mfu__fail_field(err, MFU_E_UNKNOWN, "--stack",
                                   "no framework profile '%s': use one of %s", in->stack, names);
        }
    } else {
        prof = mfu__stack_find(m->format);
    }

    mfu_report *r = calloc(1, sizeof *r);
    double *scratch = NULL, *derived = NULL;
    bool ok = r != NULL;
    if (ok) {
        r->n = n;
        r->steps = calloc(n, sizeof *r->steps);
        r->state = calloc(n, sizeof *r->state);
        ok = r->steps && r->state;
        for (size_t i = 0; ok && i < MFU_RS_COUNT_; i++)
            ok = (r->col[i] = calloc(n, sizeof(double))) != NULL;
        for (size_t i = 0; ok && i < MFU__PX_COUNT; i++)
            ok = (r->px[i] = calloc(n, sizeof(double))) != NULL;
        ok = ok && (r->recompute = calloc(n, 1)) != NULL && (r->dtype = calloc(n, 1)) != NULL;
        scratch = calloc(2 * n, sizeof *scratch);
        derived = calloc(2 * n, sizeof *derived); /* tokens/s derived, then throughput */
        ok = ok && scratch && derived;
    }
    if (!ok) {
        mfu_report_free(r);
        free(scratch);
        free(derived);
        return mfu__fail(err, MFU_E_NOMEM, 0, "out of memory for a report of %zu steps", n);
    }
    mfu_report_context *c = &r->ctx;
    c->start_time_s = start_time(run);
    mfu__stack_resolve(prof, run, c->start_time_s, &c->stack);
    if (!prof)
        c->stack.counts_padding = false;
    if (c->stack.has_convention && c->stack.attention == MFU_ATTENTION_DEFAULT)
        c->stack.attention = convention_attention(c->stack.convention);

    mfu__cmp_ctx cc;
    memset(&cc, 0, sizeof cc);
    cc.in = in;
    cc.prof = prof;
    cc.tol = in->tolerance > 0 ? in->tolerance : MFU_REPORT_TOLERANCE;
    cc.scratch = scratch;
    cc.derived_tps = derived;
    cc.wl = in->workload;
    c->seq_source = in->workload.seq > 0 ? MFU_SRC_INPUT : MFU_SRC_NONE;
    if (cc.wl.seq <= 0 && m->seq_len > 0) {
        cc.wl.seq = m->seq_len;
        c->seq_source = MFU_SRC_LOG;
    }
    /* no run-wide sequence length: the first one a step printed */
    const double *seq_col = mfu_run_column(run, MFU_COL_SEQ_LEN);
    for (size_t i = 0; seq_col && cc.wl.seq <= 0 && i < n; i++) {
        double v = seq_col[i];
        if (v >= 1 && v < 9e15) {
            cc.wl.seq = (int64_t)v;
            c->seq_source = MFU_SRC_LOG;
        }
    }
    c->seq = cc.wl.seq > 0 ? cc.wl.seq : 0;

    st = resolve_device(r, in, m, err);
    if (st == MFU_OK)
        st = resolve_flops(r, in, run, prof, &cc, err);
    if (st != MFU_OK)
        goto done;

    /* devices */
    c->devices = NAN;
    if (in->devices > 0) {
        c->devices = (double)in->devices;
        c->devices_source = MFU_SRC_INPUT;
    } else if (m->world_size > 0) {
        c->devices = (double)m->world_size;
        c->devices_source = MFU_SRC_LOG;
    }

    /* tokens per step */
    double seq = c->seq > 0 ? (double)c->seq : NAN;
    double override_tokens = NAN, fallback_tokens = NAN;
    double override_batch = NAN, fallback_batch = NAN; /* x each step's sequence length */
    if (in->tokens_per_step > 0)
        override_tokens = in->tokens_per_step;
    else if (in->global_batch > 0 && isfinite(seq))
        override_batch = (double)in->global_batch;
    if (isfinite(override_tokens) || isfinite(override_batch))
        c->tokens_source = MFU_SRC_INPUT;
    if (isfinite(m->tokens_per_step) && m->tokens_per_step > 0)
        fallback_tokens = m->tokens_per_step;
    else if (m->global_batch > 0)
        fallback_batch = (double)m->global_batch;

    /* the framework's peak */
    c->stack_peak_flops_per_s = NAN;
    bool fb = false;
    double ps = mfu__stack_peak(prof, c->device, c->dtype, &fb, c->stack_peak_rule,
                                sizeof c->stack_peak_rule);
    if (ps > 0) {
        c->stack_peak_flops_per_s = ps;
        cc.p_stack_fallback = fb;
    } else if (!prof && isfinite(c->peak_flops_per_s)) {
        c->stack_peak_flops_per_s = c->peak_flops_per_s;
        mfu__strlcpy(c->stack_peak_rule, "no framework profile: the device's dense peak",
                     sizeof c->stack_peak_rule);
    }
    double *derived_x = derived + n;
    cc.p_true = c->peak_flops_per_s;
    cc.dev = c->device;
    c->real_fraction = 1;
    step_context(r, run, in, &cc);
    derive_series(r, run, override_tokens, override_batch, fallback_tokens, fallback_batch,
                  derived);

    /* tokens per step as a constant, and the real fraction */
    {
        double t0 = NAN;
        bool same = true;
        for (size_t i = 0; i < n; i++) {
            double t = r->col[MFU_RS_TOKENS][i];
            if (!isfinite(t))
                continue;
            if (!isfinite(t0))
                t0 = t;
            else if (t != t0)
                same = false;
        }
        c->tokens_per_step = same ? t0 : NAN;
        if (isfinite(t0) && c->tokens_source == MFU_SRC_NONE)
            c->tokens_source = MFU_SRC_LOG;
    }
    if (in->real_tokens_per_step > 0) {
        if (!isfinite(c->tokens_per_step)) {
            mfu__report_note(r, "--real-tokens-per-step needs a constant number of tokens per "
                                "step: give --tokens-per-step too; padding is not accounted");
        } else if (in->real_tokens_per_step > c->tokens_per_step) {
            st = mfu__fail_field(err, MFU_E_INVALID, "--real-tokens-per-step",
                                 "--real-tokens-per-step (%.0f) exceeds the tokens per step "
                                 "(%.0f): give the non-padding tokens of one step",
                                 in->real_tokens_per_step, c->tokens_per_step);
            goto done;
        } else {
            c->real_fraction = in->real_tokens_per_step / c->tokens_per_step;
            derive_series(r, run, override_tokens, override_batch, fallback_tokens, fallback_batch,
                          derived);
        }
    }
    cc.rho = c->real_fraction;
    if (prof && prof->mfu_ema > 0)
        replay_ema(r, prof->mfu_ema);
    implied(r, scratch);

    /* steady steps, on the throughput of each step: tokens/s, or 1 / step time */
    {
        const double *tpd = r->col[MFU_RS_TOKENS_PER_S_PER_DEVICE];
        const double *tps = r->col[MFU_RS_TOKENS_PER_S];
        const double *stt = r->col[MFU_RS_STEP_TIME_S];
        double *x = derived_x;
        for (size_t i = 0; i < n; i++)
            x[i] = isfinite(tpd[i]) ? tpd[i] : isfinite(tps[i]) ? tps[i] : 1.0 / stt[i];
        st = mfu__warmup(x, n, r->steps, r->state, &r->warmup, scratch, err);
        if (st != MFU_OK)
            goto done;
        for (size_t i = 0; i < n; i++)
            if (r->state[i] == MFU_STEP_STEADY &&
                (r->col[MFU_RS_MFU][i] > 1 || r->col[MFU_RS_HFU][i] > 1)) {
                r->state[i] = MFU_STEP_IMPOSSIBLE;
                r->warmup.impossible++;
                r->warmup.steady--;
            }
    }
    {
        bool *keep = calloc(n, sizeof *keep);
        if (!keep) {
            st = mfu__fail(err, MFU_E_NOMEM, 0, "out of memory for a report of %zu steps", n);
            goto done;
        }
        for (size_t i = 0; i < n; i++)
            keep[i] = r->state[i] == MFU_STEP_STEADY;
        for (size_t k = 0; k < MFU_RS_COUNT_; k++)
            r->stat[k] = mfu__stat(r->col[k], keep, n, scratch);
        free(keep);
    }

    /* what is missing, with the option that supplies it */
    bool any_tps = false, any_tpd = false;
    for (size_t i = 0; i < n; i++) {
        any_tps = any_tps || isfinite(r->col[MFU_RS_TOKENS_PER_S][i]);
        any_tpd = any_tpd || isfinite(r->col[MFU_RS_TOKENS_PER_S_PER_DEVICE][i]);
    }
    if (!in->has_arch)
        add_missing(r, "model", "--model NAME or --config config.json",
                    "FLOPs per token, model TFLOP/s, MFU and HFU");
    else if (c->seq <= 0)
        add_missing(r, "sequence length", "--seq N", "FLOPs per token, MFU and HFU");
    if (!isfinite(c->peak_flops_per_s))
        add_missing(r, "device", "--device NAME (see 'mfu devices') or --peak-tflops X",
                    "MFU and HFU");
    bool sequences = m->global_batch > 0;
    for (size_t i = 0; i < n && !sequences; i++) {
        mfu_step s;
        mfu_run_get(run, i, &s);
        sequences = (isfinite(s.samples) && s.samples > 0) ||
                    (isfinite(s.samples_per_s) && s.samples_per_s > 0);
    }
    if (!any_tps && !any_tpd && sequences && c->seq <= 0 && in->has_arch)
        ; /* "sequence length" is listed above already */
    else if (!any_tps && !any_tpd && sequences && c->seq <= 0)
        add_missing(r, "sequence length", "--seq N",
                    "tokens/s (the log counts sequences), FLOP/s, MFU and HFU");
    else if (!any_tps && !any_tpd)
        add_missing(r, "tokens per step",
                    "--global-batch N (sequences, with --seq) or --tokens-per-step N",
                    "tokens/s, FLOP/s, MFU and HFU");
    else if (!isfinite(c->devices) && !any_tpd)
        add_missing(r, "device count", "--devices N", "per-device figures, MFU and HFU");

    mfu__report_compare(r, &cc);
    log_notes(r, run, prof);
    if (!in->no_analysis)
        st = mfu__report_explain(r, run, in, &cc.wl, err);
done:
    free(scratch);
    free(derived);
    if (st != MFU_OK) {
        mfu_report_free(r);
        return st;
    }
    *out = r;
    return MFU_OK;
}

/* ---- accessors ---------------------------------------------------------------------------- */

const mfu_report_context *mfu_report_get_context(const mfu_report *r)
{
    return r ? &r->ctx : NULL;
}

size_t mfu_report_missing_count(const mfu_report *r)
{
    return r ? r->nmissing : 0;
}

const mfu_report_missing *mfu_report_missing_at(const mfu_report *r, size_t i)
{
    return r && i < r->nmissing ? &r->missing[i] : NULL;
}

size_t mfu_report_step_count(const mfu_report *r)
{
    return r ? r->n : 0;
}

const int64_t *mfu_report_steps(const mfu_report *r)
{
    return r && r->n ? r->steps : NULL;
}

const double *mfu_report_column(const mfu_report *r, mfu_report_series s)
{
    if (!r || !r->n || (int)s < 0 || s >= MFU_RS_COUNT_)
        return NULL;
    return r->col[s];
}

mfu_report_step_state mfu_report_step_state_at(const mfu_report *r, size_t i)
{
    return r && i < r->n ? r->state[i] : MFU_STEP_UNUSABLE;
}

mfu_report_stat mfu_report_summary(const mfu_report *r, mfu_report_series s)
{
    mfu_report_stat none = {0, NAN, NAN, NAN, NAN};
    if (!r || (int)s < 0 || s >= MFU_RS_COUNT_)
        return none;
    return r->stat[s];
}

const mfu_report_warmup *mfu_report_get_warmup(const mfu_report *r)
{
    return r ? &r->warmup : NULL;
}

size_t mfu_report_comparison_count(const mfu_report *r)
{
    return r ? r->ncomparisons : 0;
}

const mfu_report_comparison *mfu_report_comparison_at(const mfu_report *r, size_t i)
{
    return r && i < r->ncomparisons ? &r->comparisons[i] : NULL;
}

size_t mfu_report_note_count(const mfu_report *r)
{
    return r ? r->nnotes : 0;
}

const char *mfu_report_note_at(const mfu_report *r, size_t i)
{
    return r && i < r->nnotes ? r->notes[i] : NULL;
}

const char *mfu_report_series_name(mfu_report_series s)
{
    static const char *const names[MFU_RS_COUNT_] = {
        "step_time_s",
        "tokens",
        "tokens_per_second",
        "tokens_per_second_per_device",
        "model_flops_per_second_per_device",
        "hardware_flops_per_second_per_device",
        "mfu",
        "hfu",
        "recomputed_flops_per_second_per_device",
        "recomputed_mfu",
        "reported_flops_per_second_per_device",
        "reported_mfu",
        "reported_tokens_per_second",
        "loss",
    };
    return (int)s >= 0 && s < MFU_RS_COUNT_ ? names[s] : "?";
}

const char *mfu_report_step_state_name(mfu_report_step_state s)
{
    static const char *const names[] = {"steady", "warmup", "artifact", "impossible", "unusable"};
    return (int)s >= 0 && (size_t)s < MFU__ARRAY_LEN(names) ? names[s] : "?";
}

const char *mfu_figure_name(mfu_figure f)
{
    static const char *const names[] = {"flops_per_second_per_device", "mfu", "tokens_per_second"};
    return (int)f >= 0 && (size_t)f < MFU__ARRAY_LEN(names) ? names[f] : "?";
}

const char *mfu_mismatch_name(mfu_mismatch m)
{
    static const char *const names[MFU_MISMATCH_COUNT_] = {
        "none",          "unexplained", "sparse_peak", "half_peak",      "a100_hardcoded",
        "a100_fallback", "stack_peak",  "no_gqa",      "no_swiglu",      "mlp_4h",
        "mha_4h",        "all_experts", "no_moe",      "full_attention", "causal_attention",
        "embeddings",    "recompute",   "padding",
    };
    return (int)m >= 0 && m < MFU_MISMATCH_COUNT_ ? names[m] : "?";
}

const char *mfu_report_source_name(mfu_report_source s)
{
    static const char *const names[] = {"none", "log", "input"};
    return (int)s >= 0 && (size_t)s < MFU__ARRAY_LEN(names) ? names[s] : "?";
}
