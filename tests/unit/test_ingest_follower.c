/*
 * test_ingest_follower.c - the log follower of `mfu watch` and `mfu serve LOG`
 * (ingest/follow.h) on real files in a scratch directory: appends in pieces, a partial last
 * line, truncation, rotation by rename, a rewrite in place, a file that appears later, a line
 * over the limit, the preview of a log still being detected, the hooks, errors, and a failed
 * read tried again.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "ingest/follow.h"
#include "ingest_test.h"
#include "util/util.h"

static char dir[256];

static void path_of(char *buf, size_t n, const char *name)
{
    snprintf(buf, n, "%s/%s", dir, name);
}

/* llm.c lines in buf (emptied first): the header with step 1, then steps from..to at 300 + s
 * ms (ingest_test.h). */
static size_t llmc_lines(char *buf, size_t n, int from, int to)
{
    buf[0] = '\0';
    return ingest_llmc_lines(buf, n, from, to);
}

static void write_bytes(const char *path, const char *mode, const char *p, size_t n)
{
    FILE *fp = fopen(path, mode);
    assert_non_null(fp);
    assert_int_equal(fwrite(p, 1, n, fp), n);
    assert_int_equal(fclose(fp), 0);
}

static void append_steps(const char *path, int from, int to)
{
    static char buf[256 * 1024];
    size_t n = llmc_lines(buf, sizeof buf, from, to);
    write_bytes(path, "ab", buf, n);
}

/* The size and modification time a poll compares can stay equal for two writes within one
 * clock tick: a test that rewrites a file to the same size waits for the clock to move. */
static void next_tick(void)
{
    struct timespec ts = {0, 20 * 1000 * 1000};
    nanosleep(&ts, NULL);
}

static size_t rows(const mfu__follow *f)
{
    const mfu_run *r = mfu__follow_run(f);
    return r ? mfu_run_count(r) : 0;
}

static int64_t last_step(const mfu__follow *f)
{
    const mfu_run *r = mfu__follow_run(f);
    size_t n = r ? mfu_run_count(r) : 0;
    return n ? mfu_run_steps(r)[n - 1] : -1;
}

static mfu__follow *new_follower(const char *path, const mfu__follow_opts *o)
{
    mfu__follow *f = NULL;
    mfu_error e;
    memset(&e, 0, sizeof e);
    assert_int_equal(mfu__follow_new(path, o, &f, &e), MFU_OK);
    return f;
}

static mfu__follow_event poll_ok(mfu__follow *f, bool flush)
{
    mfu__follow_event ev;
    mfu_error e;
    memset(&e, 0, sizeof e);
    mfu_status st = mfu__follow_poll(f, flush, &ev, &e);
    if (st != MFU_OK)
        fail_msg("poll failed: %s", e.message);
    return ev;
}

static void grows_in_pieces(void **state)
{
    (void)state;
    char path[512];
    path_of(path, sizeof path, "pieces.log");
    append_steps(path, 1, 20);
    mfu__follow *f = new_follower(path, NULL);
    assert_null(mfu__follow_run(f));
    mfu__follow_event ev = poll_ok(f, false);
    assert_true(ev.read && ev.fresh && ev.fed && !ev.partial);
    assert_int_equal(rows(f), 20);
    mfu_ingest *first = mfu__follow_session(f);
    /* nothing changed: nothing is read */
    ev = poll_ok(f, false);
    assert_false(ev.read || ev.fed || ev.fresh);
    /* steps 21-25 arrive in two writes, the cut inside step 23's line */
    static char buf[4096];
    size_t n = llmc_lines(buf, sizeof buf, 21, 25);
    const char *cut = strstr(buf, "step   23/100 | loss") + 20;
    write_bytes(path, "ab", buf, (size_t)(cut - buf));
    ev = poll_ok(f, false);
    assert_true(ev.read && ev.fed && ev.partial && !ev.fresh);
    assert_int_equal(rows(f), 22); /* step 23 waits for its newline */
    assert_int_equal(last_step(f), 22);
    write_bytes(path, "ab", cut, n - (size_t)(cut - buf));
    ev = poll_ok(f, false);
    assert_true(ev.fed && !ev.partial && !ev.fresh);
    assert_int_equal(rows(f), 25);
    assert_int_equal(last_step(f), 25);
    /* the same session all along, its run grown in place */
    assert_ptr_equal(mfu__follow_session(f), first);
    assert_int_equal(mfu_ingest_get_stats(first)->lines, 26);
    mfu_step s23;
    assert_true(mfu_run_get(mfu__follow_run(f), 22, &s23));
    assert_true(fabs(s23.step_time_s - 0.323) < 1e-9); /* the line joined whole */
    mfu__follow_free(f);
}

