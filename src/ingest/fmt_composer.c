/*
 * fmt_composer.c - MosaicML Composer / llm-foundry console logs (log-formats.md §12):
 * ConsoleLogger.log_to_console prints, every console_log_interval, a header and one line per
 * metric ("\n\t Train name: value"; a tab and a space, or spaces when re-indented):
 *
 *   [epoch=1][batch=3/5]:                  ([batch=b/B]:, [token=t/T]:, ... by time unit)
 *        Train throughput/tokens_per_sec: 10347.9543
 *        Train throughput/device/tokens_per_sec: 1293.4943
 *        Train metrics/train/LanguageCrossEntropy: 8.4361
 *
 * One row per block, numbered by the header's batch (b counts the batches done; the block's
 * time/batch is b - 1, as both fixtures show), else time/batch + 1. SpeedMonitor metrics
 * (composer/callbacks/speed_monitor.py; rolling window):
 *   throughput/tokens_per_sec, throughput/samples_per_sec             global (kept first)
 *   throughput/device/tokens_per_sec, .../device/samples_per_sec     per device (fallback)
 *   throughput/device/flops_per_sec (FLOP/s)                          per device (kept first)
 *   throughput/flops_per_sec                                          global (fallback)
 *   throughput/device/mfu (fraction 0-1)                              per device
 * Loss: metrics/train/LanguageCrossEntropy, else loss/train/total (which can be a different
 * quantity, e.g. with auxiliary losses); lr: the first lr-<Optimizer>/group0; memory:
 * memory/peak_reserved_mem, else memory/peak_allocated_mem (GiB). time/train etc. are in the
 * SpeedMonitor's time unit (hours by default) and counters: not kept. Values that are not
 * numbers (wandb Image objects) are skipped.
 *
 * Header: trainer/device_train_microbatch_size -> micro batch; the "Config:" block
 * (num_gpus_per_node x num_nodes -> world size); llm-foundry's config dump lines
 * "max_seq_len: N", "global_train_batch_size: N", "device_train_microbatch_size: N",
 * "precision: amp_bf16". Eval blocks ("[Eval batch=..." and "Eval ..." lines) are read, not
 * stored.
 */
#include <ctype.h>
#include <math.h>
#include <string.h>

#include "ingest/format.h"
#include "ingest/pyrepr.h"

typedef struct composer_rec {
    bool open; /* a train header was read: its block is being filled */
    int64_t header_batch, time_batch;
    double tok_g, tok_d, smp_g, smp_d, fl_d, fl_g, mfu, lce, total, lr, mem_res, mem_alloc;
    bool lce_bad, total_bad;
    double time_s;
    int rank;
} composer_rec;

typedef struct composer_state {
    composer_rec rec;
    bool in_config;
    int64_t gpus_per_node, nodes;
} composer_state;

/* "[k=v][k=v]:" header; *batch gets the batch number (0 when the header has none). */
static bool header(mfu__span s, int64_t *batch)
{
    if (s.n < 5 || s.p[0] != '[' || !(s.p[s.n - 2] == ']' && s.p[s.n - 1] == ':'))
        return false;
    *batch = 0;
    mfu__span r = {s.p, s.n - 1};
    while (r.n && r.p[0] == '[') {
        long close = mfu__span_find(r, "]");
        if (close < 0)
            return false;
        mfu__span g = {r.p + 1, (size_t)close - 1};
        mfu__span k, v;
        if (!mfu__kv(g, "=", &k, &v) || k.n == 0)
            return false;
        for (size_t i = 0; i < k.n; i++)
            if (!islower((unsigned char)k.p[i]) && k.p[i] != '_')
                return false;
        long slash = mfu__span_find(v, "/");
        int64_t x;
        if (!mfu__int_parse(slash > 0 ? (mfu__span){v.p, (size_t)slash} : v, &x))
            return false;
        if (mfu__span_eq(k, "batch"))
            *batch = x;
        r.p += close + 1;
        r.n -= (size_t)close + 1;
    }
    return r.n == 0;
}

/* "Train name: value" -> name, value. */
static bool train_metric(mfu__span s, mfu__span *k, mfu__span *v)
{
    if (!mfu__span_starts(s, "Train "))
        return false;
    mfu__span r = mfu__span_from(s, MFU__LIT_LEN("Train "));
    return mfu__kv(r, ": ", k, v) && k->n > 0 && mfu__span_find(*k, "/") > 0;
}

