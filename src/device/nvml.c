/*
 * nvml.c - live GPU data from NVIDIA's management library, loaded at run time (mfu/device.h).
 *
 * mfu must build and run on machines without NVIDIA's libraries, so nothing here includes
 * nvml.h or links libnvidia-ml: a session dlopen()s the library, dlsym()s the entry points it
 * uses into its own table of function pointers, and owns both the handle and NVML's
 * initialisation. No state outside the session.
 *
 * The few NVML types and constants used are declared below from NVIDIA's public NVML API
 * reference (docs.nvidia.com/deploy/nvml-api), each with the section it comes from. They are
 * part of NVML's stable C ABI: enums are int, handles are opaque pointers, every function
 * returns an nvmlReturn_t.
 *
 * Errors: NVML_ERROR_NOT_SUPPORTED for one figure leaves that figure unknown (a GeForce may
 * not report its power limit); any other error fails the call with the NVML function, the GPU
 * and nvmlErrorString()'s text in the message (docs/internals/device.md).
 */
#include <dlfcn.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mfu/device.h"
#include "util/util.h"

/* ---- NVML declarations (from NVIDIA's NVML API reference, not from nvml.h) ------------------ */

/* nvmlReturn_t ("Error reporting", enum nvmlReturn_t): NVML_SUCCESS = 0, ...,
 * NVML_ERROR_NOT_SUPPORTED = 3 ("the requested operation is not available on target
 * device"), NVML_ERROR_DRIVER_NOT_LOADED = 9. */
typedef int nvml_return;
#define NVML_SUCCESS 0
#define NVML_ERROR_NOT_SUPPORTED 3
#define NVML_ERROR_DRIVER_NOT_LOADED 9

/* nvmlDevice_t: an opaque handle ("typedef struct nvmlDevice_st* nvmlDevice_t"). */
typedef struct nvml_device_st *nvml_device;

/* nvmlClockType_t ("Device Enums"): NVML_CLOCK_GRAPHICS = 0, NVML_CLOCK_SM = 1,
 * NVML_CLOCK_MEM = 2, NVML_CLOCK_VIDEO = 3. Clocks are in MHz. */
#define NVML_CLOCK_SM 1

/* nvmlTemperatureSensors_t ("Device Enums"): NVML_TEMPERATURE_GPU = 0, the GPU die. */
#define NVML_TEMPERATURE_GPU 0

/* nvmlUtilization_t ("Device Structs"): percent of the last sample period (1/6 s to 1 s)
 * during which a kernel ran (gpu) and device memory was read or written (memory). */
typedef struct nvml_utilization {
    unsigned int gpu;
    unsigned int memory;
} nvml_utilization;

/* "Constants": NVML_DEVICE_NAME_V2_BUFFER_SIZE 96 and NVML_DEVICE_UUID_V2_BUFFER_SIZE 96 are
 * large enough for nvmlDeviceGetName and nvmlDeviceGetUUID (MFU_NVML_NAME_MAX/UUID_MAX). */

/* The reason masks of mfu/device.h are NVML's "NvmlClocksEventReasons" (R535 and later;
 * "NvmlClocksThrottleReasons" before, same values): GpuIdle 0x1, ApplicationsClocksSetting 0x2,
 * SwPowerCap 0x4, HwSlowdown 0x8, SyncBoost 0x10, SwThermalSlowdown 0x20, HwThermalSlowdown
 * 0x40, HwPowerBrakeSlowdown 0x80, DisplayClockSetting 0x100. The checks below keep the two in
 * step. */
_Static_assert(MFU_NVML_REASON_SW_POWER_CAP == 0x4 && MFU_NVML_REASON_HW_SLOWDOWN == 0x8 &&
                   MFU_NVML_REASON_SYNC_BOOST == 0x10 && MFU_NVML_REASON_SW_THERMAL == 0x20 &&
                   MFU_NVML_REASON_HW_THERMAL == 0x40 && MFU_NVML_REASON_HW_POWER_BRAKE == 0x80,
               "reason masks are NVML's");

