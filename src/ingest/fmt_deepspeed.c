/*
 * fmt_deepspeed.c - DeepSpeed engine output (log-formats.md §8), printed through log_dist /
 * logger.info with a "[date] [INFO] [file.py:N:func] " prefix (removed by the cleaner).
 *
 *   [Rank 0] step=40, skipped=2, lr=[5e-05], mom=[[0.9, 0.999]]          engine._report_progress
 *     step = optimizer step, skipped = optimizer steps skipped so far (fp16 overflow; a rise
 *     flags the row MFU_STEP_SKIPPED), lr = first parameter group's learning rate.
 *   epoch=0/micro_step=40/global_step=10, RunningAvgSamplesPerSec=158.3, CurrSamplesPerSec=
 *     159.6, MemAllocated=1.75GB, MaxMemAllocated=2.6GB              ThroughputTimer (2023+)
 *   0/17, RunningAvgSamplesPerSec=..., CurrSamplesPerSec=..., MemAllocated=..GB, ...   (2022)
 *   0/40, SamplesPerSec=83.48, MemAllocated=0.26GB, MaxMemAllocated=9.02GB     (early 2022)
 *     Samples/s are global (batch = train_batch_size = micro x accumulation x DP). The row is
 *     global_step, or in the older layouts the second number (the timer's step count in the
 *     epoch, which is the optimizer step without gradient accumulation). CurrSamplesPerSec is
 *     kept (RunningAvg / SamplesPerSec, running averages, when it is absent); MaxMemAllocated
 *     is GiB (DeepSpeed divides bytes by 1024**3 and prints "GB").
 *   [Rank 0] time (ms) | fwd_microstep: .. | bwd_microstep: .. | ...       wall_clock_breakdown
 *     milliseconds per micro-step or step, no step number: recognised, not stored.
 *   Flops profiler block ("---- DeepSpeed Flops Profiler ----", "Profile Summary at step N:",
 *     "label:   value" lines): one row for step N with iter latency as step time, "FLOPS per
 *     GPU = 3 * fwd flops per GPU / iter latency" (else "fwd+bwd FLOPS per GPU") as per-device
 *     FLOP/s and samples/second (micro-batch x world size / iter latency) as global samples/s;
 *     world size, batch size per GPU and params of model go to the metadata. Values carry
 *     magnitude suffixes (M, G, ms, us, TFLOPS).
 *   "DeepSpeedEngine configuration:" dump ("  train_batch_size ..... 16"): global / micro
 *     batch, gradient accumulation, world size, fp16 / bf16.
 *
 * Detection: every DeepSpeed line is a hint only. These lines also appear inside the logs of
 * frameworks built on DeepSpeed (HF Trainer, Megatron-DeepSpeed, GPT-NeoX), whose own step
 * lines score more; a log of DeepSpeed lines alone is DeepSpeed's.
 */
#include <ctype.h>
#include <math.h>
#include <string.h>

#include "ingest/format.h"
#include "ingest/pyrepr.h"

typedef struct ds_profile {
    bool active;  /* inside a flops-profiler summary */
    int64_t step; /* "Profile Summary at step N" (0 unknown) */
    double iter_s, flops_iter, flops_fwdbwd, samples_per_s;
} ds_profile;

typedef struct deepspeed_state {
    int64_t prev_skipped; /* skipped= of the previous step report */
    bool in_config;       /* inside the DeepSpeedEngine configuration dump */
    ds_profile prof;
} deepspeed_state;

/* "[Rank N] " at the start: strips it and returns N, else -1. */
static int rank_prefix(mfu__span *s)
{
    if (!mfu__span_starts(*s, "[Rank "))
        return -1;
    long close = mfu__span_find(*s, "] ");
    int64_t r;
    if (close < 7 || !mfu__int_parse((mfu__span){s->p + 6, (size_t)close - 6}, &r) || r < 0 ||
        r > 1000000)
        return -1;
    s->p += close + 2;
    s->n -= (size_t)close + 2;
    return (int)r;
}

static bool step_report(mfu__span s)
{
    return mfu__span_starts(s, "step=") && mfu__span_find(s, ", skipped=") > 0;
}

/* "E/S, " or "epoch=E/micro_step=M/global_step=G, " followed by a samples/s key. */
static bool tput_line(mfu__span s)
{
    if (mfu__span_find(s, "SamplesPerSec=") < 0)
        return false;
    if (mfu__span_starts(s, "epoch=") && mfu__span_find(s, "/global_step=") > 0)
        return true;
    size_t i = 0;
    while (i < s.n && isdigit((unsigned char)s.p[i]))
        i++;
    return i > 0 && i < s.n && s.p[i] == '/';
}

