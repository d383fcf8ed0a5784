/*
 * test_step_fields.c - every list of the step's fields follows MFU_STEP_FIELDS
 * (include/mfu/step_fields.h), and the struct keeps its ABI.
 *
 * Each test fills every field with a value of its own (distinct from the others) and checks
 * that a consumer made from the list gives each back under the right name: the field table
 * (mfu_step_field_at), mfu_step_init, the run's columns, the canonical JSON-lines writer and
 * both of its readers (the fast one and jansson's), the run store and its schema, the --map
 * fields of the csv reader, the plausibility rules, the infinities a run drops, and the docs'
 * key tables. A field added to the list and missed by one of them fails here.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "ingest/fieldmap.h"
#include "ingest_test.h"
#include "mfu/mfu.h"
#include "run/step.h"
#include "store_test.h"

/* ---- the list, as the test reads it ---------------------------------------------------- */

/* What the test needs of each entry, straight from the X-macro. */
typedef struct entry {
    const char *name, *what;
    mfu_step_kind kind;
    const char *arg; /* DOUBLE: "NONNEG" or "ANY"; NANBIT: the double it marks */
    const char *map; /* "PLAIN", "SCOPED", "DEVICE", "WHOLE", "NO" */
    int since;
} entry;

#define E(kind, name, NAME, arg, map, since, unit, what, help)                                     \
    {#name, what, MFU_STEP_KIND_##kind, #arg, #map, since},
static const entry list[] = {MFU_STEP_FIELDS(E)};
#define NLIST (sizeof list / sizeof list[0])

static bool is_member(mfu_step_kind k)
{
    return k != MFU_STEP_KIND_BIT && k != MFU_STEP_KIND_NANBIT;
}

static const mfu_step_field_info *field_named(const char *name)
{
    for (size_t i = 0; i < mfu_step_field_count(); i++)
        if (strcmp(mfu_step_field_at(i)->name, name) == 0)
            return mfu_step_field_at(i);
    return NULL;
}

static void *member(mfu_step *s, const mfu_step_field_info *f)
{
    return (char *)s + f->offset;
}

/* A step with every field set to a value of its own: double i = 0.75 + 1.5 i, scopes device
 * and global in turn, every bit, rank 5, codes 2 then 1 (recompute full, dtype fp16). */
static mfu_step full_step(int64_t step)
{
    mfu_step s;
    mfu_step_init(&s);
    int nscope = 0, ncode = 0;
    for (size_t i = 0; i < mfu_step_field_count(); i++) {
        const mfu_step_field_info *f = mfu_step_field_at(i);
        void *p = member(&s, f);
        switch (f->kind) {
        case MFU_STEP_KIND_STEP: *(int64_t *)p = step; break;
        case MFU_STEP_KIND_DOUBLE: *(double *)p = 0.75 + 1.5 * (double)i; break;
        case MFU_STEP_KIND_SCOPE:
            *(mfu_scope *)p = nscope++ % 2 ? MFU_SCOPE_GLOBAL : MFU_SCOPE_DEVICE;
            break;
        case MFU_STEP_KIND_FLAGS: break;
        case MFU_STEP_KIND_RANK: *(int32_t *)p = 5; break;
        case MFU_STEP_KIND_CODE: *(int32_t *)p = ncode++ % 2 ? 1 : 2; break;
        case MFU_STEP_KIND_BIT:
        case MFU_STEP_KIND_NANBIT: s.flags |= f->bit; break;
        }
    }
    /* a loss printed as nan is NaN with its bit: keep the double, the bit still round-trips */
    return s;
}

/* ---- the struct and the table ---------------------------------------------------------- */

/* The members of mfu_step 0.1 at their LP64 offsets and sizes: a binding built then still
 * reads a library built now (new members only ever go after them). */
static void abi_kept(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        size_t offset, size;
    } abi[] = {
        {"step", 0, 8},
        {"time_s", 8, 8},
        {"step_time_s", 16, 8},
        {"tokens", 24, 8},
        {"samples", 32, 8},
        {"loss", 40, 8},
        {"lr", 48, 8},
        {"grad_norm", 56, 8},
        {"memory_bytes", 64, 8},
        {"tokens_per_s", 72, 8},
        {"tokens_per_s_scope", 80, 4},
        {"flops_per_s", 88, 8},
        {"flops_per_s_scope", 96, 4},
        {"mfu", 104, 8},
        {"mfu_scope", 112, 4},
        {"samples_per_s", 120, 8},
        {"samples_per_s_scope", 128, 4},
        {"flags", 132, 4},
        {"rank", 136, 4},
        {"seq_len", 144, 8},
        {"devices", 152, 8},
        {"useful_tokens", 160, 8},
        {"clock_mhz", 168, 8},
        {"power_w", 176, 8},
        {"power_limit_w", 184, 8},
        {"data_loading_s", 192, 8},
        {"comm_s", 200, 8},
        {"optimizer_s", 208, 8},
        {"recompute", 216, 4},
        {"dtype", 220, 4},
    };
    if (sizeof(void *) != 8 || _Alignof(double) != 8)
        skip();
    assert_true(sizeof(mfu_step) >= 224);
    for (size_t i = 0; i < sizeof abi / sizeof abi[0]; i++) {
        const mfu_step_field_info *f = field_named(abi[i].name);
        if (!f)
            fail_msg("field %s is gone", abi[i].name);
        if (f->offset != abi[i].offset || f->size != abi[i].size)
            fail_msg("%s moved: offset %zu size %zu, was %zu %zu", abi[i].name, f->offset, f->size,
                     abi[i].offset, abi[i].size);
    }
    /* the direct offsets agree with the table */
    assert_int_equal(offsetof(mfu_step, power_limit_w), 184);
    assert_int_equal(offsetof(mfu_step, dtype), 220);
    /* the public constants keep their values */
    assert_int_equal(MFU_STEP_SKIPPED, 1);
    assert_int_equal(MFU_STEP_LOSS_NAN, 2);
    assert_int_equal(MFU_STEP_MFU_SENTINEL, 4);
    assert_int_equal(MFU_STEP_TOKENS_DERIVED, 8);
    assert_int_equal(MFU_COL_TIME_S, 0);
    assert_int_equal(MFU_COL_SAMPLES_PER_S, 11);
    assert_int_equal(MFU_COL_SEQ_LEN, 12);
    assert_int_equal(MFU_COL_OPTIMIZER_S, 20);
    assert_true(MFU_COL_COUNT_ >= 21);
    assert_int_equal(mfu_struct_size("mfu_step"), sizeof(mfu_step));
}

