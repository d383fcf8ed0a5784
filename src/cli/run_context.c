/*
 * run_context.c - the run context options, built from flags or from their stored form (see
 * run_context.h). The one place that turns --device/--dtype/--devices/... into the report's
 * input; cmd_report, cmd_ingest and cmd_serve share it.
 */
#define _XOPEN_SOURCE 700 /* realpath (XSI) */
#include "cli/run_context.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

static const cli_optspec specs[] = {RUN_CONTEXT_OPTSPECS};

static bool is_context_option(const char *name)
{
    for (size_t i = 0; i < MFU__ARRAY_LEN(specs); i++)
        if (strcmp(specs[i].name, name) == 0)
            return true;
    return false;
}

bool run_context_given(const cli_args *a)
{
    for (size_t i = 0; i < a->nocc; i++)
        if (is_context_option(a->specs[a->occ_spec[i]].name))
            return true;
    return false;
}

/* The model options describe a model when a preset, a config or any dimension was given. */
static bool has_model(const model_args *m)
{
    const mfu_arch *a = &m->arch;
    return m->from_file || a->layers || a->hidden || a->heads || a->vocab || m->options.params > 0;
}

int run_context_build(const char *cmd, const cli_args *a, run_context *out)
{
    memset(out, 0, sizeof *out);
    int rc = model_args_build(cmd, a, false, &out->model);
    if (rc != CLI_EXIT_OK)
        return rc;
    mfu_report_input *in = &out->in;
    out->has_model = has_model(&out->model);
    in->has_arch = out->has_model;
    in->arch = out->model.arch;
    in->workload = out->model.workload;
    in->flops = out->model.options;
    in->device = cli_get(a, "device");
    mfu_error e = {0};
    const char *dt = cli_get(a, "dtype");
    double tf = 0;
    bool has = false;
    if (dt) {
        if (mfu_dtype_parse(dt, &in->dtype, &e) != MFU_OK) {
            rc = cli_failf(cmd, CLI_EXIT_USAGE, "--dtype: %s", e.message);
            goto fail;
        }
        in->dtype_given = true;
    }
    if (!cli_get_pos_double(cmd, a, "peak-tflops", &tf, &has)) {
        rc = CLI_EXIT_USAGE;
        goto fail;
    }
    if (has)
        in->peak_flops_per_s = tf * 1e12;
    if (!cli_get_pos_int64(cmd, a, "devices", &in->devices, NULL) ||
        !cli_get_pos_int64(cmd, a, "global-batch", &in->global_batch, NULL) ||
        !cli_get_pos_double(cmd, a, "tokens-per-step", &in->tokens_per_step, NULL) ||
        !cli_get_pos_double(cmd, a, "real-tokens-per-step", &in->real_tokens_per_step, NULL)) {
        rc = CLI_EXIT_USAGE;
        goto fail;
    }
    if (in->global_batch > 0 && in->workload.seq <= 0 && in->tokens_per_step <= 0) {
        rc = cli_failf(cmd, CLI_EXIT_USAGE,
                       "--global-batch counts sequences: give --seq too (or --tokens-per-step)");
        goto fail;
    }
    return CLI_EXIT_OK;
fail:
    model_args_free(&out->model);
    return rc;
}

