/*
 * fmt_jsonl.c - generic JSON-lines: one JSON object per line, fields taken by name with the
 * user's --map (ingest/fieldmap.h). For loggers that write a metrics.jsonl (custom loops,
 * W&B / MLflow exports, mfu's own monitors).
 *
 *   {"iter": 10, "loss": 2.5, "dt": 0.41}     with --map step=iter,step_time_s=dt
 *
 * A key is looked up at the top level first, then as a dotted path ("train.loss" reads
 * {"train": {"loss": ...}}). Numbers may be JSON numbers or strings with units ("76 ms",
 * "66GiB", "13%"); time_s may also be a "YYYY-MM-DD HH:MM:SS" string. Python's NaN / Infinity
 * (not JSON) are accepted. An object without a step is skipped (and, if no object had one,
 * the run fails with a message that names --map step=KEY). Non-JSON lines are ignored.
 * Detection gives only hints (generic formats lose to every specific one).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "ingest/fieldmap.h"
#include "ingest/jflat.h"

/* The fast path (ingest/jflat.h) finds a member's field through a small hash table of every
 * candidate key: slot -> (key, field, rank among the field's candidates). */
#define JSONL_SLOTS 256 /* > 2 x MFU__F_COUNT x (MFU__FIELDMAP_MAX_ALIASES + 1) */

typedef struct cand_slot {
    const char *key; /* NULL: empty slot */
    size_t len;
    int field, rank;
} cand_slot;

/* A line shape (ingest/jflat.h) and the fields its members give: the keys and their order
 * are the shape's, so the hash lookups are done once per shape, not once per line. Two shapes
 * are kept, for logs that alternate two kinds of records (train and eval lines). */
#define JSONL_SHAPES 2

typedef struct jsonl_shape {
    mfu__jshape sh;              /* sh.n == 0: no shape (at and hit are scratch for one line) */
    uint32_t hit;                /* the fields that have a candidate among the members */
    uint8_t first[MFU__F_COUNT]; /* member + 1 of each field's best candidate present */
    uint8_t at[MFU__F_COUNT][MFU__FIELDMAP_MAX_ALIASES]; /* member + 1 holding each candidate
                                                            (0: none), the last one when a key
                                                            repeats */
} jsonl_shape;

typedef struct jsonl_state {
    mfu__fieldmap fm;
    long objects;      /* JSON objects read */
    long without_step; /* objects without a step key */
    char first_keys[200];
    cand_slot slots[JSONL_SLOTS];
    int ncand[MFU__F_COUNT];          /* candidates per field */
    bool dotted;                      /* a candidate is a dotted path ("train.loss") */
    mfu__jflat obj;                   /* the fast path's object (kept here, not on the stack) */
    jsonl_shape shapes[JSONL_SHAPES]; /* the shapes of the last lines (see jsonl_fast) */
    int next_shape;                   /* the slot the next new shape replaces */
    mfu_step blank;                   /* mfu_step_init's step, copied per line (cheaper) */
} jsonl_state;

static size_t slot_hash(const char *k, size_t n)
{
    if (n == 0)
        return 0;
    return (n * 131u + (unsigned char)k[0] * 31u + (unsigned char)k[n - 1] * 7u +
            (unsigned char)k[n / 2]) %
           JSONL_SLOTS;
}

static int jsonl_detect(const mfu__line *ln)
{
    if (ln->len >= 4 && ln->text[0] == '{' && ln->text[1] == '"' && ln->text[ln->len - 1] == '}')
        return MFU__DETECT_HINT;
    return MFU__DETECT_NONE;
}