/* The table lists the members in struct order, tiling the struct, and the bits after them. */
static void table_is_the_struct(void **state)
{
    (void)state;
    size_t n = mfu_step_field_count();
    assert_int_equal(n, NLIST);
    assert_null(mfu_step_field_at(n));
    size_t end = 0, doubles = 0;
    uint32_t bits = 0;
    for (size_t i = 0; i < n; i++) {
        const mfu_step_field_info *f = mfu_step_field_at(i);
        assert_string_equal(f->name, list[i].name);
        assert_int_equal(f->kind, list[i].kind);
        assert_non_null(f->unit);
        assert_non_null(f->help);
        assert_true(f->what && f->what[0]);
        for (size_t j = 0; j < i; j++)
            if (strcmp(mfu_step_field_at(j)->name, f->name) == 0)
                fail_msg("two fields named %s", f->name);
        if (is_member(f->kind)) /* a stored column, made by a schema version */
            assert_true(list[i].since >= 1 && list[i].since <= MFU_STORE_SCHEMA_VERSION);
        else
            assert_int_equal(list[i].since, 0);
        if (!is_member(f->kind)) {
            assert_int_equal(f->offset, offsetof(mfu_step, flags));
            assert_true(f->bit && (f->bit & (f->bit - 1)) == 0 && !(bits & f->bit));
            bits |= f->bit;
            continue;
        }
        assert_int_equal(f->bit, 0);
        /* no gap a member could hide in: the next member starts at the first aligned offset */
        size_t aligned = (end + f->size - 1) / f->size * f->size;
        if (f->offset != aligned)
            fail_msg("%s at %zu, the member before it ends at %zu", f->name, f->offset, end);
        end = f->offset + f->size;
        if (f->kind == MFU_STEP_KIND_DOUBLE) {
            mfu_step s;
            assert_ptr_equal(mfu__step_field(&s, (mfu_column)doubles), member(&s, f));
            doubles++;
        }
        if (f->kind == MFU_STEP_KIND_SCOPE) { /* named after the double before it */
            const mfu_step_field_info *d = mfu_step_field_at(i - 1);
            assert_int_equal(d->kind, MFU_STEP_KIND_DOUBLE);
            char want[64];
            snprintf(want, sizeof want, "%s_scope", d->name);
            assert_string_equal(f->name, want);
        }
    }
    assert_true(sizeof(mfu_step) - end < 8);
    assert_int_equal(doubles, MFU_COL_COUNT_);
    for (size_t i = 0; i < NLIST; i++) /* a NANBIT marks a double */
        if (list[i].kind == MFU_STEP_KIND_NANBIT) {
            const mfu_step_field_info *d = field_named(list[i].arg);
            assert_non_null(d);
            assert_int_equal(d->kind, MFU_STEP_KIND_DOUBLE);
        }
}

