/*
 * nvml_fake.c - a stand-in for NVIDIA's libnvidia-ml.so.1, built by the tests
 * (tests/CMakeLists.txt) so that mfu's NVML code runs where no GPU and no driver are: CI, the
 * sanitizer build, a laptop. It exports the entry points src/device/nvml.c looks up, with the
 * signatures of NVIDIA's NVML API reference, and answers from a script.
 *
 * Script: the file named by env MFU_FAKE_NVML_SCRIPT, read by the first nvmlInit_v2 (again after
 * the last nvmlShutdown). Without it: one "NVIDIA H100 80GB HBM3" at 1980 of 1980 MHz, 500 of
 * 700 W, no reasons, 55 C, 97 % / 40 % busy, an energy counter at 1000 J that grows by 250 J a
 * call, GPM with the tensor pipes 60 % active. One directive a line, '#' comments:
 *
 *   init CODE               nvmlInit_v2 returns CODE (an nvmlReturn_t number)
 *   count CODE              nvmlDeviceGetCount_v2 returns CODE
 *   device NAME...          a new GPU (the rest of the line is its name); what follows is its
 *   uuid TEXT
 *   clock V V ...           SM clock, MHz: one value per call, the last repeats; V*N = N times
 *   max_clock V ...         maximum SM clock, MHz
 *   power V ...             power draw, mW
 *   limit V ...             enforced power limit, mW
 *   reasons V ...           clock event reason masks (0x.. accepted)
 *   temp V ...              degrees C
 *   util GPU MEM            utilization percentages
 *   energy V ...            total energy counter, mJ (nvmlDeviceGetTotalEnergyConsumption)
 *   tensor V ...            GPM any-tensor activity, percent: one value per nvmlGpmMetricsGet
 *   gpm 0|1                 whether nvmlGpmQueryDeviceSupport says the GPU has GPM (default 1)
 *   fail FUNCTION CODE      that entry point returns CODE for this GPU, every call
 *
 * Built twice: libnvidia-ml.so.1 (current NVML) and, with MFU_FAKE_OLD, a library of an old
 * driver: only nvmlDeviceGetCurrentClocksThrottleReasons, no UUID, temperature, utilization,
 * energy counter or GPM.
 *
 * GPM checks its callers as a strict driver would: nvmlGpmMetricsGet wants version 1, 1 to
 * FAKE_GPM_METRIC_MAX metrics, two different samples filled from the same GPU (else
 * NVML_ERROR_INVALID_ARGUMENT); a metric other than ANY_TENSOR_UTIL (5) gets NOT_SUPPORTED.
 * Test fixture state lives in statics here, which is fine for a fake; the library under test
 * has none.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int nvmlReturn_t;
typedef struct fake_dev *nvmlDevice_t;
typedef struct {
    unsigned int gpu, memory;
} nvmlUtilization_t;

/* exported: prototypes for -Wmissing-prototypes */
nvmlReturn_t nvmlInit_v2(void);
nvmlReturn_t nvmlShutdown(void);
const char *nvmlErrorString(nvmlReturn_t r);
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count);
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *h);
nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t h, char *name, unsigned int len);
nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t h, int type, unsigned int *mhz);
nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t h, int type, unsigned int *mhz);
nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t h, unsigned int *mw);
nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t h, unsigned int *mw);
nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t h, unsigned long long *m);
#ifndef MFU_FAKE_OLD
nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t h, unsigned long long *m);
nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t h, char *uuid, unsigned int len);
nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t h, int sensor, unsigned int *c);
nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t h, nvmlUtilization_t *u);
nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t h, unsigned long long *mj);
typedef struct fake_gpm_sample *nvmlGpmSample_t;
typedef struct {
    unsigned int metricId;
    nvmlReturn_t nvmlReturn;
    double value;
    struct {
        char *shortName, *longName, *unit;
    } metricInfo;
} nvmlGpmMetric_t;
#define FAKE_GPM_METRIC_MAX 98 /* the R525 headers' NVML_GPM_METRIC_MAX */
typedef struct {
    unsigned int version, numMetrics;
    nvmlGpmSample_t sample1, sample2;
    nvmlGpmMetric_t metrics[FAKE_GPM_METRIC_MAX];
} nvmlGpmMetricsGet_t;
typedef struct {
    unsigned int version, isSupportedDevice;
} nvmlGpmSupport_t;
nvmlReturn_t nvmlGpmSampleAlloc(nvmlGpmSample_t *s);
nvmlReturn_t nvmlGpmSampleFree(nvmlGpmSample_t s);
nvmlReturn_t nvmlGpmSampleGet(nvmlDevice_t h, nvmlGpmSample_t s);
nvmlReturn_t nvmlGpmMetricsGet(nvmlGpmMetricsGet_t *m);
nvmlReturn_t nvmlGpmQueryDeviceSupport(nvmlDevice_t h, nvmlGpmSupport_t *s);
#endif

