/*
 * test_monitor.c - mfu/monitor.h: the configuration's errors, each step's figures against
 * arithmetic done here and against the report of the same steps (the report's MFU series must
 * hold exactly what the monitor returned, per-step sequence length, recompute, padding, dtype
 * and device count included), the JSON-lines file read back as the same run, merges, and the
 * figures that cannot be known without a model or a device.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "mfu/mfu.h"

/* The fake NVML library the build makes (ctest sets MFU_FAKE_NVML to its path). */
static const char *fake_nvml(void)
{
    const char *p = getenv("MFU_FAKE_NVML");
    if (!p || !p[0])
        fail_msg("MFU_FAKE_NVML is not set: run through ctest");
    return p;
}

static mfu_monitor_config base(void)
{
    mfu_monitor_config c;
    memset(&c, 0, sizeof c);
    c.model = "llama3-8b";
    c.seq = 8192;
    c.device = "h100-sxm";
    c.devices = 8;
    return c;
}

static double model_fpt(const char *preset, int64_t seq, mfu_recompute rec, double *hw)
{
    mfu_arch a;
    assert_int_equal(mfu_preset_find(preset, &a, NULL), MFU_OK);
    mfu_workload wl;
    memset(&wl, 0, sizeof wl);
    wl.seq = seq;
    wl.recompute = rec;
    mfu_flops f;
    assert_int_equal(mfu_flops_compute(&a, &wl, NULL, &f, NULL), MFU_OK);
    if (hw)
        *hw = f.hardware_flops;
    return f.model_flops;
}

static void expect_error(const mfu_monitor_config *c, mfu_status want, const char *field,
                         const char *text)
{
    mfu_monitor *m = (mfu_monitor *)1;
    mfu_error e;
    memset(&e, 0, sizeof e);
    mfu_status st = mfu_monitor_new(c, &m, &e);
    if (st != want)
        fail_msg("status %d, want %d (%s)", st, want, e.message);
    assert_null(m);
    if (field)
        assert_string_equal(e.field, field);
    if (text && !strstr(e.message, text))
        fail_msg("message '%s' lacks '%s'", e.message, text);
}

static void config_errors(void **state)
{
    (void)state;
    mfu_monitor *m = NULL;
    assert_int_equal(mfu_monitor_new(NULL, &m, NULL), MFU_E_INVALID);
    mfu_monitor_config c = base();
    assert_int_equal(mfu_monitor_new(&c, NULL, NULL), MFU_E_INVALID);
    c.seq = 0;
    expect_error(&c, MFU_E_MISSING, "seq", "sequence length");
    c = base();
    c.model = "llama9-1t";
    expect_error(&c, MFU_E_UNKNOWN, "--model", NULL);
    c = base();
    c.device = "h999";
    expect_error(&c, MFU_E_UNKNOWN, NULL, NULL);
    c = base();
    c.dtype = "fp13";
    expect_error(&c, MFU_E_UNKNOWN, NULL, "bf16");
    c = base();
    c.devices = -2;
    expect_error(&c, MFU_E_INVALID, "devices", NULL);
    c = base();
    c.peak_flops_per_s = NAN;
    expect_error(&c, MFU_E_INVALID, "peak_flops_per_s", NULL);
    c = base();
    c.convention = "nosuch";
    expect_error(&c, MFU_E_UNKNOWN, NULL, NULL);
    c = base();
    c.jsonl_path = "/nonexistent-dir/x.jsonl";
    expect_error(&c, MFU_E_IO, "jsonl_path", "writable");
}

/* Each step's figures, computed here: tokens / time / devices x FLOPs per token / peak. */
static void figures_by_hand(void **state)
{
    (void)state;
    mfu_monitor_config c = base();
    mfu_monitor *m = NULL;
    assert_int_equal(mfu_monitor_new(&c, &m, NULL), MFU_OK);
    double fpt = model_fpt("llama3-8b", 8192, MFU_RECOMPUTE_NONE, NULL);
    assert_true(mfu_monitor_model_flops_per_token(m) == fpt);
    assert_true(mfu_monitor_peak_flops_per_s(m) == 989.5e12);
    mfu_monitor_sample s;
    double tokens = 8.0 * 4 * 8192, st = 1.9;
    assert_int_equal(mfu_monitor_record(m, 1, tokens, st, 2.5, &s, NULL), MFU_OK);
    assert_int_equal(s.step, 1);
    assert_true(fabs(s.tokens_per_s - tokens / st) <= 1e-9 * s.tokens_per_s);
    double want = tokens / st / 8 * fpt / 989.5e12;
    if (!(fabs(s.mfu - want) <= 1e-12 * want))
        fail_msg("mfu %.17g, want %.17g", s.mfu, want);
    assert_true(s.hfu == s.mfu); /* no recomputation */
    assert_true(fabs(s.model_flops_per_s_per_device - want * 989.5e12) <= 1e-9 * want * 989.5e12);
    /* bad steps are refused and not recorded */
    mfu_error e;
    memset(&e, 0, sizeof e);
    assert_int_equal(mfu_monitor_record(m, 2, 0, st, NAN, &s, &e), MFU_E_INVALID);
    assert_string_equal(e.field, "tokens");
    assert_int_equal(mfu_monitor_record(m, 2, tokens, -1, NAN, &s, &e), MFU_E_INVALID);
    assert_string_equal(e.field, "step_time_s");
    assert_int_equal(mfu_monitor_record(m, 2, tokens, INFINITY, NAN, NULL, &e), MFU_E_INVALID);
    assert_int_equal(mfu_run_count(mfu_monitor_run(m)), 1);
    assert_int_equal(mfu_monitor_record(NULL, 2, tokens, st, NAN, &s, NULL), MFU_E_INVALID);
    /* infinities are kept as ingest keeps them: an infinite loss is a flagged NaN, any other
     * infinite field is absent */
    mfu_step inf;
    mfu_step_init(&inf);
    inf.step = 2;
    inf.tokens = tokens;
    inf.step_time_s = st;
    inf.loss = INFINITY;
    inf.clock_mhz = -INFINITY;
    assert_int_equal(mfu_monitor_step(m, &inf, &s, NULL), MFU_OK);
    mfu_step back;
    assert_true(mfu_run_get(mfu_monitor_run(m), 1, &back));
    assert_true(isnan(back.loss) && (back.flags & MFU_STEP_LOSS_NAN));
    assert_true(isnan(back.clock_mhz));
    mfu_monitor_free(m);
    mfu_monitor_free(NULL);
}