static int composer_detect(const mfu__line *ln)
{
    mfu__span s = {ln->text, ln->len}, k, v;
    int64_t b;
    if (header(s, &b))
        return MFU__DETECT_STEP;
    if (train_metric(s, &k, &v) || mfu__span_starts(s, "[Eval batch=") ||
        mfu__span_starts(s, "composer_version: "))
        return MFU__DETECT_HINT;
    return MFU__DETECT_NONE;
}

static void rec_open(composer_rec *r, int64_t batch, const mfu__line *ln)
{
    r->open = true;
    r->header_batch = batch;
    r->time_batch = -1;
    r->tok_g = r->tok_d = r->smp_g = r->smp_d = r->fl_d = r->fl_g = r->mfu = NAN;
    r->lce = r->total = r->lr = r->mem_res = r->mem_alloc = NAN;
    r->lce_bad = r->total_bad = false;
    r->time_s = ln->prefix_time_s;
    r->rank = ln->rank;
}

static void pick(double *dst, mfu_scope *scope, double first, mfu_scope s1, double second,
                 mfu_scope s2)
{
    if (!isnan(first)) {
        *dst = first;
        *scope = s1;
    } else if (!isnan(second)) {
        *dst = second;
        *scope = s2;
    }
}

static mfu_status rec_emit(composer_state *st, mfu__ictx *c)
{
    composer_rec *r = &st->rec;
    if (!r->open)
        return MFU_OK;
    r->open = false;
    mfu_step s;
    mfu_step_init(&s);
    if (r->header_batch > 0)
        s.step = r->header_batch;
    else if (r->time_batch >= 0)
        s.step = r->time_batch + 1;
    else {
        mfu__skip(c, "Composer block without [batch=N] or 'Train time/batch: N'");
        return MFU_OK;
    }
    s.time_s = r->time_s;
    s.rank = r->rank;
    pick(&s.tokens_per_s, &s.tokens_per_s_scope, r->tok_g, MFU_SCOPE_GLOBAL, r->tok_d,
         MFU_SCOPE_DEVICE);
    pick(&s.samples_per_s, &s.samples_per_s_scope, r->smp_g, MFU_SCOPE_GLOBAL, r->smp_d,
         MFU_SCOPE_DEVICE);
    pick(&s.flops_per_s, &s.flops_per_s_scope, r->fl_d, MFU_SCOPE_DEVICE, r->fl_g,
         MFU_SCOPE_GLOBAL);
    pick(&s.mfu, &s.mfu_scope, r->mfu, MFU_SCOPE_DEVICE, NAN, MFU_SCOPE_UNKNOWN);
    bool use_lce = !isnan(r->lce) || r->lce_bad;
    s.loss = use_lce ? r->lce : r->total;
    if (use_lce ? r->lce_bad : r->total_bad)
        s.flags |= MFU_STEP_LOSS_NAN;
    s.lr = r->lr;
    s.memory_bytes = !isnan(r->mem_res) ? r->mem_res : r->mem_alloc;
    if (!isnan(s.memory_bytes))
        s.memory_bytes *= 1073741824.0;
    mfu_run_meta *m = mfu__meta(c);
    if (!m->convention[0])
        mfu__strlcpy(m->convention,
                     "Composer SpeedMonitor: rolling window; tokens/s and samples/s global, "
                     "FLOP/s and MFU per device (vs GPU peak)",
                     sizeof m->convention);
    return mfu__emit(c, &s);
}

