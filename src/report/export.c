/*
 * export.c - a report's per-step series for other tools: CSV (spreadsheets, pandas) and
 * TensorBoard event files (mfu/report.h: mfu_report_write_csv, mfu_report_write_tfevents).
 *
 * TensorBoard's event file is a sequence of records
 *     uint64 length | uint32 masked CRC-32C of the length | data | uint32 masked CRC-32C of data
 * (little-endian; masked = ((crc >> 15) | (crc << 17)) + 0xa282ead8), each data an `Event`
 * protocol buffer: wall_time (field 1, double), step (2, varint) and either file_version (3,
 * string: "brain.Event:2" in the first record) or summary (5) holding `Value`s of a tag (1,
 * string) and a simple_value (2, float). Facts from TensorFlow's record format
 * (tensorflow/core/lib/io/record_writer, documented in its TFRecord guide) and its event.proto
 * / summary.proto; the encoder below is written here, the protobuf wire format is Google's
 * published encoding (varints, wire types 1 = 64-bit, 2 = length-delimited, 5 = 32-bit).
 */
#define _POSIX_C_SOURCE 200809L /* gethostname, mkdir, stat */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "report/internal.h"

/* The series exported, in column order. */
static const mfu_report_series exported[] = {
    MFU_RS_STEP_TIME_S,
    MFU_RS_TOKENS,
    MFU_RS_TOKENS_PER_S,
    MFU_RS_TOKENS_PER_S_PER_DEVICE,
    MFU_RS_MODEL_FLOPS_PER_S_PER_DEVICE,
    MFU_RS_HARDWARE_FLOPS_PER_S_PER_DEVICE,
    MFU_RS_MFU,
    MFU_RS_HFU,
    MFU_RS_REPORTED_MFU,
    MFU_RS_REPORTED_FLOPS_PER_S_PER_DEVICE,
    MFU_RS_REPORTED_TOKENS_PER_S,
    MFU_RS_LOSS,
};
#define NEXPORTED (sizeof exported / sizeof exported[0])

/* ---- CSV ---------------------------------------------------------------------------------- */