/* Steps of every kind the report treats per row: the report's MFU, HFU and model FLOP/s
 * series must hold exactly the monitor's figures. */
static void report_agrees_per_step(void **state)
{
    (void)state;
    mfu_monitor_config c = base();
    c.recompute = "selective";
    mfu_monitor *m = NULL;
    assert_int_equal(mfu_monitor_new(&c, &m, NULL), MFU_OK);
    enum { N = 300 };
    mfu_monitor_sample got[N];
    for (int i = 0; i < N; i++) {
        mfu_step s;
        mfu_step_init(&s);
        s.step = i + 1;
        s.tokens = 8.0 * 4 * 8192;
        s.step_time_s = 1.9 + 0.01 * sin(i);
        s.loss = 3.0 - 0.001 * i;
        if (i >= 100 && i < 150)
            s.seq_len = 4096; /* shorter sequences: other FLOPs per token */
        if (i >= 150 && i < 180)
            s.useful_tokens = 0.8 * s.tokens; /* padding */
        if (i >= 180 && i < 200)
            s.recompute = MFU_RECOMPUTE_FULL;
        if (i >= 200 && i < 220)
            s.dtype = MFU_DTYPE_FP8; /* another peak */
        if (i >= 220 && i < 240)
            s.devices = 16;
        assert_int_equal(mfu_monitor_step(m, &s, &got[i], NULL), MFU_OK);
    }
    mfu_report *r = NULL;
    mfu_error e;
    memset(&e, 0, sizeof e);
    assert_int_equal(mfu_monitor_report(m, &r, &e), MFU_OK);
    assert_int_equal(mfu_report_step_count(r), N);
    const double *mfu = mfu_report_column(r, MFU_RS_MFU);
    const double *hfu = mfu_report_column(r, MFU_RS_HFU);
    const double *mf = mfu_report_column(r, MFU_RS_MODEL_FLOPS_PER_S_PER_DEVICE);
    const double *tps = mfu_report_column(r, MFU_RS_TOKENS_PER_S);
    for (int i = 0; i < N; i++) {
        if (memcmp(&mfu[i], &got[i].mfu, sizeof(double)) != 0) /* one function: the same bits */
            fail_msg("step %d: report MFU %.17g, monitor %.17g", i + 1, mfu[i], got[i].mfu);
        if (memcmp(&hfu[i], &got[i].hfu, sizeof(double)) != 0)
            fail_msg("step %d: report HFU %.17g, monitor %.17g", i + 1, hfu[i], got[i].hfu);
        assert_true(fabs(mf[i] - got[i].model_flops_per_s_per_device) <= 1e-12 * mf[i]);
        assert_true(fabs(tps[i] - got[i].tokens_per_s) <= 1e-12 * tps[i]);
    }
    /* and the per-row rules moved the figures as they should */
    assert_true(got[120].mfu < got[90].mfu * 0.97); /* 4096: fewer FLOPs/token */
    double hw_sel, hw_full;
    double fpt = model_fpt("llama3-8b", 8192, MFU_RECOMPUTE_SELECTIVE, &hw_sel);
    model_fpt("llama3-8b", 8192, MFU_RECOMPUTE_FULL, &hw_full);
    assert_true(hw_sel > fpt && hw_full > hw_sel);
    /* padding: MFU counts the 80 % real tokens, HFU all of them */
    assert_true(fabs(got[160].mfu / got[160].hfu - 0.8 * fpt / hw_sel) < 1e-12);
    assert_true(fabs(got[190].hfu / got[190].mfu - hw_full / fpt) < 1e-12);
    assert_true(fabs(got[90].hfu / got[90].mfu - hw_sel / fpt) < 1e-12);
    /* fp8 steps divide by the device's fp8 dense peak; 16-device steps by 16 */
    const mfu_device_info *h100 = NULL;
    double fp8 = 0;
    assert_int_equal(mfu_device_find("h100-sxm", &h100, NULL), MFU_OK);
    assert_int_equal(mfu_device_peak_flops_per_s(h100, MFU_DTYPE_FP8, false, &fp8, NULL), MFU_OK);
    assert_true(fp8 > 989.5e12 * 1.5);
    assert_true(fabs(got[210].mfu - got[210].model_flops_per_s_per_device / fp8) <= 1e-15);
    double want16 = got[230].tokens_per_s / 16 * fpt;
    assert_true(fabs(got[230].model_flops_per_s_per_device - want16) <= 1e-12 * want16);
    mfu_report_free(r);
    mfu_monitor_free(m);
}

