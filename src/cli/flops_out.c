/*
 * flops_out.c - text and JSON rendering of FLOPs per token (see flops_out.h).
 */
#include "cli/flops_out.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* 4 significant digits with an SI prefix: "48.25 GFLOP" (cli_fmt_si). */
void flops_out_fmt(char *buf, size_t n, double v)
{
    cli_fmt_si(buf, n, v, "FLOP");
}

void flops_out_fmt_pct(char *buf, size_t n, double part, double whole)
{
    if (whole > 0)
        snprintf(buf, n, "%.1f%%", 100 * part / whole);
    else
        snprintf(buf, n, "-");
}

const struct flops_out_component flops_out_components[] = {
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

double flops_out_part(const mfu_flops_breakdown *b, size_t offset)
{
    double v;
    memcpy(&v, (const char *)b + offset, sizeof v);
    return v;
}

json_t *flops_out_breakdown_json(const mfu_flops_breakdown *b)
{
    json_t *o = json_object();
    for (size_t i = 0; i < FLOPS_OUT_NCOMPONENTS; i++)
        cli_json_set(o, flops_out_components[i].key,
                     cli_json_num(flops_out_part(b, flops_out_components[i].offset)));
    return o;
}

json_t *flops_out_count_json(int64_t v, bool known)
{
    return known ? json_integer((json_int_t)v) : json_null();
}

json_t *flops_out_json(const model_args *m, const mfu_flops *f)
{
    json_t *o = json_object();
    cli_json_set(o, "convention", cli_json_str(mfu_convention_name(f->convention)));
    cli_json_set(o, "convention_description",
                 cli_json_str(mfu_convention_description(f->convention)));
    cli_json_set(o, "convention_source", cli_json_str(mfu_convention_source(f->convention)));
    cli_json_set(o, "attention", cli_json_str(mfu_attention_name(f->attention)));
    cli_json_set(o, "count_embeddings", json_boolean(m->options.count_embeddings));
    json_t *fl = json_object();
    cli_json_set(fl, "model", cli_json_num(f->model_flops));
    cli_json_set(fl, "hardware", cli_json_num(f->hardware_flops));
    cli_json_set(fl, "forward", cli_json_num(f->forward_flops));
    cli_json_set(fl, "recompute", cli_json_num(f->hardware_flops - f->model_flops));
    cli_json_set(fl, "breakdown", flops_out_breakdown_json(&f->training));
    cli_json_set(fl, "forward_breakdown", flops_out_breakdown_json(&f->forward));
    cli_json_set(o, "flops_per_token", fl);
    cli_json_set(o, "attention_context", cli_json_num(f->attention_context));
    cli_json_set(o, "n_params", flops_out_count_json(f->n_params, f->n_params > 0));
    json_t *mo = json_object();
    cli_json_set(mo, "name", cli_json_str(m->arch.name));
    cli_json_set(mo, "source", cli_json_str(m->arch.source));
    bool k = f->has_param_counts;
    cli_json_set(mo, "params_total", flops_out_count_json(f->params.total, k));
    cli_json_set(mo, "params_active", flops_out_count_json(f->params.active, k));
    cli_json_set(mo, "params_matmul", flops_out_count_json(f->params.matmul, k));
    cli_json_set(mo, "params_embedding", flops_out_count_json(f->params.embedding, k));
    cli_json_set(mo, "published_params",
                 flops_out_count_json(m->arch.published_params, m->arch.published_params > 0));
    cli_json_set(o, "model", mo);
    json_t *w = json_object();
    cli_json_set(w, "seq", flops_out_count_json(m->workload.seq, m->workload.seq > 0));
    cli_json_set(w, "recompute", cli_json_str(mfu_recompute_name(m->workload.recompute)));
    cli_json_set(w, "doc_count", json_integer((json_int_t)m->workload.doc_count));
    cli_json_set(w, "mean_doc_len",
                 m->workload.mean_doc_len > 0 ? json_real(m->workload.mean_doc_len) : json_null());
    model_args_seq_json(m, w);
    cli_json_set(o, "workload", w);
    return o;
}

void flops_out_print_model(const model_args *m)
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
    model_args_print_seq_note(m, "note        ");
}

void flops_out_print_params(const model_args *m, const mfu_flops *f)
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
