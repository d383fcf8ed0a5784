/*
 * test_server_slowloris.c - the server against slow and greedy clients (src/server/server.c):
 * a bounded slowloris on loopback (connections that trickle header bytes, each from 127.0.0.2
 * and a few other loopback addresses: 40 connections at most, 12 s at most) while a legitimate
 * client on 127.0.0.1 is served; the per-address connection limit, the deadline for a
 * request's headers and the one for its body, and an event stream that outlives them.
 * Every socket talks to 127.0.0.1 only.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "server/server.h"

#define TOKEN "slowloris-test-token-0123"

static char db_path[64];

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static mfu__server *start(unsigned max_conns, unsigned per_client, int header_ms, int body_ms)
{
    snprintf(db_path, sizeof db_path, "/tmp/mfu-slowloris-%ld.db", (long)getpid());
    unlink(db_path);
    mfu__server_opts o;
    memset(&o, 0, sizeof o);
    o.db_path = db_path;
    o.listen = "127.0.0.1:0";
    o.token = TOKEN;
    o.hostname = "test";
    o.max_connections = max_conns;
    o.max_client_connections = per_client;
    o.header_deadline_ms = header_ms;
    o.body_deadline_ms = body_ms;
    mfu__server *s = NULL;
    mfu_error e;
    memset(&e, 0, sizeof e);
    if (mfu__server_start(&o, &s, &e) != MFU_OK)
        fail_msg("server start: %s", e.message);
    return s;
}

static void stop(mfu__server *s)
{
    mfu__server_stop(s);
    char p[80];
    unlink(db_path);
    snprintf(p, sizeof p, "%s-wal", db_path);
    unlink(p);
    snprintf(p, sizeof p, "%s-shm", db_path);
    unlink(p);
}

/* A TCP connection from source address src (a loopback address) to 127.0.0.1:port; -1 when
 * refused. */
static int connect_from(const char *src, unsigned port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    assert_int_equal(inet_pton(AF_INET, src, &a.sin_addr), 1);
    if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0)
        fail_msg("bind %s: %s", src, strerror(errno));
    struct sockaddr_in d;
    memset(&d, 0, sizeof d);
    d.sin_family = AF_INET;
    d.sin_port = htons((uint16_t)port);
    d.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&d, sizeof d) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static bool send_all(int fd, const char *s)
{
    size_t n = strlen(s);
    while (n) {
        ssize_t k = send(fd, s, n, MSG_NOSIGNAL);
        if (k <= 0)
            return false;
        s += k;
        n -= (size_t)k;
    }
    return true;
}

/* Whether the server closed fd (end of stream or reset); never blocks. */
static bool closed_by_server(int fd)
{
    char c;
    ssize_t k = recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
    if (k == 0)
        return true;
    return k < 0 && errno != EAGAIN && errno != EWOULDBLOCK;
}

/* Read from fd until the answer's status line is in or timeout_ms pass: the status, or -1. */
static int read_status(int fd, int timeout_ms)
{
    char buf[256];
    size_t n = 0;
    int64_t end = now_ms() + timeout_ms;
    while (n + 1 < sizeof buf) {
        int left = (int)(end - now_ms());
        if (left <= 0)
            return -1;
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, left) <= 0)
            continue;
        ssize_t k = recv(fd, buf + n, sizeof buf - 1 - n, 0);
        if (k <= 0)
            return -1;
        n += (size_t)k;
        buf[n] = '\0';
        char *nl = strstr(buf, "\r\n");
        if (nl) {
            int status = -1;
            if (sscanf(buf, "HTTP/1.%*d %d", &status) != 1)
                return -1;
            return status;
        }
    }
    return -1;
}

/* A whole GET from 127.0.0.1: the status, or -1 (refused, or no answer within timeout_ms). */
static int legit_get(unsigned port, const char *path, int timeout_ms)
{
    int fd = connect_from("127.0.0.1", port);
    if (fd < 0)
        return -1;
    char req[256];
    snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
             path);
    int status = send_all(fd, req) ? read_status(fd, timeout_ms) : -1;
    close(fd);
    return status;
}

/* Open up to n slow connections from src: each sends a request line and one header, and no
 * end of the headers. fds[] gets them (-1 for a refused one); returns how many the server
 * left open after a moment. */
