/*
 * explain.c - the analysis of a report's run (mfu/analysis.h): segments, the decomposition at
 * every boundary, findings and invariants, on the report's own per-step figures.
 *
 * The series handed to mfu_analyze() is the report's, step by step (report.c resolved each
 * step's context): counted tokens and tokens/s of the whole job, useful tokens (the real
 * fraction), the FLOPs per token of that step's sequence length and recomputation, its device
 * count and dtype peak, batch, dtype and recomputation labels, clock, power, timers and loss.
 * Two fallbacks keep logs without everything analysable, and say so in the unit:
 *   - no device count but per-device tokens/s (torchtitan): the series is per device
 *     (devices = 1); MFU is unchanged, tokens/s are per device;
 *   - no tokens at all: tokens/s is steps/s (1 / step time) and there are no FLOPs.
 * Steps that several ranks printed add one row per rank (the run's per-rank observations):
 * that rank's own step time, or the row's step time scaled by the row's tokens/s over the
 * rank's. The straggler detector reads them.
 *
 * A figure the framework printed that disagrees with mfu's recomputation of it (compare.c)
 * becomes a "reported_mismatch" finding, after the analysis module's own; the roofline of the
 * workload (mfu/roofline.h) a "roofline" finding when the micro-batch is known.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "mfu/roofline.h"
#include "report/internal.h"
#include "run/step.h"
#include "util/util.h"

/* Whether a row of column k of r's figures is above 0 (an absent column is NaN in every row:
 * not read, the pages of a mapped one would count as resident). */
static bool any_positive(const mfu_report *r, int k)
{
    for (size_t i = 0; r->cols.present[k] && i < r->n; i++)
        if (r->cols.v[k][i] > 0)
            return true;
    return false;
}

static mfu__unit pick_unit(const mfu_report *r)
{
    bool tps = any_positive(r, MFU_RS_TOKENS_PER_S);
    bool tpd = any_positive(r, MFU_RS_TOKENS_PER_S_PER_DEVICE);
    if (tpd && (r->fig.in.per_device || !tps))
        return MFU__UNIT_DEVICE;
    return tps ? MFU__UNIT_TOKENS : MFU__UNIT_STEPS;
}

/* The report's figure column k, NULL when no step has it. */
static const double *fcol(const mfu_report *r, int k)
{
    return r->cols.present[k] ? r->cols.v[k] : NULL;
}

/* bytes (at least 1) for the analysis to own (in->give), NULL when out of memory or give[] is
 * full. */
static void *give_bytes(mfu__analysis_cols *in, size_t bytes)
{
    if (in->ngive == MFU__ARRAY_LEN(in->give))
        return NULL;
    void *p = malloc(bytes ? bytes : 1);
    if (p)
        in->give[in->ngive++] = p;
    return p;
}

/* A column of n doubles for the analysis to own. */
static double *give_col(mfu__analysis_cols *in, size_t n)
{
    return give_bytes(in, n * sizeof(double));
}

/* A copy of the run's column c for the analysis to own (the run may grow or go while the
 * report lives); NULL when the run has none. false when out of memory or give[] is full. */
static bool run_col(mfu__analysis_cols *in, const mfu_run *run, mfu_column c, const double **out)
{
    double *q;
    bool ok = mfu__report_run_copy(run, c, &q);
    if (ok && q && in->ngive == MFU__ARRAY_LEN(in->give)) {
        free(q);
        ok = false;
        q = NULL;
    }
    if (q)
        in->give[in->ngive++] = q;
    *out = q;
    return ok;
}

/* The label id of each step's dtype and recompute (names as mfu_dtype_name and
 * mfu_recompute_name give them, ids in the order of first appearance, as mfu_series_append
 * interns them). false when out of memory or over the label limits. */