/* Entry points (signatures from the reference's "Initialization and Cleanup", "Error
 * reporting", "Device Queries" sections). Power figures are milliwatts. */
typedef nvml_return (*fn_init)(void);
typedef nvml_return (*fn_shutdown)(void);
typedef const char *(*fn_error_string)(nvml_return);
typedef nvml_return (*fn_count)(unsigned int *);
typedef nvml_return (*fn_handle)(unsigned int, nvml_device *);
typedef nvml_return (*fn_string)(nvml_device, char *, unsigned int);
typedef nvml_return (*fn_clock)(nvml_device, int, unsigned int *);
typedef nvml_return (*fn_uint)(nvml_device, unsigned int *);
typedef nvml_return (*fn_ull)(nvml_device, unsigned long long *);
typedef nvml_return (*fn_temperature)(nvml_device, int, unsigned int *);
typedef nvml_return (*fn_utilization)(nvml_device, nvml_utilization *);

/* nvmlDeviceGetTotalEnergyConsumption ("Device Queries", Volta and newer): the energy the GPU
 * used since the driver was last loaded, millijoules, as an unsigned long long: fn_ull. */

/* GPM, GPU Performance Monitoring ("GPM Functions", "GPM Structs", "GPM Enums"; R520 and later
 * drivers, Hopper and newer GPUs): nvmlGpmSampleAlloc / nvmlGpmSampleFree manage opaque sample
 * buffers, nvmlGpmSampleGet(device, sample) fills one, and nvmlGpmMetricsGet computes metrics
 * between two samples of the same GPU. nvmlGpmQueryDeviceSupport says whether a GPU has GPM.
 * Metric NVML_GPM_METRIC_ANY_TENSOR_UTIL = 5 is the percentage of the interval during which any
 * tensor pipe was active. The structs carry a version (NVML_GPM_METRICS_GET_VERSION 1,
 * NVML_GPM_SUPPORT_VERSION 1); nvmlGpmMetricsGet_t ends in an array of NVML_GPM_METRIC_MAX
 * metrics (98 in the R525 headers, 333 in CUDA 13's), so mfu's copy holds more than either
 * (GPM_METRICS_CAP) and asks for one. */
typedef struct nvml_gpm_sample_st *nvml_gpm_sample;
#define NVML_GPM_METRICS_GET_VERSION 1
#define NVML_GPM_SUPPORT_VERSION 1
#define NVML_GPM_METRIC_ANY_TENSOR_UTIL 5
#define GPM_METRICS_CAP 512
typedef struct nvml_gpm_metric {
    unsigned int metric_id;  /* IN: NVML_GPM_METRIC_* */
    nvml_return nvml_return; /* OUT: this metric's status; value valid when NVML_SUCCESS */
    double value;            /* OUT */
    struct {
        char *short_name, *long_name, *unit;
    } metric_info; /* OUT: may be NULL */
} nvml_gpm_metric;
typedef struct nvml_gpm_metrics_get {
    unsigned int version;     /* IN: NVML_GPM_METRICS_GET_VERSION */
    unsigned int num_metrics; /* IN: entries of metrics[] to compute */
    nvml_gpm_sample sample1;  /* IN: the earlier sample */
    nvml_gpm_sample sample2;  /* IN: the later sample */
    nvml_gpm_metric metrics[GPM_METRICS_CAP];
} nvml_gpm_metrics_get;
typedef struct nvml_gpm_support {
    unsigned int version;             /* IN: NVML_GPM_SUPPORT_VERSION */
    unsigned int is_supported_device; /* OUT */
} nvml_gpm_support;
typedef nvml_return (*fn_gpm_alloc)(nvml_gpm_sample *);
typedef nvml_return (*fn_gpm_free)(nvml_gpm_sample);
typedef nvml_return (*fn_gpm_get)(nvml_device, nvml_gpm_sample);
typedef nvml_return (*fn_gpm_metrics)(nvml_gpm_metrics_get *);
typedef nvml_return (*fn_gpm_support)(nvml_device, nvml_gpm_support *);