static void partial_last_line_flush_and_settle(void **state)
{
    (void)state;
    char path[512];
    path_of(path, sizeof path, "partial.log");
    append_steps(path, 1, 20);
    /* step 21 without its newline */
    static char buf[4096];
    size_t n = llmc_lines(buf, sizeof buf, 21, 21);
    write_bytes(path, "ab", buf, n - 1);
    mfu__follow *f = new_follower(path, NULL);
    mfu__follow_event ev = poll_ok(f, false);
    assert_true(ev.partial);
    assert_int_equal(rows(f), 20);
    /* without settle_s, waiting does not feed it */
    ev = poll_ok(f, false);
    assert_false(ev.read);
    assert_int_equal(rows(f), 20);
    /* flush: the file as it is, the last line too */
    ev = poll_ok(f, true);
    assert_true(ev.read && ev.fed && !ev.partial);
    assert_int_equal(rows(f), 21);
    mfu_ingest *before = mfu__follow_session(f);
    /* it grows after all: the line fed may have been cut, so the file is read again */
    write_bytes(path, "ab", "\n", 1);
    append_steps(path, 22, 23);
    ev = poll_ok(f, false);
    assert_true(ev.fresh);
    assert_ptr_not_equal(mfu__follow_session(f), before);
    assert_int_equal(rows(f), 23);
    mfu__follow_free(f);

    /* settle_s: a still file's last line is fed without flush */
    path_of(path, sizeof path, "settle.log");
    append_steps(path, 1, 20);
    write_bytes(path, "ab", buf, n - 1);
    mfu__follow_opts o;
    memset(&o, 0, sizeof o);
    o.settle_s = 0.01;
    f = new_follower(path, &o);
    ev = poll_ok(f, false);
    assert_int_equal(rows(f), 20);
    for (int i = 0; i < 500 && rows(f) == 20; i++) {
        next_tick();
        ev = poll_ok(f, false);
    }
    assert_int_equal(rows(f), 21);
    assert_false(ev.partial);
    mfu__follow_free(f);
}

static void truncated_and_rewritten(void **state)
{
    (void)state;
    char path[512];
    path_of(path, sizeof path, "trunc.log");
    append_steps(path, 1, 30);
    mfu__follow *f = new_follower(path, NULL);
    poll_ok(f, false);
    assert_int_equal(rows(f), 30);
    /* truncated and written again, shorter: a fresh run of what the file holds now */
    write_bytes(path, "wb", "", 0);
    append_steps(path, 1, 12);
    mfu__follow_event ev = poll_ok(f, false);
    assert_true(ev.fresh);
    assert_int_equal(rows(f), 12);
    assert_int_equal(last_step(f), 12);
    /* rewritten in place, as long as before and longer: other first bytes start it again */
    static char buf[64 * 1024];
    size_t n = llmc_lines(buf, sizeof buf, 1, 12);
    char *h = strstr(buf, "B=16");
    h[2] = '8'; /* B=18: same length */
    append_steps(path, 13, 14);
    poll_ok(f, false);
    assert_int_equal(rows(f), 14);
    next_tick();
    write_bytes(path, "r+b", buf, n);
    ev = poll_ok(f, false);
    assert_true(ev.fresh);
    assert_int_equal(rows(f), 14);
    mfu__follow_free(f);
}

static void rotated_by_rename(void **state)
{
    (void)state;
    char path[512], old[600];
    path_of(path, sizeof path, "rot.log");
    snprintf(old, sizeof old, "%s.1", path);
    append_steps(path, 1, 40);
    mfu__follow *f = new_follower(path, NULL);
    poll_ok(f, false);
    assert_int_equal(rows(f), 40);
    assert_int_equal(rename(path, old), 0);
    /* gone for a moment: the run read so far stays */
    mfu__follow_event ev = poll_ok(f, false);
    assert_true(ev.missing && !ev.read);
    assert_int_equal(rows(f), 40);
    /* a new file at the path, longer than the old one (not a truncation): a fresh run */
    append_steps(path, 1, 50);
    ev = poll_ok(f, false);
    assert_true(ev.fresh && !ev.missing);
    assert_int_equal(rows(f), 50);
    /* the old file growing does not matter any more */
    append_steps(old, 41, 45);
    append_steps(path, 51, 52);
    poll_ok(f, false);
    assert_int_equal(rows(f), 52);
    assert_int_equal(last_step(f), 52);
    mfu__follow_free(f);
}

