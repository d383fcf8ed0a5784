/*
 * cmd_estimate.c - `mfu estimate`: MFU, HFU, tokens/s and FLOP/s per device from a model, a
 * workload, a device and a throughput; or the tokens/s needed for a target MFU.
 *
 * The model side is model_args (shared with `mfu flops`); the device side is --device/--dtype
 * (the table in src/device) or --peak-tflops; the arithmetic is mfu_estimate_compute().
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/device_arg.h"
#include "cli/flops_out.h"
#include "cli/model_args.h"
#include "util/util.h"

static const cli_optspec specs[] = {
    MODEL_ARGS_OPTSPECS,
    {"device", true},
    {"dtype", true},
    {"devices", true},
    {"peak-tflops", true},
    {"tokens-per-sec", true},
    {"tokens-per-sec-per-device", true},
    {"step-time", true},
    {"batch-tokens", true},
    {"batch-size", true},
    {"tflops-per-device", true},
    {"target-mfu", true},
    {"json", false},
};

static void help(void)
{
    printf(
        "usage: mfu estimate MODEL WORKLOAD DEVICE THROUGHPUT [--json]\n\n"
        "MFU and HFU from a model, a device and a throughput, through the identity\n"
        "  tokens/s = MFU x (devices x peak FLOP/s per device) / (model FLOPs per token)\n"
        "Or the reverse (--target-mfu): the tokens/s a target MFU needs.\n\n"
        "%s"
        "Device:\n"
        "  --device NAME            a device of 'mfu devices' (id or reported name)\n"
        "  --dtype D                the precision of the matmuls: bf16 (default), fp16, fp8,\n"
        "                           tf32, fp32, fp64, int8; the dense peak is used\n"
        "  --peak-tflops X          dense peak per device in TFLOP/s (instead of --device, or\n"
        "                           to override its peak: e.g. a stack's own figure)\n"
        "  --devices N              devices sharing the throughput (default 1)\n"
        "Throughput (exactly one):\n"
        "  --tokens-per-sec X       tokens per second, all devices together\n"
        "  --tokens-per-sec-per-device X\n"
        "  --step-time S            seconds per optimizer step, with --batch-tokens N\n"
        "                           (global tokens per step) or --batch-size B (sequences,\n"
        "                           times --seq)\n"
        "  --tflops-per-device X    achieved model TFLOP/s per device (under --convention)\n"
        "  --target-mfu F           the reverse question: 0.45 or 45%%\n"
        "Output:\n"
        "  --json                   one JSON object (keys in docs/cli.md)\n\n"
        "Examples:\n"
        "  mfu estimate --model llama3-8b --seq 8192 --device h100-sxm --devices 8 \\\n"
        "      --tokens-per-sec-per-device 5856\n"
        "  mfu estimate --model llama3-70b --seq 4096 --recompute full --device a100-sxm4-80gb \\\n"
        "      --devices 64 --step-time 12.5 --batch-size 256\n"
        "  mfu estimate --model llama3-8b --seq 8192 --device 'NVIDIA H100 80GB HBM3' \\\n"
        "      --devices 8 --target-mfu 40%%\n"
        "  mfu estimate --convention 6n --params 540e9 --seq 2048 --peak-tflops 275 \\\n"
        "      --devices 6144 --tokens-per-sec 238.3e3\n",
        MODEL_ARGS_HELP);
}

/* "45", "45%", "0.45" -> 0.45. Values above 1 without % are read as percent. */
static bool parse_fraction(const char *s, double *out)
{
    char buf[64];
    mfu__strlcpy(buf, s, sizeof buf);
    size_t n = strlen(buf);
    bool pct = n > 0 && buf[n - 1] == '%';
    if (pct)
        buf[n - 1] = '\0';
    double v;
    if (!mfu__parse_double(buf, &v))
        return false;
    if (pct || v > 1)
        v /= 100;
    *out = v;
    return true;
}

typedef struct device_choice {
    const mfu_device_info *dev; /* NULL with --peak-tflops alone */
    mfu_dtype dtype;
    double peak;     /* FLOP/s per device, dense */
    bool peak_given; /* --peak-tflops */
    double devices;
} device_choice;

static int choose_device(const cli_args *a, device_choice *d)
{
    memset(d, 0, sizeof *d);
    int64_t n = 1;
    bool has_n = false;
    if (!cli_get_pos_int64("estimate", a, "devices", &n, &has_n))
        return CLI_EXIT_USAGE;
    d->devices = (double)n;
    cli_device_choice c;
    int rc = cli_device_choose("estimate", a, &c);
    if (rc != CLI_EXIT_OK)
        return rc;
    if (!c.dev && !c.peak_given)
        return cli_failf("estimate", CLI_EXIT_USAGE,
                         "no device: give --device NAME (see 'mfu devices') or --peak-tflops X");
    d->dev = c.dev;
    d->dtype = c.dtype;
    d->peak = c.peak;
    d->peak_given = c.peak_given;
    return CLI_EXIT_OK;
}

