/*
 * cmd_roofline.c - `mfu roofline`: the main matrix products of one training micro-step on one
 * device, their arithmetic intensity against the device's ridge point, and the MFU ceiling
 * their shapes allow (mfu_roofline_compute(), include/mfu/roofline.h).
 *
 * The model side is model_args (shared with `mfu flops`), counted under the exact convention;
 * the device side is --device/--dtype (the table in src/device) or --peak-tflops and
 * --bandwidth-tbs, which also override the table's figures.
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

static const char *const CMD = "roofline";

static const cli_optspec specs[] = {
    MODEL_ARGS_OPTSPECS,
    {"micro-batch", true},
    {"tp", true},
    {"ep", true},
    {"etp", true},
    {"device", true},
    {"dtype", true},
    {"peak-tflops", true},
    {"bandwidth-tbs", true},
    {"unfused-attention", false},
    {"wgrad-fp32", false},
    {"fused-projections", false},
    {"json", false},
};

static void help(void)
{
    printf(
        "usage: mfu roofline MODEL WORKLOAD [--micro-batch N] [--tp N] [--ep N] DEVICE [--json]\n\n"
        "The main matrix products of one training micro-step on one device (forward, dgrad,\n"
        "wgrad): shape M x N x K, FLOPs, arithmetic intensity (FLOP/byte), compute- or\n"
        "memory-bound against the device's ridge point (peak / bandwidth), attainable\n"
        "FLOP/s = min(peak, intensity x bandwidth), and the MFU ceiling those shapes allow.\n"
        "The ceiling is an upper bound (perfect kernels, no communication), not a prediction.\n"
        "FLOPs follow the exact convention. Model in docs/internals/roofline.md.\n\n"
        "%s"
        "Parallelism:\n"
        "  --micro-batch N          sequences per device per micro-step (default 1)\n"
        "  --tp N                   tensor-parallel size: splits heads, FFN, vocabulary (default "
        "1)\n"
        "  --ep N                   expert-parallel size (MoE): experts per device = experts / N,\n"
        "                           each expert sees micro-batch tokens x top-k x N / experts\n"
        "  --etp N                  expert tensor-parallel size (MoE; default --tp)\n"
        "Device:\n"
        "  --device NAME            a device of 'mfu devices' (peak and memory bandwidth)\n"
        "  --dtype D                operand format: bf16 (default), fp16, fp8, tf32, fp32, fp64,\n"
        "                           int8 (its dense peak and element size)\n"
        "  --peak-tflops X          dense peak per device in TFLOP/s (instead of, or over, "
        "--device)\n"
        "  --bandwidth-tbs X        memory bandwidth per device in TB/s (instead of, or over,\n"
        "                           --device)\n"
        "Byte model:\n"
        "  --unfused-attention      the score matrix goes through memory (eager attention);\n"
        "                           default: fused (flash) attention keeps it on chip\n"
        "  --wgrad-fp32             weight gradients accumulate into fp32 (read and written)\n"
        "  --fused-projections      Q, K, V as one GEMM and MLP up and gate as one (Megatron-LM);\n"
        "                           default: one GEMM per matrix (Hugging Face, torchtitan)\n"
        "Output:\n"
        "  --json                   one JSON object (keys in docs/cli.md)\n\n"
        "Examples:\n"
        "  mfu roofline --model llama3-8b --seq 8192 --device h100-sxm\n"
        "  mfu roofline --model llama3-70b --seq 512 --micro-batch 1 --tp 8 --device h100-sxm\n"
        "  mfu roofline --model mixtral-8x7b --seq 4096 --ep 8 --device h100-sxm --json\n"
        "  mfu roofline --model llama3-8b --seq 4096 --peak-tflops 989.5 --bandwidth-tbs 3.35\n",
        MODEL_ARGS_HELP);
}

typedef struct device_choice {
    const mfu_device_info *dev; /* NULL with --peak-tflops and --bandwidth-tbs alone */
    bool peak_given, bandwidth_given;
} device_choice;

