/*
 * cmd_trace.c - `mfu trace FILE...`: PyTorch profiler (Kineto) traces, one per rank, read in
 * one streaming pass each: per step and rank where the GPU time went (compute split into
 * matmul, attention and other; exposed and overlapped communication; memory copies; idle),
 * the straggler across ranks, the longest kernels with their achieved FLOP/s where the trace
 * recorded shapes, and, with the run's MFU, the waterfall of the points lost on the way from
 * peak to it.
 *
 * The MFU is mfu report's: of --log LOG (the same run's training log, with the same context
 * flags), else of the traces' own steps (step time = the step's interval) with the context
 * flags. With
 * --compare A B: what changed from trace A to trace B, part by part, in points. With
 * --attach RUN: the views are stored with a run of the store, for the dashboard. The library
 * side is src/trace (include/mfu/trace.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/db_path.h"
#include "cli/report_args.h"
#include "cli/trace_view.h"
#include "trace/trace.h"
#include "util/util.h"

static const cli_optspec specs[] = {
    REPORT_ARGS_OPTSPECS, {"json", false},          {"log", true}, {"compare", false},
    {"kernels", true},    {"attach", true},         {"db", true},  {"wait", true},
    {"no-steps", false},  {"launched-only", false},
};

static void help(void)
{
    printf("usage: mfu trace FILE... [MODEL] [DEVICE] [--log LOG] [--json]\n"
           "       mfu trace --compare A B [MODEL] [DEVICE] [--log LOG_A --log LOG_B] [--json]\n"
           "       mfu trace FILE... --attach RUN [--db PATH]\n\n"
           "Read PyTorch profiler (Kineto) Chrome-trace JSON files, plain, .gz or .zst, one per\n"
           "rank, streaming (a trace is never held in memory whole). Steps are the\n"
           "ProfilerStep#N windows; a GPU activity belongs to the step that launched it; a\n"
           "step's time is its GPU span. Per step and rank: compute (matmul, attention,\n"
           "other), exposed and overlapped communication, memory copies and idle, which sum to\n"
           "the span; the straggler across ranks; the longest kernels, with their achieved\n"
           "FLOP/s where the trace recorded shapes (record_shapes=True). With the run's MFU,\n"
           "the waterfall: peak, the points lost to idle, exposed communication, memory\n"
           "copies, non-matmul compute and matmul kernels below peak, and the achieved MFU.\n\n"
           "The MFU is mfu report's, of --log LOG with the same flags, else of the traces'\n"
           "steps (each step's time its interval: first GPU activity to the next step's)\n"
           "with the flags below (the tokens of a step are needed: --tokens-per-step, or\n"
           "--global-batch with --seq).\n\n"
           "%s"
           "%s"
           "Traces:\n"
           "  --log LOG                the training log of the same run (its MFU is the\n"
           "                           waterfall's); twice with --compare (A's, then B's)\n"
           "  --compare                exactly two traces A B (one rank each): what changed\n"
           "                           per part, in points of the step (and of MFU with a\n"
           "                           model and device)\n"
           "  --kernels N              the N longest kernels per rank (default 5)\n"
           "  --no-steps               ranks' totals only, no per-step table\n"
           "  --launched-only          leave out GPU activities without a launch event in the\n"
           "                           trace (default: placed in the step whose GPU span they\n"
           "                           start in), as Holistic Trace Analysis does\n"
           "  --attach RUN             store the views with run RUN of the store (the\n"
           "                           dashboard shows them); its stored context gives the MFU\n"
           "  --db PATH, --wait S      the store (default: $MFU_DB, else ./mfu-runs.db)\n"
           "Output:\n"
           "  --json                   {\"ranks\": [{\"rank\", \"steps\": [{\"step\",\n"
           "                           \"step_time_s\", \"breakdown\"}], \"totals\", ...}],\n"
           "                           \"straggler\", \"waterfall\", ...} (docs/cli.md)\n\n"
           "Examples:\n"
           "  mfu trace rank0.json.gz rank1.json.gz\n"
           "  mfu trace trace.json --log train.log --model llama3-8b --seq 8192 \\\n"
           "      --device h100-sxm\n"
           "  mfu trace --compare before.json after.json --json | jq .delta\n\n"
           "exit status: 0 ok, 1 a trace could not be read (truncated, not a trace, CPU-only,\n"
           "no ProfilerStep), 2 bad usage.\n",
           MODEL_ARGS_HELP, REPORT_ARGS_HELP);
}

/* ---- reading ------------------------------------------------------------------------------ */

