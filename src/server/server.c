/*
 * server.c - the HTTP side of `mfu serve`: libmicrohttpd, one request's state, limits, the
 * security headers, and the server's lifecycle.
 *
 * Threads: libmicrohttpd runs a listening thread and one thread per connection
 * (MHD_USE_THREAD_PER_CONNECTION), so an event stream can block in its reader until the hub
 * has bytes, without busy-waiting and without holding anyone else up; connections are capped
 * at MFU_SERVER_MAX_CONNECTIONS, and at MFU_SERVER_MAX_CLIENT_CONNECTIONS from one address.
 * Followers have a thread each (follow.c), and a watch thread closes connections whose request
 * misses its deadline (below).
 *
 * Slow clients: libmicrohttpd's timeout counts idle time only, so a client that sends one
 * header byte every few seconds (slowloris) would hold its connection for ever. Each
 * connection therefore has a deadline: its request line and headers must be complete within
 * MFU_SERVER_HEADER_DEADLINE_S of the connection's start (or of the previous answer on a kept
 * connection), and a POST body within MFU_SERVER_BODY_DEADLINE_S of its headers; an answer
 * being sent (an event stream) has none. The watch thread shuts a late connection's socket
 * down (libmicrohttpd then closes it as a client that went away); connections are listed from
 * libmicrohttpd's "started" notification to its "closed" one, which comes before the socket is
 * closed, so the thread never touches a descriptor that was reused.
 *
 * Security (docs/internals/server.md): binds to loopback unless told otherwise and refuses to
 * bind elsewhere without a token; on loopback, a Host header that does not name a loopback
 * address is refused (DNS rebinding); paths are parsed strictly (route.c); a POST needs the
 * bearer token, compared in constant time, and its body is bounded; every answer carries
 * nosniff and a content security policy; request lines and headers are bounded by
 * libmicrohttpd's per-connection memory limit.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

#include <microhttpd.h>

#include "server/internal.h"

#if MHD_VERSION >= 0x00097002
#define MHD_RESULT enum MHD_Result
#else
#define MHD_RESULT int
#endif

void mfu__srv_log(mfu__server *s, const char *fmt, ...)
{
    if (!s->opts.log)
        return;
    char line[MFU_ERROR_MESSAGE_MAX + 128];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    for (char *p = line; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    s->opts.log(s->opts.log_ctx, line);
}

/* ---- listen address --------------------------------------------------------------------- */

typedef struct addr {
    struct sockaddr_storage ss;
    bool v6, loopback;
    char host[80]; /* for the URL */
} addr;