static int choose_device(const cli_args *a, mfu_roofline_config *cfg, device_choice *d)
{
    memset(d, 0, sizeof *d);
    double tbs = 0;
    if (!cli_get_pos_double(CMD, a, "bandwidth-tbs", &tbs, &d->bandwidth_given))
        return CLI_EXIT_USAGE;
    cli_device_choice c;
    int rc = cli_device_choose(CMD, a, &c);
    if (rc != CLI_EXIT_OK)
        return rc;
    d->dev = c.dev;
    d->peak_given = c.peak_given;
    cfg->dtype = c.dtype;
    if (!d->dev && !(d->peak_given && d->bandwidth_given))
        return cli_failf(CMD, CLI_EXIT_USAGE,
                         "no device: give --device NAME (see 'mfu devices'), or both "
                         "--peak-tflops X and --bandwidth-tbs X");
    cfg->peak_flops_per_s = c.peak; /* --peak-tflops, else the table's */
    if (d->dev) {
        cfg->memory_bandwidth_bytes_per_s = d->dev->memory_bandwidth_bytes_per_s;
        if (!d->bandwidth_given && !(cfg->memory_bandwidth_bytes_per_s > 0))
            return cli_failf(CMD, CLI_EXIT_FAIL,
                             "the device table has no memory bandwidth for %s: pass "
                             "--bandwidth-tbs X",
                             d->dev->id);
    }
    if (d->bandwidth_given)
        cfg->memory_bandwidth_bytes_per_s = tbs * 1e12;
    return CLI_EXIT_OK;
}

static int choose_parallel(const cli_args *a, mfu_roofline_config *cfg)
{
    if (!cli_get_pos_int64(CMD, a, "micro-batch", &cfg->micro_batch, NULL) ||
        !cli_get_pos_int64(CMD, a, "tp", &cfg->tp, NULL) ||
        !cli_get_pos_int64(CMD, a, "ep", &cfg->ep, NULL) ||
        !cli_get_pos_int64(CMD, a, "etp", &cfg->etp, NULL))
        return CLI_EXIT_USAGE;
    cfg->unfused_attention = cli_has(a, "unfused-attention");
    cfg->fp32_weight_grad = cli_has(a, "wgrad-fp32");
    cfg->fused_projections = cli_has(a, "fused-projections");
    return CLI_EXIT_OK;
}

/* The roofline counts FLOPs under the exact convention only. */
static int check_counting(const model_args *m)
{
    if (m->options.convention != MFU_CONV_EXACT || m->options.params > 0 ||
        m->options.attention == MFU_ATTENTION_FULL || m->options.count_embeddings)
        return cli_failf(CMD, CLI_EXIT_USAGE,
                         "the roofline counts the products of the exact convention (causal "
                         "attention, no embedding): drop --convention, --params, --attention "
                         "and --count-embeddings");
    return CLI_EXIT_OK;
}

/* 4 significant digits, no exponent below 1e7 ("4096", "0.03125", "1.792e+04" never). */
static void fmt_dim(char *buf, size_t n, double v)
{
    if (v == floor(v) && v < 1e15)
        snprintf(buf, n, "%.0f", v);
    else
        snprintf(buf, n, "%.4g", v);
}

static void fmt_shape(char *buf, size_t n, const mfu_roofline_product *p)
{
    char m[24], nn[24], k[24];
    fmt_dim(m, sizeof m, p->m);
    fmt_dim(nn, sizeof nn, p->n);
    fmt_dim(k, sizeof k, p->k);
    snprintf(buf, n, "%s×%s×%s", m, nn, k);
}