static bool job_labels(const mfu_report *r, mfu__analysis_cols *in)
{
    size_t n = r->n;
    uint8_t *dt = give_bytes(in, n), *rc = give_bytes(in, n);
    if (!dt || !rc)
        return false;         /* what was given is freed with the rest */
    int id_d[256], id_r[256]; /* by code: the id, -1 not yet interned */
    for (int i = 0; i < 256; i++)
        id_d[i] = id_r[i] = -1;
    for (size_t i = 0; i < n; i++) {
        int8_t d = r->cols.dtype[i], rec = r->cols.recompute[i];
        uint8_t cd = (uint8_t)d, cr = (uint8_t)rec;
        int added;
        if (id_d[cd] < 0)
            id_d[cd] = mfu__label_intern(in->labels, &in->nlabels, mfu_dtype_name((mfu_dtype)d),
                                         true, &added);
        if (id_r[cr] < 0)
            id_r[cr] = mfu__label_intern(in->labels, &in->nlabels,
                                         mfu_recompute_name((mfu_recompute)rec), true, &added);
        if (id_d[cd] < 0 || id_r[cr] < 0)
            return false;
        dt[i] = (uint8_t)id_d[cd];
        rc[i] = (uint8_t)id_r[cr];
    }
    in->dtype = dt;
    in->recompute = rc;
    return true;
}

/* The whole job's rows for the analysis: the report's own figures (tokens/s, step time, MFU and
 * HFU as the figures module computed them, so that the analysis shows the same numbers), read
 * in place, and what they were computed with; columns the unit makes (per device, steps/s) and
 * the run's telemetry are the analysis's. false when out of memory. */
