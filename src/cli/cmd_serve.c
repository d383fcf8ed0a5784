/*
 * cmd_serve.c - `mfu serve [LOG...]`: the dashboard, the JSON API, live runs and /metrics over
 * the run store (src/server). Prints the URL, serves until SIGINT or SIGTERM, then stops every
 * thread (followed logs are written to the store once more) and exits 0.
 *
 * Signals are blocked before any thread starts, so every thread inherits the mask, and the main
 * thread takes them with sigwait(): no handler runs inside the server's threads.
 */
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/device_arg.h"
#include "cli/db_path.h"
#include "cli/model_args.h"
#include "cli/run_context.h"
#include "server/server.h"
#include "util/util.h"

static const char *const CMD = "serve";

static const cli_optspec specs[] = {
    RUN_CONTEXT_OPTSPECS, {"local-devices", true}, {"db", true},         {"listen", true},
    {"token", true},      {"run", true},           {"format", true},     {"map", true},
    {"hostname", true},   {"gpus-per-node", true}, {"max-points", true},
};

static void help(void)
{
    printf("usage: mfu serve [LOG...] [--db PATH] [--listen 127.0.0.1:8080] [--token T]\n"
           "                 [MODEL] [--device NAME | --peak-tflops X] [--devices N]\n\n"
           "Serve the dashboard, a JSON API and Prometheus metrics for the runs of the store,\n"
           "and follow each LOG as it grows (like tail -F: truncation and rotation are handled);\n"
           "new steps reach open pages within a second. Runs until Ctrl-C or SIGTERM.\n\n"
           "Server:\n"
           "  --listen ADDR:PORT       where to listen (default 127.0.0.1:8080; port 0 picks a\n"
           "                           free one). Beyond loopback a token is required\n"
           "  --token T                enables POST /api/runs/RUN/steps for clients sending\n"
           "                           'Authorization: Bearer T' (%d-%d characters; default\n"
           "                           $MFU_TOKEN). The token guards POST only: every GET (the\n"
           "                           dashboard, /api/..., /metrics) is answered without it\n"
           "                           to whoever reaches the address; beyond loopback, keep\n"
           "                           the port behind a firewall or an authenticating proxy\n"
           "  --db PATH                the run store (default: $MFU_DB, else ./mfu-runs.db);\n"
           "                           created when absent\n"
           "  --run NAME               the run name of a single LOG (default: its file name)\n"
           "  --format NAME, --map F=COLUMN   how to read the LOGs (as for mfu ingest)\n"
           "  --max-points N           the largest max_points a series request may ask for\n"
           "                           (default %d)\n"
           "Metrics labels (see docs/prometheus.md):\n"
           "  --hostname NAME          the hostname label (default: this host's name)\n"
           "  --local-devices N        devices of the job this server's logs stand for (one\n"
           "                           node of many: its GPUs); default: all of them\n"
           "  --gpus-per-node N        posted ranks get gpu=\"RANK mod N\"\n\n"
           "MFU needs the model and the hardware. Each run uses the context stored with it\n"
           "('mfu ingest LOG --model ... --device ...'); the options below apply to the runs\n"
           "without a stored context, and to the LOGs followed here (which take them over a\n"
           "stored context when any is given). Without them tokens/s and step times are still\n"
           "served. The options are those of 'mfu report':\n"
           "%s%s\n"
           "Examples:\n"
           "  mfu serve train.log --model llama3-8b --device h100-sxm --devices 8\n"
           "  mfu serve --db runs.db --listen 127.0.0.1:0\n"
           "  export MFU_TOKEN=$(head -c 24 /dev/urandom | base64)\n"
           "  mfu serve node3.log --listen 0.0.0.0:9464 --devices 64 --local-devices 8 \\\n"
           "      --model llama3-70b --device h100-sxm &\n"
           "  curl --fail-with-body -H \"Authorization: Bearer $MFU_TOKEN\" \\\n"
           "      --data-binary @steps.jsonl \\\n"
           "      http://127.0.0.1:9464/api/runs/myrun/steps\n",
           MFU_SERVER_TOKEN_MIN, MFU_SERVER_TOKEN_MAX, MFU_SERVER_POINTS_LIMIT, MODEL_ARGS_HELP,
           RUN_CONTEXT_DEVICE_HELP);
}

