/*
 * fieldmap.c - "--map FIELD=COLUMN[*FACTOR]" for the generic jsonl and csv formats.
 */
#include "ingest/fieldmap.h"

#include <math.h>
#include <string.h>

#include "run/step.h"

#define NAME_PLAIN(name) #name,
#define NAME_WHOLE(name) #name,
#define NAME_SCOPED(name) #name, #name "_device",
#define NAME_DEVICE(name) #name,
#define NAME_NO(name)
#define NAME(kind, name, NAME, arg, map, since, unit, what, help) NAME_##map(name)
static const char *const names[MFU__F_COUNT] = {MFU_STEP_FIELDS(NAME)};

/* Common spellings tried when the user did not map a field (after the field's own name). */
static const char *const aliases[MFU__F_COUNT][4] = {
    [MFU__F_STEP] = {"iter", "iteration", "global_step", "trainer/global_step"},
    [MFU__F_TIME_S] = {"timestamp", "time", NULL, NULL},
    [MFU__F_LOSS] = {"train_loss", "train/loss", "lm_loss", NULL},
    [MFU__F_LR] = {"learning_rate", NULL, NULL, NULL},
};

const char *mfu__fieldmap_field_name(mfu__field f)
{
    return (int)f >= 0 && f < MFU__F_COUNT ? names[f] : "?";
}

static void field_list(char *buf, size_t n)
{
    buf[0] = '\0';
    for (int i = 0; i < MFU__F_COUNT; i++)
        mfu__appendf(buf, n, "%s%s", i ? ", " : "", names[i]);
}

static mfu_status parse_pair(mfu__fieldmap *fm, mfu__span pair, mfu_error *err)
{
    char fields[600];
    mfu__span key, val;
    pair = mfu__span_trim(pair);
    if (pair.n == 0)
        return MFU_OK;
    if (!mfu__kv(pair, "=", &key, &val) || key.n == 0 || val.n == 0) {
        field_list(fields, sizeof fields);
        return mfu__fail_field(err, MFU_E_INVALID, "--map",
                               "--map '%.*s' is not FIELD=COLUMN (fields: %s)", (int)pair.n, pair.p,
                               fields);
    }
    int f = -1;
    for (int i = 0; i < MFU__F_COUNT; i++)
        if (mfu__span_eq(key, names[i]))
            f = i;
    if (f < 0) {
        field_list(fields, sizeof fields);
        return mfu__fail_field(err, MFU_E_INVALID, "--map",
                               "--map: unknown field '%.*s'; use one of: %s", (int)key.n, key.p,
                               fields);
    }
    double factor = 1.0;
    long star = -1;
    for (long i = (long)val.n - 1; i >= 0; i--)
        if (val.p[i] == '*') {
            star = i;
            break;
        }
    if (star >= 0) {
        mfu__span fs = {val.p + star + 1, val.n - (size_t)star - 1};
        char num[64];
        mfu__span_copy(fs, num, sizeof num);
        if (!mfu__parse_double(num, &factor) || factor == 0)
            return mfu__fail_field(err, MFU_E_INVALID, "--map",
                                   "--map %s: factor '%s' is not a non-zero number (write "
                                   "FIELD=COLUMN*0.001)",
                                   names[f], num);
        val = mfu__span_trim((mfu__span){val.p, (size_t)star});
    }
    if (val.n == 0 || val.n >= MFU__FIELDMAP_COLUMN)
        return mfu__fail_field(err, MFU_E_INVALID, "--map",
                               "--map %s: the column name must be 1..%d bytes", names[f],
                               MFU__FIELDMAP_COLUMN - 1);
    mfu__span_copy(val, fm->column[f], sizeof fm->column[f]);
    fm->factor[f] = factor;
    return MFU_OK;
}

mfu_status mfu__fieldmap_parse(mfu__fieldmap *fm, const char *const *map, size_t n, mfu_error *err)
{
    memset(fm, 0, sizeof *fm);
    for (int i = 0; i < MFU__F_COUNT; i++)
        fm->factor[i] = 1.0;
    for (size_t i = 0; i < n; i++) {
        mfu__span rest = mfu__span_of(map[i]), pair;
        while (mfu__split_next(&rest, ",", &pair)) {
            mfu_status st = parse_pair(fm, pair, err);
            if (st != MFU_OK)
                return st;
        }
    }
    return MFU_OK;
}

size_t mfu__fieldmap_candidates(const mfu__fieldmap *fm, mfu__field f, const char **out, size_t max)
{
    size_t k = 0;
    if (fm->column[f][0]) {
        if (max > 0)
            out[k++] = fm->column[f];
        return k;
    }
    if (k < max)
        out[k++] = names[f];
    for (int i = 0; i < 4 && aliases[f][i] && k < max; i++)
        out[k++] = aliases[f][i];
    return k;
}

/* One field's case of mfu__fieldmap_store, by its map column: a double is stored through d
 * (with its scope), a whole number (step, rank) must be one in range of its type. */
#define WHOLE_MAX_STEP 9.0e15
#define WHOLE_MAX_RANK 2.0e9
#define STORE_PLAIN(kind, name, NAME)                                                              \
    case MFU__F_##NAME:                                                                            \
        d = &s->name;                                                                              \
        break;
#define STORE_WHOLE(kind, name, NAME)                                                              \
    case MFU__F_##NAME:                                                                            \
        if (bad || v != floor(v) || fabs(v) > WHOLE_MAX_##kind)                                    \
            return false;                                                                          \
        s->name = (MFU__STEP_CTYPE_##kind)v;                                                       \
        break;
#define STORE_SCOPED(kind, name, NAME)                                                             \
    case MFU__F_##NAME:                                                                            \
        d = &s->name;                                                                              \
        s->name##_scope = MFU_SCOPE_GLOBAL;                                                        \
        break;                                                                                     \
    case MFU__F_##NAME##_DEVICE:                                                                   \
        if (isnan(s->name) || s->name##_scope != MFU_SCOPE_GLOBAL) {                               \
            d = &s->name;                                                                          \
            s->name##_scope = MFU_SCOPE_DEVICE;                                                    \
        }                                                                                          \
        break;
#define STORE_DEVICE(kind, name, NAME)                                                             \
    case MFU__F_##NAME:                                                                            \
        d = &s->name;                                                                              \
        s->name##_scope = MFU_SCOPE_DEVICE;                                                        \
        break;
#define STORE_NO(kind, name, NAME)
#define STORE(kind, name, NAME, arg, map, since, unit, what, help) STORE_##map(kind, name, NAME)

bool mfu__fieldmap_store(const mfu__fieldmap *fm, mfu__field f, const mfu__num *n, mfu_step *s)
{
    double v = n->value; /* factor 1 (unmapped fields): what mfu__scale10(v, 0) gives */
    if (fm->factor[f] != 1.0) {
        double lg = log10(fabs(fm->factor[f]));
        v = fm->factor[f] > 0 && fabs(lg - floor(lg + 0.5)) < 1e-12
                ? mfu__scale10(n->value, (int)floor(lg + 0.5))
                : n->value * fm->factor[f];
    }
    bool bad = n->kind == MFU__NUM_NAN || n->kind == MFU__NUM_INF;
    if (n->kind == MFU__NUM_NA)
        return false;
    double *d = NULL; /* the double that takes v */
    switch (f) {
        MFU_STEP_FIELDS(STORE)
    case MFU__F_COUNT: break;
    }
    if (d) {
        *d = bad ? NAN : v;
        if (bad) /* only the loss keeps "printed as nan" (as a flag) */
            mfu__step_mark_nan(s, d);
    }
    return true;
}