/* Without a model: tokens/s only; without a device: FLOPs but no MFU. */
static void without_model_or_device(void **state)
{
    (void)state;
    mfu_monitor_config c;
    memset(&c, 0, sizeof c);
    mfu_monitor *m = NULL;
    assert_int_equal(mfu_monitor_new(&c, &m, NULL), MFU_OK);
    mfu_monitor_sample s;
    assert_int_equal(mfu_monitor_record(m, 1, 1000, 0.5, NAN, &s, NULL), MFU_OK);
    assert_true(s.tokens_per_s == 2000);
    assert_true(isnan(s.mfu) && isnan(s.hfu) && isnan(s.model_flops_per_s_per_device));
    assert_true(isnan(mfu_monitor_model_flops_per_token(m)));
    mfu_monitor_free(m);
    c = base();
    c.device = NULL;
    assert_int_equal(mfu_monitor_new(&c, &m, NULL), MFU_OK);
    assert_int_equal(mfu_monitor_record(m, 1, 8192, 0.5, NAN, &s, NULL), MFU_OK);
    assert_true(isfinite(s.model_flops_per_s_per_device) && isnan(s.mfu));
    mfu_monitor_free(m);
    /* a peak given instead of a device */
    c.peak_flops_per_s = 100e12;
    assert_int_equal(mfu_monitor_new(&c, &m, NULL), MFU_OK);
    assert_int_equal(mfu_monitor_record(m, 1, 8192, 0.5, NAN, &s, NULL), MFU_OK);
    assert_true(fabs(s.mfu - s.model_flops_per_s_per_device / 100e12) < 1e-15);
    mfu_monitor_free(m);
    /* "cpu": this machine's CPU, as mfu_cpu_device computes it */
    mfu_device_slot slot;
    const mfu_device_info *cpu = NULL;
    double fp32 = 0;
    assert_int_equal(mfu_cpu_device(&slot, &cpu, NULL), MFU_OK);
    assert_int_equal(mfu_device_peak_flops_per_s(cpu, MFU_DTYPE_FP32, false, &fp32, NULL), MFU_OK);
    c = base();
    c.device = "cpu";
    c.dtype = "fp32";
    c.devices = 1;
    assert_int_equal(mfu_monitor_new(&c, &m, NULL), MFU_OK);
    assert_true(mfu_monitor_peak_flops_per_s(m) == fp32);
    mfu_monitor_free(m);
    c.peak_flops_per_s = 100e12;
    c.device = NULL;
    c.dtype = NULL;
    /* a report needs a step */
    assert_int_equal(mfu_monitor_new(&c, &m, NULL), MFU_OK);
    mfu_report *r = NULL;
    assert_int_equal(mfu_monitor_report(m, &r, NULL), MFU_E_EMPTY);
    assert_null(r);
    mfu_monitor_free(m);
}

/* The file: a header, then one row per new step; read back it is the monitor's run, and a
 * second monitor on the same file appends without a second header. */
static void jsonl_file(void **state)
{
    (void)state;
    char path[] = "/tmp/mfu-test-monitor-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    mfu_monitor_config c = base();
    c.jsonl_path = path;
    c.name = "llama3-8b on 8 GPUs";
    mfu_monitor *m = NULL;
    assert_int_equal(mfu_monitor_new(&c, &m, NULL), MFU_OK);
    for (int i = 1; i <= 50; i++)
        assert_int_equal(mfu_monitor_record(m, i, 262144, 1.5 + 0.001 * i, 3.0 / i, NULL, NULL),
                         MFU_OK);
    /* a repeat merges into its row and writes nothing */
    mfu_step rep;
    mfu_step_init(&rep);
    rep.step = 50;
    rep.tokens = 262144;
    rep.step_time_s = 9;
    rep.clock_mhz = 1980;
    mfu_monitor_sample first, again;
    assert_int_equal(mfu_monitor_record(m, 49, 262144, 1.5 + 0.001 * 49, 3.0 / 49, &first, NULL),
                     MFU_OK); /* a repeat of step 49: merged too */
    assert_int_equal(mfu_monitor_step(m, &rep, &again, NULL), MFU_OK);
    assert_int_equal(mfu_run_count(mfu_monitor_run(m)), 50);
    /* the figures of a merged repeat are its row's (step time 1.55, not the repeat's 9 s) */
    assert_true(fabs(again.tokens_per_s - 262144 / (1.5 + 0.001 * 50)) < 1e-6);
    mfu_report *rep50 = NULL;
    assert_int_equal(mfu_monitor_report(m, &rep50, NULL), MFU_OK);
    const double *mfu_col = mfu_report_column(rep50, MFU_RS_MFU);
    assert_true(again.mfu == mfu_col[49] && first.mfu == mfu_col[48]);
    mfu_report_free(rep50);
    mfu_monitor_free(m);
    /* a second monitor appends */
    assert_int_equal(mfu_monitor_new(&c, &m, NULL), MFU_OK);
    for (int i = 51; i <= 60; i++)
        assert_int_equal(mfu_monitor_record(m, i, 262144, 1.5, 2.0, NULL, NULL), MFU_OK);
    mfu_monitor_free(m);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[4096];
    int headers = 0, rows = 0;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "{\"mfu_run\":1", 12) == 0)
            headers++;
        else
            rows++;
    }
    fclose(f);
    assert_int_equal(headers, 1);
    assert_int_equal(rows, 60);
    mfu_run *back = NULL;
    mfu_ingest_stats st;
    mfu_error e;
    memset(&e, 0, sizeof e);
    assert_int_equal(mfu_ingest_path(path, NULL, &back, &st, &e), MFU_OK);
    assert_string_equal(st.format, "mfu");
    assert_int_equal(mfu_run_count(back), 60);
    mfu_step s;
    assert_true(mfu_run_get(back, 9, &s));
    assert_int_equal(s.step, 10);
    assert_true(s.step_time_s == 1.5 + 0.001 * 10);
    assert_true(s.loss == 3.0 / 10);
    assert_true(s.tokens == 262144);
    const mfu_run_meta *meta = mfu_run_meta_get(back);
    assert_string_equal(meta->model, "llama3-8b on 8 GPUs");
    assert_int_equal(meta->seq_len, 8192);
    assert_int_equal(meta->world_size, 8);
    mfu_run_free(back);
    unlink(path);
}