static bool job_cols(const mfu_report *r, const mfu_run *run, mfu__analysis_cols *in)
{
    size_t n = r->n;
    memset(in, 0, sizeof *in);
    in->n = n;
    in->step = r->steps;
    in->nan = r->cols.nan; /* the figures' NaN column (mapped where long: no fresh pages) */
    in->keep_work = true;  /* the summaries' scratch (report.c: mfu__analysis_take_work) */
    const double *st = fcol(r, MFU__FC_STEP_TIME_S);
    const double *tokens = NULL;
    in->col[MFU_SC_STEP_TIME_S] = st;
    switch (r->unit) {
    case MFU__UNIT_TOKENS:
        tokens = fcol(r, MFU__FC_TOKENS);
        in->col[MFU_SC_TOKENS_PER_S] = fcol(r, MFU__FC_TOKENS_PER_S);
        in->col[MFU_SC_DEVICES] = fcol(r, MFU__FC_DEVICES);
        break;
    case MFU__UNIT_DEVICE: {
        const double *tpd = r->cols.v[MFU__FC_TOKENS_PER_S_PER_DEVICE];
        const double *stv = r->cols.v[MFU__FC_STEP_TIME_S];
        double *tok = give_col(in, n), *one = give_col(in, n);
        if (!tok || !one)
            return false;
        for (size_t i = 0; i < n; i++) {
            tok[i] = tpd[i] * stv[i]; /* NaN without a step time */
            one[i] = 1;
        }
        in->col[MFU_SC_TOKENS_PER_S] = tpd;
        in->col[MFU_SC_DEVICES] = one;
        tokens = tok;
        break;
    }
    case MFU__UNIT_STEPS: {
        const double *stv = r->cols.v[MFU__FC_STEP_TIME_S];
        double *sps = give_col(in, n);
        if (!sps)
            return false;
        for (size_t i = 0; i < n; i++)
            sps[i] = stv[i] > 0 ? 1.0 / stv[i] : NAN;
        in->col[MFU_SC_TOKENS_PER_S] = sps;
        in->col[MFU_SC_DEVICES] = fcol(r, MFU__FC_DEVICES);
        break;
    }
    }
    in->col[MFU_SC_TOKENS] = tokens;
    const double *rho = fcol(r, MFU__FC_USEFUL);
    double rho0;
    if (rho && mfu__fcols_const(&r->cols, MFU__FC_USEFUL, &rho0) && !(rho0 < 1))
        rho = NULL;   /* no step has padding (and the mapped rows stay unread) */
    size_t first = n; /* the first step with padding: useful tokens from there on */
    for (size_t i = 0; rho && tokens && i < n && first == n; i++)
        if (rho[i] < 1 && isfinite(tokens[i]))
            first = i;
    if (first < n) {
        double *ut = give_col(in, n);
        if (!ut)
            return false;
        for (size_t i = 0; i < n; i++)
            ut[i] = rho[i] < 1 && isfinite(tokens[i]) ? tokens[i] * rho[i] : NAN;
        in->col[MFU_SC_USEFUL_TOKENS] = ut;
    }
    if (r->unit != MFU__UNIT_STEPS) {
        in->col[MFU_SC_MODEL_FLOPS_PER_TOKEN] = fcol(r, MFU__FC_MODEL_FPT);
        in->col[MFU_SC_HARDWARE_FLOPS_PER_TOKEN] = fcol(r, MFU__FC_HARDWARE_FPT);
        in->col[MFU_SC_MFU] = fcol(r, MFU__FC_MFU);
        in->col[MFU_SC_HFU] = fcol(r, MFU__FC_HFU);
        /* the figures' FLOP/s per device are the analysis's, to the bit, where they agree */
        in->hint[MFU_D_MODEL_FLOPS_PER_S_PER_DEVICE] =
            fcol(r, MFU__FC_MODEL_FLOPS_PER_S_PER_DEVICE);
        in->hint[MFU_D_HARDWARE_FLOPS_PER_S_PER_DEVICE] =
            fcol(r, MFU__FC_HARDWARE_FLOPS_PER_S_PER_DEVICE);
    }
    in->col[MFU_SC_PEAK_FLOPS_PER_S] = fcol(r, MFU__FC_PEAK);
    in->col[MFU_SC_SEQ_LEN] = fcol(r, MFU__FC_SEQ);
    in->col[MFU_SC_GLOBAL_BATCH] = fcol(r, MFU__FC_BATCH);
    in->col[MFU_SC_LOSS] = fcol(r, MFU__FC_LOSS); /* the run's loss, as the figures read it */
    /* a figure of one value in every row (mapped: mfu__fcols_const) is read at its first row
     * only, so that its pages do not count as resident (docs/internals/analysis.md) */
    for (int c = 0; c < MFU_SC_COUNT_; c++)
        for (int k = 0; in->col[c] && k < MFU__FC_COUNT; k++) {
            double x;
            if (fcol(r, k) == in->col[c] && mfu__fcols_const(&r->cols, k, &x)) {
                in->whole[c] = true;
                break;
            }
        }
    static const struct {
        mfu_series_col sc;
        mfu_column rc;
    } tele[] = {{MFU_SC_TIME_S, MFU_COL_TIME_S},
                {MFU_SC_CLOCK_MHZ, MFU_COL_CLOCK_MHZ},
                {MFU_SC_POWER_W, MFU_COL_POWER_W},
                {MFU_SC_POWER_LIMIT_W, MFU_COL_POWER_LIMIT_W},
                {MFU_SC_DATA_LOADING_S, MFU_COL_DATA_LOADING_S},
                {MFU_SC_COMM_S, MFU_COL_COMM_S},
                {MFU_SC_OPTIMIZER_S, MFU_COL_OPTIMIZER_S}};
    for (size_t k = 0; k < MFU__ARRAY_LEN(tele); k++)
        if (!run_col(in, run, tele[k].rc, &in->col[tele[k].sc]))
            return false;
    const uint32_t *flags = mfu__run_flags(run);
    if (flags) {
        uint32_t *fl = give_bytes(in, n * sizeof *fl);
        if (!fl)
            return false;
        memcpy(fl, flags, n * sizeof *fl);
        in->flags = fl;
    }
    return job_labels(r, in);
}

/* One rank's own step time for row j: printed (st), else the row's step time scaled by the
 * row's tokens/s over the rank's (tps), else 1 / tps: the straggler detector compares ranks
 * within one step, so a step only needs one unit for all its ranks. */