typedef struct request {
    bool target;
    double target_mfu;
    mfu_throughput tput;
    const char *given; /* the option that gave the throughput, for the text output */
} request;

static int choose_throughput(const cli_args *a, const model_args *m, request *r)
{
    static const char *const forms[] = {"tokens-per-sec", "tokens-per-sec-per-device", "step-time",
                                        "tflops-per-device", "target-mfu"};
    const char *given = NULL;
    for (size_t i = 0; i < MFU__ARRAY_LEN(forms); i++) {
        if (!cli_has(a, forms[i]))
            continue;
        if (given)
            return cli_failf("estimate", CLI_EXIT_USAGE,
                             "give one throughput, not both --%s and --%s", given, forms[i]);
        given = forms[i];
    }
    if (!given)
        return cli_failf("estimate", CLI_EXIT_USAGE,
                         "no throughput: give --tokens-per-sec, --tokens-per-sec-per-device, "
                         "--step-time with --batch-tokens or --batch-size, --tflops-per-device, "
                         "or --target-mfu (see 'mfu estimate --help')");
    memset(r, 0, sizeof *r);
    r->given = given;
    if (strcmp(given, "target-mfu") == 0) {
        r->target = true;
        if (!parse_fraction(cli_get(a, given), &r->target_mfu) || !(r->target_mfu > 0) ||
            r->target_mfu > 1)
            return cli_failf("estimate", CLI_EXIT_USAGE,
                             "--target-mfu must be a fraction in (0, 1] or a percentage, e.g. "
                             "0.45 or 45%% (got %s)",
                             cli_get(a, given));
        return CLI_EXIT_OK;
    }
    double v = 0;
    if (!cli_get_pos_double("estimate", a, given, &v, NULL))
        return CLI_EXIT_USAGE;
    r->tput.value = v;
    if (strcmp(given, "tokens-per-sec") == 0) {
        r->tput.kind = MFU_TPUT_TOKENS_PER_S;
    } else if (strcmp(given, "tokens-per-sec-per-device") == 0) {
        r->tput.kind = MFU_TPUT_TOKENS_PER_S_PER_DEVICE;
    } else if (strcmp(given, "tflops-per-device") == 0) {
        r->tput.kind = MFU_TPUT_MODEL_FLOPS_PER_DEVICE;
        r->tput.value = v * 1e12;
    } else {
        r->tput.kind = MFU_TPUT_STEP_TIME;
        double bt = 0, bs = 0;
        bool has_bt = false, has_bs = false;
        if (!cli_get_pos_double("estimate", a, "batch-tokens", &bt, &has_bt) ||
            !cli_get_pos_double("estimate", a, "batch-size", &bs, &has_bs))
            return CLI_EXIT_USAGE;
        if (has_bt && has_bs)
            return cli_failf("estimate", CLI_EXIT_USAGE,
                             "give --batch-tokens or --batch-size, not both");
        if (has_bt) {
            r->tput.tokens_per_step = bt;
        } else if (has_bs) {
            if (m->workload.seq <= 0)
                return cli_failf("estimate", CLI_EXIT_USAGE,
                                 "--batch-size counts sequences: give --seq too");
            r->tput.tokens_per_step = bs * (double)m->workload.seq;
        } else {
            return cli_failf("estimate", CLI_EXIT_USAGE,
                             "--step-time needs the tokens in one step: give --batch-tokens N "
                             "or --batch-size B (with --seq)");
        }
    }
    return CLI_EXIT_OK;
}

static json_t *estimate_json(const model_args *m, const mfu_flops *f, const device_choice *d,
                             const request *r, const mfu_estimate *e)
{
    json_t *o = flops_out_json(m, f);
    json_t *dev = json_object();
    cli_json_set(dev, "id", d->dev ? cli_json_str(d->dev->id) : json_null());
    cli_json_set(dev, "name", d->dev ? cli_json_str(d->dev->name) : json_null());
    cli_json_set(dev, "dtype", cli_json_str(mfu_dtype_name(d->dtype)));
    cli_json_set(dev, "peak_flops", cli_json_num(d->peak));
    cli_json_set(dev, "peak_source",
                 cli_json_str(d->peak_given ? "--peak-tflops" : "device table (dense)"));
    cli_json_set(dev, "count", json_integer((json_int_t)d->devices));
    cli_json_set(o, "device", dev);
    cli_json_set(o, "throughput_given", cli_json_str(r->given));
    cli_json_set(o, "target_mfu", r->target ? json_real(r->target_mfu) : json_null());
    cli_json_set(o, "tokens_per_second", cli_json_num(e->tokens_per_s));
    cli_json_set(o, "tokens_per_second_per_device", cli_json_num(e->tokens_per_s_per_device));
    cli_json_set(o, "model_flops_per_second_per_device",
                 cli_json_num(e->model_flops_per_s_per_device));
    cli_json_set(o, "hardware_flops_per_second_per_device",
                 cli_json_num(e->hardware_flops_per_s_per_device));
    cli_json_set(o, "mfu", cli_json_num(e->mfu));
    cli_json_set(o, "hfu", cli_json_num(e->hfu));
    return o;
}