/* A CSV field: quoted when it holds a comma, quote or line break (RFC 4180). */
static void csv_text(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

mfu_status mfu_report_write_csv(const mfu_report *r, const char *run, bool header, FILE *out,
                                mfu_error *err)
{
    if (!r || !out)
        return mfu__fail(err, MFU_E_INVALID, 0,
                         "mfu_report_write_csv: report and out are required");
    if (header) {
        fputs("run,step,state", out);
        for (size_t k = 0; k < NEXPORTED; k++)
            fprintf(out, ",%s", mfu_report_series_name(exported[k]));
        fputs("\n", out);
    }
    const int64_t *steps = mfu_report_steps(r);
    const double *col[NEXPORTED];
    for (size_t k = 0; k < NEXPORTED; k++)
        col[k] = mfu_report_column(r, exported[k]);
    for (size_t i = 0; i < mfu_report_step_count(r); i++) {
        csv_text(out, run ? run : "");
        fprintf(out, ",%lld,%s", (long long)steps[i],
                mfu_report_step_state_name(mfu_report_step_state_at(r, i)));
        for (size_t k = 0; k < NEXPORTED; k++) {
            double v = col[k] ? col[k][i] : NAN;
            if (isfinite(v)) {
                char num[40];
                mfu__fmt_roundtrip(num, sizeof num, v);
                fprintf(out, ",%s", num);
            } else if (isinf(v))
                fputs(v > 0 ? ",inf" : ",-inf", out);
            else if (exported[k] == MFU_RS_LOSS && r->loss_nan[i])
                fputs(",nan", out); /* logged, as nan: not the same as absent */
            else
                fputs(",", out); /* absent: an empty field */
        }
        fputs("\n", out);
    }
    if (fflush(out) != 0 || ferror(out))
        return mfu__fail(err, MFU_E_IO, 0, "writing the CSV failed; check the disk or the path");
    return MFU_OK;
}

/* ---- TensorBoard -------------------------------------------------------------------------- */

/* CRC-32C (Castagnoli, reflected polynomial 0x82f63b78), bit by bit: event files are small. */
uint32_t mfu__crc32c(const void *data, size_t n)
{
    const unsigned char *p = data;
    uint32_t crc = 0xffffffffu;
    for (size_t i = 0; i < n; i++) {
        crc ^= p[i];
        for (int b = 0; b < 8; b++)
            crc = (crc >> 1) ^ (0x82f63b78u & (0u - (crc & 1u)));
    }
    return crc ^ 0xffffffffu;
}

static uint32_t masked_crc(const void *data, size_t n)
{
    uint32_t c = mfu__crc32c(data, n);
    return ((c >> 15) | (c << 17)) + 0xa282ead8u;
}

/* A protobuf message being built, bounded (an event here is well under a kilobyte). */
typedef struct pb {
    unsigned char b[1024];
    size_t n;
    bool full;
} pb;

static void pb_bytes(pb *m, const void *s, size_t n)
{
    if (m->n + n > sizeof m->b) {
        m->full = true;
        return;
    }
    memcpy(m->b + m->n, s, n);
    m->n += n;
}

static void pb_varint(pb *m, uint64_t v)
{
    unsigned char t[10];
    size_t k = 0;
    do {
        t[k++] = (unsigned char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
    pb_bytes(m, t, k);
}

static void pb_le(pb *m, uint64_t v, int bytes)
{
    unsigned char t[8];
    for (int i = 0; i < bytes; i++)
        t[i] = (unsigned char)(v >> (8 * i));
    pb_bytes(m, t, (size_t)bytes);
}

static void pb_double(pb *m, int field, double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    pb_varint(m, (uint64_t)field << 3 | 1);
    pb_le(m, u, 8);
}

static void pb_float(pb *m, int field, float v)
{
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    pb_varint(m, (uint64_t)field << 3 | 5);
    pb_le(m, u, 4);
}

static void pb_len(pb *m, int field, const void *s, size_t n)
{
    pb_varint(m, (uint64_t)field << 3 | 2);
    pb_varint(m, n);
    pb_bytes(m, s, n);
}

/* One record around data. false when the write failed. */
static bool write_record(FILE *f, const pb *data)
{
    unsigned char len[8];
    for (int i = 0; i < 8; i++)
        len[i] = (unsigned char)((uint64_t)data->n >> (8 * i));
    unsigned char c1[4], c2[4];
    uint32_t a = masked_crc(len, 8), b = masked_crc(data->b, data->n);
    for (int i = 0; i < 4; i++) {
        c1[i] = (unsigned char)(a >> (8 * i));
        c2[i] = (unsigned char)(b >> (8 * i));
    }
    return fwrite(len, 1, 8, f) == 8 && fwrite(c1, 1, 4, f) == 4 &&
           fwrite(data->b, 1, data->n, f) == data->n && fwrite(c2, 1, 4, f) == 4;
}

/* The scalars TensorBoard shows, with their tags: mfu/NAME, NAME the series name, and two
 * figures the step was computed with (the figures module's columns). */
static const struct {
    int col; /* an mfu__fcol: a public series or one of the figures' own */
    const char *tag;
} scalars[] = {
    {MFU__FC_MFU, "mfu/mfu"},
    {MFU__FC_HFU, "mfu/hfu"},
    {MFU__FC_TOKENS_PER_S, "mfu/tokens_per_second"},
    {MFU__FC_MODEL_FLOPS_PER_S_PER_DEVICE, "mfu/model_flops_per_second_per_device"},
    {MFU__FC_STEP_TIME_S, "mfu/step_time_s"},
    {MFU__FC_REPORTED_MFU, "mfu/reported_mfu"},
    {MFU__FC_LOSS, "mfu/loss"},
    {MFU__FC_SEQ, "mfu/seq_len"},
    {MFU__FC_MODEL_FPT, "mfu/model_flops_per_token"},
};

/* mkdir -p: dir and every missing folder above it. false with errno set when one cannot be
 * made (or a path component is not a directory); bad (size n) gets that component. */
static bool make_dirs(const char *dir, char *bad, size_t n)
{
    char p[4096];
    if (mfu__strlcpy(p, dir, sizeof p) >= sizeof p) {
        mfu__strlcpy(bad, dir, n);
        errno = ENAMETOOLONG;
        return false;
    }
    for (char *q = p + 1;; q++) {
        if (*q != '/' && *q != '\0')
            continue;
        char c = *q;
        *q = '\0';
        struct stat sb;
        if (mkdir(p, 0777) != 0 && !(errno == EEXIST && stat(p, &sb) == 0 && S_ISDIR(sb.st_mode))) {
            if (errno == EEXIST)
                errno = ENOTDIR;
            mfu__strlcpy(bad, p, n);
            return false;
        }
        *q = c;
        if (!c)
            return true;
        while (q[1] == '/')
            q++;
        if (!q[1])
            return true;
    }
}

/* The time from row i-1's end to row i's end: the step time x the steps between the two rows (a
 * log that prints every k-th step averages over those k); 0 for the first row or without a step
 * time. */
static double span(const mfu_report *r, const double *dt, size_t i)
{
    if (i == 0 || !isfinite(dt[i]) || !(dt[i] > 0))
        return 0;
    int64_t gap = r->steps[i] - r->steps[i - 1];
    return dt[i] * (gap > 0 ? (double)gap : 1.0);
}

/* Each step's wall time, seconds since 1970, into w[0..n): its timestamp where the log has one;
 * between and after timestamps, the one before plus span(); before the first timestamp, the one
 * after less its span. A log without any timestamp ends its last step at end_s. A step without
 * a step time adds nothing (the event repeats the time before). */
static void wall_times(const mfu_report *r, double end_s, double *w)
{
    size_t n = r->n;
    const double *dt = r->cols.v[MFU__FC_STEP_TIME_S];
    size_t first = n;
    for (size_t i = 0; r->time_s && i < n && first == n; i++)
        if (isfinite(r->time_s[i]))
            first = i;
    if (first == n) { /* no timestamp: back from the end */
        w[n - 1] = end_s;
        for (size_t i = n - 1; i > 0; i--)
            w[i - 1] = w[i] - span(r, dt, i);
        return;
    }
    w[first] = r->time_s[first];
    for (size_t i = first; i > 0; i--)
        w[i - 1] = w[i] - span(r, dt, i);
    for (size_t i = first + 1; i < n; i++)
        w[i] = isfinite(r->time_s[i]) ? r->time_s[i] : w[i - 1] + span(r, dt, i);
}

mfu_status mfu_report_write_tfevents(const mfu_report *r, const char *dir, double wall_time_s,
                                     char *path, size_t npath, mfu_error *err)
{
    if (!r || !dir || !dir[0])
        return mfu__fail(err, MFU_E_INVALID, 0,
                         "mfu_report_write_tfevents: a report and a directory are required");
    /* the directory and every missing folder above it (DIR/RUN for one run of a call) */
    char bad[4096];
    if (!make_dirs(dir, bad, sizeof bad))
        return mfu__fail_field(err, MFU_E_IO, "--tensorboard",
                               "%s: cannot create the directory (%s: %s); give a writable path",
                               dir, bad, strerror(errno));
    double *w = malloc(r->n * sizeof *w);
    if (!w)
        return mfu__fail(err, MFU_E_NOMEM, 0, "out of memory for the wall times of %zu steps",
                         r->n);
    char host[64] = "localhost";
    if (gethostname(host, sizeof host) != 0)
        mfu__strlcpy(host, "localhost", sizeof host);
    host[sizeof host - 1] = '\0';
    for (char *h = host; *h; h++) /* a file name, whatever the host is called */
        if (*h == '/')
            *h = '_';
    if (!(wall_time_s > 0))
        wall_time_s = (double)time(NULL);
    wall_times(r, wall_time_s, w);
    /* the file is named after the run's start (the first step's wall time) */
    double start = r->n ? w[0] - (isfinite(r->cols.v[MFU__FC_STEP_TIME_S][0])
                                      ? r->cols.v[MFU__FC_STEP_TIME_S][0]
                                      : 0)
                        : wall_time_s;
    if (!(start > 0))
        start = w[0];
    char name[4096 + 128];
    snprintf(name, sizeof name, "%s/events.out.tfevents.%lld.%s.mfu", dir,
             (long long)mfu__int64_sat(start), host);
    FILE *f = fopen(name, "wb");
    if (!f) {
        free(w);
        return mfu__fail_field(err, MFU_E_IO, "--tensorboard",
                               "%s: cannot write it (%s); give a writable directory", name,
                               strerror(errno));
    }
    pb m = {{0}, 0, false};
    pb_double(&m, 1, start);
    pb_len(&m, 3, "brain.Event:2", 13);
    bool ok = write_record(f, &m);
    const int64_t *steps = mfu_report_steps(r);
    for (size_t i = 0; ok && i < mfu_report_step_count(r); i++) {
        pb sum = {{0}, 0, false};
        for (size_t k = 0; k < sizeof scalars / sizeof scalars[0]; k++) {
            double v = r->cols.v[scalars[k].col][i];
            if (!isfinite(v) && !(scalars[k].col == MFU__FC_LOSS && r->loss_nan[i]))
                continue; /* unknown; a loss logged as nan is written as NaN */
            pb val = {{0}, 0, false};
            pb_len(&val, 1, scalars[k].tag, strlen(scalars[k].tag));
            pb_float(&val, 2, isfinite(v) ? (float)v : NAN);
            pb_len(&sum, 1, val.b, val.n);
        }
        if (sum.n == 0)
            continue;
        pb ev = {{0}, 0, false};
        pb_double(&ev, 1, w[i]);
        pb_varint(&ev, 2 << 3 | 0);
        pb_varint(&ev, (uint64_t)steps[i]);
        pb_len(&ev, 5, sum.b, sum.n);
        ok = !ev.full && !sum.full && write_record(f, &ev);
    }
    free(w);
    ok = fclose(f) == 0 && ok;
    if (!ok) {
        remove(name);
        return mfu__fail_field(err, MFU_E_IO, "--tensorboard", "%s: writing it failed (disk full?)",
                               name);
    }
    if (path && npath)
        mfu__strlcpy(path, name, npath);
    return MFU_OK;
}
