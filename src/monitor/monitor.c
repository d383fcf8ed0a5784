/*
 * monitor.c - MFU inside a training loop (mfu/monitor.h).
 *
 * The monitor resolves its context once (the figures module's context of its run: the model's
 * FLOPs per token at the configured sequence length, the device's dense peak for the dtype),
 * then each record is one run append plus the figures module's per-step rule
 * (mfu__figures_row: the one every view of a run uses), so mfu_monitor_report()'s MFU series
 * holds exactly the values mfu_monitor_record() returned (tests/unit/test_monitor.c checks
 * that). A step that gives its own sequence length, device count or dtype is counted with
 * those, as the report does; the FLOPs per token of the few lengths a run has are cached.
 */
#include "mfu/monitor.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "figures/energy.h"
#include "figures/figures.h"
#include "ingest/canonical.h"
#include "mfu/device.h"
#include "mfu/ingest.h"
#include "run/step.h"
#include "util/util.h"

struct mfu_monitor {
    mfu_run *run;
    bool has_model;
    mfu_arch arch;
    mfu_workload wl;
    mfu_flops_options fo;
    double fpt, hfpt;           /* model / hardware FLOPs per token at the configured length */
    const mfu_device_info *dev; /* a table entry, or this machine's CPU in cpu_slot */
    mfu_device_slot cpu_slot;
    mfu_dtype dtype;
    bool dtype_given;
    double peak;    /* dense peak of one device for dtype, NaN without device or peak */
    double devices; /* devices in the job */
    char device_name[128];
    FILE *file;         /* jsonl_path, appended to; NULL when none */
    size_t written;     /* rows of run already in the file or in pending */
    mfu__wbuf pending;  /* rows not yet written to file (whole lines) */
    double flush_every; /* seconds between writes of pending; 0: at every record */
    int64_t flushed_ns; /* monotonic ns of the last write (or the open) */
    int64_t due_ns;     /* flushed_ns + flush_every: the first record from then on writes */
    mfu_step rows[2];   /* the rows of the last two records as the run holds them (the
                           append gives them back): rows[cur] the last, at last_row */
    int cur;
    size_t last_row; /* valid when last_ok: no merge since it was read */
    bool last_ok;
    mfu_step blank;      /* mfu_step_init's step, copied by each mfu_monitor_record */
    mfu_report_input in; /* the report's input (its device points at device_name) */
    mfu__fctx fig;       /* the figures context of the run (what every record is counted with) */
    mfu_nvml *nvml;      /* with cfg->nvml: the session sampled at each record; else NULL */
    size_t nvml_index;
    double energy_prev_j; /* the GPU's energy counter at the last record that read it, J; NaN:
                             none yet, or the last record did not read it */
};

/* Model and hardware FLOPs per token of m's model at sequence length seq, recompute rec. */
static mfu_status count_flops(const mfu_monitor *m, int64_t seq, mfu_recompute rec, double *model,
                              double *hw, mfu_error *err)
{
    mfu_workload wl = m->wl;
    wl.seq = seq;
    wl.recompute = rec;
    mfu_flops f;
    mfu_status st = mfu_flops_compute(&m->arch, &wl, &m->fo, &f, err);
    if (st != MFU_OK)
        return st;
    *model = f.model_flops;
    *hw = f.hardware_flops;
    return MFU_OK;
}

static bool is_config_path(const char *s)
{
    struct stat sb;
    size_t n = strlen(s);
    return strchr(s, '/') || (n > 5 && strcmp(s + n - 5, ".json") == 0) || stat(s, &sb) == 0;
}

