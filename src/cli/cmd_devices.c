/*
 * cmd_devices.c - `mfu devices [NAME]`: the accelerator table, or one device in full.
 *
 * Without NAME: one aligned row per device with the dense TFLOP/s of bf16, fp16, fp8 and fp32
 * (or of the --dtype given), memory and bandwidth. A NAME that selects several entries with
 * different peaks ("h100"): their rows. With NAME (several words are joined, so
 * `mfu devices NVIDIA H100 80GB HBM3` needs no quotes): every dtype dense and sparse, clocks,
 * the reported names it answers to, its source and notes. --json prints the same data with
 * stable keys, peaks in FLOP/s, and null where the table has no figure.
 *
 * NAME "cpu": the CPU mfu runs on (not in the table): what was detected, its computed peak
 * per dtype with the rule that says how, and with --probe [SECONDS] [--threads N] the fp32 and
 * fp64 matrix rate a blocked GEMM reaches here, against that peak.
 *
 * --live: the GPUs of this machine as NVML (loaded at run time) reports them now, one row each:
 * name, matched table id and its dense peak, SM clock, power, clock event reasons, temperature,
 * utilization; --watch SECONDS repeats it (--count N times, else until interrupted).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "device/device.h"
#include "util/util.h"

static const char *const CMD = "devices";
static int devices_main(const cli_args *a);

static void help(void)
{
    printf("usage: mfu devices [NAME] [--dtype D] [--json]\n"
           "       mfu devices cpu [--probe [SECONDS]] [--threads N] [--dtype D] [--json]\n"
           "       mfu devices --live [--watch SECONDS [--count N]] [--dtype D] [--json]\n"
           "\n"
           "The accelerators mfu knows, with the DENSE peak it divides by for MFU. Vendors\n"
           "headline 2:4-sparse figures (2x dense); they are shown apart and never used by\n"
           "default.\n"
           "\n"
           "  NAME        show one device in full: an id (h100-sxm), or what the driver or\n"
           "              framework reports ('NVIDIA H100 80GB HBM3', 'TPU v5 lite'). Words\n"
           "              may be given without quotes. A name several devices answer to\n"
           "              (h100) lists them; an unknown one: exit 1 with the closest ids.\n"
           "  --dtype D   show only dtype D: fp64 fp32 tf32 bf16 fp16 fp8 int8 (bfloat16,\n"
           "              half, e4m3, ... are accepted)\n"
           "  --json      print JSON: peaks in FLOP/s, null where the table has no figure\n"
           "  cpu         the CPU mfu runs on: detected cores, clock and vector ISA, and the\n"
           "              peak computed from them, with the rule that says how. `--device cpu`\n"
           "              gives that peak to estimate, report, watch, ingest and serve.\n"
           "  --probe [SECONDS]  with cpu: measure the fp32 and fp64 matrix rate of a blocked\n"
           "              GEMM for SECONDS in all (default 1, range 0.05-60) and compare it\n"
           "              with the peak\n"
           "  --threads N with --probe: threads (default one per core; 1-256)\n"
           "  --live      this machine's GPUs now, from NVIDIA's NVML (libnvidia-ml.so.1 of the\n"
           "              driver, loaded at run time; env MFU_NVML_LIBRARY overrides it): name,\n"
           "              table id and dense peak, SM clock / max, power / limit, clock event\n"
           "              (throttle) reasons, temperature, utilization. No driver: exit 1.\n"
           "  --watch SECONDS  with --live: sample again every SECONDS (0.1-3600)\n"
           "  --count N   with --watch: stop after N samples (default: until interrupted)\n"
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
           "  mfu devices 'AMD Instinct MI300X' --json | jq .device.dense_flops_per_s.bf16\n"
           "  mfu devices cpu --probe 2\n"
           "  mfu devices --live --json | jq '.gpus[] | {name, sm_clock_mhz, reasons}'\n"
           "  mfu devices --live --watch 1\n");
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

/* The table rows of devs[0..n), or of the whole table when devs is NULL. */
static void print_list(const mfu_device_info *const *devs, size_t n, int ndtypes,
                       const mfu_dtype *dtypes)
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
    if (!devs)
        n = mfu_device_count();
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
            const mfu_device_info *d = devs ? devs[i] : mfu_device_at(i);
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
    json_t *v = cli_json_str(s);
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
        cli_json_set(o, mfu_dtype_name((mfu_dtype)t), num_or_null(peaks[t]));
    return o;
}

