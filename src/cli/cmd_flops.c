/*
 * cmd_flops.c - `mfu flops`: what one token of a model costs, by component, under a counting
 * convention, or under every convention side by side.
 */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/flops_out.h"
#include "cli/model_args.h"

static const cli_optspec specs[] = {MODEL_ARGS_OPTSPECS, {"json", false}, {"list-presets", false}};

static void help(void)
{
    printf("usage: mfu flops (--model NAME | --config PATH | --layers N ...) [--seq N] [OPTIONS]\n"
           "       mfu flops --list-presets [--json]\n\n"
           "Training FLOPs per token of a model: forward and training, model (the MFU\n"
           "numerator) and hardware (with recomputation, the HFU numerator), by component,\n"
           "with the counting convention and its source printed beside the figures.\n\n"
           "%s"
           "  (--convention all prints every convention side by side; without --seq, a\n"
           "  preset's trained sequence length is used and named: see --list-presets)\n"
           "Output:\n"
           "  --json                   one JSON object (an array with --convention all)\n"
           "  --list-presets           the bundled models with their parameter counts and\n"
           "                           trained sequence lengths\n\n"
           "Examples:\n"
           "  mfu flops --model llama3-8b --seq 8192\n"
           "  mfu flops --model llama3-8b --convention all\n"
           "  mfu flops --config ./config.json --seq 4096 --recompute selective --json\n"
           "  mfu flops --model mixtral-8x7b --seq 4096 --doc-lengths 1024,2048,1024\n"
           "  mfu flops --convention palm --params 540e9 --layers 118 --heads 48 \\\n"
           "      --head-dim 256 --seq 2048\n"
           "  mfu flops --model llama3-8b --seq 8192 --convention torchtitan --count-embeddings\n",
           MODEL_ARGS_HELP);
}

/* ---- JSON ------------------------------------------------------------------------------- */

/* ---- text ------------------------------------------------------------------------------- */

static int print_one(const model_args *m, const mfu_flops *f)
{
    flops_out_print_model(m);
    printf("convention  %s: %s\n", mfu_convention_name(f->convention),
           mfu_convention_description(f->convention));
    printf("source      %s\n", mfu_convention_source(f->convention));
    printf("attention   %s (%.6g keys per query)%s\n\n", mfu_attention_name(f->attention),
           f->attention_context, m->options.count_embeddings ? ", embeddings counted" : "");
    cli_table *t = cli_table_new();
    if (!t)
        return cli_failf("flops", CLI_EXIT_FAIL, "out of memory");
    const char *head[] = {"FLOPs per token", "forward", "training", "share"};
    cli_table_row(t, 4, head);
    cli_table_rule(t);
    for (size_t i = 0; i < FLOPS_OUT_NCOMPONENTS; i++) {
        double fw = flops_out_part(&f->forward, flops_out_components[i].offset);
        double tr = flops_out_part(&f->training, flops_out_components[i].offset);
        if (fw == 0 && tr == 0 && i > 2 && strcmp(flops_out_components[i].key, "logits") != 0)
            continue;
        char a[32], b[32], c[16];
        flops_out_fmt(a, sizeof a, fw);
        flops_out_fmt(b, sizeof b, tr);
        flops_out_fmt_pct(c, sizeof c, tr, f->model_flops);
        const char *row[] = {flops_out_components[i].label, a, b, c};
        cli_table_row(t, 4, row);
    }
    cli_table_rule(t);
    char a[32], b[32], c[32], d[16];
    flops_out_fmt(a, sizeof a, f->forward_flops);
    flops_out_fmt(b, sizeof b, f->model_flops);
    const char *model_row[] = {"model (MFU numerator)", a, b, "100.0%"};
    cli_table_row(t, 4, model_row);
    flops_out_fmt(c, sizeof c, f->hardware_flops);
    flops_out_fmt_pct(d, sizeof d, f->hardware_flops, f->model_flops);
    const char *hw_row[] = {"hardware (HFU numerator)", "", c, d};
    cli_table_row(t, 4, hw_row);
    cli_table_print(t, stdout, "");
    free(t);
    printf("\n");
    flops_out_print_params(m, f);
    return CLI_EXIT_OK;
}

/* ---- every convention ------------------------------------------------------------------- */

