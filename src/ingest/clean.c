/*
 * clean.c - turn one logical line into what a format reads (log-formats.md §1, rule 1).
 *
 * First ANSI escapes and other control bytes go (the "raw" text keeps everything else).
 * Then prefixes are stripped repeatedly, in any order, until none applies:
 *   leading blanks; Markdown quoting "> "; "[rank3]:" (torchrun --tee); "3: " (srun --label);
 *   "stdout: " / "stderr: "; "rank0[73][MainThread]: " (Composer); "[titan] ";
 *   "[2024-01-02 03:04:05,678] " and bare "2024-01-02 03:04:05 " timestamps (kept as the
 *   line's time), then a Python logging tail after them (" - root - INFO - ",
 *   " | INFO | root | ", "[INFO] [file.py:12:func] "); "INFO:name:" (logging.basicConfig);
 *   absl/glog "I0811 21:54:55.531340  514 file.py:226] ";
 *   and, for logs pasted into issues or printed by less common loggers (mfu__strip_more):
 *   inline code (`...`, <code>...</code>, <pre>), ">[" quoting, Lightning Fabric's "[rank: 0] ",
 *   "[INFO 2020-06-08 05:26:19] ", NVIDIA DLLogger's "DLL 2022-04-05 02:22:54.614486 - ",
 *   US dates "01/17/2024 13:47:27 [INFO|DP=0|...]: " (nanotron) and "[08/30/23 07:07:34] "
 *   (rich), detectron2's "[03/24 10:45:33 name]: " (LiBai; no year, no time kept), and a level
 *   padded with blanks ("INFO     ", rich; "   INFO  ", OpenPCDet).
 * The rank and time found on the way are handed to the format with the line.
 */
#include <ctype.h>
#include <math.h>
#include <string.h>

#include "ingest/fast.h"
#include "ingest/internal.h"

static const char *const levels[] = {"DEBUG", "INFO", "WARNING", "WARN", "ERROR", "CRITICAL"};

/* Length of a logging level word at s (exact upper case), 0 when none. */
static size_t level_at(mfu__span s)
{
    for (size_t i = 0; i < MFU__ARRAY_LEN(levels); i++)
        if (mfu__span_starts(s, levels[i]))
            return strlen(levels[i]);
    return 0;
}

static mfu__span drop(mfu__span s, size_t k)
{
    s.p += k;
    s.n -= k;
    return s;
}

/* Bytes of a "[...]" token at s with no blank inside, followed by one blank; 0 when none. */
static size_t bracket_token(mfu__span s)
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
static size_t logging_tail(mfu__span s)
{
    mfu__span t = s;
    /* " - name - LEVEL - " */
    if (mfu__span_starts(t, " - ")) {
        mfu__span r = drop(t, 3);
        long sp = mfu__span_find(r, " - ");
        if (sp > 0 && mfu__span_find((mfu__span){r.p, (size_t)sp}, " ") < 0) {
            mfu__span l = drop(r, (size_t)sp + 3);
            size_t lv = level_at(l);
            if (lv && mfu__span_starts(drop(l, lv), " - "))
                return (size_t)(l.p - s.p) + lv + 3;
        }
    }
    /* " | LEVEL | name | " */
    if (mfu__span_starts(t, " | ")) {
        mfu__span l = drop(t, 3);
        size_t lv = level_at(l);
        if (lv && mfu__span_starts(drop(l, lv), " | ")) {
            mfu__span r = drop(l, lv + 3);
            long bar = mfu__span_find(r, " | ");
            if (bar > 0)
                return (size_t)(r.p - s.p) + (size_t)bar + 3;
            return (size_t)(r.p - s.p);
        }
    }
    /* " [LEVEL] [file.py:12:func] " (the second token optional) */
    if (t.n && t.p[0] == ' ')
        t = drop(t, 1);
    if (t.n > 2 && t.p[0] == '[') {
        mfu__span l = drop(t, 1);
        size_t lv = level_at(l);
        if (lv && l.n > lv + 1 && l.p[lv] == ']') {
            mfu__span r = drop(l, lv + 1);
            if (r.n && r.p[0] == ' ')
                r = drop(r, 1);
            size_t bt = bracket_token(r);
            if (bt && mfu__span_find((mfu__span){r.p, bt}, "Rank") < 0)
                r = drop(r, bt);
            return (size_t)(r.p - s.p);
        }
    }
    return 0;
}

/* Digits at s (at most maxd), value in *v; returns the count. */
static size_t int_at(mfu__span s, size_t maxd, long *v)
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