/* mfu_step_init: every field absent; the run's columns and mfu_run_get give each back. */
static void init_and_run_columns(void **state)
{
    (void)state;
    mfu_step s;
    memset(&s, 0x5a, sizeof s);
    mfu_step_init(&s);
    for (size_t i = 0; i < mfu_step_field_count(); i++) {
        const mfu_step_field_info *f = mfu_step_field_at(i);
        void *p = member(&s, f);
        switch (f->kind) {
        case MFU_STEP_KIND_DOUBLE: assert_true(isnan(*(double *)p)); break;
        case MFU_STEP_KIND_RANK:
        case MFU_STEP_KIND_CODE: assert_int_equal(*(int32_t *)p, -1); break;
        case MFU_STEP_KIND_SCOPE: assert_int_equal(*(mfu_scope *)p, MFU_SCOPE_UNKNOWN); break;
        case MFU_STEP_KIND_STEP: assert_int_equal(*(int64_t *)p, 0); break;
        default: assert_int_equal(s.flags, 0); break;
        }
    }
    mfu_run *run = mfu_run_new();
    mfu_step a = full_step(7), b = full_step(8);
    b.rank = 6; /* another rank's step 8: a row of its own */
    assert_int_equal(mfu_run_append(run, &a, NULL, NULL), MFU_OK);
    assert_int_equal(mfu_run_append(run, &b, NULL, NULL), MFU_OK);
    for (int c = 0; c < MFU_COL_COUNT_; c++)
        assert_true(mfu_run_column(run, (mfu_column)c)[0] == *mfu__step_field(&a, (mfu_column)c));
    mfu_step got;
    assert_true(mfu_run_get(run, 0, &got));
    assert_true(mfu__step_equal(&got, &a));
    assert_true(mfu_run_get(run, 1, &got));
    assert_true(mfu__step_equal(&got, &b));
    /* equality sees every field: change one at a time */
    for (size_t i = 0; i < mfu_step_field_count(); i++) {
        const mfu_step_field_info *f = mfu_step_field_at(i);
        mfu_step c = a;
        void *p = member(&c, f);
        switch (f->kind) {
        case MFU_STEP_KIND_STEP: (*(int64_t *)p)++; break;
        case MFU_STEP_KIND_DOUBLE: *(double *)p += 1; break;
        case MFU_STEP_KIND_SCOPE: *(mfu_scope *)p = MFU_SCOPE_UNKNOWN; break;
        case MFU_STEP_KIND_RANK:
        case MFU_STEP_KIND_CODE: (*(int32_t *)p)--; break;
        case MFU_STEP_KIND_FLAGS: break; /* its bits below */
        default: c.flags ^= f->bit; break;
        }
        if (f->kind != MFU_STEP_KIND_FLAGS && mfu__step_equal(&c, &a))
            fail_msg("mfu__step_equal does not see %s", f->name);
    }
    mfu_run_free(run);
}

