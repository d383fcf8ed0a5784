/*
 * test_ingest_paste.c - logs as people paste them and as progress bars draw them (issue 10):
 *   - the cleaner's rules for pasted and less common prefixes (mfu__strip_more): inline code,
 *     ">[" quoting, "[rank: 0] ", "[INFO date] ", DLLogger, US dates (nanotron, rich), padded
 *     levels; each with the rank or time it keeps;
 *   - carriage returns pasted as "^M", cut like real ones;
 *   - progress bars: carriage-return rewrites, ANSI colours, several bars interleaved with
 *     other output, only the last state of a bar pasted; the Lightning bar and a trainer's own
 *     bar (the generic reader), with the same rows as the plain log.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "ingest/internal.h"
#include "ingest_test.h"

static mfu__line clean(const char *text, char *buf)
{
    mfu__line ln;
    mfu__clean_line(text, strlen(text), 3, buf, &ln);
    return ln;
}

static void pasted_prefixes(void **state)
{
    (void)state;
    char buf[512];
    mfu__line ln = clean("`Epoch 37:  20%|x| 9/45 [20:01<1:20:06, 133.50s/it]`", buf);
    assert_string_equal(ln.text, "Epoch 37:  20%|x| 9/45 [20:01<1:20:06, 133.50s/it]");
    ln = clean("``step 3 | loss 2.0``", buf);
    assert_string_equal(ln.text, "step 3 | loss 2.0");
    ln = clean("<code>iter 1 step 0: loss 3.5551, iter time: 1069.53ms", buf);
    assert_string_equal(ln.text, "iter 1 step 0: loss 3.5551, iter time: 1069.53ms");
    ln = clean("iter 2 step 1: loss 3.3320</code>", buf); /* the tag closes a later line */
    assert_string_equal(ln.text, "iter 2 step 1: loss 3.3320");
    ln = clean("<pre>{\"epoch\": 27, \"loss\": \"8.2\"}</pre>", buf);
    assert_string_equal(ln.text, "{\"epoch\": 27, \"loss\": \"8.2\"}");
    ln = clean(">[INFO 2020-06-08 05:26:19] 0/2650, SamplesPerSec=13.2", buf);
    assert_string_equal(ln.text, "0/2650, SamplesPerSec=13.2");
    assert_near(ln.prefix_time_s, 1591593979.0, 0);
    ln = clean("[rank: 3] iter 34 step 35: iter time: 3372.20ms", buf);
    assert_string_equal(ln.text, "iter 34 step 35: iter time: 3372.20ms");
    assert_int_equal(ln.rank, 3);
    ln = clean("DLL 2022-04-05 02:22:54.614486 - Training Epoch: 1 Training Iteration: 2872 ", buf);
    assert_string_equal(ln.text, "Training Epoch: 1 Training Iteration: 2872");
    assert_near(ln.prefix_time_s, 1649125374.614486, 1e-15);
    ln = clean("01/17/2024 13:47:27 [INFO|DP=0|PP=0|TP=0|ip-26-0-160-225]: iteration: 991 / 1000",
               buf);
    assert_string_equal(ln.text, "iteration: 991 / 1000");
    assert_near(ln.prefix_time_s, 1705499247.0, 0);
    ln = clean("[08/30/23 07:07:34] INFO     colossalai - colossalai - INFO:   ", buf);
    assert_string_equal(ln.text, "colossalai - colossalai - INFO:");
    assert_near(ln.prefix_time_s, 1693379254.0, 0);
    ln = clean("                    INFO     colossalai - colossalai - INFO: Step time: 22.885  ",
               buf);
    assert_string_equal(ln.text, "colossalai - colossalai - INFO: Step time: 22.885");
    ln = clean("2023-01-05 16:34:37,748   INFO  Train:    1/3 ( 33%)", buf);
    assert_string_equal(ln.text, "Train:    1/3 ( 33%)");
    assert_near(ln.prefix_time_s, 1672936477.748, 1e-15);
    /* what stays: a bracket that is content, a single-blank level word, a bad US date */
    ln = clean("[GRAD-DBG] it=67 micro=7/10", buf);
    assert_string_equal(ln.text, "[GRAD-DBG] it=67 micro=7/10");
    ln = clean("INFO is a word here", buf);
    assert_string_equal(ln.text, "INFO is a word here");
    ln = clean("13/45/2024 13:47:27 not a date", buf);
    assert_string_equal(ln.text, "13/45/2024 13:47:27 not a date");
    ln = clean("`", buf);
    assert_int_equal(ln.len, 0);
}