/* Can a prefix rule start with byte c? (the quick reject of strip_one: most lines start
 * with their content, and this answers for them in one lookup) */
static bool prefix_start(unsigned char c)
{
    switch (c) {
    case ' ':
    case '\t':
    case '>':
    case '`': /* inline code */
    case '<': /* <code>, <pre> */
    case '[': /* [rank3]:, [titan], [timestamp], [INFO] */
    case 'r': /* rank0[73][MainThread]: */
    case 's': /* stdout: / stderr: */
    case 'D': /* DEBUG:name:, DLL date - */
    case 'I': /* INFO:name:, absl I0811 */
    case 'W': /* WARNING / WARN, absl W */
    case 'E': /* ERROR, absl E */
    case 'C': /* CRITICAL */
    case 'F': /* absl F */ return true;
    default: return c >= '0' && c <= '9'; /* srun "3: ", bare timestamps */
    }
}

/* One prefix off s; returns false when none applies. */
static bool strip_one(mfu__span *sp, mfu__line *ln)
{
    mfu__span s = *sp;
    if (s.n == 0 || !prefix_start((unsigned char)s.p[0]))
        return false;
    if (s.p[0] == ' ' || s.p[0] == '\t') {
        *sp = mfu__span_trim(s);
        return true;
    }
    if (s.p[0] == '>' && (s.n == 1 || s.p[1] == ' ')) { /* Markdown quote */
        *sp = drop(s, s.n == 1 ? 1 : 2);
        return true;
    }
    long v;
    size_t k;
    if (mfu__span_starts(s, "[rank")) { /* [rank3]: */
        k = int_at(drop(s, 5), 6, &v);
        if (k && s.n >= 5 + k + 2 && s.p[5 + k] == ']' && s.p[6 + k] == ':') {
            ln->rank = (int)v;
            *sp = drop(s, 7 + k);
            return true;
        }
    }
    if (mfu__span_starts(s, "rank")) { /* rank0[73][MainThread]: */
        k = int_at(drop(s, 4), 6, &v);
        mfu__span r = drop(s, 4 + k);
        if (k && r.n && r.p[0] == '[') {
            long close = mfu__span_find(r, "]: ");
            long close2 = close > 0 ? mfu__span_find(drop(r, 1), "[") : -1;
            if (close > 0 && close2 >= 0 && close2 < close) {
                ln->rank = (int)v;
                *sp = drop(r, (size_t)close + 3);
                return true;
            }
        }
    }
    k = int_at(s, 5, &v); /* srun --label "3: " */
    if (k && s.n > k + 1 && s.p[k] == ':' && s.p[k + 1] == ' ') {
        ln->rank = (int)v;
        *sp = drop(s, k + 2);
        return true;
    }
    if (mfu__span_starts(s, "stdout: ") || mfu__span_starts(s, "stderr: ")) {
        *sp = drop(s, 8);
        return true;
    }
    if (mfu__span_starts(s, "[titan] ")) {
        *sp = drop(s, 8);
        return true;
    }
    double t;
    size_t used;
    if (s.p[0] == '[' && mfu__datetime_scan(drop(s, 1), &t, &used) && used + 1 < s.n &&
        s.p[used + 1] == ']') {
        ln->prefix_time_s = t;
        mfu__span r = drop(s, used + 2);
        r = drop(r, logging_tail(r));
        *sp = r;
        return true;
    }
    if (mfu__datetime_scan(s, &t, &used) && (used == s.n || s.p[used] == ' ')) {
        ln->prefix_time_s = t;
        mfu__span r = drop(s, used);
        r = drop(r, logging_tail(r));
        *sp = r;
        return true;
    }
    /* "[INFO] [module] " without a timestamp */
    if (s.p[0] == '[') {
        size_t lt = logging_tail(s);
        if (lt) {
            *sp = drop(s, lt);
            return true;
        }
    }
    /* INFO:name: (logging.basicConfig default format) */
    size_t lv = level_at(s);
    if (lv && s.n > lv + 1 && s.p[lv] == ':') {
        size_t i = lv + 1;
        while (i < s.n && (isalnum((unsigned char)s.p[i]) || s.p[i] == '_' || s.p[i] == '.'))
            i++;
        if (i > lv + 1 && i < s.n && s.p[i] == ':') {
            *sp = drop(s, i + 1);
            return true;
        }
    }
    /* absl/glog: I0811 21:54:55.531340     514 metric_logger.py:226] */
    if (s.n > 22 && strchr("IWEF", s.p[0]) && isdigit((unsigned char)s.p[1]) && s.p[5] == ' ' &&
        s.p[8] == ':' && s.p[11] == ':') {
        long close = mfu__span_find(s, "] ");
        long sp1 = mfu__span_find(drop(s, 6), " ");
        if (close > 0 && sp1 > 0 && close < 200) {
            mfu__span loc = {s.p, (size_t)close};
            if (mfu__span_find(loc, ".") > 0 && mfu__span_find(loc, ":") > 0) {
                *sp = drop(s, (size_t)close + 2);
                return true;
            }
        }
    }
    return mfu__strip_more(sp, ln);
}