static json_t *device_json(const mfu_device_info *d, const mfu_dtype *only)
{
    json_t *o = json_object();
    cli_json_set(o, "id", cli_json_str(d->id));
    cli_json_set(o, "name", cli_json_str(d->name));
    cli_json_set(o, "vendor", cli_json_str(d->vendor));
    cli_json_set(o, "unit", cli_json_str(d->unit));
    if (only) {
        cli_json_set(o, "dtype", cli_json_str(mfu_dtype_name(*only)));
        cli_json_set(o, "peak_flops_per_s", num_or_null(d->dense_flops_per_s[*only]));
    }
    cli_json_set(o, "dense_flops_per_s", peaks_json(d->dense_flops_per_s));
    cli_json_set(o, "sparse_flops_per_s", peaks_json(d->sparse_flops_per_s));
    cli_json_set(o, "sparsity", cli_json_str(sparsity_name(d->sparsity)));
    cli_json_set(o, "memory_bytes", json_integer((json_int_t)d->memory_bytes));
    cli_json_set(o, "memory_bandwidth_bytes_per_s", json_real(d->memory_bandwidth_bytes_per_s));
    cli_json_set(o, "boost_clock_mhz",
                 d->boost_clock_mhz > 0 ? json_integer(d->boost_clock_mhz) : json_null());
    cli_json_set(o, "peak_clock_mhz",
                 d->peak_clock_mhz > 0 ? json_integer(d->peak_clock_mhz) : json_null());
    json_t *names = json_array();
    for (const char *const *r = d->reported_names; r && *r; r++)
        cli_json_append(names, cli_json_str(*r));
    cli_json_set(o, "reported_names", names);
    cli_json_set(o, "source", cli_json_str(d->source));
    cli_json_set(o, "notes", cli_json_str(d->notes));
    return o;
}

/* ---- this machine's CPU ------------------------------------------------------------------ */

static const char *arch_name(mfu_cpu_arch a)
{
    switch (a) {
    case MFU_CPU_ARCH_X86_64: return "x86-64";
    case MFU_CPU_ARCH_AARCH64: return "aarch64";
    case MFU_CPU_ARCH_UNKNOWN: break;
    }
    return "unknown";
}

static void features_text(char *buf, size_t n, const mfu_cpu_info *c)
{
    buf[0] = '\0';
    for (int b = 0; b < MFU_CPU_FEATURE_COUNT; b++)
        if (c->features & (1u << b))
            mfu__appendf(buf, n, "%s%s", buf[0] ? " " : "", mfu_cpu_feature_name(1u << b));
}

static json_t *rate_json(const mfu_cpu_probe_rate *r)
{
    json_t *o = json_object();
    cli_json_set(o, "flops_per_s", cli_json_num(r->flops_per_s));
    cli_json_set(o, "flops", cli_json_num(r->flops));
    cli_json_set(o, "seconds", cli_json_num(r->seconds));
    cli_json_set(o, "products", json_integer((json_int_t)r->products));
    cli_json_set(o, "peak_flops_per_s", cli_json_num(r->peak_flops_per_s));
    cli_json_set(o, "ratio", cli_json_num(r->ratio));
    cli_json_set(o, "max_rel_error", cli_json_num(r->max_rel_error));
    return o;
}

static json_t *cpu_info_json(const mfu_cpu_info *c)
{
    json_t *o = json_object();
    cli_json_set(o, "arch", cli_json_str(arch_name(c->arch)));
    cli_json_set(o, "vendor", str_or_null(c->vendor));
    cli_json_set(o, "model_name", str_or_null(c->model_name));
#define INT_OR_NULL(v) ((v) >= 0 ? json_integer(v) : json_null())
    cli_json_set(o, "family", INT_OR_NULL(c->family));
    cli_json_set(o, "model", INT_OR_NULL(c->model));
    cli_json_set(o, "stepping", INT_OR_NULL(c->stepping));
    cli_json_set(o, "implementer", INT_OR_NULL(c->implementer));
    cli_json_set(o, "part", INT_OR_NULL(c->part));
#undef INT_OR_NULL
    json_t *f = json_array();
    for (int b = 0; b < MFU_CPU_FEATURE_COUNT; b++)
        if (c->features & (1u << b))
            cli_json_append(f, cli_json_str(mfu_cpu_feature_name(1u << b)));
    cli_json_set(o, "features", f);
    cli_json_set(o, "features_source", cli_json_str(c->features_source));
    cli_json_set(o, "logical_cpus",
                 c->logical_cpus > 0 ? json_integer(c->logical_cpus) : json_null());
    cli_json_set(o, "logical_cpus_source", cli_json_str(c->logical_source));
    cli_json_set(o, "physical_cores",
                 c->physical_cores > 0 ? json_integer(c->physical_cores) : json_null());
    cli_json_set(o, "physical_cores_source", cli_json_str(c->cores_source));
    cli_json_set(o, "hybrid", json_boolean(c->hybrid));
    cli_json_set(o, "clock_hz", num_or_null(c->clock_hz));
    cli_json_set(o, "clock_source", cli_json_str(c->clock_source));
    return o;
}