#define MAXDEV 8
#define MAXSEQ 4096
#define MAXFAIL 8

enum { S_CLOCK, S_MAX_CLOCK, S_POWER, S_LIMIT, S_REASONS, S_TEMP, S_ENERGY, S_TENSOR, S_COUNT };
static const char *const SEQ_NAMES[S_COUNT] = {"clock",   "max_clock", "power",  "limit",
                                               "reasons", "temp",      "energy", "tensor"};

typedef struct seq {
    unsigned long long v[MAXSEQ];
    size_t n, at;
} seq;

struct fake_dev {
    char name[128], uuid[96];
    seq s[S_COUNT];
    unsigned int util_gpu, util_mem;
    int gpm;
    struct {
        char fn[64];
        int code;
    } fail[MAXFAIL];
    size_t nfail;
};

static struct {
    int refs;
    int init_code, count_code;
    struct fake_dev dev[MAXDEV];
    unsigned int ndev;
} F;

static void set1(seq *s, unsigned long long v)
{
    s->v[0] = v;
    s->n = 1;
    s->at = 0;
}

static void defaults(struct fake_dev *d, const char *name)
{
    memset(d, 0, sizeof *d);
    snprintf(d->name, sizeof d->name, "%s", name);
    set1(&d->s[S_CLOCK], 1980);
    set1(&d->s[S_MAX_CLOCK], 1980);
    set1(&d->s[S_POWER], 500000);
    set1(&d->s[S_LIMIT], 700000);
    set1(&d->s[S_REASONS], 0);
    set1(&d->s[S_TEMP], 55);
    seq *e = &d->s[S_ENERGY];
    for (e->n = 0; e->n < MAXSEQ; e->n++)
        e->v[e->n] = 1000000ull + 250000ull * e->n;
    set1(&d->s[S_TENSOR], 60);
    d->gpm = 1;
    d->util_gpu = 97;
    d->util_mem = 40;
}

static void parse_seq(seq *s, char *rest)
{
    s->n = s->at = 0;
    for (char *tok = rest; *tok;) {
        while (*tok == ' ' || *tok == '\t')
            tok++;
        if (!*tok)
            break;
        char *end;
        unsigned long long v = strtoull(tok, &end, 0);
        unsigned long times = 1;
        if (*end == '*')
            times = strtoul(end + 1, &end, 10);
        for (unsigned long k = 0; k < times && s->n < MAXSEQ; k++)
            s->v[s->n++] = v;
        tok = end;
        while (*tok && *tok != ' ' && *tok != '\t')
            tok++;
    }
}

