/*
 * fuzz_store.c - the store's read path: a damaged or hostile store file.
 *
 * Two kinds of input:
 *   - one that starts with SQLite's magic ("SQLite format 3") is a whole store file: written
 *     to a private directory and read;
 *   - anything else is SQL run against a copy of a good store (made once, from
 *     tests/data/logs/nanogpt, with tags, a context, findings and a source), which is then
 *     read: values of the wrong type, NULLs, huge numbers, rows out of order, a schema
 *     tampered with. The SQL may not ATTACH, DETACH or VACUUM (it would write elsewhere), and
 *     runs for a bounded number of SQLite steps.
 * Reading means: open (read-only, then for writing: the migration path), list the runs, and
 * load each (rows, tags, context, findings, source). Checks: never a crash; a loaded run has
 * the row count its listing says or an error.
 */
#include "fuzz.h"

#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "mfu/mfu.h"
#include "util/util.h"

static char good_db[600], work_db[600];
static unsigned char *good_bytes;
static size_t good_len;

static bool write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return false;
    bool ok = fwrite(data, 1, n, f) == n;
    return fclose(f) == 0 && ok;
}

/* The good store: one run from a fixture log, with everything the read path reads. */
static void make_good(void)
{
    const char *dir = mfu_fuzz_tmpdir();
    const char *data = getenv("MFU_TEST_DATA");
    char log[600];
    if (!dir)
        return;
    snprintf(good_db, sizeof good_db, "%s/good.db", dir);
    snprintf(work_db, sizeof work_db, "%s/work.db", dir);
    snprintf(log, sizeof log, "%s/logs/nanogpt/nanogpt-issue110-gpt2-124m-8xa100-preMFU.log",
             data ? data : MFU_FUZZ_TEST_DATA);
    mfu_store *s = NULL;
    if (mfu_store_open(good_db, MFU_STORE_CREATE, &s, NULL) != MFU_OK)
        return;
    mfu_store_ingest_opts o;
    memset(&o, 0, sizeof o);
    o.run_name = "good";
    mfu_store_ingest_result res;
    if (mfu_store_ingest_path(s, log, &o, &res, NULL) == MFU_OK) {
        mfu_store_set_tag(s, res.run_id, "team", "fuzz", NULL);
        mfu_store_set_context(s, res.run_id, "[\"--model\",\"gpt2\"]", NULL);
        mfu_store_finding f = {"stall", "warning", 1, 2, "{\"lost_share\":0.1}", "look"};
        mfu_store_replace_findings(s, res.run_id, &f, 1, NULL);
    }
    mfu_store_close(s);
    /* One file, no WAL beside it: read it back as bytes to copy for each input. */
    FILE *f = fopen(good_db, "rb");
    if (!f)
        return;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    if (n > 0 && (good_bytes = malloc((size_t)n)) &&
        fread(good_bytes, 1, (size_t)n, f) == (size_t)n)
        good_len = (size_t)n;
    fclose(f);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    make_good();
    return 0;
}

static int deny_escape(void *ctx, int action, const char *a, const char *b, const char *c,
                       const char *d)
{
    (void)ctx;
    (void)b;
    (void)c;
    (void)d;
    if (action == SQLITE_ATTACH || action == SQLITE_DETACH)
        return SQLITE_DENY;
    if (action == SQLITE_FUNCTION && a && strcmp(a, "load_extension") == 0)
        return SQLITE_DENY;
    return SQLITE_OK;
}

static int stop_long(void *ctx)
{
    return ++*(long *)ctx > 2000; /* x 1000 VM steps */
}

/* Apply n bytes of SQL to work_db. */
static void tamper(const uint8_t *sql, size_t n)
{
    char *text = malloc(n + 1);
    if (!text)
        return;
    memcpy(text, sql, n);
    text[n] = '\0';
    for (char *p = text; *p; p++) /* no VACUUM (INTO a file elsewhere) */
        if ((p[0] | 0x20) == 'v' && mfu__strncasecmp(p, "vacuum", 6) == 0) {
            free(text);
            return;
        }
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(work_db, &db, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK) {
        long steps = 0;
        sqlite3_set_authorizer(db, deny_escape, NULL);
        sqlite3_progress_handler(db, 1000, stop_long, &steps);
        sqlite3_exec(db, text, NULL, NULL, NULL);
    }
    sqlite3_close(db);
    free(text);
}

static void read_all(unsigned flags)
{
    mfu_store *s = NULL;
    if (mfu_store_open(work_db, flags, &s, NULL) != MFU_OK)
        return;
    mfu_store_list *l = NULL;
    if (mfu_store_list_runs(s, &l, NULL) == MFU_OK) {
        for (size_t i = 0; i < mfu_store_list_count(l) && i < 8; i++) {
            const mfu_store_run_info *ri = mfu_store_list_at(l, i);
            MFU_FUZZ_CHECK(ri && ri->name);
            int64_t id = 0;
            mfu_store_find_run(s, ri->name, &id, NULL);
            mfu_run *run = NULL;
            if (mfu_store_get_run(s, ri->id, &run, NULL) == MFU_OK) {
                MFU_FUZZ_CHECK(run != NULL);
                mfu_run_free(run);
            }
            char value[MFU_STORE_TAG_VALUE_MAX];
            mfu_store_get_tag(s, ri->id, "team", value, sizeof value, NULL);
            char *ctx = NULL;
            if (mfu_store_get_context(s, ri->id, &ctx, NULL) == MFU_OK)
                free(ctx);
            mfu_store_findings *f = NULL;
            if (mfu_store_get_findings(s, ri->id, &f, NULL) == MFU_OK)
                for (size_t k = 0; k < mfu_store_findings_count(f); k++)
                    MFU_FUZZ_CHECK(mfu_store_findings_at(f, k)->kind != NULL);
            mfu_store_findings_free(f);
            mfu_store_source src;
            mfu_store_get_source(s, ri->id, &src, NULL);
        }
    }
    mfu_store_list_free(l);
    mfu_store_close(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > MFU_FUZZ_MAX_INPUT || !work_db[0])
        return 0;
    mfu_fuzz_remove_db(work_db);
    if (size >= 15 && memcmp(data, "SQLite format 3", 15) == 0) {
        if (!write_file(work_db, data, size))
            return 0;
    } else {
        if (!good_len || !write_file(work_db, good_bytes, good_len))
            return 0;
        tamper(data, size);
    }
    read_all(MFU_STORE_READONLY);
    read_all(0);
    mfu_fuzz_remove_db(work_db);
    return 0;
}