/* Lines and bytes of a file. */
static long file_lines(const char *path, long *bytes, char *last)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    long n = 0, b = 0;
    int c, prev = '\n';
    while ((c = fgetc(f)) != EOF) {
        b++;
        n += c == '\n';
        prev = c;
    }
    fclose(f);
    if (bytes)
        *bytes = b;
    if (last)
        *last = (char)prev;
    return n;
}

static char *file_text(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    char *buf = malloc(1 << 22);
    assert_non_null(buf);
    *n = fread(buf, 1, 1 << 22, f);
    fclose(f);
    return buf;
}

static void tmp_path(char *path)
{
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
}

/* The writes to the file are batched: nothing but the header before a flush (with a long
 * interval), everything after mfu_monitor_flush and after free, every step at once with
 * interval 0, at the first record after the interval has passed, and whole lines when the
 * buffer fills. The bytes are those the unbatched writer gives for the same run. */
static void jsonl_batched(void **state)
{
    (void)state;
    char path[] = "/tmp/mfu-test-monitor-XXXXXX", every[] = "/tmp/mfu-test-monitor-XXXXXX";
    tmp_path(path);
    tmp_path(every);
    mfu_monitor_config c = base();
    c.jsonl_path = path;
    mfu_monitor *m = NULL, *m0 = NULL;
    mfu_error e;
    assert_int_equal(mfu_monitor_new(&c, &m, NULL), MFU_OK);
    c.jsonl_path = every;
    assert_int_equal(mfu_monitor_new(&c, &m0, NULL), MFU_OK);
    assert_int_equal(mfu_monitor_set_flush_interval(m, 3600, NULL), MFU_OK);
    assert_int_equal(mfu_monitor_set_flush_interval(m0, 0, NULL), MFU_OK);
    for (int i = 1; i <= 10; i++) {
        double loss = 2.0 + 1.0 / (1.0 + i * 1e-3); /* 17 significant digits */
        assert_int_equal(mfu_monitor_record(m, i, 262144, 1.5 + 0.001 * i, loss, NULL, NULL),
                         MFU_OK);
        assert_int_equal(mfu_monitor_record(m0, i, 262144, 1.5 + 0.001 * i, loss, NULL, NULL),
                         MFU_OK);
        assert_int_equal(file_lines(every, NULL, NULL), 1 + i); /* interval 0: at once */
    }
    assert_int_equal(file_lines(path, NULL, NULL), 1); /* the header alone */
    assert_int_equal(mfu_monitor_flush(m, NULL), MFU_OK);
    assert_int_equal(file_lines(path, NULL, NULL), 11);
    assert_int_equal(mfu_monitor_flush(m, NULL), MFU_OK); /* nothing left: no change */
    assert_int_equal(file_lines(path, NULL, NULL), 11);
    for (int i = 11; i <= 15; i++) {
        assert_int_equal(mfu_monitor_record(m, i, 262144, 1.25, 2.5, NULL, NULL), MFU_OK);
        assert_int_equal(mfu_monitor_record(m0, i, 262144, 1.25, 2.5, NULL, NULL), MFU_OK);
    }
    assert_int_equal(file_lines(path, NULL, NULL), 11);
    /* what the unbatched public writer gives for the same run */
    FILE *ref = tmpfile();
    assert_non_null(ref);
    assert_int_equal(mfu_run_write_jsonl_rows(mfu_monitor_run(m), 0, true, ref, NULL), MFU_OK);
    mfu_monitor_free(m); /* writes the last 5 */
    mfu_monitor_free(m0);
    assert_int_equal(file_lines(path, NULL, NULL), 16);
    size_t na, nb;
    char *a = file_text(path, &na), *b = file_text(every, &nb);
    assert_int_equal(na, nb);
    assert_memory_equal(a, b, na);
    rewind(ref);
    char *r = malloc(na + 1);
    assert_non_null(r);
    assert_int_equal(fread(r, 1, na + 1, ref), na);
    assert_memory_equal(a, r, na);
    fclose(ref);
    free(a);
    free(b);
    free(r);

    /* the interval: a record after it has passed writes what is pending */
    remove(path);
    c.jsonl_path = path;
    assert_int_equal(mfu_monitor_new(&c, &m, NULL), MFU_OK);
    assert_int_equal(mfu_monitor_set_flush_interval(m, 0.05, NULL), MFU_OK);
    assert_int_equal(mfu_monitor_record(m, 1, 262144, 1.5, 2.0, NULL, NULL), MFU_OK);
    struct timespec pause = {0, 120 * 1000 * 1000};
    nanosleep(&pause, NULL);
    assert_int_equal(mfu_monitor_record(m, 2, 262144, 1.5, 2.0, NULL, NULL), MFU_OK);
    assert_int_equal(file_lines(path, NULL, NULL), 3);
    /* a full buffer is written without a flush, in whole lines */
    assert_int_equal(mfu_monitor_set_flush_interval(m, 3600, NULL), MFU_OK);
    for (int i = 3; i <= 3000; i++)
        assert_int_equal(mfu_monitor_record(m, i, 262144, 1.5, 2.0 + i, NULL, NULL), MFU_OK);
    long bytes;
    char last;
    long lines = file_lines(path, &bytes, &last);
    assert_true(lines > 3 && lines < 3001);
    assert_true(last == '\n');
    assert_true(bytes >= MFU_MONITOR_FLUSH_BYTES);
    mfu_monitor_free(m);
    assert_int_equal(file_lines(path, NULL, NULL), 3001);
    mfu_run *back = NULL;
    memset(&e, 0, sizeof e);
    assert_int_equal(mfu_ingest_path(path, NULL, &back, NULL, &e), MFU_OK);
    assert_int_equal(mfu_run_count(back), 3000);
    mfu_run_free(back);

    /* bad intervals */
    assert_int_equal(mfu_monitor_new(&c, &m, NULL), MFU_OK);
    const double bad[] = {-1, NAN, INFINITY};
    for (size_t i = 0; i < 3; i++) {
        memset(&e, 0, sizeof e);
        assert_int_equal(mfu_monitor_set_flush_interval(m, bad[i], &e), MFU_E_INVALID);
        assert_string_equal(e.field, "flush_interval");
    }
    assert_int_equal(mfu_monitor_flush(NULL, &e), MFU_E_INVALID);
    mfu_monitor_free(m);
    unlink(path);
    unlink(every);
}

