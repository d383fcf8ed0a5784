/*
 * fuzz_canonical.c - mfu's canonical JSON-lines reader (format "mfu", src/ingest/fmt_mfu.c)
 * and its writer.
 *
 * Each input is read as format "mfu"; a run that comes out is written back
 * (mfu_run_write_jsonl) and read again, and the second read must give the same rows, bit for
 * bit (the round trip docs/formats.md promises). Seeds: tests/data logs converted by
 * `mfu convert` (scripts/fuzz).
 */
#include "fuzz.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mfu/mfu.h"
#include "run/step.h"

static mfu_run *read_mfu(const void *data, size_t size)
{
    mfu_ingest_opts o;
    memset(&o, 0, sizeof o);
    o.format = "mfu";
    mfu_ingest *ing = NULL;
    mfu_run *run = NULL;
    if (mfu_ingest_new(&o, &ing, NULL) != MFU_OK)
        return NULL;
    if (mfu_ingest_feed_buffer(ing, data, size, "fuzz.jsonl", NULL) == MFU_OK)
        mfu_ingest_finish(ing, &run, NULL);
    mfu_ingest_free(ing);
    return run;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > MFU_FUZZ_MAX_INPUT)
        return 0;
    mfu_run *run = read_mfu(data, size);
    if (!run)
        return 0;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    MFU_FUZZ_CHECK(f != NULL);
    mfu_status st = mfu_run_write_jsonl(run, f, NULL);
    fclose(f);
    MFU_FUZZ_CHECK(st == MFU_OK);
    mfu_run *back = read_mfu(text, len);
    MFU_FUZZ_CHECK(back != NULL);
    MFU_FUZZ_CHECK(mfu_run_count(back) == mfu_run_count(run));
    for (size_t i = 0; i < mfu_run_count(run); i++) {
        mfu_step a, b;
        MFU_FUZZ_CHECK(mfu_run_get(run, i, &a) && mfu_run_get(back, i, &b));
        MFU_FUZZ_CHECK(mfu__step_equal(&a, &b));
    }
    mfu_run_free(back);
    mfu_run_free(run);
    free(text);
    return 0;
}
