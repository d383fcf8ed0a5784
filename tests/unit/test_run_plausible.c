/*
 * test_run_plausible.c - what a step must be to enter a run (src/run/plausible.c): refused
 * values, what stays, the run unchanged after a refusal, and how the fillers report it: ingest
 * skips the line with its reason and line number (nanoGPT, JSON-lines, CSV), the store leaves
 * out a stored row no run accepts.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "ingest_test.h"
#include "mfu/mfu.h"
#include "run/step.h"
#include "store_test.h"

static mfu_step good_step(int64_t n)
{
    mfu_step s;
    mfu_step_init(&s);
    s.step = n;
    s.step_time_s = 0.5;
    s.tokens = 4096;
    return s;
}

/* Append s to a run holding one good row: the status, and the message in msg. */
static mfu_status try_append(const mfu_step *s, char *msg, size_t n)
{
    mfu_run *run = mfu_run_new();
    assert_non_null(run);
    mfu_step first = good_step(1);
    assert_int_equal(mfu_run_append(run, &first, NULL, NULL), MFU_OK);
    mfu_error e;
    memset(&e, 0, sizeof e);
    mfu_status st = mfu_run_append(run, s, NULL, &e);
    if (st != MFU_OK) {
        assert_int_equal(mfu_run_count(run), 1); /* unchanged */
        mfu_step back;
        assert_true(mfu_run_get(run, 0, &back));
        assert_true(mfu__step_equal(&back, &first));
    }
    snprintf(msg, n, "%s", st == MFU_OK ? "" : e.message);
    mfu_run_free(run);
    return st;
}

static void refuses_what_no_measurement_has(void **state)
{
    (void)state;
    char msg[MFU_ERROR_MESSAGE_MAX];
    mfu_step s = good_step(-1);
    assert_int_equal(try_append(&s, msg, sizeof msg), MFU_E_RANGE);
    assert_string_equal(msg, "step number -1 is negative");
    s = good_step(MFU__RUN_MAX_STEP_NUMBER + 1);
    assert_int_equal(try_append(&s, msg, sizeof msg), MFU_E_RANGE);
    assert_non_null(strstr(msg, "the largest step number kept"));
    s = good_step(2);
    s.step_time_s = 5.61e49; /* nanoGPT "time 561e50ms" */
    assert_int_equal(try_append(&s, msg, sizeof msg), MFU_E_RANGE);
    assert_string_equal(msg, "step time 5.61e+49 s is longer than a step can take (7 days)");
    s.step_time_s = -0.1;
    assert_int_equal(try_append(&s, msg, sizeof msg), MFU_E_RANGE);
    assert_string_equal(msg, "step time -0.1 s is negative");
    s.step_time_s = INFINITY;
    assert_int_equal(try_append(&s, msg, sizeof msg), MFU_E_RANGE);
    assert_string_equal(msg, "step time inf is not finite");
    s = good_step(2);
    s.tokens = -4096;
    assert_int_equal(try_append(&s, msg, sizeof msg), MFU_E_RANGE);
    assert_string_equal(msg, "token count -4096 is negative");
    s = good_step(2);
    s.power_w = -3;
    assert_int_equal(try_append(&s, msg, sizeof msg), MFU_E_RANGE);
    assert_string_equal(msg, "power -3 W is negative");
}

static void keeps_what_a_log_may_say(void **state)
{
    (void)state;
    char msg[MFU_ERROR_MESSAGE_MAX];
    mfu_step s = good_step(0);
    s.loss = -0.7; /* some objectives go below zero */
    s.mfu = 1.4;   /* impossible, and a finding of the analysis, not a refusal */
    s.tokens = -0.0;
    s.step_time_s = MFU__RUN_MAX_STEP_TIME_S;
    assert_int_equal(try_append(&s, msg, sizeof msg), MFU_OK);
    s = good_step(MFU__RUN_MAX_STEP_NUMBER);
    assert_int_equal(try_append(&s, msg, sizeof msg), MFU_OK);
    /* other infinities are dropped as before; an infinite loss is flagged */
    mfu_run *run = mfu_run_new();
    s = good_step(3);
    s.loss = INFINITY;
    s.tokens_per_s = INFINITY;
    s.samples = -INFINITY;
    assert_int_equal(mfu_run_append(run, &s, NULL, NULL), MFU_OK);
    mfu_step back;
    assert_true(mfu_run_get(run, 0, &back));
    assert_true(isnan(back.loss) && (back.flags & MFU_STEP_LOSS_NAN));
    assert_true(isnan(back.tokens_per_s) && isnan(back.samples));
    mfu_run_free(run);
}