static void missing_file_appears(void **state)
{
    (void)state;
    char path[512];
    path_of(path, sizeof path, "later.log");
    mfu__follow *f = new_follower(path, NULL);
    mfu__follow_event ev = poll_ok(f, false);
    assert_true(ev.missing && !ev.read && !ev.fed);
    assert_null(mfu__follow_run(f));
    assert_null(mfu__follow_session(f));
    append_steps(path, 1, 20);
    ev = poll_ok(f, false);
    assert_true(ev.fresh && ev.fed);
    assert_int_equal(rows(f), 20);
    assert_string_equal(mfu__follow_path(f), path);
    mfu__follow_free(f);
}

static void line_over_the_limit(void **state)
{
    (void)state;
    char path[512];
    path_of(path, sizeof path, "long.log");
    append_steps(path, 1, 20);
    mfu__follow_opts o;
    memset(&o, 0, sizeof o);
    o.ingest.max_line_bytes = 256;
    mfu__follow *f = new_follower(path, &o);
    poll_ok(f, false);
    assert_int_equal(rows(f), 20);
    /* a line of 2.5 MB (longer than the limit and than one read) arriving in pieces, then
     * steps 21-22 */
    size_t big = 5 * (size_t)MFU__FOLLOW_CHUNK_BYTES / 2;
    char *junk = malloc(big);
    assert_non_null(junk);
    memset(junk, 'x', big);
    write_bytes(path, "ab", junk, 1000);
    mfu__follow_event ev = poll_ok(f, false);
    assert_int_equal(rows(f), 20);
    write_bytes(path, "ab", junk, big - 1000);
    ev = poll_ok(f, false);
    assert_int_equal(rows(f), 20);
    write_bytes(path, "ab", "\n", 1);
    free(junk);
    append_steps(path, 21, 22);
    ev = poll_ok(f, false);
    assert_false(ev.fresh);
    assert_int_equal(rows(f), 22);
    const mfu_ingest_stats *st = mfu_ingest_get_stats(mfu__follow_session(f));
    assert_int_equal(st->too_long, 1); /* counted once, not as several lines */
    assert_int_equal(st->lines, 21 + 1 + 2);
    assert_true(st->peak_line_bytes <= 256 + 1);
    mfu__follow_free(f);
}

static void preview_while_detecting(void **state)
{
    (void)state;
    char path[512];
    path_of(path, sizeof path, "short.log");
    append_steps(path, 1, 2);
    mfu__follow_opts o;
    memset(&o, 0, sizeof o);
    o.preview_while_detecting = true;
    mfu__follow *f = new_follower(path, &o);
    poll_ok(f, false);
    /* the session holds two step lines back; the preview has them */
    assert_string_equal(mfu_ingest_get_stats(mfu__follow_session(f))->format, "");
    assert_int_equal(rows(f), 2);
    append_steps(path, 3, 20);
    poll_ok(f, false);
    assert_string_equal(mfu_ingest_get_stats(mfu__follow_session(f))->format, "llmc");
    assert_ptr_equal(mfu__follow_run(f), mfu_ingest_peek(mfu__follow_session(f)));
    assert_int_equal(rows(f), 20);
    mfu__follow_free(f);

    /* without the option, nothing shows until the format is known */
    f = new_follower(path, NULL);
    write_bytes(path, "wb", "", 0);
    append_steps(path, 1, 2);
    poll_ok(f, false);
    assert_int_equal(rows(f), 0);
    mfu__follow_free(f);
}

typedef struct hooks {
    int feeds, freshes;
    size_t fed_bytes;
    mfu_ingest *last_fresh, *last_old;
    bool stop;
} hooks;

static mfu_status count_feed(void *ctx, mfu_ingest *ing, const char *p, size_t n, const char *name,
                             mfu_error *err)
{
    hooks *h = ctx;
    h->feeds++;
    h->fed_bytes += n;
    assert_true(n > 0 && p[n - 1] == '\n'); /* complete lines only */
    return mfu_ingest_feed_buffer(ing, p, n, name, err);
}

