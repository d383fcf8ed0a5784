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
#include "cli/model_args.h"

static const cli_optspec specs[] = {MODEL_ARGS_OPTSPECS, {"json", false}, {"list-presets", false}};

static void help(void)
{
    printf("usage: mfu flops (--model NAME | --config PATH | --layers N ...) --seq N [OPTIONS]\n"
           "       mfu flops --list-presets [--json]\n\n"
           "Training FLOPs per token of a model: forward and training, model (the MFU\n"
           "numerator) and hardware (with recomputation, the HFU numerator), by component,\n"
           "with the counting convention and its source printed beside the figures.\n\n"
           "%s"
           "  (--convention all prints every convention side by side)\n"
           "Output:\n"
           "  --json                   one JSON object (an array with --convention all)\n"
           "  --list-presets           the bundled models with their parameter counts\n\n"
           "Examples:\n"
           "  mfu flops --model llama3-8b --seq 8192\n"
           "  mfu flops --model llama3-8b --seq 8192 --convention all\n"
           "  mfu flops --config ./config.json --seq 4096 --recompute selective --json\n"
           "  mfu flops --model mixtral-8x7b --seq 4096 --doc-lengths 1024,2048,1024\n"
           "  mfu flops --convention palm --params 540e9 --layers 118 --heads 48 \\\n"
           "      --head-dim 256 --seq 2048\n"
           "  mfu flops --model llama3-8b --seq 8192 --convention torchtitan --count-embeddings\n",
           MODEL_ARGS_HELP);
}

/* 4 significant digits with an SI prefix: "48.25 GFLOP". */
static void fmt_flops(char *buf, size_t n, double v)
{
    static const struct {
        double f;
        const char *p;
    } pre[] = {{1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}};
    for (size_t i = 0; i < sizeof pre / sizeof pre[0]; i++)
        if (fabs(v) >= pre[i].f) {
            snprintf(buf, n, "%.4g %sFLOP", v / pre[i].f, pre[i].p);
            return;
        }
    snprintf(buf, n, "%.4g FLOP", v);
}

static void fmt_pct(char *buf, size_t n, double part, double whole)
{
    if (whole > 0)
        snprintf(buf, n, "%.1f%%", 100 * part / whole);
    else
        snprintf(buf, n, "-");
}

static const struct component {
    const char *label;
    const char *key;
    size_t offset;
} components[] = {
    {"attention projections", "attention_projections",
     offsetof(mfu_flops_breakdown, attention_projections)},
    {"attention core", "attention_core", offsetof(mfu_flops_breakdown, attention_core)},
    {"mlp", "mlp", offsetof(mfu_flops_breakdown, mlp)},
    {"experts", "experts", offsetof(mfu_flops_breakdown, experts)},
    {"router", "router", offsetof(mfu_flops_breakdown, router)},
    {"logits", "logits", offsetof(mfu_flops_breakdown, logits)},
    {"embedding", "embedding", offsetof(mfu_flops_breakdown, embedding)},
    {"other", "other", offsetof(mfu_flops_breakdown, other)},
};

static double part(const mfu_flops_breakdown *b, size_t offset)
{
    double v;
    memcpy(&v, (const char *)b + offset, sizeof v);
    return v;
}

/* ---- JSON ------------------------------------------------------------------------------- */

static json_t *breakdown_json(const mfu_flops_breakdown *b)
{
    json_t *o = json_object();
    for (size_t i = 0; i < sizeof components / sizeof components[0]; i++)
        json_object_set_new(o, components[i].key, cli_json_num(part(b, components[i].offset)));
    return o;
}

static json_t *count_json(int64_t v, bool known)
{
    return known ? json_integer((json_int_t)v) : json_null();
}

