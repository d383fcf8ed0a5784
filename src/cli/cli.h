/*
 * cli/cli.h - what every `mfu` subcommand shares: option parsing, error reporting with exit
 * codes, aligned tables, number formatting and JSON output.
 *
 * Exit status (documented in docs/cli.md): 0 success, 1 the run failed (bad input data,
 * unknown device, I/O), 2 bad usage (unknown option, missing or malformed argument),
 * 3 an --expect invariant was violated.
 *
 * A subcommand is `int cmd_NAME(int argc, char **argv)` with argv[0] the subcommand's name;
 * it returns the exit status and prints its own help on -h/--help.
 */
#ifndef MFU_CLI_H
#define MFU_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "mfu/mfu.h"

enum { CLI_EXIT_OK = 0, CLI_EXIT_FAIL = 1, CLI_EXIT_USAGE = 2, CLI_EXIT_EXPECT = 3 };

/* ---- options ---------------------------------------------------------------------------- */

#define CLI_MAX_POSITIONAL 256

/* One option a subcommand accepts. name is the long name without "--". takes_value: the
 * option needs a value (`--seq 4096` or `--seq=4096`); otherwise it is a flag. An option may
 * repeat (`--map a=b --map c=d`): every occurrence is kept. */
typedef struct cli_optspec {
    const char *name;
    bool takes_value;
} cli_optspec;

#define CLI_MAX_OCCURRENCES 512

typedef struct cli_args {
    const cli_optspec *specs;
    size_t nspecs;
    /* parallel arrays of every occurrence, in command-line order */
    size_t nocc;
    size_t occ_spec[CLI_MAX_OCCURRENCES];
    const char *occ_value[CLI_MAX_OCCURRENCES]; /* NULL for flags */
    size_t npos;
    const char *pos[CLI_MAX_POSITIONAL];
    bool help; /* -h or --help was given */
} cli_args;

/* Parse argv[1..argc-1] against specs. "--" ends options. A lone "-" is a positional (stdin).
 * On an unknown option, a missing value or too many arguments, prints
 * "mfu CMD: ... (see 'mfu CMD --help')" to stderr and returns false: exit with CLI_EXIT_USAGE. */
bool cli_parse(const char *cmd, int argc, char **argv, const cli_optspec *specs, size_t nspecs,
               cli_args *out);

/* The other spelling of an option that has one (documented in docs/cli.md, "Aliases"):
 * "batch-size" <-> "global-batch", "batch-tokens" <-> "tokens-per-step"; NULL when none.
 * cli_parse() accepts either for the option a command knows; an unknown option gets a
 * "did you mean" of the nearest options the command knows. */
const char *cli_alias_of(const char *name);

/* The value of the last occurrence of option name, or NULL when absent (or a flag). */
const char *cli_get(const cli_args *a, const char *name);
/* True when option name (flag or valued) occurred at least once. */
bool cli_has(const cli_args *a, const char *name);
/* Calls fn(value, ctx) for every occurrence of name in order; stops and returns false as soon
 * as fn does. */
bool cli_each(const cli_args *a, const char *name, bool (*fn)(const char *value, void *ctx),
              void *ctx);

/* The --map values of a, in order (mfu_ingest_opts.map / nmap point at v / n). */
typedef struct cli_maps {
    const char *v[MFU_INGEST_MAX_MAP];
    size_t n;
} cli_maps;

/* Collect a's --map values into *out; past MFU_INGEST_MAX_MAP prints "mfu CMD: at most N --map
 * options; join pairs with commas" and returns false. */
bool cli_get_maps(const char *cmd, const cli_args *a, cli_maps *out);

/* Typed getters: if the option is absent, leave *out and return true. If present but not a
 * valid number (or, for *_pos, not > 0), print a usage error naming the option and return
 * false. */
bool cli_get_double(const char *cmd, const cli_args *a, const char *name, double *out,
                    bool *present);
