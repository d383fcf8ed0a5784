/*
 * cmd_devices.c - `mfu devices [NAME]`: the accelerator table, or one device in full.
 *
 * Without NAME: one aligned row per device with the dense TFLOP/s of bf16, fp16, fp8 and fp32
 * (or of the --dtype given), memory and bandwidth. With NAME (several words are joined, so
 * `mfu devices NVIDIA H100 80GB HBM3` needs no quotes): every dtype dense and sparse, clocks,
 * the reported names it answers to, its source and notes. --json prints the same data with
 * stable keys, peaks in FLOP/s, and null where the table has no figure.
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "util/util.h"

static const char *const CMD = "devices";

static void help(void)
{
    printf("usage: mfu devices [NAME] [--dtype D] [--json]\n"
           "\n"
           "The accelerators mfu knows, with the DENSE peak it divides by for MFU. Vendors\n"
           "headline 2:4-sparse figures (2x dense); they are shown apart and never used by\n"
           "default.\n"
           "\n"
           "  NAME        show one device in full: an id (h100-sxm), or what the driver or\n"
           "              framework reports ('NVIDIA H100 80GB HBM3', 'TPU v5 lite'). Words\n"
           "              may be given without quotes. Unknown or ambiguous: exit 1.\n"
           "  --dtype D   show only dtype D: fp64 fp32 tf32 bf16 fp16 fp8 int8 (bfloat16,\n"
           "              half, e4m3, ... are accepted)\n"
           "  --json      print JSON: peaks in FLOP/s, null where the table has no figure\n"
           "  -h, --help  this help\n"
           "\n"
           "Units: TFLOP/s = 1e12 FLOP/s (int8: TOP/s), GB = 1e9 bytes, TB/s = 1e12 bytes/s.\n"
           "A device not in the table: pass --peak-tflops to the commands that need a peak.\n"
           "See docs/devices.md for the sources and the matching rules.\n"
           "\n"
           "examples:\n"
           "  mfu devices\n"
           "  mfu devices --dtype fp8\n"
           "  mfu devices h100-sxm\n"
           "  mfu devices NVIDIA H100 80GB HBM3\n"
           "  mfu devices 'AMD Instinct MI300X' --json | jq .device.dense_flops_per_s.bf16\n");
}

/* TFLOP/s for the table; "-" for no figure. */
static void fmt_tflops(char *buf, size_t n, double flops_per_s)
{
    if (!(flops_per_s > 0)) {
        snprintf(buf, n, "-");
        return;
    }
    double t = flops_per_s / 1e12;
    /* one decimal keeps the table narrow; the full view (fmt_tflops_full) prints every digit
     * of figures like 154.85 */
    snprintf(buf, n, t < 10 ? "%.2f" : "%.1f", t);
}

static void fmt_tflops_full(char *buf, size_t n, double flops_per_s)
{
    if (!(flops_per_s > 0))
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%.10g", flops_per_s / 1e12);
}

static const char *sparsity_name(mfu_sparsity s)
{
    switch (s) {
    case MFU_SPARSITY_2_4: return "2:4";
    case MFU_SPARSITY_OTHER: return "other";
    case MFU_SPARSITY_NONE: break;
    }
    return "none";
}

static const char *match_name(mfu_device_match_kind k)
{
    switch (k) {
    case MFU_DEVICE_MATCH_EXACT: return "exact";
    case MFU_DEVICE_MATCH_WORDS: return "words";
    case MFU_DEVICE_MATCH_EQUAL_PEAKS: return "equal-peaks";
    case MFU_DEVICE_MATCH_NONE: break;
    }
    return "none";
}

/* ---- text ------------------------------------------------------------------------------- */

/* Print "  label  text" with text wrapped at 96 columns under itself. */
static void print_wrapped(const char *label, const char *text)
{
    const int indent = 18, width = 96;
    printf("  %-*s", indent - 2, label);
    int col = indent;
    const char *p = text;
    while (*p) {
        while (*p == ' ')
            p++;
        size_t len = strcspn(p, " ");
        if (len == 0)
            break;
        if (col > indent && col + 1 + (int)len > width) {
            printf("\n%*s", indent, "");
            col = indent;
        } else if (col > indent) {
            putchar(' ');
            col++;
        }
        printf("%.*s", (int)len, p);
        col += (int)len;
        p += len;
    }
    putchar('\n');
}