static mfu_status parse_listen(const char *spec, addr *a, mfu_error *err)
{
    memset(a, 0, sizeof *a);
    const char *colon;
    char host[64];
    if (spec[0] == '[') {
        const char *close = strchr(spec, ']');
        if (!close || close[1] != ':' || (size_t)(close - spec - 1) >= sizeof host)
            goto bad;
        memcpy(host, spec + 1, (size_t)(close - spec - 1));
        host[close - spec - 1] = '\0';
        colon = close + 1;
    } else {
        colon = strrchr(spec, ':');
        if (!colon || (size_t)(colon - spec) >= sizeof host || colon == spec)
            goto bad;
        memcpy(host, spec, (size_t)(colon - spec));
        host[colon - spec] = '\0';
    }
    int64_t port;
    if (!mfu__parse_int64(colon + 1, &port) || port < 0 || port > 65535)
        goto bad;
    if (mfu__strcasecmp(host, "localhost") == 0)
        mfu__strlcpy(host, "127.0.0.1", sizeof host);
    struct sockaddr_in *v4 = (struct sockaddr_in *)&a->ss;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&a->ss;
    if (spec[0] != '[' && inet_pton(AF_INET, host, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons((uint16_t)port);
        a->loopback = (ntohl(v4->sin_addr.s_addr) >> 24) == 127;
        snprintf(a->host, sizeof a->host, "%s", host);
        return MFU_OK;
    }
    if (spec[0] == '[' && inet_pton(AF_INET6, host, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons((uint16_t)port);
        a->v6 = true;
        static const unsigned char lo6[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
        const unsigned char *b = v6->sin6_addr.s6_addr;
        static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
        a->loopback = memcmp(b, lo6, 16) == 0 || (memcmp(b, mapped, 12) == 0 && b[12] == 127);
        snprintf(a->host, sizeof a->host, "[%s]", host);
        return MFU_OK;
    }
bad:
    return mfu__fail_field(err, MFU_E_INVALID, "--listen",
                           "--listen '%s': give ADDRESS:PORT with a numeric address, e.g. "
                           "127.0.0.1:8080, [::1]:8080 or localhost:8080 (port 0 picks one)",
                           spec);
}

static unsigned addr_port(const addr *a)
{
    return a->v6 ? ntohs(((const struct sockaddr_in6 *)&a->ss)->sin6_port)
                 : ntohs(((const struct sockaddr_in *)&a->ss)->sin_port);
}

/* ---- connection deadlines --------------------------------------------------------------- */

#define WATCH_TICK_MS 100 /* how often the watch thread looks at the deadlines */

/* One open connection. deadline_ms: monotonic ms by which its current request must be in,
 * 0 when it has none (an answer is being sent). Fields under connwatch.mu. */
typedef struct conn_rec {
    struct conn_rec *next, *prev;
    int fd;
    int64_t deadline_ms;
    bool in_body; /* the deadline is the body's */
    bool closed;  /* shut down by the watch thread */
} conn_rec;

struct mfu__connwatch {
    pthread_mutex_t mu;
    conn_rec *head;
    int header_ms, body_ms;
    unsigned long closes;
    pthread_t thread;
    bool thread_ok;
};

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static conn_rec *conn_of(struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci ? (conn_rec *)ci->socket_context : NULL;
}

/* Give connection c a new deadline: ms from now, or none (ms < 0). */
static void conn_deadline(mfu__server *s, struct MHD_Connection *c, int ms, bool body)
{
    conn_rec *r = conn_of(c);
    if (!r)
        return;
    pthread_mutex_lock(&s->watch->mu);
    r->deadline_ms = ms < 0 ? 0 : now_ms() + ms;
    r->in_body = body;
    pthread_mutex_unlock(&s->watch->mu);
}

static void notify_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                              enum MHD_ConnectionNotificationCode code)
{
    mfu__server *s = cls;
    struct mfu__connwatch *w = s->watch;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        conn_rec *r = calloc(1, sizeof *r);
        *socket_context = r;
        if (!r)
            return; /* this connection goes without a deadline: its idle timeout still holds */
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        r->fd = ci ? (int)ci->connect_fd : -1;
        pthread_mutex_lock(&w->mu);
        r->deadline_ms = now_ms() + w->header_ms;
        r->next = w->head;
        if (w->head)
            w->head->prev = r;
        w->head = r;
        pthread_mutex_unlock(&w->mu);
    } else if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
        conn_rec *r = *socket_context;
        if (!r)
            return;
        pthread_mutex_lock(&w->mu);
        if (r->prev)
            r->prev->next = r->next;
        else
            w->head = r->next;
        if (r->next)
            r->next->prev = r->prev;
        pthread_mutex_unlock(&w->mu);
        free(r);
        *socket_context = NULL;
    }
}

/* Shut down every connection past its deadline. */
static void watch_sweep(mfu__server *s)
{
    struct mfu__connwatch *w = s->watch;
    int64_t now = now_ms();
    unsigned late_headers = 0, late_bodies = 0;
    pthread_mutex_lock(&w->mu);
    for (conn_rec *r = w->head; r; r = r->next) {
        if (r->closed || !r->deadline_ms || now < r->deadline_ms || r->fd < 0)
            continue;
        shutdown(r->fd, SHUT_RDWR); /* the fd is open: r is unlisted before it is closed */
        r->closed = true;
        w->closes++;
        if (r->in_body)
            late_bodies++;
        else
            late_headers++;
    }
    pthread_mutex_unlock(&w->mu);
    if (late_headers)
        mfu__srv_log(s, "http: closed %u connection%s whose request headers took longer than %d ms",
                     late_headers, late_headers == 1 ? "" : "s", w->header_ms);
    if (late_bodies)
        mfu__srv_log(s, "http: closed %u connection%s whose request body took longer than %d ms",
                     late_bodies, late_bodies == 1 ? "" : "s", w->body_ms);
}