static void free_traces(mfu_trace **t, size_t n)
{
    for (size_t i = 0; i < n; i++)
        mfu_trace_free(t[i]);
    free(t);
}

/* Read paths[0..n) into a new array; prints "mfu trace: PATH: ..." on failure. */
static int read_traces(const char *cmd, const char *const *paths, size_t n,
                       const mfu_trace_options *opt, mfu_trace ***out)
{
    *out = NULL;
    mfu_trace **t = calloc(n ? n : 1, sizeof *t);
    if (!t)
        return cli_failf(cmd, CLI_EXIT_FAIL, "out of memory");
    for (size_t i = 0; i < n; i++) {
        mfu_error e;
        memset(&e, 0, sizeof e);
        if (mfu_trace_read_path(paths[i], opt, &t[i], &e) != MFU_OK) {
            if (e.line > 0)
                fprintf(stderr, "mfu %s: %s: line %ld, column %ld: %s\n", cmd, paths[i], e.line,
                        e.column, e.message);
            else
                fprintf(stderr, "mfu %s: %s: %s\n", cmd, paths[i],
                        e.message[0] ? e.message : mfu_strerror(e.code));
            free_traces(t, n);
            return CLI_EXIT_FAIL;
        }
    }
    *out = t;
    return CLI_EXIT_OK;
}

int cli_trace_set_read(const char *cmd, const char *const *paths, size_t n,
                       const mfu_report *report, const char *source, cli_trace_set *out)
{
    memset(out, 0, sizeof *out);
    int rc = read_traces(cmd, paths, n, NULL, &out->traces);
    if (rc != CLI_EXIT_OK)
        return rc;
    out->n = n;
    mfu__strlcpy(out->source, source ? source : "", sizeof out->source);
    mfu_error e;
    memset(&e, 0, sizeof e);
    if (mfu_trace_view_make((const mfu_trace *const *)out->traces, n, report, out->source,
                            &out->view, &e) != MFU_OK) {
        cli_trace_set_free(out);
        return cli_fail(cmd, &e, CLI_EXIT_FAIL);
    }
    return CLI_EXIT_OK;
}

void cli_trace_set_free(cli_trace_set *s)
{
    free_traces(s->traces, s->n);
    memset(s, 0, sizeof *s);
}

/* The report whose MFU the waterfall uses: of LOG (when given), else of the traces' steps when
 * any context flag was given; NULL (CLI_EXIT_OK) when neither. *source says which. */
static int mfu_report_of(const report_args *ra, const cli_args *a, const char *log,
                         const mfu_trace *const *t, size_t n, mfu_report **out, char *source,
                         size_t nsource)
{
    *out = NULL;
    source[0] = '\0';
    if (log) {
        int rc = report_args_compute("trace", ra, log, out, NULL, NULL);
        if (rc == CLI_EXIT_OK)
            snprintf(source, nsource, "mfu report of %s", log);
        return rc;
    }
    if (!run_context_given(a))
        return CLI_EXIT_OK;
    mfu_error e;
    memset(&e, 0, sizeof e);
    mfu_run *run = NULL;
    mfu_status st = mfu_trace_to_run(t, n, &run, &e);
    if (st == MFU_OK)
        st = mfu_report_compute(run, &ra->in, out, &e);
    mfu_run_free(run);
    if (st != MFU_OK)
        return cli_fail("trace", &e, model_args_exit_status(st));
    snprintf(source, nsource, "mfu report of the traces' steps (step time = the step interval)");
    return CLI_EXIT_OK;
}

