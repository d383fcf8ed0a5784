/*
 * cmd_convert.c - `mfu convert LOG...`: read training logs of any supported format (auto-
 * detected, or --format) and write the run as mfu's canonical JSON-lines (docs/formats.md)
 * to stdout or -o FILE. Several LOGs are read in order as one run (rotated / resumed logs).
 * A one-line summary goes to stderr: format, steps, lines used / ignored / skipped.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "mfu/ingest.h"
#include "util/util.h"

static const cli_optspec specs[] = {
    {"format", true}, {"map", true}, {"output", true}, {"list-formats", false}, {"quiet", false},
};

static void help(void)
{
    printf("usage: mfu convert LOG... [--format NAME] [--map FIELD=COLUMN] [-o FILE]\n"
           "\n"
           "Read training logs (plain, .gz or .zst; '-' is stdin) and write their steps as\n"
           "canonical JSON-lines: one header object with the run metadata, then one object per\n"
           "step (keys and units: docs/formats.md). Several LOGs form one run, in order.\n"
           "\n"
           "options:\n"
           "  --format NAME        read as this format instead of detecting it\n"
           "                       (mfu convert --list-formats)\n"
           "  --map FIELD=COLUMN   for the jsonl / csv formats: take FIELD from COLUMN (key);\n"
           "                       COLUMN*FACTOR scales it (ms -> s: dt_ms*0.001); repeat or\n"
           "                       separate pairs with commas\n"
           "  -o, --output FILE    write to FILE instead of stdout\n"
           "  --list-formats       list the formats and exit\n"
           "  --quiet              no summary line on stderr\n"
           "\n"
           "examples:\n"
           "  mfu convert train.log > run.jsonl\n"
           "  mfu convert --format megatron logs/part1.log.gz logs/part2.log.gz -o run.jsonl\n"
           "  torchrun ... 2>&1 | tee train.log | mfu convert -\n"
           "  mfu convert metrics.csv --map step=iter,step_time_s=dt_ms*0.001\n"
           "\n"
           "exit status: 0 ok, 1 the log could not be read (the message names file and line),\n"
           "2 bad usage.\n");
}

static int list_formats(void)
{
    for (size_t i = 0; mfu_ingest_format_name(i); i++)
        printf("%-12s %s\n", mfu_ingest_format_name(i), mfu_ingest_format_summary(i));
    return CLI_EXIT_OK;
}

static void summary(const char *files, const mfu_ingest_stats *st)
{
    char extra[200] = "";
    if (st->too_long)
        mfu__appendf(extra, sizeof extra, ", %ld too long", st->too_long);
    if (st->merged)
        mfu__appendf(extra, sizeof extra, ", %ld repeated steps merged", st->merged);
    if (st->truncated_last_line)
        mfu__appendf(extra, sizeof extra, ", last line had no newline");
    fprintf(stderr,
            "mfu convert: %s: %s (%s), %ld steps; lines: %ld used, %ld ignored, %ld skipped%s\n",
            files, st->format, st->detected ? "detected" : "forced", st->steps, st->used,
            st->ignored, st->skipped, extra);
    for (size_t i = 0; i < st->nskip_samples && i < 3; i++)
        fprintf(stderr, "mfu convert:   line %ld: %s\n", st->skip_samples[i].line,
                st->skip_samples[i].reason);
    if (st->note[0]) /* the generic reader's mapping, for --map */
        fprintf(stderr, "mfu convert:   %s\n", st->note);
}

int cmd_convert(int argc, char **argv)
{
    /* -o FILE is the one short option: rewrite it to --output for the shared parser. */
    char **av = calloc((size_t)argc + 1, sizeof *av);
    if (!av)
        return cli_failf("convert", CLI_EXIT_FAIL, "out of memory");
    for (int i = 0; i < argc; i++)
        av[i] = strcmp(argv[i], "-o") == 0 ? (char *)"--output" : argv[i];
    cli_args a;
    bool ok = cli_parse("convert", argc, av, specs, MFU__ARRAY_LEN(specs), &a);
    free(av);
    if (!ok)
        return CLI_EXIT_USAGE;
    if (a.help) {
        help();
        return CLI_EXIT_OK;
    }
    if (cli_has(&a, "list-formats"))
        return list_formats();
    if (a.npos == 0)
        return cli_failf(
            "convert", CLI_EXIT_USAGE,
            "no LOG given; pass a log file or '-' for stdin (see 'mfu convert --help')");

    const char *maps[MFU_INGEST_MAX_MAP];
    size_t nmap = 0;
    for (size_t i = 0; i < a.nocc; i++) {
        if (strcmp(specs[a.occ_spec[i]].name, "map") != 0)
            continue;
        if (nmap == MFU_INGEST_MAX_MAP)
            return cli_failf("convert", CLI_EXIT_USAGE,
                             "--map: at most %d entries; separate pairs with commas",
                             MFU_INGEST_MAX_MAP);
        maps[nmap++] = a.occ_value[i];
    }
    mfu_ingest_opts o;
    memset(&o, 0, sizeof o);
    o.format = cli_get(&a, "format");
    o.map = maps;
    o.nmap = nmap;

    mfu_error e;
    memset(&e, 0, sizeof e);
    mfu_ingest *ing = NULL;
    mfu_status st = mfu_ingest_new(&o, &ing, &e);
    if (st != MFU_OK)
        return cli_fail("convert", &e,
                        st == MFU_E_UNKNOWN || st == MFU_E_INVALID ? CLI_EXIT_USAGE
                                                                   : CLI_EXIT_FAIL);
    for (size_t i = 0; i < a.npos && st == MFU_OK; i++)
        st = mfu_ingest_feed_path(ing, a.pos[i], &e);
    mfu_run *run = NULL;
    if (st == MFU_OK)
        st = mfu_ingest_finish(ing, &run, &e);
    mfu_ingest_stats stats = *mfu_ingest_get_stats(ing);
    mfu_ingest_free(ing);
    if (st != MFU_OK)
        return cli_fail("convert", &e, CLI_EXIT_FAIL);

    const char *path = cli_get(&a, "output");
    FILE *out = stdout;
    if (path && strcmp(path, "-") != 0) {
        out = fopen(path, "w");
        if (!out) {
            mfu_run_free(run);
            return cli_failf("convert", CLI_EXIT_FAIL, "cannot write '%s'; check the path", path);
        }
    }
    st = mfu_run_write_jsonl(run, out, &e);
    if (out != stdout && fclose(out) != 0 && st == MFU_OK)
        st = mfu__fail(&e, MFU_E_IO, 0, "closing '%s' failed; check the disk", path);
    mfu_run_free(run);
    if (st != MFU_OK)
        return cli_fail("convert", &e, CLI_EXIT_FAIL);
    if (!cli_has(&a, "quiet")) {
        char files[256];
        snprintf(files, sizeof files, "%s%s", a.pos[0], a.npos > 1 ? " ..." : "");
        summary(files, &stats);
    }
    return CLI_EXIT_OK;
}