char *run_context_to_json(const char *cmd, const cli_args *a)
{
    json_t *v = json_array();
    bool ok = v != NULL;
    for (size_t i = 0; ok && i < a->nocc; i++) {
        const cli_optspec *sp = &a->specs[a->occ_spec[i]];
        if (!is_context_option(sp->name))
            continue;
        const char *value = a->occ_value[i];
        char *abs = NULL;
        if (value && strcmp(sp->name, "config") == 0) {
            abs = realpath(value, NULL);
            if (!abs) {
                cli_failf(cmd, CLI_EXIT_FAIL, "--config %s: cannot resolve the path; check it",
                          value);
                json_decref(v);
                return NULL;
            }
            value = abs;
        }
        size_t len = strlen(sp->name) + (value ? strlen(value) + 1 : 0) + 3;
        char *arg = malloc(len);
        ok = arg != NULL;
        if (ok) {
            snprintf(arg, len, "--%s%s%s", sp->name, value ? "=" : "", value ? value : "");
            ok = cli_json_append(v, cli_json_str(arg)) == 0;
        }
        free(arg);
        free(abs);
    }
    char *text = ok ? json_dumps(v, JSON_COMPACT) : NULL;
    json_decref(v);
    if (!text)
        cli_failf(cmd, CLI_EXIT_FAIL, "out of memory storing the run context");
    return text;
}

int run_context_from_json(const char *cmd, const char *json, run_context *out)
{
    memset(out, 0, sizeof *out);
    mfu_error e = {0};
    if (!json || mfu_store_check_context(json, &e) != MFU_OK)
        return cli_failf(cmd, CLI_EXIT_USAGE, "stored context: %s", json ? e.message : "none");
    json_t *v = json_loads(json, 0, NULL);
    if (!v)
        return cli_failf(cmd, CLI_EXIT_FAIL, "stored context: out of memory");
    size_t n = json_array_size(v);
    if (n >= CLI_MAX_OCCURRENCES) {
        json_decref(v);
        return cli_failf(cmd, CLI_EXIT_USAGE, "stored context: %zu arguments, more than %d", n,
                         CLI_MAX_OCCURRENCES - 1);
    }
    char **argv = calloc(n + 1, sizeof *argv);
    if (!argv) {
        json_decref(v);
        return cli_failf(cmd, CLI_EXIT_FAIL, "stored context: out of memory");
    }
    argv[0] = (char *)(uintptr_t) "context";
    for (size_t i = 0; i < n; i++)
        argv[i + 1] = (char *)(uintptr_t)json_string_value(json_array_get(v, i));
    cli_args *a = malloc(sizeof *a);
    int rc = CLI_EXIT_FAIL;
    if (!a) {
        cli_failf(cmd, CLI_EXIT_FAIL, "stored context: out of memory");
    } else if (!cli_parse(cmd, (int)n + 1, argv, specs, MFU__ARRAY_LEN(specs), a) || a->help) {
        rc = CLI_EXIT_USAGE;
    } else if (a->npos > 0) {
        rc = cli_failf(cmd, CLI_EXIT_USAGE, "stored context: unexpected argument '%s'", a->pos[0]);
    } else {
        rc = run_context_build(cmd, a, out);
    }
    free(a);
    free(argv);
    if (rc != CLI_EXIT_OK) {
        json_decref(v);
        return rc;
    }
    out->args = v; /* in.device points into it */
    return CLI_EXIT_OK;
}

void run_context_short(const char *json, char *buf, size_t n)
{
    if (n == 0)
        return;
    mfu__strlcpy(buf, "-", n);
    json_t *v = json && json[0] ? json_loads(json, 0, NULL) : NULL;
    size_t at = 0;
    bool cut = false;
    for (size_t i = 0; json_is_array(v) && i < json_array_size(v) && !cut; i++) {
        const char *s = json_string_value(json_array_get(v, i));
        if (!s)
            continue;
        if (s[0] == '-' && s[1] == '-')
            s += 2;
        size_t len = strlen(s) + (at ? 1 : 0);
        if (at + len >= n) {
            cut = true;
            break;
        }
        at += (size_t)snprintf(buf + at, n - at, "%s%s", at ? " " : "", s);
    }
    if (cut) {
        size_t keep = at + 4 < n ? at : (n > 4 ? n - 4 : 0);
        snprintf(buf + keep, n - keep, "...");
    }
    json_decref(v);
}

void run_context_free(run_context *c)
{
    if (!c)
        return;
    model_args_free(&c->model);
    json_decref(c->args);
    c->args = NULL;
}