static void count_fresh(void *ctx, mfu_ingest *fresh, mfu_ingest *old)
{
    hooks *h = ctx;
    h->freshes++;
    h->last_fresh = fresh;
    h->last_old = old;
}

static bool stop_now(void *ctx)
{
    return ((hooks *)ctx)->stop;
}

static void hooks_are_called(void **state)
{
    (void)state;
    char path[512];
    path_of(path, sizeof path, "hooks.log");
    append_steps(path, 1, 20);
    hooks h;
    memset(&h, 0, sizeof h);
    mfu__follow_opts o;
    memset(&o, 0, sizeof o);
    o.feed = count_feed;
    o.on_fresh = count_fresh;
    o.stop = stop_now;
    o.ctx = &h;
    mfu__follow *f = new_follower(path, &o);
    poll_ok(f, false);
    /* the first read is a fresh session, read without the feed hook */
    assert_int_equal(h.freshes, 1);
    assert_null(h.last_old);
    assert_ptr_equal(h.last_fresh, mfu__follow_session(f));
    assert_int_equal(h.feeds, 0);
    static char buf[4096];
    size_t n = llmc_lines(buf, sizeof buf, 21, 22);
    write_bytes(path, "ab", buf, n);
    poll_ok(f, false);
    assert_int_equal(h.feeds, 1);
    assert_int_equal(h.fed_bytes, n);
    assert_int_equal(rows(f), 22);
    /* a truncation: on_fresh sees the old session before it goes */
    mfu_ingest *old = mfu__follow_session(f);
    write_bytes(path, "wb", "", 0);
    append_steps(path, 1, 5);
    poll_ok(f, false);
    assert_int_equal(h.freshes, 2);
    assert_ptr_equal(h.last_old, old);
    assert_ptr_equal(h.last_fresh, mfu__follow_session(f));
    /* stop: the read is abandoned with MFU_E_INVALID */
    h.stop = true;
    append_steps(path, 6, 7);
    mfu__follow_event ev;
    mfu_error e;
    memset(&e, 0, sizeof e);
    assert_int_equal(mfu__follow_poll(f, false, &ev, &e), MFU_E_INVALID);
    assert_non_null(strstr(e.message, "stopped"));
    mfu__follow_free(f);
}

static void errors_name_the_file(void **state)
{
    (void)state;
    char path[512];
    mfu__follow *f = NULL;
    mfu_error e;
    memset(&e, 0, sizeof e);
    /* bad ingest options fail at once, before any file exists */
    mfu__follow_opts o;
    memset(&o, 0, sizeof o);
    o.ingest.format = "no-such-format";
    path_of(path, sizeof path, "none.log");
    assert_int_equal(mfu__follow_new(path, &o, &f, &e), MFU_E_UNKNOWN);
    assert_null(f);
    assert_int_equal(mfu__follow_new(NULL, NULL, &f, &e), MFU_E_INVALID);
    /* a directory */
    f = new_follower(dir, NULL);
    mfu__follow_event ev;
    memset(&e, 0, sizeof e);
    assert_int_equal(mfu__follow_poll(f, false, &ev, &e), MFU_E_IO);
    assert_non_null(strstr(e.message, "is a directory"));
    assert_non_null(strstr(e.message, dir));
    mfu__follow_free(f);
    /* a line the session rejects: the error names the file and the line; the follower stays
     * usable and reads the file afresh once it changes */
    path_of(path, sizeof path, "bad.log");
    append_steps(path, 1, 20);
    f = new_follower(path, NULL);
    poll_ok(f, false);
    write_bytes(path, "ab", "\0\0\0binary\n", 10);
    memset(&e, 0, sizeof e);
    assert_int_equal(mfu__follow_poll(f, false, &ev, &e), MFU_E_PARSE);
    assert_non_null(strstr(e.message, path));
    assert_non_null(strstr(e.message, "binary"));
    write_bytes(path, "wb", "", 0);
    append_steps(path, 1, 25);
    ev = poll_ok(f, false);
    assert_true(ev.fresh);
    assert_int_equal(rows(f), 25);
    mfu__follow_free(f);
    mfu__follow_free(NULL);
}

/* A feed hook that fails as told (h->fail: the status; MFU_OK feeds). */
typedef struct failing {
    mfu_status fail;
    int calls;
} failing;