static void print_list(int ndtypes, const mfu_dtype *dtypes)
{
    /* column widths from the data, numbers right-aligned under right-aligned headers */
    enum { MAXC = 8 };
    const char *head[MAXC] = {"id", "name"};
    size_t ncols = 2;
    char hdr[MFU_DTYPE_COUNT][24];
    for (int k = 0; k < ndtypes; k++) {
        snprintf(hdr[k], sizeof hdr[k], "%s", mfu_dtype_name(dtypes[k]));
        head[ncols++] = hdr[k];
    }
    head[ncols++] = "mem GB";
    head[ncols++] = "TB/s";
    size_t n = mfu_device_count();
    size_t w[MAXC] = {0};
    for (size_t c = 0; c < ncols; c++)
        w[c] = strlen(head[c]);
    char cell[MAXC][48];
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) {
            printf("dense peak in TFLOP/s (int8: TOP/s); sparse figures: 'mfu devices ID'\n");
            for (size_t c = 0; c < ncols; c++)
                printf(c == 0 ? "%-*s" : c == 1 ? "  %-*s" : "  %*s", (int)w[c], head[c]);
            putchar('\n');
        }
        for (size_t i = 0; i < n; i++) {
            const mfu_device_info *d = mfu_device_at(i);
            size_t c = 0;
            snprintf(cell[c++], sizeof cell[0], "%s", d->id);
            snprintf(cell[c++], sizeof cell[0], "%s", d->name);
            for (int k = 0; k < ndtypes; k++, c++)
                fmt_tflops(cell[c], sizeof cell[0], d->dense_flops_per_s[dtypes[k]]);
            snprintf(cell[c++], sizeof cell[0], "%.3g", d->memory_bytes / 1e9);
            snprintf(cell[c++], sizeof cell[0], "%.2f", d->memory_bandwidth_bytes_per_s / 1e12);
            for (c = 0; c < ncols; c++) {
                if (pass == 0) {
                    if (strlen(cell[c]) > w[c])
                        w[c] = strlen(cell[c]);
                } else {
                    printf(c == 0 ? "%-*s" : c == 1 ? "  %-*s" : "  %*s", (int)w[c], cell[c]);
                }
            }
            if (pass == 1)
                putchar('\n');
        }
    }
}

