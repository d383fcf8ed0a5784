/*
 * cmd_ingest.c - `mfu ingest LOG...`: read training logs into the run store.
 *
 * Each LOG becomes (or updates) one run, named after the file unless --run says otherwise.
 * Ingesting the same log again adds only what is new (see docs/internals/store.md). While a
 * long log is read and written, a progress line on stderr is redrawn about once a second when
 * stderr is a terminal; every LOG ends with a one-line summary on stderr.
 *
 * The run context options (those of `mfu report`: model, device, job; run_context.h) are checked
 * as the report checks them and stored with each run (mfu_store_set_context), replacing what
 * was stored; without them the stored context stays.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/device_arg.h"
#include "cli/db_path.h"
#include "cli/run_context.h"
#include "util/file.h"
#include "util/util.h"

static const char *const CMD = "ingest";

static void help(FILE *out)
{
    fprintf(out,
            "usage: mfu ingest LOG... [--run NAME] [--tag KEY=VALUE]... [--format NAME]\n"
            "                  [--map FIELD=COLUMN]... [--db PATH] [--wait SECONDS]\n"
            "                  [MODEL] [DEVICE]\n\n"
            "Read training logs into the run store, one run per LOG ('-' reads stdin).\n"
            "Ingesting a log again only adds what is new: an unchanged file is skipped, a grown\n"
            "one is resumed, a truncated or replaced one is read again from the start.\n\n"
            "options:\n"
            "  --run NAME      name of the run (default: the file name without extensions);\n"
            "                  needs a single LOG; required for stdin\n"
            "  --tag KEY=VALUE set a tag on the run (repeatable); KEY uses letters, digits,\n"
            "                  _ . : -\n"
            "  --format NAME   read the logs as this format instead of detecting it\n"
            "  --map F=COLUMN  column mapping for the generic jsonl / csv formats (repeatable)\n");
    cli_db_help(out, true);
    fprintf(out,
            "\nRun context: the options of 'mfu report' that say what the log does not (model,\n"
            "device, job size) are checked as the report checks them and stored with each run,\n"
            "replacing the context stored before; 'mfu serve' and 'mfu report --db' use it.\n"
            "Without them a run keeps its stored context. 'mfu runs' shows it.\n\n%s%s",
            MODEL_ARGS_HELP, RUN_CONTEXT_DEVICE_HELP);
    fprintf(out, "\nexamples:\n"
                 "  mfu ingest train.log\n"
                 "  mfu ingest logs/*.log --tag cluster=a --db runs.db\n"
                 "  mfu ingest node0.log.gz --run gpt3-7b-fp8 --tag arm=baseline\n"
                 "  mfu ingest train.log --model llama3-8b --seq 8192 --device h100-sxm\n"
                 "  tail -n +1 train.log | mfu ingest - --run live\n");
}

/* ---- progress --------------------------------------------------------------------------- */

typedef struct progress {
    const char *label;
    int fd;           /* the log being read (-1: no read progress) */
    int64_t size;     /* its size when opened, bytes (0: unknown) */
    atomic_int phase; /* 0 reading, 1 writing */
    atomic_size_t done, total;
    atomic_bool stop;
    bool drawn; /* written by the thread only; read after join */
} progress;

static void *progress_thread(void *arg)
{
    progress *p = arg;
    double next = mfu__now() + 1.0;
    while (!atomic_load(&p->stop)) {
        struct timespec nap = {0, 50 * 1000 * 1000};
        nanosleep(&nap, NULL);
        double t = mfu__now();
        if (t < next)
            continue;
        next = t + 1.0;
        char line[256];
        if (atomic_load(&p->phase) == 0) {
            if (p->fd < 0 || p->size <= 0)
                continue;
            off_t pos = lseek(p->fd, 0, SEEK_CUR);
            if (pos < 0)
                continue;
            double pct = 100.0 * (double)pos / (double)p->size;
            snprintf(line, sizeof line, "%s: reading %.0f%% (%.0f of %.0f MB)", p->label,
                     pct > 100 ? 100 : pct, (double)pos / 1e6, (double)p->size / 1e6);
        } else {
            size_t done = atomic_load(&p->done), total = atomic_load(&p->total);
            snprintf(line, sizeof line, "%s: writing %zu of %zu rows", p->label, done, total);
        }
        fprintf(stderr, "\r\033[Kmfu %s: %s", CMD, line);
        fflush(stderr);
        p->drawn = true;
    }
    return NULL;
}

static void on_rows(void *ctx, size_t done, size_t total)
{
    progress *p = ctx;
    atomic_store(&p->phase, 1);
    atomic_store(&p->total, total);
    atomic_store(&p->done, done);
}

/* ---- one log ---------------------------------------------------------------------------- */

typedef struct tags_ctx {
    mfu_store *store;
    int64_t id;
    mfu_error *err;
} tags_ctx;