/* ---- text --------------------------------------------------------------------------------- */

static void pctcell(char *buf, size_t n, double part, double whole)
{
    if (whole > 0 && isfinite(part))
        snprintf(buf, n, "%.1f%%", 100 * part / whole);
    else
        snprintf(buf, n, "-");
}

static void bd_row(cli_table *tb, const char *label, const mfu_trace_breakdown *b, size_t acts)
{
    char c[10][CLI_TABLE_CELL];
    snprintf(c[0], sizeof c[0], "%s", label);
    snprintf(c[1], sizeof c[1], "%.6f", b->span_s);
    pctcell(c[2], sizeof c[2], b->compute_s, b->span_s);
    pctcell(c[3], sizeof c[3], b->part_s[MFU_TRACE_MATMUL], b->span_s);
    pctcell(c[4], sizeof c[4], b->part_s[MFU_TRACE_ATTENTION], b->span_s);
    pctcell(c[5], sizeof c[5], b->part_s[MFU_TRACE_OTHER], b->span_s);
    pctcell(c[6], sizeof c[6], b->part_s[MFU_TRACE_COMM_EXPOSED], b->span_s);
    pctcell(c[7], sizeof c[7], b->communication_overlapped_s, b->span_s);
    pctcell(c[8], sizeof c[8], b->part_s[MFU_TRACE_MEMCPY], b->span_s);
    pctcell(c[9], sizeof c[9], b->part_s[MFU_TRACE_IDLE], b->span_s);
    const char *cells[11];
    for (int i = 0; i < 10; i++)
        cells[i] = c[i];
    char an[32];
    snprintf(an, sizeof an, "%zu", acts);
    cells[10] = an;
    cli_table_row(tb, 11, cells);
}

static const char *const BD_HEAD[] = {"step",   "time (s)", "compute",   "matmul",
                                      "attn",   "other",    "comm exp",  "comm ovl",
                                      "memcpy", "idle",     "activities"};

static void rank_title(const mfu_trace *t, char *buf, size_t n)
{
    int64_t r = mfu_trace_rank(t), w = mfu_trace_world_size(t);
    char rk[64] = "rank ?";
    if (r >= 0 && w > 0)
        snprintf(rk, sizeof rk, "rank %lld of %lld", (long long)r, (long long)w);
    else if (r >= 0)
        snprintf(rk, sizeof rk, "rank %lld", (long long)r);
    const char *dev = mfu_trace_device(t);
    mfu_trace_counts c = mfu_trace_get_counts(t);
    snprintf(buf, n, "%s (%s%s%s): %zu steps, %zu GPU activities, %zu in steps", mfu_trace_name(t),
             rk, dev[0] ? ", " : "", dev, mfu_trace_step_count(t), c.activities, c.attributed);
}

/* One kernel's row: name (cut), class, count, share of the rank's window, TFLOP/s, % of peak. */
static void kernel_row(cli_table *tb, const mfu_trace_kernel *k, double span_s, double peak)
{
    char name[CLI_TABLE_CELL], cnt[32], share[32], tf[32], pk[32];
    if (strlen(k->name) > 60)
        snprintf(name, sizeof name, "%.57s...", k->name);
    else
        snprintf(name, sizeof name, "%s", k->name);
    snprintf(cnt, sizeof cnt, "%zu", k->count);
    pctcell(share, sizeof share, k->time_s, span_s);
    mfu__fmt_si(tf, sizeof tf, k->flops_per_s, "FLOP/s");
    pctcell(pk, sizeof pk, k->flops_per_s, peak);
    const char *cells[] = {name, mfu_trace_class_name(k->cls), cnt, share, tf, pk};
    cli_table_row(tb, 6, cells);
}