bool cli_get_pos_double(const char *cmd, const cli_args *a, const char *name, double *out,
                        bool *present);
bool cli_get_pos_int64(const char *cmd, const cli_args *a, const char *name, int64_t *out,
                       bool *present);

/* ---- errors ----------------------------------------------------------------------------- */

/* Print "mfu CMD: <err->message>" (and the line when set) to stderr; returns CLI_EXIT_FAIL
 * or, for MFU_E_INVALID on user input, the status given. */
int cli_fail(const char *cmd, const mfu_error *err, int exit_status);
/* The same for an error about the file path, which is named once: not again when the library's
 * message starts with it ("x.log: cannot open ..."). */
void cli_fail_about(const char *cmd, const char *path, const mfu_error *err, mfu_status st);
/* Print "mfu CMD: <formatted>" to stderr and return exit_status. */
int cli_failf(const char *cmd, int exit_status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ---- output ----------------------------------------------------------------------------- */

/* Format v with an SI prefix and unit, 4 significant digits, trailing zeros dropped
 * (mfu__fmt_si_g): 1.2345e15, "FLOP" -> "1.235 PFLOP"; 999.96e12 -> "1 PFLOP"; "-" when v is
 * not finite. */
void cli_fmt_si(char *buf, size_t n, double v, const char *unit);
/* Format a count as 8.03 B / 46.7 M / 1,234 (parameters, tokens). */
void cli_fmt_count(char *buf, size_t n, double v);

/* An aligned text table: add cells row by row, then print. Columns are left-aligned unless
 * the cell looks numeric, which is right-aligned. A row holds at most CLI_TABLE_COLS cells. */
#define CLI_TABLE_COLS 12
#define CLI_TABLE_ROWS 1024
#define CLI_TABLE_CELL 96
typedef struct cli_table {
    size_t ncols, nrows;
    char cell[CLI_TABLE_ROWS][CLI_TABLE_COLS][CLI_TABLE_CELL];
    bool rule_after[CLI_TABLE_ROWS]; /* print a separator line after this row */
} cli_table;

/* Heap-allocate an empty table (it is large); NULL on allocation failure. free() it. */
cli_table *cli_table_new(void);
/* Append a row of ncells strings (extra cells are dropped, missing ones are empty). */
void cli_table_row(cli_table *t, size_t ncells, const char *const *cells);
/* Mark the last row added so that a separator line follows it. */
void cli_table_rule(cli_table *t);
void cli_table_print(const cli_table *t, FILE *out, const char *indent);

/* The jansson flags of every JSON document the CLI prints: two-space indent, keys in the order
 * they were set, 10 significant digits (a writer in pieces uses them to print the same bytes). */
#define CLI_JSON_FLAGS (JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10))

/* Print a JSON value to stdout with stable key order and a trailing newline, then decref it.
 * Returns CLI_EXIT_OK, or CLI_EXIT_FAIL if it could not be written. */
int cli_print_json(json_t *v);
/* The CLI's JSON writers build with these, so that no field vanishes: jansson refuses a
 * string that is not UTF-8 (json_string gives NULL) and json_object_set_new then drops the
 * field. cli_json_str repairs such bytes to U+FFFD (NULL only when out of memory);
 * cli_json_set and cli_json_append are json_object_set_new and json_array_append_new that
 * count a failure (a NULL value, out of memory), and cli_print_json then fails with an error
 * instead of printing an object without the field. */
json_t *cli_json_str(const char *s);
/* The failures counted since the last call (or cli_print_json), which resets the count: for a
 * writer that prints its document in pieces (report_out_json_write). */
unsigned long cli_json_take_failures(void);
int cli_json_set(json_t *o, const char *key, json_t *v);
int cli_json_append(json_t *a, json_t *v);
/* json_real that maps non-finite values to null. */
json_t *cli_json_num(double v);

#endif /* MFU_CLI_H */