/* The skip of line `line` carries `reason` (a substring). */
static void assert_skip(const mfu_ingest_stats *st, long line, const char *reason)
{
    for (size_t i = 0; i < st->nskip_samples; i++)
        if (st->skip_samples[i].line == line) {
            if (!strstr(st->skip_samples[i].reason, reason))
                fail_msg("line %ld: skipped for '%s', expected '%s'", line,
                         st->skip_samples[i].reason, reason);
            return;
        }
    fail_msg("line %ld was not skipped (expected: %s)", line, reason);
}

static void ingest_skips_with_reason_and_line(void **state)
{
    (void)state;
    mfu_ingest_stats st;
    mfu_run *run = ingest_text("iter 0: loss 4.2, time 1100.0ms, mfu -100.00%\n"
                               "iter 1: loss 4.1, time 561e50ms, mfu 15.34%\n"
                               "iter -1: loss 4.0, time 1099.3ms, mfu 15.30%\n"
                               "iter 2: loss 3.9, time -100ms, mfu 15.30%\n"
                               "iter 3: loss 3.9, time 1098.9ms, mfu 15.30%\n",
                               "nanogpt", &st);
    assert_int_equal(mfu_run_count(run), 2);
    assert_int_equal(st.skipped, 3);
    assert_int_equal(st.lines, st.used + st.ignored + st.skipped + st.too_long);
    assert_skip(&st, 2, "step time 5.61e+49 s is longer than a step can take");
    assert_skip(&st, 3, "step number -1 is negative");
    assert_skip(&st, 4, "step time -0.1 s is negative");
    mfu_run_free(run);

    run = ingest_text("{\"step\": 1, \"step_time_s\": 0.5}\n{\"step\": -3, \"step_time_s\": 0.5}\n"
                      "{\"step\": 4, \"step_time_s\": -0.5}\n{\"step\": 5, \"step_time_s\": 0.5}\n",
                      "jsonl", &st);
    assert_int_equal(mfu_run_count(run), 2);
    assert_skip(&st, 2, "step number -3 is negative");
    assert_skip(&st, 3, "step time -0.5 s is negative");
    mfu_run_free(run);

    /* CSV: a number too large to read is counted, and an out-of-range step says so */
    run = ingest_text("step,step_time_s,tokens\n1,0.5,1000\n2,1e309,1000\n"
                      "99999999999999999999,0.5,1000\n3,0.5,1000\n",
                      "csv", &st);
    assert_int_equal(mfu_run_count(run), 2);
    assert_int_equal(st.skipped, 2);
    assert_skip(&st, 3, "step_time_s '1e309' (column 2) is too large a number");
    assert_skip(&st, 4, "step '99999999999999999999' (column 1) is not a whole number");
    mfu_run_free(run);
}

/* A stored row that no run accepts (an older mfu stored a negative step, or the file was
 * edited) is left out when the run is read; the rest reads. */
static void store_leaves_out_a_refused_row(void **state)
{
    (void)state;
    char db[64];
    temp_store_path(db, sizeof db);
    mfu_store *s = open_store(db, MFU_STORE_CREATE);
    mfu_run *run = mfu_run_new();
    for (int i = 1; i <= 4; i++) {
        mfu_step st = good_step(i);
        assert_int_equal(mfu_run_append(run, &st, NULL, NULL), MFU_OK);
    }
    int64_t id = 0;
    mfu_error e;
    assert_int_equal(mfu_store_put_run(s, "r", run, &id, &e), MFU_OK);
    mfu_run_free(run);
    sqlite3 *h = NULL;
    assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
    assert_int_equal(sqlite3_exec(h, "UPDATE steps SET step=-7 WHERE row_no=1", NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(h);
    run = get_run(s, "r");
    assert_int_equal(mfu_run_count(run), 3);
    const int64_t *steps = mfu_run_steps(run);
    assert_int_equal(steps[0], 1);
    assert_int_equal(steps[1], 3);
    mfu_run_free(run);
    mfu_store_close(s);
    remove_store_files(db);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(refuses_what_no_measurement_has),
        cmocka_unit_test(keeps_what_a_log_may_say),
        cmocka_unit_test(ingest_skips_with_reason_and_line),
        cmocka_unit_test(store_leaves_out_a_refused_row),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
