/*
 * cmd_report.c - `mfu report LOG...`: per log, the detected format and the run's context,
 * then tokens/s, model and hardware TFLOP/s per device, MFU and HFU over the steady steps
 * (warm-up excluded and said so), and every figure the framework printed beside mfu's
 * recomputation of it, with the likely cause of a disagreement.
 *
 * Each LOG is one run. Context flags apply to every LOG: the model options of model_args,
 * --device/--dtype/--peak-tflops, --devices, --global-batch/--tokens-per-step,
 * --real-tokens-per-step; they override what the log's header says. The library side is
 * src/report (include/mfu/report.h); rendering is report_out.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/model_args.h"
#include "cli/report_out.h"
#include "cli/run_context.h"
#include "util/util.h"

static const cli_optspec specs[] = {
    RUN_CONTEXT_OPTSPECS,      {"format", true},          {"map", true},
    {"stack", true},           {"tolerance", true},
    {"json", false},           {"no-series", false},
    {"list-stacks", false},
};

static void help(void)
{
    printf("usage: mfu report LOG... [MODEL] [DEVICE] [--json]\n\n"
           "Read training logs (any format 'mfu convert --list-formats' knows; plain, .gz or\n"
           ".zst; '-' is stdin) and report, per log: the format and run context, tokens/s,\n"
           "model and hardware TFLOP/s per device, MFU and HFU (median, mean, p10, p90 over\n"
           "the steady steps: warm-up and timing artifacts are excluded and said so), and every\n"
           "MFU, TFLOP/s or tokens/s the framework printed beside mfu's recomputation of it\n"
           "under that framework's own convention and peak, with the likely cause when they\n"
           "disagree. A missing model or device is not an error: the report says which option\n"
           "adds what is missing.\n\n"
           "%s"
           "%s"
           "Log:\n"
           "  --format NAME            read as this format instead of detecting it\n"
           "  --map FIELD=COLUMN       jsonl / csv field mapping (see 'mfu convert --help')\n"
           "  --stack NAME             recompute as this framework does (default: the log's\n"
           "                           format; --list-stacks lists the profiles)\n"
           "  --tolerance F            relative agreement tolerance (default 0.01 = 1%%)\n"
           "Output:\n"
           "  --json                   one JSON object per log (an array for several), keys in\n"
           "                           docs/cli.md; the per-step series under \"series\"\n"
           "  --no-series              leave the per-step series out of --json\n\n"
           "Examples:\n"
           "  mfu report train.log --model llama3-8b --seq 8192 --device h100-sxm\n"
           "  mfu report run.log --config config.json --device 'NVIDIA H100 80GB HBM3' \\\n"
           "      --devices 64 --json | jq .summary.mfu.median\n"
           "  bash examples/demo.sh build/mfu\n\n"
           "exit status: 0 ok, 1 a log could not be read or a device is unknown,\n"
           "2 bad usage (a flag's value).\n",
           MODEL_ARGS_HELP, RUN_CONTEXT_DEVICE_HELP);
}

static int list_stacks(void)
{
    for (size_t i = 0; mfu_report_stack_name(i); i++) {
        const char *name = mfu_report_stack_name(i);
        bool readable = false;
        for (size_t j = 0; mfu_ingest_format_name(j); j++)
            readable = readable || strcmp(mfu_ingest_format_name(j), name) == 0;
        printf("%-12s%s\n", name, readable ? "" : "  (log format not in this build yet)");
    }
    return CLI_EXIT_OK;
}

/* The report-only options (the run context is shared: run_context.c). */
static int report_options(const cli_args *a, mfu_report_input *in)
{
    if (!cli_get_pos_double("report", a, "tolerance", &in->tolerance, NULL))
        return CLI_EXIT_USAGE;
    in->stack = cli_get(a, "stack");
    if (in->stack) {
        bool known = false;
        for (size_t i = 0; mfu_report_stack_name(i); i++)
            known = known || mfu__strcasecmp(mfu_report_stack_name(i), in->stack) == 0;
        if (!known)
            return cli_failf("report", CLI_EXIT_USAGE,
                             "--stack: no framework profile '%s' (see 'mfu report --list-stacks')",
                             in->stack);
    }
    return CLI_EXIT_OK;
}

static int status_exit(mfu_status st)
{
    switch (st) {
    case MFU_E_INVALID:
    case MFU_E_MISSING:
    case MFU_E_RANGE: return CLI_EXIT_USAGE;
    default: return CLI_EXIT_FAIL;
    }
}