static void print_text(const model_args *m, const device_choice *d, const mfu_roofline *r)
{
    char a[48], b[48], c[48];
    printf("model       %s%s%s%s\n", m->arch.name[0] ? m->arch.name : "(from flags)",
           m->arch.source[0] ? "  (" : "", m->arch.source, m->arch.source[0] ? ")" : "");
    printf("workload    micro-batch %lld × seq %lld = %.0f tokens, recompute %s",
           (long long)r->micro_batch, (long long)r->seq, r->tokens,
           mfu_recompute_name(r->recompute));
    if (m->workload.doc_count > 0)
        printf(", %zu packed documents", m->workload.doc_count);
    if (m->workload.mean_doc_len > 0)
        printf(", packed documents of mean length %g", m->workload.mean_doc_len);
    printf("\n");
    model_args_print_seq_note(m, "note        ");
    printf("parallel    TP %lld", (long long)r->tp);
    if (r->tokens_per_expert > 0) {
        fmt_dim(a, sizeof a, r->tokens_per_expert);
        printf(", EP %lld, expert TP %lld: %s tokens per expert (average)", (long long)r->ep,
               (long long)r->etp, a);
    }
    mfu__fmt_si_digits(a, sizeof a, r->peak_flops_per_s, "FLOP/s", 4);
    cli_fmt_si(b, sizeof b, r->memory_bandwidth_bytes_per_s, "B/s");
    printf("\ndevice      ");
    if (d->dev)
        printf("%s (%s), ", d->dev->id, d->dev->name);
    printf("%s dense peak %s%s, bandwidth %s%s\n", mfu_dtype_name(r->dtype), a,
           d->peak_given ? " (--peak-tflops)" : "", b,
           d->bandwidth_given ? " (--bandwidth-tbs)" : "");
    printf("ridge point %.1f FLOP/byte; operands %g bytes, attention %s, projections %s%s\n\n",
           r->ridge_flops_per_byte, r->bytes_per_element,
           r->unfused_attention ? "unfused" : "fused",
           r->fused_projections ? "fused" : "one GEMM per matrix",
           r->fp32_weight_grad ? ", fp32 weight gradients" : "");

    cli_table *t = cli_table_new();
    if (!t)
        return;
    const char *head[] = {"product",   "pass",  "M×N×K",      "calls", "GFLOP",
                          "FLOP/byte", "bound", "attainable", "share"};
    cli_table_row(t, MFU__ARRAY_LEN(head), head);
    cli_table_rule(t);
    bool masked = false;
    for (size_t i = 0; i < r->nproducts; i++) {
        const mfu_roofline_product *p = &r->products[i];
        char shape[96], cnt[32], gf[32], ai[32], att[32], share[32], name[40];
        snprintf(name, sizeof name, "%s%s", p->name, p->recomputed ? " *" : "");
        fmt_shape(shape, sizeof shape, p);
        fmt_dim(cnt, sizeof cnt, p->count);
        snprintf(gf, sizeof gf, "%.2f", p->flops / 1e9);
        snprintf(ai, sizeof ai, "%.1f", p->intensity_flops_per_byte);
        mfu__fmt_si(att, sizeof att, p->attainable_flops_per_s, "FLOP/s");
        snprintf(share, sizeof share, "%.2f%%", 100 * p->flops_share);
        const char *row[] = {name, mfu_roofline_pass_name(p->pass),        shape, cnt,  gf,
                             ai,   p->memory_bound ? "memory" : "compute", att,   share};
        cli_table_row(t, MFU__ARRAY_LEN(row), row);
        if (p->mask_fraction < 1)
            masked = true;
    }
    cli_table_print(t, stdout, "");
    free(t);
    printf("\n");
    if (masked)
        printf("attention: M×N×K is the whole score matrix; the causal/window mask computes a "
               "fraction of it (GFLOP counts only that)\n");
    if (r->recompute_flops > 0)
        printf("* recomputed in the backward (%s): its time counts twice in the ceiling\n",
               mfu_recompute_name(r->recompute));
    cli_fmt_si(a, sizeof a, r->flops, "FLOP");
    printf("step        %s per micro-step on one device; %.1f%% of them in memory-bound "
           "products\n",
           a, 100 * r->memory_bound_share);
    printf("groups     ");
    for (int g = 0; g < MFU_RL_GROUP_COUNT; g++) {
        if (r->group_flops_share[g] <= 0)
            continue;
        snprintf(c, sizeof c, "%.1f%%", 100 * r->group_flops_share[g]);
        printf(" %s %s%s;", mfu_roofline_group_name((mfu_roofline_group)g), c,
               r->group_memory_bound_share[g] >= 0.5 ? " (memory-bound)" : "");
    }
    printf("\nceiling     MFU at most %.1f%% (the matrix shapes alone: perfect kernels, no "
           "communication; a ceiling, not a prediction)\n",
           100 * r->ceiling);
    char sentence[MFU_FINDING_TEXT_MAX];
    mfu_roofline_sentence(r, sentence, sizeof sentence);
    printf("finding     %s\n", sentence);
}

