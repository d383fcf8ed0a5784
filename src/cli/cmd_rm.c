/*
 * cmd_rm.c - `mfu rm NAME...`: remove runs (rows, tags, findings) from the store.
 */
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/db_path.h"

static const char *const CMD = "rm";

static void help(FILE *out)
{
    fprintf(out, "usage: mfu rm NAME... [--db PATH] [--wait SECONDS]\n\n"
                 "Remove runs from the store with their steps, tags and findings. The log files\n"
                 "are not touched: 'mfu ingest' can read them in again.\n\n"
                 "options:\n");
    cli_db_help(out, true);
    fprintf(out, "\nexamples:\n"
                 "  mfu rm train\n"
                 "  mfu rm old-a old-b --db runs.db\n");
}

int cmd_rm(int argc, char **argv)
{
    static const cli_optspec specs[] = {{"db", true}, {"wait", true}};
    cli_args a;
    if (!cli_parse(CMD, argc, argv, specs, sizeof specs / sizeof specs[0], &a))
        return CLI_EXIT_USAGE;
    if (a.help) {
        help(stdout);
        return CLI_EXIT_OK;
    }
    if (a.npos == 0)
        return cli_failf(CMD, CLI_EXIT_USAGE,
                         "give the NAME of a run to remove (list them with "
                         "'mfu runs')");
    mfu_store *store = NULL;
    int rc = cli_open_store(CMD, &a, 0, &store);
    if (rc != CLI_EXIT_OK)
        return rc;
    int status = CLI_EXIT_OK;
    for (size_t i = 0; i < a.npos; i++) {
        mfu_error e = {0};
        int64_t id = 0;
        if (mfu_store_find_run(store, a.pos[i], &id, &e) != MFU_OK ||
            mfu_store_delete_run(store, id, &e) != MFU_OK) {
            status = cli_fail(CMD, &e, CLI_EXIT_FAIL);
            continue;
        }
        fprintf(stderr, "mfu %s: removed run '%s'\n", CMD, a.pos[i]);
    }
    mfu_store_close(store);
    return status;
}