/* record_many: the same figures as one record at a time; at a bad step, the count before it
 * is returned, those are recorded, and err says why. */
static void record_many(void **state)
{
    (void)state;
    mfu_monitor_config c = base();
    mfu_monitor *one = NULL, *many = NULL;
    assert_int_equal(mfu_monitor_new(&c, &one, NULL), MFU_OK);
    assert_int_equal(mfu_monitor_new(&c, &many, NULL), MFU_OK);
    mfu_step st[20];
    mfu_monitor_sample want[20], got[20];
    for (int i = 0; i < 20; i++) {
        mfu_step_init(&st[i]);
        st[i].step = i + 1;
        st[i].tokens = 262144 + 1024 * i;
        st[i].step_time_s = 1.5 + 0.01 * i;
        st[i].loss = 3.0 / (i + 1);
        assert_int_equal(mfu_monitor_step(one, &st[i], &want[i], NULL), MFU_OK);
    }
    assert_int_equal(mfu_monitor_record_many(many, st, 20, got, NULL), 20);
    for (int i = 0; i < 20; i++) {
        assert_int_equal(got[i].step, want[i].step);
        assert_true(got[i].mfu == want[i].mfu && got[i].tokens_per_s == want[i].tokens_per_s);
    }
    for (int i = 0; i < 5; i++)
        st[i].step += 100;
    st[3].tokens = 0;
    mfu_error e;
    memset(&e, 0, sizeof e);
    assert_int_equal(mfu_monitor_record_many(many, st, 5, NULL, &e), 3);
    assert_int_equal(e.code, MFU_E_INVALID);
    assert_string_equal(e.field, "tokens");
    assert_int_equal(mfu_run_count(mfu_monitor_run(many)), 23);
    assert_int_equal(mfu_monitor_record_many(NULL, st, 5, NULL, NULL), 0);
    assert_int_equal(mfu_monitor_record_many(many, NULL, 5, NULL, NULL), 0);
    assert_int_equal(mfu_monitor_record_many(many, NULL, 0, NULL, NULL), 0);
    mfu_monitor_free(one);
    mfu_monitor_free(many);
}

/* attention "full" counts the whole score matrix, as mfu_flops_compute does; a bad name is the
 * attention parser's error. */
static void attention_mode(void **state)
{
    (void)state;
    mfu_arch a;
    assert_int_equal(mfu_preset_find("gpt2", &a, NULL), MFU_OK);
    mfu_workload wl;
    memset(&wl, 0, sizeof wl);
    wl.seq = 1024;
    mfu_flops_options fo;
    memset(&fo, 0, sizeof fo);
    fo.attention = MFU_ATTENTION_FULL;
    mfu_flops full, causal;
    assert_int_equal(mfu_flops_compute(&a, &wl, &fo, &full, NULL), MFU_OK);
    assert_int_equal(mfu_flops_compute(&a, &wl, NULL, &causal, NULL), MFU_OK);
    assert_true(full.model_flops > causal.model_flops);
    mfu_monitor_config c = base();
    c.model = "gpt2";
    c.seq = 1024;
    c.attention = "full";
    mfu_monitor *m = NULL;
    assert_int_equal(mfu_monitor_new(&c, &m, NULL), MFU_OK);
    assert_true(mfu_monitor_model_flops_per_token(m) == full.model_flops);
    mfu_monitor_free(m);
    c.attention = "causal";
    assert_int_equal(mfu_monitor_new(&c, &m, NULL), MFU_OK);
    assert_true(mfu_monitor_model_flops_per_token(m) == causal.model_flops);
    mfu_monitor_free(m);
    c.attention = "sideways";
    expect_error(&c, MFU_E_UNKNOWN, "--attention", NULL);
    assert_int_equal(mfu_struct_size("mfu_arch"), sizeof(mfu_arch));
}

/* The file's header names the device by the id the table resolves, and states the peak the
 * monitor divides by: the report of the file read back, given the model only, has the
 * monitor's MFU, for a table device and for this machine's CPU (which no table holds). */
