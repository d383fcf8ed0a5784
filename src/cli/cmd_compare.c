/*
 * cmd_compare.c - `mfu compare A B`: the before/after of an infrastructure change. A and B are
 * two logs, or two step ranges of one log (`run.log:1000-2000`). Each side's levels (tokens/s,
 * MFU, step time: the medians of the steady steps, the headline of `mfu report`) come with 95 %
 * intervals; the change from A to B is decomposed into utilization, capacity, workload and
 * padding (mfu_compare) and judged twice: is its direction certain, and is its size known
 * within --size-threshold. The headline figure is MFU when both sides have one, else tokens/s.
 *
 * Units: both sides must count the same thing. A side whose device count is unknown has
 * tokens/s per device only; the other side is then compared per device too (its device count
 * converts it), and the output says so. A side without tokens per step counts steps/s, which no
 * other unit converts to: compare refuses and names the option that gives the tokens.
 *
 * Context flags (model, device, job, log) apply to both sides, as in `mfu report`.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/json.h"
#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/explain_out.h"
#include "cli/report_args.h"
#include "util/util.h"

static const cli_optspec specs[] = {REPORT_ARGS_OPTSPECS, {"json", false}};

static void help(void)
{
    printf("usage: mfu compare A B [MODEL] [DEVICE] [--size-threshold F] [--json]\n\n"
           "The before/after of an infrastructure change. A and B are training logs, or step\n"
           "ranges of one log: LOG:FIRST-LAST (both included; FIRST- or -LAST leave an end\n"
           "open). Warm-up and settling steps are left out of both. For each side: tokens/s,\n"
           "MFU and step time with 95%% intervals; then the change from A to B split into\n"
           "utilization (MFU), capacity (devices x peak), workload (FLOPs per token) and\n"
           "padding, each with its interval, and two verdicts on the headline figure (MFU,\n"
           "else tokens/s): the direction is certain (the interval excludes 0) or not, and the\n"
           "size is known (the interval is narrower than +-F) or not.\n\n"
           "%s%s"
           "Output:\n"
           "  --json                   one JSON object (keys in docs/cli.md)\n\n"
           "Examples:\n"
           "  mfu compare before.log after.log --model llama3-8b --device h100-sxm\n"
           "  mfu compare run.log:1000-2000 run.log:3000-4000 --model gpt2 --device a100 \\\n"
           "      --size-threshold 0.005 --json | jq .verdict\n\n"
           "exit status: 0 ok, 1 a log could not be read or a window has no steady step,\n"
           "2 bad usage.\n",
           MODEL_ARGS_HELP, REPORT_ARGS_HELP);
}

/* One side: a path and a window of step numbers. */
typedef struct side {
    char path[4096];
    bool ranged;
    mfu_window w;
} side;

/* "FIRST-LAST", "FIRST-", "-LAST" (non-negative integers): true and *w. */
static bool parse_range(const char *s, mfu_window *w)
{
    const char *dash = strchr(s, '-');
    if (!dash || strchr(dash + 1, '-'))
        return false;
    w->first_step = INT64_MIN;
    w->last_step = INT64_MAX;
    char a[32], b[32];
    size_t na = (size_t)(dash - s), nb = strlen(dash + 1);
    if ((na == 0 && nb == 0) || na >= sizeof a || nb >= sizeof b)
        return false;
    memcpy(a, s, na);
    a[na] = '\0';
    memcpy(b, dash + 1, nb + 1);
    for (size_t i = 0; i < na; i++)
        if (a[i] < '0' || a[i] > '9')
            return false;
    for (size_t i = 0; i < nb; i++)
        if (b[i] < '0' || b[i] > '9')
            return false;
    int64_t v;
    if (na) {
        if (!mfu__parse_int64(a, &v))
            return false;
        w->first_step = v;
    }
    if (nb) {
        if (!mfu__parse_int64(b, &v))
            return false;
        w->last_step = v;
    }
    return w->first_step <= w->last_step;
}

/* PATH or PATH:RANGE. A path that exists as given is a path, colon or not. */
static int parse_side(const char *arg, side *out)
{
    memset(out, 0, sizeof *out);
    out->w.first_step = INT64_MIN;
    out->w.last_step = INT64_MAX;
    if (strlen(arg) >= sizeof out->path)
        return cli_failf("compare", CLI_EXIT_USAGE, "'%.40s...': the path is too long", arg);
    mfu__strlcpy(out->path, arg, sizeof out->path);
    const char *colon = strrchr(arg, ':');
    if (!colon || access(arg, F_OK) == 0 || strcmp(arg, "-") == 0)
        return CLI_EXIT_OK;
    mfu_window w;
    if (!parse_range(colon + 1, &w))
        return access(arg, F_OK) == 0 || !strpbrk(colon + 1, "0123456789")
                   ? CLI_EXIT_OK
                   : cli_failf("compare", CLI_EXIT_USAGE,
                               "'%s': the range after ':' must be FIRST-LAST, FIRST- or -LAST "
                               "(step numbers, FIRST <= LAST)",
                               arg);
    out->path[colon - arg] = '\0';
    out->ranged = true;
    out->w = w;
    return CLI_EXIT_OK;
}

