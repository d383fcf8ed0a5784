/*
 * ref_clean.h - the line cleaner as it was before its fast paths (src/ingest/clean.c at commit
 * 27f7d81, functions renamed ref_*), kept as the reference that test_ingest_fast.c compares
 * the current cleaner with on a generated corpus. Test code only. The prefix rules added later
 * (mfu__strip_more, issue 10) are called from here as they are from the cleaner.
 */
#ifndef MFU_REF_CLEAN_H
#define MFU_REF_CLEAN_H

#include <ctype.h>
#include <math.h>
#include <string.h>

#include "ingest/internal.h"

static const char *const ref_levels[] = {"DEBUG", "INFO", "WARNING", "WARN", "ERROR", "CRITICAL"};

/* Length of a logging level word at s (exact upper case), 0 when none. */
static size_t ref_level_at(mfu__span s)
{
    for (size_t i = 0; i < MFU__ARRAY_LEN(ref_levels); i++)
        if (mfu__span_starts(s, ref_levels[i]))
            return strlen(ref_levels[i]);
    return 0;
}

static mfu__span ref_drop(mfu__span s, size_t k)
{
    s.p += k;
    s.n -= k;
    return s;
}

/* Bytes of a "[...]" token at s with no blank inside, followed by one blank; 0 when none. */
static size_t ref_bracket_token(mfu__span s)
{
    if (s.n < 3 || s.p[0] != '[')
        return 0;
    for (size_t i = 1; i < s.n; i++) {
        if (s.p[i] == ' ')
            return 0;
        if (s.p[i] == ']')
            return (i + 1 < s.n && s.p[i + 1] == ' ') ? i + 2 : 0;
    }
    return 0;
}

/* After a timestamp: strip a Python logging tail. Returns the bytes stripped. */
static size_t ref_logging_tail(mfu__span s)
{
    mfu__span t = s;
    /* " - name - LEVEL - " */
    if (mfu__span_starts(t, " - ")) {
        mfu__span r = ref_drop(t, 3);
        long sp = mfu__span_find(r, " - ");
        if (sp > 0 && mfu__span_find((mfu__span){r.p, (size_t)sp}, " ") < 0) {
            mfu__span l = ref_drop(r, (size_t)sp + 3);
            size_t lv = ref_level_at(l);
            if (lv && mfu__span_starts(ref_drop(l, lv), " - "))
                return (size_t)(l.p - s.p) + lv + 3;
        }
    }
    /* " | LEVEL | name | " */
    if (mfu__span_starts(t, " | ")) {
        mfu__span l = ref_drop(t, 3);
        size_t lv = ref_level_at(l);
        if (lv && mfu__span_starts(ref_drop(l, lv), " | ")) {
            mfu__span r = ref_drop(l, lv + 3);
            long bar = mfu__span_find(r, " | ");
            if (bar > 0)
                return (size_t)(r.p - s.p) + (size_t)bar + 3;
            return (size_t)(r.p - s.p);
        }
    }
    /* " [LEVEL] [file.py:12:func] " (the second token optional) */
    if (t.n && t.p[0] == ' ')
        t = ref_drop(t, 1);
    if (t.n > 2 && t.p[0] == '[') {
        mfu__span l = ref_drop(t, 1);
        size_t lv = ref_level_at(l);
        if (lv && l.n > lv + 1 && l.p[lv] == ']') {
            mfu__span r = ref_drop(l, lv + 1);
            if (r.n && r.p[0] == ' ')
                r = ref_drop(r, 1);
            size_t bt = ref_bracket_token(r);
            if (bt && mfu__span_find((mfu__span){r.p, bt}, "Rank") < 0)
                r = ref_drop(r, bt);
            return (size_t)(r.p - s.p);
        }
    }
    return 0;
}

/* Digits at s (at most maxd), value in *v; returns the count. */
static size_t ref_int_at(mfu__span s, size_t maxd, long *v)
{
    size_t i = 0;
    long x = 0;
    while (i < s.n && i < maxd && isdigit((unsigned char)s.p[i])) {
        x = x * 10 + (s.p[i] - '0');
        i++;
    }
    *v = x;
    return i;
}

