/*
 * cmd_report.c - `mfu report LOG...`: per log, the detected format and the run's context,
 * then tokens/s, model and hardware TFLOP/s per device, MFU and HFU over the steady steps
 * (warm-up excluded and said so), and every figure the framework printed beside mfu's
 * recomputation of it, with the likely cause of a disagreement; then the analysis: segments,
 * each boundary's decomposition with its verdicts, findings with next steps, and the --expect
 * invariants (exit 3 when one is violated); --html writes one page for every LOG.
 *
 * Each LOG is one run. Context flags apply to every LOG: the model options of model_args,
 * --device/--dtype/--peak-tflops, --devices, --global-batch/--tokens-per-step,
 * --real-tokens-per-step; they override what the log's header says. The library side is
 * src/report (include/mfu/report.h); rendering is report_out.c.
 */
#include <errno.h>
#include <math.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/db_path.h"
#include "cli/report_args.h"
#include "cli/report_out.h"
#include "cli/trace_view.h"
#include "util/util.h"

static const cli_optspec specs[] = {
    REPORT_ARGS_OPTSPECS, {"json", false},    {"no-series", false},   {"list-stacks", false},
    {"expect", true},     {"html", true},     {"no-analysis", false}, {"run", true},
    {"db", true},         {"wait", true},     {"csv", true},          {"tensorboard", true},
    {"trace", true},      {"verbose", false},
};

