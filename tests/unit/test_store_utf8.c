/*
 * test_store_utf8.c - text that enters the store is valid UTF-8: run names and tag values that
 * are not are refused with the byte named; a default name made from a file name is repaired
 * ('_'); the log's header text (model, device, ...) is stored with U+FFFD and counted; the
 * UTF-8 checks themselves (util/utf8.c) on the forms RFC 3629 excludes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mfu/mfu.h"
#include "store/internal.h"
#include "store_test.h"
#include "util/utf8.h"

static void utf8_forms(void **state)
{
    (void)state;
    size_t bad = 99;
    const char *good = "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x9a\x80";
    assert_true(mfu__utf8_valid(good, strlen(good), &bad));
    const struct {
        const char *s;
        size_t at;
    } invalid[] = {
        {"caf\xe9", 3},          /* Latin-1 */
        {"a\xc0\xaf", 1},        /* overlong '/' */
        {"a\xe0\x80\xaf", 1},    /* overlong, 3 bytes */
        {"\xed\xa0\x80", 0},     /* a surrogate */
        {"\xf4\x90\x80\x80", 0}, /* past U+10FFFF */
        {"ok\x80", 2},           /* a stray continuation byte */
        {"cut \xe2\x82", 4},     /* a sequence cut short */
    };
    for (size_t i = 0; i < sizeof invalid / sizeof *invalid; i++) {
        assert_false(mfu__utf8_valid(invalid[i].s, strlen(invalid[i].s), &bad));
        assert_int_equal(bad, invalid[i].at);
    }
    char out[32];
    assert_int_equal(mfu__utf8_repair("caf\xe9!", out, sizeof out), 1);
    assert_string_equal(out, "caf\xef\xbf\xbd!");
    /* cut at a character boundary: 2 bytes of room hold no U+FFFD */
    assert_int_equal(mfu__utf8_repair("a\xff", out, 3), 0);
    assert_string_equal(out, "a");
}

static void names_and_tags_are_refused(void **state)
{
    (void)state;
    mfu_error e;
    memset(&e, 0, sizeof e);
    assert_int_equal(mfu_store_check_name("caf\xc3\xa9", &e), MFU_OK);
    assert_int_equal(mfu_store_check_name("bad\xff", &e), MFU_E_INVALID);
    assert_string_equal(e.field, "--run");
    assert_non_null(strstr(e.message, "not valid UTF-8 (byte 4, 0xff)"));
    assert_int_equal(mfu_store_check_tag("team", "x\xc3(", &e), MFU_E_INVALID);
    assert_non_null(strstr(e.message, "tag value is not valid UTF-8 (byte 2, 0xc3)"));
    assert_int_equal(mfu_store_check_tag("team", "\xe6\x97\xa5\xe6\x9c\xac", &e), MFU_OK);
}

static void default_names_are_repaired(void **state)
{
    (void)state;
    char name[MFU_STORE_NAME_MAX];
    mfu_store_default_name("/logs/caf\xe9.log", name, sizeof name);
    assert_string_equal(name, "caf_");
    mfu_store_default_name("/logs/caf\xc3\xa9.log.gz", name, sizeof name);
    assert_string_equal(name, "caf\xc3\xa9");
    /* a file name longer than a run name: the cut may split a character */
    char path[400] = "/x/";
    size_t k = 3;
    for (int i = 0; i < 100; i++, k += 2)
        memcpy(path + k, "\xc3\xa9", 2);
    memcpy(path + k, ".log", 5);
    mfu_store_default_name(path, name, sizeof name);
    assert_true(mfu__utf8_valid(name, strlen(name), NULL));
    assert_int_equal(mfu_store_check_name(name, NULL), MFU_OK);
}

static void header_text_is_stored_repaired(void **state)
{
    (void)state;
    char db[64];
    temp_store_path(db, sizeof db);
    mfu_store *s = open_store(db, MFU_STORE_CREATE);
    mfu_run *run = mfu_run_new();
    mfu_step st;
    mfu_step_init(&st);
    st.step = 1;
    st.step_time_s = 0.5;
    assert_int_equal(mfu_run_append(run, &st, NULL, NULL), MFU_OK);
    mfu_run_meta *m = mfu_run_meta_mut(run);
    snprintf(m->model, sizeof m->model, "GPT caf\xe9");
    snprintf(m->device, sizeof m->device, "A100 \xff\xfe");
    assert_int_equal(mfu__store_meta_repairs(m), 3);
    mfu_error e;
    memset(&e, 0, sizeof e);
    int64_t id = 0;
    if (mfu_store_put_run(s, "r", run, &id, &e) != MFU_OK)
        fail_msg("put: %s", e.message); /* it failed as 'out of memory' before */
    mfu_run_free(run);
    run = get_run(s, "r");
    assert_string_equal(mfu_run_meta_get(run)->model, "GPT caf\xef\xbf\xbd");
    assert_string_equal(mfu_run_meta_get(run)->device, "A100 \xef\xbf\xbd\xef\xbf\xbd");
    mfu_run_free(run);
    mfu_store_close(s);
    remove_store_files(db);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(utf8_forms),
        cmocka_unit_test(names_and_tags_are_refused),
        cmocka_unit_test(default_names_are_repaired),
        cmocka_unit_test(header_text_is_stored_repaired),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