static mfu_status jsonl_init(void *state, const mfu_ingest_opts *opts, mfu_error *err)
{
    jsonl_state *st = state;
    mfu_status rc = mfu__fieldmap_parse(&st->fm, opts->map, opts->nmap, err);
    if (rc != MFU_OK)
        return rc;
    mfu_step_init(&st->blank);
    for (int f = 0; f < MFU__F_COUNT; f++) {
        const char *cand[MFU__FIELDMAP_MAX_ALIASES];
        size_t nc =
            mfu__fieldmap_candidates(&st->fm, (mfu__field)f, cand, MFU__FIELDMAP_MAX_ALIASES);
        st->ncand[f] = (int)nc;
        for (size_t i = 0; i < nc; i++) {
            size_t len = strlen(cand[i]);
            size_t h = slot_hash(cand[i], len);
            while (st->slots[h].key) /* at most 17 x 8 of the 256 slots are used */
                h = (h + 1) % JSONL_SLOTS;
            st->slots[h] = (cand_slot){cand[i], len, f, (int)i};
            if (strchr(cand[i], '.'))
                st->dotted = true;
        }
    }
    return MFU_OK;
}

/* obj[key], or the dotted path key, or NULL. */
static json_t *lookup(json_t *obj, const char *key)
{
    json_t *v = json_object_get(obj, key);
    if (v || !strchr(key, '.'))
        return v;
    char buf[MFU__FIELDMAP_COLUMN];
    mfu__strlcpy(buf, key, sizeof buf);
    json_t *cur = obj;
    char *save = NULL;
    for (char *tok = strtok_r(buf, ".", &save); tok && cur; tok = strtok_r(NULL, ".", &save))
        cur = json_is_object(cur) ? json_object_get(cur, tok) : NULL;
    return cur;
}

/* A JSON value as a number (with units, sentinels); time_s also from a date string. */
static bool value_num(json_t *v, mfu__field f, mfu__num *n)
{
    if (json_is_number(v)) {
        n->value = n->printed = json_number_value(v);
        n->unit = MFU__UNIT_NONE;
        n->kind = MFU__NUM_FINITE;
        return true;
    }
    if (json_is_string(v)) {
        mfu__span s = {json_string_value(v), json_string_length(v)};
        if (f == MFU__F_TIME_S) {
            double t;
            if (mfu__datetime_scan(mfu__span_trim(s), &t, NULL)) {
                n->value = n->printed = t;
                n->unit = MFU__UNIT_SECONDS;
                n->kind = MFU__NUM_FINITE;
                return true;
            }
        }
        return mfu__num_parse(s, n);
    }
    return false;
}

/* Python writes NaN / Infinity / -Infinity, which JSON does not allow: rewrite them as
 * strings in a copy and try again. Returns the parsed object or NULL. */
static json_t *load_lenient(const char *text, size_t len, json_error_t *je)
{
    json_t *root = json_loadb(text, len, JSON_DECODE_ANY, je);
    if (root || (!strstr(text, "NaN") && !strstr(text, "Infinity")))
        return root;
    size_t cap = len * 2 + 1;
    char *buf = malloc(cap);
    if (!buf)
        return NULL;
    size_t k = 0;
    bool in_str = false;
    for (size_t i = 0; i < len; i++) {
        char ch = text[i];
        if (ch == '"' && (i == 0 || text[i - 1] != '\\'))
            in_str = !in_str;
        if (!in_str && strncmp(text + i, "NaN", 3) == 0) {
            memcpy(buf + k, "\"nan\"", 5);
            k += 5;
            i += 2;
        } else if (!in_str && strncmp(text + i, "-Infinity", 9) == 0) {
            memcpy(buf + k, "\"-inf\"", 6);
            k += 6;
            i += 8;
        } else if (!in_str && strncmp(text + i, "Infinity", 8) == 0) {
            memcpy(buf + k, "\"inf\"", 5);
            k += 5;
            i += 7;
        } else {
            buf[k++] = ch;
        }
    }
    root = json_loadb(buf, k, JSON_DECODE_ANY, je);
    free(buf);
    return root;
}

