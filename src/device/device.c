/*
 * device.c - name matching over the accelerator table and the peak lookup.
 *
 * Matching works on words: runs of ASCII letters and digits, lower-cased, with vendor words
 * dropped. Words are compared whole, never as substrings, which is what keeps "GB200" away
 * from B200, "H200" from H20 and "L40S" from L40/L4 (the traps other stacks fell into).
 * Nothing is cached: every call normalises the table's ~190 names again (about 75 us), so the
 * module holds no state; callers match a name once per run.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "device/device_internal.h"
#include "mfu/device.h"
#include "util/util.h"

/* A name cut into words. Buffers are sized by the public limits. */
typedef struct words {
    size_t n;
    char w[MFU_DEVICE_NAME_WORDS_MAX][MFU_DEVICE_NAME_MAX + 1];
    char joined[MFU_DEVICE_NAME_MAX + 1]; /* the words concatenated: the exact-match key */
} words;

/* Words that say who made the part or what kind of thing it is, never which one it is. */
static const char *const noise[] = {"nvidia", "amd",   "tesla",      "geforce", "instinct",
                                    "google", "cloud", "intel",      "habana",  "aws",
                                    "amazon", "gpu",   "accelerator"};

static bool is_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static bool is_noise(const char *w)
{
    for (size_t i = 0; i < MFU__ARRAY_LEN(noise); i++)
        if (strcmp(w, noise[i]) == 0)
            return true;
    return false;
}

static bool all_digits(const char *w)
{
    if (!*w)
        return false;
    for (; *w; w++)
        if (*w < '0' || *w > '9')
            return false;
    return true;
}

/* A TPU accelerator-type word: "v4", "v5p", "v5litepod", "v6e", "tpu7x", ... */
static bool tpu_type_word(const char *w)
{
    return (w[0] == 'v' && w[1] >= '0' && w[1] <= '9') || strncmp(w, "tpu", 3) == 0;
}

/* Split s into words. Returns MFU_OK, or MFU_E_LIMIT when s is too long or has too many
 * words (the table's own names never do). The caller checked s != NULL. */
static mfu_status split(const char *s, words *out)
{
    out->n = 0;
    out->joined[0] = '\0';
    if (strlen(s) > MFU_DEVICE_NAME_MAX)
        return MFU_E_LIMIT;
    const char *p = s;
    while (*p) {
        while (*p && !is_alnum(*p))
            p++;
        if (!*p)
            break;
        char w[MFU_DEVICE_NAME_MAX + 1];
        size_t len = 0;
        while (*p && is_alnum(*p)) {
            char c = *p++;
            w[len++] = (c >= 'A' && c <= 'Z') ? (char)(c + ('a' - 'A')) : c;
        }
        w[len] = '\0';
        if (is_noise(w))
            continue;
        if (out->n >= MFU_DEVICE_NAME_WORDS_MAX)
            return MFU_E_LIMIT;
        memcpy(out->w[out->n], w, len + 1);
        out->n++;
    }
    /* A TPU slice name ends in its chip count ("v5litepod-8", "v5p-128"): drop it. */
    if (out->n >= 2 && all_digits(out->w[out->n - 1]) && tpu_type_word(out->w[out->n - 2]))
        out->n--;
    /* The words total at most strlen(s) <= MFU_DEVICE_NAME_MAX bytes: joined always fits. */
    for (size_t i = 0; i < out->n; i++)
        mfu__appendf(out->joined, sizeof out->joined, "%s", out->w[i]);
    return MFU_OK;
}

/* Collect the names of an entry (id, display name, reported names) into names[0..max). */
static size_t entry_names(const mfu_device_info *d, const char **names, size_t max)
{
    size_t n = 0;
    if (n < max)
        names[n++] = d->id;
    if (n < max)
        names[n++] = d->name;
    for (const char *const *r = d->reported_names; r && *r && n < max; r++)
        names[n++] = *r;
    return n;
}

#define NAMES_PER_ENTRY_MAX 16

static bool entry_has_key(const mfu_device_info *d, const char *key, words *scratch)
{
    const char *names[NAMES_PER_ENTRY_MAX];
    size_t n = entry_names(d, names, NAMES_PER_ENTRY_MAX);
    for (size_t i = 0; i < n; i++)
        if (split(names[i], scratch) == MFU_OK && strcmp(scratch->joined, key) == 0)
            return true;
    return false;
}

/* Words that only tell variants of one model apart: form factor, memory type, memory size
 * ("80gb", "144g"). A name may carry them when the query leaves them out. */
static bool is_qualifier(const char *w)
{
    static const char *const q[] = {"sxm", "sxm2", "sxm3",  "sxm4", "sxm5",  "sxm6", "pcie",
                                    "nvl", "hbm2", "hbm2e", "hbm3", "hbm3e", "oam"};
    for (size_t i = 0; i < MFU__ARRAY_LEN(q); i++)
        if (strcmp(w, q[i]) == 0)
            return true;
    size_t n = 0;
    while (w[n] >= '0' && w[n] <= '9')
        n++;
    return n > 0 && (strcmp(w + n, "g") == 0 || strcmp(w + n, "gb") == 0);
}