static bool split_tag(const char *kv, char *key, size_t n, const char **value)
{
    const char *eq = strchr(kv, '=');
    if (!eq || (size_t)(eq - kv) >= n)
        return false;
    memcpy(key, kv, (size_t)(eq - kv));
    key[eq - kv] = '\0';
    *value = eq + 1;
    return true;
}

static bool check_tag(const char *kv, void *ctx)
{
    (void)ctx;
    char key[MFU_STORE_TAG_KEY_MAX];
    const char *value = NULL;
    mfu_error e = {0};
    if (!split_tag(kv, key, sizeof key, &value)) {
        cli_failf(CMD, CLI_EXIT_USAGE,
                  "--tag '%s' is not KEY=VALUE with a key under %d bytes (see 'mfu ingest "
                  "--help')",
                  kv, MFU_STORE_TAG_KEY_MAX);
        return false;
    }
    if (mfu_store_check_tag(key, value, &e) != MFU_OK) {
        cli_fail(CMD, &e, CLI_EXIT_USAGE);
        return false;
    }
    return true;
}

static bool set_tag(const char *kv, void *ctx)
{
    tags_ctx *t = ctx;
    char key[MFU_STORE_TAG_KEY_MAX];
    const char *value = NULL;
    if (!split_tag(kv, key, sizeof key, &value))
        return false;
    return mfu_store_set_tag(t->store, t->id, key, value, t->err) == MFU_OK;
}

/* A --format that no format has is a usage error, found before anything is read. */
static bool known_format(const char *name)
{
    if (!name || !name[0] || mfu__strcasecmp(name, "auto") == 0)
        return true;
    for (size_t i = 0; mfu_ingest_format_name(i); i++)
        if (mfu__strcasecmp(mfu_ingest_format_name(i), name) == 0)
            return true;
    char list[512] = "auto";
    for (size_t i = 0; mfu_ingest_format_name(i); i++) {
        size_t len = strlen(list);
        snprintf(list + len, sizeof list - len, ", %s", mfu_ingest_format_name(i));
    }
    cli_failf(CMD, CLI_EXIT_USAGE, "unknown --format '%s'; use one of: %s", name, list);
    return false;
}

static void summary(const char *path, const mfu_store_ingest_result *r, double secs)
{
    const char *label = strcmp(path, "-") == 0 ? "stdin" : path;
    if (r->action == MFU_STORE_UNCHANGED) {
        fprintf(stderr, "mfu %s: %s -> run '%s': unchanged, %zu step%s (%s)\n", CMD, label,
                r->run_name, r->rows, r->rows == 1 ? "" : "s", r->stats.format);
        return;
    }
    char extra[300] = "";
    if (r->stats.skipped > 0 && r->stats.nskip_samples > 0)
        snprintf(extra, sizeof extra, "; %ld lines skipped, first at line %ld: %s",
                 r->stats.skipped, r->stats.skip_samples[0].line, r->stats.skip_samples[0].reason);
    else if (r->stats.too_long > 0)
        snprintf(extra, sizeof extra, "; %ld over-long lines skipped", r->stats.too_long);
    char size[32];
    cli_fmt_si(size, sizeof size, (double)r->bytes, "B");
    fprintf(
        stderr, "mfu %s: %s -> run '%s': %zu step%s (%zu written), %s, %s in %.1f s [%s%s%s]%s\n",
        CMD, label, r->run_name, r->rows, r->rows == 1 ? "" : "s", r->rows_written, r->stats.format,
        size, secs, mfu_store_action_name(r->action), r->reason[0] ? ": " : "", r->reason, extra);
    if (r->stats.note[0]) /* the generic reader's mapping, for --map */
        fprintf(stderr, "mfu %s: %s: %s\n", CMD, label, r->stats.note);
    if (r->text_repaired)
        fprintf(stderr,
                "mfu %s: note: %zu byte%s of the log's header text (model, device, ...) %s not "
                "UTF-8: stored as U+FFFD\n",
                CMD, r->text_repaired, r->text_repaired == 1 ? "" : "s",
                r->text_repaired == 1 ? "was" : "were");
}