static void rec_metric(composer_rec *r, mfu_run_meta *m, mfu__span k, mfu__span v)
{
    mfu__num n;
    if (!mfu__num_parse(v, &n) || n.kind == MFU__NUM_NA)
        return; /* object reprs, text */
    double x = n.kind == MFU__NUM_FINITE ? n.value : NAN;
    bool bad = n.kind != MFU__NUM_FINITE;
    if (mfu__span_eq(k, "throughput/tokens_per_sec"))
        r->tok_g = x;
    else if (mfu__span_eq(k, "throughput/device/tokens_per_sec"))
        r->tok_d = x;
    else if (mfu__span_eq(k, "throughput/samples_per_sec"))
        r->smp_g = x;
    else if (mfu__span_eq(k, "throughput/device/samples_per_sec"))
        r->smp_d = x;
    else if (mfu__span_eq(k, "throughput/device/flops_per_sec"))
        r->fl_d = x;
    else if (mfu__span_eq(k, "throughput/flops_per_sec"))
        r->fl_g = x;
    else if (mfu__span_eq(k, "throughput/device/mfu"))
        r->mfu = x;
    else if (mfu__span_eq(k, "metrics/train/LanguageCrossEntropy")) {
        r->lce = x;
        r->lce_bad = bad;
    } else if (mfu__span_eq(k, "loss/train/total")) {
        r->total = x;
        r->total_bad = bad;
    } else if (mfu__span_starts(k, "lr-") && k.n > 7 && memcmp(k.p + k.n - 7, "/group0", 7) == 0 &&
               isnan(r->lr))
        r->lr = x;
    else if (mfu__span_eq(k, "memory/peak_reserved_mem"))
        r->mem_res = x;
    else if (mfu__span_eq(k, "memory/peak_allocated_mem"))
        r->mem_alloc = x;
    else if (mfu__span_eq(k, "time/batch") && !bad && x >= 0)
        r->time_batch = mfu__int64_sat(x);
    else if (mfu__span_eq(k, "trainer/device_train_microbatch_size") && x >= 1)
        m->micro_batch = mfu__int64_sat(x);
}

/* Configuration lines (Composer's "Config:" block, llm-foundry's YAML dump). */
static bool config_line(composer_state *st, mfu_run_meta *m, mfu__span s)
{
    mfu__span k, v;
    if (!mfu__kv(s, ": ", &k, &v))
        return false;
    int64_t x;
    bool isint = mfu__int_parse(v, &x) && x > 0;
    if (mfu__span_eq(k, "num_gpus_per_node") && isint)
        st->gpus_per_node = x;
    else if (mfu__span_eq(k, "num_nodes") && isint)
        st->nodes = x;
    else if (mfu__span_eq(k, "max_seq_len") && isint)
        m->seq_len = x;
    else if (mfu__span_eq(k, "global_train_batch_size") && isint)
        m->global_batch = x;
    else if (mfu__span_eq(k, "device_train_microbatch_size") && isint)
        m->micro_batch = x;
    else if (mfu__span_eq(k, "precision") && v.n) {
        mfu__span p = mfu__span_starts(v, "amp_") ? mfu__span_from(v, MFU__LIT_LEN("amp_")) : v;
        mfu__span_copy(p, m->dtype, sizeof m->dtype);
    } else
        return false;
    if (st->gpus_per_node > 0 && st->nodes > 0)
        m->world_size = st->gpus_per_node * st->nodes;
    return true;
}

static mfu_status composer_line(void *state, mfu__ictx *c, const mfu__line *ln)
{
    composer_state *st = state;
    mfu__span s = {ln->text, ln->len}, k, v;
    mfu_run_meta *m = mfu__meta(c);
    int64_t batch;
    if (header(s, &batch)) {
        mfu_status rc = rec_emit(st, c);
        st->in_config = false;
        rec_open(&st->rec, batch, ln);
        mfu__used(c);
        return rc;
    }
    if (train_metric(s, &k, &v)) {
        if (st->rec.open) {
            rec_metric(&st->rec, m, k, v);
            mfu__used(c);
        }
        return MFU_OK;
    }
    if (mfu__span_starts(s, "[Eval ")) {
        mfu_status rc = rec_emit(st, c);
        mfu__used(c);
        return rc;
    }
    if (mfu__span_starts(s, "Eval ") && mfu__span_find(s, ": ") > 0) {
        mfu__used(c);
        return MFU_OK;
    }
    if (mfu__span_eq(s, "Config:")) {
        st->in_config = true;
        mfu__used(c);
        return MFU_OK;
    }
    if (st->in_config && s.n && s.p[0] == '*') {
        st->in_config = false;
        mfu__used(c);
        return MFU_OK;
    }
    if (config_line(st, m, s) || (st->in_config && mfu__span_find(s, ": ") > 0))
        mfu__used(c);
    return MFU_OK;
}

static mfu_status composer_finish(void *state, mfu__ictx *c)
{
    return rec_emit(state, c);
}

const mfu__format mfu__fmt_composer = {
    .name = "composer",
    .summary = "Composer / llm-foundry ConsoleLogger '[batch=N/M]:' blocks of 'Train k: v' lines",
    .detect = composer_detect,
    .state_size = sizeof(composer_state),
    .line = composer_line,
    .finish = composer_finish,
};