static json_t *cpu_peak_json(const mfu_cpu_peak *p)
{
    json_t *o = json_object();
    cli_json_set(o, "core", cli_json_str(p->core));
    cli_json_set(o, "known_core", json_boolean(p->known_core));
    cli_json_set(o, "cores", json_integer(p->cores));
    cli_json_set(o, "clock_hz", json_real(p->clock_hz));
    cli_json_set(o, "fma_units", json_integer(p->fma_units));
    cli_json_set(o, "fma_bits", json_integer(p->fma_bits));
    cli_json_set(o, "isa_bits", json_integer(p->isa_bits));
    cli_json_set(o, "flops_per_cycle_per_core", peaks_json(p->flops_per_cycle_per_core));
    cli_json_set(o, "dense_flops_per_s", peaks_json(p->dense_flops_per_s));
    cli_json_set(o, "rule", cli_json_str(p->rule));
    cli_json_set(o, "source", cli_json_str(p->source));
    return o;
}

static void print_cpu(const mfu_cpu_info *c, const mfu_cpu_peak *p, const mfu_error *peak_err,
                      int ndtypes, const mfu_dtype *dtypes)
{
    char buf[1024];
    printf("cpu  %s (%s)\n", c->model_name[0] ? c->model_name : "unknown model",
           c->vendor[0] ? c->vendor : "unknown vendor");
    print_wrapped("arch", arch_name(c->arch));
    if (c->family >= 0) {
        snprintf(buf, sizeof buf, "family %d, model %d (0x%x/0x%x), stepping %d", c->family,
                 c->model, (unsigned)c->family, (unsigned)(c->model < 0 ? 0 : c->model),
                 c->stepping);
        print_wrapped("cpuid", buf);
    }
    if (c->implementer >= 0) {
        snprintf(buf, sizeof buf, "implementer 0x%02x, part 0x%03x", (unsigned)c->implementer,
                 (unsigned)(c->part < 0 ? 0 : c->part));
        print_wrapped("midr", buf);
    }
    snprintf(buf, sizeof buf, "%d physical (%s) of %d logical CPUs (%s)%s", c->physical_cores,
             c->cores_source, c->logical_cpus, c->logical_source,
             c->hybrid ? "; hybrid: cores of two kinds" : "");
    print_wrapped("cores", buf);
    if (c->clock_hz > 0)
        snprintf(buf, sizeof buf, "%.4g GHz (%s)", c->clock_hz / 1e9, c->clock_source);
    else
        snprintf(buf, sizeof buf, "unknown");
    print_wrapped("clock", buf);
    char feats[256];
    features_text(feats, sizeof feats, c);
    snprintf(buf, sizeof buf, "%s (%s)", feats[0] ? feats : "none known", c->features_source);
    print_wrapped("features", buf);
    if (!p) {
        print_wrapped("peak", peak_err->message);
        return;
    }
    snprintf(buf, sizeof buf, "%s%s: %d FMA unit%s x %d-bit per core, vector ISA %d-bit", p->core,
             p->known_core ? "" : " (mfu's default)", p->fma_units, p->fma_units == 1 ? "" : "s",
             p->fma_bits, p->isa_bits);
    print_wrapped("core", buf);
    print_wrapped("source", p->source);
    printf("\n  %-8s %16s %16s\n", "dtype", "dense peak", "FLOP/cycle/core");
    for (int k = 0; k < ndtypes; k++) {
        double v = p->dense_flops_per_s[dtypes[k]];
        char a[32], b[32];
        if (v > 0) {
            mfu__fmt_si_digits(a, sizeof a, v, dtypes[k] == MFU_DTYPE_INT8 ? "OP/s" : "FLOP/s", 4);
            snprintf(b, sizeof b, "%g", p->flops_per_cycle_per_core[dtypes[k]]);
        } else {
            snprintf(a, sizeof a, "-");
            snprintf(b, sizeof b, "-");
        }
        printf("  %-8s %16s %16s\n", mfu_dtype_name(dtypes[k]), a, b);
    }
    putchar('\n');
    print_wrapped("rule", p->rule);
}