static bool has_word(const words *ws, const char *w)
{
    for (size_t i = 0; i < ws->n; i++)
        if (strcmp(ws->w[i], w) == 0)
            return true;
    return false;
}

/* True when some name of d has every word of q, and its other words are all qualifiers: so
 * "A100" matches "A100-SXM4-80GB" but "RTX 6000" does not match "RTX 6000 Ada Generation"
 * (the Quadro RTX 6000 and RTX PRO 6000 are other cards). */
static bool entry_has_words(const mfu_device_info *d, const words *q, words *scratch)
{
    const char *names[NAMES_PER_ENTRY_MAX];
    size_t n = entry_names(d, names, NAMES_PER_ENTRY_MAX);
    for (size_t i = 0; i < n; i++) {
        if (split(names[i], scratch) != MFU_OK)
            continue;
        bool ok = true;
        for (size_t k = 0; k < q->n && ok; k++)
            ok = has_word(scratch, q->w[k]);
        for (size_t j = 0; j < scratch->n && ok; j++)
            ok = is_qualifier(scratch->w[j]) || has_word(q, scratch->w[j]);
        if (ok)
            return true;
    }
    return false;
}

static bool same_dense_peaks(const mfu_device_info *a, const mfu_device_info *b)
{
    for (int t = 0; t < MFU_DTYPE_COUNT; t++)
        if (a->dense_flops_per_s[t] != b->dense_flops_per_s[t])
            return false;
    return true;
}

/* Fill out->candidates with the 3 entries whose names are closest to the query: first those
 * with a name containing every word of it (a more specific model: "RTX 6000" -> rtx-6000-ada),
 * then by edit distance between the joined words ("MI300" -> mi300x). Ties: table order. */
static void closest(const words *q, mfu_device_match *out, words *scratch)
{
    size_t best_d[3] = {SIZE_MAX, SIZE_MAX, SIZE_MAX};
    const mfu_device_info *best[3] = {NULL, NULL, NULL};
    for (size_t i = 0; i < mfu_device_count(); i++) {
        const mfu_device_info *d = mfu_device_at(i);
        const char *names[NAMES_PER_ENTRY_MAX];
        size_t n = entry_names(d, names, NAMES_PER_ENTRY_MAX);
        size_t dist = SIZE_MAX;
        for (size_t k = 0; k < n; k++) {
            if (split(names[k], scratch) != MFU_OK)
                continue;
            bool all = true;
            for (size_t w = 0; w < q->n && all; w++)
                all = has_word(scratch, q->w[w]);
            size_t e = all ? 0 : mfu__edit_distance(q->joined, scratch->joined) + 1;
            if (e < dist)
                dist = e;
        }
        for (size_t s = 0; s < 3; s++) {
            if (dist < best_d[s]) {
                for (size_t m = 2; m > s; m--) {
                    best_d[m] = best_d[m - 1];
                    best[m] = best[m - 1];
                }
                best_d[s] = dist;
                best[s] = d;
                break;
            }
        }
    }
    out->ncandidates = 0;
    for (size_t s = 0; s < 3; s++)
        if (best[s])
            out->candidates[out->ncandidates++] = best[s];
}

/* "a, b, c" (and "and N more") from out->candidates into buf. */
static void list_ids(char *buf, size_t n, const mfu_device_match *m, size_t max)
{
    buf[0] = '\0';
    size_t shown = m->ncandidates < max ? m->ncandidates : max;
    if (shown > MFU_DEVICE_CANDIDATES_MAX)
        shown = MFU_DEVICE_CANDIDATES_MAX;
    for (size_t i = 0; i < shown; i++)
        mfu__appendf(buf, n, "%s%s", i ? ", " : "", m->candidates[i]->id);
    if (m->ncandidates > shown)
        mfu__appendf(buf, n, " and %zu more", m->ncandidates - shown);
}

void mfu__device_quote(char *dst, size_t n, const char *s)
{
    if (n < 4) { /* no room for the "..." mark: write what fits */
        if (n > 0)
            dst[0] = '\0';
        return;
    }
    size_t max = n - 4 < MFU__DEVICE_QUOTE_MAX ? n - 4 : MFU__DEVICE_QUOTE_MAX;
    size_t i = 0;
    for (; i < max && s[i]; i++) {
        unsigned char c = (unsigned char)s[i];
        dst[i] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
    }
    dst[i] = '\0';
    if (s[i])
        memcpy(dst + i, "...", 4);
}

