/*
 * context.c - what a run's figures are computed with (figures/figures.h).
 *
 * Order of precedence for every piece of context: the caller's input, then the log (step
 * line, then header). The device: the caller's name, else the log's; a device neither names
 * is inferred when the log's TFLOP/s ÷ its MFU is the peak of exactly one device of the
 * framework's own table (marked MFU_SRC_INFERRED). The dtype: the caller's, else the log's,
 * else bf16. The sequence length: the caller's, else the header's, else the first one a step
 * printed. FLOPs per token are counted twice: under the caller's convention (mfu's own MFU)
 * and as the framework counts them (what it would have printed).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "figures/figures.h"

void mfu__fctx_note(mfu__fctx *f, const char *fmt, ...)
{
    if (f->nnotes >= MFU__FIG_MAX_NOTES)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->notes[f->nnotes], MFU_REPORT_TEXT_MAX, fmt, ap);
    va_end(ap);
    f->nnotes++;
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
    mfu_flops fl;
    return mfu_flops_compute(&a, &wl, &o, &fl, NULL) == MFU_OK ? fl.attention
                                                               : MFU_ATTENTION_DEFAULT;
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

/* The median over the run's steps of the printed TFLOP/s ÷ the printed MFU, both per device
 * (NaN unless some step printed both). */
static double log_peak(const mfu_run *run)
{
    const double *fl = mfu_run_column(run, MFU_COL_FLOPS_PER_S);
    const double *mf = mfu_run_column(run, MFU_COL_MFU);
    size_t n = mfu_run_count(run);
    if (!fl || !mf || n == 0)
        return NAN;
    double *v = malloc(2 * n * sizeof *v);
    if (!v)
        return NAN;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        mfu_step s;
        mfu_run_get(run, i, &s);
        if (s.flops_per_s_scope == MFU_SCOPE_GLOBAL || s.mfu_scope == MFU_SCOPE_GLOBAL)
            continue;
        double p = fl[i] / mf[i];
        if (isfinite(p) && p > 0 && mf[i] > 0)
            v[k++] = p;
    }
    double med = mfu__median_finite(v, k, v + n);
    free(v);
    return med;
}

/* Resolve the device, dtype and peak. A device only the log names that mfu does not know is a
 * note, not an error. */
