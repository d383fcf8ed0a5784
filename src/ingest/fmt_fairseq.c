/*
 * fmt_fairseq.c - facebookresearch/fairseq training logs, in the layouts of 2018 to 2022:
 *
 *   | epoch 010  2000 / 8223 loss=1.27 (1.50), wps=962, wpb=908, bsz=32, lr=0.001, ...  (2018)
 *   | epoch 001:    450 / 1891 loss=11.52, ..., wps=52922, ups=0.5, wpb=104928, bsz=5325,
 *     num_updates=445, lr=8.9e-05, gnorm=1.543, clip=0%, oom=0, loss_scale=2.000, wall=882,
 *     train_wall=756                                                                  (2019)
 *   2020-07-17 07:11:02 | INFO | train_inner | epoch 001:   2800 / 160368 loss=9.255, ...
 *     (2020+: the logging prefix is removed by the cleaner)
 *   {"epoch": 25, "loss": "3.097", ..., "wps": 1667443, "ups": "2.7", "wpb": 617156,
 *     "bsz": 16626, "num_updates": 53749, ...}                       (--log-format json)
 *
 * A row is one logged update: num_updates when printed, else (epoch - 1) x batches per epoch
 * + the batch (the 2018 line counts batches inside the epoch). Kept: the loss (fairseq's
 * base-2 cross-entropy; its running mean in brackets is not kept), lr, gnorm as grad norm,
 * wps as tokens/s (target tokens, the whole job, averaged over the log interval), wpb as the
 * update's tokens and bsz as its sentences. No step time is kept: ups is printed to one
 * decimal and train_wall is cumulative in some versions and per interval in others; wpb / wps
 * is the step time the log implies. End-of-epoch summaries ("| epoch 010 | train loss ...")
 * and validation lines are recognised, not steps; JSON records without wps (validation) too.
 */
#include <ctype.h>
#include <math.h>
#include <string.h>

#include "ingest/format.h"
#include "ingest/pyrepr.h"

/* After an optional "| ": "epoch E" then ":" or blanks and "N / M "; the offset of the first
 * "key=" piece. */
static size_t progress_head(mfu__span s, int64_t *epoch, int64_t *n, int64_t *m)
{
    size_t i = mfu__span_starts(s, "| ") ? 2 : 0;
    if (!mfu__span_starts(mfu__span_from(s, i), "epoch "))
        return 0;
    i += 6;
    size_t e0 = i;
    while (i < s.n && isdigit((unsigned char)s.p[i]))
        i++;
    if (i == e0 || i >= s.n)
        return 0;
    int64_t e, a, b;
    if (!mfu__int_parse((mfu__span){s.p + e0, i - e0}, &e))
        return 0;
    if (s.p[i] == ':')
        i++;
    mfu__span r = mfu__span_from(s, i);
    long sl = mfu__span_find(r, " / ");
    if (sl <= 0 || !mfu__int_parse((mfu__span){r.p, (size_t)sl}, &a))
        return 0;
    mfu__span r2 = mfu__span_from(r, (size_t)sl + 3);
    long sp = mfu__span_find(r2, " ");
    if (sp <= 0 || !mfu__int_parse((mfu__span){r2.p, (size_t)sp}, &b))
        return 0;
    if (epoch) {
        *epoch = e;
        *n = a;
        *m = b;
    }
    return (size_t)(r2.p + sp + 1 - s.p);
}

static bool json_record(mfu__span s)
{
    return mfu__span_starts(s, "{\"epoch\": ") &&
           (mfu__span_find(s, "\"wps\": ") > 0 || mfu__span_find(s, "\"valid_loss\": ") > 0);
}

static bool side_line(mfu__span s)
{
    size_t i = mfu__span_starts(s, "| ") ? 2 : 0;
    mfu__span r = mfu__span_from(s, i);
    return mfu__span_starts(r, "epoch ") &&
           (mfu__span_find(r, " | train loss ") > 0 || mfu__span_find(r, "valid on '") > 0 ||
            mfu__span_find(r, " | loss ") > 0);
}