static void help(void)
{
    printf("usage: mfu report LOG... [--run NAME]... [MODEL] [DEVICE] [--json]\n\n"
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
           "Stored runs:\n"
           "  --run NAME               also report run NAME of the store (repeatable), after\n"
           "                           the LOGs; its stored context ('mfu ingest' flags) applies\n"
           "                           unless context options are given here, which then\n"
           "                           replace it\n"
           "  --db PATH                the store (default: $MFU_DB, else ./mfu-runs.db)\n"
           "  --wait SECONDS           how long to wait while another mfu writes the store\n"
           "Expectations:\n"
           "  --expect EXPR            an invariant of the steady state, e.g. 'mfu>=0.40',\n"
           "                           'flops_per_token=const', 'tokens_per_second>=1.2e6',\n"
           "                           'findings==0' (repeatable); exit 3 when one is violated\n"
           "  --no-analysis            no segments, decomposition, findings\n"
           "Output:\n"
           "  --json                   one JSON object per log (an array for several), keys in\n"
           "                           docs/cli.md; the per-step series under \"series\"\n"
           "  --no-series              leave the per-step series out of --json\n"
           "  --verbose                name every skipped line of a log with its reason (the\n"
           "                           first %d otherwise; --json: lines.skipped_lines)\n"
           "  --html FILE              also write one self-contained HTML page (SVG charts of\n"
           "                           MFU and tokens/s, the decomposition, step times,\n"
           "                           findings) for every LOG to FILE\n"
           "  --trace FILE             with --html and one run: the run's profiler traces (one\n"
           "                           per rank, repeatable) on the page: where the GPU time\n"
           "                           went and the MFU waterfall at the report's MFU (see\n"
           "                           'mfu trace --help')\n"
           "  --csv FILE               also write every step's figures as CSV (one header, a\n"
           "                           'run' column; '-' is stdout)\n"
           "  --tensorboard DIR        also write TensorBoard event files, one subdirectory per\n"
           "                           run (scalars mfu/mfu, mfu/tokens_per_second, ...):\n"
           "                           tensorboard --logdir DIR\n\n"
           "Examples:\n"
           "  mfu report train.log --model llama3-8b --seq 8192 --device h100-sxm\n"
           "  mfu report run.log --config config.json --device 'NVIDIA H100 80GB HBM3' \\\n"
           "      --devices 64 --json | jq .summary.mfu.median\n"
           "  mfu report run.log --model llama3-8b --device h100-sxm --expect 'mfu>=0.40' \\\n"
           "      --html report.html\n"
           "  mfu report --run llmc-gpt2 --db runs.db --json | jq .summary.mfu.median\n"
           "  bash examples/demo.sh build/mfu\n\n"
           "exit status: 0 ok, 1 a log could not be read or a device is unknown,\n"
           "2 bad usage (a flag's value, a malformed --expect), 3 an --expect was violated.\n",
           MODEL_ARGS_HELP, REPORT_ARGS_HELP, REPORT_SKIPS_SHOWN);
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

/* What every log is reported with. */
typedef struct report_job {
    const report_args *args;
    const char *const *expect; /* --expect expressions */
    size_t nexpect;
    bool json;           /* --json: each run's object is written as it is reported */
    bool json_array;     /* --json with several runs: the objects are elements of an array */
    size_t json_written; /* objects written so far */
    bool series;         /* --json: the per-step series */
    bool keep;           /* --html: keep the report (*out) */
    bool violated;       /* an --expect failed (on some log) */
    FILE *csv;           /* --csv: the open file (or stdout); NULL without */
    bool csv_header;     /* the CSV header is still to be written */
    const char *tb;      /* --tensorboard: the directory; NULL without */
    size_t index;        /* the run's position in the call (names its TensorBoard directory) */
    bool quiet;          /* no text report (the page goes to stdout) */
    const cli_args *cli; /* the command line (--db, --wait, whether context flags were given) */
    mfu_store *store;    /* opened at the first --run; closed by cmd_report */
    bool verbose;        /* --verbose: name every skipped line */
} report_job;

/* DIR/NN-NAME: the TensorBoard run directory of the index-th run of the call, NAME the log's
 * file name or the run's name with anything but [A-Za-z0-9._-] replaced by '_'. */
static void tb_dir(char *out, size_t n, const char *root, size_t index, const char *name)
{
    const char *base = strrchr(name, '/');
    base = base && base[1] ? base + 1 : name;
    char clean[128];
    size_t k = 0;
    for (; base[k] && k + 1 < sizeof clean; k++) {
        char c = base[k];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '.' || c == '_' || c == '-';
        clean[k] = ok ? c : '_';
    }
    clean[k] = '\0';
    snprintf(out, n, "%s/%02zu-%s", root, index + 1, k && strcmp(base, "-") ? clean : "stdin");
}

/* Check report r's expectations and render it (text to stdout, or its JSON written to stdout
 * as it is done). With job->keep, *out gets the report and *detail its source
 * line for the page; otherwise r is freed. Returns the exit status of this run. */
static int finish(const report_origin *o, mfu_report *r, report_job *job, mfu_report **out,
                  char *detail, size_t ndetail)
{
    int rc = CLI_EXIT_OK;
    mfu_error e;
    memset(&e, 0, sizeof e);
    for (size_t i = 0; i < job->nexpect; i++) {
        mfu_invariant_result res;
        mfu_status st = mfu_report_expect(r, job->expect[i], &res, &e);
        if (st != MFU_OK) {
            fprintf(stderr, "mfu report: %s: --expect '%s': %s\n", o->path, job->expect[i],
                    e.message);
            rc = CLI_EXIT_FAIL;
        } else if (!res.passed) {
            fprintf(stderr, "mfu report: %s: expectation failed: %s: %s\n", o->path, res.expression,
                    res.message);
            job->violated = true;
        }
    }
    if (job->csv) {
        if (mfu_report_write_csv(r, o->path, job->csv_header, job->csv, &e) != MFU_OK)
            rc = cli_fail("report", &e, CLI_EXIT_FAIL);
        job->csv_header = false;
    }
    if (job->tb) {
        char dir[4096], path[4300];
        tb_dir(dir, sizeof dir, job->tb, job->index, o->path);
        /* a log without timestamps ended when it was last written (stdin, a stored run: now) */
        const char *log = o->stats ? o->path : o->source;
        struct stat sb;
        double end =
            log && log[0] && strcmp(log, "-") != 0 && stat(log, &sb) == 0 ? (double)sb.st_mtime : 0;
        if (mfu_report_write_tfevents(r, dir, end, path, sizeof path, &e) != MFU_OK)
            rc = cli_fail("report", &e, CLI_EXIT_FAIL);
    }
    if (job->json) {
        /* what printing an array of the objects (one object for one run) at the end gave,
         * written as each run is done: "[" before the first, "," between, "]" in cmd_report */
        const char *before = !job->json_array ? "" : job->json_written ? ",\n  " : "[\n  ";
        bool started = false;
        int jr = report_out_json_write(stdout, before, o, r, job->series, job->json_array ? 1 : 0,
                                       &started);
        if (jr != CLI_EXIT_OK)
            rc = jr;
        if (started)
            job->json_written++;
    } else if (!job->quiet) {
        report_out_text(stdout, o, r);
    }
    if (job->keep) {
        if (o->stats)
            snprintf(detail, ndetail,
                     "%s (%s), %zu steps; lines: %ld read, %ld used, %ld ignored, %ld skipped",
                     o->stats->format, o->stats->detected ? "detected" : "forced",
                     mfu_report_step_count(r), o->stats->lines, o->stats->used, o->stats->ignored,
                     o->stats->skipped);
        else
            snprintf(detail, ndetail, "run of %s: %s, %zu steps stored", o->store, o->format,
                     mfu_report_step_count(r));
        *out = r;
    } else {
        mfu_report_free(r);
    }
    return rc;
}

/* Read one log and report it (finish). */
static int one(const char *path, report_job *job, mfu_report **out, char *detail, size_t ndetail)
{
    mfu_report *r = NULL;
    mfu_ingest_stats stats;
    report_skips skips = {NULL, 0, 0, 0};
    int rc =
        report_args_compute("report", job->args, path, &r, &stats, job->verbose ? &skips : NULL);
    if (rc == CLI_EXIT_OK) {
        report_origin o = {path, &stats, NULL, NULL, NULL, -1, job->verbose ? &skips : NULL};
        rc = finish(&o, r, job, out, detail, ndetail);
    }
    report_skips_free(&skips);
    return rc;
}

/* The report of run (read from the store) under the run's stored context, or under the
 * command line's context options when any was given (they replace the stored ones). */
static int compute_stored(report_job *job, int64_t id, const char *name, const mfu_run *run,
                          mfu_report **r)
{
    report_args stored = *job->args;
    run_context ctx;
    bool own_ctx = false;
    char *context = NULL;
    mfu_error e;
    memset(&e, 0, sizeof e);
    if (!run_context_given(job->cli)) {
        if (mfu_store_get_context(job->store, id, &context, &e) != MFU_OK)
            return cli_fail("report", &e, CLI_EXIT_FAIL);
        if (context && context[0]) { /* NULL or "": stored without context */
            char cmd[MFU_STORE_NAME_MAX + 32];
            snprintf(cmd, sizeof cmd, "report: run %s", name);
            int rc = run_context_from_json(cmd, context, &ctx);
            free(context);
            if (rc != CLI_EXIT_OK)
                return rc;
            own_ctx = true;
            /* the stored context, with the report's own options of the command line */
            const mfu_report_input *cl = &job->args->in;
            stored.ctx = ctx;
            stored.in = ctx.in;
            stored.in.stack = cl->stack;
            stored.in.tolerance = cl->tolerance;
            stored.in.analysis = cl->analysis;
            stored.in.no_analysis = cl->no_analysis;
            stored.in.micro_batch = cl->micro_batch;
            stored.in.tp = cl->tp;
        } else {
            free(context);
        }
    }
    mfu_status st = mfu_report_compute(run, &stored.in, r, &e);
    if (own_ctx)
        run_context_free(&ctx);
    if (st != MFU_OK) {
        fprintf(stderr, "mfu report: run %s: %s\n", name,
                e.message[0] ? e.message : mfu_strerror(st));
        return st == MFU_E_INVALID || st == MFU_E_MISSING || st == MFU_E_RANGE ? CLI_EXIT_USAGE
                                                                               : CLI_EXIT_FAIL;
    }
    return CLI_EXIT_OK;
}

/* Report run `name` of the store (opened at the first call) (finish). */
static int one_stored(const char *name, report_job *job, mfu_report **out, char *detail,
                      size_t ndetail)
{
    if (!job->store) {
        int rc = cli_open_store("report", job->cli, 0, &job->store);
        if (rc != CLI_EXIT_OK)
            return rc;
    }
    const char *db = mfu_store_path(job->store);
    mfu_error e;
    memset(&e, 0, sizeof e);
    int64_t id = 0;
    mfu_status st = mfu_store_find_run(job->store, name, &id, &e);
    if (st == MFU_E_UNKNOWN)
        return cli_failf("report", CLI_EXIT_FAIL,
                         "--run %s: no run of that name in %s; 'mfu runs --db %s' lists them", name,
                         db, db);
    if (st != MFU_OK)
        return cli_fail("report", &e, CLI_EXIT_FAIL);
    mfu_run *run = NULL;
    mfu_store_source src;
    memset(&src, 0, sizeof src);
    if (mfu_store_get_run(job->store, id, &run, &e) != MFU_OK ||
        mfu_store_get_source(job->store, id, &src, &e) != MFU_OK) {
        mfu_run_free(run);
        return cli_fail("report", &e, CLI_EXIT_FAIL);
    }
    mfu_report *r = NULL;
    int rc = compute_stored(job, id, name, run, &r);
    char format[sizeof mfu_run_meta_get(run)->format];
    mfu__strlcpy(format, mfu_run_meta_get(run)->format, sizeof format);
    mfu_run_free(run);
    if (rc != CLI_EXIT_OK)
        return rc;
    report_origin o = {name, NULL, db, format, src.path, src.path[0] ? (long)src.lines : -1, NULL};
    return finish(&o, r, job, out, detail, ndetail);
}

/* Write the page of the kept reports to f (opened on path before any log was read, so that
 * an unwritable path fails before any output); with no report, remove the file. */
static int write_html(FILE *f, const char *path, mfu_report *const *reps, char (*detail)[200],
                      const char *const *names, size_t n, const mfu_trace_view *trace)
{
    bool to_stdout = f == stdout;
    mfu_report_html_run *runs = calloc(n ? n : 1, sizeof *runs);
    size_t k = 0;
    for (size_t i = 0; runs && i < n; i++)
        if (reps[i]) {
            runs[k].report = reps[i];
            runs[k].name = names[i];
            runs[k].detail = detail[i];
            runs[k].trace = trace; /* --trace: one run only */
            k++;
        }
    char *page = NULL;
    mfu_error e;
    memset(&e, 0, sizeof e);
    mfu_status st = runs && k ? mfu_report_html(runs, k, "mfu report", &page, &e) : MFU_OK;
    free(runs);
    bool ok = page && fputs(page, f) >= 0;
    ok = (to_stdout ? fflush(f) == 0 : fclose(f) == 0) && ok;
    free(page);
    if (ok)
        return CLI_EXIT_OK;
    if (!to_stdout)
        remove(path);
    if (!runs)
        return cli_failf("report", CLI_EXIT_FAIL, "out of memory writing --html");
    if (k == 0)
        return cli_failf("report", CLI_EXIT_FAIL, "--html %s: no log could be reported", path);
    if (st != MFU_OK)
        return cli_fail("report", &e, CLI_EXIT_FAIL);
    return cli_failf("report", CLI_EXIT_FAIL, "--html %s: writing failed (disk full?)", path);
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
    /* the runs to report: the LOGs, then the stored runs of --run */
    const char *names[CLI_MAX_OCCURRENCES];
    bool stored[CLI_MAX_OCCURRENCES];
    size_t nitems = 0;
    for (size_t i = 0; i < a.npos && nitems < CLI_MAX_OCCURRENCES; i++) {
        names[nitems] = a.pos[i];
        stored[nitems++] = false;
    }
    for (size_t i = 0; i < a.nocc && nitems < CLI_MAX_OCCURRENCES; i++)
        if (strcmp(specs[a.occ_spec[i]].name, "run") == 0) {
            names[nitems] = a.occ_value[i];
            stored[nitems++] = true;
        }
    if (nitems == (size_t)a.npos && (cli_has(&a, "db") || cli_has(&a, "wait")))
        return cli_failf("report", CLI_EXIT_USAGE,
                         "--db and --wait choose the store of --run NAME; add --run, or drop "
                         "them to report LOGs");
    if (nitems == 0)
        return cli_failf("report", CLI_EXIT_USAGE,
                         "no LOG given; pass a training log, '-' for stdin, or --run NAME for a "
                         "run of the store (see 'mfu report --help')");
    report_args ra;
    int rc = report_args_build("report", &a, &ra);
    if (rc != CLI_EXIT_OK)
        return rc;
    ra.in.no_analysis = cli_has(&a, "no-analysis");
    const char *exprs[CLI_MAX_OCCURRENCES];
    size_t nexpr = 0;
    for (size_t i = 0; i < a.nocc; i++) {
        if (strcmp(specs[a.occ_spec[i]].name, "expect") != 0)
            continue;
        mfu_invariant inv;
        mfu_error e;
        memset(&e, 0, sizeof e);
        if (mfu_invariant_parse(a.occ_value[i], &inv, &e) != MFU_OK) {
            report_args_free(&ra);
            if (e.column > 0)
                return cli_failf("report", CLI_EXIT_USAGE, "--expect '%s': column %ld: %s",
                                 a.occ_value[i], e.column, e.message);
            return cli_failf("report", CLI_EXIT_USAGE, "--expect '%s': %s", a.occ_value[i],
                             e.message);
        }
        exprs[nexpr++] = a.occ_value[i];
    }
    if (nexpr && ra.in.no_analysis) {
        report_args_free(&ra);
        return cli_failf("report", CLI_EXIT_USAGE,
                         "--expect needs the analysis: drop --no-analysis");
    }
    const char *html = cli_get(&a, "html");
    if (cli_has(&a, "trace") && (!html || nitems != 1)) {
        report_args_free(&ra);
        return cli_failf("report", CLI_EXIT_USAGE,
                         "--trace puts one run's profiler traces on the --html page: give one "
                         "LOG and --html FILE (for text and JSON: mfu trace FILE... --log LOG)");
    }
    bool want_json = cli_has(&a, "json");
    if (html && want_json && strcmp(html, "-") == 0) {
        report_args_free(&ra);
        return cli_failf("report", CLI_EXIT_USAGE,
                         "--html - and --json both write to stdout: give --html FILE");
    }
    FILE *hf = NULL;
    if (html) {
        hf = strcmp(html, "-") == 0 ? stdout : fopen(html, "w");
        if (!hf) {
            int err = errno;
            report_args_free(&ra);
            return cli_failf("report", CLI_EXIT_FAIL,
                             "--html %s: cannot write it (%s); give a "
                             "writable path",
                             html, strerror(err));
        }
    }
    const char *csv = cli_get(&a, "csv");
    bool csv_stdout = csv && strcmp(csv, "-") == 0;
    if (csv_stdout && (want_json || (html && strcmp(html, "-") == 0))) {
        if (hf && hf != stdout) {
            fclose(hf);
            remove(html);
        }
        report_args_free(&ra);
        return cli_failf("report", CLI_EXIT_USAGE,
                         "--csv - and %s both write to stdout: give --csv FILE",
                         want_json ? "--json" : "--html -");
    }
    FILE *cf = NULL;
    if (csv) {
        cf = csv_stdout ? stdout : fopen(csv, "w");
        if (!cf) {
            int err = errno;
            if (hf && hf != stdout) {
                fclose(hf);
                remove(html);
            }
            report_args_free(&ra);
            return cli_failf("report", CLI_EXIT_FAIL,
                             "--csv %s: cannot write it (%s); give a writable path", csv,
                             strerror(err));
        }
    }
    report_job job;
    memset(&job, 0, sizeof job);
    job.csv = cf;
    job.csv_header = true;
    job.tb = cli_get(&a, "tensorboard");
    job.args = &ra;
    job.expect = exprs;
    job.nexpect = nexpr;
    job.series = !cli_has(&a, "no-series");
    job.keep = html != NULL;
    job.json = want_json;
    job.json_array = nitems > 1;
    job.cli = &a;
    job.verbose = cli_has(&a, "verbose");
    mfu_report **reps = html ? calloc(nitems, sizeof *reps) : NULL;
    char(*detail)[200] = html ? calloc(nitems, sizeof *detail) : NULL;
    if (html && (!reps || !detail)) {
        if (hf && hf != stdout) {
            fclose(hf);
            remove(html);
        }
        if (cf && cf != stdout)
            fclose(cf);
        free(reps);
        free(detail);
        report_args_free(&ra);
        return cli_failf("report", CLI_EXIT_FAIL, "out of memory");
    }
    /* "--html -" / "--csv -": the page or the CSV is what stdout gets, instead of the text */
    job.quiet = (html && strcmp(html, "-") == 0) || csv_stdout;
    int worst = CLI_EXIT_OK;
    for (size_t i = 0; i < nitems; i++) {
        if (!want_json && !job.quiet && i > 0)
            fputc('\n', stdout);
        mfu_report *keep = NULL;
        char line[200] = "";
        job.index = i;
        int r = stored[i] ? one_stored(names[i], &job, &keep, line, sizeof line)
                          : one(names[i], &job, &keep, line, sizeof line);
        if (html) {
            reps[i] = keep;
            memcpy(detail[i], line, sizeof line);
        }
        if (r > worst)
            worst = r;
        if (r == CLI_EXIT_USAGE)
            break; /* the same flags fail for every log */
    }
    report_args_free(&ra);
    mfu_store_close(job.store);
    if (cf && (csv_stdout ? fflush(cf) != 0 : fclose(cf) != 0) && worst == CLI_EXIT_OK)
        worst = cli_failf("report", CLI_EXIT_FAIL, "--csv %s: writing failed (disk full?)", csv);
    const char *tpaths[CLI_MAX_OCCURRENCES];
    size_t ntr = 0;
    for (size_t i = 0; i < a.nocc; i++)
        if (strcmp(specs[a.occ_spec[i]].name, "trace") == 0)
            tpaths[ntr++] = a.occ_value[i];
    cli_trace_set ts;
    memset(&ts, 0, sizeof ts);
    if (ntr && html && worst != CLI_EXIT_USAGE && reps[0]) {
        char src[300];
        snprintf(src, sizeof src, "mfu report of %s", names[0]);
        int tr = cli_trace_set_read("report", tpaths, ntr, reps[0], src, &ts);
        if (tr > worst)
            worst = tr;
    }
    if (html && worst != CLI_EXIT_USAGE) {
        int hr = write_html(hf, html, reps, detail, names, nitems, ts.n ? &ts.view : NULL);
        if (hr > worst)
            worst = hr;
    } else if (hf && hf != stdout) { /* bad usage: no page */
        fclose(hf);
        remove(html);
    }
    cli_trace_set_free(&ts);
    for (size_t i = 0; reps && i < nitems; i++)
        mfu_report_free(reps[i]);
    free(reps);
    free(detail);
    if (want_json && job.json_written) {
        errno = 0;
        if ((job.json_array && fputs("\n]", stdout) == EOF) || fputc('\n', stdout) == EOF ||
            fflush(stdout) != 0) {
            int prc = cli_failf("json", CLI_EXIT_FAIL, "writing the JSON output failed (%s)",
                                errno ? strerror(errno) : "write error");
            if (worst == CLI_EXIT_OK)
                worst = prc;
        }
    }
    if (worst == CLI_EXIT_OK && job.violated)
        worst = CLI_EXIT_EXPECT;
    return worst;
}