static mfu_status resolve_device(mfu__fctx *f, const mfu_run *run, const mfu_run_meta *m,
                                 mfu_error *err)
{
    const mfu_report_input *in = &f->in;
    mfu_report_context *c = &f->c;
    const char *name = in->device ? in->device : (m->device[0] ? m->device : NULL);
    bool stated_peak = false;
    c->device_source = in->device ? MFU_SRC_INPUT : name ? MFU_SRC_LOG : MFU_SRC_NONE;
    if (name)
        mfu__strlcpy(c->device_name, name, sizeof c->device_name);
    if (name) {
        mfu_error e;
        memset(&e, 0, sizeof e);
        /* "cpu" given by the caller is this machine's CPU; in a log it is another's */
        mfu_status st = mfu_device_resolve(name, in->device ? &f->cpu : NULL, &c->device, &e);
        if (st != MFU_OK) {
            if (in->device) {
                if (err)
                    *err = e;
                return st;
            }
            /* a canonical file states the peak its writer divided by (the monitor's "cpu") */
            stated_peak =
                isfinite(m->reported_peak_flops_per_s) && m->reported_peak_flops_per_s > 0;
            if (!stated_peak)
                mfu__fctx_note(f,
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
    /* no device named anywhere: the one the log's own peak names in the framework's table */
    if (!c->device && !name && !(in->peak_flops_per_s > 0) && f->prof) {
        double p = log_peak(run);
        const char *id = mfu__stack_device_for_peak(f->prof, p, 0.005);
        const mfu_device_info *d = NULL;
        if (id && mfu_device_find(id, &d, NULL) == MFU_OK) {
            c->device = d;
            c->device_source = MFU_SRC_INFERRED;
            mfu__strlcpy(c->device_name, d->id, sizeof c->device_name);
            mfu__fctx_note(f,
                           "device inferred: the log's TFLOP/s / MFU give a peak of %.5g "
                           "TFLOP/s, which only %s has in %s's table (give --device to override)",
                           p / 1e12, d->id, f->prof->framework);
        }
    }
    c->peak_flops_per_s = NAN;
    if (in->peak_flops_per_s > 0) {
        c->peak_flops_per_s = in->peak_flops_per_s;
        c->peak_source = MFU_SRC_INPUT;
    } else if (stated_peak) {
        c->peak_flops_per_s = m->reported_peak_flops_per_s;
        c->peak_source = MFU_SRC_LOG;
    } else if (c->device) {
        double p = 0;
        mfu_error e;
        memset(&e, 0, sizeof e);
        mfu_status st = mfu_device_peak_flops_per_s(c->device, c->dtype, false, &p, &e);
        if (st == MFU_OK) {
            c->peak_flops_per_s = p;
            c->peak_source = c->device_source == MFU_SRC_INFERRED ? MFU_SRC_INFERRED : MFU_SRC_LOG;
        } else if (in->dtype_given) {
            if (err)
                *err = e;
            return st;
        } else {
            mfu__fctx_note(f,
                           "%s has no %s peak in mfu's table: give --dtype (the precision of "
                           "the matmuls) or --peak-tflops X",
                           c->device->id, mfu_dtype_name(c->dtype));
        }
    }
    return MFU_OK;
}

/* Count the FLOPs per token under the caller's convention and under the framework's. */
static mfu_status resolve_flops(mfu__fctx *f, const mfu_run *run, mfu_error *err)
{
    const mfu_report_input *in = &f->in;
    const mfu__stack *prof = f->prof;
    mfu_report_context *c = &f->c;
    const mfu_run_meta *m = mfu_run_meta_get(run);
    c->model_flops_per_token = c->hardware_flops_per_token = c->stack_flops_per_token = NAN;
    c->convention = in->flops.convention;
    c->attention = in->flops.attention;
    if (!in->has_arch || f->wl.seq <= 0)
        return MFU_OK;
    mfu_flops fl;
    mfu_status st = mfu_flops_compute(&in->arch, &f->wl, &in->flops, &fl, err);
    if (st != MFU_OK)
        return st;
    c->has_model = true;
    mfu__strlcpy(c->model, in->arch.name, sizeof c->model);
    c->model_flops_per_token = fl.model_flops;
    c->hardware_flops_per_token = fl.hardware_flops;
    c->attention = fl.attention;

    /* the framework's own count */
    if (!prof || !c->stack.has_convention) {
        /* a generic log (or a framework without FLOPs): mfu's own convention stands in */
        f->sopt = in->flops;
        f->stack_flops_ok = true;
        c->stack_flops_per_token = fl.model_flops;
        return MFU_OK;
    }
    mfu_flops_options o;
    memset(&o, 0, sizeof o);
    o.convention = c->stack.convention;
    o.attention = c->stack.attention;
    if (mfu_convention_n_based(o.convention)) {
        if (in->flops.params > 0 && mfu_convention_n_based(in->flops.convention))
            o.params = in->flops.params;
        else if (prof->params_from_log && isfinite(m->model_params) && m->model_params > 0 &&
                 m->model_params < 9e15) {
            o.params = (int64_t)m->model_params;
            mfu__fctx_note(f, "N = %.0f in %s's formula, as the log printed it", m->model_params,
                           prof->framework);
        }
    }
    f->sopt = o;
    mfu_flops fs;
    mfu_error e;
    memset(&e, 0, sizeof e);
    if (mfu_flops_compute(&in->arch, &f->wl, &o, &fs, &e) != MFU_OK) {
        mfu__fctx_note(f, "cannot count FLOPs as %s does (%s): %s", prof->framework,
                       mfu_convention_name(o.convention), e.message);
        return MFU_OK;
    }
    f->stack_flops_ok = true;
    c->stack.attention = fs.attention;
    f->sopt.attention = fs.attention;
    c->stack_flops_per_token = c->stack.counts_recompute ? fs.hardware_flops : fs.model_flops;
    return MFU_OK;
}

void mfu__fctx_free(mfu__fctx *f)
{
    if (!f)
        return;
    free(f->runs);
    free(f->truns);
    memset(f, 0, sizeof *f);
}

mfu_status mfu__fctx_init(mfu__fctx *f, const mfu_run *run, const mfu_report_input *in_,
                          mfu_error *err)
{
    memset(f, 0, sizeof *f);
    mfu_report_input zero;
    memset(&zero, 0, sizeof zero);
    const mfu_report_input *in = in_ ? in_ : &zero;
    mfu_status st = check_input(in, err);
    if (st != MFU_OK)
        return st;
    f->in = *in;
    const mfu_run_meta *m = mfu_run_meta_get(run);
    if (in->stack && *in->stack) {
        f->prof = mfu__stack_find(in->stack);
        if (!f->prof) {
            char names[400] = "";
            for (size_t i = 0; mfu_report_stack_name(i); i++)
                mfu__appendf(names, sizeof names, "%s%s", i ? ", " : "", mfu_report_stack_name(i));
            return mfu__fail_field(err, MFU_E_UNKNOWN, "--stack",
                                   "no framework profile '%s': use one of %s", in->stack, names);
        }
    } else {
        f->prof = mfu__stack_find(m->format);
    }
    mfu_report_context *c = &f->c;
    c->start_time_s = start_time(run);
    mfu__stack_resolve(f->prof, run, c->start_time_s, &c->stack);
    if (!f->prof)
        c->stack.counts_padding = false;
    if (c->stack.has_convention && c->stack.attention == MFU_ATTENTION_DEFAULT)
        c->stack.attention = convention_attention(c->stack.convention);

    /* the sequence length: the caller's, the header's, else the first a step printed */
    f->wl = in->workload;
    c->seq_source = in->workload.seq > 0 ? MFU_SRC_INPUT : MFU_SRC_NONE;
    if (f->wl.seq <= 0 && m->seq_len > 0) {
        f->wl.seq = m->seq_len;
        c->seq_source = MFU_SRC_LOG;
    }
    const double *seq_col = mfu_run_column(run, MFU_COL_SEQ_LEN);
    size_t n = mfu_run_count(run);
    for (size_t i = 0; seq_col && f->wl.seq <= 0 && i < n; i++) {
        double v = seq_col[i];
        if (v >= 1 && v < 9e15) {
            f->wl.seq = (int64_t)v;
            c->seq_source = MFU_SRC_LOG;
        }
    }
    /* nothing in the input or the log: the length the model was trained at (a preset's), said */
    if (f->wl.seq <= 0 && in->has_arch && in->arch.trained_seq > 0) {
        f->wl.seq = in->arch.trained_seq;
        c->seq_source = MFU_SRC_INFERRED;
        mfu__fctx_note(f,
                       "sequence length %lld: the length %s was trained at (%s); the log gives "
                       "none: give --seq if the run used another",
                       (long long)in->arch.trained_seq,
                       in->arch.name[0] ? in->arch.name : "the model", in->arch.trained_seq_source);
    }
    c->seq = f->wl.seq > 0 ? f->wl.seq : 0;

    st = resolve_device(f, run, m, err);
    if (st == MFU_OK)
        st = resolve_flops(f, run, err);
    if (st != MFU_OK) {
        mfu__fctx_free(f);
        return st;
    }

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
    f->seq0 = c->seq > 0 ? (double)c->seq : NAN;
    f->rec0 = (int)f->wl.recompute;
    f->override_tokens = f->override_batch = f->fallback_tokens = f->fallback_batch = NAN;
    if (in->tokens_per_step > 0)
        f->override_tokens = in->tokens_per_step;
    else if (in->global_batch > 0 && isfinite(f->seq0))
        f->override_batch = (double)in->global_batch;
    if (isfinite(f->override_tokens) || isfinite(f->override_batch))
        c->tokens_source = MFU_SRC_INPUT;
    if (isfinite(m->tokens_per_step) && m->tokens_per_step > 0)
        f->fallback_tokens = m->tokens_per_step;
    else if (m->global_batch > 0)
        f->fallback_batch = (double)m->global_batch;
    f->batch0 = in->global_batch > 0  ? (double)in->global_batch
                : m->global_batch > 0 ? (double)m->global_batch
                                      : NAN;

    /* the framework's peak */
    c->stack_peak_flops_per_s = NAN;
    bool fb = false;
    double ps = mfu__stack_peak(f->prof, c->device, c->dtype, &fb, c->stack_peak_rule,
                                sizeof c->stack_peak_rule);
    if (ps > 0) {
        c->stack_peak_flops_per_s = ps;
        f->p_stack_fallback = fb;
    } else if (!f->prof && isfinite(c->peak_flops_per_s)) {
        c->stack_peak_flops_per_s = c->peak_flops_per_s;
        mfu__strlcpy(c->stack_peak_rule, "no framework profile: the device's dense peak",
                     sizeof c->stack_peak_rule);
    }
    c->real_fraction = 1;
    c->tokens_per_step = NAN;
    c->implied_peak_flops_per_s = c->implied_flops_per_token = NAN;
    return MFU_OK;
}