static json_t *roofline_json(const model_args *m, const device_choice *d, const mfu_roofline *r)
{
    json_t *o = json_object();
    json_t *model = json_object();
    cli_json_set(model, "name", m->arch.name[0] ? cli_json_str(m->arch.name) : json_null());
    cli_json_set(model, "source", m->arch.source[0] ? cli_json_str(m->arch.source) : json_null());
    cli_json_set(o, "model", model);
    json_t *wl = json_object();
    cli_json_set(wl, "seq", json_integer((json_int_t)r->seq));
    cli_json_set(wl, "micro_batch", json_integer((json_int_t)r->micro_batch));
    cli_json_set(wl, "tokens", cli_json_num(r->tokens));
    cli_json_set(wl, "recompute", cli_json_str(mfu_recompute_name(r->recompute)));
    cli_json_set(wl, "doc_count", json_integer((json_int_t)m->workload.doc_count));
    cli_json_set(wl, "mean_doc_len",
                 m->workload.mean_doc_len > 0 ? json_real(m->workload.mean_doc_len) : json_null());
    model_args_seq_json(m, wl);
    cli_json_set(o, "workload", wl);
    json_t *par = json_object();
    cli_json_set(par, "tp", json_integer((json_int_t)r->tp));
    cli_json_set(par, "ep", json_integer((json_int_t)r->ep));
    cli_json_set(par, "etp", json_integer((json_int_t)r->etp));
    cli_json_set(par, "tokens_per_expert",
                 r->tokens_per_expert > 0 ? json_real(r->tokens_per_expert) : json_null());
    cli_json_set(o, "parallel", par);
    json_t *dev = json_object();
    cli_json_set(dev, "id", d->dev ? cli_json_str(d->dev->id) : json_null());
    cli_json_set(dev, "name", d->dev ? cli_json_str(d->dev->name) : json_null());
    cli_json_set(dev, "dtype", cli_json_str(mfu_dtype_name(r->dtype)));
    cli_json_set(dev, "bytes_per_element", json_real(r->bytes_per_element));
    cli_json_set(dev, "peak_flops", cli_json_num(r->peak_flops_per_s));
    cli_json_set(dev, "peak_source",
                 cli_json_str(d->peak_given ? "--peak-tflops" : "device table (dense)"));
    cli_json_set(dev, "memory_bandwidth_bytes_per_s",
                 cli_json_num(r->memory_bandwidth_bytes_per_s));
    cli_json_set(dev, "bandwidth_source",
                 cli_json_str(d->bandwidth_given ? "--bandwidth-tbs" : "device table"));
    cli_json_set(o, "device", dev);
    cli_json_set(o, "ridge_flops_per_byte", cli_json_num(r->ridge_flops_per_byte));
    cli_json_set(o, "attention", cli_json_str(r->unfused_attention ? "unfused" : "fused"));
    cli_json_set(o, "wgrad_fp32", json_boolean(r->fp32_weight_grad));
    cli_json_set(o, "fused_projections", json_boolean(r->fused_projections));
    json_t *prods = json_array();
    for (size_t i = 0; i < r->nproducts; i++) {
        const mfu_roofline_product *p = &r->products[i];
        json_t *j = json_object();
        cli_json_set(j, "name", cli_json_str(p->name));
        cli_json_set(j, "group", cli_json_str(mfu_roofline_group_name(p->group)));
        cli_json_set(j, "pass", cli_json_str(mfu_roofline_pass_name(p->pass)));
        cli_json_set(j, "m", cli_json_num(p->m));
        cli_json_set(j, "n", cli_json_num(p->n));
        cli_json_set(j, "k", cli_json_num(p->k));
        cli_json_set(j, "count", cli_json_num(p->count));
        cli_json_set(j, "mask_fraction", cli_json_num(p->mask_fraction));
        cli_json_set(j, "flops", cli_json_num(p->flops));
        cli_json_set(j, "bytes", cli_json_num(p->bytes));
        cli_json_set(j, "intensity_flops_per_byte", cli_json_num(p->intensity_flops_per_byte));
        cli_json_set(j, "bound", cli_json_str(p->memory_bound ? "memory" : "compute"));
        cli_json_set(j, "attainable_flops_per_s", cli_json_num(p->attainable_flops_per_s));
        cli_json_set(j, "time_s", cli_json_num(p->time_s));
        cli_json_set(j, "flops_share", cli_json_num(p->flops_share));
        cli_json_set(j, "recomputed", json_boolean(p->recomputed));
        cli_json_append(prods, j);
    }
    cli_json_set(o, "products", prods);
    json_t *groups = json_object();
    for (int g = 0; g < MFU_RL_GROUP_COUNT; g++) {
        json_t *j = json_object();
        cli_json_set(j, "flops_share", cli_json_num(r->group_flops_share[g]));
        cli_json_set(j, "memory_bound_share", cli_json_num(r->group_memory_bound_share[g]));
        cli_json_set(groups, mfu_roofline_group_name((mfu_roofline_group)g), j);
    }
    cli_json_set(o, "groups", groups);
    cli_json_set(o, "flops", cli_json_num(r->flops));
    cli_json_set(o, "recompute_flops", cli_json_num(r->recompute_flops));
    cli_json_set(o, "time_s", cli_json_num(r->time_s));
    cli_json_set(o, "memory_bound_share", cli_json_num(r->memory_bound_share));
    cli_json_set(o, "ceiling_mfu", cli_json_num(r->ceiling));
    char sentence[MFU_FINDING_TEXT_MAX];
    mfu_roofline_sentence(r, sentence, sizeof sentence);
    cli_json_set(o, "sentence", cli_json_str(sentence));
    return o;
}