static void log_line(void *ctx, const char *line)
{
    (void)ctx;
    fprintf(stderr, "mfu serve: %s\n", line);
}

/* The server's model from a run context (flags or a stored context): the model checked with
 * the sequence length of --seq, or a stand-in when each run is to give its own. out->
 * device_as_given and doc_lengths point into c. */
static mfu_status model_from_context(const run_context *c, mfu__server_model *out, mfu_error *err)
{
    memset(out, 0, sizeof *out);
    out->peak_flops_per_s = NAN;
    out->devices = NAN;
    out->local_devices = NAN;
    const mfu_report_input *in = &c->in;
    if (c->has_model) {
        out->has_model = true;
        out->arch = in->arch;
        out->workload = in->workload;
        out->options = in->flops;
        mfu_workload wl = in->workload;
        if (wl.seq <= 0)
            wl.seq = 4096; /* stand-in: each run's own seq_len is used when serving */
        mfu_flops f;
        mfu_status st = mfu_flops_compute(&in->arch, &wl, &in->flops, &f, err);
        if (st != MFU_OK)
            return st;
    }
    out->dtype_given = in->dtype_given;
    out->dtype = in->dtype;
    if (in->device) {
        mfu_status st = cli_device_find(in->device, &out->device, err);
        if (st != MFU_OK)
            return st;
        out->device_as_given = in->device;
        double p;
        if (out->dtype_given &&
            (st = mfu_device_peak_flops_per_s(out->device, out->dtype, false, &p, err)) != MFU_OK)
            return st;
    }
    if (in->peak_flops_per_s > 0)
        out->peak_flops_per_s = in->peak_flops_per_s;
    if (in->devices > 0)
        out->devices = (double)in->devices;
    out->global_batch = in->global_batch;
    out->tokens_per_step = in->tokens_per_step;
    out->real_tokens_per_step = in->real_tokens_per_step;
    return MFU_OK;
}

/* The server's context_fn: a run's stored context, parsed as the flags are. */
static mfu_status stored_model(void *ctx, const char *json, mfu__server_model *out, mfu_error *err)
{
    (void)ctx;
    run_context c;
    if (run_context_from_json(CMD, json, &c) != CLI_EXIT_OK)
        return mfu__fail(err, MFU_E_INVALID, 0, "its options are not valid (see the server's log)");
    mfu__server_model m;
    mfu_status st = model_from_context(&c, &m, err);
    if (st == MFU_OK)
        st = mfu__server_model_copy(&m, out, err);
    run_context_free(&c);
    return st;
}

static int build_flags(const cli_args *a, run_context *c, mfu__server_model *out)
{
    int rc = run_context_build(CMD, a, c);
    if (rc != CLI_EXIT_OK)
        return rc;
    mfu_error err = {0};
    mfu_status st = model_from_context(c, out, &err);
    if (st != MFU_OK) {
        run_context_free(c);
        return cli_fail(CMD, &err, model_args_exit_status(st));
    }
    int64_t n = 0;
    bool has = false;
    if (!cli_get_pos_int64(CMD, a, "local-devices", &n, &has)) {
        run_context_free(c);
        return CLI_EXIT_USAGE;
    }
    if (has) {
        if (isfinite(out->devices) && (double)n > out->devices) {
            run_context_free(c);
            return cli_failf(CMD, CLI_EXIT_USAGE,
                             "--local-devices (%lld) cannot exceed --devices (%.0f)", (long long)n,
                             out->devices);
        }
        out->local_devices = (double)n;
    }
    return CLI_EXIT_OK;
}