static void print_probe(const mfu_cpu_probe_result *r, double seconds)
{
    printf("\nprobe: %g s, %d thread%s, %s kernel, each thread multiplying %d x %d matrices\n",
           seconds, r->threads, r->threads == 1 ? "" : "s", r->kernel, r->matrix_n, r->matrix_n);
    const mfu_cpu_probe_rate *rates[2] = {&r->fp32, &r->fp64};
    for (int i = 0; i < 2; i++) {
        char a[32], b[32], pct[32];
        mfu__fmt_si(a, sizeof a, rates[i]->flops_per_s, "FLOP/s");
        mfu__fmt_si_digits(b, sizeof b, rates[i]->peak_flops_per_s, "FLOP/s", 4);
        if (isfinite(rates[i]->ratio))
            snprintf(pct, sizeof pct, "%.1f%%", 100 * rates[i]->ratio);
        else
            snprintf(pct, sizeof pct, "-");
        printf("  %-6s %16s  %7s of the peak %s  (%lld products, kernel error %.2g)\n",
               i == 0 ? "fp32" : "fp64", a, pct, b, (long long)rates[i]->products,
               rates[i]->max_rel_error);
    }
    printf("  A measured rate: a lower bound of what the CPU can do, not a peak (a tuned BLAS\n"
           "  may reach more). Over 100%% means the clock ran above the one in the rule.\n");
}

/* `mfu devices cpu`. probe_s NaN: no probe. */
static int show_cpu(bool json, const mfu_dtype *only, double probe_s, int threads)
{
    mfu_cpu_info info;
    mfu_error err = {0};
    if (mfu_cpu_detect(&info, &err) != MFU_OK)
        return cli_fail(CMD, &err, CLI_EXIT_FAIL);
    mfu_cpu_peak peak;
    mfu_error peak_err = {0};
    bool have_peak = mfu_cpu_peak_compute(&info, &peak, &peak_err) == MFU_OK;
    mfu_device_slot *slot = NULL;
    const mfu_device_info *dev = NULL;
    if (have_peak) {
        slot = malloc(sizeof *slot);
        if (!slot)
            return cli_failf(CMD, CLI_EXIT_FAIL, "out of memory");
        mfu__cpu_device_from(slot, &info, &peak, &dev); /* the CPU read above, not again */
    }
    if (only && have_peak && !(peak.dense_flops_per_s[*only] > 0)) {
        /* the same answer --device cpu --dtype D gets */
        double p;
        mfu_device_peak_flops_per_s(dev, *only, false, &p, &err);
        free(slot);
        return cli_fail(CMD, &err, CLI_EXIT_FAIL);
    }
    bool probe = !isnan(probe_s);
    mfu_cpu_probe_result res;
    if (probe) {
        mfu_cpu_probe_options o = {
            .seconds = probe_s, .threads = threads, .peak = have_peak ? &peak : NULL};
        mfu_status st = mfu_cpu_probe(&o, &res, &err);
        if (st != MFU_OK) {
            free(slot);
            return cli_fail(CMD, &err, st == MFU_E_LIMIT ? CLI_EXIT_USAGE : CLI_EXIT_FAIL);
        }
    }
    int rc = have_peak ? CLI_EXIT_OK : CLI_EXIT_FAIL;
    if (json) {
        json_t *root = json_object();
        cli_json_set(root, "query", cli_json_str("cpu"));
        cli_json_set(root, "match", cli_json_str("cpu"));
        cli_json_set(root, "cpu", cpu_info_json(&info));
        cli_json_set(root, "peak", have_peak ? cpu_peak_json(&peak) : json_null());
        cli_json_set(root, "device", dev ? device_json(dev, only) : json_null());
        cli_json_set(root, "error", have_peak ? json_null() : cli_json_str(peak_err.message));
        json_t *pj = json_null();
        if (probe) {
            pj = json_object();
            cli_json_set(pj, "seconds_requested", json_real(probe_s));
            cli_json_set(pj, "threads", json_integer(res.threads));
            cli_json_set(pj, "matrix_n", json_integer(res.matrix_n));
            cli_json_set(pj, "kernel", cli_json_str(res.kernel));
            cli_json_set(pj, "fp32", rate_json(&res.fp32));
            cli_json_set(pj, "fp64", rate_json(&res.fp64));
        }
        cli_json_set(root, "probe", pj);
        free(slot);
        int prc = cli_print_json(root);
        return rc != CLI_EXIT_OK ? rc : prc;
    }
    static const mfu_dtype cpu_dtypes[] = {MFU_DTYPE_FP64, MFU_DTYPE_FP32, MFU_DTYPE_BF16,
                                           MFU_DTYPE_INT8};
    print_cpu(&info, have_peak ? &peak : NULL, &peak_err, only ? 1 : 4, only ? only : cpu_dtypes);
    if (probe)
        print_probe(&res, probe_s);
    free(slot);
    if (!have_peak)
        fprintf(stderr, "mfu %s: %s\n", CMD, peak_err.message);
    return rc;
}