static double rank_time(const mfu_report *r, const mfu_step *row, size_t j, double st, double tps)
{
    if (st > 0 && isfinite(st))
        return st;
    if (!(tps > 0 && isfinite(tps)))
        return NAN;
    double rt = r->cols.v[MFU_RS_STEP_TIME_S][j];
    if (row->tokens_per_s > 0 && isfinite(row->tokens_per_s) && rt > 0 && isfinite(rt))
        return rt * row->tokens_per_s / tps;
    return 1.0 / tps;
}

static mfu_status add_rank_rows(const mfu_report *r, const mfu_run *run, mfu_series *s,
                                mfu_error *err)
{
    size_t nobs = mfu_run_rank_obs_count(run);
    if (nobs == 0)
        return MFU_OK;
    bool *own = calloc(r->n, sizeof *own);
    if (!own)
        return mfu__fail(err, MFU_E_NOMEM, 0, "out of memory for the per-rank rows");
    mfu_status st = MFU_OK;
    for (size_t k = 0; k < nobs && st == MFU_OK; k++) {
        mfu_rank_obs o;
        mfu_run_rank_obs_get(run, k, &o);
        if (o.row >= r->n)
            continue;
        mfu_step row;
        mfu_run_get(run, o.row, &row);
        mfu_series_row x;
        mfu_series_row_init(&x);
        x.step = row.step;
        if (!own[o.row] && row.rank >= 0) {
            own[o.row] = true;
            x.rank = row.rank;
            x.step_time_s = rank_time(r, &row, o.row, row.step_time_s, row.tokens_per_s);
            if (isfinite(x.step_time_s))
                st = mfu_series_append(s, &x, err);
        }
        x.rank = o.rank;
        x.step_time_s = rank_time(r, &row, o.row, o.step_time_s, o.tokens_per_s);
        if (st == MFU_OK && isfinite(x.step_time_s))
            st = mfu_series_append(s, &x, err);
    }
    free(own);
    return st;
}

/* "MFU 38.2 %", "412 TFLOP/s", "1.23e+06 tokens/s" */
static void fmt_fig(char *buf, size_t n, mfu_figure f, double v)
{
    if (f == MFU_FIGURE_MFU)
        snprintf(buf, n, "%.2f %%", 100 * v);
    else if (f == MFU_FIGURE_FLOPS_PER_S)
        mfu__fmt_si(buf, n, v, "FLOP/s");
    else
        snprintf(buf, n, "%.4g tokens/s", v);
}

static const char *mismatch_next(mfu_mismatch m)
{
    switch (m) {
    case MFU_MISMATCH_SPARSE_PEAK:
    case MFU_MISMATCH_HALF_PEAK:
    case MFU_MISMATCH_A100_HARDCODED:
    case MFU_MISMATCH_A100_FALLBACK:
    case MFU_MISMATCH_STACK_PEAK:
        return "Divide by the device's dense peak for the dtype in use ('mfu devices NAME'); "
               "compare runs by mfu's MFU, which uses one convention and the dense peak";
    case MFU_MISMATCH_NO_GQA:
    case MFU_MISMATCH_NO_SWIGLU:
    case MFU_MISMATCH_MLP_4H:
    case MFU_MISMATCH_MHA_4H:
    case MFU_MISMATCH_ALL_EXPERTS:
    case MFU_MISMATCH_NO_MOE:
    case MFU_MISMATCH_FULL_ATTENTION:
    case MFU_MISMATCH_CAUSAL_ATTENTION:
    case MFU_MISMATCH_EMBEDDINGS:
        return "Count FLOPs from the architecture (GQA, SwiGLU, MoE top-k, causal attention) "
               "as mfu's exact convention does, and quote MFU with its convention named";
    case MFU_MISMATCH_RECOMPUTE:
        return "The printed figure counts recomputation: it is HFU, not MFU; quote MFU from "
               "model FLOPs (mfu's MFU)";
    case MFU_MISMATCH_PADDING:
        return "The printed figure counts padding tokens as work: log useful tokens, or give "
               "--real-tokens-per-step, and quote MFU of real tokens";
    default:
        return "Check the context given to mfu (--model, --seq, --devices, --device, --dtype) "
               "against the run's; if it is right, the framework counts in a way mfu does not "
               "know (see its formula)";
    }
}