static void print_text(const model_args *m, const mfu_flops *f, const device_choice *d,
                       const request *r, const mfu_estimate *e)
{
    char a[48], b[48];
    flops_out_print_model(m);
    printf("convention  %s (%s attention)\n", mfu_convention_name(f->convention),
           mfu_attention_name(f->attention));
    flops_out_fmt(a, sizeof a, f->model_flops);
    flops_out_fmt(b, sizeof b, f->hardware_flops);
    printf("flops       %s per token (model), %s (hardware)\n", a, b);
    mfu__fmt_si_digits(a, sizeof a, d->peak, "FLOP/s", 4);
    if (d->dev)
        printf("device      %d x %s (%s), %s dense peak %s%s\n", (int)d->devices, d->dev->id,
               d->dev->name, mfu_dtype_name(d->dtype), a,
               d->peak_given ? " (from --peak-tflops)" : "");
    else
        printf("device      %d x peak %s (from --peak-tflops)\n", (int)d->devices, a);
    if (r->target)
        printf("question    what throughput gives MFU %.2f%%?\n", 100 * r->target_mfu);
    printf("\n");
    cli_table *t = cli_table_new();
    if (!t)
        return;
    char c1[48], c2[48], c3[48], c4[48], c5[32], c6[32];
    snprintf(c1, sizeof c1, "%.0f", e->tokens_per_s);
    snprintf(c2, sizeof c2, "%.1f", e->tokens_per_s_per_device);
    mfu__fmt_si(c3, sizeof c3, e->model_flops_per_s_per_device, "FLOP/s");
    mfu__fmt_si(c4, sizeof c4, e->hardware_flops_per_s_per_device, "FLOP/s");
    snprintf(c5, sizeof c5, "%.2f%%", 100 * e->mfu);
    snprintf(c6, sizeof c6, "%.2f%%", 100 * e->hfu);
    const char *rows[][2] = {{"tokens/s (global)", c1},
                             {"tokens/s per device", c2},
                             {"model FLOP/s per device", c3},
                             {"hardware FLOP/s per device", c4},
                             {"MFU", c5},
                             {"HFU", c6}};
    for (size_t i = 0; i < MFU__ARRAY_LEN(rows); i++)
        cli_table_row(t, 2, rows[i]);
    cli_table_print(t, stdout, "");
    free(t);
    if (e->mfu > 1)
        printf("\nwarning: MFU above 100%% is impossible: check the throughput, the device count "
               "(--devices counts every device, not nodes) and the peak's dtype\n");
}

int cmd_estimate(int argc, char **argv)
{
    cli_args a;
    if (!cli_parse("estimate", argc, argv, specs, MFU__ARRAY_LEN(specs), &a))
        return CLI_EXIT_USAGE;
    if (a.help) {
        help();
        return CLI_EXIT_OK;
    }
    if (a.npos > 0)
        return cli_failf("estimate", CLI_EXIT_USAGE,
                         "unexpected argument '%s' (see 'mfu estimate --help')", a.pos[0]);
    model_args m;
    int rc = model_args_build("estimate", &a, false, &m);
    if (rc != CLI_EXIT_OK)
        return rc;
    model_args_default_seq(&m);
    device_choice d;
    request r;
    if ((rc = choose_device(&a, &d)) != CLI_EXIT_OK ||
        (rc = choose_throughput(&a, &m, &r)) != CLI_EXIT_OK) {
        model_args_free(&m);
        return rc;
    }
    mfu_flops f;
    mfu_error err = {0};
    mfu_status st = mfu_flops_compute(&m.arch, &m.workload, &m.options, &f, &err);
    if (st != MFU_OK) {
        model_args_free(&m);
        return cli_fail("estimate", &err, model_args_exit_status(st));
    }
    mfu_estimate_input in = {f.model_flops, f.hardware_flops, d.peak, d.devices};
    mfu_estimate e;
    st = r.target ? mfu_estimate_for_target(&in, r.target_mfu, &e, &err)
                  : mfu_estimate_compute(&in, &r.tput, &e, &err);
    if (st != MFU_OK) {
        model_args_free(&m);
        return cli_fail("estimate", &err, CLI_EXIT_USAGE);
    }
    if (cli_has(&a, "json"))
        rc = cli_print_json(estimate_json(&m, &f, &d, &r, &e));
    else
        print_text(&m, &f, &d, &r, &e);
    model_args_free(&m);
    return rc;
}
