/*
 * fuzz_server.c - the server's request handling, in process: route parsing, the token check,
 * the GET endpoints and POST ingestion, over a running server (src/server) whose store holds
 * a run read from tests/data.
 *
 * An input is a request in a small text form (seeds in tests/fuzz/seeds/server):
 *   METHOD SP PATH[?QUERY] LF
 *   (NAME: VALUE LF)*        headers: Authorization is checked as the server checks it
 *   LF
 *   BODY                     the POST body
 * The path and query reach the handlers raw, as libmicrohttpd hands them over (the server
 * decodes nothing before route.c). Checks: never a crash; every answer has a status from 200 to
 * 599 and a body; the server is restarted (a new store) every RESET_EVERY inputs so that posted
 * runs do not pile up.
 */
#include "fuzz.h"

#include <string.h>
#include <unistd.h>

#include "mfu/mfu.h"
#include "server/internal.h"
#include "server/server.h"

#define RESET_EVERY 256
#define MAX_ARGS 16
#define TOKEN "fuzz-token-0123456789"

static mfu__server *srv;
static char db_path[600];
static unsigned inputs;

static void stop_server(void)
{
    mfu__server_stop(srv);
    srv = NULL;
    mfu_fuzz_remove_db(db_path);
}

static void start_server(void)
{
    const char *dir = mfu_fuzz_tmpdir();
    const char *data = getenv("MFU_TEST_DATA");
    if (!dir)
        return;
    snprintf(db_path, sizeof db_path, "%s/serve.db", dir);
    char log[600];
    snprintf(log, sizeof log, "%s/logs/nanogpt/nanogpt-issue110-gpt2-124m-8xa100-preMFU.log",
             data ? data : MFU_FUZZ_TEST_DATA);
    mfu_store *st = NULL;
    if (mfu_store_open(db_path, MFU_STORE_CREATE, &st, NULL) == MFU_OK) {
        mfu_store_ingest_opts o;
        memset(&o, 0, sizeof o);
        o.run_name = "good";
        mfu_store_ingest_path(st, log, &o, NULL, NULL);
        mfu_store_close(st);
    }
    mfu__server_opts so;
    memset(&so, 0, sizeof so);
    so.db_path = db_path;
    so.listen = "127.0.0.1:0";
    so.token = TOKEN;
    so.hostname = "fuzz";
    if (mfu__server_start(&so, &srv, NULL) != MFU_OK)
        srv = NULL;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    start_server();
    atexit(stop_server);
    return 0;
}

typedef struct args {
    size_t n;
    char *key[MAX_ARGS], *val[MAX_ARGS];
} args;

static const char *arg_lookup(void *ctx, const char *key)
{
    const args *a = ctx;
    for (size_t i = 0; i < a->n; i++)
        if (strcmp(a->key[i], key) == 0)
            return a->val[i];
    return NULL;
}

/* Split "a=1&b=2" in place. */
static void parse_query(char *q, args *a)
{
    a->n = 0;
    while (q && *q && a->n < MAX_ARGS) {
        char *amp = strchr(q, '&');
        if (amp)
            *amp = '\0';
        char *eq = strchr(q, '=');
        if (eq)
            *eq = '\0';
        a->key[a->n] = q;
        a->val[a->n] = eq ? eq + 1 : q + strlen(q);
        a->n++;
        q = amp ? amp + 1 : NULL;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > MFU_FUZZ_MAX_INPUT)
        return 0;
    if (++inputs % RESET_EVERY == 0) {
        stop_server();
        start_server();
    }
    if (!srv)
        return 0;
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    /* request line */
    char *nl = memchr(text, '\n', size);
    size_t head_end = nl ? (size_t)(nl - text) : size;
    text[head_end] = '\0';
    char *sp = strchr(text, ' ');
    if (!sp) {
        free(text);
        return 0;
    }
    *sp = '\0';
    const char *method = text;
    char *path = sp + 1;
    char *query = strchr(path, '?');
    if (query)
        *query++ = '\0';
    /* headers, then the body */
    const char *authz = NULL;
    size_t pos = nl ? head_end + 1 : size;
    while (pos < size) {
        char *e = memchr(text + pos, '\n', size - pos);
        size_t end = e ? (size_t)(e - text) : size;
        text[end] = '\0';
        if (end == pos) {
            pos = end + 1;
            break;
        }
        if (mfu__strncasecmp(text + pos, "Authorization: ", 15) == 0)
            authz = text + pos + 15;
        pos = end + 1;
    }
    const char *body = pos < size ? text + pos : "";
    size_t blen = pos < size ? size - pos : 0;

    mfu__route rt;
    mfu__reply r;
    memset(&r, 0, sizeof r);
    mfu__route_kind k = mfu__route_parse(method, path, &rt);
    if (k == MFU__R_NONE) {
        MFU_FUZZ_CHECK(rt.status >= 400 && rt.status < 500 && rt.message[0]);
    } else if (k == MFU__R_STEPS) {
        const char *tok = NULL;
        size_t tlen = 0;
        if (mfu__bearer_token(authz, &tok, &tlen) && mfu__token_equal(TOKEN, tok, tlen))
            mfu__api_post_steps(srv, rt.run, body, blen, &r);
    } else if (k != MFU__R_INDEX && k != MFU__R_ASSET && k != MFU__R_EVENTS) {
        args a;
        parse_query(query, &a);
        mfu__api_get(srv, &rt, arg_lookup, &a, &r);
    }
    if (r.body || r.status)
        MFU_FUZZ_CHECK(r.status >= 200 && r.status < 600 && r.body);
    free(r.body);
    free(text);
    return 0;
}