/* The nk longest kernels, then the nk longest matmul kernels with their FLOP/s. */
static void print_kernels(const mfu_trace *t, size_t nk, double peak)
{
    if (nk == 0 || mfu_trace_kernel_count(t) == 0)
        return;
    mfu_trace_breakdown tot = mfu_trace_total(t);
    const char *head[] = {"kernel", "class", "count", "time share", "FLOP/s", "% of peak"};
    for (int pass = 0; pass < 2; pass++) {
        cli_table *tb = cli_table_new();
        if (!tb)
            return;
        cli_table_row(tb, 6, head);
        cli_table_rule(tb);
        size_t shown = 0;
        for (size_t i = 0; i < mfu_trace_kernel_count(t) && shown < nk; i++) {
            const mfu_trace_kernel *k = mfu_trace_kernel_at(t, i);
            if (pass == 1 && k->cls != MFU_TRACE_CLASS_MATMUL)
                continue;
            kernel_row(tb, k, tot.span_s, peak);
            shown++;
        }
        if (shown > 0) {
            printf("  %s:\n", pass == 0 ? "longest kernels"
                                        : "main matmul kernels (FLOP/s from "
                                          "the ops' recorded shapes)");
            cli_table_print(tb, stdout, "    ");
        }
        free(tb);
    }
}

static void print_waterfall(const mfu_trace_view *v)
{
    if (!v->has_waterfall) {
        printf("waterfall: %s\n", v->missing);
        return;
    }
    const mfu_trace_waterfall *w = &v->waterfall;
    printf("MFU waterfall (points of peak; MFU from %s):\n", v->mfu_source);
    const struct {
        const char *label;
        double pts;
    } rows[] = {{"lost to idle", w->idle},
                {"lost to exposed communication", w->communication},
                {"lost to memory copies", w->memcpy},
                {"lost to non-matmul compute", w->non_matmul},
                {"lost to matmul kernels below peak", w->matmul_below_peak}};
    printf("  %-36s %7.1f\n", "peak", 100.0);
    double level = 100;
    for (size_t i = 0; i < MFU__ARRAY_LEN(rows); i++) {
        level -= rows[i].pts;
        printf("  %-36s %7.1f   (%.1f left)\n", rows[i].label, -rows[i].pts, level);
    }
    printf("  %-36s %7.1f\n", "achieved MFU", 100 * w->mfu);
    if (w->matmul_below_peak < 0)
        printf("  note: the MFU is above what the matmul and attention time allows at peak: "
               "the log and the trace are of different steps, or the model counts FLOPs the "
               "kernels do not do (check the model flags)\n");
}

static void print_view(const mfu_trace_view *v, size_t nk, bool steps)
{
    for (size_t i = 0; i < v->n; i++) {
        const mfu_trace *t = v->traces[i];
        char title[1024];
        rank_title(t, title, sizeof title);
        printf("%s%s\n", i ? "\n" : "", title);
        cli_table *tb = cli_table_new();
        if (!tb)
            return;
        cli_table_row(tb, 11, BD_HEAD);
        cli_table_rule(tb);
        size_t acts = 0, shown = 0, max_rows = CLI_TABLE_ROWS - 4; /* head, rules, total */
        for (size_t s = 0; s < mfu_trace_step_count(t); s++) {
            const mfu_trace_step *st = mfu_trace_step_at(t, s);
            acts += st->activities;
            if (!steps || shown == max_rows)
                continue;
            shown++;
            char lab[32];
            snprintf(lab, sizeof lab, "%lld", (long long)st->step);
            bd_row(tb, lab, &st->breakdown, st->activities);
        }
        if (steps)
            cli_table_rule(tb);
        mfu_trace_breakdown tot = mfu_trace_total(t);
        bd_row(tb, "total", &tot, acts);
        cli_table_print(tb, stdout, "  ");
        free(tb);
        if (steps && shown < mfu_trace_step_count(t))
            printf("  (%zu more steps not shown: --json lists every one)\n",
                   mfu_trace_step_count(t) - shown);
        print_kernels(t, nk, v->peak_flops_per_s);
    }
    if (v->n > 1 && v->ranks.missing > 0) {
        printf("\nmissing ranks: %zu of world size %lld have no trace (", v->ranks.missing,
               (long long)v->ranks.world_size);
        for (size_t i = 0; i < v->ranks.missing && i < MFU_TRACE_MISSING_LISTED; i++)
            printf("%s%lld", i ? ", " : "", (long long)v->ranks.missing_rank[i]);
        printf("%s): the straggler and the totals are of the ranks given\n",
               v->ranks.missing > MFU_TRACE_MISSING_LISTED ? ", ..." : "");
    }
    const mfu_trace_straggler *sg = &v->straggler;
    if (sg->found)
        printf("\nstraggler: rank %lld (%s): compute %.6f s per step, %+.1f%% against the "
               "ranks' median, over %zu common steps; the others wait %.6f s per step for it in "
               "collectives (%.1f points of their step)\n",
               (long long)sg->rank, mfu_trace_name(v->traces[sg->index]), sg->compute_s,
               100 * sg->excess, sg->steps, sg->wait_s, sg->wait_points);
    else if (v->n > 1)
        printf("\nstraggler: none found (no step common to every rank)\n");
    printf("\n");
    print_waterfall(v);
}