static int ingest_one(mfu_store *store, const cli_args *a, const char *path,
                      const mfu_store_ingest_opts *o, const char *context)
{
    bool is_stdin = strcmp(path, "-") == 0;
    mfu_error oe;
    FILE *f = is_stdin ? stdin : mfu__open_log(path, &oe);
    if (!f)
        return cli_fail(CMD, &oe, CLI_EXIT_FAIL);
    progress p;
    memset(&p, 0, sizeof p);
    p.label = is_stdin ? "stdin" : path;
    p.fd = fileno(f);
    struct stat sb;
    if (p.fd >= 0 && fstat(p.fd, &sb) == 0 && S_ISREG(sb.st_mode))
        p.size = (int64_t)sb.st_size;
    atomic_init(&p.phase, 0);
    atomic_init(&p.done, 0);
    atomic_init(&p.total, 0);
    atomic_init(&p.stop, false);
    pthread_t th;
    bool threaded = isatty(STDERR_FILENO) && pthread_create(&th, NULL, progress_thread, &p) == 0;
    mfu_store_set_progress(store, on_rows, &p);

    double t0 = mfu__now();
    mfu_store_ingest_result r;
    mfu_error e = {0};
    mfu_status st = mfu_store_ingest_file(store, f, path, o, &r, &e);

    mfu_store_set_progress(store, NULL, NULL);
    if (threaded) {
        atomic_store(&p.stop, true);
        pthread_join(th, NULL);
        if (p.drawn)
            fputs("\r\033[K", stderr);
    }
    if (!is_stdin)
        fclose(f);
    if (st != MFU_OK)
        return cli_fail(CMD, &e, CLI_EXIT_FAIL);
    tags_ctx t = {store, r.run_id, &e};
    if (!cli_each(a, "tag", set_tag, &t))
        return cli_fail(CMD, &e, CLI_EXIT_FAIL);
    if (context && mfu_store_set_context(store, r.run_id, context, &e) != MFU_OK)
        return cli_fail(CMD, &e, CLI_EXIT_FAIL);
    summary(path, &r, mfu__now() - t0);
    return CLI_EXIT_OK;
}

int cmd_ingest(int argc, char **argv)
{
    static const cli_optspec specs[] = {
        RUN_CONTEXT_OPTSPECS, {"run", true}, {"tag", true},  {"format", true},
        {"map", true},        {"db", true},  {"wait", true},
    };
    cli_args a;
    if (!cli_parse(CMD, argc, argv, specs, sizeof specs / sizeof specs[0], &a))
        return CLI_EXIT_USAGE;
    if (a.help) {
        help(stdout);
        return CLI_EXIT_OK;
    }
    if (a.npos == 0)
        return cli_failf(CMD, CLI_EXIT_USAGE, "give at least one LOG (see 'mfu ingest --help')");
    const char *run = cli_get(&a, "run");
    if (run && a.npos > 1)
        return cli_failf(CMD, CLI_EXIT_USAGE,
                         "--run names one run: give a single LOG, or drop --run to name each "
                         "run after its file");
    mfu_error e = {0};
    if (run && mfu_store_check_name(run, &e) != MFU_OK)
        return cli_fail(CMD, &e, CLI_EXIT_USAGE);
    for (size_t i = 0; i < a.npos; i++)
        if (strcmp(a.pos[i], "-") == 0 && !run)
            return cli_failf(CMD, CLI_EXIT_USAGE,
                             "reading stdin ('-') needs a run name: add --run NAME");
    if (!cli_each(&a, "tag", check_tag, NULL))
        return CLI_EXIT_USAGE;
    mfu_store_ingest_opts o;
    memset(&o, 0, sizeof o);
    o.run_name = run;
    o.ingest.format = cli_get(&a, "format");
    if (!known_format(o.ingest.format))
        return CLI_EXIT_USAGE;
    cli_maps m;
    if (!cli_get_maps(CMD, &a, &m))
        return CLI_EXIT_USAGE;
    o.ingest.map = m.v;
    o.ingest.nmap = m.n;

    /* the context: checked as the report checks it, then stored in its canonical form */
    char *context = NULL;
    if (run_context_given(&a)) {
        run_context rc_check;
        int rc = run_context_build(CMD, &a, &rc_check);
        if (rc != CLI_EXIT_OK)
            return rc;
        const mfu_device_info *dev = NULL;
        if (rc_check.in.device && cli_device_find(rc_check.in.device, &dev, &e) != MFU_OK) {
            run_context_free(&rc_check);
            return cli_fail(CMD, &e, CLI_EXIT_USAGE);
        }
        run_context_free(&rc_check);
        if (!(context = run_context_to_json(CMD, &a)))
            return CLI_EXIT_FAIL;
        if (mfu_store_check_context(context, &e) != MFU_OK) {
            free(context);
            return cli_fail(CMD, &e, CLI_EXIT_USAGE);
        }
    }
    mfu_store *store = NULL;
    int rc = cli_open_store(CMD, &a, MFU_STORE_CREATE, &store);
    if (rc != CLI_EXIT_OK) {
        free(context);
        return rc;
    }
    int status = CLI_EXIT_OK;
    for (size_t i = 0; i < a.npos; i++) {
        int r = ingest_one(store, &a, a.pos[i], &o, context);
        if (r != CLI_EXIT_OK)
            status = r; /* go on with the other logs; fail at the end */
    }
    mfu_store_close(store);
    free(context);
    return status;
}
