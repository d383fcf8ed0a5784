/*
 * cli.c - option parsing, error reporting, tables and formatting shared by the subcommands.
 */
#include "cli/cli.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "util/utf8.h"
#include "util/util.h"

static long find_exact(const cli_optspec *specs, size_t n, const char *name, size_t len)
{
    for (size_t i = 0; i < n; i++)
        if (strlen(specs[i].name) == len && strncmp(specs[i].name, name, len) == 0)
            return (long)i;
    return -1;
}

/* Two spellings of one quantity that different commands grew (docs/cli.md, "Aliases"): a
 * command that knows one side accepts the other as that option. */
static const struct alias {
    const char *a, *b;
} aliases[] = {
    {"batch-size", "global-batch"},      /* sequences per optimizer step, whole job */
    {"batch-tokens", "tokens-per-step"}, /* tokens per optimizer step, whole job */
};

static long find_spec(const cli_optspec *specs, size_t n, const char *name, size_t len)
{
    long k = find_exact(specs, n, name, len);
    for (size_t i = 0; k < 0 && i < MFU__ARRAY_LEN(aliases); i++) {
        const struct alias *al = &aliases[i];
        if (strlen(al->a) == len && strncmp(al->a, name, len) == 0)
            k = find_exact(specs, n, al->b, strlen(al->b));
        else if (strlen(al->b) == len && strncmp(al->b, name, len) == 0)
            k = find_exact(specs, n, al->a, strlen(al->a));
    }
    return k;
}

const char *cli_alias_of(const char *name)
{
    for (size_t i = 0; i < MFU__ARRAY_LEN(aliases); i++) {
        if (strcmp(aliases[i].a, name) == 0)
            return aliases[i].b;
        if (strcmp(aliases[i].b, name) == 0)
            return aliases[i].a;
    }
    return NULL;
}

/* "unknown option '--X'", with the nearest options of specs when some are near. */
enum { OPTION_NAME_MAX = 64 };
static void unknown_option(const char *cmd, const cli_optspec *specs, size_t n, const char *name,
                           size_t len)
{
    char q[OPTION_NAME_MAX + 2];
    snprintf(q, sizeof q, "--%.*s", (int)(len < OPTION_NAME_MAX ? len : OPTION_NAME_MAX), name);
    char(*dashed)[OPTION_NAME_MAX + 2] = malloc((n + 1) * sizeof *dashed);
    const char **names = malloc((n + 1) * sizeof *names);
    char near[3 * (OPTION_NAME_MAX + 2) + 16] = "";
    if (dashed && names) {
        for (size_t i = 0; i < n; i++) {
            snprintf(dashed[i], sizeof dashed[i], "--%s", specs[i].name);
            names[i] = dashed[i];
        }
        names[n] = "--help";
        mfu__did_you_mean(q, names, n + 1, near, sizeof near);
    }
    free(names);
    free(dashed);
    if (near[0])
        cli_failf(cmd, CLI_EXIT_USAGE,
                  "unknown option '%.*s' (did you mean %s? see 'mfu %s --help')", (int)(len + 2), q,
                  near, cmd);
    else
        cli_failf(cmd, CLI_EXIT_USAGE, "unknown option '%.*s' (see 'mfu %s --help')",
                  (int)(len + 2), q, cmd);
}