/* One finding per printed figure that disagrees with its recomputation. */
static mfu_status mismatch_findings(mfu_report *r, mfu_error *err)
{
    int64_t first = 0, last = 0;
    bool any = false;
    for (size_t i = 0; i < r->n; i++)
        if (r->state[i] == MFU_STEP_STEADY) {
            if (!any)
                first = r->steps[i];
            last = r->steps[i];
            any = true;
        }
    for (size_t k = 0; k < r->ncomparisons; k++) {
        const mfu_report_comparison *c = &r->comparisons[k];
        if (c->agrees)
            continue;
        mfu_finding f;
        memset(&f, 0, sizeof f);
        mfu__strlcpy(f.kind, "reported_mismatch", sizeof f.kind);
        f.severity = MFU_SEV_WARNING;
        f.first_step = first;
        f.last_step = last;
        const char *names[] = {"reported", "recomputed", "ratio", "steps"};
        double vals[] = {c->reported, c->recomputed, c->ratio, (double)c->steps};
        for (size_t q = 0; q < 4; q++) {
            mfu__strlcpy(f.evidence[q].name, names[q], sizeof f.evidence[q].name);
            f.evidence[q].value = vals[q];
        }
        f.nevidence = 4;
        char a[48], b[48];
        fmt_fig(a, sizeof a, c->figure, c->reported);
        fmt_fig(b, sizeof b, c->figure, c->recomputed);
        /* appended piece by piece: the explanation may not fit, and is cut */
        f.summary[0] = '\0';
        mfu__appendf(f.summary, sizeof f.summary, "%s: printed %s, recomputed %s (ratio %.3f)",
                     c->label, a, b, c->ratio);
        if (c->explanation[0])
            mfu__appendf(f.summary, sizeof f.summary, ": %s", c->explanation);
        mfu__strlcpy(f.next_step, mismatch_next(c->cause), sizeof f.next_step);
        mfu_status st = mfu_analysis_add_finding(r->analysis, &f, err);
        if (st != MFU_OK && st != MFU_E_LIMIT)
            return st;
    }
    return MFU_OK;
}

/* The roofline of the run's workload on its device (mfu/roofline.h), as a finding over the
 * steady steps: only when the model, the sequence length, a device with a memory bandwidth and
 * the micro-batch are known (a guessed micro-batch would make a guessed ceiling). */
static mfu_status roofline_finding(mfu_report *r, const mfu_run *run, const mfu_report_input *in,
                                   const mfu_workload *wl, mfu_error *err)
{
    const mfu_report_context *c = &r->fig.c;
    const mfu_run_meta *m = mfu_run_meta_get(run);
    int64_t mb = in->micro_batch > 0 ? in->micro_batch : m->micro_batch;
    if (!c->has_model || !c->device || mb <= 0 || wl->seq <= 0)
        return MFU_OK;
    mfu_roofline_config cfg;
    mfu_roofline_config_init(&cfg);
    cfg.micro_batch = mb;
    cfg.tp = in->tp > 0 ? in->tp : 1;
    cfg.dtype = c->dtype;
    if (mfu_roofline_config_set_device(&cfg, c->device, NULL) != MFU_OK)
        return MFU_OK; /* no bandwidth or no peak for the dtype: no roofline */
    if (in->peak_flops_per_s > 0)
        cfg.peak_flops_per_s = in->peak_flops_per_s;
    mfu_roofline *rl = malloc(sizeof *rl);
    if (!rl)
        return mfu__fail(err, MFU_E_NOMEM, 0, "out of memory for the roofline");
    mfu_error e;
    memset(&e, 0, sizeof e);
    mfu_status st = mfu_roofline_compute(&in->arch, wl, &cfg, rl, &e);
    if (st != MFU_OK) {
        free(rl);
        mfu__report_note(r, "no roofline: %s", e.message);
        return MFU_OK;
    }
    const mfu_level *L = mfu_analysis_steady(r->analysis);
    mfu_finding f;
    st = mfu_roofline_finding(rl, MFU_ROOFLINE_WARN_BELOW, L->first_step, L->last_step, &f, err);
    free(rl);
    if (st == MFU_OK)
        st = mfu_analysis_add_finding(r->analysis, &f, err);
    return st == MFU_E_LIMIT ? MFU_OK : st;
}

