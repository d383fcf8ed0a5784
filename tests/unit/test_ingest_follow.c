/*
 * test_ingest_follow.c - following a growing log through one ingest session: feed the new
 * complete lines, peek at the run (mfu_ingest_peek), feed again. What `mfu watch` and
 * `mfu serve --follow` rely on.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "ingest_test.h"

static void peek_grows_with_each_feed(void **state)
{
    (void)state;
    mfu_ingest *ing = NULL;
    mfu_error e;
    memset(&e, 0, sizeof e);
    assert_int_equal(mfu_ingest_new(NULL, &ing, &e), MFU_OK);
    assert_non_null(mfu_ingest_peek(ing));
    assert_int_equal(mfu_run_count(mfu_ingest_peek(ing)), 0);

    static char buf[64 * 1024];
    buf[0] = '\0';
    ingest_llmc_lines(buf, sizeof buf, 1, 20);
    assert_int_equal(mfu_ingest_feed_buffer(ing, buf, strlen(buf), "part1", &e), MFU_OK);
    /* 20 step lines settle detection: every one of them is a row already */
    assert_string_equal(mfu_ingest_get_stats(ing)->format, "llmc");
    const mfu_run *r = mfu_ingest_peek(ing);
    assert_int_equal(mfu_run_count(r), 20);
    assert_int_equal(mfu_run_steps(r)[19], 20);

    buf[0] = '\0';
    ingest_llmc_lines(buf, sizeof buf, 21, 35);
    assert_int_equal(mfu_ingest_feed_buffer(ing, buf, strlen(buf), "part2", &e), MFU_OK);
    r = mfu_ingest_peek(ing);
    assert_int_equal(mfu_run_count(r), 35);
    assert_int_equal(mfu_run_steps(r)[34], 35);
    /* the state of the format carries over: the header's tokens per step still apply */
    mfu_step last;
    assert_true(mfu_run_get(r, 34, &last));
    assert_true(fabs(last.step_time_s - 0.335) < 1e-9);
    assert_true(mfu_run_meta_get(r)->tokens_per_step == 131072);

    mfu_run *done = NULL;
    assert_int_equal(mfu_ingest_finish(ing, &done, &e), MFU_OK);
    assert_int_equal(mfu_run_count(done), 35);
    /* after finish the session holds an empty run: peek never dangles */
    assert_int_equal(mfu_run_count(mfu_ingest_peek(ing)), 0);
    mfu_run_free(done);
    mfu_ingest_free(ing);
    assert_null(mfu_ingest_peek(NULL));
}

static void peek_is_empty_while_detecting(void **state)
{
    (void)state;
    mfu_ingest *ing = NULL;
    mfu_error e;
    memset(&e, 0, sizeof e);
    assert_int_equal(mfu_ingest_new(NULL, &ing, &e), MFU_OK);
    static char buf[4096];
    buf[0] = '\0';
    ingest_llmc_lines(buf, sizeof buf, 1, 2);
    assert_int_equal(mfu_ingest_feed_buffer(ing, buf, strlen(buf), "x", &e), MFU_OK);
    /* two step lines do not settle detection: they are held, not rows yet */
    assert_string_equal(mfu_ingest_get_stats(ing)->format, "");
    assert_int_equal(mfu_run_count(mfu_ingest_peek(ing)), 0);
    mfu_run *done = NULL;
    assert_int_equal(mfu_ingest_finish(ing, &done, &e), MFU_OK);
    assert_int_equal(mfu_run_count(done), 2);
    mfu_run_free(done);
    mfu_ingest_free(ing);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(peek_grows_with_each_feed),
        cmocka_unit_test(peek_is_empty_while_detecting),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