static mfu_status failing_feed(void *ctx, mfu_ingest *ing, const char *p, size_t n,
                               const char *name, mfu_error *err)
{
    failing *h = ctx;
    h->calls++;
    if (h->fail == MFU_OK)
        return mfu_ingest_feed_buffer(ing, p, n, name, err);
    err->code = h->fail;
    snprintf(err->message, sizeof err->message, "%s: injected failure", name);
    return h->fail;
}

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

/* A read that failed on the file (an NFS server gone for a while) is tried again without the
 * file changing, after opts.retry_s and then a wait that doubles; a failure of the content is
 * not (it waits for the file to change). */
static void retried_after_a_failure(void **state)
{
    (void)state;
    char path[512];
    path_of(path, sizeof path, "retry.log");
    append_steps(path, 1, 20);
    failing h = {MFU_OK, 0};
    mfu__follow_opts o;
    memset(&o, 0, sizeof o);
    o.feed = failing_feed;
    o.ctx = &h;
    o.retry_s = 0.2;
    mfu__follow *f = new_follower(path, &o);
    poll_ok(f, false);
    assert_int_equal(rows(f), 20);
    /* lines appended, the read fails on I/O once; the file does not change again */
    append_steps(path, 21, 30);
    h.fail = MFU_E_IO;
    mfu__follow_event ev;
    mfu_error e;
    memset(&e, 0, sizeof e);
    double failed_at = mfu__now();
    assert_int_equal(mfu__follow_poll(f, false, &ev, &e), MFU_E_IO);
    assert_non_null(strstr(e.message, "injected"));
    h.fail = MFU_OK;
    ev = poll_ok(f, false);
    if (mfu__now() - failed_at < o.retry_s) /* before the wait: nothing read */
        assert_false(ev.read);
    sleep_s(o.retry_s + 0.05);
    ev = poll_ok(f, false);
    assert_true(ev.read);
    assert_true(ev.fresh); /* the session that failed is replaced */
    assert_int_equal(rows(f), 30);
    assert_int_equal(last_step(f), 30);
    /* once it worked, an unchanged file is not read again */
    sleep_s(o.retry_s + 0.05);
    ev = poll_ok(f, false);
    assert_false(ev.read);
    /* a failure of the content is not retried: the lines stay the same until the file changes */
    append_steps(path, 31, 32);
    h.fail = MFU_E_PARSE;
    memset(&e, 0, sizeof e);
    assert_int_equal(mfu__follow_poll(f, false, &ev, &e), MFU_E_PARSE);
    h.fail = MFU_OK;
    sleep_s(o.retry_s + 0.05);
    ev = poll_ok(f, false);
    assert_false(ev.read);
    assert_int_equal(rows(f), 30);
    append_steps(path, 33, 33);
    ev = poll_ok(f, false);
    assert_true(ev.fresh);
    assert_int_equal(rows(f), 33);
    mfu__follow_free(f);

    /* a path that cannot be opened (a directory) is tried again with a wait that doubles:
     * over 1.6 s from a 0.05 s wait, tries at about 0.05, 0.15, 0.35, 0.75 and 1.55 s (a fixed
     * wait would make 32) */
    o.retry_s = 0.05;
    o.feed = NULL;
    f = new_follower(dir, &o);
    int tries = 0, polls = 0;
    double t0 = mfu__now();
    while (mfu__now() - t0 < 1.6) {
        memset(&e, 0, sizeof e);
        mfu_status st = mfu__follow_poll(f, false, &ev, &e);
        assert_true(st == MFU_OK || st == MFU_E_IO);
        tries += st == MFU_E_IO;
        polls++;
        sleep_s(0.002);
    }
    assert_true(tries >= 3);
    assert_true(tries <= 8);
    assert_true(polls > 2 * tries);
    mfu__follow_free(f);
}

static int setup(void **state)
{
    (void)state;
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/mfu-follower-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(grows_in_pieces),
        cmocka_unit_test(partial_last_line_flush_and_settle),
        cmocka_unit_test(truncated_and_rewritten),
        cmocka_unit_test(rotated_by_rename),
        cmocka_unit_test(missing_file_appears),
        cmocka_unit_test(line_over_the_limit),
        cmocka_unit_test(preview_while_detecting),
        cmocka_unit_test(hooks_are_called),
        cmocka_unit_test(errors_name_the_file),
        cmocka_unit_test(retried_after_a_failure),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
