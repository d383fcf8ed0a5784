/*
 * cmd_runs.c - `mfu runs`: list the runs in the store, as an aligned table or JSON.
 *
 * The table is printed here rather than with cli_table: a store may hold more runs than
 * cli_table's row limit, and source paths are longer than its cells.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/db_path.h"
#include "cli/run_context.h"
#include "util/util.h"

static const char *const CMD = "runs";

static void help(FILE *out)
{
    fprintf(out, "usage: mfu runs [--db PATH] [--json]\n\n"
                 "List the runs in the store: name, format, steps stored, first and last step\n"
                 "number, tags, the run context stored by 'mfu ingest' (short form: the options\n"
                 "without their dashes) and the log each came from. A step count marked '*'\n"
                 "belongs to an ingest that did not finish: run the same 'mfu ingest' again to\n"
                 "complete it.\n\n"
                 "options:\n"
                 "  --json          print {\"db\": PATH, \"runs\": [...]} instead of a table\n");
    cli_db_help(out, false);
    fprintf(out, "\nexamples:\n"
                 "  mfu runs\n"
                 "  mfu runs --db runs.db --json | jq '.runs[].name'\n"
                 "  MFU_DB=~/runs.db mfu runs\n");
}

enum { COLS = 8 };

/* The cells of one run (heap strings, freed by free_cells). */
static void cells_of(const mfu_store_run_info *r, char *cell[COLS])
{
    char buf[64];
    cell[0] = mfu__strdup(r->name);
    cell[1] = mfu__strdup(r->format[0] ? r->format : "-");
    snprintf(buf, sizeof buf, "%lld%s", (long long)r->steps, r->complete ? "" : "*");
    cell[2] = mfu__strdup(buf);
    snprintf(buf, sizeof buf, "%lld", (long long)r->first_step);
    cell[3] = mfu__strdup(r->steps ? buf : "-");
    snprintf(buf, sizeof buf, "%lld", (long long)r->last_step);
    cell[4] = mfu__strdup(r->steps ? buf : "-");
    size_t len = 2; /* "-" when there is no tag */
    for (size_t i = 0; i < r->ntags; i++)
        len += strlen(r->tags[i].key) + strlen(r->tags[i].value) + 2;
    cell[5] = malloc(len);
    if (cell[5]) {
        cell[5][0] = '\0';
        size_t at = 0;
        for (size_t i = 0; i < r->ntags; i++)
            at += (size_t)snprintf(cell[5] + at, len - at, "%s%s=%s", i ? "," : "", r->tags[i].key,
                                   r->tags[i].value);
        if (r->ntags == 0)
            snprintf(cell[5], len, "-");
    }
    char ctx[80];
    run_context_short(r->context, ctx, sizeof ctx);
    cell[6] = mfu__strdup(ctx);
    cell[7] = mfu__strdup(r->source[0] ? r->source : "-");
}

static size_t width(const char *s)
{
    size_t w = 0;
    for (; *s; s++)
        if (((unsigned char)*s & 0xC0) != 0x80)
            w++;
    return w;
}

static int print_table(const mfu_store_list *l)
{
    static const char *const head[COLS] = {"NAME", "FORMAT", "STEPS",   "FIRST",
                                           "LAST", "TAGS",   "CONTEXT", "SOURCE"};
    static const bool right[COLS] = {false, false, true, true, true, false, false, false};
    size_t n = mfu_store_list_count(l);
    char *(*cells)[COLS] = calloc(n ? n : 1, sizeof *cells);
    if (!cells)
        return cli_failf(CMD, CLI_EXIT_FAIL, "out of memory");
    size_t w[COLS];
    bool partial = false, ok = true;
    for (int c = 0; c < COLS; c++)
        w[c] = strlen(head[c]);
    for (size_t i = 0; i < n; i++) {
        const mfu_store_run_info *r = mfu_store_list_at(l, i);
        cells_of(r, cells[i]);
        partial |= !r->complete;
        for (int c = 0; c < COLS; c++) {
            if (!cells[i][c]) {
                ok = false;
                continue;
            }
            size_t cw = width(cells[i][c]);
            if (cw > w[c])
                w[c] = cw;
        }
    }
    for (size_t i = 0; ok && i <= n; i++) {
        for (int c = 0; c < COLS; c++) {
            const char *s = i == 0 ? head[c] : cells[i - 1][c];
            size_t pad = w[c] - width(s);
            if (c)
                fputs("  ", stdout);
            if (right[c])
                printf("%*s%s", (int)pad, "", s);
            else if (c + 1 < COLS)
                printf("%s%*s", s, (int)pad, "");
            else
                fputs(s, stdout);
        }
        fputc('\n', stdout);
    }
    if (ok && partial)
        printf("* ingest did not finish: run the same 'mfu ingest' again to complete it\n");
    for (size_t i = 0; i < n; i++)
        for (int c = 0; c < COLS; c++)
            free(cells[i][c]);
    free(cells);
    if (!ok)
        return cli_failf(CMD, CLI_EXIT_FAIL, "out of memory");
    return fflush(stdout) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL;
}