/* MFU below what any healthy run reaches on its kind of device: the number is then about the
 * setup, not about kernels. On a CPU an optimised BLAS (OpenBLAS, MKL, BLIS) runs large
 * products at half the fp32 peak or more, and a reference BLAS at a few percent (measured in
 * docs/analysis.md: Debian's libblas3 2.7 %); on an accelerator published training runs sit at
 * 20-60 % (published-cases.md), and under 1 % is a device count, device or dtype that is not the
 * run's, or a run that is not on the device at all. A roofline ceiling near the MFU (a workload
 * too small for the device) explains a low one: then no finding. */
#define LOW_MFU_CPU 0.05
#define LOW_MFU_ACCELERATOR 0.01

static mfu_status low_mfu_finding(mfu_report *r, mfu_error *err)
{
    const mfu_report_context *c = &r->fig.c;
    const mfu_level *L = r->analysis ? mfu_analysis_steady(r->analysis) : NULL;
    if (!L || !c->device || !(L->mfu.value > 0))
        return MFU_OK;
    bool cpu = strcmp(c->device->id, "cpu") == 0;
    double floor = cpu ? LOW_MFU_CPU : LOW_MFU_ACCELERATOR;
    if (!(L->mfu.value < floor))
        return MFU_OK;
    for (size_t i = 0; i < mfu_analysis_finding_count(r->analysis); i++) {
        const mfu_finding *g = mfu_analysis_finding(r->analysis, i);
        for (size_t e = 0; strcmp(g->kind, "roofline") == 0 && e < g->nevidence; e++)
            if (strcmp(g->evidence[e].name, "ceiling_fraction") == 0 &&
                g->evidence[e].value < 4 * L->mfu.value)
                return MFU_OK;
    }
    mfu_finding f;
    memset(&f, 0, sizeof f);
    mfu__strlcpy(f.kind, "implausible_mfu", sizeof f.kind);
    f.severity = MFU_SEV_WARNING;
    f.first_step = L->first_step;
    f.last_step = L->last_step;
    const char *names[] = {"mfu", "floor", "peak_flops_per_s", "devices"};
    double vals[] = {L->mfu.value, floor, c->peak_flops_per_s, c->devices};
    for (size_t q = 0; q < 4; q++) {
        mfu__strlcpy(f.evidence[q].name, names[q], sizeof f.evidence[q].name);
        f.evidence[q].value = vals[q];
    }
    f.nevidence = 4;
    char peak[32];
    mfu__fmt_si_digits(peak, sizeof peak, c->peak_flops_per_s, "FLOP/s", 4);
    if (cpu) {
        snprintf(f.summary, sizeof f.summary,
                 "MFU %.2g %% of this CPU's %s peak (%s), below %.0f %%: an optimised BLAS "
                 "(OpenBLAS, MKL, BLIS) runs large matrix products at half the peak or more, a "
                 "reference BLAS or a single thread at a few percent",
                 100 * L->mfu.value, mfu_dtype_name(c->dtype), peak, 100 * floor);
        snprintf(f.next_step, sizeof f.next_step,
                 "Check which BLAS the framework uses (torch.__config__.show(), "
                 "numpy.show_config(): OpenBLAS, MKL or BLIS, not the reference libblas), its "
                 "threads (torch.get_num_threads(), OMP_NUM_THREADS), and that --dtype is the "
                 "run's (fp32 on most CPUs)");
    } else {
        snprintf(f.summary, sizeof f.summary,
                 "MFU %.2g %% of %s's dense %s peak (%s per device): below %.0f %%, far under "
                 "the 20-60 %% that training runs publish; the figure is likely about the setup "
                 "given to mfu, not about the kernels",
                 100 * L->mfu.value, c->device->id, mfu_dtype_name(c->dtype), peak, 100 * floor);
        snprintf(f.next_step, sizeof f.next_step,
                 "Check --devices (every device of the job, not nodes), --device and --dtype "
                 "against the run, the tokens per step, and that the model ran on the "
                 "accelerator, not on the CPU");
    }
    mfu_status st = mfu_analysis_add_finding(r->analysis, &f, err);
    return st == MFU_E_LIMIT ? MFU_OK : st;
}