static void *watch_main(void *arg)
{
    mfu__server *s = arg;
    pthread_mutex_lock(&s->stop_mu);
    while (!s->stopping) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        ts.tv_nsec += WATCH_TICK_MS * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&s->stop_cv, &s->stop_mu, &ts);
        if (s->stopping)
            break;
        pthread_mutex_unlock(&s->stop_mu);
        watch_sweep(s);
        pthread_mutex_lock(&s->stop_mu);
    }
    pthread_mutex_unlock(&s->stop_mu);
    return NULL;
}

static struct mfu__connwatch *watch_new(const mfu__server_opts *o)
{
    struct mfu__connwatch *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    if (pthread_mutex_init(&w->mu, NULL) != 0) {
        free(w);
        return NULL;
    }
    w->header_ms =
        o->header_deadline_ms > 0 ? o->header_deadline_ms : MFU_SERVER_HEADER_DEADLINE_S * 1000;
    w->body_ms = o->body_deadline_ms > 0 ? o->body_deadline_ms : MFU_SERVER_BODY_DEADLINE_S * 1000;
    return w;
}

/* After MHD_stop_daemon (every connection closed and unlisted) and the watch thread's end. */
static void watch_free(struct mfu__connwatch *w)
{
    if (!w)
        return;
    while (w->head) { /* none are left after MHD_stop_daemon; free what would leak if any */
        conn_rec *r = w->head;
        w->head = r->next;
        free(r);
    }
    pthread_mutex_destroy(&w->mu);
    free(w);
}

/* ---- one request ------------------------------------------------------------------------ */

typedef struct req {
    mfu__route rt;
    bool post;
    mfu__sb body;
    bool too_big;
    size_t discarded;
} req;

typedef struct sse_ctx {
    mfu__server *s;
    mfu__sse_client *c;
} sse_ctx;

static size_t unescape_none(void *cls, struct MHD_Connection *c, char *s)
{
    (void)cls;
    (void)c;
    return strlen(s);
}

/* libmicrohttpd's messages: fmt is its own format string (checked as one). */
static void mhd_log(void *cls, const char *fmt, va_list ap) MFU__PRINTF(2, 0);

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    char line[512];
    vsnprintf(line, sizeof line, fmt, ap);
    mfu__srv_log((mfu__server *)cls, "http: %s", line);
}

static void completed(void *cls, struct MHD_Connection *c, void **req_cls,
                      enum MHD_RequestTerminationCode code)
{
    mfu__server *s = cls;
    (void)code;
    /* a kept connection's next request has the header deadline again */
    conn_deadline(s, c, s->watch->header_ms, false);
    req *q = *req_cls;
    if (q) {
        mfu__sb_free(&q->body);
        free(q);
        *req_cls = NULL;
    }
}

static const char *const CSP_API = "default-src 'none'; frame-ancestors 'none'";
/* The page's policy matches the one web/src/index.html states in a meta tag (both apply):
 * scripts only from the server, no inline script; inline style attributes allowed (charts set
 * sizes through them); no frames, forms or plugins. */
static const char *const CSP_PAGE =
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; "
    "form-action 'none'; frame-ancestors 'none'";

static void common_headers(struct MHD_Response *resp, bool page)
{
    MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(resp, "Referrer-Policy", "no-referrer");
    MHD_add_response_header(resp, "X-Frame-Options", "DENY");
    MHD_add_response_header(resp, "Content-Security-Policy", page ? CSP_PAGE : CSP_API);
}

