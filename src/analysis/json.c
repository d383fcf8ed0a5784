/*
 * json.c - the analysis as a JSON document (see json.h). Keys are added in a fixed order so
 * that dumps are stable; numbers that are not finite are written as null.
 */
#include "analysis/json.h"

#include <math.h>

#include "analysis/internal.h"

static json_t *num(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static json_t *interval(mfu_interval v)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    json_object_set_new(o, "value", num(v.value));
    json_object_set_new(o, "lo", num(v.lo));
    json_object_set_new(o, "hi", num(v.hi));
    return o;
}

static json_t *label(const char *s)
{
    return s[0] ? json_string(s) : json_null();
}

json_t *mfu__level_json(const mfu_level *l)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    json_object_set_new(o, "first_step", json_integer(l->first_step));
    json_object_set_new(o, "last_step", json_integer(l->last_step));
    json_object_set_new(o, "steps", json_integer((json_int_t)l->steps));
    json_object_set_new(o, "tokens_per_second", interval(l->tokens_per_s));
    json_object_set_new(o, "useful_tokens_per_second", interval(l->useful_tokens_per_s));
    json_object_set_new(o, "mfu", interval(l->mfu));
    json_object_set_new(o, "hfu", interval(l->hfu));
    json_object_set_new(o, "step_time_s", interval(l->step_time_s));
    json_object_set_new(o, "model_flops_per_s_per_device", num(l->model_flops_per_s_per_device));
    json_object_set_new(o, "hardware_flops_per_s_per_device",
                        num(l->hardware_flops_per_s_per_device));
    /* FLOPs in units of an unknown peak are no figures to print (their ratios are the terms) */
    bool rel = l->flops_relative;
    json_object_set_new(o, "capacity_flops_per_s", num(rel ? NAN : l->capacity_flops_per_s));
    json_object_set_new(o, "flops_per_token", num(rel ? NAN : l->model_flops_per_token));
    json_object_set_new(o, "hardware_flops_per_token",
                        num(rel ? NAN : l->hardware_flops_per_token));
    json_object_set_new(o, "flops_relative", json_boolean(rel));
    json_object_set_new(o, "useful_fraction", num(l->useful_fraction));
    json_t *tot = json_object();
    if (tot) {
        json_object_set_new(tot, "tokens_per_second", num(l->total_tokens_per_s));
        json_object_set_new(tot, "mfu", num(l->total_mfu));
        json_object_set_new(tot, "time_s", num(l->total_time_s));
        json_object_set_new(tot, "mean_step_time_s", num(l->mean_step_time_s));
        json_object_set_new(tot, "stall_time_s", num(l->stall_time_s));
    }
    json_object_set_new(o, "total", tot ? tot : json_null());
    json_t *cfg = json_object();
    if (cfg) {
        json_object_set_new(cfg, "devices", num(l->devices));
        json_object_set_new(cfg, "peak_flops_per_s", num(l->peak_flops_per_s));
        json_object_set_new(cfg, "seq_len", num(l->seq_len));
        json_object_set_new(cfg, "global_batch", num(l->global_batch));
        json_object_set_new(cfg, "dtype", label(l->dtype));
        json_object_set_new(cfg, "recompute", label(l->recompute));
    }
    json_object_set_new(o, "config", cfg ? cfg : json_null());
    json_object_set_new(o, "rho", num(l->rho));
    json_object_set_new(o, "vif", num(l->vif));
    return o;
}

json_t *mfu__decomposition_json(const mfu_decomposition *d)
{
    json_t *o = json_object(), *terms = json_object();
    if (!o || !terms) {
        json_decref(o);
        json_decref(terms);
        return NULL;
    }
    for (int t = 0; t < MFU_TERM_COUNT_; t++) {
        const mfu_term_change *c = &d->term[t];
        json_t *x = json_object();
        if (!x)
            continue;
        json_object_set_new(x, "dln", num(c->dln));
        json_object_set_new(x, "pct", num(c->pct));
        json_object_set_new(x, "share", num(c->share));
        json_object_set_new(x, "lo_pct", num(c->lo_pct));
        json_object_set_new(x, "hi_pct", num(c->hi_pct));
        json_object_set_new(x, "direction_certain", json_boolean(c->direction_certain));
        json_object_set_new(x, "size_known", json_boolean(c->size_known));
        json_object_set_new(terms, mfu_term_name((mfu_term)t), x);
    }
    json_object_set_new(o, "sentence", json_string(d->sentence));
    json_object_set_new(o, "capacity_unknown", json_boolean(d->capacity_unknown));
    json_object_set_new(o, "flops_units_differ", json_boolean(d->flops_units_differ));
    json_object_set_new(o, "config_change", json_string(d->config_change));
    json_object_set_new(o, "mfu_points", num(d->mfu_points));
    json_object_set_new(o, "terms", terms);
    json_object_set_new(o, "from", mfu__level_json(&d->from));
    json_object_set_new(o, "to", mfu__level_json(&d->to));
    return o;
}

json_t *mfu__finding_json(const mfu_finding *f)
{
    json_t *o = json_object(), *ev = json_object(), *steps = json_array();
    if (!o || !ev || !steps) {
        json_decref(o);
        json_decref(ev);
        json_decref(steps);
        return NULL;
    }
    json_array_append_new(steps, json_integer(f->first_step));
    json_array_append_new(steps, json_integer(f->last_step));
    for (size_t i = 0; i < f->nevidence && i < MFU_FINDING_EVIDENCE_MAX; i++)
        json_object_set_new(ev, f->evidence[i].name, num(f->evidence[i].value));
    json_object_set_new(o, "kind", json_string(f->kind));
    json_object_set_new(o, "severity", json_string(mfu_severity_name(f->severity)));
    json_object_set_new(o, "steps", steps);
    json_object_set_new(o, "summary", json_string(f->summary));
    json_object_set_new(o, "evidence", ev);
    json_object_set_new(o, "next_step", json_string(f->next_step));
    return o;
}