/* ---- the session ------------------------------------------------------------------------- */

struct mfu_nvml {
    void *lib; /* dlopen handle */
    char path[512];
    bool initialised; /* nvmlInit_v2 succeeded: nvmlShutdown owed */
    fn_init init;
    fn_shutdown shutdown;
    fn_error_string error_string;
    fn_count count;
    fn_handle handle;
    fn_string name;
    fn_string uuid; /* optional */
    fn_clock clock, max_clock;
    fn_uint power, power_limit;
    fn_ull reasons;
    const char *reasons_fn;     /* the name of the one found */
    fn_temperature temperature; /* optional */
    fn_utilization utilization; /* optional */
    fn_ull energy;              /* optional: nvmlDeviceGetTotalEnergyConsumption */
    fn_gpm_alloc gpm_alloc;     /* optional, all five or none */
    fn_gpm_free gpm_free;
    fn_gpm_get gpm_get;
    fn_gpm_metrics gpm_metrics;
    fn_gpm_support gpm_support;
    nvml_gpm_metrics_get *gpm_req; /* made at the first GPM call */
    size_t ndev, nreported;
    struct {
        nvml_device h;
        char name[MFU_NVML_NAME_MAX];
        char uuid[MFU_NVML_UUID_MAX];
        const mfu_device_info *device;
        mfu_device_match_kind match;
        int gpm;               /* 0 not asked yet, 1 has GPM (samples made), -1 has none */
        nvml_gpm_sample gs[2]; /* the two samples, used in turn */
        int gs_last;           /* index of the latest filled sample, -1 none */
    } dev[MFU_NVML_DEVICES_MAX];
};

/* dlsym into a function pointer: POSIX guarantees the object pointer converts; the copy
 * through memcpy keeps ISO C's warnings away. NULL when absent. */
typedef void (*any_fn)(void);
static any_fn lookup(void *lib, const char *name)
{
    void *p = dlsym(lib, name);
    any_fn f = NULL;
    if (p)
        memcpy(&f, &p, sizeof f);
    return f;
}

/* NVML's text for code, or a number when the library cannot say. */
static const char *nvml_text(const mfu_nvml *n, nvml_return code, char *buf, size_t len)
{
    const char *s = n->error_string ? n->error_string(code) : NULL;
    if (!s || !s[0]) {
        snprintf(buf, len, "NVML error %d", code);
        return buf;
    }
    snprintf(buf, len, "%s (NVML error %d)", s, code);
    return buf;
}

static const char *const REQUIRED[] = {
    "nvmlInit_v2",
    "nvmlShutdown",
    "nvmlErrorString",
    "nvmlDeviceGetCount_v2",
    "nvmlDeviceGetHandleByIndex_v2",
    "nvmlDeviceGetName",
    "nvmlDeviceGetClockInfo",
    "nvmlDeviceGetMaxClockInfo",
    "nvmlDeviceGetPowerUsage",
    "nvmlDeviceGetEnforcedPowerLimit",
};

