/*
 * series.c - the per-step input of the analysis (mfu/analysis.h): columns that grow together.
 *
 * Config labels (dtype, recompute) are interned: each row stores a small id into the series's
 * label table (0 = absent), so comparing configurations is comparing integers. A failed append
 * leaves the series as it was: every reallocation succeeds before the row is written.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/internal.h"
#include "util/util.h"

void mfu_series_row_init(mfu_series_row *row)
{
    memset(row, 0, sizeof *row);
    row->time_s = row->step_time_s = row->tokens = row->useful_tokens = NAN;
    row->tokens_per_s = row->model_flops_per_token = row->hardware_flops_per_token = NAN;
    row->devices = row->peak_flops_per_s = row->seq_len = row->global_batch = NAN;
    row->clock_mhz = row->power_w = row->max_clock_mhz = row->power_limit_w = NAN;
    row->loss = row->data_loading_s = row->comm_s = row->optimizer_s = NAN;
    row->mfu = row->hfu = NAN;
    row->rank = -1;
}

mfu_series *mfu_series_new(void)
{
    mfu_series *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->max_rows = (size_t)MFU_SERIES_MAX_ROWS;
    return s;
}

void mfu_series_free(mfu_series *s)
{
    if (!s)
        return;
    for (int i = 0; i < MFU_SC_COUNT_; i++)
        if (s->present[i])
            free(s->col[i]);
    free(s->nan);
    free(s->step);
    free(s->rank);
    free(s->flags);
    free(s->dtype);
    free(s->recompute);
    free(s);
}

mfu_status mfu_series_set_max_rows(mfu_series *s, size_t max_rows, mfu_error *err)
{
    if (!s)
        return mfu__fail(err, MFU_E_INVALID, 0, "mfu_series_set_max_rows: series is NULL");
    if (max_rows < 1 || max_rows > (size_t)MFU_SERIES_MAX_ROWS || max_rows < s->n)
        return mfu__fail(err, MFU_E_INVALID, 0,
                         "row limit %zu is outside 1..%ld or below the %zu rows held; pass a "
                         "limit in that range",
                         max_rows, (long)MFU_SERIES_MAX_ROWS, s->n);
    s->max_rows = max_rows;
    return MFU_OK;
}

/* Grow every column to cap rows (clamped to the row limit; cap > s->cap). */
static bool grow_to(mfu_series *s, size_t cap)
{
    if (cap > s->max_rows)
        cap = s->max_rows;
    if (cap <= s->cap)
        return true;
    if (!mfu__cols_grow(s->col, s->present, MFU_SC_COUNT_, &s->nan, s->cap, cap))
        return false;
    int64_t *st = realloc(s->step, cap * sizeof *st);
    if (!st)
        return false;
    s->step = st;
    int32_t *rk = realloc(s->rank, cap * sizeof *rk);
    if (!rk)
        return false;
    s->rank = rk;
    uint32_t *fl = realloc(s->flags, cap * sizeof *fl);
    if (!fl)
        return false;
    s->flags = fl;
    uint8_t *dt = realloc(s->dtype, cap * sizeof *dt);
    if (!dt)
        return false;
    s->dtype = dt;
    uint8_t *rc = realloc(s->recompute, cap * sizeof *rc);
    if (!rc)
        return false;
    s->recompute = rc;
    s->cap = cap;
    return true;
}

/* Grow every column to hold at least need rows. All-or-nothing: on failure the arrays that
 * were already reallocated keep their (larger) size but cap is not raised, which is safe. */
static bool grow(mfu_series *s, size_t need)
{
    if (need <= s->cap)
        return true;
    size_t cap = s->cap ? s->cap : 256;
    while (cap < need)
        cap *= 2;
    return grow_to(s, cap);
}

/* The id of label text (1-based), adding it when new; 0 for NULL/"". -1 too long, -2 full. */
int mfu__label_intern(char (*labels)[MFU_SERIES_LABEL_MAX], int *nlabels, const char *text,
                      bool add, int *added)
{
    *added = 0;
    if (!text || !*text)
        return 0;
    if (strlen(text) >= MFU_SERIES_LABEL_MAX)
        return -1;
    for (int i = 0; i < *nlabels; i++)
        if (strcmp(labels[i], text) == 0)
            return i + 1;
    if (*nlabels >= MFU_SERIES_MAX_LABELS)
        return -2;
    *added = 1;
    if (add)
        mfu__strlcpy(labels[(*nlabels)++], text, MFU_SERIES_LABEL_MAX);
    return *nlabels + !add;
}

static int intern(mfu_series *s, const char *text, int *added)
{
    return mfu__label_intern(s->labels, &s->nlabels, text, false, added);
}

static mfu_status label_error(mfu_error *err, int code, const char *field)
{
    if (code == -1)
        return mfu__fail_field(err, MFU_E_LIMIT, field,
                               "%s label is longer than %d bytes; shorten it", field,
                               MFU_SERIES_LABEL_MAX - 1);
    return mfu__fail_field(err, MFU_E_LIMIT, field,
                           "more than %d distinct config labels in one series; pass fewer "
                           "distinct %s values",
                           MFU_SERIES_MAX_LABELS, field);
}