/* ---- canonical JSON-lines ---------------------------------------------------------------- */

/* Through a temporary file, not open_memstream: gcc -O3 takes the memstream's buffer for a
 * local that dies with this frame (-Wdangling-pointer) once the function is inlined. */
static char *write_canonical(const mfu_run *run, size_t *len)
{
    FILE *f = tmpfile();
    assert_non_null(f);
    assert_int_equal(mfu_run_write_jsonl(run, f, NULL), MFU_OK);
    long n = ftell(f);
    assert_true(n >= 0);
    rewind(f);
    char *text = malloc((size_t)n + 1);
    assert_non_null(text);
    assert_int_equal(fread(text, 1, (size_t)n, f), (size_t)n);
    text[n] = '\0';
    fclose(f);
    *len = (size_t)n;
    return text;
}

/* Every line of text (after the header) with an unknown key that holds an escape in front of
 * its members: the fast reader declines such a line, so jansson reads it. */
static char *force_jansson(const char *text)
{
    size_t n = strlen(text), extra = 0;
    for (const char *p = text; *p; p++)
        extra += *p == '\n';
    char *out = malloc(n + extra * 16 + 1), *o = out;
    bool first = true;
    for (const char *p = text; *p;) {
        const char *nl = strchr(p, '\n');
        size_t k = nl ? (size_t)(nl - p + 1) : strlen(p);
        if (!first && p[0] == '{') {
            memcpy(o, "{\"z\\u00e9\":0,", 13);
            o += 13;
            memcpy(o, p + 1, k - 1);
            o += k - 1;
        } else {
            memcpy(o, p, k);
            o += k;
        }
        first = false;
        p += k;
    }
    *o = '\0';
    return out;
}

static void expect_same_rows(const mfu_run *a, const mfu_run *b)
{
    assert_int_equal(mfu_run_count(a), mfu_run_count(b));
    for (size_t i = 0; i < mfu_run_count(a); i++) {
        mfu_step x, y;
        assert_true(mfu_run_get(a, i, &x) && mfu_run_get(b, i, &y));
        if (!mfu__step_equal(&x, &y))
            for (size_t k = 0; k < mfu_step_field_count(); k++) {
                const mfu_step_field_info *f = mfu_step_field_at(k);
                if (is_member(f->kind) && memcmp(member(&x, f), member(&y, f), f->size) != 0)
                    fail_msg("row %zu: field %s differs after the round trip", i, f->name);
            }
        assert_true(mfu__step_equal(&x, &y));
    }
}

/* A run of steps that each hold one field (and the step number), then one step with all:
 * written, every key is there once under its name, and both readers give the run back. */
static void canonical_round_trip(void **state)
{
    (void)state;
    mfu_run *run = mfu_run_new();
    mfu_step all = full_step(1000);
    int64_t no = 1;
    for (size_t i = 0; i < mfu_step_field_count(); i++) {
        const mfu_step_field_info *f = mfu_step_field_at(i);
        if (f->kind == MFU_STEP_KIND_STEP || f->kind == MFU_STEP_KIND_FLAGS)
            continue;
        mfu_step s;
        mfu_step_init(&s);
        s.step = no++;
        if (is_member(f->kind))
            memcpy(member(&s, f), member(&all, f), f->size);
        else
            s.flags = f->bit;
        if (f->kind == MFU_STEP_KIND_SCOPE) /* a scope is written with its double */
            *(double *)member(&s, mfu_step_field_at(i - 1)) = 1;
        assert_int_equal(mfu_run_append(run, &s, NULL, NULL), MFU_OK);
    }
    assert_int_equal(mfu_run_append(run, &all, NULL, NULL), MFU_OK);
    size_t len = 0;
    char *text = write_canonical(run, &len);
    const char *last = strrchr(text, '{');
    for (size_t i = 0; i < mfu_step_field_count(); i++) {
        const mfu_step_field_info *f = mfu_step_field_at(i);
        if (f->kind == MFU_STEP_KIND_FLAGS) /* written as its bits */
            continue;
        char key[80];
        snprintf(key, sizeof key, "\"%s\":", f->name);
        const char *at = strstr(last, key);
        if (!at)
            fail_msg("the writer has no key %s for a step that holds it: %s", key, last);
        assert_null(strstr(at + 1, key));
    }
    mfu_run *back = ingest_text(text, "mfu", NULL);
    expect_same_rows(run, back);
    char *slow = force_jansson(text);
    mfu_run *back2 = ingest_text(slow, "mfu", NULL);
    expect_same_rows(run, back2);
    /* and back out byte for byte (the rows: the header now names the format read) */
    size_t len2 = 0;
    char *again = write_canonical(back2, &len2);
    assert_string_equal(strchr(text, '\n'), strchr(again, '\n'));
    free(again);
    free(slow);
    free(text);
    mfu_run_free(back);
    mfu_run_free(back2);
    mfu_run_free(run);
}