static MHD_RESULT send_reply(struct MHD_Connection *c, mfu__reply *r)
{
    if (!r->body) {
        r->body = mfu__strdup("{\"error\":\"out of memory\"}");
        r->len = r->body ? strlen(r->body) : 0;
        r->status = 500;
        r->content_type = "application/json; charset=utf-8";
        if (!r->body)
            return MHD_NO;
    }
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(r->len, r->body, MHD_RESPMEM_MUST_FREE);
    if (!resp) {
        free(r->body);
        r->body = NULL;
        return MHD_NO;
    }
    r->body = NULL;
    MHD_add_response_header(resp, "Content-Type", r->content_type);
    MHD_add_response_header(resp, "Cache-Control", r->cache ? r->cache : "no-store");
    common_headers(resp, false);
    if (r->allow)
        MHD_add_response_header(resp, "Allow", r->allow);
    if (r->status == 401)
        MHD_add_response_header(resp, "WWW-Authenticate", "Bearer");
    MHD_RESULT ret = MHD_queue_response(c, r->status, resp);
    MHD_destroy_response(resp);
    return ret;
}

static MHD_RESULT send_error(struct MHD_Connection *c, unsigned status, const char *allow,
                             const char *fmt, ...) MFU__PRINTF(4, 5);

static MHD_RESULT send_error(struct MHD_Connection *c, unsigned status, const char *allow,
                             const char *fmt, ...)
{
    char msg[MFU_ERROR_MESSAGE_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    mfu__reply r;
    memset(&r, 0, sizeof r);
    mfu__api_error(&r, status, "%s", msg);
    r.allow = allow;
    return send_reply(c, &r);
}

static MHD_RESULT send_asset(struct MHD_Connection *c, const char *name, bool index)
{
    mfu__asset a;
    if (!mfu__asset_find(name, &a))
        return send_error(c, 404, NULL, "no asset named '%s'", name);
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(a.size, (void *)(uintptr_t)a.bytes, MHD_RESPMEM_PERSISTENT);
    if (!resp)
        return MHD_NO;
    MHD_add_response_header(resp, "Content-Type", a.content_type);
    MHD_add_response_header(resp, "Cache-Control",
                            index ? "no-cache" : "public, max-age=31536000, immutable");
    common_headers(resp, true);
    MHD_RESULT ret = MHD_queue_response(c, 200, resp);
    MHD_destroy_response(resp);
    return ret;
}

static ssize_t sse_reader(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    sse_ctx *x = cls;
    long n = mfu__hub_read(&x->s->hub, x->c, buf, max);
    return n < 0 ? MHD_CONTENT_READER_END_OF_STREAM : (ssize_t)n;
}

static void sse_free(void *cls)
{
    sse_ctx *x = cls;
    mfu__hub_leave(&x->s->hub, x->c);
    free(x);
}

static MHD_RESULT send_events(mfu__server *s, struct MHD_Connection *c)
{
    sse_ctx *x = calloc(1, sizeof *x);
    if (!x)
        return MHD_NO;
    x->s = s;
    x->c = mfu__hub_join(&s->hub, ": connected\nretry: 2000\n\n");
    if (!x->c) {
        free(x);
        return send_error(c, 503, NULL,
                          "too many event streams are open (the limit is %d); close a page",
                          MFU_SERVER_MAX_SSE_CLIENTS);
    }
    struct MHD_Response *resp =
        MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, sse_reader, x, sse_free);
    if (!resp) {
        sse_free(x);
        return MHD_NO;
    }
    MHD_add_response_header(resp, "Content-Type", "text/event-stream; charset=utf-8");
    MHD_add_response_header(resp, "Cache-Control", "no-store");
    MHD_add_response_header(resp, "X-Accel-Buffering", "no");
    common_headers(resp, false);
    MHD_RESULT ret = MHD_queue_response(c, 200, resp);
    MHD_destroy_response(resp);
    return ret;
}

static const char *arg_lookup(void *ctx, const char *key)
{
    return MHD_lookup_connection_value((struct MHD_Connection *)ctx, MHD_GET_ARGUMENT_KIND, key);
}

/* On loopback, the Host header must name a loopback address (a page on another site that
 * resolves its own name to 127.0.0.1 sends its own name: refused). */