static void header_device(void **state)
{
    (void)state;
    const char *devs[] = {"NVIDIA H100 80GB HBM3", "cpu"};
    const char *ids[] = {"h100-sxm", "cpu"};
    for (int k = 0; k < 2; k++) {
        char path[] = "/tmp/mfu-test-monitor-XXXXXX";
        int fd = mkstemp(path);
        assert_true(fd >= 0);
        close(fd);
        mfu_monitor_config c = base();
        c.model = "gpt2";
        c.seq = 1024;
        c.device = devs[k];
        c.dtype = "fp32";
        c.devices = 1;
        c.jsonl_path = path;
        mfu_monitor *m = NULL;
        assert_int_equal(mfu_monitor_new(&c, &m, NULL), MFU_OK);
        double peak = mfu_monitor_peak_flops_per_s(m);
        mfu_monitor_sample s[8];
        for (int i = 0; i < 8; i++)
            assert_int_equal(mfu_monitor_record(m, i + 1, 8192, 0.5 + 0.01 * i, 3.0, &s[i], NULL),
                             MFU_OK);
        mfu_monitor_free(m);
        mfu_run *back = NULL;
        mfu_ingest_stats st;
        assert_int_equal(mfu_ingest_path(path, NULL, &back, &st, NULL), MFU_OK);
        const mfu_run_meta *meta = mfu_run_meta_get(back);
        assert_string_equal(meta->device, ids[k]);
        assert_string_equal(meta->dtype, "fp32");
        assert_true(meta->reported_peak_flops_per_s == peak);
        mfu_report_input in;
        memset(&in, 0, sizeof in);
        in.has_arch = true;
        assert_int_equal(mfu_preset_find("gpt2", &in.arch, NULL), MFU_OK);
        mfu_report *r = NULL;
        assert_int_equal(mfu_report_compute(back, &in, &r, NULL), MFU_OK);
        const mfu_report_context *ctx = mfu_report_get_context(r);
        assert_true(ctx->peak_flops_per_s == peak);
        assert_int_equal(ctx->peak_source, MFU_SRC_LOG);
        assert_true(k == 0 ? ctx->device != NULL : ctx->device == NULL);
        const double *col = mfu_report_column(r, MFU_RS_MFU);
        for (int i = 0; i < 8; i++)
            assert_true(fabs(col[i] - s[i].mfu) <= 1e-15 * s[i].mfu);
        mfu_report_free(r);
        mfu_run_free(back);
        unlink(path);
    }
}

/* ---- NVML (the fake the tests build: tests/fake/nvml_fake.c) ---------------------------- */