static void load(void)
{
    memset(&F.dev, 0, sizeof F.dev);
    F.init_code = F.count_code = 0;
    F.ndev = 0;
    const char *path = getenv("MFU_FAKE_NVML_SCRIPT");
    FILE *f = path && path[0] ? fopen(path, "r") : NULL;
    if (!f) {
        defaults(&F.dev[0], "NVIDIA H100 80GB HBM3");
        snprintf(F.dev[0].uuid, sizeof F.dev[0].uuid, "GPU-00000000-fake-0000-0000-000000000000");
        F.ndev = 1;
        return;
    }
    char line[16384];
    struct fake_dev *d = NULL;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n#")] = '\0';
        char *key = line;
        while (*key == ' ')
            key++;
        if (!*key)
            continue;
        char *rest = key + strcspn(key, " \t");
        if (*rest)
            *rest++ = '\0';
        while (*rest == ' ' || *rest == '\t')
            rest++;
        if (strcmp(key, "init") == 0) {
            F.init_code = (int)strtol(rest, NULL, 10);
        } else if (strcmp(key, "count") == 0) {
            F.count_code = (int)strtol(rest, NULL, 10);
        } else if (strcmp(key, "device") == 0 && F.ndev < MAXDEV) {
            d = &F.dev[F.ndev++];
            defaults(d, rest);
        } else if (d && strcmp(key, "uuid") == 0) {
            snprintf(d->uuid, sizeof d->uuid, "%s", rest);
        } else if (d && strcmp(key, "gpm") == 0) {
            d->gpm = (int)strtol(rest, NULL, 10);
        } else if (d && strcmp(key, "util") == 0) {
            sscanf(rest, "%u %u", &d->util_gpu, &d->util_mem);
        } else if (d && strcmp(key, "fail") == 0 && d->nfail < MAXFAIL) {
            sscanf(rest, "%63s %d", d->fail[d->nfail].fn, &d->fail[d->nfail].code);
            d->nfail++;
        } else if (d) {
            for (int k = 0; k < S_COUNT; k++)
                if (strcmp(key, SEQ_NAMES[k]) == 0)
                    parse_seq(&d->s[k], rest);
        }
    }
    fclose(f);
}

static unsigned long long next(seq *s)
{
    if (s->n == 0)
        return 0;
    unsigned long long v = s->v[s->at < s->n ? s->at : s->n - 1];
    if (s->at < s->n)
        s->at++;
    return v;
}

/* The scripted failure of fn for d, 0 when none. */
static int failing(const struct fake_dev *d, const char *fn)
{
    for (size_t i = 0; i < d->nfail; i++)
        if (strcmp(d->fail[i].fn, fn) == 0)
            return d->fail[i].code;
    return 0;
}

#define GUARD(h, fn)                                                                               \
    do {                                                                                           \
        if (F.refs <= 0)                                                                           \
            return 1; /* NVML_ERROR_UNINITIALIZED */                                               \
        if (!(h))                                                                                  \
            return 2; /* NVML_ERROR_INVALID_ARGUMENT */                                            \
        int c_ = failing((h), fn);                                                                 \
        if (c_)                                                                                    \
            return c_;                                                                             \
    } while (0)

nvmlReturn_t nvmlInit_v2(void)
{
    if (F.refs == 0)
        load();
    if (F.init_code)
        return F.init_code;
    F.refs++;
    return 0;
}

nvmlReturn_t nvmlShutdown(void)
{
    if (F.refs <= 0)
        return 1;
    F.refs--;
    return 0;
}

const char *nvmlErrorString(nvmlReturn_t r)
{
    switch (r) {
    case 0: return "Success";
    case 1: return "Uninitialized";
    case 2: return "Invalid Argument";
    case 3: return "Not Supported";
    case 4: return "Insufficient Permissions";
    case 9: return "Driver Not Loaded";
    case 15: return "GPU is lost";
    default: return "Unknown Error";
    }
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count)
{
    if (F.refs <= 0)
        return 1;
    if (F.count_code)
        return F.count_code;
    *count = F.ndev;
    return 0;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *h)
{
    if (F.refs <= 0)
        return 1;
    if (i >= F.ndev || !h)
        return 2;
    int c = failing(&F.dev[i], "nvmlDeviceGetHandleByIndex_v2");
    if (c)
        return c;
    *h = &F.dev[i];
    return 0;
}

static nvmlReturn_t copy_text(const char *s, char *out, unsigned int len)
{
    if (!out || strlen(s) + 1 > len)
        return 7; /* NVML_ERROR_INSUFFICIENT_SIZE */
    memcpy(out, s, strlen(s) + 1);
    return 0;
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t h, char *name, unsigned int len)
{
    GUARD(h, "nvmlDeviceGetName");
    return copy_text(h->name, name, len);
}

nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t h, int type, unsigned int *mhz)
{
    GUARD(h, "nvmlDeviceGetClockInfo");
    if (type != 1) /* only NVML_CLOCK_SM is scripted */
        return 2;
    *mhz = (unsigned int)next(&h->s[S_CLOCK]);
    return 0;
}

nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t h, int type, unsigned int *mhz)
{
    GUARD(h, "nvmlDeviceGetMaxClockInfo");
    if (type != 1)
        return 2;
    *mhz = (unsigned int)next(&h->s[S_MAX_CLOCK]);
    return 0;
}

nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t h, unsigned int *mw)
{
    GUARD(h, "nvmlDeviceGetPowerUsage");
    *mw = (unsigned int)next(&h->s[S_POWER]);
    return 0;
}

nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t h, unsigned int *mw)
{
    GUARD(h, "nvmlDeviceGetEnforcedPowerLimit");
    *mw = (unsigned int)next(&h->s[S_LIMIT]);
    return 0;
}

nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t h, unsigned long long *m)
{
    GUARD(h, "nvmlDeviceGetCurrentClocksThrottleReasons");
    *m = next(&h->s[S_REASONS]);
    return 0;
}

#ifndef MFU_FAKE_OLD
nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t h, unsigned long long *m)
{
    GUARD(h, "nvmlDeviceGetCurrentClocksEventReasons");
    *m = next(&h->s[S_REASONS]);
    return 0;
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t h, char *uuid, unsigned int len)
{
    GUARD(h, "nvmlDeviceGetUUID");
    return copy_text(h->uuid, uuid, len);
}

nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t h, int sensor, unsigned int *c)
{
    GUARD(h, "nvmlDeviceGetTemperature");
    if (sensor != 0) /* NVML_TEMPERATURE_GPU */
        return 2;
    *c = (unsigned int)next(&h->s[S_TEMP]);
    return 0;
}

nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t h, nvmlUtilization_t *u)
{
    GUARD(h, "nvmlDeviceGetUtilizationRates");
    u->gpu = h->util_gpu;
    u->memory = h->util_mem;
    return 0;
}

nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t h, unsigned long long *mj)
{
    GUARD(h, "nvmlDeviceGetTotalEnergyConsumption");
    *mj = next(&h->s[S_ENERGY]);
    return 0;
}

/* A GPM sample: which GPU filled it (NULL: not filled). */
struct fake_gpm_sample {
    struct fake_dev *dev;
};

nvmlReturn_t nvmlGpmSampleAlloc(nvmlGpmSample_t *s)
{
    if (F.refs <= 0)
        return 1;
    if (!s)
        return 2;
    *s = calloc(1, sizeof **s);
    return *s ? 0 : 6; /* NVML_ERROR_MEMORY */
}

nvmlReturn_t nvmlGpmSampleFree(nvmlGpmSample_t s)
{
    if (!s)
        return 2;
    free(s);
    return 0;
}

nvmlReturn_t nvmlGpmQueryDeviceSupport(nvmlDevice_t h, nvmlGpmSupport_t *s)
{
    GUARD(h, "nvmlGpmQueryDeviceSupport");
    if (!s || s->version != 1)
        return 2;
    s->isSupportedDevice = h->gpm ? 1 : 0;
    return 0;
}

nvmlReturn_t nvmlGpmSampleGet(nvmlDevice_t h, nvmlGpmSample_t s)
{
    GUARD(h, "nvmlGpmSampleGet");
    if (!s)
        return 2;
    if (!h->gpm)
        return 3;
    s->dev = h;
    return 0;
}

nvmlReturn_t nvmlGpmMetricsGet(nvmlGpmMetricsGet_t *m)
{
    if (F.refs <= 0)
        return 1;
    if (!m || m->version != 1 || m->numMetrics < 1 || m->numMetrics > FAKE_GPM_METRIC_MAX ||
        !m->sample1 || !m->sample2 || m->sample1 == m->sample2 || !m->sample1->dev ||
        m->sample1->dev != m->sample2->dev)
        return 2;
    struct fake_dev *d = m->sample2->dev;
    int c = failing(d, "nvmlGpmMetricsGet");
    if (c)
        return c;
    for (unsigned i = 0; i < m->numMetrics; i++) {
        nvmlGpmMetric_t *x = &m->metrics[i];
        x->metricInfo.shortName = x->metricInfo.longName = x->metricInfo.unit = NULL;
        if (x->metricId == 5) { /* NVML_GPM_METRIC_ANY_TENSOR_UTIL */
            x->nvmlReturn = 0;
            x->value = (double)next(&d->s[S_TENSOR]);
        } else {
            x->nvmlReturn = 3;
            x->value = 0;
        }
    }
    return 0;
}
#endif