/* ---- less common prefixes (mfu__strip_more) --------------------------------------------- */

/* "MM/DD/YYYY HH:MM:SS" or "MM/DD/YY HH:MM:SS" at s (US order, as nanotron and rich print
 * them), read as UTC; *used gets the bytes. Two-digit years are 20YY. */
static bool us_datetime(mfu__span s, double *t, size_t *used)
{
    if (s.n < 17 || s.p[2] != '/' || s.p[5] != '/')
        return false;
    size_t ylen =
        s.n >= 19 && isdigit((unsigned char)s.p[8]) && isdigit((unsigned char)s.p[9]) ? 4 : 2;
    char iso[20];
    size_t k = 6 + ylen; /* the blank between date and time */
    if (s.n < k + 9 || s.p[k] != ' ')
        return false;
    for (size_t i = 0; i < ylen; i++)
        if (!isdigit((unsigned char)s.p[6 + i]))
            return false;
    /* YYYY-MM-DD HH:MM:SS for mfu__datetime_scan, which checks every digit */
    memcpy(iso, ylen == 4 ? s.p + 6 : "20", ylen == 4 ? 4 : 2);
    if (ylen == 2)
        memcpy(iso + 2, s.p + 6, 2);
    iso[4] = '-';
    memcpy(iso + 5, s.p, 2);
    iso[7] = '-';
    memcpy(iso + 8, s.p + 3, 2);
    iso[10] = ' ';
    memcpy(iso + 11, s.p + k + 1, 8);
    size_t u;
    if (!mfu__datetime_scan((mfu__span){iso, 19}, t, &u) || u != 19)
        return false;
    *used = k + 9;
    return true;
}

/* Bytes of "[LEVEL|...]: " (nanotron's "[INFO|DP=0|PP=0|TP=0|host]: ") at s, 0 when none. */
static size_t bar_level_tail(mfu__span s)
{
    if (s.n < 4 || s.p[0] != '[')
        return 0;
    size_t lv = level_at(drop(s, 1));
    if (!lv || (s.p[1 + lv] != '|' && s.p[1 + lv] != ']'))
        return 0;
    long close = mfu__span_find(s, "]: ");
    if (close < 0 || mfu__span_find((mfu__span){s.p, (size_t)close}, " ") >= 0)
        return 0;
    return (size_t)close + 3;
}

void mfu__strip_tail(mfu__span *sp)
{
    static const char *const tails[] = {"</code>", "</pre>"};
    mfu__span s = *sp;
    if (s.n == 0 || s.p[s.n - 1] != '>') /* the usual case: one compare */
        return;
    for (size_t i = 0; i < MFU__ARRAY_LEN(tails); i++) {
        size_t n = strlen(tails[i]);
        if (s.n >= n && memcmp(s.p + s.n - n, tails[i], n) == 0) {
            s.n -= n;
            ((char *)s.p)[s.n] = '\0';
            *sp = s;
            return;
        }
    }
}