static void window_words(char *buf, size_t n, const side *s)
{
    if (!s->ranged)
        snprintf(buf, n, "all steps");
    else if (s->w.first_step == INT64_MIN)
        snprintf(buf, n, "steps up to %lld", (long long)s->w.last_step);
    else if (s->w.last_step == INT64_MAX)
        snprintf(buf, n, "steps from %lld", (long long)s->w.first_step);
    else
        snprintf(buf, n, "steps %lld-%lld", (long long)s->w.first_step, (long long)s->w.last_step);
}

/* The headline figure of d: MFU when both sides have one, else tokens/s. */
static mfu_term headline(const mfu_decomposition *d)
{
    return isfinite(d->term[MFU_TERM_MFU].dln) ? MFU_TERM_MFU : MFU_TERM_TOKENS_PER_S;
}

static const char *direction(const mfu_term_change *c)
{
    if (!c->direction_certain)
        return "uncertain";
    return c->pct > 0 ? "up" : c->pct < 0 ? "down" : "unchanged";
}

/* "tokens/s (whole job)", "tokens/s per device", "steps/s" for a report's analysis unit. */
static const char *unit_label(const char *unit)
{
    if (!unit || strcmp(unit, "tokens") == 0)
        return "tokens/s (whole job)";
    return strcmp(unit, "steps") == 0 ? "steps/s (no tokens per step)" : "tokens/s per device";
}

static void print_text(const side *sa, const side *sb, const mfu_decomposition *d, double threshold,
                       const char *unit, const char *note)
{
    char w[96], lev[320];
    const mfu_level *L[2] = {&d->from, &d->to};
    const side *S[2] = {sa, sb};
    printf("throughput in %s; figures are the medians of the steady steps\n", unit_label(unit));
    if (note && note[0])
        printf("%s\n", note);
    for (int k = 0; k < 2; k++) {
        window_words(w, sizeof w, S[k]);
        explain_out_level(lev, sizeof lev, L[k], unit);
        printf("%c  %s, %s: %zu steady steps (%lld-%lld), %s; median step %.4g s\n", "AB"[k],
               S[k] -> path, w, L[k] -> steps, (long long)L[k] -> first_step,
               (long long)L[k] -> last_step, lev, L[k] -> step_time_s.value);
    }
    printf("\nB vs A: %s\n", d->sentence);
    explain_out_terms(stdout, d, "  ");
    mfu_term h = headline(d);
    const mfu_term_change *c = &d->term[h];
    const char *name = h == MFU_TERM_MFU                    ? "MFU"
                       : unit && strcmp(unit, "steps") == 0 ? "steps/s"
                                                            : "tokens/s";
    printf("\n%s ", name);
    if (h == MFU_TERM_MFU)
        printf("%.2f%% -> %.2f%% (%+.2f points), ", 100 * d->from.mfu.value, 100 * d->to.mfu.value,
               100 * d->mfu_points);
    printf("change %+.2f%%", 100 * c->pct);
    if (isfinite(c->lo_pct))
        printf(" [%+.2f%%, %+.2f%%]", 100 * c->lo_pct, 100 * c->hi_pct);
    printf("\n");
    if (!isfinite(c->lo_pct)) {
        printf("verdict: none (no intervals: --no-intervals)\n");
        return;
    }
    double half = (c->hi_pct - c->lo_pct) / 2;
    if (c->direction_certain)
        printf("direction: certain, %s %s (the 95%% interval excludes 0)\n", name,
               c->pct > 0 ? "went up" : "went down");
    else
        printf("direction: not certain (the 95%% interval includes 0: within the noise)\n");
    if (c->size_known)
        printf("size: known (the change is known to +-%.2f%%, within the +-%.2g%% threshold)\n",
               100 * half, 100 * threshold);
    else
        printf("size: not known well enough (the change is known to +-%.2f%%, above the "
               "+-%.2g%% threshold): compare longer windows\n",
               100 * half, 100 * threshold);
}