static json_t *flops_json(const model_args *m, const mfu_flops *f)
{
    json_t *o = json_object();
    json_object_set_new(o, "convention", json_string(mfu_convention_name(f->convention)));
    json_object_set_new(o, "convention_description",
                        json_string(mfu_convention_description(f->convention)));
    json_object_set_new(o, "convention_source", json_string(mfu_convention_source(f->convention)));
    json_object_set_new(o, "attention", json_string(mfu_attention_name(f->attention)));
    json_object_set_new(o, "count_embeddings", json_boolean(m->options.count_embeddings));
    json_t *fl = json_object();
    json_object_set_new(fl, "model", cli_json_num(f->model_flops));
    json_object_set_new(fl, "hardware", cli_json_num(f->hardware_flops));
    json_object_set_new(fl, "forward", cli_json_num(f->forward_flops));
    json_object_set_new(fl, "recompute", cli_json_num(f->hardware_flops - f->model_flops));
    json_object_set_new(fl, "breakdown", breakdown_json(&f->training));
    json_object_set_new(fl, "forward_breakdown", breakdown_json(&f->forward));
    json_object_set_new(o, "flops_per_token", fl);
    json_object_set_new(o, "attention_context", cli_json_num(f->attention_context));
    json_object_set_new(o, "n_params", count_json(f->n_params, f->n_params > 0));
    json_t *mo = json_object();
    json_object_set_new(mo, "name", json_string(m->arch.name));
    json_object_set_new(mo, "source", json_string(m->arch.source));
    bool k = f->has_param_counts;
    json_object_set_new(mo, "params_total", count_json(f->params.total, k));
    json_object_set_new(mo, "params_active", count_json(f->params.active, k));
    json_object_set_new(mo, "params_matmul", count_json(f->params.matmul, k));
    json_object_set_new(mo, "params_embedding", count_json(f->params.embedding, k));
    json_object_set_new(mo, "published_params",
                        count_json(m->arch.published_params, m->arch.published_params > 0));
    json_object_set_new(o, "model", mo);
    json_t *w = json_object();
    json_object_set_new(w, "seq", count_json(m->workload.seq, m->workload.seq > 0));
    json_object_set_new(w, "recompute", json_string(mfu_recompute_name(m->workload.recompute)));
    json_object_set_new(w, "doc_count", json_integer((json_int_t)m->workload.doc_count));
    json_object_set_new(w, "mean_doc_len",
                        m->workload.mean_doc_len > 0 ? json_real(m->workload.mean_doc_len)
                                                     : json_null());
    json_object_set_new(o, "workload", w);
    return o;
}

/* ---- text ------------------------------------------------------------------------------- */

static void print_header(const model_args *m)
{
    char seq[64] = "unset";
    if (m->workload.seq > 0)
        snprintf(seq, sizeof seq, "%lld", (long long)m->workload.seq);
    printf("model       %s%s%s%s\n", m->arch.name[0] ? m->arch.name : "(from flags)",
           m->arch.source[0] ? "  (" : "", m->arch.source, m->arch.source[0] ? ")" : "");
    printf("workload    seq %s, recompute %s", seq, mfu_recompute_name(m->workload.recompute));
    if (m->workload.doc_count > 0)
        printf(", %zu packed documents", m->workload.doc_count);
    if (m->workload.mean_doc_len > 0)
        printf(", packed documents of mean length %g", m->workload.mean_doc_len);
    printf("\n");
}

static void print_params(const model_args *m, const mfu_flops *f)
{
    char t[32], a[32], mm[32], e[32];
    if (f->has_param_counts) {
        cli_fmt_count(t, sizeof t, (double)f->params.total);
        cli_fmt_count(a, sizeof a, (double)f->params.active);
        cli_fmt_count(mm, sizeof mm, (double)f->params.matmul);
        cli_fmt_count(e, sizeof e, (double)f->params.embedding);
        printf("parameters  total %s, active %s, matmul %s, embedding %s", t, a, mm, e);
        if (m->arch.published_params > 0) {
            cli_fmt_count(t, sizeof t, (double)m->arch.published_params);
            printf("  (published %s)", t);
        }
        printf("\n");
    }
    if (f->n_params > 0) {
        cli_fmt_count(t, sizeof t, (double)f->n_params);
        printf("N in 6N     %s\n", t);
    }
}