/* One prefix off s; returns false when none applies. */
static bool ref_strip_one(mfu__span *sp, mfu__line *ln)
{
    mfu__span s = *sp;
    if (s.n == 0)
        return false;
    if (s.p[0] == ' ' || s.p[0] == '\t') {
        *sp = mfu__span_trim(s);
        return true;
    }
    if (s.p[0] == '>' && (s.n == 1 || s.p[1] == ' ')) { /* Markdown quote */
        *sp = ref_drop(s, s.n == 1 ? 1 : 2);
        return true;
    }
    long v;
    size_t k;
    if (mfu__span_starts(s, "[rank")) { /* [rank3]: */
        k = ref_int_at(ref_drop(s, 5), 6, &v);
        if (k && s.n >= 5 + k + 2 && s.p[5 + k] == ']' && s.p[6 + k] == ':') {
            ln->rank = (int)v;
            *sp = ref_drop(s, 7 + k);
            return true;
        }
    }
    if (mfu__span_starts(s, "rank")) { /* rank0[73][MainThread]: */
        k = ref_int_at(ref_drop(s, 4), 6, &v);
        mfu__span r = ref_drop(s, 4 + k);
        if (k && r.n && r.p[0] == '[') {
            long close = mfu__span_find(r, "]: ");
            long close2 = close > 0 ? mfu__span_find(ref_drop(r, 1), "[") : -1;
            if (close > 0 && close2 >= 0 && close2 < close) {
                ln->rank = (int)v;
                *sp = ref_drop(r, (size_t)close + 3);
                return true;
            }
        }
    }
    k = ref_int_at(s, 5, &v); /* srun --label "3: " */
    if (k && s.n > k + 1 && s.p[k] == ':' && s.p[k + 1] == ' ') {
        ln->rank = (int)v;
        *sp = ref_drop(s, k + 2);
        return true;
    }
    if (mfu__span_starts(s, "stdout: ") || mfu__span_starts(s, "stderr: ")) {
        *sp = ref_drop(s, 8);
        return true;
    }
    if (mfu__span_starts(s, "[titan] ")) {
        *sp = ref_drop(s, 8);
        return true;
    }
    double t;
    size_t used;
    if (s.p[0] == '[' && mfu__datetime_scan(ref_drop(s, 1), &t, &used) && used + 1 < s.n &&
        s.p[used + 1] == ']') {
        ln->prefix_time_s = t;
        mfu__span r = ref_drop(s, used + 2);
        r = ref_drop(r, ref_logging_tail(r));
        *sp = r;
        return true;
    }
    if (mfu__datetime_scan(s, &t, &used) && (used == s.n || s.p[used] == ' ')) {
        ln->prefix_time_s = t;
        mfu__span r = ref_drop(s, used);
        r = ref_drop(r, ref_logging_tail(r));
        *sp = r;
        return true;
    }
    /* "[INFO] [module] " without a timestamp */
    if (s.p[0] == '[') {
        size_t lt = ref_logging_tail(s);
        if (lt) {
            *sp = ref_drop(s, lt);
            return true;
        }
    }
    /* INFO:name: (logging.basicConfig default format) */
    size_t lv = ref_level_at(s);
    if (lv && s.n > lv + 1 && s.p[lv] == ':') {
        size_t i = lv + 1;
        while (i < s.n && (isalnum((unsigned char)s.p[i]) || s.p[i] == '_' || s.p[i] == '.'))
            i++;
        if (i > lv + 1 && i < s.n && s.p[i] == ':') {
            *sp = ref_drop(s, i + 1);
            return true;
        }
    }
    /* absl/glog: I0811 21:54:55.531340     514 metric_logger.py:226] */
    if (s.n > 22 && strchr("IWEF", s.p[0]) && isdigit((unsigned char)s.p[1]) && s.p[5] == ' ' &&
        s.p[8] == ':' && s.p[11] == ':') {
        long close = mfu__span_find(s, "] ");
        long sp1 = mfu__span_find(ref_drop(s, 6), " ");
        if (close > 0 && sp1 > 0 && close < 200) {
            mfu__span loc = {s.p, (size_t)close};
            if (mfu__span_find(loc, ".") > 0 && mfu__span_find(loc, ":") > 0) {
                *sp = ref_drop(s, (size_t)close + 2);
                return true;
            }
        }
    }
    return mfu__strip_more(sp, ln); /* the rules added after the fast paths */
}

static void ref_clean_line(const char *text, size_t len, long lineno, char *buf, mfu__line *ln)
{
    /* 1. ANSI escapes and control bytes */
    size_t k = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)text[i];
        if (c == 0x1b) {
            if (i + 1 < len && text[i + 1] == '[') { /* CSI: ESC [ params final(0x40-0x7e) */
                i += 2;
                while (i < len &&
                       !((unsigned char)text[i] >= 0x40 && (unsigned char)text[i] <= 0x7e))
                    i++;
            } else if (i + 1 < len && text[i + 1] == ']') { /* OSC: until BEL or ESC \ */
                i += 2;
                while (i < len && text[i] != 0x07 &&
                       !(text[i] == 0x1b && i + 1 < len && text[i + 1] == '\\'))
                    i++;
                if (i < len && text[i] == 0x1b)
                    i++;
            } else {
                i++; /* two-byte escape */
            }
            continue;
        }
        if (c < 0x20 && c != '\t')
            continue;
        if (c == 0x7f)
            continue;
        buf[k++] = (char)c;
    }
    while (k && (buf[k - 1] == ' ' || buf[k - 1] == '\t'))
        k--;
    buf[k] = '\0';
    ln->raw = buf;
    ln->raw_len = k;
    ln->lineno = lineno;
    ln->rank = -1;
    ln->prefix_time_s = NAN;
    /* 2. prefixes */
    mfu__span s = {buf, k};
    for (int round = 0; round < 16 && ref_strip_one(&s, ln); round++)
        ;
    mfu__strip_tail(&s);
    s = mfu__span_trim(s);
    ln->text = s.p;
    ln->len = s.n;
    /* s ends where buf ends (only leading bytes were stripped), so text is NUL-terminated,
     * except when trimming removed trailing blanks that were not at buf's end: impossible,
     * since buf's trailing blanks were removed above. An empty text points at the NUL. */
    if (s.n == 0)
        ln->text = buf + k;
}

#endif /* MFU_REF_CLEAN_H */