json_t *mfu__analysis_json(const mfu_analysis *a)
{
    if (!a)
        return NULL;
    json_t *o = json_object();
    if (!o)
        return NULL;
    json_t *m = json_object();
    if (m) {
        json_object_set_new(m, "intervals", json_boolean(a->opt.intervals));
        json_object_set_new(m, "confidence", num(a->opt.confidence));
        json_object_set_new(m, "size_threshold", num(a->opt.size_threshold));
        json_object_set_new(m, "min_segment_steps",
                            json_integer((json_int_t)a->opt.min_segment_steps));
        json_object_set_new(m, "changepoint_alpha", num(a->opt.changepoint_alpha));
        json_object_set_new(m, "min_level_shift", num(a->opt.min_level_shift));
        json_object_set_new(m, "level",
                            json_string("median of the steady steps (total: sum of tokens / sum "
                                        "of step time)"));
        json_object_set_new(m, "interval",
                            json_string("order statistics of the median, widened for AR(1) "
                                        "correlation"));
    }
    json_object_set_new(o, "method", m ? m : json_null());
    json_t *st = json_object();
    if (st) {
        size_t usable = 0, steady = 0;
        for (size_t i = 0; i < a->n; i++) {
            usable += a->usable[i];
            steady += a->steady[i];
        }
        json_object_set_new(st, "rows", json_integer((json_int_t)a->n));
        json_object_set_new(st, "first", a->n ? json_integer(a->step[0]) : json_null());
        json_object_set_new(st, "last", a->n ? json_integer(a->step[a->n - 1]) : json_null());
        json_object_set_new(st, "usable", json_integer((json_int_t)usable));
        json_object_set_new(st, "steady", json_integer((json_int_t)steady));
    }
    json_object_set_new(o, "steps", st ? st : json_null());
    json_t *w = json_object();
    if (w) {
        json_object_set_new(w, "steps", json_integer((json_int_t)a->warmup.steps));
        json_object_set_new(w, "first_step",
                            a->warmup.steps ? json_integer(a->warmup.first_step) : json_null());
        json_object_set_new(w, "last_step",
                            a->warmup.steps ? json_integer(a->warmup.last_step) : json_null());
        json_object_set_new(w, "slowdown", num(a->warmup.slowdown));
        json_object_set_new(w, "checked", json_boolean(a->warmup.checked));
        json_object_set_new(w, "mid_run", json_boolean(a->warmup.mid_run));
        json_object_set_new(w, "artifacts", json_integer((json_int_t)a->warmup.artifacts));
        json_object_set_new(w, "impossible", json_integer((json_int_t)a->warmup.impossible));
        json_object_set_new(w, "excluded", json_true());
        json_object_set_new(w, "rule",
                            json_string("leading steps slower than the median of the next 30 "
                                        "by more than max(4 sigma, 5 %)"));
    }
    json_object_set_new(o, "warmup", w ? w : json_null());
    json_object_set_new(o, "steady",
                        a->steady_level.steps ? mfu__level_json(&a->steady_level) : json_null());
    json_t *segs = json_array();
    for (size_t q = 0; segs && q < a->nseg; q++) {
        const mfu_segment *g = &a->seg[q];
        json_t *x = json_object();
        if (!x)
            continue;
        json_object_set_new(x, "start_step", json_integer(g->start_step));
        json_object_set_new(x, "end_step", json_integer(g->end_step));
        json_object_set_new(x, "cause", json_string(mfu_cause_name(g->cause)));
        json_object_set_new(x, "settle_steps", json_integer((json_int_t)g->settle_steps));
        json_object_set_new(x, "levels", mfu__level_json(&g->level));
        json_array_append_new(segs, x);
    }
    json_object_set_new(o, "segments", segs ? segs : json_null());
    json_t *dec = json_array();
    for (size_t q = 0; dec && q + 1 < a->nseg; q++) {
        json_t *x = mfu__decomposition_json(&a->bnd[q]);
        if (!x)
            continue;
        json_object_set_new(x, "from_segment", json_integer((json_int_t)q));
        json_object_set_new(x, "to_segment", json_integer((json_int_t)q + 1));
        json_object_set_new(x, "at_step", json_integer(a->seg[q + 1].start_step));
        json_array_append_new(dec, x);
    }
    json_object_set_new(o, "decomposition", dec ? dec : json_null());
    json_t *fs = json_array();
    for (size_t i = 0; fs && i < a->nfind; i++)
        json_array_append_new(fs, mfu__finding_json(&a->find[i]));
    json_object_set_new(o, "findings", fs ? fs : json_null());
    json_t *inv = json_array();
    for (size_t i = 0; inv && i < a->ninv; i++) {
        const mfu_invariant_result *r = &a->inv[i];
        json_t *x = json_object();
        if (!x)
            continue;
        json_object_set_new(x, "expression", json_string(r->expression));
        json_object_set_new(x, "passed", json_boolean(r->passed));
        json_object_set_new(x, "value", num(r->value));
        json_object_set_new(x, "threshold", num(r->threshold));
        json_object_set_new(x, "message", json_string(r->message));
        json_array_append_new(inv, x);
    }
    json_object_set_new(o, "invariants", inv ? inv : json_null());
    return o;
}
