/*
 * invariant.c - `--expect` expressions checked against the steady state of an analysis.
 *
 * Grammar (whitespace allowed between parts):
 *     expr  := name [ "." stat ] op value
 *     op    := ">=" | "<=" | ">" | "<" | "==" | "=" | "!="
 *     value := number [ "%" ]  |  "const"        ("const" only with = or ==)
 * A number with "%" is divided by 100 (mfu>=40% is mfu>=0.40). Names and statistics are the
 * tables below; every statistic is taken over the steady steps (after warm-up and settle).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/internal.h"
#include "util/util.h"

enum { ST_LEVEL, ST_MEDIAN, ST_MEAN, ST_MIN, ST_MAX, ST_P5, ST_P95, ST_LAST, ST_COUNT_ };
static const char *const stat_names[ST_COUNT_] = {"level", "median", "mean", "min",
                                                  "max",   "p5",     "p95",  "last"};
static const char *const stat_words[ST_COUNT_] = {"level over steady steps",
                                                  "median of steady steps",
                                                  "mean of steady steps",
                                                  "minimum of steady steps",
                                                  "maximum of steady steps",
                                                  "5th percentile of steady steps",
                                                  "95th percentile of steady steps",
                                                  "median of the last 10 % of steady steps"};

/* Where a name's per-step values come from. */
enum src { S_DERIVED, S_INPUT, S_HW_FPT, S_PADDING, S_FINDINGS };

typedef struct name_def {
    const char *name;
    enum src src;
    int col;      /* mfu_derived or mfu_series_column */
    int def_stat; /* default statistic */
} name_def;

static const name_def names[] = {
    {"mfu", S_DERIVED, MFU_D_MFU, ST_LEVEL},
    {"hfu", S_DERIVED, MFU_D_HFU, ST_LEVEL},
    {"tokens_per_second", S_DERIVED, MFU_D_TOKENS_PER_S, ST_LEVEL},
    {"tokens_per_s", S_DERIVED, MFU_D_TOKENS_PER_S, ST_LEVEL},
    {"useful_tokens_per_second", S_DERIVED, MFU_D_USEFUL_TOKENS_PER_S, ST_LEVEL},
    {"model_flops_per_s_per_device", S_DERIVED, MFU_D_MODEL_FLOPS_PER_S_PER_DEVICE, ST_LEVEL},
    {"hardware_flops_per_s_per_device", S_DERIVED, MFU_D_HARDWARE_FLOPS_PER_S_PER_DEVICE, ST_LEVEL},
    {"step_time_s", S_DERIVED, MFU_D_STEP_TIME_S, ST_MEDIAN},
    {"capacity_flops_per_s", S_DERIVED, MFU_D_CAPACITY_FLOPS_PER_S, ST_LEVEL},
    {"flops_per_token", S_INPUT, MFU_SC_MODEL_FLOPS_PER_TOKEN, ST_LEVEL},
    {"hardware_flops_per_token", S_HW_FPT, 0, ST_LEVEL},
    {"padding_fraction", S_PADDING, 0, ST_LEVEL},
    {"devices", S_INPUT, MFU_SC_DEVICES, ST_MEDIAN},
    {"peak_flops_per_s", S_INPUT, MFU_SC_PEAK_FLOPS_PER_S, ST_MEDIAN},
    {"seq_len", S_INPUT, MFU_SC_SEQ_LEN, ST_MEDIAN},
    {"global_batch", S_INPUT, MFU_SC_GLOBAL_BATCH, ST_MEDIAN},
    {"loss", S_INPUT, MFU_SC_LOSS, ST_LAST},
    {"clock_mhz", S_INPUT, MFU_SC_CLOCK_MHZ, ST_MEDIAN},
    {"power_w", S_INPUT, MFU_SC_POWER_W, ST_MEDIAN},
    {"findings", S_FINDINGS, 0, ST_LEVEL},
};
#define NNAMES (sizeof names / sizeof names[0])

static const char name_list[] =
    "mfu, hfu, tokens_per_second, useful_tokens_per_second, model_flops_per_s_per_device, "
    "hardware_flops_per_s_per_device, step_time_s, capacity_flops_per_s, flops_per_token, "
    "hardware_flops_per_token, padding_fraction, devices, peak_flops_per_s, seq_len, "
    "global_batch, loss, clock_mhz, power_w, findings";

static mfu_status perr(mfu_error *err, size_t col, const char *fmt, ...) MFU__PRINTF(3, 4);