static bool host_ok(const mfu__server *s, struct MHD_Connection *c)
{
    if (!s->loopback)
        return true;
    const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Host");
    if (!h)
        return true; /* HTTP/1.0 clients; browsers always send one */
    for (size_t i = 0; i < MFU__ARRAY_LEN(s->host_allow); i++) {
        const char *a = s->host_allow[i];
        size_t n = strlen(a);
        if (!a[0] || mfu__strncasecmp(h, a, n) != 0)
            continue;
        if (h[n] == '\0')
            return true;
        if (h[n] == ':') {
            int64_t port;
            if (mfu__parse_int64(h + n + 1, &port) && port == (int64_t)s->port)
                return true;
        }
    }
    return false;
}

static MHD_RESULT handler(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                          const char *version, const char *upload_data, size_t *upload_data_size,
                          void **req_cls)
{
    (void)version;
    mfu__server *s = cls;
    req *q = *req_cls;
    if (!q) {
        q = calloc(1, sizeof *q);
        if (!q)
            return MHD_NO;
        *req_cls = q;
        /* the headers are in: no deadline while answering, unless a body is to come */
        conn_deadline(s, c, -1, false);
        if (!host_ok(s, c))
            return send_error(c, 403, NULL,
                              "this server answers requests for a loopback address only (the "
                              "Host header names another)");
        if (mfu__route_parse(method, url, &q->rt) == MFU__R_NONE)
            return send_error(c, q->rt.status, q->rt.allow, "%s", q->rt.message);
        if (q->rt.kind == MFU__R_STEPS) {
            if (!s->token)
                return send_error(c, 403, NULL,
                                  "posting steps is off: start mfu serve with --token (or "
                                  "MFU_TOKEN)");
            const char *tok = NULL;
            size_t tlen = 0;
            const char *authz = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
            if (!mfu__bearer_token(authz, &tok, &tlen) || !mfu__token_equal(s->token, tok, tlen))
                return send_error(c, 401, NULL,
                                  "a valid token is required: send 'Authorization: Bearer "
                                  "TOKEN' with the token mfu serve was started with");
            const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
            int64_t clen = 0;
            if (cl && (!mfu__parse_int64(cl, &clen) || clen < 0))
                return send_error(c, 400, NULL, "malformed Content-Length");
            if (clen > MFU_SERVER_MAX_BODY_BYTES)
                return send_error(c, 413, NULL,
                                  "the body is %lld bytes; the limit is %ld: post fewer steps "
                                  "at a time",
                                  (long long)clen, (long)MFU_SERVER_MAX_BODY_BYTES);
            q->post = true;
            mfu__sb_init(&q->body, MFU_SERVER_MAX_BODY_BYTES);
            conn_deadline(s, c, s->watch->body_ms, true);
            return MHD_YES;
        }
        switch (q->rt.kind) {
        case MFU__R_INDEX: return send_asset(c, "index.html", true);
        case MFU__R_ASSET: return send_asset(c, q->rt.asset, false);
        case MFU__R_EVENTS: return send_events(s, c);
        default: {
            mfu__reply r;
            memset(&r, 0, sizeof r);
            mfu__api_get(s, &q->rt, arg_lookup, c, &r);
            return send_reply(c, &r);
        }
        }
    }
    if (!q->post)
        return MHD_NO; /* a GET with a body */
    if (*upload_data_size > 0) {
        if (!q->too_big && !mfu__sb_put(&q->body, upload_data, *upload_data_size))
            q->too_big = true;
        if (q->too_big) {
            q->discarded += *upload_data_size;
            if (q->discarded > 4 * (size_t)MFU_SERVER_MAX_BODY_BYTES)
                return MHD_NO; /* a body that never ends: drop the connection */
        }
        *upload_data_size = 0;
        return MHD_YES;
    }
    conn_deadline(s, c, -1, false); /* the body is in */
    if (q->too_big)
        return send_error(c, 413, NULL,
                          "the body is over the limit of %ld bytes: post fewer steps at a time",
                          (long)MFU_SERVER_MAX_BODY_BYTES);
    mfu__reply r;
    memset(&r, 0, sizeof r);
    mfu__api_post_steps(s, q->rt.run, q->body.p ? q->body.p : "", q->body.len, &r);
    return send_reply(c, &r);
}