static void print_one(const mfu_device_match *m, const char *query, int ndtypes,
                      const mfu_dtype *dtypes)
{
    const mfu_device_info *d = m->device;
    printf("%s  %s (%s)\n", d->id, d->name, d->vendor);
    char buf[512];
    if (m->kind == MFU_DEVICE_MATCH_EQUAL_PEAKS) {
        buf[0] = '\0';
        size_t shown =
            m->ncandidates < MFU_DEVICE_CANDIDATES_MAX ? m->ncandidates : MFU_DEVICE_CANDIDATES_MAX;
        for (size_t i = 0; i < shown; i++)
            mfu__appendf(buf, sizeof buf, "%s%s", i ? ", " : "", m->candidates[i]->id);
        char note[768];
        snprintf(note, sizeof note,
                 "'%s' matches %zu entries with equal peaks (%s); showing the first. Their "
                 "memory and bandwidth differ: name one to be exact.",
                 query, m->ncandidates, buf);
        print_wrapped("note", note);
    }
    print_wrapped("matched", match_name(m->kind));
    print_wrapped("unit", d->unit);
    snprintf(buf, sizeof buf, "%.4g GB", d->memory_bytes / 1e9);
    print_wrapped("memory", buf);
    snprintf(buf, sizeof buf, "%.4g TB/s", d->memory_bandwidth_bytes_per_s / 1e12);
    print_wrapped("bandwidth", buf);
    if (d->boost_clock_mhz > 0 && d->peak_clock_mhz > 0 && d->peak_clock_mhz != d->boost_clock_mhz)
        snprintf(buf, sizeof buf, "boost %d MHz; peaks quoted at %d MHz", d->boost_clock_mhz,
                 d->peak_clock_mhz);
    else if (d->boost_clock_mhz > 0)
        snprintf(buf, sizeof buf, "boost %d MHz (peaks quoted at it)", d->boost_clock_mhz);
    else
        snprintf(buf, sizeof buf, "not in the table");
    print_wrapped("clock", buf);
    switch (d->sparsity) {
    case MFU_SPARSITY_2_4:
        print_wrapped("sparsity", "2:4 structured, sparse = 2 x dense; never used by default");
        break;
    case MFU_SPARSITY_OTHER:
        print_wrapped("sparsity", "vendor figure, not 2 x dense (see notes); never used by "
                                  "default");
        break;
    case MFU_SPARSITY_NONE: print_wrapped("sparsity", "no sparse figure"); break;
    }
    printf("\n  %-8s %14s %15s\n", "dtype", "dense TFLOP/s", "sparse TFLOP/s");
    for (int k = 0; k < ndtypes; k++) {
        char a[32], b[32];
        fmt_tflops_full(a, sizeof a, d->dense_flops_per_s[dtypes[k]]);
        fmt_tflops_full(b, sizeof b, d->sparse_flops_per_s[dtypes[k]]);
        printf("  %-8s %14s %15s\n", mfu_dtype_name(dtypes[k]), a, b);
    }
    putchar('\n');
    buf[0] = '\0';
    for (const char *const *r = d->reported_names; r && *r; r++)
        mfu__appendf(buf, sizeof buf, "%s'%s'", buf[0] ? ", " : "", *r);
    print_wrapped("reported names", buf[0] ? buf : "(none)");
    print_wrapped("source", d->source);
    if (d->notes[0])
        print_wrapped("notes", d->notes);
}

/* ---- JSON ------------------------------------------------------------------------------- */

/* A JSON string, or null when s is not valid UTF-8 (a query from the command line may not be),
 * so that every key is always present. */
static json_t *str_or_null(const char *s)
{
    json_t *v = json_string(s);
    return v ? v : json_null();
}

static json_t *num_or_null(double v)
{
    return v > 0 ? json_real(v) : json_null();
}

static json_t *peaks_json(const double *peaks)
{
    json_t *o = json_object();
    for (int t = 0; t < MFU_DTYPE_COUNT; t++)
        json_object_set_new(o, mfu_dtype_name((mfu_dtype)t), num_or_null(peaks[t]));
    return o;
}

static json_t *device_json(const mfu_device_info *d, const mfu_dtype *only)
{
    json_t *o = json_object();
    json_object_set_new(o, "id", json_string(d->id));
    json_object_set_new(o, "name", json_string(d->name));
    json_object_set_new(o, "vendor", json_string(d->vendor));
    json_object_set_new(o, "unit", json_string(d->unit));
    if (only) {
        json_object_set_new(o, "dtype", json_string(mfu_dtype_name(*only)));
        json_object_set_new(o, "peak_flops_per_s", num_or_null(d->dense_flops_per_s[*only]));
    }
    json_object_set_new(o, "dense_flops_per_s", peaks_json(d->dense_flops_per_s));
    json_object_set_new(o, "sparse_flops_per_s", peaks_json(d->sparse_flops_per_s));
    json_object_set_new(o, "sparsity", json_string(sparsity_name(d->sparsity)));
    json_object_set_new(o, "memory_bytes", json_integer((json_int_t)d->memory_bytes));
    json_object_set_new(o, "memory_bandwidth_bytes_per_s",
                        json_real(d->memory_bandwidth_bytes_per_s));
    json_object_set_new(o, "boost_clock_mhz",
                        d->boost_clock_mhz > 0 ? json_integer(d->boost_clock_mhz) : json_null());
    json_object_set_new(o, "peak_clock_mhz",
                        d->peak_clock_mhz > 0 ? json_integer(d->peak_clock_mhz) : json_null());
    json_t *names = json_array();
    for (const char *const *r = d->reported_names; r && *r; r++)
        json_array_append_new(names, json_string(*r));
    json_object_set_new(o, "reported_names", names);
    json_object_set_new(o, "source", json_string(d->source));
    json_object_set_new(o, "notes", json_string(d->notes));
    return o;
}