/* value_num() for a member read by the fast path. */
static bool member_num(const mfu__jmember *m, mfu__field f, mfu__num *n)
{
    if (m->type == MFU__J_INT || m->type == MFU__J_REAL) {
        n->value = n->printed = m->num;
        n->unit = MFU__UNIT_NONE;
        n->kind = MFU__NUM_FINITE;
        return true;
    }
    if (m->type == MFU__J_STRING) {
        mfu__span s = {m->str, m->str_len};
        if (f == MFU__F_TIME_S) {
            double t;
            if (mfu__datetime_scan(mfu__span_trim(s), &t, NULL)) {
                n->value = n->printed = t;
                n->unit = MFU__UNIT_SECONDS;
                n->kind = MFU__NUM_FINITE;
                return true;
            }
        }
        return mfu__num_parse(s, n);
    }
    return false;
}

/* mfu__fieldmap_store() of a finite plain number v (what member_num gives for a JSON
 * number); the fields without a factor or scope are stored here directly, as it stores them. */
static bool store_number(const mfu__fieldmap *fm, int f, double v, mfu_step *s)
{
    if (fm->factor[f] == 1.0) {
        switch (f) {
        case MFU__F_STEP:
            if (v != floor(v) || fabs(v) > 9.0e15)
                return false;
            s->step = (int64_t)v;
            return true;
        case MFU__F_TIME_S: s->time_s = v; return true;
        case MFU__F_STEP_TIME_S: s->step_time_s = v; return true;
        case MFU__F_TOKENS: s->tokens = v; return true;
        case MFU__F_SAMPLES: s->samples = v; return true;
        case MFU__F_LOSS: s->loss = v; return true;
        case MFU__F_LR: s->lr = v; return true;
        case MFU__F_GRAD_NORM: s->grad_norm = v; return true;
        case MFU__F_MEMORY_BYTES: s->memory_bytes = v; return true;
        default: break;
        }
    }
    mfu__num n = {v, v, MFU__UNIT_NONE, MFU__NUM_FINITE};
    return mfu__fieldmap_store(fm, (mfu__field)f, &n, s);
}

/* The line through the fast reader: the same candidates in the same order as the jansson
 * path below, each looked up once per member of a new shape instead of once per candidate.
 * Returns false (nothing done) when the fast reader declines; *rc is the line's result
 * otherwise. */
static bool jsonl_fast(jsonl_state *st, mfu__ictx *c, const mfu__line *ln, mfu_status *rc)
{
    mfu__jflat *o = &st->obj;
    if (st->first_keys[0] == '\0')
        return false; /* the first object names the keys for messages: jansson's order */
    const jsonl_shape *shp = NULL;
    for (int k = 0; k < JSONL_SHAPES && !shp; k++)
        if (mfu__jflat_parse_shaped(ln->text, ln->len, &st->shapes[k].sh, o))
            shp = &st->shapes[k];
    if (!shp) {
        if (!mfu__jflat_parse(ln->text, ln->len, o))
            return false;
        /* a new shape: which member holds each candidate */
        jsonl_shape *ns = &st->shapes[st->next_shape];
        memset(ns->at, 0, sizeof ns->at);
        ns->hit = 0;
        for (size_t i = 0; i < o->n; i++) {
            const mfu__jmember *m = &o->m[i];
            for (size_t h = slot_hash(m->key, m->key_len); st->slots[h].key;
                 h = (h + 1) % JSONL_SLOTS) {
                const cand_slot *sl = &st->slots[h];
                if (sl->len == m->key_len && memcmp(sl->key, m->key, m->key_len) == 0) {
                    ns->at[sl->field][sl->rank] = (uint8_t)(i + 1);
                    ns->hit |= 1u << sl->field;
                }
            }
        }
        for (int f = 0; f < MFU__F_COUNT; f++) {
            ns->first[f] = 0;
            for (int r = 0; r < st->ncand[f] && !ns->first[f]; r++)
                ns->first[f] = ns->at[f][r];
        }
        if (mfu__jshape_learn(&ns->sh, ln->text, ln->len, o))
            st->next_shape = (st->next_shape + 1) % JSONL_SHAPES;
        shp = ns;
    }
    /* a dotted candidate looks inside nested objects, which the fast reader does not read */
    for (size_t i = 0; st->dotted && i < o->n; i++)
        if (o->m[i].type == MFU__J_OBJECT)
            return false;
    st->objects++;
    mfu_step s = st->blank;
    bool have_step = false;
    uint32_t hit = shp->hit;
    for (int f = 0; hit; f++, hit >>= 1) { /* fields in order: scopes depend on it */
        if (!(hit & 1))
            continue;
        /* the usual case: the best candidate present is a number (member_num reads it) */
        const mfu__jmember *best = &o->m[shp->first[f] - 1];
        if (best->type == MFU__J_INT || best->type == MFU__J_REAL) {
            if (store_number(&st->fm, f, best->num, &s) && f == MFU__F_STEP)
                have_step = true;
            continue;
        }
        const uint8_t *at = shp->at[f];
        for (int r = 0; r < st->ncand[f]; r++) {
            mfu__num n;
            if (!at[r] || !member_num(&o->m[at[r] - 1], (mfu__field)f, &n))
                continue;
            if (mfu__fieldmap_store(&st->fm, (mfu__field)f, &n, &s) && f == MFU__F_STEP)
                have_step = true;
            break;
        }
    }
    if (!have_step) {
        st->without_step++;
        mfu__skip(c, "JSON object without a step; map one with --map step=KEY");
        *rc = MFU_OK;
        return true;
    }
    *rc = mfu__emit(c, &s);
    return true;
}