mfu_status mfu_device_match_name(const char *name, mfu_device_match *out, mfu_error *err)
{
    if (!out)
        return mfu__fail(err, MFU_E_INVALID, 0, "mfu_device_match_name: NULL out");
    memset(out, 0, sizeof *out);
    if (!name)
        return mfu__fail_field(err, MFU_E_INVALID, "device",
                               "no device name given; pass --device ID (see 'mfu devices')");
    /* Two word buffers: about 8 KiB each, so they live on the stack of this call only. */
    words q, scratch;
    char quoted[MFU__DEVICE_QUOTE_MAX + 4];
    mfu__device_quote(quoted, sizeof quoted, name);
    mfu_status st = split(name, &q);
    if (st == MFU_E_LIMIT)
        return mfu__fail_field(err, MFU_E_LIMIT, "device",
                               "device name '%s' is longer than %d bytes or %d words; pass an id "
                               "from 'mfu devices' (--device)",
                               quoted, MFU_DEVICE_NAME_MAX, MFU_DEVICE_NAME_WORDS_MAX);
    if (q.n == 0)
        return mfu__fail_field(err, MFU_E_INVALID, "device",
                               "device name '%s' names no model; pass an id from 'mfu devices' "
                               "(--device) or --peak-tflops",
                               quoted);

    /* 1. exact: the joined words equal those of an id, display name or reported name */
    for (size_t i = 0; i < mfu_device_count(); i++) {
        const mfu_device_info *d = mfu_device_at(i);
        if (entry_has_key(d, q.joined, &scratch)) {
            out->device = d;
            out->kind = MFU_DEVICE_MATCH_EXACT;
            return MFU_OK;
        }
    }

    /* 2. words: every word of the name occurs whole in an entry's names */
    size_t nmatch = 0;
    bool equal = true;
    const mfu_device_info *first = NULL;
    for (size_t i = 0; i < mfu_device_count(); i++) {
        const mfu_device_info *d = mfu_device_at(i);
        if (!entry_has_words(d, &q, &scratch))
            continue;
        if (!first)
            first = d;
        else if (!same_dense_peaks(first, d))
            equal = false;
        if (nmatch < MFU_DEVICE_CANDIDATES_MAX)
            out->candidates[nmatch] = d;
        nmatch++;
    }
    out->ncandidates = nmatch;
    if (nmatch == 1) {
        out->device = first;
        out->kind = MFU_DEVICE_MATCH_WORDS;
        return MFU_OK;
    }
    char ids[256];
    if (nmatch > 1 && equal) {
        out->device = first;
        out->kind = MFU_DEVICE_MATCH_EQUAL_PEAKS;
        return MFU_OK;
    }
    if (nmatch > 1) {
        list_ids(ids, sizeof ids, out, 3);
        return mfu__fail_field(err, MFU_E_AMBIGUOUS, "device",
                               "device name '%s' is ambiguous: it matches %s, whose peaks differ; "
                               "name one of them (--device) or pass --peak-tflops",
                               quoted, ids);
    }

    /* 3. unknown: suggest the closest ids */
    closest(&q, out, &scratch);
    list_ids(ids, sizeof ids, out, 3);
    return mfu__fail_field(err, MFU_E_UNKNOWN, "device",
                           "unknown device '%s' (closest: %s); run 'mfu devices' for the table, "
                           "or pass --peak-tflops for a device not in it",
                           quoted, ids);
}

mfu_status mfu_device_find(const char *name, const mfu_device_info **out, mfu_error *err)
{
    if (!out)
        return mfu__fail(err, MFU_E_INVALID, 0, "mfu_device_find: NULL out");
    *out = NULL;
    mfu_device_match m;
    mfu_status st = mfu_device_match_name(name, &m, err);
    if (st == MFU_OK)
        *out = m.device;
    return st;
}

mfu_status mfu_device_peak_flops_per_s(const mfu_device_info *dev, mfu_dtype dtype, bool sparse,
                                       double *out, mfu_error *err)
{
    if (!dev || !out)
        return mfu__fail(err, MFU_E_INVALID, 0, "mfu_device_peak_flops_per_s: NULL argument");
    if ((int)dtype < 0 || dtype >= MFU_DTYPE_COUNT)
        return mfu__fail(err, MFU_E_INVALID, 0,
                         "mfu_device_peak_flops_per_s: dtype %d out of "
                         "range",
                         (int)dtype);
    const double *peaks = sparse ? dev->sparse_flops_per_s : dev->dense_flops_per_s;
    if (peaks[dtype] > 0) {
        *out = peaks[dtype];
        return MFU_OK;
    }
    char have[96] = "";
    for (int t = 0; t < MFU_DTYPE_COUNT; t++)
        if (peaks[t] > 0)
            mfu__appendf(have, sizeof have, "%s%s", have[0] ? ", " : "",
                         mfu_dtype_name((mfu_dtype)t));
    if (sparse)
        return mfu__fail_field(err, MFU_E_UNSUPPORTED, "dtype",
                               "%s has no sparse %s figure (sparse figures: %s); MFU uses the "
                               "dense peak, drop the sparse request",
                               dev->id, mfu_dtype_name(dtype), have[0] ? have : "none");
    return mfu__fail_field(err, MFU_E_UNSUPPORTED, "dtype",
                           "%s has no dense %s peak in the table (it has: %s); pick one of those "
                           "with --dtype or pass --peak-tflops",
                           dev->id, mfu_dtype_name(dtype), have);
}
