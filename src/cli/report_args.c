/*
 * report_args.c - the run-context and analysis options shared by `mfu report` and `mfu compare`
 * (report_args.h), and reading one log into a report.
 */
#include "cli/report_args.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"
#include "util/util.h"

/* The report's own options on top of the run context: stack, tolerance, roofline shape. */
static int build_input(const char *cmd, const cli_args *a, mfu_report_input *in)
{
    if (!cli_get_pos_double(cmd, a, "tolerance", &in->tolerance, NULL) ||
        !cli_get_pos_int64(cmd, a, "micro-batch", &in->micro_batch, NULL) ||
        !cli_get_pos_int64(cmd, a, "tp", &in->tp, NULL))
        return CLI_EXIT_USAGE;
    in->stack = cli_get(a, "stack");
    if (in->stack) {
        bool known = false;
        for (size_t i = 0; mfu_report_stack_name(i); i++)
            known = known || mfu__strcasecmp(mfu_report_stack_name(i), in->stack) == 0;
        if (!known)
            return cli_failf(cmd, CLI_EXIT_USAGE,
                             "--stack: no framework profile '%s' (see 'mfu report --list-stacks')",
                             in->stack);
    }
    return CLI_EXIT_OK;
}

static int build_analysis(const char *cmd, const cli_args *a, mfu_analysis_options *ao)
{
    mfu_analysis_options_init(ao);
    if (!cli_get_pos_double(cmd, a, "size-threshold", &ao->size_threshold, NULL))
        return CLI_EXIT_USAGE;
    if (!(ao->size_threshold < 1))
        return cli_failf(cmd, CLI_EXIT_USAGE,
                         "--size-threshold is a fraction in (0, 1), e.g. 0.01 for 1 point");
    if (cli_has(a, "no-intervals"))
        ao->intervals = false;
    return CLI_EXIT_OK;
}

int report_args_build(const char *cmd, const cli_args *a, report_args *ra)
{
    memset(ra, 0, sizeof *ra);
    if (!cli_get_maps(cmd, a, &ra->maps))
        return CLI_EXIT_USAGE;
    ra->ingest.format = cli_get(a, "format");
    ra->ingest.map = ra->maps.v;
    ra->ingest.nmap = ra->maps.n;
    int rc = run_context_build(cmd, a, &ra->ctx);
    if (rc != CLI_EXIT_OK)
        return rc;
    ra->in = ra->ctx.in;
    rc = build_input(cmd, a, &ra->in);
    if (rc == CLI_EXIT_OK)
        rc = build_analysis(cmd, a, &ra->analysis);
    if (rc != CLI_EXIT_OK) {
        run_context_free(&ra->ctx);
        return rc;
    }
    ra->in.analysis = &ra->analysis;
    return CLI_EXIT_OK;
}

void report_args_free(report_args *ra)
{
    run_context_free(&ra->ctx);
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

int report_args_read(const char *cmd, const report_args *ra, const char *path, mfu_run **run,
                     mfu_ingest_stats *stats, report_skips *skips)
{
    *run = NULL;
    mfu_error e;
    memset(&e, 0, sizeof e);
    mfu_ingest *ing = NULL;
    mfu_ingest_opts io = ra->ingest;
    if (skips) {
        io.on_skip = report_skips_note;
        io.on_skip_ctx = skips;
    }
    mfu_status st = mfu_ingest_new(&io, &ing, &e);
    if (st != MFU_OK)
        return cli_fail(
            cmd, &e, st == MFU_E_UNKNOWN || st == MFU_E_INVALID ? CLI_EXIT_USAGE : CLI_EXIT_FAIL);
    st = mfu_ingest_feed_path(ing, path, &e);
    if (st == MFU_OK)
        st = mfu_ingest_finish(ing, run, &e);
    if (stats)
        *stats = *mfu_ingest_get_stats(ing);
    if (st == MFU_OK && mfu_ingest_get_stats(ing)->note[0]) /* the generic reader's mapping */
        fprintf(stderr, "mfu %s: %s: %s\n", cmd, path, mfu_ingest_get_stats(ing)->note);
    mfu_ingest_free(ing);
    if (st != MFU_OK) {
        cli_fail_about(cmd, path, &e, st);
        return CLI_EXIT_FAIL;
    }
    return CLI_EXIT_OK;
}

/* report_args_report; consume (NULL, or run itself): the run is freed next, its columns may go
 * before the analysis (mfu__report_compute_consume). */
static int report_of(const char *cmd, const report_args *ra, const char *path, const mfu_run *run,
                     mfu_run *consume, bool per_device, mfu_report **out)
{
    mfu_error e;
    memset(&e, 0, sizeof e);
    mfu_report_input in = ra->in;
    in.per_device = per_device;
    mfu_status st = consume ? mfu__report_compute_consume(consume, &in, out, &e)
                            : mfu_report_compute(run, &in, out, &e);
    if (st != MFU_OK) {
        cli_fail_about(cmd, path, &e, st);
        return status_exit(st);
    }
    return CLI_EXIT_OK;
}

int report_args_report(const char *cmd, const report_args *ra, const char *path, const mfu_run *run,
                       bool per_device, mfu_report **out)
{
    return report_of(cmd, ra, path, run, NULL, per_device, out);
}

int report_args_compute(const char *cmd, const report_args *ra, const char *path, mfu_report **out,
                        mfu_ingest_stats *stats, report_skips *skips)
{
    *out = NULL;
    mfu_run *run = NULL;
    int rc = report_args_read(cmd, ra, path, &run, stats, skips);
    if (rc == CLI_EXIT_OK)
        rc = report_of(cmd, ra, path, run, run, false, out); /* the run goes next */
    mfu_run_free(run);
    return rc;
}
