/*
 * jtok.c - a push tokenizer of JSON (RFC 8259) for documents too large to hold.
 *
 * Bytes arrive in pieces of any size (a decoded block of the reader); a token may straddle
 * pieces. The grammar is checked as the bytes go by, with one byte of state per open
 * container, so a 1 GB document costs the string buffer (MFU_TRACE_MAX_STRING), not 1 GB.
 * Strings are unescaped (\uXXXX with surrogate pairs to UTF-8; a lone surrogate becomes
 * U+FFFD); a string longer than the buffer is cut and flagged, never an error. Numbers are
 * handed out as written (the consumer converts what it needs); NaN, Infinity and -Infinity
 * are accepted as numbers because Python's json module writes them and profilers' traces go
 * through it.
 *
 * Errors name the line and column (bytes) of the offending token and what the grammar
 * expected there; an input that stops inside a value says it is truncated.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "trace/internal.h"

enum expect {
    E_VALUE = 0,    /* a value (top level, after ':', after ',' in an array) */
    E_VALUE_OR_END, /* after '[' */
    E_KEY_OR_END,   /* after '{' */
    E_KEY,          /* after ',' in an object */
    E_COLON,        /* after a key */
    E_AFTER,        /* after a value in a container: ',' or the closing bracket */
    E_DONE          /* the top-level value is complete: only blanks may follow */
};

enum lex { L_NONE = 0, L_STR, L_WORD };

#define STR_CAP MFU_TRACE_MAX_STRING

bool mfu__jtok_init(mfu__jtok *j, mfu__jt_fn fn, void *ctx)
{
    memset(j, 0, sizeof *j);
    j->fn = fn;
    j->ctx = ctx;
    j->line = j->col = 1;
    j->buf = malloc(STR_CAP + 8);
    return j->buf != NULL;
}

void mfu__jtok_free(mfu__jtok *j)
{
    free(j->buf);
    j->buf = NULL;
}

size_t mfu__jtok_bytes(const mfu__jtok *j)
{
    return sizeof *j + STR_CAP + 8;
}

static const char *expect_words(int e)
{
    switch (e) {
    case E_VALUE: return "a value (string, number, object, array, true, false or null)";
    case E_VALUE_OR_END: return "a value or ']'";
    case E_KEY_OR_END: return "a string key or '}'";
    case E_KEY: return "a string key";
    case E_COLON: return "':' after the key";
    case E_AFTER: return "',' or the closing bracket";
    default: return "the end of the document";
    }
}

/* A syntax error at the current byte: "invalid JSON: <what>". */
static mfu_status syntax(mfu__jtok *j, mfu_error *err, const char *what)
{
    mfu_status st = mfu__fail(err, MFU_E_PARSE, j->line, "invalid JSON: %s", what);
    if (err)
        err->column = j->col;
    return st;
}

static mfu_status unexpected(mfu__jtok *j, unsigned char c, mfu_error *err)
{
    char shown[16];
    if (c >= 0x20 && c < 0x7f)
        snprintf(shown, sizeof shown, "'%c'", c);
    else
        snprintf(shown, sizeof shown, "byte 0x%02x", c);
    mfu_status st = mfu__fail(err, MFU_E_PARSE, j->line, "invalid JSON: expected %s, got %s",
                              expect_words(j->expect), shown);
    if (err)
        err->column = j->col;
    return st;
}

static mfu_status emit(mfu__jtok *j, mfu__jt_kind kind, const char *text, size_t len, int depth,
                       mfu_error *err)
{
    mfu__jt t = {kind, text, len, depth, j->cut, j->tline, j->tcol};
    return j->fn(j->ctx, &t, err);
}

static void value_done(mfu__jtok *j)
{
    if (j->depth == 0) {
        j->expect = E_DONE;
        j->done = true;
    } else {
        j->expect = E_AFTER;
    }
}

/* Append to the string buffer, cutting past STR_CAP. */
static void sput(mfu__jtok *j, const char *s, size_t n)
{
    if (j->len + n > STR_CAP) {
        n = STR_CAP - j->len;
        j->cut = true;
    }
    memcpy(j->buf + j->len, s, n);
    j->len += n;
}