bool cli_parse(const char *cmd, int argc, char **argv, const cli_optspec *specs, size_t nspecs,
               cli_args *out)
{
    memset(out, 0, sizeof *out);
    out->specs = specs;
    out->nspecs = nspecs;
    bool options_done = false;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (!options_done && strcmp(arg, "--") == 0) {
            options_done = true;
            continue;
        }
        if (!options_done && (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0)) {
            out->help = true;
            continue;
        }
        if (options_done || arg[0] != '-' || strcmp(arg, "-") == 0 ||
            (arg[1] >= '0' && arg[1] <= '9')) {
            if (out->npos >= CLI_MAX_POSITIONAL) {
                cli_failf(cmd, CLI_EXIT_USAGE, "too many arguments (at most %d)",
                          CLI_MAX_POSITIONAL);
                return false;
            }
            out->pos[out->npos++] = arg;
            continue;
        }
        if (arg[1] != '-') {
            cli_failf(cmd, CLI_EXIT_USAGE, "unknown option '%s' (see 'mfu %s --help')", arg, cmd);
            return false;
        }
        const char *name = arg + 2;
        const char *eq = strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        long k = find_spec(specs, nspecs, name, len);
        if (k < 0) {
            unknown_option(cmd, specs, nspecs, name, len);
            return false;
        }
        const char *value = NULL;
        if (specs[k].takes_value) {
            if (eq) {
                value = eq + 1;
            } else if (i + 1 < argc) {
                value = argv[++i];
            } else {
                cli_failf(cmd, CLI_EXIT_USAGE, "option '--%s' needs a value (see 'mfu %s --help')",
                          specs[k].name, cmd);
                return false;
            }
        } else if (eq) {
            cli_failf(cmd, CLI_EXIT_USAGE, "option '--%s' takes no value", specs[k].name);
            return false;
        }
        if (out->nocc >= CLI_MAX_OCCURRENCES) {
            cli_failf(cmd, CLI_EXIT_USAGE, "too many options (at most %d)", CLI_MAX_OCCURRENCES);
            return false;
        }
        out->occ_spec[out->nocc] = (size_t)k;
        out->occ_value[out->nocc] = value;
        out->nocc++;
    }
    return true;
}

static long last_occ(const cli_args *a, const char *name)
{
    for (size_t i = a->nocc; i-- > 0;)
        if (strcmp(a->specs[a->occ_spec[i]].name, name) == 0)
            return (long)i;
    return -1;
}

const char *cli_get(const cli_args *a, const char *name)
{
    long i = last_occ(a, name);
    return i < 0 ? NULL : a->occ_value[i];
}

bool cli_has(const cli_args *a, const char *name)
{
    return last_occ(a, name) >= 0;
}

bool cli_each(const cli_args *a, const char *name, bool (*fn)(const char *value, void *ctx),
              void *ctx)
{
    for (size_t i = 0; i < a->nocc; i++)
        if (strcmp(a->specs[a->occ_spec[i]].name, name) == 0 && !fn(a->occ_value[i], ctx))
            return false;
    return true;
}

bool cli_get_double(const char *cmd, const cli_args *a, const char *name, double *out,
                    bool *present)
{
    const char *v = cli_get(a, name);
    if (present)
        *present = v != NULL;
    if (!v)
        return true;
    if (!mfu__parse_double(v, out)) {
        cli_failf(cmd, CLI_EXIT_USAGE, "--%s: '%s' is not a number", name, v);
        return false;
    }
    return true;
}

bool cli_get_pos_double(const char *cmd, const cli_args *a, const char *name, double *out,
                        bool *present)
{
    double v = 0;
    bool p = false;
    if (!cli_get_double(cmd, a, name, &v, &p))
        return false;
    if (present)
        *present = p;
    if (!p)
        return true;
    if (!(v > 0)) {
        cli_failf(cmd, CLI_EXIT_USAGE, "--%s must be greater than 0 (got %s)", name,
                  cli_get(a, name));
        return false;
    }
    *out = v;
    return true;
}

bool cli_get_pos_int64(const char *cmd, const cli_args *a, const char *name, int64_t *out,
                       bool *present)
{
    const char *v = cli_get(a, name);
    if (present)
        *present = v != NULL;
    if (!v)
        return true;
    int64_t x = 0;
    if (!mfu__parse_int64(v, &x)) {
        cli_failf(cmd, CLI_EXIT_USAGE, "--%s: '%s' is not a whole number", name, v);
        return false;
    }
    if (x <= 0) {
        cli_failf(cmd, CLI_EXIT_USAGE, "--%s must be greater than 0 (got %s)", name, v);
        return false;
    }
    *out = x;
    return true;
}