/* ---- this machine's GPUs, live (NVML) ---------------------------------------------------- */

#define WATCH_MIN_S 0.1
#define WATCH_MAX_S 3600.0

/* v rounded to a whole number, "-" when unknown */
static void fmt_whole(char *buf, size_t n, double v)
{
    if (isfinite(v))
        snprintf(buf, n, "%.0f", v);
    else
        snprintf(buf, n, "-");
}

static json_t *live_gpu_json(mfu_nvml *n, const mfu_nvml_sample *g, mfu_dtype dtype)
{
    json_t *o = json_object();
    cli_json_set(o, "index", json_integer(g->index));
    cli_json_set(o, "name", str_or_null(g->name));
    cli_json_set(o, "uuid", g->uuid[0] ? str_or_null(g->uuid) : json_null());
    cli_json_set(o, "device", g->device ? cli_json_str(g->device->id) : json_null());
    cli_json_set(o, "match", cli_json_str(match_name(g->match)));
    cli_json_set(o, "dtype", cli_json_str(mfu_dtype_name(dtype)));
    cli_json_set(o, "peak_flops_per_s",
                 g->device ? num_or_null(g->device->dense_flops_per_s[dtype]) : json_null());
    cli_json_set(o, "sm_clock_mhz", cli_json_num(g->sm_clock_mhz));
    cli_json_set(o, "max_sm_clock_mhz", cli_json_num(g->max_sm_clock_mhz));
    cli_json_set(o, "power_w", cli_json_num(g->power_w));
    cli_json_set(o, "power_limit_w", cli_json_num(g->power_limit_w));
    json_t *r = json_null();
    if (g->reasons_known) {
        r = json_array();
        for (int b = 0; b < 64; b++) {
            uint64_t bit = (uint64_t)1 << b;
            if (!(g->reasons & bit))
                continue;
            const char *nm = mfu_nvml_reason_name(bit);
            char hex[32];
            snprintf(hex, sizeof hex, "0x%llx", (unsigned long long)bit);
            cli_json_append(r, cli_json_str(nm ? nm : hex));
        }
    }
    cli_json_set(o, "reasons", r);
    cli_json_set(o, "reasons_mask",
                 g->reasons_known ? json_integer((json_int_t)g->reasons) : json_null());
    cli_json_set(o, "slowdown",
                 g->reasons_known ? json_boolean(g->reasons & MFU_NVML_REASONS_SLOWDOWN)
                                  : json_null());
    cli_json_set(o, "temperature_c", cli_json_num(g->temperature_c));
    cli_json_set(o, "gpu_utilization", cli_json_num(g->gpu_utilization));
    cli_json_set(o, "memory_utilization", cli_json_num(g->memory_utilization));
    /* the energy counter (J since the driver loaded; null without one) and whether GPM's
     * tensor activity can be sampled (the monitor's cross-check of MFU, docs/devices.md) */
    cli_json_set(o, "energy_j", cli_json_num(g->energy_j));
    cli_json_set(o, "gpm", json_boolean(mfu_nvml_has_gpm(n, g->index)));
    return o;
}