/* ---- compare ------------------------------------------------------------------------------ */

typedef struct side {
    mfu_trace **t;
    mfu_report *rep;
    mfu_trace_view v;
    char source[200];
    mfu_trace_breakdown tot;
    size_t rank_steps;
} side;

static json_t *compare_json(const side *a, const side *b, size_t nk)
{
    json_t *o = json_object(), *d = json_object(), *share = json_object();
    json_t *ja = mfu__trace_json(&a->v, nk), *jb = mfu__trace_json(&b->v, nk);
    if (!o || !d || !share || !ja || !jb) {
        json_decref(o);
        json_decref(d);
        json_decref(share);
        json_decref(ja);
        json_decref(jb);
        return NULL;
    }
    cli_json_set(o, "a", ja);
    cli_json_set(o, "b", jb);
    double ta = a->tot.span_s / (double)a->rank_steps, tb = b->tot.span_s / (double)b->rank_steps;
    cli_json_set(d, "step_time_a_s", cli_json_num(ta));
    cli_json_set(d, "step_time_b_s", cli_json_num(tb));
    for (int p = 0; p < MFU_TRACE_PARTS_; p++)
        cli_json_set(share, mfu_trace_part_name((mfu_trace_part)p),
                     cli_json_num(100 * (b->tot.part_s[p] / b->tot.span_s -
                                         a->tot.part_s[p] / a->tot.span_s)));
    cli_json_set(d, "share_points", share);
    if (a->v.has_waterfall && b->v.has_waterfall) {
        const mfu_trace_waterfall *wa = &a->v.waterfall, *wb = &b->v.waterfall;
        json_t *lost = json_object();
        cli_json_set(lost, "idle", cli_json_num(wb->idle - wa->idle));
        cli_json_set(lost, "communication", cli_json_num(wb->communication - wa->communication));
        cli_json_set(lost, "memcpy", cli_json_num(wb->memcpy - wa->memcpy));
        cli_json_set(lost, "non_matmul", cli_json_num(wb->non_matmul - wa->non_matmul));
        cli_json_set(lost, "matmul_below_peak",
                     cli_json_num(wb->matmul_below_peak - wa->matmul_below_peak));
        cli_json_set(d, "lost_points", lost);
        cli_json_set(d, "mfu_points", cli_json_num(100 * (wb->mfu - wa->mfu)));
    } else {
        cli_json_set(d, "lost_points", json_null());
        cli_json_set(d, "mfu_points", json_null());
    }
    cli_json_set(o, "delta", d);
    return o;
}

