/*
 * sse.c - the event hub behind GET /api/events (server-sent events).
 *
 * Each open stream is a client with its own queue of bytes not yet sent. A broadcast appends the
 * event to every queue under one mutex and wakes the readers; it never waits for a socket. A
 * client whose queue would grow past queue_limit (a page that stopped reading, a slow link) is
 * dropped: its stream ends, the browser's EventSource reconnects and reloads, and nobody else
 * waits for it. Readers run on libmicrohttpd's connection threads (thread-per-connection mode)
 * and block on the condition variable until bytes arrive, a ping is due or the hub stops, so
 * no thread spins.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "server/internal.h"

struct mfu__sse_client {
    mfu__sse_client *next;
    char *q;
    size_t len, off, cap; /* bytes q[off..len) are queued */
    bool dropped;
    double next_ping; /* monotonic seconds */
};

bool mfu__hub_init(mfu__hub *h, size_t max_clients, size_t queue_limit, int ping_s)
{
    memset(h, 0, sizeof *h);
    h->max_clients = max_clients;
    h->queue_limit = queue_limit;
    h->ping_s = ping_s > 0 ? ping_s : MFU_SERVER_SSE_PING_S;
    if (pthread_mutex_init(&h->mu, NULL) != 0)
        return false;
    pthread_condattr_t ca;
    bool ok = pthread_condattr_init(&ca) == 0;
    ok = ok && pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) == 0;
    ok = ok && pthread_cond_init(&h->cv, &ca) == 0;
    pthread_condattr_destroy(&ca);
    if (!ok) {
        pthread_mutex_destroy(&h->mu);
        return false;
    }
    return true;
}

void mfu__hub_destroy(mfu__hub *h)
{
    mfu__sse_client *c = h->clients;
    while (c) {
        mfu__sse_client *n = c->next;
        free(c->q);
        free(c);
        c = n;
    }
    pthread_cond_destroy(&h->cv);
    pthread_mutex_destroy(&h->mu);
}

/* Append n bytes to c's queue, compacting first; false (and c dropped) past the limit. */
static bool enqueue(mfu__hub *h, mfu__sse_client *c, const char *const *parts, const size_t *lens,
                    size_t nparts)
{
    size_t n = 0;
    for (size_t i = 0; i < nparts; i++)
        n += lens[i];
    if (c->off > 0 && c->off == c->len) {
        c->off = c->len = 0;
    } else if (c->off > c->cap / 2) {
        memmove(c->q, c->q + c->off, c->len - c->off);
        c->len -= c->off;
        c->off = 0;
    }
    if ((c->len - c->off) + n > h->queue_limit) {
        c->dropped = true;
        return false;
    }
    if (c->len + n > c->cap) {
        size_t cap = c->cap ? c->cap : 4096;
        while (cap < c->len + n)
            cap *= 2;
        char *q = realloc(c->q, cap);
        if (!q) {
            c->dropped = true;
            return false;
        }
        c->q = q;
        c->cap = cap;
    }
    for (size_t i = 0; i < nparts; i++) {
        memcpy(c->q + c->len, parts[i], lens[i]);
        c->len += lens[i];
    }
    return true;
}

mfu__sse_client *mfu__hub_join(mfu__hub *h, const char *greeting)
{
    mfu__sse_client *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    pthread_mutex_lock(&h->mu);
    if (h->stopping || h->nclients >= h->max_clients) {
        pthread_mutex_unlock(&h->mu);
        free(c);
        return NULL;
    }
    c->next_ping = mfu__now() + h->ping_s;
    if (greeting) {
        const char *parts[] = {greeting};
        size_t lens[] = {strlen(greeting)};
        enqueue(h, c, parts, lens, 1);
    }
    c->next = h->clients;
    h->clients = c;
    h->nclients++;
    pthread_mutex_unlock(&h->mu);
    return c;
}

void mfu__hub_leave(mfu__hub *h, mfu__sse_client *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&h->mu);
    for (mfu__sse_client **pp = &h->clients; *pp; pp = &(*pp)->next) {
        if (*pp == c) {
            *pp = c->next;
            h->nclients--;
            break;
        }
    }
    pthread_mutex_unlock(&h->mu);
    free(c->q);
    free(c);
}

void mfu__hub_broadcast(mfu__hub *h, const char *event, const char *data, size_t n)
{
    const char *parts[] = {"event: ", event, "\ndata: ", data, "\n\n"};
    size_t lens[] = {7, strlen(event), 7, n, 2};
    pthread_mutex_lock(&h->mu);
    for (mfu__sse_client *c = h->clients; c; c = c->next) {
        if (c->dropped)
            continue;
        if (!enqueue(h, c, parts, lens, MFU__ARRAY_LEN(parts)))
            h->dropped_total++;
    }
    pthread_cond_broadcast(&h->cv);
    pthread_mutex_unlock(&h->mu);
}

void mfu__hub_stop(mfu__hub *h)
{
    pthread_mutex_lock(&h->mu);
    h->stopping = true;
    pthread_cond_broadcast(&h->cv);
    pthread_mutex_unlock(&h->mu);
}

size_t mfu__hub_clients(mfu__hub *h)
{
    pthread_mutex_lock(&h->mu);
    size_t n = h->nclients;
    pthread_mutex_unlock(&h->mu);
    return n;
}

long mfu__hub_read(mfu__hub *h, mfu__sse_client *c, char *buf, size_t max)
{
    static const char ping[] = ": ping\n\n";
    long got = -1;
    pthread_mutex_lock(&h->mu);
    for (;;) {
        if (h->stopping || c->dropped)
            break;
        if (c->len > c->off) {
            size_t n = c->len - c->off;
            if (n > max)
                n = max;
            memcpy(buf, c->q + c->off, n);
            c->off += n;
            got = (long)n;
            c->next_ping = mfu__now() + h->ping_s;
            break;
        }
        double now = mfu__now();
        if (now >= c->next_ping) {
            size_t n = sizeof ping - 1 < max ? sizeof ping - 1 : max;
            memcpy(buf, ping, n);
            got = (long)n;
            c->next_ping = now + h->ping_s;
            break;
        }
        double wait = c->next_ping - now;
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        time_t sec = (time_t)wait;
        long nsec = (long)((wait - (double)sec) * 1e9);
        ts.tv_sec += sec;
        ts.tv_nsec += nsec;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        int rc = pthread_cond_timedwait(&h->cv, &h->mu, &ts);
        if (rc != 0 && rc != ETIMEDOUT && rc != EINTR)
            break;
    }
    pthread_mutex_unlock(&h->mu);
    return got;
}