static void print_live(const mfu_nvml *n, const mfu_nvml_sample *g, size_t count, mfu_dtype dt)
{
    cli_table *t = cli_table_new();
    if (!t)
        return;
    char peak_head[32];
    snprintf(peak_head, sizeof peak_head, "%s TFLOP/s", mfu_dtype_name(dt));
    const char *head[] = {"gpu",     "name",    "device", peak_head, "SM MHz",
                          "power W", "reasons", "temp C", "util %"};
    cli_table_row(t, 9, head);
    cli_table_rule(t);
    for (size_t i = 0; i < count; i++) {
        char idx[16], peak[32], clk[64], pw[64], rs[160], temp[32], util[32], a[24], b[24];
        snprintf(idx, sizeof idx, "%u", g[i].index);
        fmt_tflops(peak, sizeof peak, g[i].device ? g[i].device->dense_flops_per_s[dt] : 0);
        fmt_whole(a, sizeof a, g[i].sm_clock_mhz);
        fmt_whole(b, sizeof b, g[i].max_sm_clock_mhz);
        snprintf(clk, sizeof clk, "%s / %s", a, b);
        fmt_whole(a, sizeof a, g[i].power_w);
        fmt_whole(b, sizeof b, g[i].power_limit_w);
        snprintf(pw, sizeof pw, "%s / %s", a, b);
        if (!g[i].reasons_known)
            snprintf(rs, sizeof rs, "-");
        else if (!g[i].reasons)
            snprintf(rs, sizeof rs, "none");
        else
            mfu_nvml_reasons_text(g[i].reasons, ",", rs, sizeof rs);
        fmt_whole(temp, sizeof temp, g[i].temperature_c);
        fmt_whole(a, sizeof a, 100 * g[i].gpu_utilization);
        snprintf(util, sizeof util, "%s", a);
        const char *row[] = {idx,  g[i].name, g[i].device ? g[i].device->id : "(not in table)",
                             peak, clk,       pw,
                             rs,   temp,      util};
        cli_table_row(t, 9, row);
    }
    cli_table_print(t, stdout, "");
    free(t);
    if (mfu_nvml_count_reported(n) > count)
        printf("(%zu GPUs reported; the first %zu shown)\n", mfu_nvml_count_reported(n), count);
    if (count == 0)
        printf("no NVIDIA GPU: NVML (%s) reports none\n", mfu_nvml_library(n));
}

static int show_live(bool json, mfu_dtype dt, double watch_s, int64_t count)
{
    mfu_nvml *n = NULL;
    mfu_error err = {0};
    if (mfu_nvml_new(NULL, &n, &err) != MFU_OK)
        return cli_fail(CMD, &err, CLI_EXIT_FAIL);
    mfu_nvml_sample *g = calloc(MFU_NVML_DEVICES_MAX, sizeof *g);
    if (!g) {
        mfu_nvml_free(n);
        return cli_failf(CMD, CLI_EXIT_FAIL, "out of memory");
    }
    int rc = CLI_EXIT_OK;
    for (int64_t k = 0; count <= 0 || k < count; k++) {
        if (k > 0) {
            struct timespec ts = {(time_t)watch_s, (long)((watch_s - floor(watch_s)) * 1e9)};
            nanosleep(&ts, NULL);
        }
        size_t got = 0;
        if (mfu_nvml_sample_all(n, g, MFU_NVML_DEVICES_MAX, &got, &err) != MFU_OK) {
            rc = cli_fail(CMD, &err, CLI_EXIT_FAIL);
            break;
        }
        if (json) {
            json_t *root = json_object();
            cli_json_set(root, "library", str_or_null(mfu_nvml_library(n)));
            cli_json_set(root, "gpus_reported",
                         json_integer((json_int_t)mfu_nvml_count_reported(n)));
            json_t *arr = json_array();
            for (size_t i = 0; i < got; i++)
                cli_json_append(arr, live_gpu_json(n, &g[i], dt));
            cli_json_set(root, "gpus", arr);
            if ((rc = cli_print_json(root)) != CLI_EXIT_OK)
                break;
        } else {
            if (k > 0)
                putchar('\n');
            print_live(n, g, got, dt);
            if (fflush(stdout) != 0) {
                rc = CLI_EXIT_FAIL;
                break;
            }
        }
        if (!(watch_s > 0))
            break;
    }
    free(g);
    mfu_nvml_free(n);
    return rc;
}