static void compare_text(const side *a, const side *b)
{
    double ta = a->tot.span_s / (double)a->rank_steps, tb = b->tot.span_s / (double)b->rank_steps;
    printf("A %s: %zu steps, %.6f s per step (GPU span)\n", mfu_trace_name(a->t[0]), a->rank_steps,
           ta);
    printf("B %s: %zu steps, %.6f s per step (%+.1f%%)\n\n", mfu_trace_name(b->t[0]), b->rank_steps,
           tb, 100 * (tb / ta - 1));
    cli_table *t = cli_table_new();
    if (!t)
        return;
    const char *head[] = {"part", "A s/step", "B s/step", "A share", "B share", "change (points)"};
    cli_table_row(t, 6, head);
    cli_table_rule(t);
    for (int p = 0; p < MFU_TRACE_PARTS_; p++) {
        char c[6][CLI_TABLE_CELL];
        snprintf(c[0], sizeof c[0], "%s", mfu_trace_part_name((mfu_trace_part)p));
        snprintf(c[1], sizeof c[1], "%.6f", a->tot.part_s[p] / (double)a->rank_steps);
        snprintf(c[2], sizeof c[2], "%.6f", b->tot.part_s[p] / (double)b->rank_steps);
        double sa = 100 * a->tot.part_s[p] / a->tot.span_s,
               sb = 100 * b->tot.part_s[p] / b->tot.span_s;
        snprintf(c[3], sizeof c[3], "%.1f%%", sa);
        snprintf(c[4], sizeof c[4], "%.1f%%", sb);
        snprintf(c[5], sizeof c[5], "%+.1f", sb - sa);
        const char *cells[] = {c[0], c[1], c[2], c[3], c[4], c[5]};
        cli_table_row(t, 6, cells);
    }
    cli_table_print(t, stdout, "  ");
    free(t);
    if (!(a->v.has_waterfall && b->v.has_waterfall)) {
        printf("\nin MFU points: %s\n", a->v.has_waterfall ? b->v.missing : a->v.missing);
        return;
    }
    const mfu_trace_waterfall *wa = &a->v.waterfall, *wb = &b->v.waterfall;
    printf("\nMFU %.1f%% -> %.1f%% (%+.1f points); points lost, A -> B:\n", 100 * wa->mfu,
           100 * wb->mfu, 100 * (wb->mfu - wa->mfu));
    const struct {
        const char *label;
        double a, b;
    } rows[] = {{"idle", wa->idle, wb->idle},
                {"exposed communication", wa->communication, wb->communication},
                {"memory copies", wa->memcpy, wb->memcpy},
                {"non-matmul compute", wa->non_matmul, wb->non_matmul},
                {"matmul kernels below peak", wa->matmul_below_peak, wb->matmul_below_peak}};
    for (size_t i = 0; i < MFU__ARRAY_LEN(rows); i++)
        printf("  %-28s %6.1f -> %6.1f  (%+.1f points of MFU)\n", rows[i].label, rows[i].a,
               rows[i].b, -(rows[i].b - rows[i].a));
}

static int run_compare(const cli_args *a, const report_args *ra, const mfu_trace_options *opt,
                       size_t nk, bool json)
{
    if (a->npos != 2)
        return cli_failf("trace", CLI_EXIT_USAGE,
                         "--compare takes exactly two traces A B (got %zu)", a->npos);
    const char *logs[2] = {NULL, NULL};
    size_t nlog = 0;
    for (size_t i = 0; i < a->nocc; i++)
        if (strcmp(specs[a->occ_spec[i]].name, "log") == 0) {
            if (nlog == 2)
                return cli_failf("trace", CLI_EXIT_USAGE,
                                 "--compare takes at most two --log (A's, then B's)");
            logs[nlog++] = a->occ_value[i];
        }
    if (nlog == 1)
        return cli_failf("trace", CLI_EXIT_USAGE,
                         "--compare with logs needs two --log: A's, then B's");
    side s[2];
    memset(s, 0, sizeof s);
    int rc = CLI_EXIT_OK;
    for (int i = 0; i < 2 && rc == CLI_EXIT_OK; i++) {
        rc = read_traces("trace", &a->pos[i], 1, opt, &s[i].t);
        if (rc != CLI_EXIT_OK)
            break;
        const mfu_trace *const *tt = (const mfu_trace *const *)s[i].t;
        rc = mfu_report_of(ra, a, logs[i], tt, 1, &s[i].rep, s[i].source, sizeof s[i].source);
        if (rc != CLI_EXIT_OK)
            break;
        mfu_error e;
        memset(&e, 0, sizeof e);
        if (mfu_trace_view_make(tt, 1, s[i].rep, s[i].source, &s[i].v, &e) != MFU_OK)
            rc = cli_fail("trace", &e, CLI_EXIT_FAIL);
        s[i].tot = mfu_trace_set_total(tt, 1, &s[i].rank_steps);
    }
    if (rc == CLI_EXIT_OK) {
        if (json) {
            json_t *o = compare_json(&s[0], &s[1], nk);
            rc = o ? cli_print_json(o) : cli_failf("trace", CLI_EXIT_FAIL, "out of memory");
        } else {
            compare_text(&s[0], &s[1]);
        }
    }
    for (int i = 0; i < 2; i++) {
        free_traces(s[i].t, s[i].t ? 1 : 0);
        mfu_report_free(s[i].rep);
    }
    return rc;
}