static bool timer_line(mfu__span s)
{
    if (mfu__span_starts(s, "rank=")) {
        long sp = mfu__span_find(s, " ");
        if (sp < 0)
            return false;
        s.p += sp + 1;
        s.n -= (size_t)sp + 1;
    }
    return mfu__span_starts(s, "time (ms) |");
}

static int deepspeed_detect(const mfu__line *ln)
{
    mfu__span s = {ln->text, ln->len};
    bool ranked = rank_prefix(&s) >= 0;
    if (step_report(s) || tput_line(s) || (ranked && timer_line(s)))
        return MFU__DETECT_HINT;
    if (mfu__span_find(s, "DeepSpeed Flops Profiler") >= 0 ||
        mfu__span_starts(s, "Profile Summary at step ") ||
        mfu__span_starts(s, "fwd+bwd FLOPS per GPU") || mfu__span_starts(s, "iter latency:") ||
        mfu__span_starts(s, "DeepSpeedEngine configuration:") ||
        mfu__span_starts(s, "DeepSpeed info: version=") ||
        mfu__span_find(s, "OVERFLOW! Rank ") >= 0)
        return MFU__DETECT_HINT;
    return MFU__DETECT_NONE;
}

/* A number with an optional magnitude suffix: "336.23 M", "6279.86 G", "80", "76.67 ms",
 * "102.0 TFLOPS". Unit words after a K/M/G/T/P prefix (GMACs) are ignored. */
static double si_value(mfu__span v)
{
    v = mfu__span_trim(v);
    const char *p = v.p, *end = v.p + v.n;
    mfu__num n;
    if (!mfu__num_scan(&p, end, &n) || n.kind != MFU__NUM_FINITE)
        return NAN;
    if (n.unit != MFU__UNIT_NONE)
        return n.value;
    while (p < end && *p == ' ')
        p++;
    if (p == end)
        return n.value;
    static const char prefixes[] = "KMGTP";
    const char *at = strchr(prefixes, *p);
    if (!at || *p == '\0')
        return NAN;
    return n.value * pow(1000.0, (double)(at - prefixes + 1));
}

/* The value after "=" in "Key=1.75GB"-style pieces, GiB -> bytes ("GB" is 1024**3). */
static double gib_value(mfu__span v)
{
    v = mfu__span_trim(v);
    if (v.n > 2 && memcmp(v.p + v.n - 2, "GB", 2) == 0)
        v.n -= 2;
    double x = mfu__num_value(v);
    return isnan(x) ? NAN : x * 1073741824.0;
}

static void set_convention(mfu__ictx *c)
{
    mfu_run_meta *m = mfu__meta(c);
    if (!m->convention[0])
        mfu__strlcpy(m->convention,
                     "DeepSpeed: samples/s global (train_batch_size / step time); profiler "
                     "FLOPS per GPU = 3 x profiled fwd FLOPs / latency",
                     sizeof m->convention);
}

static mfu_status emit_profile(deepspeed_state *st, mfu__ictx *c)
{
    ds_profile *p = &st->prof;
    if (!p->active)
        return MFU_OK;
    p->active = false;
    mfu_step s;
    mfu_step_init(&s);
    double fl = !isnan(p->flops_iter) ? p->flops_iter : p->flops_fwdbwd;
    if (p->step <= 0 || (isnan(p->iter_s) && isnan(fl) && isnan(p->samples_per_s)))
        return MFU_OK; /* a summary without step number or figures: nothing to keep */
    s.step = p->step;
    s.step_time_s = p->iter_s;
    if (!isnan(fl)) {
        s.flops_per_s = fl;
        s.flops_per_s_scope = MFU_SCOPE_DEVICE;
    }
    if (!isnan(p->samples_per_s)) {
        s.samples_per_s = p->samples_per_s;
        s.samples_per_s_scope = MFU_SCOPE_GLOBAL;
    }
    set_convention(c);
    return mfu__emit(c, &s);
}

