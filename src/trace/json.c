/*
 * json.c - the JSON of a set of traces: what `mfu trace --json` prints, what `mfu trace
 * --attach` stores with a run, what the dashboard's trace panel reads. Keys are in docs/cli.md
 * ("mfu trace"); units in the names; an absent figure is null.
 */
#include <math.h>
#include <string.h>

#include "trace/internal.h"

static json_t *num(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

/* json_object_set_new that tolerates a NULL value (then the key is null) and reports failure
 * through *ok. */
static void put(json_t *o, const char *k, json_t *v, bool *ok)
{
    if (!v || json_object_set_new(o, k, v) != 0)
        *ok = false;
}

json_t *mfu__trace_breakdown_json(const mfu_trace_breakdown *b)
{
    json_t *o = json_object();
    bool ok = o != NULL;
    if (!o)
        return NULL;
    put(o, "span_s", num(b->span_s), &ok);
    put(o, "compute_s", num(b->compute_s), &ok);
    for (int p = 0; p < MFU_TRACE_PARTS_; p++) {
        put(o, mfu_trace_part_name((mfu_trace_part)p), num(b->part_s[p]), &ok);
        if (p == MFU_TRACE_COMM_EXPOSED)
            put(o, "communication_overlapped_s", num(b->communication_overlapped_s), &ok);
    }
    if (!ok) {
        json_decref(o);
        return NULL;
    }
    return o;
}

json_t *mfu__trace_waterfall_json(const mfu_trace_waterfall *w, const char *mfu_source)
{
    json_t *o = json_object(), *lost = json_object(), *pts = json_array();
    bool ok = o && lost && pts;
    if (!ok) {
        json_decref(o);
        json_decref(lost);
        json_decref(pts);
        return NULL;
    }
    put(o, "mfu", num(w->mfu), &ok);
    put(o, "mfu_source", json_string(mfu_source ? mfu_source : ""), &ok);
    put(o, "step_time_s", num(w->step_time_s), &ok);
    put(o, "matmul_share", num(w->matmul_share), &ok);
    static const char *const keys[] = {"idle", "communication", "memcpy", "non_matmul",
                                       "matmul_below_peak"};
    const double vals[] = {w->idle, w->communication, w->memcpy, w->non_matmul,
                           w->matmul_below_peak};
    double level = 100;
    json_t *first = json_object();
    if (first) {
        put(first, "label", json_string("peak"), &ok);
        put(first, "points", json_real(100), &ok);
        put(first, "level", json_real(100), &ok);
    }
    if (!first || json_array_append_new(pts, first) != 0)
        ok = false;
    for (size_t i = 0; i < MFU__ARRAY_LEN(keys); i++) {
        put(lost, keys[i], num(vals[i]), &ok);
        level -= vals[i];
        json_t *e = json_object();
        if (e) {
            put(e, "label", json_string(keys[i]), &ok);
            put(e, "points", num(-vals[i]), &ok);
            put(e, "level", num(level), &ok);
        }
        if (!e || json_array_append_new(pts, e) != 0)
            ok = false;
    }
    json_t *last = json_object();
    if (last) {
        put(last, "label", json_string("mfu"), &ok);
        put(last, "points", num(100 * w->mfu), &ok);
        put(last, "level", num(100 * w->mfu), &ok);
    }
    if (!last || json_array_append_new(pts, last) != 0)
        ok = false;
    put(o, "lost_points", lost, &ok);
    put(o, "steps", pts, &ok);
    if (!ok) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static json_t *kernel_json(const mfu_trace_kernel *k, double span_s, double peak)
{
    json_t *e = json_object();
    bool ok = e != NULL;
    if (!e)
        return NULL;
    put(e, "name", json_string(k->name), &ok);
    put(e, "class", json_string(mfu_trace_class_name(k->cls)), &ok);
    put(e, "count", json_integer((json_int_t)k->count), &ok);
    put(e, "time_s", num(k->time_s), &ok);
    put(e, "share", num(span_s > 0 ? k->time_s / span_s : NAN), &ok);
    put(e, "flops", num(k->flops), &ok);
    put(e, "flops_per_s", num(k->flops_per_s), &ok);
    put(e, "peak_share", num(peak > 0 ? k->flops_per_s / peak : NAN), &ok);
    if (!ok) {
        json_decref(e);
        return NULL;
    }
    return e;
}

static json_t *rank_json(const mfu_trace *t, size_t nkern, double peak)
{
    json_t *o = json_object(), *steps = json_array(), *kern = json_array();
    bool ok = o && steps && kern;
    mfu_trace_breakdown tot = mfu_trace_total(t);
    if (!ok) {
        json_decref(o);
        json_decref(steps);
        json_decref(kern);
        return NULL;
    }
    int64_t r = mfu_trace_rank(t);
    put(o, "rank", r >= 0 ? json_integer(r) : json_null(), &ok);
    put(o, "file", json_string(mfu_trace_name(t)), &ok);
    const char *dev = mfu_trace_device(t);
    put(o, "device", dev[0] ? json_string(dev) : json_null(), &ok);
    int64_t w = mfu_trace_world_size(t);
    put(o, "world_size", w >= 0 ? json_integer(w) : json_null(), &ok);
    for (size_t i = 0; i < mfu_trace_step_count(t); i++) {
        const mfu_trace_step *s = mfu_trace_step_at(t, i);
        json_t *e = json_object();
        if (!e) {
            ok = false;
            break;
        }
        put(e, "step", json_integer(s->step), &ok);
        put(e, "step_time_s", num(s->step_time_s), &ok);
        put(e, "interval_s", num(s->interval_s), &ok);
        put(e, "gpu_offset_s", num(s->gpu_offset_s), &ok);
        put(e, "cpu_s", num(s->cpu_s), &ok);
        put(e, "activities", json_integer((json_int_t)s->activities), &ok);
        put(e, "breakdown", mfu__trace_breakdown_json(&s->breakdown), &ok);
        if (json_array_append_new(steps, e) != 0)
            ok = false;
    }
    put(o, "steps", steps, &ok);
    put(o, "totals", mfu__trace_breakdown_json(&tot), &ok);
    json_t *mm = json_array();
    if (!mm)
        ok = false;
    /* the nkern longest kernels, and the nkern longest matmul kernels (their FLOP/s) */
    size_t nall = 0, nmm = 0;
    for (size_t i = 0; ok && i < mfu_trace_kernel_count(t) && (nall < nkern || nmm < nkern); i++) {
        const mfu_trace_kernel *k = mfu_trace_kernel_at(t, i);
        bool is_mm = k->cls == MFU_TRACE_CLASS_MATMUL;
        if (nall < nkern) {
            json_t *e = kernel_json(k, tot.span_s, peak);
            if (!e || json_array_append_new(kern, e) != 0)
                ok = false;
            nall++;
        }
        if (is_mm && nmm < nkern) {
            json_t *e = kernel_json(k, tot.span_s, peak);
            if (!e || json_array_append_new(mm, e) != 0)
                ok = false;
            nmm++;
        }
    }
    put(o, "matmul_kernels", mm, &ok);
    put(o, "kernels", kern, &ok);
    mfu_trace_counts c = mfu_trace_get_counts(t);
    json_t *co = json_object();
    if (co) {
        put(co, "events", json_integer((json_int_t)c.events), &ok);
        put(co, "activities", json_integer((json_int_t)c.activities), &ok);
        put(co, "attributed", json_integer((json_int_t)c.attributed), &ok);
        put(co, "placed_by_time", json_integer((json_int_t)c.placed_by_time), &ok);
        put(co, "no_launch", json_integer((json_int_t)c.no_launch), &ok);
        put(co, "outside_steps", json_integer((json_int_t)c.outside), &ok);
        put(co, "shaped_ops", json_integer((json_int_t)c.shaped_ops), &ok);
        put(co, "bytes", json_integer((json_int_t)c.bytes), &ok);
        put(co, "held_bytes", json_integer((json_int_t)c.held_bytes), &ok);
    }
    put(o, "counts", co, &ok);
    if (!ok) {
        json_decref(o);
        return NULL;
    }
    return o;
}

json_t *mfu__trace_json(const mfu_trace_view *v, size_t nkern)
{
    json_t *o = json_object(), *ranks = json_array();
    bool ok = o && ranks;
    if (!ok) {
        json_decref(o);
        json_decref(ranks);
        return NULL;
    }
    const mfu_trace *const *t = v->traces;
    size_t n = v->n;
    for (size_t i = 0; i < n && ok; i++) {
        json_t *r = rank_json(t[i], nkern, v->peak_flops_per_s);
        if (!r || json_array_append_new(ranks, r) != 0)
            ok = false;
    }
    put(o, "ranks", ranks, &ok);
    size_t rank_steps = 0;
    mfu_trace_breakdown tot = mfu_trace_set_total(t, n, &rank_steps);
    json_t *to = mfu__trace_breakdown_json(&tot);
    if (to)
        put(to, "rank_steps", json_integer((json_int_t)rank_steps), &ok);
    put(o, "totals", to, &ok);
    const mfu_trace_ranks *rk = &v->ranks;
    json_t *c = json_object(), *miss = json_array();
    if (c && miss) {
        put(c, "world_size", rk->world_size >= 0 ? json_integer(rk->world_size) : json_null(), &ok);
        put(c, "missing", json_integer((json_int_t)rk->missing), &ok);
        for (size_t i = 0; i < rk->missing && i < MFU_TRACE_MISSING_LISTED; i++)
            if (json_array_append_new(miss, json_integer(rk->missing_rank[i])) != 0)
                ok = false;
        put(c, "missing_ranks", miss, &ok);
        put(o, "ranks_check", c, &ok);
    } else {
        json_decref(c);
        json_decref(miss);
        ok = false;
    }
    const mfu_trace_straggler *sg = &v->straggler;
    if (sg->found) {
        json_t *s = json_object();
        if (s) {
            put(s, "rank", json_integer(sg->rank), &ok);
            put(s, "file", json_string(mfu_trace_name(t[sg->index])), &ok);
            put(s, "steps", json_integer((json_int_t)sg->steps), &ok);
            put(s, "compute_s", num(sg->compute_s), &ok);
            put(s, "median_compute_s", num(sg->median_compute_s), &ok);
            put(s, "excess", num(sg->excess), &ok);
            put(s, "wait_s", num(sg->wait_s), &ok);
            put(s, "wait_points", num(sg->wait_points), &ok);
        }
        put(o, "straggler", s, &ok);
    } else {
        put(o, "straggler", json_null(), &ok);
    }
    if (v->has_waterfall)
        put(o, "waterfall", mfu__trace_waterfall_json(&v->waterfall, v->mfu_source), &ok);
    else
        put(o, "waterfall", json_null(), &ok);
    put(o, "waterfall_missing", v->has_waterfall ? json_null() : json_string(v->missing), &ok);
    put(o, "peak_flops_per_s", num(v->peak_flops_per_s), &ok);
    if (!ok) {
        json_decref(o);
        return NULL;
    }
    return o;
}