static mfu_status bind(mfu_nvml *n, mfu_error *err)
{
    any_fn f[MFU__ARRAY_LEN(REQUIRED)];
    for (size_t i = 0; i < MFU__ARRAY_LEN(REQUIRED); i++) {
        f[i] = lookup(n->lib, REQUIRED[i]);
        if (!f[i])
            return mfu__fail_field(err, MFU_E_UNSUPPORTED, "MFU_NVML_LIBRARY",
                                   "%s is not a usable NVML: it lacks %s; point MFU_NVML_LIBRARY "
                                   "at the driver's libnvidia-ml.so.1, or pass "
                                   "--device/--peak-tflops instead",
                                   n->path, REQUIRED[i]);
    }
    /* each pointer goes back to its own type (the one it was exported with) */
    n->init = (fn_init)f[0];
    n->shutdown = (fn_shutdown)f[1];
    n->error_string = (fn_error_string)f[2];
    n->count = (fn_count)f[3];
    n->handle = (fn_handle)f[4];
    n->name = (fn_string)f[5];
    n->clock = (fn_clock)f[6];
    n->max_clock = (fn_clock)f[7];
    n->power = (fn_uint)f[8];
    n->power_limit = (fn_uint)f[9];
    /* renamed in R535; the older name stays exported by newer drivers */
    n->reasons_fn = "nvmlDeviceGetCurrentClocksEventReasons";
    n->reasons = (fn_ull)lookup(n->lib, n->reasons_fn);
    if (!n->reasons) {
        n->reasons_fn = "nvmlDeviceGetCurrentClocksThrottleReasons";
        n->reasons = (fn_ull)lookup(n->lib, n->reasons_fn);
    }
    if (!n->reasons)
        return mfu__fail_field(err, MFU_E_UNSUPPORTED, "MFU_NVML_LIBRARY",
                               "%s is not a usable NVML: it lacks "
                               "nvmlDeviceGetCurrentClocksEventReasons and "
                               "nvmlDeviceGetCurrentClocksThrottleReasons; update the NVIDIA "
                               "driver, or pass --device/--peak-tflops instead",
                               n->path);
    n->uuid = (fn_string)lookup(n->lib, "nvmlDeviceGetUUID");
    n->temperature = (fn_temperature)lookup(n->lib, "nvmlDeviceGetTemperature");
    n->utilization = (fn_utilization)lookup(n->lib, "nvmlDeviceGetUtilizationRates");
    n->energy = (fn_ull)lookup(n->lib, "nvmlDeviceGetTotalEnergyConsumption");
    n->gpm_alloc = (fn_gpm_alloc)lookup(n->lib, "nvmlGpmSampleAlloc");
    n->gpm_free = (fn_gpm_free)lookup(n->lib, "nvmlGpmSampleFree");
    n->gpm_get = (fn_gpm_get)lookup(n->lib, "nvmlGpmSampleGet");
    n->gpm_metrics = (fn_gpm_metrics)lookup(n->lib, "nvmlGpmMetricsGet");
    n->gpm_support = (fn_gpm_support)lookup(n->lib, "nvmlGpmQueryDeviceSupport");
    if (!n->gpm_alloc || !n->gpm_free || !n->gpm_get || !n->gpm_metrics || !n->gpm_support)
        n->gpm_alloc = NULL; /* GPM needs all five: a driver before R520 has none */
    return MFU_OK;
}

static mfu_status enumerate(mfu_nvml *n, mfu_error *err)
{
    char t[160];
    unsigned int count = 0;
    nvml_return r = n->count(&count);
    if (r != NVML_SUCCESS)
        return mfu__fail(err, MFU_E_UNSUPPORTED, 0,
                         "nvmlDeviceGetCount_v2 failed: %s; check the NVIDIA driver "
                         "(nvidia-smi), or pass --device/--peak-tflops instead",
                         nvml_text(n, r, t, sizeof t));
    n->nreported = count;
    n->ndev = count < MFU_NVML_DEVICES_MAX ? count : MFU_NVML_DEVICES_MAX;
    for (size_t i = 0; i < n->ndev; i++) {
        n->dev[i].gs_last = -1;
        if ((r = n->handle((unsigned int)i, &n->dev[i].h)) != NVML_SUCCESS)
            return mfu__fail(err, MFU_E_IO, 0,
                             "nvmlDeviceGetHandleByIndex_v2 failed for GPU %zu: %s; check it "
                             "with nvidia-smi",
                             i, nvml_text(n, r, t, sizeof t));
        char *name = n->dev[i].name;
        if ((r = n->name(n->dev[i].h, name, MFU_NVML_NAME_MAX)) != NVML_SUCCESS)
            return mfu__fail(err, MFU_E_IO, 0,
                             "nvmlDeviceGetName failed for GPU %zu: %s; check it with "
                             "nvidia-smi",
                             i, nvml_text(n, r, t, sizeof t));
        name[MFU_NVML_NAME_MAX - 1] = '\0'; /* never trust a library's terminator */
        if (n->uuid) {
            r = n->uuid(n->dev[i].h, n->dev[i].uuid, MFU_NVML_UUID_MAX);
            n->dev[i].uuid[MFU_NVML_UUID_MAX - 1] = '\0';
            if (r != NVML_SUCCESS)
                n->dev[i].uuid[0] = '\0'; /* the UUID is decoration: never fatal */
        }
        mfu_device_match m;
        if (mfu_device_match_name(name, &m, NULL) == MFU_OK) {
            n->dev[i].device = m.device;
            n->dev[i].match = m.kind;
        }
    }
    return MFU_OK;
}