static json_t *iso_time(int64_t s)
{
    time_t t = (time_t)s;
    struct tm tm;
    char buf[32];
    if (!gmtime_r(&t, &tm) || strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
        return json_null();
    return cli_json_str(buf);
}

static int print_json(const mfu_store_list *l, const char *db)
{
    json_t *runs = json_array();
    for (size_t i = 0; i < mfu_store_list_count(l); i++) {
        const mfu_store_run_info *r = mfu_store_list_at(l, i);
        json_t *tags = json_object();
        for (size_t k = 0; k < r->ntags; k++)
            cli_json_set(tags, r->tags[k].key, cli_json_str(r->tags[k].value));
        json_t *o = json_object();
        cli_json_set(o, "name", cli_json_str(r->name));
        cli_json_set(o, "id", json_integer(r->id));
        cli_json_set(o, "format", cli_json_str(r->format));
        cli_json_set(o, "steps", json_integer(r->steps));
        cli_json_set(o, "first_step", r->steps ? json_integer(r->first_step) : json_null());
        cli_json_set(o, "last_step", r->steps ? json_integer(r->last_step) : json_null());
        cli_json_set(o, "complete", json_boolean(r->complete));
        cli_json_set(o, "tags", tags);
        json_t *ctx = r->context[0] ? json_loads(r->context, 0, NULL) : NULL;
        cli_json_set(o, "context", ctx ? ctx : json_null());
        cli_json_set(o, "source", r->source[0] ? cli_json_str(r->source) : json_null());
        cli_json_set(o, "source_bytes", json_integer(r->source_bytes));
        cli_json_set(o, "source_lines", json_integer(r->source_lines));
        cli_json_set(o, "created", iso_time(r->created_s));
        cli_json_set(o, "updated", iso_time(r->updated_s));
        cli_json_append(runs, o);
    }
    json_t *top = json_object();
    cli_json_set(top, "db", cli_json_str(db));
    cli_json_set(top, "runs", runs);
    return cli_print_json(top);
}

int cmd_runs(int argc, char **argv)
{
    static const cli_optspec specs[] = {{"db", true}, {"json", false}};
    cli_args a;
    if (!cli_parse(CMD, argc, argv, specs, sizeof specs / sizeof specs[0], &a))
        return CLI_EXIT_USAGE;
    if (a.help) {
        help(stdout);
        return CLI_EXIT_OK;
    }
    if (a.npos > 0)
        return cli_failf(CMD, CLI_EXIT_USAGE, "unexpected argument '%s' (see 'mfu runs --help')",
                         a.pos[0]);
    mfu_store *store = NULL;
    int rc = cli_open_store(CMD, &a, 0, &store);
    if (rc != CLI_EXIT_OK)
        return rc;
    mfu_store_list *l = NULL;
    mfu_error e = {0};
    if (mfu_store_list_runs(store, &l, &e) != MFU_OK) {
        mfu_store_close(store);
        return cli_fail(CMD, &e, CLI_EXIT_FAIL);
    }
    if (cli_has(&a, "json"))
        rc = print_json(l, cli_db_path(&a));
    else if (mfu_store_list_count(l) == 0)
        fprintf(stderr, "mfu %s: no runs in %s; add one with 'mfu ingest LOG'\n", CMD,
                cli_db_path(&a));
    else
        rc = print_table(l);
    mfu_store_list_free(l);
    mfu_store_close(store);
    return rc;
}
