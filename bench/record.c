/*
 * record.c - the cost of recording one step in the training loop (mfu/monitor.h), next to a
 * peer doing the least a logger could: one fprintf of the same JSON line per step into a
 * stdio-buffered file, measured in the same run.
 *
 *   mfu-bench-record [--steps N] [--rounds R] [DIR]
 *
 * Rows, each the median over R rounds (default 5) of N records (default 200000), the rows
 * alternated within each round so that a loaded machine moves them alike:
 *   monitor, no file       mfu_monitor_record(): run append + the step's figures
 *   monitor, jsonl file    the same with jsonl_path (the canonical row written, batched)
 *   monitor, record_many   mfu_monitor_record_many() of 64 steps a call, with the file
 *   fprintf peer           fprintf of {"step":N,"tokens":T,"step_time_s":S,"loss":L}\n per step
 * Times are CPU time (user + system) of the process, which a loaded machine moves less than the
 * wall time. One line per row on stdout: name=... ns_per_record=... (min=... max=...), then
 * the ratios.
 * The files go to DIR (default /tmp) and are removed. Not a test: nothing is asserted.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mfu/monitor.h"

/* CPU time of this process (user + system: the write()s count): on a loaded shared machine
 * it moves much less than the wall time. */
static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

enum { ROW_NOFILE, ROW_FILE, ROW_MANY, ROW_PEER, NROWS };
static const char *const row_name[NROWS] = {"monitor_no_file", "monitor_jsonl_file",
                                            "monitor_record_many_jsonl", "fprintf_peer"};

static double loss_of(long i)
{
    return 2.0 + 1.0 / (1.0 + (double)i * 1e-3);
}

static double time_of(long i)
{
    return 0.25 + (double)(i % 7) * 1e-3;
}

/* ns per record of one row over n steps; -1 when the library fails (message on stderr). */
static double run_row(int row, long n, const char *dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/mfu-bench-record-%ld.jsonl", dir, (long)getpid());
    remove(path);
    double t0 = 0, t1 = 0;
    if (row == ROW_PEER) {
        FILE *f = fopen(path, "a");
        if (!f)
            return -1;
        t0 = now_s();
        for (long i = 0; i < n; i++)
            fprintf(f, "{\"step\":%ld,\"tokens\":%.17g,\"step_time_s\":%.17g,\"loss\":%.17g}\n",
                    i + 1, 524288.0, time_of(i), loss_of(i));
        fclose(f);
        t1 = now_s();
    } else {
        mfu_monitor_config c = {0};
        c.model = "llama3-8b";
        c.seq = 8192;
        c.device = "h100-sxm";
        c.devices = 64;
        if (row != ROW_NOFILE)
            c.jsonl_path = path;
        mfu_monitor *m;
        mfu_error e = {0};
        if (mfu_monitor_new(&c, &m, &e) != MFU_OK) {
            fprintf(stderr, "mfu-bench-record: %s\n", e.message);
            return -1;
        }
        mfu_monitor_sample s;
        t0 = now_s();
        if (row == ROW_MANY) {
            enum { BATCH = 64 };
            mfu_step st[BATCH];
            mfu_monitor_sample out[BATCH];
            for (long i = 0; i < n; i += BATCH) {
                size_t k = 0;
                for (; k < BATCH && i + (long)k < n; k++) {
                    mfu_step_init(&st[k]);
                    st[k].step = i + (long)k + 1;
                    st[k].tokens = 524288.0;
                    st[k].step_time_s = time_of(i + (long)k);
                    st[k].loss = loss_of(i + (long)k);
                }
                if (mfu_monitor_record_many(m, st, k, out, &e) != k) {
                    fprintf(stderr, "mfu-bench-record: %s\n", e.message);
                    mfu_monitor_free(m);
                    return -1;
                }
            }
        } else {
            for (long i = 0; i < n; i++)
                if (mfu_monitor_record(m, i + 1, 524288.0, time_of(i), loss_of(i), &s, &e) !=
                    MFU_OK) {
                    fprintf(stderr, "mfu-bench-record: %s\n", e.message);
                    mfu_monitor_free(m);
                    return -1;
                }
        }
        mfu_monitor_free(m); /* the close flushes the last records: counted */
        t1 = now_s();
    }
    remove(path);
    return (t1 - t0) * 1e9 / (double)n;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    long steps = 200000;
    int rounds = 5;
    const char *dir = "/tmp";
    for (int i = 1; i < argc; i++) {
        if ((strcmp(argv[i], "--steps") == 0 || strcmp(argv[i], "--rounds") == 0) && i + 1 < argc) {
            char *end = NULL;
            long v = strtol(argv[i + 1], &end, 10);
            if (!end || *end) {
                fprintf(stderr, "mfu-bench-record: %s takes a number\n", argv[i]);
                return 2;
            }
            if (strcmp(argv[i], "--steps") == 0)
                steps = v;
            else
                rounds = v > 1000 ? 1001 : (int)v;
            i++;
        } else if (argv[i][0] == '-') {
            fputs("usage: mfu-bench-record [--steps N] [--rounds R] [DIR]\n", stderr);
            return 2;
        } else {
            dir = argv[i];
        }
    }
    if (steps < 1 || rounds < 1 || rounds > 1000) {
        fputs("mfu-bench-record: --steps and --rounds must be >= 1 (rounds <= 1000)\n", stderr);
        return 2;
    }
    static double ns[NROWS][1000];
    for (int r = 0; r < rounds; r++)
        for (int k = 0; k < NROWS; k++) {
            int row = (k + r) % NROWS; /* a different order each round */
            if ((ns[row][r] = run_row(row, steps, dir)) < 0)
                return 1;
        }
    double med[NROWS];
    printf("record benchmark: %ld records per row, %d rounds, median (min - max)\n", steps, rounds);
    for (int k = 0; k < NROWS; k++) {
        qsort(ns[k], (size_t)rounds, sizeof ns[k][0], cmp_double);
        med[k] = rounds % 2 ? ns[k][rounds / 2] : (ns[k][rounds / 2 - 1] + ns[k][rounds / 2]) / 2;
        printf("name=%s ns_per_record=%.1f min=%.1f max=%.1f\n", row_name[k], med[k], ns[k][0],
               ns[k][rounds - 1]);
    }
    printf("ratio: monitor_jsonl_file / fprintf_peer = %.2f; monitor_record_many_jsonl / "
           "fprintf_peer = %.2f (target: monitor with a JSON-lines file < 200 ns)\n",
           med[ROW_FILE] / med[ROW_PEER], med[ROW_MANY] / med[ROW_PEER]);
    return 0;
}
