/*
 * db_path.c - the --db / MFU_DB / ./mfu-runs.db rule and opening the store for a command.
 */
#include "cli/db_path.h"

#include <stdlib.h>

const char *cli_db_path(const cli_args *a)
{
    const char *p = a ? cli_get(a, "db") : NULL;
    if (p && p[0])
        return p;
    p = getenv(CLI_DB_ENV);
    if (p && p[0])
        return p;
    return CLI_DB_DEFAULT;
}

void cli_db_help(FILE *out, bool writes)
{
    fprintf(out, "  --db PATH       the run store (default: $%s, else ./%s)\n", CLI_DB_ENV,
            CLI_DB_DEFAULT);
    if (writes)
        fprintf(out,
                "  --wait SECONDS  how long to wait while another mfu writes the store "
                "(default %d)\n",
                MFU_STORE_BUSY_TIMEOUT_MS / 1000);
}

int cli_open_store(const char *cmd, const cli_args *a, unsigned flags, mfu_store **out)
{
    *out = NULL;
    double wait_s = -1;
    bool has_wait = false;
    if (!cli_get_double(cmd, a, "wait", &wait_s, &has_wait))
        return CLI_EXIT_USAGE;
    if (has_wait && !(wait_s >= 0 && wait_s <= 86400))
        return cli_failf(cmd, CLI_EXIT_USAGE, "--wait must be 0 to 86400 seconds (got %s)",
                         cli_get(a, "wait"));
    mfu_error e = {0};
    mfu_store *s = NULL;
    if (mfu_store_open(cli_db_path(a), flags, &s, &e) != MFU_OK)
        return cli_fail(cmd, &e, CLI_EXIT_FAIL);
    if (has_wait)
        mfu_store_set_busy_timeout(s, (int)(wait_s * 1000.0), NULL);
    *out = s;
    return CLI_EXIT_OK;
}