static mfu_status jsonl_line(void *state, mfu__ictx *c, const mfu__line *ln)
{
    jsonl_state *st = state;
    if (ln->len == 0 || ln->text[0] != '{')
        return MFU_OK;
    mfu_status rc;
    if (jsonl_fast(st, c, ln, &rc))
        return rc;
    json_error_t je;
    json_t *root = load_lenient(ln->text, ln->len, &je);
    if (!root) {
        mfu__skip(c, "invalid JSON (%s at column %d)", je.text, je.column);
        return MFU_OK;
    }
    if (!json_is_object(root)) {
        json_decref(root);
        return MFU_OK;
    }
    st->objects++;
    if (st->first_keys[0] == '\0') {
        const char *key;
        json_t *val;
        json_object_foreach(root, key, val)
        {
            (void)val;
            mfu__appendf(st->first_keys, sizeof st->first_keys, "%s%s",
                         st->first_keys[0] ? ", " : "", key);
        }
    }
    mfu_step s;
    mfu_step_init(&s);
    bool have_step = false;
    for (int f = 0; f < MFU__F_COUNT; f++) {
        const char *cand[MFU__FIELDMAP_MAX_ALIASES];
        size_t nc =
            mfu__fieldmap_candidates(&st->fm, (mfu__field)f, cand, MFU__FIELDMAP_MAX_ALIASES);
        for (size_t i = 0; i < nc; i++) {
            json_t *v = lookup(root, cand[i]);
            mfu__num n;
            if (!v || !value_num(v, (mfu__field)f, &n))
                continue;
            if (mfu__fieldmap_store(&st->fm, (mfu__field)f, &n, &s) && f == MFU__F_STEP)
                have_step = true;
            break;
        }
    }
    json_decref(root);
    if (!have_step) {
        st->without_step++;
        mfu__skip(c, "JSON object without a step; map one with --map step=KEY");
        return MFU_OK;
    }
    return mfu__emit(c, &s);
}

static mfu_status jsonl_finish(void *state, mfu__ictx *c)
{
    jsonl_state *st = state;
    if (st->objects > 0 && st->without_step == st->objects)
        return mfu__fail_line(c, MFU_E_MISSING,
                              "no JSON object has a step key (keys: %s); map one with --map "
                              "step=KEY",
                              st->first_keys);
    return MFU_OK;
}

const mfu__format mfu__fmt_jsonl = {
    .name = "jsonl",
    .summary = "generic JSON-lines, one object per step; fields by name or --map FIELD=KEY",
    .detect = jsonl_detect,
    .state_size = sizeof(jsonl_state),
    .init = jsonl_init,
    .line = jsonl_line,
    .generic = true,
    .finish = jsonl_finish,
};
