/*
 * gen_steps.c - the logs of bench/report_scale.sh: N steps of a JSON-lines metrics log with the
 * 8 fields of bench/peers.py (step, loss, lr, grad_norm, step_time_s, tokens, tokens_per_s,
 * memory_bytes), written fast enough for 10 million steps (Python takes half a minute there).
 *
 *   mfu-bench-gen_steps N clean|shift FILE
 *
 * clean: one level, 2 % multiplicative noise on the step time. shift: the same noise, and the
 * step time alternates between two levels 12 % apart every 2000 steps (the pathological log of
 * the change-point search: many levels, every interval visited). The noise is a fixed-seed
 * xorshift generator, so a log is the same file on every machine. Exit status 2 on bad
 * arguments, 1 when the file cannot be written.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SHIFT_EVERY 2000
#define SHIFT_FACTOR 1.12
#define TOKENS 1048576

static uint64_t rng_state = 0x9e3779b97f4a7c15u;

/* Uniform in [0, 1) (xorshift64*). */
static double uniform(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (double)((rng_state * 2685821657736338717u) >> 11) * 0x1.0p-53;
}

/* Roughly normal, mean 0 and sd 1 (the sum of 4 uniforms, rescaled): noise, not statistics. */
static double noise(void)
{
    double s = uniform() + uniform() + uniform() + uniform();
    return (s - 2.0) * 1.7320508075688772;
}

int main(int argc, char **argv)
{
    if (argc != 4 || (strcmp(argv[2], "clean") != 0 && strcmp(argv[2], "shift") != 0)) {
        fputs("usage: mfu-bench-gen_steps N clean|shift FILE\n", stderr);
        return 2;
    }
    char *end = NULL;
    errno = 0;
    unsigned long long n = strtoull(argv[1], &end, 10);
    if (errno || !end || *end || n == 0) {
        fprintf(stderr, "mfu-bench-gen_steps: N: expected a positive integer, got '%s'\n", argv[1]);
        return 2;
    }
    int shift = strcmp(argv[2], "shift") == 0;
    FILE *f = fopen(argv[3], "w");
    if (!f) {
        fprintf(stderr, "mfu-bench-gen_steps: %s: %s\n", argv[3], strerror(errno));
        return 1;
    }
    static char buf[1 << 20];
    setvbuf(f, buf, _IOFBF, sizeof buf);
    for (unsigned long long i = 1; i <= n; i++) {
        double level = shift && (i / SHIFT_EVERY) % 2 ? SHIFT_FACTOR : 1.0;
        double t = 0.95 * level * (1 + 0.02 * noise());
        fprintf(f,
                "{\"step\": %llu, \"loss\": %.5f, \"lr\": 3.0e-04, \"grad_norm\": %.4f, "
                "\"step_time_s\": %.5f, \"tokens\": %d, \"tokens_per_s\": %.1f, "
                "\"memory_bytes\": 71202000000}\n",
                i, 2 + uniform(), 0.5 + uniform(), t, TOKENS, TOKENS / t);
    }
    if (fclose(f) != 0) {
        fprintf(stderr, "mfu-bench-gen_steps: %s: write failed\n", argv[3]);
        return 1;
    }
    return 0;
}