static int print_one(const model_args *m, const mfu_flops *f)
{
    print_header(m);
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
    for (size_t i = 0; i < sizeof components / sizeof components[0]; i++) {
        double fw = part(&f->forward, components[i].offset);
        double tr = part(&f->training, components[i].offset);
        if (fw == 0 && tr == 0 && i > 2 && strcmp(components[i].key, "logits") != 0)
            continue;
        char a[32], b[32], c[16];
        fmt_flops(a, sizeof a, fw);
        fmt_flops(b, sizeof b, tr);
        fmt_pct(c, sizeof c, tr, f->model_flops);
        const char *row[] = {components[i].label, a, b, c};
        cli_table_row(t, 4, row);
    }
    cli_table_rule(t);
    char a[32], b[32], c[32], d[16];
    fmt_flops(a, sizeof a, f->forward_flops);
    fmt_flops(b, sizeof b, f->model_flops);
    const char *model_row[] = {"model (MFU numerator)", a, b, "100.0%"};
    cli_table_row(t, 4, model_row);
    fmt_flops(c, sizeof c, f->hardware_flops);
    fmt_pct(d, sizeof d, f->hardware_flops, f->model_flops);
    const char *hw_row[] = {"hardware (HFU numerator)", "", c, d};
    cli_table_row(t, 4, hw_row);
    cli_table_print(t, stdout, "");
    free(t);
    printf("\n");
    print_params(m, f);
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
                json_array_append_new(arr, flops_json(m, &f[c]));
            } else {
                json_t *o = json_object();
                json_object_set_new(o, "convention",
                                    json_string(mfu_convention_name((mfu_convention)c)));
                json_object_set_new(o, "error", json_string(err[c].message));
                json_array_append_new(arr, o);
            }
        }
        return cli_print_json(arr);
    }
    print_header(m);
    printf("\n");
    cli_table *t = cli_table_new();
    if (!t)
        return cli_failf("flops", CLI_EXIT_FAIL, "out of memory");
    const char *head[] = {"convention", "model/token", "hardware/token", "attention",
                          "vs exact",   "mask"};
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
        fmt_flops(a, sizeof a, f[c].model_flops);
        fmt_flops(b, sizeof b, f[c].hardware_flops);
        fmt_pct(share, sizeof share, f[c].training.attention_core, f[c].model_flops);
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
            print_params(m, &f[c]);
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
        const char *head[] = {"preset", "params", "active", "published", "source"};
        cli_table_row(t, 5, head);
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
            json_object_set_new(o, "name", json_string(a.name));
            json_object_set_new(o, "params_total", json_integer((json_int_t)p.total));
            json_object_set_new(o, "params_active", json_integer((json_int_t)p.active));
            json_object_set_new(o, "published_params",
                                count_json(a.published_params, a.published_params > 0));
            json_object_set_new(o, "source", json_string(a.source));
            json_array_append_new(arr, o);
            continue;
        }
        char tot[32], act[32], pub[32] = "-";
        cli_fmt_count(tot, sizeof tot, (double)p.total);
        cli_fmt_count(act, sizeof act, (double)p.active);
        if (a.published_params > 0)
            cli_fmt_count(pub, sizeof pub, (double)a.published_params);
        const char *row[] = {a.name, tot, act, pub, a.source};
        cli_table_row(t, 5, row);
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
    if (m.all_conventions) {
        rc = run_all(&m, json);
    } else {
        mfu_flops f;
        mfu_error err = {0};
        mfu_status st = mfu_flops_compute(&m.arch, &m.workload, &m.options, &f, &err);
        if (st != MFU_OK)
            rc = cli_failf("flops", model_args_exit_status(st), "%s", err.message);
        else
            rc = json ? cli_print_json(flops_json(&m, &f)) : print_one(&m, &f);
    }
    model_args_free(&m);
    return rc;
}