/* `--probe` takes an optional value: "--probe 0.5" keeps it, a bare "--probe" (last, or
 * before something that is not a number) becomes "--probe=" (the default). The parser
 * itself only knows options with and without values. argv is copied, not changed. */
static char **probe_argv(int argc, char **argv)
{
    char **v = malloc(((size_t)argc + 1) * sizeof *v);
    if (!v)
        return NULL;
    bool done = false;
    for (int i = 0; i < argc; i++) {
        v[i] = argv[i];
        if (i == 0 || done)
            continue;
        if (strcmp(argv[i], "--") == 0) {
            done = true;
            continue;
        }
        double d;
        if (strcmp(argv[i], "--probe") == 0 &&
            (i + 1 >= argc || !mfu__parse_double(argv[i + 1], &d)))
            v[i] = (char *)(uintptr_t) "--probe=";
    }
    v[argc] = NULL;
    return v;
}

/* A name that selects several entries with different peaks ("h100"): the question was "which
 * devices are these?", so the answer is their rows (JSON: every entry in full), exit 0, with a
 * line saying how to get one. Only the first MFU_DEVICE_CANDIDATES_MAX are kept by the match;
 * more are counted. */
static int show_matches(const mfu_device_match *m, const char *query, bool json,
                        const mfu_dtype *only, const mfu_dtype *list_dtypes)
{
    size_t shown =
        m->ncandidates < MFU_DEVICE_CANDIDATES_MAX ? m->ncandidates : MFU_DEVICE_CANDIDATES_MAX;
    if (json) {
        json_t *root = json_object();
        cli_json_set(root, "query", str_or_null(query));
        cli_json_set(root, "match", cli_json_str("several"));
        cli_json_set(root, "count", json_integer((json_int_t)m->ncandidates));
        json_t *arr = json_array();
        for (size_t i = 0; i < shown; i++)
            cli_json_append(arr, device_json(m->candidates[i], only));
        cli_json_set(root, "devices", arr);
        return cli_print_json(root);
    }
    printf("'%s' matches %zu devices whose peaks differ", query, m->ncandidates);
    if (shown < m->ncandidates)
        printf(" (the first %zu shown)", shown);
    printf("; name one for its full entry, e.g. 'mfu devices %s'\n\n", m->candidates[0]->id);
    print_list(m->candidates, shown, only ? 1 : 4, only ? only : list_dtypes);
    return CLI_EXIT_OK;
}

/* ---- the command ------------------------------------------------------------------------ */

int cmd_devices(int argc, char **argv)
{
    static const cli_optspec specs[] = {{"json", false},   {"dtype", true}, {"probe", true},
                                        {"threads", true}, {"live", false}, {"watch", true},
                                        {"count", true}};
    cli_args a;
    char **args = probe_argv(argc, argv);
    if (!args)
        return cli_failf(CMD, CLI_EXIT_FAIL, "out of memory");
    bool parsed = cli_parse(CMD, argc, args, specs, sizeof specs / sizeof specs[0], &a);
    if (!parsed) {
        free(args);
        return CLI_EXIT_USAGE;
    }
    int rc = devices_main(&a);
    free(args); /* a's strings point into argv's, not into args */
    return rc;
}