/* One "label:   value" line of the profiler summary; false when s is not one. */
static bool profile_value(deepspeed_state *st, mfu__ictx *c, mfu__span s)
{
    const char *colon = NULL;
    for (size_t i = s.n; i > 0; i--)
        if (s.p[i - 1] == ':') {
            colon = s.p + i - 1;
            break;
        }
    if (!colon)
        return false;
    mfu__span label = mfu__span_trim((mfu__span){s.p, (size_t)(colon - s.p)});
    mfu__span val = mfu__span_trim((mfu__span){colon + 1, (size_t)(s.p + s.n - colon - 1)});
    if (val.n == 0)
        return false;
    double v = si_value(val);
    mfu_run_meta *m = mfu__meta(c);
    ds_profile *p = &st->prof;
    if (mfu__span_eq(label, "world size") && v >= 1)
        m->world_size = mfu__int64_sat(v);
    else if (mfu__span_eq(label, "batch size per GPU") && v >= 1)
        m->micro_batch = mfu__int64_sat(v);
    else if (mfu__span_eq(label, "params of model = params per GPU * mp_size") && v > 0)
        m->model_params = v;
    else if (mfu__span_eq(label, "iter latency"))
        p->iter_s = v;
    else if (mfu__span_starts(label, "FLOPS per GPU = "))
        p->flops_iter = v;
    else if (mfu__span_starts(label, "fwd+bwd FLOPS per GPU"))
        p->flops_fwdbwd = v;
    else if (mfu__span_eq(label, "samples/second"))
        p->samples_per_s = v;
    return true; /* the other labels of the summary: latencies, MACs, parallel sizes */
}

/* One "  name ....... value" line of the configuration dump; false when s is not one. */
static bool config_line(mfu_run_meta *m, mfu__span s)
{
    size_t i = 0;
    while (i < s.n &&
           (islower((unsigned char)s.p[i]) || isdigit((unsigned char)s.p[i]) || s.p[i] == '_'))
        i++;
    if (i == 0 || i >= s.n || s.p[i] != ' ')
        return false;
    mfu__span name = {s.p, i};
    while (i < s.n && (s.p[i] == ' ' || s.p[i] == '.'))
        i++;
    mfu__span v = mfu__span_trim((mfu__span){s.p + i, s.n - i});
    int64_t x;
    bool isint = mfu__int_parse(v, &x) && x > 0;
    if (mfu__span_eq(name, "train_batch_size") && isint)
        m->global_batch = x;
    else if (mfu__span_eq(name, "train_micro_batch_size_per_gpu") && isint)
        m->micro_batch = x;
    else if (mfu__span_eq(name, "gradient_accumulation_steps") && isint)
        m->grad_accum = x;
    else if (mfu__span_eq(name, "world_size") && isint)
        m->world_size = x;
    else if (mfu__span_eq(name, "fp16_enabled") && mfu__span_eq(v, "True"))
        mfu__strlcpy(m->dtype, "fp16", sizeof m->dtype);
    else if ((mfu__span_eq(name, "bfloat16_enabled") || mfu__span_eq(name, "bf16_enabled")) &&
             mfu__span_eq(v, "True"))
        mfu__strlcpy(m->dtype, "bf16", sizeof m->dtype);
    return true;
}

static mfu_status report_line(deepspeed_state *st, mfu__ictx *c, mfu__span s, int rank)
{
    mfu__span rest = s, piece, key, val;
    mfu_step ms;
    mfu_step_init(&ms);
    ms.rank = rank;
    int64_t skipped = -1;
    bool have_step = false;
    while (mfu__split_next(&rest, ", ", &piece)) {
        if (!mfu__kv(piece, "=", &key, &val))
            continue;
        if (mfu__span_eq(key, "step"))
            have_step = mfu__int_parse(val, &ms.step);
        else if (mfu__span_eq(key, "skipped"))
            (void)mfu__int_parse(val, &skipped);
        else if (mfu__span_eq(key, "lr") && val.n > 1 && val.p[0] == '[') {
            /* "[5e-05]" or "[0.0003, 0.0003]" (cut at ", " above): the first group's */
            mfu__span first = mfu__span_from(val, 1);
            long end = mfu__span_find(first, "]");
            if (end >= 0)
                first.n = (size_t)end;
            ms.lr = mfu__num_value(first);
        }
    }
    if (!have_step || ms.step < 0) {
        mfu__skip(c, "DeepSpeed step report without 'step=N'");
        return MFU_OK;
    }
    if (skipped > st->prev_skipped)
        ms.flags |= MFU_STEP_SKIPPED;
    if (skipped >= 0)
        st->prev_skipped = skipped;
    set_convention(c);
    return mfu__emit(c, &ms);
}

