/*
 * cli/db_path.h - which run store a command uses, and opening it with the CLI's errors.
 *
 * The store path is, in order: --db PATH, the MFU_DB environment variable, ./mfu-runs.db.
 * Commands that use a store take `--db PATH` and, when they write, `--wait SECONDS` (how long
 * to wait for another writer; default MFU_STORE_BUSY_TIMEOUT_MS / 1000).
 */
#ifndef MFU_CLI_DB_PATH_H
#define MFU_CLI_DB_PATH_H

#include "cli/cli.h"

#define CLI_DB_ENV "MFU_DB"
#define CLI_DB_DEFAULT "mfu-runs.db"

/* The store path for these arguments (never NULL; owned by argv, the environment or static). */
const char *cli_db_path(const cli_args *a);

/* The help lines every store command prints for --db (and --wait when writes is true). */
void cli_db_help(FILE *out, bool writes);

/* Open the store chosen by cli_db_path with flags (MFU_STORE_*), applying --wait when the
 * command has that option. Returns CLI_EXIT_OK with *out set, or prints the error and returns
 * CLI_EXIT_FAIL (store problem) / CLI_EXIT_USAGE (bad --wait). */
int cli_open_store(const char *cmd, const cli_args *a, unsigned flags, mfu_store **out);

#endif