/* ---- attach -------------------------------------------------------------------------------- */

/* The report of stored run id under its stored context (NULL without one). */
static int stored_report(mfu_store *st, int64_t id, const char *name, mfu_report **out)
{
    *out = NULL;
    mfu_error e;
    memset(&e, 0, sizeof e);
    char *context = NULL;
    if (mfu_store_get_context(st, id, &context, &e) != MFU_OK)
        return cli_fail("trace", &e, CLI_EXIT_FAIL);
    if (!context || !context[0]) {
        free(context);
        return CLI_EXIT_OK;
    }
    run_context ctx;
    int rc = run_context_from_json("trace", context, &ctx);
    free(context);
    if (rc != CLI_EXIT_OK)
        return rc;
    mfu_run *run = NULL;
    mfu_status s = mfu_store_get_run(st, id, &run, &e);
    if (s == MFU_OK)
        s = mfu_report_compute(run, &ctx.in, out, &e);
    mfu_run_free(run);
    run_context_free(&ctx);
    if (s != MFU_OK)
        return cli_failf("trace", CLI_EXIT_FAIL, "--attach %s: the run's report: %s", name,
                         e.message);
    return CLI_EXIT_OK;
}

static int run_attach(const cli_args *a, const char *name, mfu_trace **t, size_t n, size_t nk)
{
    mfu_store *st = NULL;
    int rc = cli_open_store("trace", a, 0, &st);
    if (rc != CLI_EXIT_OK)
        return rc;
    mfu_error e;
    memset(&e, 0, sizeof e);
    int64_t id = 0;
    mfu_status s = mfu_store_find_run(st, name, &id, &e);
    if (s == MFU_E_UNKNOWN) {
        rc = cli_failf("trace", CLI_EXIT_FAIL,
                       "--attach %s: no run of that name in %s; 'mfu runs' lists them", name,
                       mfu_store_path(st));
        mfu_store_close(st);
        return rc;
    }
    mfu_report *rep = NULL;
    if (s != MFU_OK)
        rc = cli_fail("trace", &e, CLI_EXIT_FAIL);
    else
        rc = stored_report(st, id, name, &rep);
    mfu_trace_view v;
    char source[200];
    snprintf(source, sizeof source, "mfu report of run %s", name);
    if (rc == CLI_EXIT_OK &&
        mfu_trace_view_make((const mfu_trace *const *)t, n, rep, source, &v, &e) != MFU_OK)
        rc = cli_fail("trace", &e, CLI_EXIT_FAIL);
    if (rc == CLI_EXIT_OK) {
        json_t *o = mfu__trace_json(&v, nk);
        char *text = o ? json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
        json_decref(o);
        if (!text)
            rc = cli_failf("trace", CLI_EXIT_FAIL, "out of memory");
        else if (mfu_store_put_trace(st, id, text, &e) != MFU_OK)
            rc = cli_fail("trace", &e, CLI_EXIT_FAIL);
        else
            printf("attached %zu trace%s to run %s in %s\n", n, n == 1 ? "" : "s", name,
                   mfu_store_path(st));
        free(text);
    }
    mfu_report_free(rep);
    mfu_store_close(st);
    return rc;
}