/* The report's step states and warm-up from the analysis's row states: one rule decides which
 * steps count, for the summaries and for the levels. */
static void states_from(mfu_report *r, const mfu_analysis *a)
{
    static const mfu_report_step_state map[] = {MFU_STEP_STEADY,     MFU_STEP_WARMUP,
                                                MFU_STEP_SETTLE,     MFU_STEP_ARTIFACT,
                                                MFU_STEP_IMPOSSIBLE, MFU_STEP_UNUSABLE};
    mfu_report_warmup *w = &r->warmup;
    const mfu_warmup *aw = mfu_analysis_warmup(a);
    memset(w, 0, sizeof *w);
    w->checked = aw->checked;
    w->mid_run = aw->mid_run;
    double sum = 0, med = mfu_analysis_steady(a)->tokens_per_s.value;
    const double *tps = mfu_analysis_derived(a, MFU_D_TOKENS_PER_S);
    for (size_t i = 0; i < r->n; i++) {
        mfu_row_state s = mfu_analysis_row_state(a, i);
        r->state[i] = (size_t)s < MFU__ARRAY_LEN(map) ? map[s] : MFU_STEP_UNUSABLE;
        switch (r->state[i]) {
        case MFU_STEP_STEADY: w->steady++; break;
        case MFU_STEP_WARMUP:
            if (w->steps == 0)
                w->first_step = r->steps[i];
            w->last_step = r->steps[i];
            w->steps++;
            sum += tps[i];
            break;
        case MFU_STEP_SETTLE: w->settle++; break;
        case MFU_STEP_ARTIFACT: w->artifacts++; break;
        case MFU_STEP_IMPOSSIBLE: w->impossible++; break;
        default: w->unusable++; break;
        }
    }
    w->slowdown = w->steps ? sum / (double)w->steps / med - 1 : NAN;
}

mfu_status mfu__report_explain(mfu_report *r, const mfu_run *run, mfu_run *drop,
                               const mfu_report_input *in, mfu_error *err)
{
    mfu_analysis_options o;
    if (in->analysis)
        o = *in->analysis;
    else
        mfu_analysis_options_init(&o);
    o.flops_relative = r->fig.c.flops_relative;
    if (in->no_analysis) { /* which steps count and the steady level, nothing more */
        o.steady_only = true;
        o.intervals = false;
    }
    r->unit = pick_unit(r);
    snprintf(o.rate_name, sizeof o.rate_name, "%s",
             r->unit == MFU__UNIT_TOKENS   ? "tokens/s"
             : r->unit == MFU__UNIT_DEVICE ? "tokens/s per device"
                                           : "steps/s");
    mfu__analysis_cols cols;
    if (!job_cols(r, run, &cols)) {
        for (size_t i = 0; i < cols.ngive; i++)
            free(cols.give[i]);
        return mfu__fail(err, MFU_E_NOMEM, 0, "out of memory for the analysis's columns");
    }
    mfu_series *ranks = NULL; /* the per-rank rows, when the run has any */
    mfu_status st = MFU_OK;
    if (!in->no_analysis && mfu_run_rank_obs_count(run) > 0) {
        ranks = mfu_series_new();
        st = ranks ? add_rank_rows(r, run, ranks, err)
                   : mfu__fail(err, MFU_E_NOMEM, 0, "out of memory for the per-rank rows");
    }
    mfu_analysis *a = NULL;
    /* nothing reads the run's rows from here on: the columns the figures borrowed are theirs,
     * the rest go */
    if (drop && st == MFU_OK && !mfu__fcols_adopt(&r->cols, drop))
        st = mfu__fail(err, MFU_E_NOMEM, 0, "out of memory for the figures' columns");
    mfu__run_drop_columns(drop);
    if (drop) /* nothing after the analysis's input reads the per-row codes (a report whose
                 run goes next: not a live one, which builds more rows) */
        mfu__fcols_drop_codes(&r->cols);
    if (st == MFU_OK)
        st = mfu__analyze_cols(&cols, ranks, &o, &a, err); /* reads r->cols in place */
    for (size_t i = 0; i < cols.ngive; i++)                /* not given when an error came first */
        free(cols.give[i]);
    mfu_series_free(ranks);
    if (st != MFU_OK)
        return st;
    states_from(r, a);
    if (in->no_analysis) {
        mfu_analysis_free(a);
        return MFU_OK;
    }
    r->analysis = a;
    if (mfu_analysis_segment_count(a) == 0)
        mfu__report_note(r, "no analysis: no step has a throughput");
    if (r->unit == MFU__UNIT_DEVICE && !in->per_device)
        mfu__report_note(r, "the analysis is per device (tokens/s per device): the device "
                            "count is unknown; give --devices N for whole-job figures");
    else if (r->unit == MFU__UNIT_STEPS)
        mfu__report_note(r, "the analysis counts steps, not tokens (steps/s): the log gives no "
                            "tokens per step; give --global-batch N with --seq, or "
                            "--tokens-per-step N");
    return MFU_OK;
}