static int slow_open(const char *src, unsigned port, int *fds, int n)
{
    for (int i = 0; i < n; i++) {
        fds[i] = connect_from(src, port);
        if (fds[i] >= 0 &&
            !send_all(fds[i], "GET /api/runs HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: a")) {
            close(fds[i]);
            fds[i] = -1;
        }
    }
    sleep_ms(300); /* the server closes what is over the per-address limit at once */
    int open = 0;
    for (int i = 0; i < n; i++)
        if (fds[i] >= 0 && !closed_by_server(fds[i]))
            open++;
    return open;
}

/* One more header byte on every connection still open (what keeps an idle timeout away). */
static int slow_trickle(int *fds, int n)
{
    int open = 0;
    for (int i = 0; i < n; i++) {
        if (fds[i] < 0)
            continue;
        if (closed_by_server(fds[i]) || !send_all(fds[i], "b")) {
            close(fds[i]);
            fds[i] = -1;
        } else {
            open++;
        }
    }
    return open;
}

static void slow_close(int *fds, int n)
{
    for (int i = 0; i < n; i++)
        if (fds[i] >= 0)
            close(fds[i]);
}

/* 20 slow connections from one address: 4 get in (the per-address limit), the legitimate
 * client is served at once, and the 4 are closed at the header deadline. */
static void one_address_cannot_lock_others_out(void **state)
{
    (void)state;
    mfu__server *s = start(64, 4, 1500, 1500);
    unsigned port = mfu__server_port(s);
    int fds[20];
    int64_t t0 = now_ms();
    int open = slow_open("127.0.0.2", port, fds, 20);
    assert_true(open >= 1 && open <= 4);
    assert_int_equal(legit_get(port, "/api/runs", 2000), 200);
    /* trickle past the deadline: the server ends them, however often a byte comes */
    while (slow_trickle(fds, 20) > 0 && now_ms() - t0 < 6000)
        sleep_ms(200);
    assert_int_equal(slow_trickle(fds, 20), 0);
    int64_t took = now_ms() - t0;
    assert_true(took >= 1400); /* not before the deadline */
    assert_true(took < 4500);  /* and soon after it */
    assert_true(mfu__server_deadline_closes(s) >= (unsigned long)open);
    slow_close(fds, 20);
    assert_int_equal(legit_get(port, "/api/runs", 2000), 200);
    stop(s);
}

/* Slow connections from four addresses fill every connection slot: the legitimate client
 * waits at most for the header deadline, then is served. */
static void many_addresses_wait_at_most_the_deadline(void **state)
{
    (void)state;
    mfu__server *s = start(8, 4, 1000, 1000);
    unsigned port = mfu__server_port(s);
    const char *src[] = {"127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5"};
    int fds[4][4];
    int open = 0;
    for (int k = 0; k < 4; k++)
        open += slow_open(src[k], port, fds[k], 4);
    /* the slots fill (connections past the limit wait in the kernel's backlog, or are closed
     * at once: both look open or closed here depending on timing, so only a floor is sure) */
    if (open < 4)
        fail_msg("only %d slow connections were held", open);
    int64_t t0 = now_ms();
    int status = legit_get(port, "/api/runs", 4000);
    int64_t waited = now_ms() - t0;
    assert_int_equal(status, 200);
    assert_true(waited < 3500);
    for (int k = 0; k < 4; k++)
        slow_close(fds[k], 4);
    stop(s);
}

/* A POST whose body never completes is closed at the body deadline; an event stream, which
 * is an answer being sent, has no deadline. */
static void body_deadline_and_event_streams(void **state)
{
    (void)state;
    mfu__server *s = start(64, 8, 800, 800);
    unsigned port = mfu__server_port(s);
    int ev = connect_from("127.0.0.1", port);
    assert_true(ev >= 0);
    assert_true(send_all(ev, "GET /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"));
    assert_int_equal(read_status(ev, 2000), 200);
    int post = connect_from("127.0.0.1", port);
    assert_true(post >= 0);
    assert_true(send_all(post, "POST /api/runs/r/steps HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                               "Authorization: Bearer " TOKEN "\r\n"
                               "Content-Length: 1000\r\n\r\n{\"step\": 1,"));
    int64_t t0 = now_ms();
    bool closed = false;
    while (!closed && now_ms() - t0 < 4000) {
        sleep_ms(100);
        closed = closed_by_server(post) || !send_all(post, " ");
    }
    assert_true(closed);
    assert_true(now_ms() - t0 >= 700);
    sleep_ms(600); /* the stream is past both deadlines */
    assert_false(closed_by_server(ev));
    close(post);
    close(ev);
    stop(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(one_address_cannot_lock_others_out),
        cmocka_unit_test(many_addresses_wait_at_most_the_deadline),
        cmocka_unit_test(body_deadline_and_event_streams),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