static int fairseq_detect(const mfu__line *ln)
{
    mfu__span s = {ln->text, ln->len};
    size_t off = progress_head(s, NULL, NULL, NULL);
    if (off && mfu__span_find(mfu__span_from(s, off), "wps=") > 0)
        return MFU__DETECT_STEP;
    if (json_record(s))
        return mfu__span_find(s, "\"wps\": ") > 0 ? MFU__DETECT_STEP : MFU__DETECT_HINT;
    return side_line(s) ? MFU__DETECT_HINT : MFU__DETECT_NONE;
}

/* One "key" / value of either layout into the row; *updates gets num_updates. */
static void field(mfu_step *r, mfu__span k, mfu__span v, int64_t *updates)
{
    mfu__num n;
    if (mfu__span_eq(k, "num_updates")) {
        int64_t u;
        if (mfu__int_parse(v, &u) && u >= 0)
            *updates = u;
        return;
    }
    if (!mfu__num_parse(v, &n) || n.kind == MFU__NUM_NA)
        return;
    bool bad = n.kind != MFU__NUM_FINITE;
    if (mfu__span_eq(k, "loss")) {
        mfu__set_loss(r, &n);
    } else if (mfu__span_eq(k, "lr")) {
        r->lr = n.value;
    } else if (mfu__span_eq(k, "gnorm")) {
        r->grad_norm = n.value;
    } else if (mfu__span_eq(k, "wps") && !bad) {
        r->tokens_per_s = n.value;
        r->tokens_per_s_scope = MFU_SCOPE_GLOBAL;
    } else if (mfu__span_eq(k, "wpb") && !bad) {
        r->tokens = n.value;
    } else if (mfu__span_eq(k, "bsz") && !bad) {
        r->samples = n.value;
    }
}

static void set_convention(mfu__ictx *c)
{
    mfu__convention(c, "fairseq: wps = target tokens/s of the job over the log interval, wpb = "
                       "target tokens per update; loss in base 2");
}

static mfu_status fairseq_line(void *state, mfu__ictx *c, const mfu__line *ln)
{
    (void)state;
    mfu__span s = {ln->text, ln->len};
    mfu_step r;
    mfu_step_init(&r);
    int64_t updates = -1;
    if (json_record(s)) {
        mfu__span body, k, v;
        if (!mfu__pydict_open(s, &body) || mfu__span_find(s, "\"wps\": ") < 0) {
            mfu__used(c); /* a validation record */
            return MFU_OK;
        }
        while (mfu__pydict_next(&body, &k, &v))
            field(&r, k, v, &updates);
        if (updates < 0) {
            mfu__skip(c, "fairseq JSON record with wps but without num_updates");
            return MFU_OK;
        }
        r.step = updates;
        set_convention(c);
        return mfu__emit(c, &r);
    }
    int64_t epoch, n, m;
    size_t off = progress_head(s, &epoch, &n, &m);
    if (!off) {
        if (side_line(s))
            mfu__used(c);
        return MFU_OK;
    }
    mfu__span rest = mfu__span_from(s, off), piece, k, v;
    while (mfu__split_next(&rest, ", ", &piece)) {
        if (!mfu__kv(piece, "=", &k, &v))
            continue;
        long paren = mfu__span_find(v, " (");
        if (paren > 0)
            v.n = (size_t)paren; /* "1.27 (1.50)": the running mean is not kept */
        field(&r, k, v, &updates);
    }
    if (isnan(r.tokens_per_s)) {
        mfu__skip(c, "fairseq 'epoch E: N / M' line without wps=");
        return MFU_OK;
    }
    r.step = updates >= 0 ? updates : (epoch > 0 ? epoch - 1 : 0) * m + n;
    set_convention(c);
    return mfu__emit(c, &r);
}

const mfu__format mfu__fmt_fairseq = {
    .name = "fairseq",
    .summary = "fairseq 'epoch E: N / M loss=.., wps=.., wpb=.., num_updates=..' and JSON records",
    .detect = fairseq_detect,
    .line = fairseq_line,
};
