/*
 * ingest.c - ingest throughput of libmfu: read a log through the public ingest API into
 * a run (detect the format, clean every line, parse, normalise, append to the columns) and
 * report steps, MB/s and lines/s. No output is written: this is the extraction alone, the
 * same work the peers of bench/ingest.sh (Python's json / re, jq) do into memory.
 *
 *   mfu-bench-ingest [--format NAME] [--repeat N] [--each] FILE...
 *
 * Each FILE is ingested N times (default 3) in this process; the best wall time counts (the
 * machines are shared and noisy). One line per file on stdout, key=value, for the script:
 *   file=run.jsonl format=jsonl bytes=34912345 lines=200000 steps=200000 best_s=0.0412
 *   mb_per_s=847.3 lines_per_s=4854369 loss_sum=500012.34 best_cpu_s=0.0405
 * loss_sum (sum of the loss column) lets the script check that every tool read the same
 * values. best_cpu_s is the least CPU time (user + system) of one ingest: on a loaded machine
 * it moves less than the wall time, for comparing two builds. Exit status 1 when an ingest fails
 * (the library's message on stderr). --each prints one line per read on stderr: wall, CPU, user
 * and system seconds and page faults (getrusage), to tell the kernel's share from the
 * library's when two reads of the same file differ.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include "mfu/ingest.h"
#include "mfu/run.h"

static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int each_read; /* --each: one line per read on stderr (user, system, faults) */

static double tv_s(struct timeval tv)
{
    return (double)tv.tv_sec + (double)tv.tv_usec * 1e-6;
}

static void usage(FILE *f)
{
    fputs("usage: mfu-bench-ingest [--format NAME] [--repeat N] [--each] FILE...\n"
          "  ingest each FILE N times (default 3) through the public API into a run and print\n"
          "  the best time as file= format= bytes= lines= steps= best_s= mb_per_s=\n"
          "  lines_per_s= loss_sum=; --each: one line per read on stderr (user, system, faults)\n",
          f);
}

/* Ingest path once; on success fill the figures and return 0. */
static int ingest_once(const char *path, const mfu_ingest_opts *o, double *secs, double *cpu,
                       mfu_ingest_stats *stats, double *loss_sum)
{
    mfu_run *run = NULL;
    mfu_error e;
    memset(&e, 0, sizeof e);
    struct rusage u0, u1;
    getrusage(RUSAGE_SELF, &u0);
    double c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
    double t0 = clock_s(CLOCK_MONOTONIC);
    mfu_status st = mfu_ingest_path(path, o, &run, stats, &e);
    double t1 = clock_s(CLOCK_MONOTONIC);
    double c1 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
    getrusage(RUSAGE_SELF, &u1);
    if (each_read)
        fprintf(stderr,
                "read: wall_s=%.6f cpu_s=%.6f user_s=%.6f sys_s=%.6f minflt=%ld majflt=%ld\n",
                t1 - t0, c1 - c0, tv_s(u1.ru_utime) - tv_s(u0.ru_utime),
                tv_s(u1.ru_stime) - tv_s(u0.ru_stime), u1.ru_minflt - u0.ru_minflt,
                u1.ru_majflt - u0.ru_majflt);
    if (st != MFU_OK) {
        fprintf(stderr, "mfu-bench-ingest: %s\n", e.message);
        return 1;
    }
    *secs = t1 - t0;
    *cpu = c1 - c0;
    const double *loss = mfu_run_column(run, MFU_COL_LOSS);
    double sum = 0.0;
    for (size_t i = 0; loss && i < mfu_run_count(run); i++)
        if (!isnan(loss[i]))
            sum += loss[i];
    *loss_sum = sum;
    mfu_run_free(run);
    return 0;
}

int main(int argc, char **argv)
{
    mfu_ingest_opts o;
    memset(&o, 0, sizeof o);
    long repeat = 3;
    int i = 1;
    for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
        if (strcmp(argv[i], "--format") == 0 && i + 1 < argc) {
            o.format = argv[++i];
        } else if (strcmp(argv[i], "--repeat") == 0 && i + 1 < argc) {
            char *end = NULL;
            repeat = strtol(argv[++i], &end, 10);
            if (!end || *end || repeat < 1 || repeat > 100) {
                fputs("mfu-bench-ingest: --repeat takes 1..100\n", stderr);
                return 2;
            }
        } else if (strcmp(argv[i], "--each") == 0) {
            each_read = 1;
        } else if (strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return 0;
        } else {
            usage(stderr);
            return 2;
        }
    }
    if (i >= argc) {
        usage(stderr);
        return 2;
    }
    for (; i < argc; i++) {
        const char *path = argv[i];
        struct stat sb;
        if (stat(path, &sb) != 0) {
            fprintf(stderr, "mfu-bench-ingest: %s: cannot stat; check the path\n", path);
            return 1;
        }
        double best = INFINITY, best_cpu = INFINITY, loss_sum = 0.0;
        mfu_ingest_stats stats;
        memset(&stats, 0, sizeof stats);
        for (long r = 0; r < repeat; r++) {
            double secs, cpu;
            if (ingest_once(path, &o, &secs, &cpu, &stats, &loss_sum) != 0)
                return 1;
            if (secs < best)
                best = secs;
            if (cpu < best_cpu)
                best_cpu = cpu;
        }
        double bytes = (double)sb.st_size;
        printf("file=%s format=%s bytes=%.0f lines=%ld steps=%ld best_s=%.6f mb_per_s=%.1f "
               "lines_per_s=%.0f loss_sum=%.6f best_cpu_s=%.6f\n",
               path, stats.format, bytes, stats.lines, stats.steps, best, bytes / 1e6 / best,
               (double)stats.lines / best, loss_sum, best_cpu);
        fflush(stdout);
    }
    return 0;
}