static mfu_status tput(mfu__ictx *c, mfu__span s, int rank)
{
    mfu__span rest = s, head, piece, key, val;
    mfu__split_next(&rest, ", ", &head);
    mfu_step ms;
    mfu_step_init(&ms);
    ms.rank = rank;
    bool have_step = false;
    if (mfu__span_starts(head, "epoch=")) {
        long g = mfu__span_find(head, "global_step=");
        have_step =
            g > 0 && mfu__int_parse(mfu__span_from(head, (size_t)g + MFU__LIT_LEN("global_step=")),
                                    &ms.step);
    } else {
        long slash = mfu__span_find(head, "/");
        have_step = slash > 0 && mfu__int_parse(mfu__span_from(head, (size_t)slash + 1), &ms.step);
    }
    double curr = NAN, avg = NAN;
    while (mfu__split_next(&rest, ", ", &piece)) {
        if (!mfu__kv(piece, "=", &key, &val))
            continue;
        if (mfu__span_eq(key, "CurrSamplesPerSec"))
            curr = mfu__num_value(val);
        else if (mfu__span_eq(key, "RunningAvgSamplesPerSec") || mfu__span_eq(key, "SamplesPerSec"))
            avg = mfu__num_value(val);
        else if (mfu__span_eq(key, "MaxMemAllocated"))
            ms.memory_bytes = gib_value(val);
    }
    if (!have_step) {
        mfu__skip(c, "DeepSpeed throughput line without 'E/S' or 'global_step=N' before ','");
        return MFU_OK;
    }
    ms.samples_per_s = !isnan(curr) ? curr : avg;
    if (!isnan(ms.samples_per_s))
        ms.samples_per_s_scope = MFU_SCOPE_GLOBAL;
    set_convention(c);
    return mfu__emit(c, &ms);
}

static mfu_status deepspeed_line(void *state, mfu__ictx *c, const mfu__line *ln)
{
    deepspeed_state *st = state;
    mfu__span s = {ln->text, ln->len};
    int rank = rank_prefix(&s);
    mfu_status rc = MFU_OK;
    if (step_report(s) || tput_line(s) || mfu__span_find(s, "DeepSpeed Flops Profiler") >= 0 ||
        mfu__span_starts(s, "Profile Summary at step ")) {
        rc = emit_profile(st, c); /* a summary ends where other output starts */
        st->in_config = false;
        if (rc != MFU_OK)
            return rc;
    }
    if (step_report(s))
        return report_line(st, c, s, rank);
    if (tput_line(s))
        return tput(c, s, rank);
    if (rank >= 0 && timer_line(s)) {
        mfu__used(c);
        return MFU_OK;
    }
    if (mfu__span_find(s, "DeepSpeed Flops Profiler") >= 0) {
        memset(&st->prof, 0, sizeof st->prof);
        st->prof.active = true;
        st->prof.iter_s = st->prof.flops_iter = st->prof.flops_fwdbwd = NAN;
        st->prof.samples_per_s = NAN;
        mfu__used(c);
        return MFU_OK;
    }
    if (mfu__span_starts(s, "Profile Summary at step ")) {
        int64_t step = 0;
        mfu__span r = mfu__span_from(s, MFU__LIT_LEN("Profile Summary at step "));
        if (r.n && r.p[r.n - 1] == ':')
            r.n--;
        if (!st->prof.active) {
            memset(&st->prof, 0, sizeof st->prof);
            st->prof.iter_s = st->prof.flops_iter = st->prof.flops_fwdbwd = NAN;
            st->prof.samples_per_s = NAN;
            st->prof.active = true;
        }
        if (mfu__int_parse(r, &step))
            st->prof.step = step;
        mfu__used(c);
        return MFU_OK;
    }
    if (st->prof.active) {
        if (mfu__span_find(s, "Aggregated Profile per GPU") >= 0 ||
            mfu__span_find(s, "Detailed Profile per GPU") >= 0 ||
            (s.n >= 20 && s.p[0] == '-' && s.p[s.n - 1] == '-' && mfu__span_find(s, " ") < 0)) {
            rc = emit_profile(st, c);
            mfu__used(c);
            return rc;
        }
        if (profile_value(st, c, s))
            mfu__used(c);
        return MFU_OK;
    }
    if (mfu__span_starts(s, "DeepSpeedEngine configuration:")) {
        st->in_config = true;
        mfu__used(c);
        return MFU_OK;
    }
    if (st->in_config) {
        if (mfu__span_starts(s, "json = ")) {
            st->in_config = false;
            return MFU_OK;
        }
        if (config_line(mfu__meta(c), s))
            mfu__used(c);
        return MFU_OK;
    }
    if (mfu__span_starts(s, "DeepSpeed info: version=") ||
        mfu__span_find(s, "OVERFLOW! Rank ") >= 0)
        mfu__used(c);
    return MFU_OK;
}

static mfu_status deepspeed_finish(void *state, mfu__ictx *c)
{
    return emit_profile(state, c);
}

const mfu__format mfu__fmt_deepspeed = {
    .name = "deepspeed",
    .summary = "DeepSpeed step reports, ThroughputTimer samples/s, flops profiler, config dump",
    .detect = deepspeed_detect,
    .state_size = sizeof(deepspeed_state),
    .line = deepspeed_line,
    .finish = deepspeed_finish,
};