/* Read one log and report it (text to stdout, or its JSON appended to *json). */
static int one(const char *path, const mfu_ingest_opts *o, const mfu_report_input *in, json_t *json,
               bool series)
{
    mfu_error e;
    memset(&e, 0, sizeof e);
    mfu_ingest *ing = NULL;
    mfu_status st = mfu_ingest_new(o, &ing, &e);
    if (st != MFU_OK)
        return cli_fail("report", &e,
                        st == MFU_E_UNKNOWN || st == MFU_E_INVALID ? CLI_EXIT_USAGE
                                                                   : CLI_EXIT_FAIL);
    st = mfu_ingest_feed_path(ing, path, &e);
    mfu_run *run = NULL;
    if (st == MFU_OK)
        st = mfu_ingest_finish(ing, &run, &e);
    mfu_ingest_stats stats = *mfu_ingest_get_stats(ing);
    mfu_ingest_free(ing);
    if (st != MFU_OK) {
        if (e.line > 0)
            fprintf(stderr, "mfu report: %s: line %ld: %s\n", path, e.line, e.message);
        else
            fprintf(stderr, "mfu report: %s: %s\n", path,
                    e.message[0] ? e.message : mfu_strerror(st));
        return CLI_EXIT_FAIL;
    }
    mfu_report *r = NULL;
    st = mfu_report_compute(run, in, &r, &e);
    mfu_run_free(run);
    if (st != MFU_OK) {
        fprintf(stderr, "mfu report: %s: %s\n", path, e.message[0] ? e.message : mfu_strerror(st));
        return status_exit(st);
    }
    int rc = CLI_EXIT_OK;
    if (json) {
        json_t *v = report_out_json(path, &stats, r, series);
        if (!v || json_array_append_new(json, v) != 0)
            rc = cli_failf("report", CLI_EXIT_FAIL, "out of memory building JSON output");
    } else {
        report_out_text(stdout, path, &stats, r);
    }
    mfu_report_free(r);
    return rc;
}

int cmd_report(int argc, char **argv)
{
    cli_args a;
    if (!cli_parse("report", argc, argv, specs, MFU__ARRAY_LEN(specs), &a))
        return CLI_EXIT_USAGE;
    if (a.help) {
        help();
        return CLI_EXIT_OK;
    }
    if (cli_has(&a, "list-stacks"))
        return list_stacks();
    if (a.npos == 0)
        return cli_failf("report", CLI_EXIT_USAGE,
                         "no LOG given; pass a training log or '-' for stdin (see 'mfu report "
                         "--help')");
    const char *maps[MFU_INGEST_MAX_MAP];
    size_t nmap = 0;
    for (size_t i = 0; i < a.nocc; i++) {
        if (strcmp(specs[a.occ_spec[i]].name, "map") != 0)
            continue;
        if (nmap == MFU_INGEST_MAX_MAP)
            return cli_failf("report", CLI_EXIT_USAGE,
                             "--map: at most %d entries; separate pairs with commas",
                             MFU_INGEST_MAX_MAP);
        maps[nmap++] = a.occ_value[i];
    }
    mfu_ingest_opts o;
    memset(&o, 0, sizeof o);
    o.format = cli_get(&a, "format");
    o.map = maps;
    o.nmap = nmap;

    run_context ctx;
    int rc = run_context_build("report", &a, &ctx);
    if (rc != CLI_EXIT_OK)
        return rc;
    mfu_report_input in = ctx.in;
    rc = report_options(&a, &in);
    if (rc != CLI_EXIT_OK) {
        run_context_free(&ctx);
        return rc;
    }
    bool want_json = cli_has(&a, "json");
    json_t *json = want_json ? json_array() : NULL;
    if (want_json && !json) {
        run_context_free(&ctx);
        return cli_failf("report", CLI_EXIT_FAIL, "out of memory building JSON output");
    }
    int worst = CLI_EXIT_OK;
    for (size_t i = 0; i < a.npos; i++) {
        if (!want_json && i > 0)
            fputc('\n', stdout);
        int r = one(a.pos[i], &o, &in, json, !cli_has(&a, "no-series"));
        if (r > worst)
            worst = r;
        if (r == CLI_EXIT_USAGE)
            break; /* the same flags fail for every log */
    }
    run_context_free(&ctx);
    if (want_json) {
        if (json_array_size(json) == 0) {
            json_decref(json);
            return worst;
        }
        json_t *v = json;
        if (a.npos == 1) {
            v = json_incref(json_array_get(json, 0));
            json_decref(json);
        }
        int prc = cli_print_json(v);
        return worst != CLI_EXIT_OK ? worst : prc;
    }
    return worst;
}