/* Whether msg already says where: "x.log:12: ..." names line 12. */
static bool names_line(const char *msg, long line)
{
    char tag[32];
    snprintf(tag, sizeof tag, ":%ld: ", line);
    return strstr(msg, tag) != NULL;
}

int cli_fail(const char *cmd, const mfu_error *err, int exit_status)
{
    const char *msg = err->message[0] ? err->message : mfu_strerror(err->code);
    if (err->line > 0 && !names_line(msg, err->line))
        fprintf(stderr, "mfu %s: line %ld: %s\n", cmd, err->line, msg);
    else
        fprintf(stderr, "mfu %s: %s\n", cmd, msg);
    return exit_status;
}

void cli_fail_about(const char *cmd, const char *path, const mfu_error *err, mfu_status st)
{
    const char *msg = err->message[0] ? err->message : mfu_strerror(st);
    size_t n = strlen(path);
    if (strncmp(msg, path, n) == 0 && msg[n] == ':') /* the library named it already */
        fprintf(stderr, "mfu %s: %s\n", cmd, msg);
    else if (err->line > 0 && !names_line(msg, err->line))
        fprintf(stderr, "mfu %s: %s:%ld: %s\n", cmd, path, err->line, msg);
    else
        fprintf(stderr, "mfu %s: %s: %s\n", cmd, path, msg);
}

int cli_failf(const char *cmd, int exit_status, const char *fmt, ...)
{
    fprintf(stderr, "mfu %s: ", cmd);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return exit_status;
}

void cli_fmt_si(char *buf, size_t n, double v, const char *unit)
{
    if (!isfinite(v))
        snprintf(buf, n, "-");
    else
        mfu__fmt_si_g(buf, n, v, unit, 4);
}

void cli_fmt_count(char *buf, size_t n, double v)
{
    double a = fabs(v);
    if (!isfinite(v))
        snprintf(buf, n, "-");
    else if (a >= 1e12)
        snprintf(buf, n, "%.3g T", v / 1e12);
    else if (a >= 1e9)
        snprintf(buf, n, "%.3g B", v / 1e9);
    else if (a >= 1e6)
        snprintf(buf, n, "%.3g M", v / 1e6);
    else if (a >= 1e4)
        snprintf(buf, n, "%.3g k", v / 1e3);
    else
        snprintf(buf, n, "%.0f", v);
}

cli_table *cli_table_new(void)
{
    return calloc(1, sizeof(cli_table));
}

void cli_table_row(cli_table *t, size_t ncells, const char *const *cells)
{
    if (t->nrows >= CLI_TABLE_ROWS)
        return;
    if (ncells > CLI_TABLE_COLS)
        ncells = CLI_TABLE_COLS;
    for (size_t i = 0; i < ncells; i++)
        mfu__strlcpy(t->cell[t->nrows][i], cells[i] ? cells[i] : "", CLI_TABLE_CELL);
    if (ncells > t->ncols)
        t->ncols = ncells;
    t->nrows++;
}

void cli_table_rule(cli_table *t)
{
    if (t->nrows > 0)
        t->rule_after[t->nrows - 1] = true;
}

static bool looks_numeric(const char *s)
{
    if (*s == '+' || *s == '-')
        s++;
    return (*s >= '0' && *s <= '9') || (*s == '.' && s[1] >= '0' && s[1] <= '9');
}

/* Display width of a UTF-8 string: count code points, not bytes. */
static size_t utf8_width(const char *s)
{
    size_t w = 0;
    for (; *s; s++)
        if (((unsigned char)*s & 0xC0) != 0x80)
            w++;
    return w;
}