mfu_status mfu_nvml_new(const char *library, mfu_nvml **out, mfu_error *err)
{
    if (out)
        *out = NULL;
    if (!out)
        return mfu__fail(err, MFU_E_INVALID, 0, "mfu_nvml_new: out is required");
    bool given = true;
    if (!library) {
        library = getenv("MFU_NVML_LIBRARY");
        if (!library || !library[0]) {
            library = MFU_NVML_LIBRARY_DEFAULT;
            given = false;
        }
    }
    mfu_nvml *n = calloc(1, sizeof *n);
    if (!n)
        return mfu__fail(err, MFU_E_NOMEM, 0, "out of memory");
    if (mfu__strlcpy(n->path, library, sizeof n->path) >= sizeof n->path) {
        free(n);
        return mfu__fail_field(err, MFU_E_LIMIT, "MFU_NVML_LIBRARY",
                               "the NVML library path is longer than %zu bytes; give a shorter "
                               "MFU_NVML_LIBRARY",
                               sizeof n->path - 1);
    }
    mfu_status st = MFU_OK;
    n->lib = dlopen(library, RTLD_NOW | RTLD_LOCAL);
    if (!n->lib) {
        if (given)
            st = mfu__fail_field(err, MFU_E_UNSUPPORTED, "MFU_NVML_LIBRARY",
                                 "NVML not found (%s): cannot load it; fix MFU_NVML_LIBRARY, or "
                                 "pass --device/--peak-tflops instead",
                                 library);
        else
            st = mfu__fail_field(err, MFU_E_UNSUPPORTED, "MFU_NVML_LIBRARY",
                                 "NVML not found (%s): no NVIDIA driver on this machine; pass "
                                 "--device/--peak-tflops instead",
                                 library);
    }
    if (st == MFU_OK)
        st = bind(n, err);
    if (st == MFU_OK) {
        nvml_return r = n->init();
        if (r != NVML_SUCCESS) {
            char t[160];
            st = mfu__fail(err, MFU_E_UNSUPPORTED, 0,
                           "nvmlInit_v2 failed: %s; %s, or pass --device/--peak-tflops instead",
                           nvml_text(n, r, t, sizeof t),
                           r == NVML_ERROR_DRIVER_NOT_LOADED
                               ? "no NVIDIA driver is running (load it)"
                               : "check the NVIDIA driver with nvidia-smi");
        } else {
            n->initialised = true;
        }
    }
    if (st == MFU_OK)
        st = enumerate(n, err);
    if (st != MFU_OK) {
        mfu_nvml_free(n);
        return st;
    }
    *out = n;
    return MFU_OK;
}

void mfu_nvml_free(mfu_nvml *n)
{
    if (!n)
        return;
    for (size_t i = 0; i < n->ndev; i++)
        for (int k = 0; k < 2; k++)
            if (n->dev[i].gs[k])
                n->gpm_free(n->dev[i].gs[k]);
    free(n->gpm_req);
    if (n->initialised)
        n->shutdown();
    if (n->lib)
        dlclose(n->lib);
    free(n);
}