/* Kept out of strip_one (noinline): the rare rules must not make the common path bigger. */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
bool mfu__strip_more(mfu__span *sp, mfu__line *ln)
{
    mfu__span s = *sp;
    if (s.n == 0)
        return false;
    /* inline code around the whole line: `...`, ``...``, <code>...</code>, <pre>...</pre> */
    if (s.p[0] == '`' || mfu__span_starts(s, "<code>") || mfu__span_starts(s, "<pre>")) {
        size_t lead = s.p[0] == '`' ? 1 : s.p[1] == 'c' ? 6 : 5;
        while (lead < s.n && lead < 3 && s.p[0] == '`' && s.p[lead] == '`')
            lead++;
        mfu__span r = drop(s, lead);
        static const char *const tails[] = {"</code>", "</pre>", "`"};
        for (size_t i = 0; i < MFU__ARRAY_LEN(tails); i++) {
            size_t n = strlen(tails[i]);
            while (r.n >= n && memcmp(r.p + r.n - n, tails[i], n) == 0) {
                r.n -= n;
                ((char *)r.p)[r.n] = '\0'; /* the text still ends at a NUL (clean_rest) */
            }
        }
        r = mfu__span_trim(r);
        ((char *)r.p)[r.n] = '\0';
        *sp = r;
        return true;
    }
    if (s.n >= 2 && s.p[0] == '>' && s.p[1] == '[') { /* a Markdown quote without its blank */
        *sp = drop(s, 1);
        return true;
    }
    long v;
    size_t k, used;
    double t;
    if (mfu__span_starts(s, "[rank: ")) { /* Lightning Fabric's rank_zero prefix */
        k = int_at(drop(s, 7), 6, &v);
        if (k && s.n > 7 + k + 1 && s.p[7 + k] == ']' && s.p[8 + k] == ' ') {
            ln->rank = (int)v;
            *sp = drop(s, 9 + k);
            return true;
        }
    }
    if (s.p[0] == '[') {
        /* "[INFO 2020-06-08 05:26:19] " (DeepSpeed's 2020 logger) */
        size_t lv = level_at(drop(s, 1));
        if (lv && s.n > lv + 2 && s.p[1 + lv] == ' ' &&
            mfu__datetime_scan(drop(s, lv + 2), &t, &used) && s.n > lv + 2 + used + 1 &&
            s.p[lv + 2 + used] == ']' && s.p[lv + 3 + used] == ' ') {
            ln->prefix_time_s = t;
            *sp = drop(s, lv + 4 + used);
            return true;
        }
        /* "[03/24 10:45:33 lb.utils.events]: " (detectron2's logger, LiBai): no year, so no
         * time is kept */
        if (s.n > 18 && isdigit((unsigned char)s.p[1]) && s.p[3] == '/' && s.p[6] == ' ' &&
            s.p[9] == ':' && s.p[12] == ':' && s.p[15] == ' ') {
            long close = mfu__span_find(s, "]: ");
            if (close > 16 && mfu__span_find((mfu__span){s.p + 16, (size_t)close - 16}, " ") < 0) {
                *sp = drop(s, (size_t)close + 3);
                return true;
            }
        }
        /* "[08/30/23 07:07:34] " (rich) */
        if (us_datetime(drop(s, 1), &t, &used) && s.n > used + 2 && s.p[1 + used] == ']' &&
            s.p[2 + used] == ' ') {
            ln->prefix_time_s = t;
            *sp = drop(s, used + 3);
            return true;
        }
    }
    /* "DLL 2022-04-05 02:22:54.614486 - " (NVIDIA DLLogger) */
    if (mfu__span_starts(s, "DLL ") && mfu__datetime_scan(drop(s, 4), &t, &used) &&
        mfu__span_starts(drop(s, 4 + used), " - ")) {
        ln->prefix_time_s = t;
        *sp = drop(s, 4 + used + 3);
        return true;
    }
    /* "01/17/2024 13:47:27 " (nanotron), then its "[INFO|DP=0|PP=0|TP=0|host]: " */
    if (isdigit((unsigned char)s.p[0]) && us_datetime(s, &t, &used) &&
        (used == s.n || s.p[used] == ' ')) {
        ln->prefix_time_s = t;
        mfu__span r = mfu__span_trim(drop(s, used));
        *sp = drop(r, bar_level_tail(r));
        return true;
    }
    /* a level padded with two or more blanks: "INFO     name - ..." (rich), "INFO  Train:" */
    size_t lv = level_at(s);
    if (lv && s.n > lv + 2 && s.p[lv] == ' ' && s.p[lv + 1] == ' ') {
        *sp = mfu__span_trim(drop(s, lv));
        return true;
    }
    return false;
}

static void clean_rest(char *buf, size_t k, long lineno, mfu__line *ln);

void mfu__clean_line(const char *text, size_t len, long lineno, char *buf, mfu__line *ln)
{
    /* 1. ANSI escapes and control bytes */
    size_t k = 0;
    if (mfu__copy_no_ctrl(buf, text, len)) { /* nothing to remove (the usual case) */
        k = len;
        len = 0;
    }
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
    clean_rest(buf, k, lineno, ln);
}

void mfu__clean_line_inplace(char *text, size_t len, long lineno, mfu__line *ln)
{
    clean_rest(text, len, lineno, ln);
}

/* After the control bytes are gone from buf[0..k): trailing blanks, prefixes. */
static void clean_rest(char *buf, size_t k, long lineno, mfu__line *ln)
{
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
    for (int round = 0; round < 16 && strip_one(&s, ln); round++)
        ;
    if (s.n && s.p[s.n - 1] == '>') /* the usual line ends otherwise: one compare */
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