static json_t *side_json(const side *s, const mfu_level *l)
{
    json_t *o = json_object();
    json_t *path = cli_json_str(s->path); /* NULL for a path that is not UTF-8 */
    cli_json_set(o, "file", path ? path : json_null());
    json_t *w = json_null();
    if (s->ranged) {
        w = json_object();
        cli_json_set(w, "first_step",
                     s->w.first_step == INT64_MIN ? json_null() : json_integer(s->w.first_step));
        cli_json_set(w, "last_step",
                     s->w.last_step == INT64_MAX ? json_null() : json_integer(s->w.last_step));
    }
    cli_json_set(o, "window", w);
    cli_json_set(o, "level", mfu__level_json(l));
    return o;
}

static int print_json(const side *sa, const side *sb, const mfu_decomposition *d, double threshold,
                      const char *unit, const char *note)
{
    json_t *o = json_object();
    if (!o)
        return cli_failf("compare", CLI_EXIT_FAIL, "out of memory building JSON output");
    cli_json_set(o, "unit", cli_json_str(unit ? unit : "tokens"));
    cli_json_set(o, "unit_note", note && note[0] ? cli_json_str(note) : json_null());
    cli_json_set(o, "a", side_json(sa, &d->from));
    cli_json_set(o, "b", side_json(sb, &d->to));
    json_t *dj = mfu__decomposition_json(d);
    if (dj) { /* the levels are under a and b */
        json_object_del(dj, "from");
        json_object_del(dj, "to");
    }
    cli_json_set(o, "decomposition", dj ? dj : json_null());
    mfu_term h = headline(d);
    const mfu_term_change *c = &d->term[h];
    json_t *v = json_object();
    cli_json_set(v, "figure", cli_json_str(mfu_term_name(h)));
    cli_json_set(v, "change_pct", cli_json_num(c->pct));
    cli_json_set(v, "lo_pct", cli_json_num(c->lo_pct));
    cli_json_set(v, "hi_pct", cli_json_num(c->hi_pct));
    cli_json_set(v, "half_width_pct", cli_json_num((c->hi_pct - c->lo_pct) / 2));
    cli_json_set(v, "direction_certain", json_boolean(c->direction_certain));
    cli_json_set(v, "direction", cli_json_str(direction(c)));
    cli_json_set(v, "size_known", json_boolean(c->size_known));
    cli_json_set(v, "size_threshold", cli_json_num(threshold));
    cli_json_set(o, "verdict", v);
    cli_json_set(o, "mfu_points", cli_json_num(d->mfu_points));
    return cli_print_json(o);
}