mfu_status mfu_series_append(mfu_series *s, const mfu_series_row *row, mfu_error *err)
{
    if (!s || !row)
        return mfu__fail(err, MFU_E_INVALID, 0, "mfu_series_append: series or row is NULL");
    if (s->n >= s->max_rows)
        return mfu__fail(err, MFU_E_LIMIT, 0,
                         "the series holds its limit of %zu rows; raise it with "
                         "mfu_series_set_max_rows or analyse fewer steps",
                         s->max_rows);
    int add_d, add_r;
    int d = intern(s, row->dtype, &add_d);
    if (d < 0)
        return label_error(err, d, "dtype");
    /* Intern recompute as if dtype were already added, so that both can fail before either
     * is committed. */
    if (add_d) {
        mfu__strlcpy(s->labels[s->nlabels], row->dtype, MFU_SERIES_LABEL_MAX);
        s->nlabels++;
    }
    int r = intern(s, row->recompute, &add_r);
    if (r < 0) {
        if (add_d)
            s->nlabels--;
        return label_error(err, r, "recompute");
    }
    if (!grow(s, s->n + 1)) {
        if (add_d)
            s->nlabels--;
        return mfu__fail(err, MFU_E_NOMEM, 0, "out of memory growing the series to %zu rows",
                         s->n + 1);
    }
    if (add_r) {
        mfu__strlcpy(s->labels[s->nlabels], row->recompute, MFU_SERIES_LABEL_MAX);
        s->nlabels++;
    }
    size_t i = s->n;
    const double v[MFU_SC_COUNT_] = {row->time_s,
                                     row->step_time_s,
                                     row->tokens,
                                     row->useful_tokens,
                                     row->tokens_per_s,
                                     row->model_flops_per_token,
                                     row->hardware_flops_per_token,
                                     row->devices,
                                     row->peak_flops_per_s,
                                     row->seq_len,
                                     row->global_batch,
                                     row->clock_mhz,
                                     row->power_w,
                                     row->max_clock_mhz,
                                     row->power_limit_w,
                                     row->loss,
                                     row->data_loading_s,
                                     row->comm_s,
                                     row->optimizer_s,
                                     row->mfu,
                                     row->hfu};
    /* a column's first value: the column is stored from now on, NaN up to this row */
    static const double absent = NAN;
    bool made[MFU_SC_COUNT_] = {false};
    for (int c = 0; c < MFU_SC_COUNT_; c++) {
        if (s->present[c] || memcmp(&v[c], &absent, sizeof absent) == 0)
            continue;
        double *p = malloc(s->cap * sizeof *p);
        if (!p) {
            for (int q = 0; q < c; q++)
                if (made[q]) {
                    free(s->col[q]);
                    s->col[q] = s->nan;
                    s->present[q] = false;
                }
            if (add_d)
                s->nlabels--;
            if (add_r)
                s->nlabels--;
            return mfu__fail(err, MFU_E_NOMEM, 0, "out of memory for a column of %zu rows", s->cap);
        }
        memcpy(p, s->nan, i * sizeof *p);
        s->col[c] = p;
        s->present[c] = made[c] = true;
    }
    for (int c = 0; c < MFU_SC_COUNT_; c++)
        if (s->present[c])
            s->col[c][i] = v[c];
    s->step[i] = row->step;
    s->rank[i] = row->rank;
    s->flags[i] = row->flags;
    s->dtype[i] = (uint8_t)d;
    s->recompute[i] = (uint8_t)r;
    s->n++;
    return MFU_OK;
}

size_t mfu_series_count(const mfu_series *s)
{
    return s ? s->n : 0;
}

const char *mfu__series_label(const mfu_series *s, int id)
{
    if (!s || id <= 0 || id > s->nlabels)
        return "";
    return s->labels[id - 1];
}

bool mfu_series_get(const mfu_series *s, size_t i, mfu_series_row *out)
{
    if (!s || !out || i >= s->n)
        return false;
    mfu_series_row r;
    mfu_series_row_init(&r);
    double *dst[MFU_SC_COUNT_] = {&r.time_s,
                                  &r.step_time_s,
                                  &r.tokens,
                                  &r.useful_tokens,
                                  &r.tokens_per_s,
                                  &r.model_flops_per_token,
                                  &r.hardware_flops_per_token,
                                  &r.devices,
                                  &r.peak_flops_per_s,
                                  &r.seq_len,
                                  &r.global_batch,
                                  &r.clock_mhz,
                                  &r.power_w,
                                  &r.max_clock_mhz,
                                  &r.power_limit_w,
                                  &r.loss,
                                  &r.data_loading_s,
                                  &r.comm_s,
                                  &r.optimizer_s,
                                  &r.mfu,
                                  &r.hfu};
    for (int c = 0; c < MFU_SC_COUNT_; c++)
        *dst[c] = s->col[c][i];
    r.step = s->step[i];
    r.rank = s->rank[i];
    r.flags = s->flags[i];
    r.dtype = s->dtype[i] ? mfu__series_label(s, s->dtype[i]) : NULL;
    r.recompute = s->recompute[i] ? mfu__series_label(s, s->recompute[i]) : NULL;
    *out = r;
    return true;
}

const double *mfu_series_column(const mfu_series *s, mfu_series_col col)
{
    if (!s || s->n == 0 || (int)col < 0 || col >= MFU_SC_COUNT_)
        return NULL;
    return s->col[col];
}