/* ---- the store --------------------------------------------------------------------------- */

static bool column_listed(const char *col)
{
    if (strcmp(col, "run_id") == 0 || strcmp(col, "row_no") == 0)
        return true;
    const mfu_step_field_info *f = field_named(col);
    return f && is_member(f->kind);
}

/* The steps table has one column per member and no other (but its key), and a step with every
 * field set comes back from the store as it went in. */
static void store_round_trip(void **state)
{
    (void)state;
    char db[64];
    temp_store_path(db, sizeof db);
    mfu_store *s = open_store(db, MFU_STORE_CREATE);
    mfu_run *run = mfu_run_new();
    mfu_step a = full_step(3), b = full_step(4);
    mfu_step_init(&b); /* a row of absent fields */
    b.step = 4;
    assert_int_equal(mfu_run_append(run, &a, NULL, NULL), MFU_OK);
    assert_int_equal(mfu_run_append(run, &b, NULL, NULL), MFU_OK);
    mfu_error e;
    memset(&e, 0, sizeof e);
    if (mfu_store_put_run(s, "all", run, NULL, &e) != MFU_OK)
        fail_msg("put: %s", e.message);
    mfu_run *back = get_run(s, "all");
    expect_same_rows(run, back);
    mfu_store_close(s);

    sqlite3 *h = NULL;
    assert_int_equal(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    sqlite3_stmt *st = NULL;
    assert_int_equal(
        sqlite3_prepare_v2(h, "SELECT name FROM pragma_table_info('steps')", -1, &st, NULL),
        SQLITE_OK);
    size_t ncols = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *col = (const char *)sqlite3_column_text(st, 0);
        if (!column_listed(col))
            fail_msg("the steps table has a column %s that is no field of mfu_step", col);
        ncols++;
    }
    sqlite3_finalize(st);
    sqlite3_close(h);
    size_t members = 0;
    for (size_t i = 0; i < NLIST; i++)
        members += is_member(list[i].kind);
    assert_int_equal(ncols, members + 2);
    mfu_run_free(back);
    mfu_run_free(run);
    remove_store_files(db);
}

/* ---- --map ------------------------------------------------------------------------------- */

/* Each map field read from a CSV column of its name lands in its member (with the scope its
 * name says), and the map names are exactly the list's map column. */