int cmd_roofline(int argc, char **argv)
{
    cli_args a;
    if (!cli_parse(CMD, argc, argv, specs, MFU__ARRAY_LEN(specs), &a))
        return CLI_EXIT_USAGE;
    if (a.help) {
        help();
        return CLI_EXIT_OK;
    }
    if (a.npos > 0)
        return cli_failf(CMD, CLI_EXIT_USAGE,
                         "unexpected argument '%s' (see 'mfu roofline --help')", a.pos[0]);
    model_args m;
    int rc = model_args_build(CMD, &a, false, &m);
    if (rc != CLI_EXIT_OK)
        return rc;
    model_args_default_seq(&m);
    mfu_roofline_config cfg;
    mfu_roofline_config_init(&cfg);
    device_choice d;
    if ((rc = check_counting(&m)) != CLI_EXIT_OK ||
        (rc = choose_parallel(&a, &cfg)) != CLI_EXIT_OK ||
        (rc = choose_device(&a, &cfg, &d)) != CLI_EXIT_OK) {
        model_args_free(&m);
        return rc;
    }
    mfu_roofline *r = malloc(sizeof *r);
    if (!r) {
        model_args_free(&m);
        return cli_failf(CMD, CLI_EXIT_FAIL, "out of memory");
    }
    mfu_error err = {0};
    mfu_status st = mfu_roofline_compute(&m.arch, &m.workload, &cfg, r, &err);
    if (st != MFU_OK) {
        rc = cli_fail(CMD, &err, model_args_exit_status(st));
    } else if (cli_has(&a, "json")) {
        rc = cli_print_json(roofline_json(&m, &d, r));
    } else {
        print_text(&m, &d, r);
        rc = CLI_EXIT_OK;
    }
    free(r);
    model_args_free(&m);
    return rc;
}