/* A parse error at 0-based byte col of the expression (field "expect"). */
static mfu_status perr(mfu_error *err, size_t col, const char *fmt, ...)
{
    char msg[MFU_ERROR_MESSAGE_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    mfu__fail_field(err, MFU_E_PARSE, "expect", "%s", msg);
    if (err)
        err->column = (long)col + 1;
    return MFU_E_PARSE;
}

static const char *skip_ws(const char *p)
{
    while (*p == ' ' || *p == '\t')
        p++;
    return p;
}

mfu_status mfu_invariant_parse(const char *expr, mfu_invariant *out, mfu_error *err)
{
    if (!expr || !out)
        return mfu__fail(err, MFU_E_INVALID, 0, "mfu_invariant_parse: NULL argument");
    size_t len = strlen(expr);
    if (len >= MFU_INVARIANT_EXPR_MAX)
        return mfu__fail_field(err, MFU_E_LIMIT, "expect",
                               "expression is %zu bytes, more than %d; shorten it", len,
                               MFU_INVARIANT_EXPR_MAX - 1);
    mfu_invariant inv;
    memset(&inv, 0, sizeof inv);
    mfu__strlcpy(inv.expression, expr, sizeof inv.expression);
    const char *p = skip_ws(expr);
    if (!*p)
        return perr(err, 0, "empty expression; write NAME OP VALUE, e.g. mfu>=0.40");
    const char *ns = p;
    while ((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_')
        p++;
    size_t nlen = (size_t)(p - ns);
    char word[64];
    if (nlen == 0 || nlen >= sizeof word) {
        char got[16];
        snprintf(got, sizeof got, "%.8s", ns);
        return perr(err, (size_t)(ns - expr),
                    "expected a name at '%s'; use a lower-case name such as mfu, hfu, "
                    "tokens_per_second, step_time_s, flops_per_token",
                    got);
    }
    memcpy(word, ns, nlen);
    word[nlen] = 0;
    int ni = -1;
    for (size_t i = 0; i < NNAMES; i++)
        if (strcmp(names[i].name, word) == 0)
            ni = (int)i;
    if (ni < 0)
        return perr(err, (size_t)(ns - expr), "unknown name '%s'; use one of %s", word, name_list);
    inv.name = ni;
    inv.stat = names[ni].def_stat;
    if (*p == '.') {
        const char *ss = ++p;
        while ((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9'))
            p++;
        size_t slen = (size_t)(p - ss);
        int si = -1;
        for (int i = 0; i < ST_COUNT_ && slen < sizeof word; i++)
            if (strlen(stat_names[i]) == slen && strncmp(stat_names[i], ss, slen) == 0)
                si = i;
        if (si < 0 || names[ni].src == S_FINDINGS) {
            char got[24];
            snprintf(got, sizeof got, "%.*s", (int)(slen < 16 ? slen : 16), ss);
            return perr(err, (size_t)(ss - expr),
                        "unknown statistic '%s'; use level, median, mean, min, max, p5, p95 "
                        "or last (none for findings)",
                        got);
        }
        inv.stat = si;
    }
    p = skip_ws(p);
    size_t opcol = (size_t)(p - expr);
    if (p[0] == '>' && p[1] == '=')
        inv.op = MFU_OP_GE, p += 2;
    else if (p[0] == '<' && p[1] == '=')
        inv.op = MFU_OP_LE, p += 2;
    else if (p[0] == '=' && p[1] == '=')
        inv.op = MFU_OP_EQ, p += 2;
    else if (p[0] == '!' && p[1] == '=')
        inv.op = MFU_OP_NE, p += 2;
    else if (p[0] == '>')
        inv.op = MFU_OP_GT, p += 1;
    else if (p[0] == '<')
        inv.op = MFU_OP_LT, p += 1;
    else if (p[0] == '=')
        inv.op = MFU_OP_EQ, p += 1;
    else
        return perr(err, opcol,
                    "expected an operator after '%s': one of >=, <=, >, <, ==, =, !=", word);
    p = skip_ws(p);
    size_t vcol = (size_t)(p - expr);
    char val[MFU_INVARIANT_EXPR_MAX];
    mfu__strlcpy(val, p, sizeof val);
    size_t vl = strlen(val);
    while (vl && (val[vl - 1] == ' ' || val[vl - 1] == '\t'))
        val[--vl] = 0;
    if (!vl)
        return perr(err, vcol,
                    "missing value after the operator in '%s'; write a number (0.4, 40%%, "
                    "1.2e6) or const",
                    expr);
    if (strcmp(val, "const") == 0) {
        if (inv.op != MFU_OP_EQ)
            return perr(err, vcol, "'const' needs = or ==, e.g. flops_per_token=const");
        inv.op = MFU_OP_CONST;
        inv.value = NAN;
    } else {
        double scale = 1;
        if (val[vl - 1] == '%') {
            val[--vl] = 0;
            scale = 0.01;
        }
        double x;
        if (!mfu__parse_double(val, &x))
            return perr(err, vcol,
                        "'%s' is not a number; write a number such as 0.4, 40%% or 1.2e6, or "
                        "const",
                        val);
        inv.value = x * scale;
    }
    *out = inv;
    return MFU_OK;
}

/* Per-step values of name def over the steady rows, in row order, into v. */
static size_t values_of(const mfu_analysis *a, const name_def *d, double *v)
{
    size_t m = 0;
    for (size_t i = 0; i < a->n; i++) {
        if (!a->steady[i])
            continue;
        double x;
        switch (d->src) {
        case S_DERIVED: x = a->d[d->col][i]; break;
        case S_INPUT: x = a->in[d->col][i]; break;
        case S_HW_FPT: x = MFU__AT(a->hv, i); break;
        case S_PADDING: x = 1 - MFU__AT(a->uv, i) / MFU__AT(a->kv, i); break;
        default: x = NAN; break;
        }
        if (isfinite(x))
            v[m++] = x;
    }
    return m;
}

static double level_of_name(const mfu_analysis *a, const name_def *d)
{
    const mfu_level *L = &a->steady_level;
    if (d->src == S_DERIVED)
        switch (d->col) {
        case MFU_D_MFU: return L->mfu.value;
        case MFU_D_HFU: return L->hfu.value;
        case MFU_D_TOKENS_PER_S: return L->tokens_per_s.value;
        case MFU_D_USEFUL_TOKENS_PER_S: return L->useful_tokens_per_s.value;
        case MFU_D_MODEL_FLOPS_PER_S_PER_DEVICE: return L->model_flops_per_s_per_device;
        case MFU_D_HARDWARE_FLOPS_PER_S_PER_DEVICE: return L->hardware_flops_per_s_per_device;
        case MFU_D_CAPACITY_FLOPS_PER_S: return L->capacity_flops_per_s;
        case MFU_D_STEP_TIME_S: return L->step_time_s.value;
        default: break;
        }
    if (d->src == S_INPUT && d->col == MFU_SC_MODEL_FLOPS_PER_TOKEN)
        return L->model_flops_per_token;
    if (d->src == S_HW_FPT)
        return L->hardware_flops_per_token;
    if (d->src == S_PADDING)
        return 1 - L->useful_fraction;
    return NAN; /* no ratio level: the caller falls back to the median */
}

static bool near(double a, double b)
{
    return fabs(a - b) <= 1e-9 * fmax(fabs(a), fabs(b));
}

void mfu_invariant_eval(const mfu_analysis *a, const mfu_invariant *inv, mfu_invariant_result *out)
{
    if (!out)
        return;
    memset(out, 0, sizeof *out);
    out->value = out->threshold = NAN;
    if (!a || !inv || inv->name < 0 || (size_t)inv->name >= NNAMES || inv->stat < 0 ||
        inv->stat >= ST_COUNT_) {
        snprintf(out->message, sizeof out->message, "invalid invariant");
        return;
    }
    mfu__strlcpy(out->expression, inv->expression, sizeof out->expression);
    const name_def *d = &names[inv->name];
    out->threshold = inv->value;
    const mfu_level *L = &a->steady_level;
    char range[64];
    snprintf(range, sizeof range, "%lld..%lld", (long long)L->first_step, (long long)L->last_step);
    if (d->src == S_FINDINGS) {
        size_t c = 0;
        for (size_t i = 0; i < a->nfind; i++)
            c += a->find[i].severity >= MFU_SEV_WARNING;
        out->value = (double)c;
    }
    double *v = NULL;
    size_t m = 0;
    if (d->src != S_FINDINGS) {
        v = malloc((a->n ? a->n : 1) * sizeof *v);
        if (!v) {
            snprintf(out->message, sizeof out->message, "%s: out of memory", d->name);
            return;
        }
        m = values_of(a, d, v);
    }
    const char *what =
        d->src == S_FINDINGS ? "findings of severity warning or error" : stat_words[inv->stat];
    if (inv->op == MFU_OP_CONST) {
        double lo = INFINITY, hi = -INFINITY;
        for (size_t j = 0; j < m; j++) {
            lo = fmin(lo, v[j]);
            hi = fmax(hi, v[j]);
        }
        free(v);
        if (d->src == S_FINDINGS) {
            out->passed = true;
            snprintf(out->message, sizeof out->message, "%s = %g: ok (one number)", d->name,
                     out->value);
            return;
        }
        if (m == 0) {
            snprintf(out->message, sizeof out->message,
                     "%s is unknown in steps %s: the series has no %s values", d->name, range,
                     d->name);
            return;
        }
        out->value = lo;
        out->threshold = hi;
        out->passed = near(lo, hi);
        if (out->passed)
            snprintf(out->message, sizeof out->message, "%s = %.6g in every steady step: ok",
                     d->name, lo);
        else
            snprintf(out->message, sizeof out->message,
                     "%s varies over steady steps %s: %.6g .. %.6g, not constant", d->name, range,
                     lo, hi);
        return;
    }
    if (d->src != S_FINDINGS) {
        int stat = inv->stat;
        double x = NAN;
        if (stat == ST_LEVEL) {
            x = level_of_name(a, d);
            if (isnan(x)) {
                stat = ST_MEDIAN;
                what = stat_words[ST_MEDIAN];
            }
        }
        if (stat != ST_LEVEL && m > 0) {
            if (stat == ST_LAST) {
                size_t tail = m / 10 ? m / 10 : 1;
                x = mfu__median_inplace(v + m - tail, tail);
            } else if (stat == ST_MEAN) {
                double s = 0;
                for (size_t j = 0; j < m; j++)
                    s += v[j];
                x = s / (double)m;
            } else {
                mfu__sort_doubles(v, m);
                double q = stat == ST_MEDIAN ? 0.5
                           : stat == ST_MIN  ? 0
                           : stat == ST_MAX  ? 1
                           : stat == ST_P5   ? 0.05
                                             : 0.95;
                x = mfu__quantile_sorted(v, m, q);
            }
        }
        out->value = x;
    }
    free(v);
    static const char *const opname[] = {">=", "<=", ">", "<", "==", "!="};
    const char *op = opname[inv->op];
    if (!isfinite(out->value)) {
        snprintf(out->message, sizeof out->message,
                 "%s is unknown in steps %s (no steady step has it: give the FLOPs per token, "
                 "devices and peak, or the column): fails %s %g",
                 d->name, range, op, inv->value);
        return;
    }
    double x = out->value, t = inv->value;
    switch (inv->op) {
    case MFU_OP_GE: out->passed = x >= t || near(x, t); break;
    case MFU_OP_LE: out->passed = x <= t || near(x, t); break;
    case MFU_OP_GT: out->passed = x > t && !near(x, t); break;
    case MFU_OP_LT: out->passed = x < t && !near(x, t); break;
    case MFU_OP_EQ: out->passed = near(x, t); break;
    default: out->passed = !near(x, t); break;
    }
    snprintf(out->message, sizeof out->message, "%s = %.6g (%s%s%s): %s %s %g", d->name, x, what,
             d->src == S_FINDINGS ? "" : " ", d->src == S_FINDINGS ? "" : range,
             out->passed ? "ok," : "violates", op, t);
}

mfu_status mfu_analysis_expect(mfu_analysis *a, const char *expr, mfu_invariant_result *out,
                               mfu_error *err)
{
    if (!a)
        return mfu__fail(err, MFU_E_INVALID, 0, "mfu_analysis_expect: analysis is NULL");
    mfu_invariant inv;
    mfu_status st = mfu_invariant_parse(expr, &inv, err);
    if (st != MFU_OK)
        return st;
    if (a->ninv >= MFU_ANALYSIS_MAX_INVARIANTS)
        return mfu__fail_field(err, MFU_E_LIMIT, "expect",
                               "more than %d invariants on one analysis; check fewer",
                               MFU_ANALYSIS_MAX_INVARIANTS);
    mfu_invariant_result r;
    mfu_invariant_eval(a, &inv, &r);
    a->inv[a->ninv++] = r;
    if (out)
        *out = r;
    return MFU_OK;
}

size_t mfu_analysis_invariant_count(const mfu_analysis *a)
{
    return a ? a->ninv : 0;
}

const mfu_invariant_result *mfu_analysis_invariant(const mfu_analysis *a, size_t i)
{
    return (a && i < a->ninv) ? &a->inv[i] : NULL;
}