/* ---- the command ------------------------------------------------------------------------ */

int cmd_devices(int argc, char **argv)
{
    static const cli_optspec specs[] = {{"json", false}, {"dtype", true}};
    cli_args a;
    if (!cli_parse(CMD, argc, argv, specs, sizeof specs / sizeof specs[0], &a))
        return CLI_EXIT_USAGE;
    if (a.help) {
        help();
        return CLI_EXIT_OK;
    }
    bool json = cli_has(&a, "json");
    mfu_dtype only = MFU_DTYPE_BF16;
    bool have_only = false;
    const char *dt = cli_get(&a, "dtype");
    if (dt) {
        mfu_error err = {0};
        if (mfu_dtype_parse(dt, &only, &err) != MFU_OK)
            return cli_failf(CMD, CLI_EXIT_USAGE, "%s", err.message);
        have_only = true;
    }

    /* NAME: the positionals joined by spaces (the library bounds its length) */
    char name[MFU_DEVICE_NAME_MAX + 64];
    name[0] = '\0';
    bool truncated = false;
    for (size_t i = 0; i < a.npos; i++)
        truncated |= !mfu__appendf(name, sizeof name, "%s%s", i ? " " : "", a.pos[i]);
    if (truncated)
        return cli_failf(CMD, CLI_EXIT_FAIL,
                         "device name longer than %d bytes; pass an id from 'mfu devices'",
                         MFU_DEVICE_NAME_MAX);

    static const mfu_dtype list_dtypes[] = {MFU_DTYPE_BF16, MFU_DTYPE_FP16, MFU_DTYPE_FP8,
                                            MFU_DTYPE_FP32};
    static const mfu_dtype all_dtypes[] = {MFU_DTYPE_FP64, MFU_DTYPE_FP32, MFU_DTYPE_TF32,
                                           MFU_DTYPE_BF16, MFU_DTYPE_FP16, MFU_DTYPE_FP8,
                                           MFU_DTYPE_INT8};

    if (a.npos == 0) {
        if (json) {
            json_t *root = json_object();
            if (have_only)
                json_object_set_new(root, "dtype", json_string(mfu_dtype_name(only)));
            json_t *arr = json_array();
            for (size_t i = 0; i < mfu_device_count(); i++)
                json_array_append_new(arr, device_json(mfu_device_at(i), have_only ? &only : NULL));
            json_object_set_new(root, "devices", arr);
            return cli_print_json(root);
        }
        if (have_only)
            print_list(1, &only);
        else
            print_list(4, list_dtypes);
        return CLI_EXIT_OK;
    }

    mfu_device_match m;
    mfu_error err = {0};
    if (mfu_device_match_name(name, &m, &err) != MFU_OK)
        return cli_fail(CMD, &err, CLI_EXIT_FAIL);
    if (json) {
        json_t *root = json_object();
        json_object_set_new(root, "query", str_or_null(name));
        json_object_set_new(root, "match", json_string(match_name(m.kind)));
        json_t *cands = json_array();
        for (size_t i = 0; i < m.ncandidates && i < MFU_DEVICE_CANDIDATES_MAX; i++)
            json_array_append_new(cands, json_string(m.candidates[i]->id));
        json_object_set_new(root, "candidates", cands);
        json_object_set_new(root, "device", device_json(m.device, have_only ? &only : NULL));
        return cli_print_json(root);
    }
    if (have_only)
        print_one(&m, name, 1, &only);
    else
        print_one(&m, name, MFU_DTYPE_COUNT, all_dtypes);
    return CLI_EXIT_OK;
}