static const char *write_script(const char *text)
{
    static char path[64];
    snprintf(path, sizeof path, "/tmp/mfu-monitor-nvml-XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    setenv("MFU_FAKE_NVML_SCRIPT", path, 1);
    return path;
}

static const mfu_finding *find_kind(const mfu_report *r, const char *kind)
{
    const mfu_analysis *a = mfu_report_analysis(r);
    assert_non_null(a);
    for (size_t i = 0; i < mfu_analysis_finding_count(a); i++)
        if (strcmp(mfu_analysis_finding(a, i)->kind, kind) == 0)
            return mfu_analysis_finding(a, i);
    return NULL;
}

static double evidence(const mfu_finding *f, const char *name)
{
    for (size_t i = 0; i < f->nevidence; i++)
        if (strcmp(f->evidence[i].name, name) == 0)
            return f->evidence[i].value;
    fail_msg("finding %s has no evidence %s", f->kind, name);
    return NAN;
}

/* nvml off never loads NVML; nvml on needs it and names what is missing. */
static void nvml_config(void **state)
{
    (void)state;
    setenv("MFU_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
    mfu_monitor_config c = base();
    mfu_monitor *m = NULL;
    assert_int_equal(mfu_monitor_new(&c, &m, NULL), MFU_OK);
    mfu_monitor_free(m);
    c.nvml = true;
    expect_error(&c, MFU_E_UNSUPPORTED, "MFU_NVML_LIBRARY", "NVML not found");
    setenv("MFU_NVML_LIBRARY", fake_nvml(), 1);
    unsetenv("MFU_FAKE_NVML_SCRIPT"); /* the fake's one GPU */
    c.nvml_index = 1;
    expect_error(&c, MFU_E_INVALID, "nvml_index", "NVML sees 1 GPU(s)");
    c.nvml_index = -1;
    expect_error(&c, MFU_E_INVALID, "nvml_index", NULL);
    unsetenv("MFU_NVML_LIBRARY");
}

/* NVML reports the clock falling from 1980 to 1400 MHz for 30 of 200 steps, and those steps
 * take 1980/1400 as long (compute-bound): the report of the monitor's steps finds throttling
 * there, with NVML's clock as evidence. Power comes from NVML too; a step that carries its own
 * clock keeps it. A failing NVML call fails the record and records nothing. */
static void nvml_clock_drop_is_throttling(void **state)
{
    (void)state;
    const char *path = write_script("device NVIDIA GeForce RTX 4090\n" /* GPU 0: not used */
                                    "device NVIDIA H100 80GB HBM3\n"
                                    "clock 1980*80 1400*30 1980*90 1234 1980\n"
                                    "power 450000*200 451000\n"
                                    "limit 700000\n");
    setenv("MFU_NVML_LIBRARY", fake_nvml(), 1);
    mfu_monitor_config c = base();
    c.nvml = true;
    c.nvml_index = 1;
    mfu_monitor *m = NULL;
    mfu_error e;
    memset(&e, 0, sizeof e);
    assert_int_equal(mfu_monitor_new(&c, &m, &e), MFU_OK);
    for (int64_t i = 1; i <= 200; i++) {
        bool slow = i >= 81 && i <= 110;
        double t = 2.0 * (slow ? 1980.0 / 1400.0 : 1.0);
        assert_int_equal(mfu_monitor_record(m, i, 8 * 8192, t, NAN, NULL, &e), MFU_OK);
    }
    const mfu_run *run = mfu_monitor_run(m);
    mfu_step s;
    assert_true(mfu_run_get(run, 0, &s));
    assert_true(s.clock_mhz == 1980 && s.power_w == 450 && s.power_limit_w == 700);
    assert_true(mfu_run_get(run, 85, &s)); /* step 86 */
    assert_true(s.clock_mhz == 1400);
    mfu_report *r = NULL;
    assert_int_equal(mfu_monitor_report(m, &r, &e), MFU_OK);
    const mfu_finding *f = find_kind(r, "throttling");
    assert_non_null(f);
    assert_true(evidence(f, "clock_mhz") == 1400);
    assert_true(evidence(f, "reference_clock_mhz") == 1980);
    assert_true(evidence(f, "affected_steps") == 30);
    assert_int_equal(f->first_step, 81);
    assert_int_equal(f->last_step, 110);
    /* 1 - 1400/1980: the tokens/s lost in those steps */
    assert_true(fabs(evidence(f, "tokens_per_s_drop") - (1 - 1400.0 / 1980.0)) < 1e-9);
    assert_null(find_kind(r, "power_cap")); /* 450 of 700 W is not the limit */
    mfu_report_free(r);

    /* a step with its own clock keeps it; its missing power still comes from NVML (call 201) */
    mfu_step own;
    mfu_step_init(&own);
    own.step = 201;
    own.tokens = 8 * 8192;
    own.step_time_s = 2.0;
    own.clock_mhz = 1700;
    assert_int_equal(mfu_monitor_step(m, &own, NULL, &e), MFU_OK);
    assert_true(mfu_run_get(run, 200, &s));
    assert_true(s.clock_mhz == 1700 && s.power_w == 451);
    mfu_monitor_free(m);
    unlink(path);

    /* NVML failing at record time: the error names the function; nothing recorded */
    path = write_script("device NVIDIA H100 80GB HBM3\nfail nvmlDeviceGetClockInfo 15\n");
    c.nvml_index = 0;
    assert_int_equal(mfu_monitor_new(&c, &m, &e), MFU_OK);
    memset(&e, 0, sizeof e);
    assert_int_equal(mfu_monitor_record(m, 1, 8 * 8192, 2.0, NAN, NULL, &e), MFU_E_IO);
    assert_non_null(strstr(e.message, "nvmlDeviceGetClockInfo"));
    assert_non_null(strstr(e.message, "GPU is lost"));
    assert_int_equal(mfu_run_count(mfu_monitor_run(m)), 0);
    /* a step carrying all four (and its tensor activity) never asks NVML */
    mfu_step_init(&own);
    own.step = 1;
    own.tokens = 8 * 8192;
    own.step_time_s = 2.0;
    own.clock_mhz = 1980;
    own.power_w = 600;
    own.power_limit_w = 700;
    own.energy_j = 1200;
    own.tensor_active = 0.5;
    mfu_monitor_sample kept;
    assert_int_equal(mfu_monitor_step(m, &own, &kept, &e), MFU_OK);
    assert_int_equal(mfu_run_count(mfu_monitor_run(m)), 1);
    /* and its own figures are the ones kept (NVML's GPM does not replace them) */
    mfu_step back;
    assert_true(mfu_run_get(mfu_monitor_run(m), 0, &back));
    assert_true(back.tensor_active == 0.5 && kept.tensor_active == 0.5);
    assert_true(back.energy_j == 1200 && back.power_w == 600);
    mfu_monitor_free(m);
    unlink(path);
    unsetenv("MFU_FAKE_NVML_SCRIPT");
    unsetenv("MFU_NVML_LIBRARY");
}

/* Monitor `steps` steps of 8 x 8192 tokens in 2 s (llama3-8b on 8 H100s: MFU about 22 %)
 * under the script; the report's energy figures in *e. */
static void energy_run(const char *text, int steps, mfu_monitor_sample *out, mfu_energy *e)
{
    const char *path = write_script(text);
    setenv("MFU_NVML_LIBRARY", fake_nvml(), 1);
    mfu_monitor_config c = base();
    c.nvml = true;
    mfu_monitor *m = NULL;
    mfu_error err;
    memset(&err, 0, sizeof err);
    assert_int_equal(mfu_monitor_new(&c, &m, &err), MFU_OK);
    for (int i = 0; i < steps; i++)
        assert_int_equal(mfu_monitor_record(m, i + 1, 8 * 8192, 2.0, NAN, &out[i], &err), MFU_OK);
    mfu_report *r = NULL;
    assert_int_equal(mfu_monitor_report(m, &r, &err), MFU_OK);
    *e = *mfu_report_get_energy(r);
    mfu_report_free(r);
    mfu_monitor_free(m);
    unlink(path);
    unsetenv("MFU_FAKE_NVML_SCRIPT");
    unsetenv("MFU_NVML_LIBRARY");
}

/* The GPU's energy counter (mJ) gives each step's energy as its increase since the previous
 * record; joules per useful PFLOP and tokens per kWh follow by the arithmetic here. GPM's
 * tensor activity is checked against MFU both ways. */
static void nvml_energy_figures(void **state)
{
    (void)state;
    enum { N = 30 };
    mfu_monitor_sample o[N];
    mfu_energy e;
    /* counter: 10 kJ, then +1100.5 J, +1200 J, then +1150.25 J a step; tensor 30 % */
    char text[8192];
    int k = snprintf(text, sizeof text,
                     "device NVIDIA H100 80GB HBM3\ntensor 30\nenergy 10000000 11100500 12300500");
    for (int i = 3; i < N; i++)
        k += snprintf(text + k, sizeof text - (size_t)k, " %llu",
                      12300500ull + 1150250ull * (unsigned long long)(i - 2));
    snprintf(text + k, sizeof text - (size_t)k, "\n");
    energy_run(text, N, o, &e);
    double fpt = model_fpt("llama3-8b", 8192, MFU_RECOMPUTE_NONE, NULL);
    double flops_dev = fpt * 8 * 8192 / 8; /* one device's useful FLOPs in a step */
    /* the first record starts the count: energy from nothing (no power_w: the fake's 500 W
     * is sampled, so power x time) */
    assert_true(o[0].energy_j == 500 * 2.0);
    assert_true(o[1].energy_j == 1100.5);
    assert_true(o[2].energy_j == 1200);
    for (int i = 3; i < N; i++)
        assert_true(o[i].energy_j == 1150.25);
    for (int i = 0; i < N; i++) {
        double want = o[i].energy_j / (flops_dev / 1e15);
        assert_true(fabs(o[i].joules_per_pflop - want) <= 1e-12 * want);
        double kwh = o[i].energy_j * 8 / 3.6e6; /* eight devices */
        assert_true(fabs(o[i].tokens_per_kwh - 8 * 8192 / kwh) <= 1e-12 * (8 * 8192 / kwh));
        /* GPM: nothing at the first record, then the fake's 30 % */
        assert_true(i == 0 ? isnan(o[i].tensor_active) : o[i].tensor_active == 0.30);
        assert_true(o[i].mfu > 0.15 && o[i].mfu < 0.30);
    }
    /* the report over its steady steps: the same arithmetic as ratio of sums */
    assert_true(e.steps > 20);
    assert_true(e.tensor_active == 0.30);
    assert_int_equal(e.check, MFU_TENSOR_CHECK_CONSISTENT);
    /* every step steady (equal times): the mean energy over the useful PFLOPs of a step */
    assert_int_equal(e.steps, N);
    assert_int_equal(e.power_steps, 1);
    double sum = 1000 + 1100.5 + 1200 + 1150.25 * (N - 3);
    assert_true(fabs(e.joules - 8 * sum) <= 1e-9 * e.joules);
    double jpp = sum / N / (flops_dev / 1e15);
    assert_true(fabs(e.joules_per_pflop - jpp) <= 1e-12 * jpp);
    double tpk = N * 8 * 8192 / (8 * sum / 3.6e6);
    assert_true(fabs(e.tokens_per_kwh - tpk) <= 1e-12 * tpk);

    /* tensor pipes 15 % busy under an MFU of 22 %: a counting error, said so */
    energy_run("device NVIDIA H100 80GB HBM3\ntensor 15\n", N, o, &e);
    assert_int_equal(e.check, MFU_TENSOR_CHECK_MFU_ABOVE);
    assert_non_null(strstr(e.check_text, "above the tensor pipes' activity 15.0 %"));
    assert_non_null(strstr(e.check_text, "counted wrong"));
    /* the fake's default counter: 250 J a record */
    assert_true(o[5].energy_j == 250);
    /* 60 % busy: far below, wasted tensor work */
    energy_run("device NVIDIA H100 80GB HBM3\ntensor 60\n", N, o, &e);
    assert_int_equal(e.check, MFU_TENSOR_CHECK_FAR_BELOW);
    assert_non_null(strstr(e.check_text, "far below the tensor pipes' activity 60.0 %"));
    /* no GPM on the GPU: no activity, no check; energy still there */
    energy_run("device NVIDIA H100 80GB HBM3\ngpm 0\n", N, o, &e);
    assert_true(isnan(o[N - 1].tensor_active));
    assert_int_equal(e.tensor_steps, 0);
    assert_int_equal(e.check, MFU_TENSOR_CHECK_NONE);
    assert_true(e.steps > 0 && o[N - 1].energy_j == 250);
}

/* An old driver's NVML: no energy counter, no GPM. Energy comes from the sampled power x the
 * step time; nothing else changes. */
static void nvml_old_driver_energy(void **state)
{
    (void)state;
    const char *old = getenv("MFU_FAKE_NVML_OLD");
    assert_non_null(old);
    unsetenv("MFU_FAKE_NVML_SCRIPT");
    setenv("MFU_NVML_LIBRARY", old, 1);
    mfu_monitor_config c = base();
    c.nvml = true;
    mfu_monitor *m = NULL;
    mfu_error err;
    memset(&err, 0, sizeof err);
    assert_int_equal(mfu_monitor_new(&c, &m, &err), MFU_OK);
    mfu_monitor_sample o;
    for (int i = 1; i <= 3; i++)
        assert_int_equal(mfu_monitor_record(m, i, 8 * 8192, 2.0, NAN, &o, &err), MFU_OK);
    mfu_step s;
    assert_true(mfu_run_get(mfu_monitor_run(m), 2, &s));
    assert_true(isnan(s.energy_j) && isnan(s.tensor_active));
    assert_true(o.energy_j == 500 * 2.0);
    assert_true(isnan(o.tensor_active));
    mfu_monitor_free(m);
    unsetenv("MFU_NVML_LIBRARY");

    /* without NVML and without power: no energy figure at all */
    c.nvml = false;
    assert_int_equal(mfu_monitor_new(&c, &m, &err), MFU_OK);
    assert_int_equal(mfu_monitor_record(m, 1, 8 * 8192, 2.0, NAN, &o, &err), MFU_OK);
    assert_true(isnan(o.energy_j) && isnan(o.joules_per_pflop) && isnan(o.tokens_per_kwh));
    mfu_monitor_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(config_errors),
        cmocka_unit_test(figures_by_hand),
        cmocka_unit_test(report_agrees_per_step),
        cmocka_unit_test(without_model_or_device),
        cmocka_unit_test(jsonl_file),
        cmocka_unit_test(jsonl_batched),
        cmocka_unit_test(record_many),
        cmocka_unit_test(attention_mode),
        cmocka_unit_test(header_device),
        cmocka_unit_test(nvml_config),
        cmocka_unit_test(nvml_clock_drop_is_throttling),
        cmocka_unit_test(nvml_energy_figures),
        cmocka_unit_test(nvml_old_driver_energy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