static mfu_status resolve_model(mfu_monitor *m, const mfu_monitor_config *c, mfu_error *err)
{
    if (!c->arch && !c->model)
        return MFU_OK;
    mfu_status st;
    if (c->arch) {
        st = mfu_arch_resolve(c->arch, &m->arch, err);
    } else if (is_config_path(c->model)) {
        st = mfu_arch_from_config_json(c->model, NULL, &m->arch, err);
    } else {
        st = mfu_preset_find(c->model, &m->arch, err);
    }
    if (st != MFU_OK)
        return st;
    if (c->seq <= 0)
        return mfu__fail_field(err, MFU_E_MISSING, "seq",
                               "a model needs the sequence length: set seq (tokens per "
                               "sequence) in the monitor's configuration");
    m->wl.seq = c->seq;
    if (c->convention &&
        (st = mfu_convention_parse(c->convention, &m->fo.convention, err)) != MFU_OK)
        return st;
    if (c->recompute && (st = mfu_recompute_parse(c->recompute, &m->wl.recompute, err)) != MFU_OK)
        return st;
    if (c->attention && (st = mfu_attention_parse(c->attention, &m->fo.attention, err)) != MFU_OK)
        return st;
    if ((st = count_flops(m, c->seq, m->wl.recompute, &m->fpt, &m->hfpt, err)) != MFU_OK)
        return st;
    m->has_model = true;
    return MFU_OK;
}

static mfu_status resolve_device(mfu_monitor *m, const mfu_monitor_config *c, mfu_error *err)
{
    mfu_status st;
    m->dtype = MFU_DTYPE_BF16;
    if (c->dtype) {
        if ((st = mfu_dtype_parse(c->dtype, &m->dtype, err)) != MFU_OK)
            return st;
        m->dtype_given = true;
    }
    if (c->peak_flops_per_s < 0 || isnan(c->peak_flops_per_s) || isinf(c->peak_flops_per_s))
        return mfu__fail_field(err, MFU_E_INVALID, "peak_flops_per_s",
                               "peak_flops_per_s must be a finite FLOP/s figure > 0, or 0 for "
                               "the device table's");
    if (c->device) {
        if ((st = mfu_device_resolve(c->device, &m->cpu_slot, &m->dev, err)) != MFU_OK)
            return st;
        mfu__strlcpy(m->device_name, m->dev->id, sizeof m->device_name);
    }
    if (c->peak_flops_per_s > 0) {
        m->peak = c->peak_flops_per_s;
    } else if (m->dev) {
        if ((st = mfu_device_peak_flops_per_s(m->dev, m->dtype, false, &m->peak, err)) != MFU_OK)
            return st;
    }
    return MFU_OK;
}

static void fill_meta(mfu_monitor *m, const mfu_monitor_config *c)
{
    mfu_run_meta *meta = mfu_run_meta_mut(m->run);
    mfu__strlcpy(meta->format, "mfu", sizeof meta->format);
    const char *name = c->name ? c->name : c->model ? c->model : "";
    mfu__strlcpy(meta->model, name, sizeof meta->model);
    if (m->has_model)
        meta->seq_len = m->wl.seq;
    meta->world_size = (int64_t)m->devices;
    /* the id, which the table resolves ("h100-sxm"), or "cpu": a CPU's brand names no peak */
    if (m->dev)
        mfu__strlcpy(meta->device, m->dev->id, sizeof meta->device);
    if (m->dtype_given)
        mfu__strlcpy(meta->dtype, mfu_dtype_name(m->dtype), sizeof meta->dtype);
    /* the peak this monitor divides by: what a reader of the file uses for a device it cannot
     * look up (another machine's "cpu") */
    if (isfinite(m->peak) && m->peak > 0)
        meta->reported_peak_flops_per_s = m->peak;
}

/* Monotonic nanoseconds; the coarse clock (a few ms of resolution, a few ns a read) is enough
 * to time a flush interval. In integers: a record compares it with due_ns. */