size_t mfu_nvml_count(const mfu_nvml *n)
{
    return n ? n->ndev : 0;
}

size_t mfu_nvml_count_reported(const mfu_nvml *n)
{
    return n ? n->nreported : 0;
}

const char *mfu_nvml_library(const mfu_nvml *n)
{
    return n ? n->path : "";
}

/* ---- sampling ----------------------------------------------------------------------------- */

static void clear_sample(mfu_nvml_sample *o)
{
    memset(o, 0, sizeof *o);
    o->sm_clock_mhz = o->max_sm_clock_mhz = NAN;
    o->power_w = o->power_limit_w = NAN;
    o->temperature_c = o->gpu_utilization = o->memory_utilization = NAN;
    o->energy_j = NAN;
}

/* r is NOT_SUPPORTED (leave the figure unknown: true), SUCCESS (true) or an error (false,
 * with the message). */
static bool check(const mfu_nvml *n, nvml_return r, const char *fn, size_t index, mfu_status *st,
                  mfu_error *err)
{
    if (r == NVML_SUCCESS || r == NVML_ERROR_NOT_SUPPORTED)
        return true;
    char t[160];
    *st = mfu__fail(err, MFU_E_IO, 0,
                    "%s failed for GPU %zu: %s; check the GPU with nvidia-smi, or leave NVML "
                    "off (the nvml option)",
                    fn, index, nvml_text(n, r, t, sizeof t));
    return false;
}

mfu_status mfu_nvml_sample_device(mfu_nvml *n, size_t index, mfu_nvml_sample *out, mfu_error *err)
{
    if (out)
        clear_sample(out);
    if (!n || !out)
        return mfu__fail(err, MFU_E_INVALID, 0,
                         "mfu_nvml_sample_device: session and out are required");
    if (index >= n->ndev)
        return mfu__fail_field(err, MFU_E_INVALID, "nvml_index",
                               "GPU %zu does not exist: NVML sees %zu GPU(s); give an index "
                               "from 0 to %zu",
                               index, n->ndev, n->ndev ? n->ndev - 1 : 0);
    nvml_device h = n->dev[index].h;
    out->index = (unsigned)index;
    mfu__strlcpy(out->name, n->dev[index].name, sizeof out->name);
    mfu__strlcpy(out->uuid, n->dev[index].uuid, sizeof out->uuid);
    out->device = n->dev[index].device;
    out->match = n->dev[index].match;

    mfu_status st = MFU_OK;
    unsigned int u = 0;
    nvml_return r;
#define READ_UINT(call, fn, dst, scale)                                                            \
    do {                                                                                           \
        u = 0;                                                                                     \
        r = (call);                                                                                \
        if (!check(n, r, fn, index, &st, err))                                                     \
            goto failed;                                                                           \
        if (r == NVML_SUCCESS)                                                                     \
            (dst) = (double)u * (scale);                                                           \
    } while (0)
    READ_UINT(n->clock(h, NVML_CLOCK_SM, &u), "nvmlDeviceGetClockInfo", out->sm_clock_mhz, 1.0);
    READ_UINT(n->max_clock(h, NVML_CLOCK_SM, &u), "nvmlDeviceGetMaxClockInfo",
              out->max_sm_clock_mhz, 1.0);
    READ_UINT(n->power(h, &u), "nvmlDeviceGetPowerUsage", out->power_w, 1e-3);
    READ_UINT(n->power_limit(h, &u), "nvmlDeviceGetEnforcedPowerLimit", out->power_limit_w, 1e-3);
    if (n->temperature)
        READ_UINT(n->temperature(h, NVML_TEMPERATURE_GPU, &u), "nvmlDeviceGetTemperature",
                  out->temperature_c, 1.0);
#undef READ_UINT
    unsigned long long mask = 0;
    r = n->reasons(h, &mask);
    if (!check(n, r, n->reasons_fn, index, &st, err))
        goto failed;
    if (r == NVML_SUCCESS) {
        out->reasons = (uint64_t)mask;
        out->reasons_known = true;
    }
    if (n->utilization) {
        nvml_utilization ut = {0, 0};
        r = n->utilization(h, &ut);
        if (!check(n, r, "nvmlDeviceGetUtilizationRates", index, &st, err))
            goto failed;
        /* a percentage above 100 is not believed */
        if (r == NVML_SUCCESS && ut.gpu <= 100 && ut.memory <= 100) {
            out->gpu_utilization = ut.gpu / 100.0;
            out->memory_utilization = ut.memory / 100.0;
        }
    }
    if (n->energy) {
        unsigned long long mj = 0;
        r = n->energy(h, &mj);
        if (!check(n, r, "nvmlDeviceGetTotalEnergyConsumption", index, &st, err))
            goto failed;
        if (r == NVML_SUCCESS)
            out->energy_j = (double)mj * 1e-3;
    }
    return MFU_OK;
failed:
    clear_sample(out);
    return st;
}