/* ---- carriage returns pasted as "^M" -------------------------------------------------------- */

static void caret_m_cut_like_carriage_returns(void **state)
{
    (void)state;
    /* the same HF Trainer output with real carriage returns and pasted as "^M" */
    const char *real = "  4%|#  | 1317/36234 [11:37<5:10:26,  1.87it/s]\r  4%|#  | 1318/36234 "
                       "[11:37<5:12:34,  1.86it/s]\r            \r{'loss': 1.5545, "
                       "'learning_rate': 0.00029, 'epoch': 0.22}\n"
                       "  4%|#  | 1319/36234 [11:38<5:06:46,  1.90it/s]\r            \r{'loss': "
                       "1.3465, 'learning_rate': 0.00028, 'epoch': 0.22}\n";
    char pasted[1024];
    size_t k = 0;
    for (const char *p = real; *p && k + 3 < sizeof pasted; p++) {
        if (*p == '\r') {
            pasted[k++] = '^';
            pasted[k++] = 'M';
        } else {
            pasted[k++] = *p;
        }
    }
    pasted[k] = '\0';
    mfu_ingest_stats a, b;
    mfu_run *r1 = ingest_text(real, NULL, &a);
    mfu_run *r2 = ingest_text(pasted, NULL, &b);
    assert_string_equal(a.format, "hf");
    assert_string_equal(b.format, "hf");
    assert_int_equal(mfu_run_count(r2), 2);
    assert_int_equal(mfu_run_count(r1), mfu_run_count(r2));
    for (size_t i = 0; i < mfu_run_count(r1); i++) {
        mfu_step x = ingest_row(r1, i), y = ingest_row(r2, i);
        assert_int_equal(x.step, y.step);
        assert_near(y.step_time_s, x.step_time_s, 0);
        assert_near(y.loss, x.loss, 0);
    }
    assert_int_equal(ingest_row(r2, 0).step, 1318);
    assert_int_equal(b.lines, 2);
    assert_int_equal(b.used, 2);
    mfu_run_free(r1);
    mfu_run_free(r2);
    /* a log without "^M" in its first lines is not cut later (a "^M" in a message stays) */
    mfu_ingest_stats st;
    mfu_run *run =
        ingest_text("iter 1: loss 2.0, time 10.0ms\niter 2: loss 1.9, time 10.0ms\n", NULL, &st);
    assert_int_equal(mfu_run_count(run), 2);
    mfu_run_free(run);
}

/* ---- progress bars ------------------------------------------------------------------------- */

/* One Lightning bar redraw, in colour when asked. */
static void lightning_redraw(ingest_tbuf *b, int epoch, int n, int total, double spi, double loss,
                             bool colour, const char *end)
{
    ingest_tput(b,
                "%sEpoch %d:%s %3d%%|%s| %d/%d [00:%02d<00:%02d, %5.2fs/it, loss=%.3f, v_num=7]%s",
                colour ? "\x1b[32m" : "", epoch, colour ? "\x1b[0m" : "", n * 100 / total, "##", n,
                total, n % 60, (total - n) % 60, spi, loss, end);
}

