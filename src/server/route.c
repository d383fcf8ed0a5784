/*
 * route.c - which endpoint a request names, parsed strictly; and the token check.
 *
 * libmicrohttpd is told not to decode paths (server.c installs a no-op unescape callback), so
 * the path arrives as the client sent it and each '/'-separated segment is decoded here on its
 * own. A segment that decodes to "." or "..", holds '/', NUL or a control character, or has a
 * malformed escape is refused with 400 before any endpoint is matched: "/assets/../x",
 * "/assets/%2e%2e/x" and "/api/runs/a%2fb" never reach a handler. Nothing is ever read from
 * the file system: assets are looked up by exact name in the embedded table.
 */
#include <string.h>

#include "server/internal.h"

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

bool mfu__pct_decode(const char *in, size_t n, bool plus_space, char *out, size_t cap,
                     size_t *outlen)
{
    size_t o = 0;
    if (cap == 0)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = in[i];
        if (c == '%') {
            if (i + 2 >= n)
                return false;
            int hi = hexval(in[i + 1]), lo = hexval(in[i + 2]);
            if (hi < 0 || lo < 0)
                return false;
            c = (char)(hi * 16 + lo);
            if (c == '\0')
                return false;
            i += 2;
        } else if (c == '+' && plus_space) {
            c = ' ';
        } else if (c == '\0') {
            return false;
        }
        if (o + 1 >= cap)
            return false;
        out[o++] = c;
    }
    out[o] = '\0';
    if (outlen)
        *outlen = o;
    return true;
}

static mfu__route_kind refuse(mfu__route *r, unsigned status, const char *msg)
{
    r->kind = MFU__R_NONE;
    r->status = status;
    mfu__strlcpy(r->message, msg, sizeof r->message);
    return MFU__R_NONE;
}

#define MAX_SEGMENTS 6

mfu__route_kind mfu__route_parse(const char *method, const char *path, mfu__route *r)
{
    memset(r, 0, sizeof *r);
    if (!method || !path || path[0] != '/')
        return refuse(r, 400, "the request path must start with '/'");
    size_t plen = strlen(path);
    if (plen > MFU_SERVER_MAX_PATH_BYTES)
        return refuse(r, 414, "the request path is too long");

    /* Split and decode every segment first: refusals of traversal come before matching. */
    char seg[MAX_SEGMENTS][MFU__NAME_BYTES];
    size_t nseg = 0;
    const char *p = path + 1;
    bool root = (*p == '\0');
    while (!root) {
        const char *e = strchr(p, '/');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n == 0)
            return refuse(r, 404, "no such endpoint (empty path segment)");
        if (nseg == MAX_SEGMENTS)
            return refuse(r, 404, "no such endpoint");
        size_t dl = 0;
        char tmp[MFU_SERVER_MAX_PATH_BYTES + 1];
        if (!mfu__pct_decode(p, n, false, tmp, sizeof tmp, &dl))
            return refuse(r, 400, "malformed percent-encoding in the path");
        if (dl >= MFU__NAME_BYTES)
            return refuse(r, 400, "a path segment is longer than 127 bytes");
        if (strcmp(tmp, ".") == 0 || strcmp(tmp, "..") == 0)
            return refuse(r, 400, "'.' and '..' are not allowed in the path");
        for (size_t i = 0; i < dl; i++) {
            unsigned char c = (unsigned char)tmp[i];
            if (c == '/' || c == '\\')
                return refuse(r, 400, "an encoded '/' or '\\' is not allowed in a path segment");
            if (c < 0x20 || c == 0x7f)
                return refuse(r, 400, "control characters are not allowed in the path");
        }
        memcpy(seg[nseg++], tmp, dl + 1);
        if (!e)
            break;
        p = e + 1;
    }

    mfu__route_kind k = MFU__R_NONE;
    bool is_post_route = false;
    if (root || (nseg == 1 && strcmp(seg[0], "index.html") == 0)) {
        k = MFU__R_INDEX;
    } else if (nseg == 2 && strcmp(seg[0], "assets") == 0) {
        k = MFU__R_ASSET;
        mfu__strlcpy(r->asset, seg[1], sizeof r->asset);
    } else if (nseg == 1 && strcmp(seg[0], "metrics") == 0) {
        k = MFU__R_METRICS;
    } else if (nseg >= 2 && strcmp(seg[0], "api") == 0) {
        if (nseg == 2 && strcmp(seg[1], "runs") == 0)
            k = MFU__R_RUNS;
        else if (nseg == 2 && strcmp(seg[1], "compare") == 0)
            k = MFU__R_COMPARE;
        else if (nseg == 2 && strcmp(seg[1], "events") == 0)
            k = MFU__R_EVENTS;
        else if (strcmp(seg[1], "runs") == 0 && (nseg == 3 || nseg == 4)) {
            mfu__strlcpy(r->run, seg[2], sizeof r->run);
            if (nseg == 3)
                k = MFU__R_RUN;
            else if (strcmp(seg[3], "series") == 0)
                k = MFU__R_SERIES;
            else if (strcmp(seg[3], "segments") == 0)
                k = MFU__R_SEGMENTS;
            else if (strcmp(seg[3], "findings") == 0)
                k = MFU__R_FINDINGS;
            else if (strcmp(seg[3], "trace") == 0)
                k = MFU__R_TRACE;
            else if (strcmp(seg[3], "steps") == 0) {
                k = MFU__R_STEPS;
                is_post_route = true;
            }
        }
    }
    if (k == MFU__R_NONE)
        return refuse(r, 404, "no such endpoint (see docs/cli.md, mfu serve)");

    bool get = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
    bool post = strcmp(method, "POST") == 0;
    if (is_post_route ? !post : !get) {
        r->allow = is_post_route ? "POST" : "GET, HEAD";
        return refuse(
            r, 405, is_post_route ? "this endpoint takes POST" : "this endpoint takes GET or HEAD");
    }
    r->kind = k;
    return k;
}

bool mfu__token_equal(const char *expected, const char *presented, size_t n)
{
    if (!expected || (!presented && n))
        return false;
    size_t m = strlen(expected);
    /* Every byte of the expected token is compared against some byte of the presented one,
     * whatever the outcome so far: the loop's work depends on m alone. */
    unsigned acc = (m != n);
    for (size_t i = 0; i < m; i++) {
        unsigned char pc = n ? (unsigned char)presented[i % n] : 0;
        acc |= (unsigned)((unsigned char)expected[i] ^ pc);
    }
    return acc == 0;
}

bool mfu__bearer_token(const char *value, const char **tok, size_t *len)
{
    if (!value)
        return false;
    while (*value == ' ' || *value == '\t')
        value++;
    if (mfu__strncasecmp(value, "Bearer", 6) != 0 || (value[6] != ' ' && value[6] != '\t'))
        return false;
    const char *t = value + 6;
    while (*t == ' ' || *t == '\t')
        t++;
    size_t n = strlen(t);
    while (n > 0 && (t[n - 1] == ' ' || t[n - 1] == '\t'))
        n--;
    if (n == 0)
        return false;
    *tok = t;
    *len = n;
    return true;
}
