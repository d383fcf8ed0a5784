/*
 * fuzz_ingest.c - detection and every parser, then the report of what was read.
 *
 * Each input is one log. It is read by detection (no format given) and, when a run comes out,
 * reported (mfu_report_compute) and drawn (mfu_report_html: the SVG charts), then read again by
 * every format forced in turn. Checks: never a crash or a sanitizer report; the counters add
 * up (lines = used + ignored + skipped + too_long); a run that came out is not empty. Seeds:
 * tests/data/logs (scripts/fuzz).
 */
#include "fuzz.h"

#include <stdlib.h>
#include <string.h>

#include "mfu/mfu.h"

/* Read data with format (NULL: detect); *out gets the run or NULL. */
static void read_as(const uint8_t *data, size_t size, const char *format, mfu_run **out)
{
    *out = NULL;
    mfu_ingest_opts o;
    memset(&o, 0, sizeof o);
    o.format = format;
    o.max_line_bytes = 4096; /* long lines are cut and counted: keep that path in reach */
    mfu_ingest *ing = NULL;
    if (mfu_ingest_new(&o, &ing, NULL) != MFU_OK)
        return;
    mfu_status st = mfu_ingest_feed_buffer(ing, data, size, "fuzz.log", NULL);
    if (st == MFU_OK) {
        const mfu_ingest_stats *s = mfu_ingest_get_stats(ing);
        MFU_FUZZ_CHECK(s->lines == s->used + s->ignored + s->skipped + s->too_long);
        st = mfu_ingest_finish(ing, out, NULL);
        MFU_FUZZ_CHECK(st != MFU_OK || (*out && mfu_run_count(*out) > 0));
    }
    mfu_ingest_free(ing);
}

static void report(const mfu_run *run)
{
    mfu_report *r = NULL;
    if (mfu_report_compute(run, NULL, &r, NULL) != MFU_OK)
        return;
    mfu_report_html_run hr = {r, "fuzz", NULL, NULL};
    char *html = NULL;
    if (mfu_report_html(&hr, 1, NULL, &html, NULL) == MFU_OK)
        MFU_FUZZ_CHECK(html && strlen(html) > 0);
    free(html);
    mfu_report_free(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > MFU_FUZZ_MAX_INPUT)
        return 0;
    mfu_run *run = NULL;
    read_as(data, size, NULL, &run);
    if (run)
        report(run);
    mfu_run_free(run);
    for (size_t i = 0; mfu_ingest_format_name(i); i++) {
        read_as(data, size, mfu_ingest_format_name(i), &run);
        mfu_run_free(run);
    }
    return 0;
}