void cli_table_print(const cli_table *t, FILE *out, const char *indent)
{
    size_t width[CLI_TABLE_COLS] = {0};
    for (size_t r = 0; r < t->nrows; r++)
        for (size_t c = 0; c < t->ncols; c++) {
            size_t w = utf8_width(t->cell[r][c]);
            if (w > width[c])
                width[c] = w;
        }
    size_t total = 0;
    for (size_t c = 0; c < t->ncols; c++)
        total += width[c] + (c ? 2 : 0);
    for (size_t r = 0; r < t->nrows; r++) {
        fputs(indent ? indent : "", out);
        /* drop trailing empty cells so lines carry no trailing blanks */
        size_t last = t->ncols;
        while (last > 0 && t->cell[r][last - 1][0] == '\0')
            last--;
        for (size_t c = 0; c < last; c++) {
            const char *s = t->cell[r][c];
            size_t pad = width[c] - utf8_width(s);
            if (c)
                fputs("  ", out);
            bool right = c > 0 && looks_numeric(s);
            if (right)
                fprintf(out, "%*s", (int)pad, "");
            fputs(s, out);
            if (!right && c + 1 < last)
                fprintf(out, "%*s", (int)pad, "");
        }
        fputc('\n', out);
        if (t->rule_after[r]) {
            fputs(indent ? indent : "", out);
            for (size_t i = 0; i < total; i++)
                fputc('-', out);
            fputc('\n', out);
        }
    }
}

/* Fields cli_json_set / cli_json_append could not add since the last cli_print_json (the
 * process's one JSON document is built on one thread). */
static unsigned long json_failures;

json_t *cli_json_str(const char *s)
{
    if (!s)
        s = "";
    json_t *v = json_string(s);
    if (v)
        return v;
    size_t n = strlen(s);
    char *t = malloc(3 * n + 1); /* each byte at worst becomes U+FFFD */
    if (!t)
        return NULL;
    mfu__utf8_repair(s, t, 3 * n + 1);
    v = json_string(t);
    free(t);
    return v;
}

int cli_json_set(json_t *o, const char *key, json_t *v)
{
    int rc = json_object_set_new(o, key, v);
    if (rc != 0)
        json_failures++;
    return rc;
}

int cli_json_append(json_t *a, json_t *v)
{
    int rc = json_array_append_new(a, v);
    if (rc != 0)
        json_failures++;
    return rc;
}

unsigned long cli_json_take_failures(void)
{
    unsigned long lost = json_failures;
    json_failures = 0;
    return lost;
}

int cli_print_json(json_t *v)
{
    unsigned long lost = json_failures;
    json_failures = 0;
    if (!v || lost) {
        json_decref(v);
        return cli_failf("json", CLI_EXIT_FAIL,
                         "out of memory building the JSON output (%lu field%s could not be "
                         "added); nothing was written",
                         lost, lost == 1 ? "" : "s");
    }
    errno = 0;
    int rc = json_dumpf(v, stdout, CLI_JSON_FLAGS);
    json_decref(v);
    if (rc != 0 || fputc('\n', stdout) == EOF || fflush(stdout) != 0)
        return cli_failf("json", CLI_EXIT_FAIL, "writing the JSON output failed (%s)",
                         errno ? strerror(errno) : "write error");
    return CLI_EXIT_OK;
}

json_t *cli_json_num(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

bool cli_get_maps(const char *cmd, const cli_args *a, cli_maps *out)
{
    out->n = 0;
    for (size_t i = 0; i < a->nocc; i++) {
        if (strcmp(a->specs[a->occ_spec[i]].name, "map") != 0)
            continue;
        if (out->n == MFU_INGEST_MAX_MAP) {
            cli_failf(cmd, CLI_EXIT_USAGE, "at most %d --map options; join pairs with commas",
                      MFU_INGEST_MAX_MAP);
            return false;
        }
        out->v[out->n++] = a->occ_value[i];
    }
    return true;
}