/* The findings the report adds to its analysis: printed figures that disagree with their
 * recomputation, and the roofline of the workload (after the comparisons are made). */
mfu_status mfu__report_findings(mfu_report *r, const mfu_run *run, const mfu_report_input *in,
                                const mfu_workload *wl, mfu_error *err)
{
    if (!r->analysis)
        return MFU_OK;
    mfu_status ms = mismatch_findings(r, err);
    if (ms == MFU_OK)
        ms = roofline_finding(r, run, in, wl, err);
    return ms == MFU_OK ? low_mfu_finding(r, err) : ms;
}

/* ---- accessors ------------------------------------------------------------------------------ */

const mfu_analysis *mfu_report_analysis(const mfu_report *r)
{
    return r ? r->analysis : NULL;
}

mfu_analysis *mfu__report_take_analysis(mfu_report *r)
{
    if (!r)
        return NULL;
    mfu_analysis *a = r->analysis;
    r->analysis = NULL;
    if (a && !mfu__analysis_own(a)) { /* it reads the report's columns: copies, to outlive it */
        mfu_analysis_free(a);
        a = NULL;
    }
    return a;
}

const char *mfu_report_analysis_unit(const mfu_report *r)
{
    if (!r || !r->analysis)
        return NULL;
    return r->unit == MFU__UNIT_TOKENS   ? "tokens"
           : r->unit == MFU__UNIT_DEVICE ? "tokens per device"
                                         : "steps";
}

static mfu_status no_analysis(mfu_error *err)
{
    return mfu__fail(err, MFU_E_MISSING, 0,
                     "the report has no analysis (no step with a throughput, or it was turned "
                     "off): check the log, or give --tokens-per-step / --global-batch");
}

mfu_status mfu_report_expect(mfu_report *r, const char *expr, mfu_invariant_result *out,
                             mfu_error *err)
{
    if (!r || !expr)
        return mfu__fail(err, MFU_E_INVALID, 0, "mfu_report_expect: report and expr are required");
    if (!r->analysis)
        return no_analysis(err);
    return mfu_analysis_expect(r->analysis, expr, out, err);
}

mfu_status mfu_report_add_finding(mfu_report *r, const mfu_finding *f, mfu_error *err)
{
    if (!r || !f)
        return mfu__fail(err, MFU_E_INVALID, 0,
                         "mfu_report_add_finding: report and finding are required");
    if (!r->analysis)
        return no_analysis(err);
    return mfu_analysis_add_finding(r->analysis, f, err);
}
