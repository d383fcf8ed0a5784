/*
 * test_server_prom.c - Prometheus exposition (src/server/prom.c) and the event hub
 * (src/server/sse.c): escaping of HELP text and label values, number forms, invalid UTF-8 in
 * labels; the per-client queue limit that drops a slow client and leaves the others alone.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "server/internal.h"

static void family_and_help_escaping(void **state)
{
    (void)state;
    mfu__sb b;
    mfu__sb_init(&b, 0);
    mfu__prom_family(&b, "mfu_ratio", "gauge", "MFU, 0..1 \\ with a\nnewline \"quoted\".");
    assert_string_equal(b.p, "# HELP mfu_ratio MFU, 0..1 \\\\ with a\\nnewline \"quoted\".\n"
                             "# TYPE mfu_ratio gauge\n");
    mfu__sb_free(&b);
}

static void samples(void **state)
{
    (void)state;
    mfu__sb b;
    mfu__sb_init(&b, 0);
    mfu__label l[] = {{"run", "a\"b\\c\nd"}, {"rank", NULL}, {"hostname", "node-1"}};
    mfu__prom_sample(&b, "mfu_ratio", l, 3, 0.4125);
    mfu__prom_sample(&b, "mfu_devices", l + 1, 1, 8); /* every label left out */
    mfu__prom_sample(&b, "x", NULL, 0, NAN);
    mfu__prom_sample(&b, "x", NULL, 0, INFINITY);
    mfu__prom_sample(&b, "x", NULL, 0, -INFINITY);
    mfu__prom_sample(&b, "x", NULL, 0, 6.2931213652694e15);
    mfu__prom_sample(&b, "x", NULL, 0, 0.1 + 0.2); /* shortest form that reads back */
    assert_string_equal(b.p, "mfu_ratio{run=\"a\\\"b\\\\c\\nd\",hostname=\"node-1\"} 0.4125\n"
                             "mfu_devices 8\n"
                             "x NaN\n"
                             "x +Inf\n"
                             "x -Inf\n"
                             "x 6.2931213652694e+15\n"
                             "x 0.30000000000000004\n");
    mfu__sb_free(&b);
}

static void labels_are_valid_utf8(void **state)
{
    (void)state;
    mfu__sb b;
    mfu__sb_init(&b, 0);
    mfu__label l[] = {{"run", "caf\xc3\xa9 \xff\xc0\xaf <script>"}};
    mfu__prom_sample(&b, "m", l, 1, 1);
    /* é kept, the invalid bytes replaced one by one, HTML left as text (text/plain, nosniff) */
    assert_string_equal(b.p, "m{run=\"caf\xc3\xa9 \xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd "
                             "<script>\"} 1\n");
    mfu__sb_free(&b);
}

/* ---- the hub ---------------------------------------------------------------------------- */

static void hub_delivers_in_order(void **state)
{
    (void)state;
    mfu__hub h;
    assert_true(mfu__hub_init(&h, 2, 1024, 15));
    mfu__sse_client *a = mfu__hub_join(&h, ": hi\n\n");
    mfu__sse_client *b = mfu__hub_join(&h, NULL);
    assert_non_null(a);
    assert_non_null(b);
    assert_null(mfu__hub_join(&h, NULL)); /* max_clients = 2 */
    assert_int_equal(mfu__hub_clients(&h), 2);
    mfu__hub_broadcast(&h, "steps", "{\"step\":1}", 10);
    char buf[256];
    long n = mfu__hub_read(&h, a, buf, sizeof buf - 1);
    assert_true(n > 0);
    buf[n] = '\0';
    assert_string_equal(buf, ": hi\n\nevent: steps\ndata: {\"step\":1}\n\n");
    n = mfu__hub_read(&h, b, buf, 5); /* a small buffer: the rest comes next */
    assert_int_equal(n, 5);
    n = mfu__hub_read(&h, b, buf + 5, sizeof buf - 6);
    buf[5 + n] = '\0';
    assert_string_equal(buf, "event: steps\ndata: {\"step\":1}\n\n");
    mfu__hub_leave(&h, b);
    assert_int_equal(mfu__hub_clients(&h), 1);
    mfu__hub_stop(&h);
    assert_int_equal(mfu__hub_read(&h, a, buf, sizeof buf), -1); /* stopping ends streams */
    assert_null(mfu__hub_join(&h, NULL));
    mfu__hub_leave(&h, a);
    mfu__hub_destroy(&h);
}

/* A client that stops reading is dropped once its queue passes the limit; the other client
 * keeps getting every event, and broadcasting never blocks. */
static void slow_client_is_dropped(void **state)
{
    (void)state;
    mfu__hub h;
    size_t limit = 4096;
    assert_true(mfu__hub_init(&h, 4, limit, 15));
    mfu__sse_client *slow = mfu__hub_join(&h, NULL);
    mfu__sse_client *fast = mfu__hub_join(&h, NULL);
    char data[200];
    memset(data, 'x', sizeof data);
    char buf[8192];
    size_t events = 0;
    for (int i = 0; i < 100; i++) { /* 100 x 221 bytes: far past 4096 for the slow one */
        mfu__hub_broadcast(&h, "steps", data, sizeof data);
        size_t got = 0;
        while (got < 221) {
            long n = mfu__hub_read(&h, fast, buf + got, sizeof buf - got);
            assert_true(n > 0);
            got += (size_t)n;
        }
        assert_int_equal(got, 221);
        events++;
    }
    assert_int_equal(events, 100);
    assert_int_equal(h.dropped_total, 1);
    /* the slow client gets what was queued before the limit, then its stream ends */
    size_t queued = 0;
    long n;
    while ((n = mfu__hub_read(&h, slow, buf, sizeof buf)) > 0)
        queued += (size_t)n;
    assert_int_equal(n, -1);
    assert_true(queued <= limit);
    assert_int_equal(queued % 221, 0);
    mfu__hub_leave(&h, slow);
    mfu__hub_leave(&h, fast);
    mfu__hub_destroy(&h);
}

typedef struct reader_arg {
    mfu__hub *h;
    mfu__sse_client *c;
    char buf[256];
    long n;
} reader_arg;

static void *reader(void *p)
{
    reader_arg *r = p;
    r->n = mfu__hub_read(r->h, r->c, r->buf, sizeof r->buf - 1);
    return NULL;
}

/* A reader blocked on an empty queue wakes for a broadcast, and for a stop. */
static void blocked_reader_wakes(void **state)
{
    (void)state;
    mfu__hub h;
    assert_true(mfu__hub_init(&h, 4, 4096, 15));
    reader_arg r = {&h, mfu__hub_join(&h, NULL), {0}, 0};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, reader, &r), 0);
    struct timespec ts = {0, 50 * 1000 * 1000};
    nanosleep(&ts, NULL);
    mfu__hub_broadcast(&h, "run", "{}", 2);
    pthread_join(t, NULL);
    assert_true(r.n > 0);
    r.buf[r.n] = '\0';
    assert_string_equal(r.buf, "event: run\ndata: {}\n\n");
    assert_int_equal(pthread_create(&t, NULL, reader, &r), 0);
    nanosleep(&ts, NULL);
    mfu__hub_stop(&h);
    pthread_join(t, NULL);
    assert_int_equal(r.n, -1);
    mfu__hub_leave(&h, r.c);
    mfu__hub_destroy(&h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(family_and_help_escaping), cmocka_unit_test(samples),
        cmocka_unit_test(labels_are_valid_utf8),    cmocka_unit_test(hub_delivers_in_order),
        cmocka_unit_test(slow_client_is_dropped),   cmocka_unit_test(blocked_reader_wakes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