static void bars_carriage_returns_colours_interleaved(void **state)
{
    (void)state;
    /* the plain log: one redraw per line, the last state of each count */
    ingest_tbuf plain = {0}, messy = {0};
    for (int e = 0; e < 2; e++)
        for (int n = 1; n <= 20; n++)
            lightning_redraw(&plain, e, n, 20, 1.0 + n * 0.01, 3.0 - e - n * 0.01, false, "\n");
    /* the same bars as a terminal records them: redraws joined by carriage returns (a stale
     * redraw first at each count), colours, a validation bar and warnings between them, and
     * no final newline */
    for (int e = 0; e < 2; e++) {
        for (int n = 1; n <= 20; n++) {
            lightning_redraw(&messy, e, n, 20, 1.0 + n * 0.01, 9.9, true, "\r");
            lightning_redraw(&messy, e, n, 20, 1.0 + n * 0.01, 3.0 - e - n * 0.01, true,
                             n == 20 && e == 1 ? "" : "\r");
            if (n == 10)
                ingest_tput(&messy, "\nUserWarning: The dataloader does not have many workers\n");
        }
        if (e == 0)
            ingest_tput(&messy,
                        "\nValidation DataLoader 0: 100%%|##| 5/5 [00:01<00:00,  4.00it/s]\n");
    }
    mfu_ingest_stats a, b;
    mfu_run *r1 = ingest_text(plain.p, NULL, &a);
    mfu_run *r2 = ingest_text(messy.p, NULL, &b);
    assert_string_equal(a.format, "lightning");
    assert_string_equal(b.format, "lightning");
    assert_int_equal(mfu_run_count(r1), 40);
    assert_int_equal(mfu_run_count(r2), 40);
    for (size_t i = 0; i < 40; i++) {
        mfu_step x = ingest_row(r1, i), y = ingest_row(r2, i);
        assert_int_equal(x.step, y.step);
        assert_near(y.step_time_s, x.step_time_s, 0);
        assert_near(y.loss, x.loss, 0); /* the stale redraw's 9.9 never wins */
    }
    assert_int_equal(ingest_row(r2, 20).step, 21); /* epoch 1 counts on after epoch 0's 20 */
    assert_near(ingest_row(r2, 39).loss, 3.0 - 1 - 0.2, 1e-12);
    assert_true(b.truncated_last_line);
    mfu_run_free(r1);
    mfu_run_free(r2);
    free(plain.p);
    free(messy.p);
}

/* A trainer's own tqdm bar (not Lightning's "Epoch N:"): the generic reader takes its count
 * and rate; data-preparation bars beside it are not steps. */
static void own_bar_read_by_the_generic_reader(void **state)
{
    (void)state;
    ingest_tbuf b = {0};
    ingest_tput(&b, "Map: 100%%|##########| 1000/1000 [00:00<00:00, 5000.00 examples/s]\n");
    ingest_tput(&b, "Loading checkpoint shards: 100%%|####| 3/3 [00:01<00:00,  1.68it/s]\n");
    for (int n = 1; n <= 30; n++)
        ingest_tput(&b,
                    "train:  %2d%%|###   | %d/100 [00:%02d<01:00,  %.2fit/s, loss=%.3f, lr=3e-4]\r",
                    n, n, n, 2.0, 2.5 - n * 0.01);
    ingest_tput(&b, "\n");
    mfu_ingest_stats st;
    mfu_run *run = ingest_text(b.p, NULL, &st);
    assert_string_equal(st.format, "generic");
    assert_int_equal(mfu_run_count(run), 30);
    mfu_step s = ingest_row(run, 4);
    assert_int_equal(s.step, 5);
    assert_near(s.step_time_s, 0.5, 1e-15); /* 2.00it/s */
    assert_near(s.loss, 2.45, 1e-12);
    assert_near(s.lr, 3e-4, 1e-15);
    assert_non_null(strstr(st.note, "the bar's s/it"));
    mfu_run_free(run);
    free(b.p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pasted_prefixes),
        cmocka_unit_test(caret_m_cut_like_carriage_returns),
        cmocka_unit_test(bars_carriage_returns_colours_interleaved),
        cmocka_unit_test(own_bar_read_by_the_generic_reader),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