/* ---- lifecycle -------------------------------------------------------------------------- */

static char *dup_or_null(const char *s)
{
    return s ? mfu__strdup(s) : NULL;
}

static mfu_status copy_opts(mfu__server *s, const mfu__server_opts *o, mfu_error *err)
{
    s->opts = *o;
    bool model_ok = mfu__server_model_copy(&o->model, &s->model, NULL) == MFU_OK;
    s->db_path = mfu__strdup(o->db_path);
    s->token = (o->token && o->token[0]) ? mfu__strdup(o->token) : NULL;
    s->run_name = dup_or_null(o->run_name);
    bool ok = model_ok && s->db_path && (!o->token || !o->token[0] || s->token) &&
              (!o->run_name || s->run_name);
    if (ok && o->nlogs) {
        s->logs = calloc(o->nlogs, sizeof *s->logs);
        ok = s->logs != NULL;
        for (size_t i = 0; ok && i < o->nlogs; i++)
            ok = (s->logs[i] = mfu__strdup(o->logs[i])) != NULL;
    }
    if (ok && o->ingest.nmap) {
        s->map = calloc(o->ingest.nmap, sizeof *s->map);
        ok = s->map != NULL;
        for (size_t i = 0; ok && i < o->ingest.nmap; i++)
            ok = (s->map[i] = mfu__strdup(o->ingest.map[i])) != NULL;
        s->opts.ingest.map = (const char *const *)s->map;
    }
    if (ok && o->ingest.format) {
        s->opts.ingest.format = s->fmt_copy = mfu__strdup(o->ingest.format);
        ok = s->fmt_copy != NULL;
    }
    char host[256] = "";
    if (o->hostname && o->hostname[0])
        mfu__strlcpy(host, o->hostname, sizeof host);
    else if (gethostname(host, sizeof host) != 0)
        host[0] = '\0';
    host[sizeof host - 1] = '\0';
    if (ok && host[0])
        ok = (s->hostname = mfu__strdup(host)) != NULL;
    s->opts.db_path = s->db_path;
    s->opts.token = s->token;
    s->opts.run_name = s->run_name;
    s->opts.logs = (const char *const *)s->logs;
    s->opts.hostname = s->hostname;
    s->opts.model = s->model;
    return ok ? MFU_OK : mfu__fail(err, MFU_E_NOMEM, 0, "out of memory starting the server");
}

static void free_copies(mfu__server *s)
{
    free(s->db_path);
    free(s->token);
    free(s->run_name);
    for (size_t i = 0; s->logs && i < s->opts.nlogs; i++)
        free(s->logs[i]);
    free(s->logs);
    for (size_t i = 0; s->map && i < s->opts.ingest.nmap; i++)
        free(s->map[i]);
    free(s->map);
    free(s->fmt_copy);
    mfu__server_model_free(&s->model);
    free(s->hostname);
}

static mfu_status check_token(const char *t, bool loopback, const char *listen, mfu_error *err)
{
    if (!t || !t[0]) {
        if (loopback)
            return MFU_OK;
        return mfu__fail_field(err, MFU_E_INVALID, "--token",
                               "listening on %s (beyond loopback) needs a token: give --token "
                               "(or MFU_TOKEN) of %d to %d characters",
                               listen, MFU_SERVER_TOKEN_MIN, MFU_SERVER_TOKEN_MAX);
    }
    size_t n = strlen(t);
    if (n < MFU_SERVER_TOKEN_MIN || n > MFU_SERVER_TOKEN_MAX)
        return mfu__fail_field(err, MFU_E_INVALID, "--token",
                               "--token must be %d to %d characters (got %zu); e.g. the output "
                               "of 'head -c 24 /dev/urandom | base64'",
                               MFU_SERVER_TOKEN_MIN, MFU_SERVER_TOKEN_MAX, n);
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)t[i] <= 0x20 || (unsigned char)t[i] >= 0x7f)
            return mfu__fail_field(err, MFU_E_INVALID, "--token",
                                   "--token must be printable ASCII without blanks");
    return MFU_OK;
}

