/*
 * record_same.c - records N varied steps through the monitor (mfu/monitor.h) into a JSON-lines
 * file, and every record's figures into a second file, so that two builds of the library can
 * be compared byte for byte (bench/record_same.sh builds this program against each libmfu.so
 * and cmp's the outputs).
 *
 *   mfu-bench-record_same OUT.jsonl SAMPLES.txt [N]
 *
 * The steps (fixed seed): plain records (a 17-digit loss, a float32 loss, step times of 1 to 17
 * digits, integral and fractional token counts), NaN and infinite losses, full steps with
 * every field, scopes, ranks, codes in and out of range and the flag bits, repeats of a step
 * (merged: from the same rank, from another rank, a step number that goes back), steps the
 * run refuses (a negative count). Only the public API: the program builds against an older
 * library as it is. Not a test and not timed.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mfu/monitor.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t next(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static double unit(void)
{
    return (double)(next() >> 11) / 9007199254740992.0;
}

static unsigned below(unsigned n)
{
    return (unsigned)(next() % n);
}

/* A double of one of the shapes logs carry. */
static double value(void)
{
    switch (below(8)) {
    case 0: return (double)below(1000000);                                       /* integral */
    case 1: return (double)(float)(unit() * 12.0);                               /* float32 */
    case 2: return unit() * pow(10.0, (double)below(40) - 20.0);                 /* 17 digits */
    case 3: return (double)below(100000) / 1000.0;                               /* short */
    case 4: return ldexp(1.0, (int)below(80) - 40);                              /* powers of 2 */
    case 5: return nextafter(pow(10.0, (double)below(30) - 15.0), 0);            /* 10^k - ulp */
    case 6: return (double)(1000000000000000ull + next() % 9000000000000000ull); /* 16 digits */
    default: return 0.25 + (double)below(7) * 1e-3;
    }
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fputs("usage: mfu-bench-record_same OUT.jsonl SAMPLES.txt [N]\n", stderr);
        return 2;
    }
    char *end = NULL;
    long n = argc > 3 ? strtol(argv[3], &end, 10) : 100000;
    if (argc > 3 && (!end || *end || n < 1)) {
        fputs("mfu-bench-record_same: N must be a number >= 1\n", stderr);
        return 2;
    }
    remove(argv[1]);
    FILE *sf = fopen(argv[2], "w");
    if (!sf)
        return 1;
    mfu_monitor_config c = {0};
    c.model = "llama3-8b";
    c.seq = 8192;
    c.device = "h100-sxm";
    c.devices = 64;
    c.jsonl_path = argv[1];
    mfu_monitor *m;
    mfu_error e = {0};
    if (mfu_monitor_new(&c, &m, &e) != MFU_OK) {
        fprintf(stderr, "mfu-bench-record_same: %s\n", e.message);
        return 1;
    }
    int64_t step = 0;
    long refused = 0;
    for (long i = 0; i < n; i++) {
        mfu_monitor_sample s;
        mfu_status st;
        unsigned kind = below(100);
        if (kind < 60) { /* a plain record */
            double loss = below(50) == 0 ? NAN : below(80) == 0 ? INFINITY : value();
            double tokens = below(4) ? 524288.0 : value() + 1.0;
            st = mfu_monitor_record(m, ++step, tokens, fmod(value(), 1000.0) + 1e-3, loss, &s, &e);
        } else {
            mfu_step t;
            mfu_step_init(&t);
            if (kind < 70 && step > 0)
                t.step = step - (int64_t)below(3); /* a repeat: merged */
            else if (kind < 72 && step > 10)
                t.step = step - 5 - (int64_t)below(5); /* goes back: a restart or a lagging rank */
            else
                t.step = ++step;
            t.tokens = below(3) ? 524288.0 : value() + 1.0;
            t.step_time_s = fmod(value(), 1000.0) + 1e-3;
            if (below(2))
                t.loss = value();
            if (below(3) == 0)
                t.loss = below(2) ? NAN : -INFINITY;
            t.time_s = 1.7e9 + (double)step * 0.25 + (below(2) ? unit() : 0);
            t.samples = below(2) ? 64 : NAN;
            t.lr = below(2) ? value() : -value();
            t.grad_norm = value();
            t.memory_bytes = below(2) ? value() : NAN;
            t.tokens_per_s = below(2) ? value() : NAN;
            t.tokens_per_s_scope = (mfu_scope)below(3);
            t.flops_per_s = below(2) ? value() * 1e12 : NAN;
            t.flops_per_s_scope = (mfu_scope)below(3);
            t.mfu = below(2) ? unit() : NAN;
            t.mfu_scope = (mfu_scope)below(3);
            t.samples_per_s = below(2) ? value() : NAN;
            t.samples_per_s_scope = (mfu_scope)below(3);
            t.flags = (uint32_t)below(16);
            t.rank = below(3) ? (int32_t)below(8) : -1;
            t.seq_len = below(3) ? NAN : (double)(1024 << below(4));
            t.devices = below(3) ? NAN : (double)(1 + below(64));
            t.useful_tokens = below(3) ? NAN : t.tokens * unit();
            t.clock_mhz = below(2) ? 1000 + below(1000) : NAN;
            t.power_w = below(2) ? value() : NAN;
            t.power_limit_w = below(2) ? 700 : NAN;
            t.data_loading_s = below(2) ? value() : NAN;
            t.comm_s = below(2) ? value() : NAN;
            t.optimizer_s = below(2) ? value() : NAN;
            t.recompute = below(3) ? -1 : (int32_t)below(4) * (below(10) ? 1 : 100);
            t.dtype = below(3) ? -1 : (int32_t)below(12) * (below(10) ? 1 : 50);
            t.energy_j = below(2) ? value() : NAN;
            t.tensor_active = below(2) ? unit() : NAN;
            if (below(40) == 0)
                t.tokens_per_s = -1; /* refused: a negative count */
            st = mfu_monitor_step(m, &t, &s, &e);
        }
        if (st != MFU_OK) {
            refused++;
            fprintf(sf, "refused %ld %d\n", i, (int)st);
            continue;
        }
        fprintf(sf, "%lld %a %a %a %a %a %a %a %a\n", (long long)s.step, s.tokens_per_s,
                s.model_flops_per_s_per_device, s.mfu, s.hfu, s.energy_j, s.joules_per_pflop,
                s.tokens_per_kwh, s.tensor_active);
    }
    mfu_run_counts rc = mfu_run_get_counts(mfu_monitor_run(m));
    fprintf(sf, "rows %zu merged %zu rank_obs %zu refused %ld\n", rc.rows, rc.merged, rc.rank_obs,
            refused);
    if (mfu_monitor_flush(m, &e) != MFU_OK) {
        fprintf(stderr, "mfu-bench-record_same: %s\n", e.message);
        return 1;
    }
    mfu_monitor_free(m);
    return fclose(sf) == 0 ? 0 : 1;
}