/* ---- GPM: the tensor pipes' activity -------------------------------------------------------- */

/* Whether GPU index has GPM, asking NVML (and making its two samples) the first time. */
static mfu_status gpm_ready(mfu_nvml *n, size_t index, mfu_error *err)
{
    if (n->dev[index].gpm != 0)
        return MFU_OK;
    n->dev[index].gpm = -1;
    if (!n->gpm_alloc)
        return MFU_OK;
    nvml_gpm_support sup = {NVML_GPM_SUPPORT_VERSION, 0};
    nvml_return r = n->gpm_support(n->dev[index].h, &sup);
    mfu_status st = MFU_OK;
    if (!check(n, r, "nvmlGpmQueryDeviceSupport", index, &st, err))
        return st;
    if (r != NVML_SUCCESS || !sup.is_supported_device)
        return MFU_OK;
    if (!n->gpm_req && !(n->gpm_req = calloc(1, sizeof *n->gpm_req)))
        return mfu__fail(err, MFU_E_NOMEM, 0, "out of memory");
    for (int k = 0; k < 2; k++) {
        r = n->gpm_alloc(&n->dev[index].gs[k]);
        if (r != NVML_SUCCESS) {
            n->dev[index].gs[k] = NULL;
            if (!check(n, r, "nvmlGpmSampleAlloc", index, &st, err))
                return st;
            return MFU_OK; /* NOT_SUPPORTED: no GPM */
        }
    }
    n->dev[index].gpm = 1;
    return MFU_OK;
}

bool mfu_nvml_has_gpm(mfu_nvml *n, size_t index)
{
    if (!n || index >= n->ndev)
        return false;
    mfu_error e;
    return gpm_ready(n, index, &e) == MFU_OK && n->dev[index].gpm == 1;
}