int cmd_compare(int argc, char **argv)
{
    cli_args a;
    if (!cli_parse("compare", argc, argv, specs, MFU__ARRAY_LEN(specs), &a))
        return CLI_EXIT_USAGE;
    if (a.help) {
        help();
        return CLI_EXIT_OK;
    }
    if (a.npos != 2)
        return cli_failf("compare", CLI_EXIT_USAGE,
                         "give two runs: A B (logs, or LOG:FIRST-LAST step ranges; see 'mfu "
                         "compare --help')");
    side *sides = calloc(2, sizeof *sides);
    if (!sides)
        return cli_failf("compare", CLI_EXIT_FAIL, "out of memory");
    int rc = parse_side(a.pos[0], &sides[0]);
    if (rc == CLI_EXIT_OK)
        rc = parse_side(a.pos[1], &sides[1]);
    if (rc == CLI_EXIT_OK && strcmp(sides[0].path, "-") == 0 && strcmp(sides[1].path, "-") == 0 &&
        !(sides[0].ranged && sides[1].ranged))
        rc = cli_failf("compare", CLI_EXIT_USAGE,
                       "stdin can be read once: give both sides as ranges of it (-:1-100 "
                       "-:101-200) or name files");
    if (rc != CLI_EXIT_OK) {
        free(sides);
        return rc;
    }
    report_args ra;
    rc = report_args_build("compare", &a, &ra);
    if (rc != CLI_EXIT_OK) {
        free(sides);
        return rc;
    }
    mfu_report *ra_rep = NULL, *rb_rep = NULL;
    mfu_run *runs[2] = {NULL, NULL};
    bool same = strcmp(sides[0].path, sides[1].path) == 0;
    rc = report_args_read("compare", &ra, sides[0].path, &runs[0], NULL, NULL);
    if (rc == CLI_EXIT_OK)
        rc = report_args_report("compare", &ra, sides[0].path, runs[0], false, &ra_rep);
    if (rc == CLI_EXIT_OK && !same)
        rc = report_args_read("compare", &ra, sides[1].path, &runs[1], NULL, NULL);
    if (rc == CLI_EXIT_OK && !same)
        rc = report_args_report("compare", &ra, sides[1].path, runs[1], false, &rb_rep);
    const mfu_analysis *an_a = ra_rep ? mfu_report_analysis(ra_rep) : NULL;
    const mfu_analysis *an_b = same ? an_a : rb_rep ? mfu_report_analysis(rb_rep) : NULL;
    if (rc == CLI_EXIT_OK && (!an_a || !an_b))
        rc = cli_failf("compare", CLI_EXIT_FAIL,
                       "%s: no step has a throughput; give --tokens-per-step or check the log",
                       !an_a ? sides[0].path : sides[1].path);
    /* one unit for both sides: convert a whole-job side to per device, refuse steps/s */
    const char *unit = an_a ? mfu_report_analysis_unit(ra_rep) : NULL;
    char note[400] = "";
    if (rc == CLI_EXIT_OK && !same) {
        const char *ua = mfu_report_analysis_unit(ra_rep), *ub = mfu_report_analysis_unit(rb_rep);
        if (strcmp(ua, ub) != 0) {
            bool a_steps = strcmp(ua, "steps") == 0, b_steps = strcmp(ub, "steps") == 0;
            if (a_steps || b_steps) {
                rc = cli_failf("compare", CLI_EXIT_FAIL,
                               "%s counts steps/s only (no tokens per step) while %s counts "
                               "%s: they cannot be compared; give its tokens with "
                               "--tokens-per-step N or --global-batch N --seq N",
                               sides[a_steps ? 0 : 1].path, sides[a_steps ? 1 : 0].path,
                               a_steps ? ub : ua);
            } else {
                /* one side is per device (its device count unknown): the other side, whole
                 * job, is compared per device when its device count is known */
                int whole = strcmp(ua, "tokens") == 0 ? 0 : 1;
                mfu_report **rep = whole == 0 ? &ra_rep : &rb_rep;
                double wdev = mfu_report_get_context(*rep)->devices;
                mfu_report *per = NULL;
                if (!(isfinite(wdev) && wdev > 0))
                    rc = cli_failf("compare", CLI_EXIT_FAIL,
                                   "%s counts tokens/s per device and %s tokens/s of the whole "
                                   "job, with no device count for either: they cannot be "
                                   "compared; give --devices N (the job's devices)",
                                   sides[1 - whole].path, sides[whole].path);
                else
                    rc = report_args_report("compare", &ra, sides[whole].path, runs[whole], true,
                                            &per);
                if (rc == CLI_EXIT_OK) {
                    mfu_report_free(*rep);
                    *rep = per;
                    an_a = mfu_report_analysis(ra_rep);
                    an_b = mfu_report_analysis(rb_rep);
                    unit = "tokens per device";
                    snprintf(note, sizeof note,
                             "compared per device: %.100s has no device count (give --devices N "
                             "for whole-job figures); %.100s's tokens/s are divided by its %.0f "
                             "devices",
                             sides[1 - whole].path, sides[whole].path,
                             mfu_report_get_context(per)->devices);
                }
            }
        }
    }
    if (rc == CLI_EXIT_OK) {
        mfu_decomposition d;
        mfu_error e;
        memset(&e, 0, sizeof e);
        snprintf(ra.analysis.rate_name, sizeof ra.analysis.rate_name, "%s", explain_out_rate(unit));
        mfu_status st = mfu_compare(an_a, sides[0].w, an_b, sides[1].w, &ra.analysis, &d, &e);
        if (st == MFU_E_EMPTY) {
            /* which side: the one without a steady step in its window */
            mfu_level l;
            bool a_empty =
                mfu_analysis_window_level(an_a, sides[0].w, &ra.analysis, &l, NULL) != MFU_OK;
            char w[96];
            window_words(w, sizeof w, &sides[a_empty ? 0 : 1]);
            rc = cli_failf("compare", CLI_EXIT_FAIL,
                           "%s: no steady step in %s (warm-up and settling steps are left out); "
                           "give another range",
                           sides[a_empty ? 0 : 1].path, w);
        } else if (st != MFU_OK) {
            rc = cli_fail("compare", &e, CLI_EXIT_FAIL);
        } else if (cli_has(&a, "json")) {
            rc = print_json(&sides[0], &sides[1], &d, ra.analysis.size_threshold, unit, note);
        } else {
            print_text(&sides[0], &sides[1], &d, ra.analysis.size_threshold, unit, note);
        }
    }
    mfu_report_free(ra_rep);
    mfu_report_free(rb_rep);
    mfu_run_free(runs[0]);
    mfu_run_free(runs[1]);
    report_args_free(&ra);
    free(sides);
    return rc;
}