int cmd_serve(int argc, char **argv)
{
    cli_args a;
    if (!cli_parse(CMD, argc, argv, specs, MFU__ARRAY_LEN(specs), &a))
        return CLI_EXIT_USAGE;
    if (a.help) {
        help();
        return CLI_EXIT_OK;
    }
    for (size_t i = 0; i < a.npos; i++)
        if (strcmp(a.pos[i], "-") == 0)
            return cli_failf(CMD, CLI_EXIT_USAGE,
                             "stdin cannot be followed: give log files (or pipe into 'mfu "
                             "ingest - --run NAME')");
    if (cli_has(&a, "run") && a.npos != 1)
        return cli_failf(CMD, CLI_EXIT_USAGE, "--run names the run of exactly one LOG");

    mfu__server_opts o;
    memset(&o, 0, sizeof o);
    run_context ctx;
    int rc = build_flags(&a, &ctx, &o.model);
    if (rc != CLI_EXIT_OK)
        return rc;
    o.context_fn = stored_model;
    cli_maps mp = {.n = 0};
    if (rc == CLI_EXIT_OK && !cli_get_maps(CMD, &a, &mp))
        rc = CLI_EXIT_USAGE;
    int64_t gpn = 0, maxp = 0;
    bool has = false;
    if (rc == CLI_EXIT_OK && (!cli_get_pos_int64(CMD, &a, "gpus-per-node", &gpn, &has) ||
                              !cli_get_pos_int64(CMD, &a, "max-points", &maxp, &has)))
        rc = CLI_EXIT_USAGE;
    if (rc == CLI_EXIT_OK && has && (maxp < 2 || maxp > MFU_RUN_MAX_STEPS))
        rc = cli_failf(CMD, CLI_EXIT_USAGE, "--max-points must be 2 to %ld",
                       (long)MFU_RUN_MAX_STEPS);
    if (rc != CLI_EXIT_OK) {
        run_context_free(&ctx);
        return rc;
    }
    o.db_path = cli_db_path(&a);
    o.listen = cli_get(&a, "listen");
    o.token = cli_get(&a, "token");
    if (!o.token)
        o.token = getenv("MFU_TOKEN");
    o.logs = (const char *const *)a.pos;
    o.nlogs = a.npos;
    o.run_name = cli_get(&a, "run");
    o.ingest.format = cli_get(&a, "format");
    o.ingest.map = mp.v;
    o.ingest.nmap = mp.n;
    o.hostname = cli_get(&a, "hostname");
    o.gpus_per_node = (int)gpn;
    o.points_limit = (size_t)maxp;
    o.log = log_line;

    /* Block the stop signals in every thread; the main thread takes them with sigwait. */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);

    mfu__server *srv = NULL;
    mfu_error err = {0};
    mfu_status st = mfu__server_start(&o, &srv, &err);
    run_context_free(&ctx); /* the server copied what it needs */
    if (st != MFU_OK)
        return cli_fail(CMD, &err,
                        st == MFU_E_INVALID || st == MFU_E_LIMIT ? CLI_EXIT_USAGE : CLI_EXIT_FAIL);
    printf("serving %s (store %s", mfu__server_url(srv), o.db_path);
    if (o.nlogs)
        printf(", following %zu log%s", o.nlogs, o.nlogs == 1 ? "" : "s");
    printf("; Ctrl-C stops)\n");
    if (!mfu__server_loopback(srv))
        fprintf(stderr,
                "mfu %s: note: beyond loopback, every GET (the dashboard, the API, "
                "/metrics) is answered without the token; only POST needs it\n",
                CMD);
    fflush(stdout);

    int sig = 0;
    while (sigwait(&set, &sig) != 0)
        ;
    mfu__server_stop(srv);
    return CLI_EXIT_OK;
}