mfu_status mfu_nvml_tensor_activity(mfu_nvml *n, size_t index, double *out, mfu_error *err)
{
    if (out)
        *out = NAN;
    if (!n || !out)
        return mfu__fail(err, MFU_E_INVALID, 0,
                         "mfu_nvml_tensor_activity: session and out are required");
    if (index >= n->ndev)
        return mfu__fail_field(err, MFU_E_INVALID, "nvml_index",
                               "GPU %zu does not exist: NVML sees %zu GPU(s); give an index "
                               "from 0 to %zu",
                               index, n->ndev, n->ndev ? n->ndev - 1 : 0);
    mfu_status st = gpm_ready(n, index, err);
    if (st != MFU_OK || n->dev[index].gpm != 1)
        return st;
    int last = n->dev[index].gs_last, now = last == 0 ? 1 : 0;
    nvml_return r = n->gpm_get(n->dev[index].h, n->dev[index].gs[now]);
    if (!check(n, r, "nvmlGpmSampleGet", index, &st, err))
        return st;
    if (r != NVML_SUCCESS) {
        n->dev[index].gs_last = -1; /* NOT_SUPPORTED now: start again next time */
        return MFU_OK;
    }
    n->dev[index].gs_last = now;
    if (last < 0)
        return MFU_OK; /* the first sample: nothing to compare with yet */
    nvml_gpm_metrics_get *q = n->gpm_req;
    /* the head and the one metric asked for (NVML reads num_metrics entries): not the 20 KiB of
     * the whole array at every record */
    memset(q, 0, offsetof(nvml_gpm_metrics_get, metrics) + sizeof q->metrics[0]);
    q->version = NVML_GPM_METRICS_GET_VERSION;
    q->num_metrics = 1;
    q->sample1 = n->dev[index].gs[last];
    q->sample2 = n->dev[index].gs[now];
    q->metrics[0].metric_id = NVML_GPM_METRIC_ANY_TENSOR_UTIL;
    r = n->gpm_metrics(q);
    if (!check(n, r, "nvmlGpmMetricsGet", index, &st, err))
        return st;
    double v = q->metrics[0].value;
    /* a percentage outside 0..100 is not believed */
    if (r == NVML_SUCCESS && q->metrics[0].nvml_return == NVML_SUCCESS && isfinite(v) && v >= 0 &&
        v <= 100)
        *out = v / 100.0;
    return MFU_OK;
}

mfu_status mfu_nvml_sample_all(mfu_nvml *n, mfu_nvml_sample *out, size_t cap, size_t *count,
                               mfu_error *err)
{
    if (count)
        *count = 0;
    if (!n || !count || (!out && cap > 0))
        return mfu__fail(err, MFU_E_INVALID, 0,
                         "mfu_nvml_sample_all: session, out and count are required");
    for (size_t i = 0; i < n->ndev && i < cap; i++) {
        mfu_status st = mfu_nvml_sample_device(n, i, &out[i], err);
        if (st != MFU_OK)
            return st;
        *count = i + 1;
    }
    return MFU_OK;
}

/* ---- reasons ------------------------------------------------------------------------------ */

static const struct {
    uint64_t bit;
    const char *name;
} REASONS[] = {
    {MFU_NVML_REASON_GPU_IDLE, "gpu_idle"},
    {MFU_NVML_REASON_APP_CLOCKS, "app_clocks"},
    {MFU_NVML_REASON_SW_POWER_CAP, "sw_power_cap"},
    {MFU_NVML_REASON_HW_SLOWDOWN, "hw_slowdown"},
    {MFU_NVML_REASON_SYNC_BOOST, "sync_boost"},
    {MFU_NVML_REASON_SW_THERMAL, "sw_thermal"},
    {MFU_NVML_REASON_HW_THERMAL, "hw_thermal"},
    {MFU_NVML_REASON_HW_POWER_BRAKE, "hw_power_brake"},
    {MFU_NVML_REASON_DISPLAY_CLOCKS, "display_clocks"},
};

const char *mfu_nvml_reason_name(uint64_t bit)
{
    for (size_t i = 0; i < MFU__ARRAY_LEN(REASONS); i++)
        if (REASONS[i].bit == bit)
            return REASONS[i].name;
    return NULL;
}

bool mfu_nvml_reasons_text(uint64_t mask, const char *sep, char *buf, size_t n)
{
    if (!buf || n == 0)
        return false;
    if (!sep)
        sep = ",";
    buf[0] = '\0';
    bool ok = true;
    uint64_t known = 0;
    for (size_t i = 0; i < MFU__ARRAY_LEN(REASONS); i++) {
        known |= REASONS[i].bit;
        if (mask & REASONS[i].bit)
            ok &= mfu__appendf(buf, n, "%s%s", buf[0] ? sep : "", REASONS[i].name);
    }
    if (mask & ~known)
        ok &= mfu__appendf(buf, n, "%s0x%llx", buf[0] ? sep : "",
                           (unsigned long long)(mask & ~known));
    return ok;
}
