/*
 * main.c - `mfu`: dispatch to a subcommand. Each subcommand prints its own --help.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "util/util.h"

#ifndef MFU_VERSION
#define MFU_VERSION "0.0.0"
#endif

static int cmd_version(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    printf("mfu %s\n", MFU_VERSION);
    return CLI_EXIT_OK;
}

static const struct {
    const char *name;
    int (*fn)(int, char **);
    const char *summary;
} commands[] = {
    {"version", cmd_version, "print the version of mfu"},
    {"devices", cmd_devices, "the accelerators and their dense peak FLOP/s"},
    {"estimate", cmd_estimate, "MFU, HFU and tokens/s from a model, a device and a throughput"},
    {"flops", cmd_flops, "FLOPs per token of a model, by component and convention"},
    {"convert", cmd_convert, "read training logs, write canonical JSON-lines"},
    {"ingest", cmd_ingest, "read training logs into the run store"},
    {"runs", cmd_runs, "list the runs in the run store"},
    {"rm", cmd_rm, "remove runs from the run store"},
    {"report", cmd_report, "MFU of training logs, checked against the framework's own figures"},
    {"compare", cmd_compare, "before/after of two runs or step ranges, with intervals"},
    {"roofline", cmd_roofline, "matrix shapes, arithmetic intensity and the MFU ceiling"},
    {"watch", cmd_watch, "follow a training log live in the terminal (MFU, tokens/s)"},
    {"serve", cmd_serve, "dashboard, JSON API, live logs and Prometheus metrics over HTTP"},
    {"trace", cmd_trace, "profiler traces: where each step's GPU time and MFU went"},
};

static void usage(FILE *out)
{
    fprintf(out,
            "mfu %s - model FLOPs utilization, measured and explained\n\n"
            "usage: mfu COMMAND [OPTIONS] [ARGS]\n\ncommands:\n",
            MFU_VERSION);
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "\nRun 'mfu COMMAND --help' for a command's options and examples.\n"
                 "Examples:\n"
                 "  mfu flops --model llama3-8b --seq 8192 --convention all\n"
                 "  mfu estimate --model llama3-8b --device h100-sxm --devices 8 \\\n"
                 "      --tokens-per-sec 80000\n"
                 "  mfu devices h100\n");
}

int main(int argc, char **argv)
{
    /* Past a file-size limit (ulimit -f) a write fails with EFBIG and the command says so, instead
     * of the process dying of SIGXFSZ without a word. */
    signal(SIGXFSZ, SIG_IGN);
    if (argc < 2) {
        usage(stderr);
        return CLI_EXIT_USAGE;
    }
    const char *name = argv[1];
    if (strcmp(name, "-h") == 0 || strcmp(name, "--help") == 0 || strcmp(name, "help") == 0) {
        usage(stdout);
        return CLI_EXIT_OK;
    }
    if (strcmp(name, "--version") == 0)
        return cmd_version(argc - 1, argv + 1);
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(name, commands[i].name) == 0)
            return commands[i].fn(argc - 1, argv + 1);
    const char *names[sizeof commands / sizeof commands[0]];
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        names[i] = commands[i].name;
    char near[64];
    if (mfu__did_you_mean(name, names, sizeof names / sizeof names[0], near, sizeof near))
        fprintf(stderr,
                "mfu: unknown command '%s' (did you mean %s? run 'mfu --help' for the list)\n",
                name, near);
    else
        fprintf(stderr, "mfu: unknown command '%s' (run 'mfu --help' for the list)\n", name);
    return CLI_EXIT_USAGE;
}
