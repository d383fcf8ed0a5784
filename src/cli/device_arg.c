/*
 * device_arg.c - --device NAME for every command: the table, or "cpu" (see device_arg.h).
 */
#include "cli/device_arg.h"

#include <math.h>
#include <pthread.h>
#include <string.h>

#include "util/util.h"

/* The process's CPU entry, made once. The CLI is a program, not the library: a static here
 * is the storage the library asks its caller for. */
static pthread_once_t cpu_once = PTHREAD_ONCE_INIT;
static mfu_device_slot cpu_slot;
static const mfu_device_info *cpu_dev;
static mfu_status cpu_status;
static mfu_error cpu_err;

static void make_cpu(void)
{
    cpu_status = mfu_cpu_device(&cpu_slot, &cpu_dev, &cpu_err);
}

mfu_status cli_device_find(const char *name, const mfu_device_info **out, mfu_error *err)
{
    if (!name || !out || mfu__strcasecmp(name, "cpu") != 0)
        return mfu_device_find(name, out, err);
    pthread_once(&cpu_once, make_cpu);
    *out = cpu_status == MFU_OK ? cpu_dev : NULL;
    if (cpu_status != MFU_OK && err)
        *err = cpu_err;
    return cpu_status;
}

int cli_device_choose(const char *cmd, const cli_args *a, cli_device_choice *out)
{
    memset(out, 0, sizeof *out);
    out->dtype = MFU_DTYPE_BF16;
    out->peak = NAN;
    mfu_error err = {0};
    const char *dt = cli_get(a, "dtype");
    if (dt && mfu_dtype_parse(dt, &out->dtype, &err) != MFU_OK)
        return cli_failf(cmd, CLI_EXIT_USAGE, "--dtype: %s", err.message);
    out->dtype_given = dt != NULL;
    double tf = 0;
    if (!cli_get_pos_double(cmd, a, "peak-tflops", &tf, &out->peak_given))
        return CLI_EXIT_USAGE;
    const char *name = cli_get(a, "device");
    if (name && cli_device_find(name, &out->dev, &err) != MFU_OK)
        return cli_fail(cmd, &err, CLI_EXIT_FAIL);
    if (out->peak_given)
        out->peak = tf * 1e12;
    else if (out->dev &&
             mfu_device_peak_flops_per_s(out->dev, out->dtype, false, &out->peak, &err) != MFU_OK)
        return cli_fail(cmd, &err, CLI_EXIT_FAIL);
    return CLI_EXIT_OK;
}