static int run_all(const model_args *m, bool json)
{
    mfu_flops f[MFU_CONV_COUNT];
    mfu_error err[MFU_CONV_COUNT];
    mfu_status st[MFU_CONV_COUNT];
    int ok = 0, first_bad = -1;
    for (int c = 0; c < MFU_CONV_COUNT; c++) {
        mfu_flops_options o = m->options;
        o.convention = (mfu_convention)c;
        memset(&err[c], 0, sizeof err[c]);
        st[c] = mfu_flops_compute(&m->arch, &m->workload, &o, &f[c], &err[c]);
        if (st[c] == MFU_OK)
            ok++;
        else if (first_bad < 0)
            first_bad = c;
    }
    if (ok == 0)
        return cli_failf("flops", model_args_exit_status(st[first_bad]), "%s",
                         err[first_bad].message);
    if (json) {
        json_t *arr = json_array();
        for (int c = 0; c < MFU_CONV_COUNT; c++) {
            if (st[c] == MFU_OK) {
                cli_json_append(arr, flops_out_json(m, &f[c]));
            } else {
                json_t *o = json_object();
                cli_json_set(o, "convention", cli_json_str(mfu_convention_name((mfu_convention)c)));
                cli_json_set(o, "error", cli_json_str(err[c].message));
                cli_json_append(arr, o);
            }
        }
        return cli_print_json(arr);
    }
    flops_out_print_model(m);
    printf("\n");
    cli_table *t = cli_table_new();
    if (!t)
        return cli_failf("flops", CLI_EXIT_FAIL, "out of memory");
    const char *head[] = {"convention", "model/token", "hardware/token",
                          "attention",  "vs exact",    "mask"};
    cli_table_row(t, 6, head);
    cli_table_rule(t);
    double exact = st[MFU_CONV_EXACT] == MFU_OK ? f[MFU_CONV_EXACT].model_flops : 0;
    for (int c = 0; c < MFU_CONV_COUNT; c++) {
        const char *name = mfu_convention_name((mfu_convention)c);
        if (st[c] != MFU_OK) {
            const char *row[] = {name, "n/a", "n/a"};
            cli_table_row(t, 3, row);
            continue;
        }
        char a[32], b[32], share[16], vs[16] = "-";
        flops_out_fmt(a, sizeof a, f[c].model_flops);
        flops_out_fmt(b, sizeof b, f[c].hardware_flops);
        flops_out_fmt_pct(share, sizeof share, f[c].training.attention_core, f[c].model_flops);
        if (exact > 0)
            snprintf(vs, sizeof vs, "%+.1f%%", 100 * (f[c].model_flops / exact - 1));
        const char *mask =
            f[c].training.attention_core > 0 ? mfu_attention_name(f[c].attention) : "-";
        const char *row[] = {name, a, b, share, vs, mask};
        cli_table_row(t, 6, row);
    }
    cli_table_print(t, stdout, "");
    free(t);
    for (int c = 0; c < MFU_CONV_COUNT; c++)
        if (st[c] != MFU_OK)
            printf("%s: n/a: %s\n", mfu_convention_name((mfu_convention)c), err[c].message);
    printf("\n");
    for (int c = 0; c < MFU_CONV_COUNT; c++)
        printf("%-14s %s\n", mfu_convention_name((mfu_convention)c),
               mfu_convention_description((mfu_convention)c));
    printf("\n");
    for (int c = 0; c < MFU_CONV_COUNT; c++)
        if (st[c] == MFU_OK) {
            flops_out_print_params(m, &f[c]);
            break;
        }
    return CLI_EXIT_OK;
}

static int list_presets(bool json)
{
    size_t n = mfu_preset_count();
    json_t *arr = json ? json_array() : NULL;
    cli_table *t = json ? NULL : cli_table_new();
    if (!json && !t)
        return cli_failf("flops", CLI_EXIT_FAIL, "out of memory");
    if (t) {
        const char *head[] = {"preset", "params", "active", "published", "trained seq", "source"};
        cli_table_row(t, 6, head);
        cli_table_rule(t);
    }
    for (size_t i = 0; i < n; i++) {
        mfu_arch a;
        mfu_param_counts p;
        mfu_error err = {0};
        if (mfu_preset_find(mfu_preset_name(i), &a, &err) != MFU_OK ||
            mfu_arch_params(&a, &p, &err) != MFU_OK) {
            json_decref(arr);
            free(t);
            return cli_failf("flops", CLI_EXIT_FAIL, "preset %s: %s", mfu_preset_name(i),
                             err.message);
        }
        if (json) {
            json_t *o = json_object();
            cli_json_set(o, "name", cli_json_str(a.name));
            cli_json_set(o, "params_total", json_integer((json_int_t)p.total));
            cli_json_set(o, "params_active", json_integer((json_int_t)p.active));
            cli_json_set(o, "published_params",
                         flops_out_count_json(a.published_params, a.published_params > 0));
            cli_json_set(o, "source", cli_json_str(a.source));
            cli_json_set(o, "trained_seq", flops_out_count_json(a.trained_seq, a.trained_seq > 0));
            cli_json_set(o, "trained_seq_source",
                         a.trained_seq > 0 ? cli_json_str(a.trained_seq_source) : json_null());
            cli_json_append(arr, o);
            continue;
        }
        char tot[32], act[32], pub[32] = "-", seq[32] = "-";
        if (a.trained_seq > 0)
            snprintf(seq, sizeof seq, "%lld", (long long)a.trained_seq);
        cli_fmt_count(tot, sizeof tot, (double)p.total);
        cli_fmt_count(act, sizeof act, (double)p.active);
        if (a.published_params > 0)
            cli_fmt_count(pub, sizeof pub, (double)a.published_params);
        const char *row[] = {a.name, tot, act, pub, seq, a.source};
        cli_table_row(t, 6, row);
    }
    if (json)
        return cli_print_json(arr);
    cli_table_print(t, stdout, "");
    free(t);
    return CLI_EXIT_OK;
}

int cmd_flops(int argc, char **argv)
{
    cli_args a;
    if (!cli_parse("flops", argc, argv, specs, sizeof specs / sizeof specs[0], &a))
        return CLI_EXIT_USAGE;
    if (a.help) {
        help();
        return CLI_EXIT_OK;
    }
    if (a.npos > 0)
        return cli_failf("flops", CLI_EXIT_USAGE,
                         "unexpected argument '%s' (see 'mfu flops --help')", a.pos[0]);
    bool json = cli_has(&a, "json");
    if (cli_has(&a, "list-presets"))
        return list_presets(json);
    model_args m;
    int rc = model_args_build("flops", &a, true, &m);
    if (rc != CLI_EXIT_OK)
        return rc;
    model_args_default_seq(&m);
    if (m.all_conventions) {
        rc = run_all(&m, json);
    } else {
        mfu_flops f;
        mfu_error err = {0};
        mfu_status st = mfu_flops_compute(&m.arch, &m.workload, &m.options, &f, &err);
        if (st != MFU_OK)
            rc = cli_failf("flops", model_args_exit_status(st), "%s", err.message);
        else
            rc = json ? cli_print_json(flops_out_json(&m, &f)) : print_one(&m, &f);
    }
    model_args_free(&m);
    return rc;
}