static int64_t mono_ns(void)
{
    struct timespec ts;
#ifdef CLOCK_MONOTONIC_COARSE
    if (clock_gettime(CLOCK_MONOTONIC_COARSE, &ts) == 0)
        return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
#endif
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* due_ns from flushed_ns and flush_every (an interval beyond a century: never by time). */
static void set_due(mfu_monitor *m)
{
    double ns = m->flush_every * 1e9;
    m->due_ns = ns < 3e18 ? m->flushed_ns + (int64_t)ns : INT64_MAX;
}

/* Write the pending rows to the file in one write. The bytes are dropped whatever happens: a
 * failed write is reported once, and the buffer cannot grow without bound on a full disk. */
static mfu_status write_pending(mfu_monitor *m, mfu_error *err)
{
    size_t n = m->pending.n;
    m->pending.n = 0;
    m->flushed_ns = mono_ns();
    set_due(m);
    if (!m->file || n == 0)
        return MFU_OK;
    if (fwrite(m->pending.p, 1, n, m->file) != n || fflush(m->file) != 0) {
        clearerr(m->file); /* unbuffered: nothing of these bytes is left in stdio to come later */
        return mfu__fail_field(err, MFU_E_IO, "jsonl_path",
                               "writing %zu bytes of steps to the JSON-lines file failed (a full "
                               "disk?): those steps are in the monitor's run but not in the file",
                               n);
    }
    return MFU_OK;
}

static mfu_status open_file(mfu_monitor *m, const char *path, mfu_error *err)
{
    m->file = fopen(path, "a");
    if (!m->file)
        return mfu__fail_field(err, MFU_E_IO, "jsonl_path",
                               "%s: cannot open it for appending; give a writable jsonl_path",
                               path);
    /* unbuffered: the pending buffer is the batching, and a failed write leaves no bytes in a
     * stdio buffer that a later flush would put after the next batch */
    setvbuf(m->file, NULL, _IONBF, 0);
    /* a new (empty) file gets the header object first */
    long at = ftell(m->file);
    if (at == 0) {
        mfu_status st = mfu_run_write_jsonl_rows(m->run, 0, true, m->file, err);
        if (st != MFU_OK)
            return st;
    }
    m->flush_every = MFU_MONITOR_FLUSH_INTERVAL_S;
    m->flushed_ns = mono_ns();
    set_due(m);
    return MFU_OK;
}

/* NVML for the clock and power of each step: opened once, checked against nvml_index. */
static mfu_status open_nvml(mfu_monitor *m, const mfu_monitor_config *c, mfu_error *err)
{
    if (c->nvml_index < 0)
        return mfu__fail_field(err, MFU_E_INVALID, "nvml_index",
                               "nvml_index must be NVML's index of this rank's GPU (>= 0)");
    mfu_status st = mfu_nvml_new(NULL, &m->nvml, err);
    if (st != MFU_OK)
        return st;
    m->nvml_index = (size_t)c->nvml_index;
    if (m->nvml_index >= mfu_nvml_count(m->nvml))
        return mfu__fail_field(err, MFU_E_INVALID, "nvml_index",
                               "nvml_index %d: NVML sees %zu GPU(s); give this rank's GPU (0 to "
                               "%zu), or leave nvml off",
                               c->nvml_index, mfu_nvml_count(m->nvml),
                               mfu_nvml_count(m->nvml) ? mfu_nvml_count(m->nvml) - 1 : 0);
    return MFU_OK;
}

mfu_status mfu_monitor_new(const mfu_monitor_config *cfg, mfu_monitor **out, mfu_error *err)
{
    if (out)
        *out = NULL;
    if (!cfg || !out)
        return mfu__fail(err, MFU_E_INVALID, 0, "mfu_monitor_new: cfg and out are required");
    if (cfg->devices < 0)
        return mfu__fail_field(err, MFU_E_INVALID, "devices",
                               "devices must be the number of devices in the job (>= 1), or 0 "
                               "for 1");
    mfu_monitor *m = calloc(1, sizeof *m);
    if (!m)
        return mfu__fail(err, MFU_E_NOMEM, 0, "out of memory");
    m->peak = NAN;
    m->fpt = m->hfpt = NAN;
    m->energy_prev_j = NAN;
    m->devices = cfg->devices > 0 ? (double)cfg->devices : 1.0;
    mfu_step_init(&m->blank);
    m->run = mfu_run_new();
    mfu_status st = m->run ? MFU_OK : mfu__fail(err, MFU_E_NOMEM, 0, "out of memory");
    if (st == MFU_OK)
        st = resolve_model(m, cfg, err);
    if (st == MFU_OK)
        st = resolve_device(m, cfg, err);
    if (st == MFU_OK && cfg->nvml)
        st = open_nvml(m, cfg, err);
    if (st == MFU_OK) {
        fill_meta(m, cfg);
        if (cfg->jsonl_path)
            st = open_file(m, cfg->jsonl_path, err);
    }
    if (st != MFU_OK) {
        mfu_monitor_free(m);
        return st;
    }
    mfu_report_input *in = &m->in;
    in->has_arch = m->has_model;
    in->arch = m->arch;
    in->workload = m->wl;
    in->flops = m->fo;
    in->device = m->dev ? m->device_name : NULL;
    in->dtype_given = m->dtype_given;
    in->dtype = m->dtype;
    in->peak_flops_per_s = cfg->peak_flops_per_s > 0 ? cfg->peak_flops_per_s : 0;
    in->devices = (int64_t)m->devices;
    st = mfu__fctx_init(&m->fig, m->run, in, err);
    if (st != MFU_OK) {
        mfu_monitor_free(m);
        return st;
    }
    *out = m;
    return MFU_OK;
}

void mfu_monitor_free(mfu_monitor *m)
{
    if (!m)
        return;
    if (m->file) {
        write_pending(m, NULL); /* a failure here has no one to tell: mfu_monitor_flush does */
        fclose(m->file);
    }
    free(m->pending.p);
    mfu_nvml_free(m->nvml);
    mfu__fctx_free(&m->fig);
    mfu_run_free(m->run);
    free(m);
}

/* The figures of row i of the run, *row (what the append gave back: the run's row as it now
 * is), by the figures module's per-step rule. The previous row is the previous record's,
 * kept, when nothing merged since; else it is read from the run. */
static void sample_of(mfu_monitor *m, size_t i, const mfu_step *row, mfu_monitor_sample *o)
{
    const mfu_step *prev = NULL;
    mfu_step read;
    if (i > 0 && m->last_ok && m->last_row == i - 1)
        prev = &m->rows[m->cur ^ 1];
    else if (i > 0 && mfu_run_get(m->run, i - 1, &read))
        prev = &read;
    mfu__frow f;
    mfu__figures_row(&m->fig, row, prev, i, &f);
    o->step = row->step;
    o->tokens_per_s = f.v[MFU__FC_TOKENS_PER_S];
    o->model_flops_per_s_per_device = f.v[MFU__FC_MODEL_FLOPS_PER_S_PER_DEVICE];
    o->mfu = f.v[MFU__FC_MFU];
    o->hfu = f.v[MFU__FC_HFU];
    /* energy beside utilization, by figures/energy.c's rule */
    double st = f.v[MFU__FC_STEP_TIME_S], dev = f.v[MFU__FC_DEVICES];
    o->energy_j = mfu__energy_step_j(row->energy_j, row->power_w, st, NULL);
    o->joules_per_pflop =
        mfu__joules_per_pflop(o->energy_j, f.v[MFU__FC_MODEL_FLOPS_PER_S_PER_DEVICE] * st);
    o->tokens_per_kwh = isfinite(dev) && dev > 0
                            ? mfu__tokens_per_kwh(f.v[MFU__FC_TOKENS], o->energy_j * dev)
                            : NAN;
    o->tensor_active = row->tensor_active;
}

/* NVML's figures for step c, where c lacks them: one sample (clock, power, limit, and the
 * energy counter, whose increase since the previous record is the step's energy) when any of
 * the four is missing, and GPM's tensor activity since the previous record when that is. The
 * monitor's state changes only when both reads succeed. */
static mfu_status nvml_fill(mfu_monitor *m, mfu_step *c, mfu_error *err)
{
    bool want =
        isnan(c->clock_mhz) || isnan(c->power_w) || isnan(c->power_limit_w) || isnan(c->energy_j);
    mfu_nvml_sample ns;
    mfu_status st;
    if (want && (st = mfu_nvml_sample_device(m->nvml, m->nvml_index, &ns, err)) != MFU_OK)
        return st;
    double ta = NAN;
    if (isnan(c->tensor_active)) { /* a step's own tensor_active is kept */
        if ((st = mfu_nvml_tensor_activity(m->nvml, m->nvml_index, &ta, err)) != MFU_OK)
            return st;
        c->tensor_active = ta;
    }
    if (!want) {
        m->energy_prev_j = NAN; /* not read now: the next increase would span two steps */
        return MFU_OK;
    }
    if (isnan(c->clock_mhz))
        c->clock_mhz = ns.sm_clock_mhz;
    if (isnan(c->power_w))
        c->power_w = ns.power_w;
    if (isnan(c->power_limit_w))
        c->power_limit_w = ns.power_limit_w;
    /* a counter that went back (the driver reloaded) gives no energy */
    if (isnan(c->energy_j) && isfinite(ns.energy_j) && isfinite(m->energy_prev_j) &&
        ns.energy_j >= m->energy_prev_j)
        c->energy_j = ns.energy_j - m->energy_prev_j;
    m->energy_prev_j = ns.energy_j;
    return MFU_OK;
}

/* The new row (not a merge: a row changed by a merge is not written again) into the pending
 * buffer: from the row in hand when it is the only row not yet written (the usual case), else
 * rows [written, count) by the canonical writer (a record whose buffering failed before). */
static mfu_status buffer_row(mfu_monitor *m, const mfu_step *row, mfu_error *err)
{
    size_t n = mfu_run_count(m->run);
    if (m->written + 1 == n) {
        if (!mfu__wbuf_room(&m->pending, MFU__JSONL_ROW_MAX))
            return mfu__fail(err, MFU_E_NOMEM, 0, "out of memory buffering the JSON-lines rows");
        m->pending.n += mfu__jsonl_row(m->pending.p + m->pending.n, row);
    } else {
        mfu_status st = mfu__run_jsonl_rows_to_mem(m->run, m->written, &m->pending, err);
        if (st != MFU_OK)
            return st;
    }
    m->written = n;
    return MFU_OK;
}

/* mfu_monitor_step of the caller's copy *c (which it changes). */
static mfu_status record_copy(mfu_monitor *m, mfu_step *c, mfu_monitor_sample *out, mfu_error *err)
{
    if (!(isfinite(c->tokens) && c->tokens > 0))
        return mfu__fail_field(err, MFU_E_INVALID, "tokens",
                               "step %lld: tokens must be the tokens of the step, whole job (> 0)",
                               (long long)c->step);
    if (!(isfinite(c->step_time_s) && c->step_time_s > 0))
        return mfu__fail_field(err, MFU_E_INVALID, "step_time_s",
                               "step %lld: step_time_s must be the step's wall time in seconds "
                               "(> 0)",
                               (long long)c->step);
    mfu_status st;
    /* infinities are not values a run keeps, as in ingest: made absent before NVML fills the
     * absent figures (sampled before anything is appended: a failed sample records nothing);
     * without NVML the append's plausibility check drops them (mfu__step_drop_inf too) */
    if (m->nvml) {
        mfu__step_drop_inf(c);
        if ((st = nvml_fill(m, c, err)) != MFU_OK)
            return st;
    }
    /* the row goes to the slot the previous record's row is not in */
    mfu_step *row = &m->rows[m->cur ^ 1];
    size_t at = 0;
    bool merged = false;
    st = mfu__run_append_row(m->run, c, row, &at, &merged, err);
    if (st != MFU_OK)
        return st;
    if (merged)
        m->last_ok = false; /* a row kept may have changed */
    if (m->file && !merged) {
        /* into the pending buffer; written when it fills, at the interval, on flush, at free */
        if ((st = buffer_row(m, row, err)) != MFU_OK)
            return st; /* the step is in the run; the file lacks it */
        if ((m->pending.n >= MFU_MONITOR_FLUSH_BYTES || m->flush_every <= 0 ||
             mono_ns() >= m->due_ns) &&
            (st = write_pending(m, err)) != MFU_OK)
            return st; /* the step is in the run; the file lacks it (a full disk) */
    }
    if (out)
        sample_of(m, at, row, out);
    /* the row just read is the next record's previous row */
    m->cur ^= 1;
    m->last_row = at;
    m->last_ok = true;
    return MFU_OK;
}

mfu_status mfu_monitor_step(mfu_monitor *m, const mfu_step *s, mfu_monitor_sample *out,
                            mfu_error *err)
{
    if (!m || !s)
        return mfu__fail(err, MFU_E_INVALID, 0, "mfu_monitor_step: monitor and step are required");
    mfu_step c = *s;
    return record_copy(m, &c, out, err);
}

mfu_status mfu_monitor_record(mfu_monitor *m, int64_t step, double tokens, double step_time_s,
                              double loss, mfu_monitor_sample *out, mfu_error *err)
{
    if (!m)
        return mfu__fail(err, MFU_E_INVALID, 0, "mfu_monitor_step: monitor and step are required");
    mfu_step s = m->blank;
    s.step = step;
    s.tokens = tokens;
    s.step_time_s = step_time_s;
    s.loss = loss;
    return record_copy(m, &s, out, err);
}

mfu_status mfu_monitor_step_call(mfu_monitor_call *call)
{
    if (!call)
        return mfu__fail(NULL, MFU_E_INVALID, 0, "mfu_monitor_step_call: call is required");
    if (!call->monitor)
        return mfu__fail(&call->error, MFU_E_INVALID, 0,
                         "mfu_monitor_step_call: call->monitor is required");
    mfu_step c = call->step;
    return record_copy(call->monitor, &c, &call->sample, &call->error);
}

size_t mfu_monitor_record_many(mfu_monitor *m, const mfu_step *steps, size_t n,
                               mfu_monitor_sample *out, mfu_error *err)
{
    if (!m || (n && !steps)) {
        mfu__fail(err, MFU_E_INVALID, 0, "mfu_monitor_record_many: monitor and steps are required");
        return 0;
    }
    for (size_t i = 0; i < n; i++)
        if (mfu_monitor_step(m, &steps[i], out ? &out[i] : NULL, err) != MFU_OK)
            return i;
    return n;
}

mfu_status mfu_monitor_flush(mfu_monitor *m, mfu_error *err)
{
    if (!m)
        return mfu__fail(err, MFU_E_INVALID, 0, "mfu_monitor_flush: monitor is required");
    return write_pending(m, err);
}

mfu_status mfu_monitor_set_flush_interval(mfu_monitor *m, double seconds, mfu_error *err)
{
    if (!m)
        return mfu__fail(err, MFU_E_INVALID, 0,
                         "mfu_monitor_set_flush_interval: monitor is required");
    if (!(seconds >= 0) || isinf(seconds))
        return mfu__fail_field(err, MFU_E_INVALID, "flush_interval",
                               "the flush interval must be a finite number of seconds >= 0 (0: "
                               "write every step at once)");
    m->flush_every = seconds;
    set_due(m);
    return MFU_OK;
}

mfu_status mfu_monitor_report(const mfu_monitor *m, mfu_report **out, mfu_error *err)
{
    if (out)
        *out = NULL;
    if (!m || !out)
        return mfu__fail(err, MFU_E_INVALID, 0, "mfu_monitor_report: monitor and out are required");
    if (mfu_run_count(m->run) == 0)
        return mfu__fail(err, MFU_E_EMPTY, 0,
                         "no step recorded yet: call mfu_monitor_record first");
    return mfu_report_compute(m->run, &m->in, out, err);
}

const mfu_run *mfu_monitor_run(const mfu_monitor *m)
{
    return m ? m->run : NULL;
}

double mfu_monitor_model_flops_per_token(const mfu_monitor *m)
{
    return m && m->has_model ? m->fpt : NAN;
}

double mfu_monitor_peak_flops_per_s(const mfu_monitor *m)
{
    return m ? m->peak : NAN;
}

size_t mfu_struct_size(const char *name)
{
    static const struct {
        const char *name;
        size_t size;
    } sizes[] = {
        {"mfu_error", sizeof(mfu_error)},
        {"mfu_step", sizeof(mfu_step)},
        {"mfu_monitor_config", sizeof(mfu_monitor_config)},
        {"mfu_monitor_sample", sizeof(mfu_monitor_sample)},
        {"mfu_report_stat", sizeof(mfu_report_stat)},
        {"mfu_finding", sizeof(mfu_finding)},
        {"mfu_device_slot", sizeof(mfu_device_slot)},
        {"mfu_arch", sizeof(mfu_arch)},
        {"mfu_energy", sizeof(mfu_energy)},
        {"mfu_monitor_call", sizeof(mfu_monitor_call)},
    };
    for (size_t i = 0; name && i < sizeof sizes / sizeof sizes[0]; i++)
        if (strcmp(sizes[i].name, name) == 0)
            return sizes[i].size;
    return 0;
}