static int devices_main(const cli_args *ap)
{
    const cli_args a = *ap;
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

    /* --live: this machine's GPUs through NVML */
    bool live = cli_has(&a, "live");
    double watch_s = 0;
    bool has_watch = false;
    int64_t count = 0;
    bool has_count = false;
    if (!cli_get_pos_double(CMD, &a, "watch", &watch_s, &has_watch) ||
        !cli_get_pos_int64(CMD, &a, "count", &count, &has_count))
        return CLI_EXIT_USAGE;
    if ((has_watch || has_count) && !live)
        return cli_failf(CMD, CLI_EXIT_USAGE, "--watch and --count are for --live");
    if (has_count && !has_watch)
        return cli_failf(CMD, CLI_EXIT_USAGE, "--count is for --watch: add --watch SECONDS");
    if (has_watch && !(watch_s >= WATCH_MIN_S && watch_s <= WATCH_MAX_S))
        return cli_failf(CMD, CLI_EXIT_USAGE, "--watch takes %g to %g seconds", WATCH_MIN_S,
                         WATCH_MAX_S);
    if (live) {
        if (a.npos > 0 || cli_get(&a, "probe") || cli_has(&a, "threads"))
            return cli_failf(CMD, CLI_EXIT_USAGE,
                             "--live shows this machine's GPUs: give no NAME, --probe or "
                             "--threads with it");
        return show_live(json, only, has_watch ? watch_s : 0, has_count ? count : 0);
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

    /* cpu: this machine's, never a table entry */
    bool cpu = a.npos == 1 && mfu__strcasecmp(a.pos[0], "cpu") == 0;
    double probe_s = NAN;
    int64_t threads = 0;
    bool has_threads = false;
    const char *pv = cli_get(&a, "probe");
    if ((pv || cli_has(&a, "threads")) && !cpu)
        return cli_failf(CMD, CLI_EXIT_USAGE,
                         "--probe and --threads measure this machine's CPU: "
                         "use 'mfu devices cpu --probe'");
    if (pv) {
        probe_s = 0; /* the library's default */
        if (pv[0] && !mfu__parse_double(pv, &probe_s))
            return cli_failf(CMD, CLI_EXIT_USAGE, "--probe takes seconds, e.g. --probe 0.5");
        if (probe_s == 0 && pv[0])
            return cli_failf(CMD, CLI_EXIT_USAGE,
                             "--probe runs %g to %g seconds: give a number in that range",
                             MFU_CPU_PROBE_SECONDS_MIN, MFU_CPU_PROBE_SECONDS_MAX);
        if (probe_s == 0)
            probe_s = MFU_CPU_PROBE_SECONDS_DEFAULT;
    }
    if (!cli_get_pos_int64(CMD, &a, "threads", &threads, &has_threads))
        return CLI_EXIT_USAGE;
    if (has_threads && !pv)
        return cli_failf(CMD, CLI_EXIT_USAGE, "--threads is for the probe: add --probe");
    if (threads > MFU_CPU_PROBE_THREADS_MAX)
        return cli_failf(CMD, CLI_EXIT_USAGE,
                         "the probe runs 1 to %d threads: give --threads N in that range",
                         MFU_CPU_PROBE_THREADS_MAX);
    if (cpu)
        return show_cpu(json, have_only ? &only : NULL, probe_s, (int)threads);

    static const mfu_dtype list_dtypes[] = {MFU_DTYPE_BF16, MFU_DTYPE_FP16, MFU_DTYPE_FP8,
                                            MFU_DTYPE_FP32};
    static const mfu_dtype all_dtypes[] = {MFU_DTYPE_FP64, MFU_DTYPE_FP32, MFU_DTYPE_TF32,
                                           MFU_DTYPE_BF16, MFU_DTYPE_FP16, MFU_DTYPE_FP8,
                                           MFU_DTYPE_INT8};

    if (a.npos == 0) {
        if (json) {
            json_t *root = json_object();
            if (have_only)
                cli_json_set(root, "dtype", cli_json_str(mfu_dtype_name(only)));
            json_t *arr = json_array();
            for (size_t i = 0; i < mfu_device_count(); i++)
                cli_json_append(arr, device_json(mfu_device_at(i), have_only ? &only : NULL));
            cli_json_set(root, "devices", arr);
            return cli_print_json(root);
        }
        if (have_only)
            print_list(NULL, 0, 1, &only);
        else
            print_list(NULL, 0, 4, list_dtypes);
        return CLI_EXIT_OK;
    }

    mfu_device_match m;
    mfu_error err = {0};
    mfu_status st = mfu_device_match_name(name, &m, &err);
    if (st == MFU_E_AMBIGUOUS)
        return show_matches(&m, name, json, have_only ? &only : NULL, list_dtypes);
    if (st != MFU_OK)
        return cli_fail(CMD, &err, CLI_EXIT_FAIL);
    if (json) {
        json_t *root = json_object();
        cli_json_set(root, "query", str_or_null(name));
        cli_json_set(root, "match", cli_json_str(match_name(m.kind)));
        json_t *cands = json_array();
        for (size_t i = 0; i < m.ncandidates && i < MFU_DEVICE_CANDIDATES_MAX; i++)
            cli_json_append(cands, cli_json_str(m.candidates[i]->id));
        cli_json_set(root, "candidates", cands);
        cli_json_set(root, "device", device_json(m.device, have_only ? &only : NULL));
        return cli_print_json(root);
    }
    if (have_only)
        print_one(&m, name, 1, &only);
    else
        print_one(&m, name, MFU_DTYPE_COUNT, all_dtypes);
    return CLI_EXIT_OK;
}