static void map_every_field(void **state)
{
    (void)state;
    size_t nmap = 0;
    for (size_t i = 0; i < NLIST; i++) {
        const char *m = list[i].map;
        if (strcmp(m, "NO") == 0)
            continue;
        const char *forms[2] = {"", strcmp(m, "SCOPED") == 0 ? "_device" : NULL};
        for (int k = 0; k < 2 && forms[k]; k++) {
            char name[64];
            snprintf(name, sizeof name, "%s%s", list[i].name, forms[k]);
            assert_string_equal(mfu__fieldmap_field_name((mfu__field)nmap), name);
            nmap++;
            if (strcmp(list[i].name, "step") == 0)
                continue;
            double v = strcmp(m, "WHOLE") == 0 ? 3 : 2.5;
            char csv[256];
            snprintf(csv, sizeof csv, "step,%s\n1,%g\n", name, v);
            mfu_run *run = ingest_text(csv, "csv", NULL);
            mfu_step s;
            assert_true(mfu_run_get(run, 0, &s));
            const mfu_step_field_info *f = field_named(list[i].name);
            void *p = member(&s, f);
            if (f->kind == MFU_STEP_KIND_DOUBLE)
                assert_true(*(double *)p == v);
            else
                assert_int_equal(*(int32_t *)p, (int32_t)v);
            if (strcmp(m, "SCOPED") == 0 || strcmp(m, "DEVICE") == 0) {
                char sc[64];
                snprintf(sc, sizeof sc, "%s_scope", list[i].name);
                mfu_scope want =
                    k == 1 || strcmp(m, "DEVICE") == 0 ? MFU_SCOPE_DEVICE : MFU_SCOPE_GLOBAL;
                assert_int_equal(*(mfu_scope *)member(&s, field_named(sc)), want);
            }
            mfu_run_free(run);
        }
    }
    assert_int_equal(nmap, MFU__F_COUNT);
    /* a nan loss is flagged by the NANBIT that marks it */
    mfu_run *run = ingest_text("step,loss\n1,nan\n", "csv", NULL);
    mfu_step s;
    assert_true(mfu_run_get(run, 0, &s));
    assert_true(isnan(s.loss) && (s.flags & MFU_STEP_LOSS_NAN));
    mfu_run_free(run);
}

/* ---- the run's own rules ----------------------------------------------------------------- */

/* A negative double is refused exactly when the list marks it NONNEG, and the message names it
 * as the list says; an infinite double becomes NaN, and the NANBIT of a marked one is set. */
static void plausible_and_infinities(void **state)
{
    (void)state;
    for (size_t i = 0; i < NLIST; i++) {
        if (list[i].kind != MFU_STEP_KIND_DOUBLE)
            continue;
        const mfu_step_field_info *f = field_named(list[i].name);
        mfu_step s;
        mfu_step_init(&s);
        s.step = 1;
        *(double *)member(&s, f) = -2;
        mfu_step out;
        mfu_error e;
        memset(&e, 0, sizeof e);
        mfu_status st = mfu__step_plausible(&s, &out, &e);
        if (strcmp(list[i].arg, "NONNEG") == 0) {
            assert_int_equal(st, MFU_E_RANGE);
            assert_true(strncmp(e.message, list[i].what, strlen(list[i].what)) == 0);
            assert_non_null(strstr(e.message, "is negative"));
            if (f->unit[0]) {
                char u[32];
                snprintf(u, sizeof u, "-2 %s is", f->unit);
                assert_non_null(strstr(e.message, u));
            }
        } else {
            assert_int_equal(st, MFU_OK);
        }
        mfu_step_init(&s);
        *(double *)member(&s, f) = INFINITY;
        mfu__step_drop_inf(&s);
        assert_true(isnan(*(double *)member(&s, f)));
        uint32_t want = 0;
        for (size_t j = 0; j < NLIST; j++)
            if (list[j].kind == MFU_STEP_KIND_NANBIT && strcmp(list[j].arg, f->name) == 0)
                want |= field_named(list[j].name)->bit;
        assert_int_equal(s.flags, want);
        mfu_step_init(&s);
        mfu__step_mark_nan(&s, (double *)member(&s, f));
        assert_int_equal(s.flags, want);
    }
}

/* The edges of the rules that mfu__step_plausible checks without a message first (a count of
 * -inf is made absent and passes; -0 and NaN are not negative; the limits themselves pass and
 * one past them is refused with *out untouched), in place and into another step. */