/* ---- the command ---------------------------------------------------------------------------- */

int cmd_trace(int argc, char **argv)
{
    cli_args a;
    if (!cli_parse("trace", argc, argv, specs, MFU__ARRAY_LEN(specs), &a))
        return CLI_EXIT_USAGE;
    if (a.help) {
        help();
        return CLI_EXIT_OK;
    }
    if (a.npos == 0)
        return cli_failf("trace", CLI_EXIT_USAGE,
                         "no trace given; pass the PyTorch profiler traces of a run, one per rank "
                         "(see 'mfu trace --help')");
    double nkd = 5;
    if (!cli_get_double("trace", &a, "kernels", &nkd, NULL))
        return CLI_EXIT_USAGE;
    if (!(nkd >= 0 && nkd <= 1000) || nkd != floor(nkd))
        return cli_failf("trace", CLI_EXIT_USAGE, "--kernels is a whole number 0..1000 (got %s)",
                         cli_get(&a, "kernels"));
    int64_t nk = (int64_t)nkd;
    bool json = cli_has(&a, "json");
    const char *attach = cli_get(&a, "attach");
    if ((cli_has(&a, "db") || cli_has(&a, "wait")) && !attach)
        return cli_failf("trace", CLI_EXIT_USAGE,
                         "--db and --wait choose the store of --attach RUN; add --attach");
    if (attach && cli_has(&a, "compare"))
        return cli_failf("trace", CLI_EXIT_USAGE,
                         "--attach stores one run's traces: drop "
                         "--compare");
    report_args ra;
    int rc = report_args_build("trace", &a, &ra);
    if (rc != CLI_EXIT_OK)
        return rc;
    ra.in.no_analysis = true;
    mfu_trace_options opt;
    memset(&opt, 0, sizeof opt);
    opt.launched_only = cli_has(&a, "launched-only");
    if (cli_has(&a, "compare")) {
        rc = run_compare(&a, &ra, &opt, (size_t)nk, json);
        report_args_free(&ra);
        return rc;
    }
    size_t nlog = 0;
    for (size_t i = 0; i < a.nocc; i++)
        nlog += strcmp(specs[a.occ_spec[i]].name, "log") == 0;
    if (nlog > 1) {
        report_args_free(&ra);
        return cli_failf("trace", CLI_EXIT_USAGE,
                         "one --log per run (two only with --compare A B)");
    }
    mfu_trace **t = NULL;
    rc = read_traces("trace", a.pos, a.npos, &opt, &t);
    if (rc != CLI_EXIT_OK) {
        report_args_free(&ra);
        return rc;
    }
    const mfu_trace *const *tt = (const mfu_trace *const *)t;
    if (attach) {
        rc = run_attach(&a, attach, t, a.npos, (size_t)nk);
        free_traces(t, a.npos);
        report_args_free(&ra);
        return rc;
    }
    mfu_report *rep = NULL;
    char source[200];
    rc = mfu_report_of(&ra, &a, cli_get(&a, "log"), tt, a.npos, &rep, source, sizeof source);
    mfu_trace_view v;
    mfu_error e;
    memset(&e, 0, sizeof e);
    if (rc == CLI_EXIT_OK && mfu_trace_view_make(tt, a.npos, rep, source, &v, &e) != MFU_OK)
        rc = cli_fail("trace", &e, CLI_EXIT_FAIL);
    if (rc == CLI_EXIT_OK) {
        if (json) {
            json_t *o = mfu__trace_json(&v, (size_t)nk);
            rc = o ? cli_print_json(o) : cli_failf("trace", CLI_EXIT_FAIL, "out of memory");
        } else {
            print_view(&v, (size_t)nk, !cli_has(&a, "no-steps"));
        }
    }
    mfu_report_free(rep);
    free_traces(t, a.npos);
    report_args_free(&ra);
    return rc;
}