mfu_status mfu__server_start(const mfu__server_opts *o, mfu__server **out, mfu_error *err)
{
    if (out)
        *out = NULL;
    if (!o || !out || !o->db_path)
        return mfu__fail(err, MFU_E_INVALID, 0, "mfu__server_start: NULL argument");
    const char *listen = o->listen ? o->listen : "127.0.0.1:8080";
    addr a;
    mfu_status st = parse_listen(listen, &a, err);
    if (st == MFU_OK)
        st = check_token(o->token, a.loopback, listen, err);
    if (st != MFU_OK)
        return st;
    if (o->nlogs > MFU_SERVER_MAX_LOGS)
        return mfu__fail_field(err, MFU_E_LIMIT, "LOG",
                               "at most %d logs per server; run one mfu serve per group of logs",
                               MFU_SERVER_MAX_LOGS);

    mfu__server *s = calloc(1, sizeof *s);
    if (!s)
        return mfu__fail(err, MFU_E_NOMEM, 0, "out of memory");
    if (pthread_mutex_init(&s->stop_mu, NULL) != 0) {
        free(s);
        return mfu__fail(err, MFU_E_NOMEM, 0, "cannot create a mutex");
    }
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    int crc = pthread_cond_init(&s->stop_cv, &ca);
    pthread_condattr_destroy(&ca);
    if (crc != 0) {
        pthread_mutex_destroy(&s->stop_mu);
        free(s);
        return mfu__fail(err, MFU_E_NOMEM, 0, "cannot create a condition variable");
    }
    st = copy_opts(s, o, err);
    s->points_limit = o->points_limit ? o->points_limit : MFU_SERVER_POINTS_LIMIT;
    s->poll_ms = o->follow_poll_ms > 0 ? o->follow_poll_ms : MFU_SERVER_FOLLOW_POLL_MS;
    s->loopback = a.loopback;

    mfu_store *store = NULL;
    if (st == MFU_OK)
        st = mfu_store_open(s->db_path, MFU_STORE_CREATE, &store, err);
    if (st == MFU_OK) {
        st = mfu__reg_init(&s->reg, store, &s->model, err);
        if (st == MFU_OK) {
            s->reg_ok = true;
            const mfu__server_model *m = &s->model;
            s->reg.context_fn = o->context_fn;
            s->reg.context_ctx = o->context_ctx;
            s->reg.flags_given = m->has_model || m->device || m->dtype_given ||
                                 (isfinite(m->peak_flops_per_s) && m->peak_flops_per_s > 0) ||
                                 (isfinite(m->devices) && m->devices > 0) || m->global_batch > 0 ||
                                 m->tokens_per_step > 0 || m->real_tokens_per_step > 0;
        } else
            mfu_store_close(store);
    }
    if (st == MFU_OK) {
        s->hub_ok = mfu__hub_init(&s->hub, MFU_SERVER_MAX_SSE_CLIENTS, MFU_SERVER_SSE_QUEUE_BYTES,
                                  o->sse_ping_s);
        if (!s->hub_ok)
            st = mfu__fail(err, MFU_E_NOMEM, 0, "cannot create the event hub");
    }
    if (st == MFU_OK)
        mfu__reg_refresh(&s->reg, true);
    if (st == MFU_OK && !(s->watch = watch_new(o)))
        st = mfu__fail(err, MFU_E_NOMEM, 0, "out of memory starting the server");
    if (st == MFU_OK) {
        unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION |
                         MHD_USE_POLL | MHD_USE_ERROR_LOG | MHD_USE_ITC;
        if (a.v6)
            flags |= MHD_USE_IPv6;
        s->mhd = MHD_start_daemon(
            flags, (uint16_t)addr_port(&a), NULL, NULL, handler, s, MHD_OPTION_EXTERNAL_LOGGER,
            mhd_log, s, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&a.ss, MHD_OPTION_CONNECTION_LIMIT,
            o->max_connections ? o->max_connections : (unsigned)MFU_SERVER_MAX_CONNECTIONS,
            MHD_OPTION_PER_IP_CONNECTION_LIMIT,
            o->max_client_connections ? o->max_client_connections
                                      : (unsigned)MFU_SERVER_MAX_CLIENT_CONNECTIONS,
            MHD_OPTION_NOTIFY_CONNECTION, notify_connection, s, MHD_OPTION_CONNECTION_TIMEOUT,
            (unsigned)MFU_SERVER_CONN_TIMEOUT_S, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
            (size_t)MFU_SERVER_CONN_MEMORY_BYTES, MHD_OPTION_NOTIFY_COMPLETED, completed, s,
            MHD_OPTION_UNESCAPE_CALLBACK, unescape_none, NULL, MHD_OPTION_STRICT_FOR_CLIENT, (int)1,
            MHD_OPTION_END);
        if (!s->mhd) {
            st = mfu__fail_field(err, MFU_E_IO, "--listen",
                                 "cannot listen on %s (%s); pick another --listen port", listen,
                                 errno ? strerror(errno) : "bind failed");
        }
    }
    if (st == MFU_OK) {
        const union MHD_DaemonInfo *di = MHD_get_daemon_info(s->mhd, MHD_DAEMON_INFO_BIND_PORT);
        s->port = di ? di->port : addr_port(&a);
        snprintf(s->url, sizeof s->url, "http://%s:%u/", a.host, s->port);
        mfu__strlcpy(s->host_allow[0], "127.0.0.1", sizeof s->host_allow[0]);
        mfu__strlcpy(s->host_allow[1], "localhost", sizeof s->host_allow[1]);
        mfu__strlcpy(s->host_allow[2], a.v6 ? "[::1]" : a.host, sizeof s->host_allow[2]);
        st = mfu__followers_start(s, err);
    }
    if (st == MFU_OK) {
        s->watch->thread_ok = pthread_create(&s->watch->thread, NULL, watch_main, s) == 0;
        if (!s->watch->thread_ok)
            st = mfu__fail(err, MFU_E_NOMEM, 0, "cannot start the connection watch thread");
    }
    if (st != MFU_OK) {
        mfu__server_stop(s);
        return st;
    }
    *out = s;
    return MFU_OK;
}

