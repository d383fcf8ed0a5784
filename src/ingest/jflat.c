/*
 * jflat.c - the fast JSON-lines object reader (ingest/jflat.h).
 *
 * One pass over the line, no allocation. The grammar is RFC 8259's, checked as strictly as
 * jansson checks it, because a line this reader accepts is never shown to jansson: a leading
 * zero ("01"), a bare "." or "1.", a trailing comma, text after the object, a control byte
 * all make it decline (and jansson then reports the error it always reported). It also
 * declines what it does not convert itself: escapes and non-ASCII bytes (jansson decodes and
 * validates UTF-8), long integers (jansson's int64 range check), reals that overflow (jansson's
 * "real number overflow"). Numbers go through the exact decimal fast path (fast.h), strtod
 * otherwise, as jansson does.
 */
#include "ingest/jflat.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/fast.h"

typedef struct jcur {
    const char *p, *end;
} jcur;

static bool is_digit(char c)
{
    return (unsigned)(c - '0') < 10;
}

/* The text ends with a NUL (the caller's contract), which stops every loop below without a
 * bounds check: no JSON token contains one. */
static void skip_ws(jcur *c)
{
    while (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r')
        c->p++;
}

/* A string at c->p (a quote): its bytes. Declines escapes, control and non-ASCII bytes. */
static bool read_string(jcur *c, const char **s, size_t *n)
{
    const char *p = c->p + 1, *start = p;
    for (;; p++) {
        unsigned char ch = (unsigned char)*p;
        if (ch == '"') {
            *s = start;
            *n = (size_t)(p - start);
            c->p = p + 1;
            return true;
        }
        if (ch == '\\' || ch < 0x20 || ch >= 0x80) /* the final NUL too: no closing quote */
            return false;
    }
}

/* A number at c->p (a '-' or a digit), as jansson's lexer reads it. */
static bool read_number(jcur *c, mfu__jmember *m)
{
    const char *p = c->p, *start = p;
    bool neg = false;
    if (*p == '-') {
        neg = true;
        p++;
    }
    if (!is_digit(*p))
        return false;
    /* mant gathers every significant digit (it may wrap past 19: sig says so, and then the
     * value comes from strtod); the loops test nothing else */
    uint64_t mant = 0;
    const char *s0 = p;
    if (*p == '0') {
        p++;
        if (is_digit(*p))
            return false; /* a leading zero */
        s0 = p;
    } else {
        for (; is_digit(*p); p++)
            mant = mant * 10 + (uint64_t)(*p - '0');
    }
    size_t sig = (size_t)(p - s0);
    if (*p != '.' && *p != 'e' && *p != 'E') {
        if (sig > 18)
            return false; /* may be outside int64: jansson decides */
        int64_t v = neg ? -(int64_t)mant : (int64_t)mant;
        m->type = MFU__J_INT;
        m->ival = v;
        m->num = (double)v;
        c->p = p;
        return true;
    }
    long frac = 0;
    if (*p == '.') {
        const char *f0 = ++p;
        if (!is_digit(*p))
            return false;
        if (mant == 0) /* 0.000123: the zeros after the point lead too */
            while (*p == '0')
                p++;
        const char *fs = p;
        for (; is_digit(*p); p++)
            mant = mant * 10 + (uint64_t)(*p - '0');
        sig += (size_t)(p - fs);
        frac = (long)(p - f0);
    }
    long e10 = 0;
    if (*p == 'e' || *p == 'E') {
        p++;
        bool eneg = false;
        if (*p == '+' || *p == '-')
            eneg = *p++ == '-';
        if (!is_digit(*p))
            return false;
        for (; is_digit(*p); p++)
            if (e10 < 100000)
                e10 = e10 * 10 + (*p - '0');
        if (eneg)
            e10 = -e10;
    }
    double v;
    long e = e10 - frac;
    if (sig > MFU__DEC_DIGITS || e < -400 || e > 400 ||
        !(mfu__dec_to_double(mant, (int)e, neg, &v) || /* inline: the usual case */
          mfu__dec_to_double_wide(mant, (int)e, neg, &v))) {
        char buf[64];
        size_t n = (size_t)(p - start);
        if (n >= sizeof buf)
            return false;
        memcpy(buf, start, n);
        buf[n] = '\0';
        v = strtod(buf, NULL);
        if (isinf(v))
            return false; /* jansson: real number overflow */
    }
    m->type = MFU__J_REAL;
    m->num = v;
    c->p = p;
    return true;
}

static bool read_word(jcur *c, const char *w, size_t n)
{
    if ((size_t)(c->end - c->p) < n || memcmp(c->p, w, n) != 0)
        return false;
    c->p += n;
    return true;
}

static bool read_value(jcur *c, mfu__jmember *m, int depth);

/* The rest of an object or array after its opening bracket, values checked, not kept. */
static bool skip_container(jcur *c, char close, int depth)
{
    if (depth > MFU__JFLAT_MAX_DEPTH)
        return false;
    mfu__jmember tmp;
    skip_ws(c);
    if (*c->p == close) {
        c->p++;
        return true;
    }
    for (;;) {
        if (close == '}') {
            const char *k;
            size_t kn;
            if (*c->p != '"' || !read_string(c, &k, &kn))
                return false;
            skip_ws(c);
            if (*c->p != ':')
                return false;
            c->p++;
            skip_ws(c);
        }
        if (!read_value(c, &tmp, depth))
            return false;
        skip_ws(c);
        if (*c->p == ',') {
            c->p++;
            skip_ws(c);
            continue;
        }
        if (*c->p == close) {
            c->p++;
            return true;
        }
        return false;
    }
}

static bool read_value(jcur *c, mfu__jmember *m, int depth)
{
    switch (*c->p) {
    case '"': m->type = MFU__J_STRING; return read_string(c, &m->str, &m->str_len);
    case 't': m->type = MFU__J_TRUE; return read_word(c, "true", 4);
    case 'f': m->type = MFU__J_FALSE; return read_word(c, "false", 5);
    case 'n': m->type = MFU__J_NULL; return read_word(c, "null", 4);
    case '{':
        m->type = MFU__J_OBJECT;
        c->p++;
        return skip_container(c, '}', depth + 1);
    case '[':
        m->type = MFU__J_ARRAY;
        c->p++;
        return skip_container(c, ']', depth + 1);
    default:
        if (*c->p == '-' || is_digit(*c->p))
            return read_number(c, m);
        return false; /* NaN, Infinity, anything else: jansson (and the lenient reader) */
    }
}

bool mfu__jflat_parse(const char *text, size_t len, mfu__jflat *out)
{
    jcur c = {text, text + len};
    out->n = 0;
    if (text[len] != '\0')
        return false; /* the contract: the loops stop at this NUL */
    skip_ws(&c);
    if (*c.p != '{')
        return false;
    c.p++;
    skip_ws(&c);
    if (*c.p == '}') {
        c.p++;
    } else {
        for (;;) {
            if (out->n == MFU__JFLAT_MAX_MEMBERS || *c.p != '"')
                return false;
            mfu__jmember *m = &out->m[out->n];
            if (!read_string(&c, &m->key, &m->key_len))
                return false;
            skip_ws(&c);
            if (*c.p != ':')
                return false;
            c.p++;
            skip_ws(&c);
            m->val = c.p;
            if (!read_value(&c, m, 1))
                return false;
            m->val_end = c.p;
            out->n++;
            skip_ws(&c);
            if (*c.p == ',') {
                c.p++;
                skip_ws(&c);
                continue;
            }
            if (*c.p == '}') {
                c.p++;
                break;
            }
            return false;
        }
    }
    skip_ws(&c);
    return c.p == c.end;
}

/* ---- shapes ---------------------------------------------------------------------------- */

bool mfu__jshape_learn(mfu__jshape *sh, const char *text, size_t len, const mfu__jflat *o)
{
    sh->n = 0;
    if (o->n == 0)
        return false;
    size_t k = 0;
    const char *from = text; /* the start of the next piece of text between values */
    for (size_t i = 0; i < o->n; i++) {
        const mfu__jmember *m = &o->m[i];
        size_t piece = (size_t)(m->val - from);
        if (k + piece > MFU__JSHAPE_TEXT)
            return false;
        sh->lit[i] = (uint16_t)k;
        sh->key_at[i] = (uint16_t)(m->key - from);
        sh->key_len[i] = (uint16_t)m->key_len;
        memcpy(sh->text + k, from, piece);
        k += piece;
        from = m->val_end;
    }
    size_t tail = (size_t)(text + len - from);
    if (k + tail > MFU__JSHAPE_TEXT)
        return false;
    sh->lit[o->n] = (uint16_t)k;
    memcpy(sh->text + k, from, tail);
    sh->lit_end = (uint16_t)(k + tail);
    sh->n = o->n;
    return true;
}

bool mfu__jflat_parse_shaped(const char *text, size_t len, const mfu__jshape *sh, mfu__jflat *out)
{
    if (sh->n == 0 || text[len] != '\0')
        return false;
    jcur c = {text, text + len};
    for (size_t i = 0; i < sh->n; i++) {
        size_t pn = (size_t)(sh->lit[i + 1] - sh->lit[i]);
        if ((size_t)(c.end - c.p) < pn || !mfu__same_bytes(c.p, sh->text + sh->lit[i], pn))
            return false;
        mfu__jmember *m = &out->m[i];
        m->key = c.p + sh->key_at[i];
        m->key_len = sh->key_len[i];
        c.p += pn;
        /* the piece ended where the learned line's value began, after every blank: a value
         * here starts where mfu__jflat_parse would look for it (a blank is no value) */
        m->val = c.p;
        if (!read_value(&c, m, 1))
            return false;
        m->val_end = c.p;
    }
    size_t tn = (size_t)(sh->lit_end - sh->lit[sh->n]);
    if ((size_t)(c.end - c.p) != tn || !mfu__same_bytes(c.p, sh->text + sh->lit[sh->n], tn))
        return false;
    out->n = sh->n;
    return true;
}

const mfu__jmember *mfu__jflat_get(const mfu__jflat *o, const char *key, size_t key_len)
{
    for (size_t i = o->n; i-- > 0;)
        if (o->m[i].key_len == key_len && memcmp(o->m[i].key, key, key_len) == 0)
            return &o->m[i];
    return NULL;
}