static void plausible_edges(void **state)
{
    (void)state;
    mfu_step s, out;
    mfu_error e;
    mfu_step_init(&s);
    s.step = MFU__RUN_MAX_STEP_NUMBER;
    s.step_time_s = MFU__RUN_MAX_STEP_TIME_S;
    s.tokens = -INFINITY;
    s.samples = -0.0;
    s.loss = -INFINITY;
    s.memory_bytes = INFINITY;
    assert_int_equal(mfu__step_plausible(&s, &out, &e), MFU_OK);
    assert_true(isnan(out.tokens) && isnan(out.memory_bytes) && isnan(out.loss));
    assert_true(out.flags & MFU_STEP_LOSS_NAN);
    assert_true(out.samples == 0 && signbit(out.samples));
    assert_true(out.step == s.step && out.step_time_s == s.step_time_s);
    assert_true(isinf(s.tokens));                              /* in is not changed */
    assert_int_equal(mfu__step_plausible(&s, &s, &e), MFU_OK); /* in place */
    assert_true(isnan(s.tokens) && (s.flags & MFU_STEP_LOSS_NAN));
    const struct {
        int64_t step;
        double st, tokens;
        const char *msg;
    } bad[] = {
        {-1, 1, 1, "step number -1 is negative"},
        {MFU__RUN_MAX_STEP_NUMBER + 1, 1, 1, "the largest step number kept"},
        {1, nextafter(MFU__RUN_MAX_STEP_TIME_S, INFINITY), 1, "longer than a step can take"},
        {1, INFINITY, 1, "step time inf is not finite"},
        {1, -INFINITY, 1, "step time -inf is not finite"},
        {1, -1e-300, 1, "step time -1e-300 s is negative"},
        {1, 1, -1e-300, "token count -1e-300 is negative"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        mfu_step_init(&s);
        s.step = bad[i].step;
        s.step_time_s = bad[i].st;
        s.tokens = bad[i].tokens;
        mfu_step_init(&out);
        out.step = 77;
        memset(&e, 0, sizeof e);
        assert_int_equal(mfu__step_plausible(&s, &out, &e), MFU_E_RANGE);
        assert_non_null(strstr(e.message, bad[i].msg));
        assert_int_equal(out.step, 77);
    }
}

/* ---- the docs ---------------------------------------------------------------------------- */

static char *read_doc(const char *rel)
{
    const char *src = getenv("MFU_SOURCE_DIR");
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", src ? src : ".", rel);
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot read %s", path);
    char *buf = malloc(1 << 20);
    size_t n = fread(buf, 1, (1 << 20) - 1, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

/* docs/formats.md names every canonical key in its step-object table and every --map field
 * in the generic readers' table. */
static void docs_name_every_field(void **state)
{
    (void)state;
    char *doc = read_doc("docs/formats.md");
    char *step_table = strstr(doc, "Step object:\n\n|");
    assert_non_null(step_table);
    char *end = strstr(step_table + 15, "\n\n"); /* the table ends at a blank line */
    assert_non_null(end);
    *end = '\0';
    for (size_t i = 0; i < mfu_step_field_count(); i++) {
        const mfu_step_field_info *f = mfu_step_field_at(i);
        if (f->kind == MFU_STEP_KIND_FLAGS)
            continue;
        char key[80];
        snprintf(key, sizeof key, "`%s`", f->name);
        if (!strstr(step_table, key))
            fail_msg("docs/formats.md's step-object table does not name %s", key);
    }
    for (int m = 0; m < MFU__F_COUNT; m++) {
        char key[80];
        snprintf(key, sizeof key, "`%s`", mfu__fieldmap_field_name((mfu__field)m));
        if (!strstr(end + 1, key) && !strstr(doc, key))
            fail_msg("docs/formats.md does not name the --map field %s", key);
    }
    free(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(abi_kept),
        cmocka_unit_test(table_is_the_struct),
        cmocka_unit_test(init_and_run_columns),
        cmocka_unit_test(canonical_round_trip),
        cmocka_unit_test(store_round_trip),
        cmocka_unit_test(map_every_field),
        cmocka_unit_test(plausible_and_infinities),
        cmocka_unit_test(plausible_edges),
        cmocka_unit_test(docs_name_every_field),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