const char *mfu__server_url(const mfu__server *s)
{
    return s ? s->url : "";
}

unsigned mfu__server_port(const mfu__server *s)
{
    return s ? s->port : 0;
}

bool mfu__server_loopback(const mfu__server *s)
{
    return s && s->loopback;
}

unsigned long mfu__server_deadline_closes(const mfu__server *s)
{
    if (!s || !s->watch)
        return 0;
    pthread_mutex_lock(&s->watch->mu);
    unsigned long n = s->watch->closes;
    pthread_mutex_unlock(&s->watch->mu);
    return n;
}

void mfu__server_stop(mfu__server *s)
{
    if (!s)
        return;
    pthread_mutex_lock(&s->stop_mu);
    s->stopping = true;
    pthread_cond_broadcast(&s->stop_cv);
    pthread_mutex_unlock(&s->stop_mu);
    mfu__followers_stop(s);
    if (s->watch && s->watch->thread_ok)
        pthread_join(s->watch->thread, NULL);
    if (s->hub_ok)
        mfu__hub_stop(&s->hub);
    if (s->mhd)
        MHD_stop_daemon(s->mhd);
    watch_free(s->watch);
    if (s->reg_ok) {
        mfu_store *store = s->reg.store;
        mfu__reg_destroy(&s->reg);
        mfu_store_close(store);
    }
    if (s->hub_ok)
        mfu__hub_destroy(&s->hub);
    free_copies(s);
    pthread_cond_destroy(&s->stop_cv);
    pthread_mutex_destroy(&s->stop_mu);
    free(s);
}