static void sput_cp(mfu__jtok *j, uint32_t cp)
{
    char u[4];
    size_t n;
    if (cp < 0x80) {
        u[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        u[0] = (char)(0xc0 | (cp >> 6));
        u[1] = (char)(0x80 | (cp & 0x3f));
        n = 2;
    } else if (cp < 0x10000) {
        u[0] = (char)(0xe0 | (cp >> 12));
        u[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        u[2] = (char)(0x80 | (cp & 0x3f));
        n = 3;
    } else {
        u[0] = (char)(0xf0 | (cp >> 18));
        u[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
        u[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
        u[3] = (char)(0x80 | (cp & 0x3f));
        n = 4;
    }
    sput(j, u, n);
}

static void flush_hi(mfu__jtok *j)
{
    if (j->hi) {
        sput_cp(j, 0xfffd);
        j->hi = 0;
    }
}

static void put_unit(mfu__jtok *j, uint32_t u)
{
    if (u >= 0xd800 && u <= 0xdbff) {
        flush_hi(j);
        j->hi = u;
    } else if (u >= 0xdc00 && u <= 0xdfff) {
        if (j->hi) {
            sput_cp(j, 0x10000 + ((j->hi - 0xd800) << 10) + (u - 0xdc00));
            j->hi = 0;
        } else {
            sput_cp(j, 0xfffd);
        }
    } else {
        flush_hi(j);
        sput_cp(j, u);
    }
}

static int hexv(unsigned char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Bytes of a string from p[i..n): returns the index after what was consumed; *st set on an
 * error or a stopping consumer. */
static size_t str_run(mfu__jtok *j, const unsigned char *p, size_t i, size_t n, mfu_status *st,
                      mfu_error *err)
{
    while (i < n) {
        if (j->esc == 0) {
            size_t k = i;
            while (k < n && p[k] != '"' && p[k] != '\\' && p[k] >= 0x20)
                k++;
            if (k > i) {
                flush_hi(j);
                sput(j, (const char *)p + i, k - i);
                j->col += (long)(k - i);
                i = k;
                if (i == n)
                    break;
            }
            unsigned char c = p[i];
            if (c == '"') {
                flush_hi(j);
                j->buf[j->len] = '\0';
                j->lex = L_NONE;
                j->col++;
                i++;
                if (j->key) {
                    j->expect = E_COLON;
                    *st = emit(j, MFU__JT_KEY, j->buf, j->len, j->depth, err);
                } else {
                    value_done(j);
                    *st = emit(j, MFU__JT_STR, j->buf, j->len, j->depth, err);
                }
                return i;
            }
            if (c == '\\') {
                j->esc = 1;
                j->col++;
                i++;
                continue;
            }
            *st = syntax(j, err,
                         c == '\n' ? "a raw newline inside a string (write it as the escape \\n)"
                                   : "a raw control character inside a string (write it as an "
                                     "escape such as \\t)");
            return i;
        }
        unsigned char c = p[i];
        if (j->esc == 1) {
            const char *rep = NULL;
            switch (c) {
            case '"': rep = "\""; break;
            case '\\': rep = "\\"; break;
            case '/': rep = "/"; break;
            case 'b': rep = "\b"; break;
            case 'f': rep = "\f"; break;
            case 'n': rep = "\n"; break;
            case 'r': rep = "\r"; break;
            case 't': rep = "\t"; break;
            case 'u':
                j->esc = 2;
                j->u = 0;
                break;
            default:
                *st = syntax(j, err,
                             "an unknown escape in a string (expected one of \\\" "
                             "\\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)");
                return i;
            }
            if (rep) {
                flush_hi(j);
                sput(j, rep, 1);
                j->esc = 0;
            }
            j->col++;
            i++;
            continue;
        }
        /* esc 2..5: the hex digits of \uXXXX */
        int h = hexv(c);
        if (h < 0) {
            *st = syntax(j, err, "a \\u escape needs four hex digits (\\u00e9)");
            return i;
        }
        j->u = j->u * 16 + (uint32_t)h;
        j->col++;
        i++;
        if (++j->esc == 6) {
            put_unit(j, j->u);
            j->esc = 0;
        }
    }
    return i;
}

static bool word_char(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '+' ||
           c == '-' || c == '.';
}

/* JSON's number grammar: -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)? */
static bool is_number(const char *s)
{
    if (*s == '-')
        s++;
    if (*s == '0')
        s++;
    else if (*s >= '1' && *s <= '9')
        while (*s >= '0' && *s <= '9')
            s++;
    else
        return false;
    if (*s == '.') {
        s++;
        if (!(*s >= '0' && *s <= '9'))
            return false;
        while (*s >= '0' && *s <= '9')
            s++;
    }
    if (*s == 'e' || *s == 'E') {
        s++;
        if (*s == '+' || *s == '-')
            s++;
        if (!(*s >= '0' && *s <= '9'))
            return false;
        while (*s >= '0' && *s <= '9')
            s++;
    }
    return *s == '\0';
}

static mfu_status finish_word(mfu__jtok *j, mfu_error *err)
{
    j->lex = L_NONE;
    j->buf[j->len] = '\0';
    const char *w = j->buf;
    mfu__jt_kind k;
    if (strcmp(w, "true") == 0)
        k = MFU__JT_TRUE;
    else if (strcmp(w, "false") == 0)
        k = MFU__JT_FALSE;
    else if (strcmp(w, "null") == 0)
        k = MFU__JT_NULL;
    else if (is_number(w) || strcmp(w, "NaN") == 0 || strcmp(w, "Infinity") == 0 ||
             strcmp(w, "-Infinity") == 0)
        k = MFU__JT_NUM;
    else {
        mfu_status st = mfu__fail(err, MFU_E_PARSE, j->tline,
                                  "invalid JSON: expected a value (string, number, object, "
                                  "array, true, false or null), got '%.40s'",
                                  w);
        if (err)
            err->column = j->tcol;
        return st;
    }
    value_done(j);
    return emit(j, k, j->buf, j->len, j->depth, err);
}

static bool wants_value(int e)
{
    return e == E_VALUE || e == E_VALUE_OR_END;
}

mfu_status mfu__jtok_feed(mfu__jtok *j, const char *text, size_t n, mfu_error *err)
{
    const unsigned char *p = (const unsigned char *)text;
    size_t i = 0;
    mfu_status st = MFU_OK;
    while (i < n) {
        if (j->lex == L_STR) {
            i = str_run(j, p, i, n, &st, err);
            if (st != MFU_OK)
                return st;
            continue;
        }
        unsigned char c = p[i];
        if (j->lex == L_WORD) {
            if (word_char(c)) {
                if (j->len >= MFU__JT_MAX_WORD) {
                    mfu_status s = mfu__fail(err, MFU_E_PARSE, j->tline,
                                             "invalid JSON: a number or word longer than %d "
                                             "characters",
                                             MFU__JT_MAX_WORD);
                    if (err)
                        err->column = j->tcol;
                    return s;
                }
                j->buf[j->len++] = (char)c;
                j->col++;
                i++;
                continue;
            }
            st = finish_word(j, err);
            if (st != MFU_OK)
                return st;
            continue; /* c is looked at again below */
        }
        /* blanks between tokens: skip a run of them at once */
        if (c == ' ' || c == '\t' || c == '\r') {
            j->col++;
            i++;
            continue;
        }
        if (c == '\n') {
            j->line++;
            j->col = 1;
            i++;
            continue;
        }
        j->tline = j->line;
        j->tcol = j->col;
        j->cut = false;
        switch (c) {
        case '{':
        case '[':
            if (!wants_value(j->expect))
                return unexpected(j, c, err);
            if (j->depth >= MFU_TRACE_MAX_DEPTH)
                return syntax(j, err,
                              "nested deeper than 64 arrays and objects "
                              "(MFU_TRACE_MAX_DEPTH): not a profiler trace");
            j->started = true;
            st = emit(j, c == '{' ? MFU__JT_OBJ : MFU__JT_ARR, c == '{' ? "{" : "[", 1, j->depth,
                      err);
            j->stack[j->depth++] = c == '{' ? 'o' : 'a';
            j->expect = c == '{' ? E_KEY_OR_END : E_VALUE_OR_END;
            break;
        case '}':
        case ']': {
            char want = c == '}' ? 'o' : 'a';
            bool ok =
                j->depth > 0 && j->stack[j->depth - 1] == (unsigned char)want &&
                (j->expect == E_AFTER || j->expect == (c == '}' ? E_KEY_OR_END : E_VALUE_OR_END));
            if (!ok)
                return unexpected(j, c, err);
            j->depth--;
            value_done(j);
            st = emit(j, c == '}' ? MFU__JT_END_OBJ : MFU__JT_END_ARR, c == '}' ? "}" : "]", 1,
                      j->depth, err);
            break;
        }
        case ':':
            if (j->expect != E_COLON)
                return unexpected(j, c, err);
            j->expect = E_VALUE;
            break;
        case ',':
            if (j->expect != E_AFTER)
                return unexpected(j, c, err);
            j->expect = j->stack[j->depth - 1] == 'o' ? E_KEY : E_VALUE;
            break;
        case '"':
            if (j->expect == E_KEY_OR_END || j->expect == E_KEY)
                j->key = true;
            else if (wants_value(j->expect))
                j->key = false;
            else
                return unexpected(j, c, err);
            j->started = true;
            j->lex = L_STR;
            j->len = 0;
            j->esc = 0;
            j->hi = 0;
            break;
        default:
            if (!word_char(c) || !wants_value(j->expect))
                return unexpected(j, c, err);
            j->started = true;
            j->lex = L_WORD;
            j->len = 0;
            j->buf[j->len++] = (char)c;
            break;
        }
        j->col++;
        i++;
        if (st != MFU_OK)
            return st;
    }
    j->offset += n;
    return MFU_OK;
}

mfu_status mfu__jtok_end(mfu__jtok *j, mfu_error *err)
{
    if (j->lex == L_WORD) {
        mfu_status st = finish_word(j, err);
        if (st != MFU_OK)
            return st;
    }
    if (!j->started)
        return mfu__fail(err, MFU_E_PARSE, 0,
                         "empty: no JSON at all; expected a PyTorch profiler trace (a JSON "
                         "object with \"traceEvents\")");
    if (j->done && j->lex == L_NONE)
        return MFU_OK;
    mfu_status st =
        mfu__fail(err, MFU_E_PARSE, j->line,
                  "the JSON ends early (inside %s%d open array%s and object%s): the "
                  "trace is truncated; expected %s; copy the whole file again (a "
                  "profiler killed while writing leaves half a file)",
                  j->lex == L_STR ? "a string, " : "", j->depth, j->depth == 1 ? "" : "s",
                  j->depth == 1 ? "" : "s",
                  j->lex == L_STR ? "the string's closing '\"'" : expect_words(j->expect));
    if (err)
        err->column = j->col;
    return st;
}

/* ---- number helpers ------------------------------------------------------------------------ */

bool mfu__jt_us_to_ns(const char *s, int64_t *out)
{
    const char *q = s;
    bool neg = *q == '-';
    if (neg)
        q++;
    if (*q >= '0' && *q <= '9') {
        /* the common form: digits, an optional fraction, no exponent */
        int64_t whole = 0;
        int digits = 0;
        while (*q >= '0' && *q <= '9') {
            if (++digits > 16)
                goto slow;
            whole = whole * 10 + (*q++ - '0');
        }
        int64_t frac = 0;
        int fd = 0;
        bool round_up = false;
        if (*q == '.') {
            q++;
            while (*q >= '0' && *q <= '9') {
                if (fd < 3) {
                    frac = frac * 10 + (*q - '0');
                    fd++;
                } else if (fd == 3) {
                    round_up = *q >= '5';
                    fd++;
                }
                q++;
            }
        }
        if (*q == '\0') {
            while (fd < 3) {
                frac *= 10;
                fd++;
            }
            if (whole > MFU__JT_MAX_US)
                return false;
            int64_t v = whole * 1000 + frac + (round_up ? 1 : 0);
            *out = neg ? -v : v;
            return true;
        }
    }
slow:;
    double d;
    if (!mfu__parse_double(s, &d) || !(fabs(d) <= (double)MFU__JT_MAX_US))
        return false;
    *out = (int64_t)llround(d * 1000.0);
    return true;
}

bool mfu__jt_int(const char *s, int64_t *out)
{
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && s[2]) {
        uint64_t v = 0;
        for (const char *q = s + 2; *q; q++) {
            int h = hexv((unsigned char)*q);
            if (h < 0 || v > (UINT64_MAX >> 4))
                return false;
            v = v * 16 + (uint64_t)h;
        }
        if (v > (uint64_t)INT64_MAX)
            return false;
        *out = (int64_t)v;
        return true;
    }
    if (mfu__parse_int64(s, out))
        return true;
    double d; /* 5.0, 1e3: integral numbers written as floats */
    if (mfu__parse_double(s, &d) && d == floor(d) && fabs(d) < 9.2e18) {
        *out = (int64_t)d;
        return true;
    }
    return false;
}
