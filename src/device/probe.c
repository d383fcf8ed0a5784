/*
 * probe.c - mfu_cpu_probe(): the fp32 and fp64 matrix rate this CPU achieves with gemm.c.
 *
 * Each thread owns its matrices (n = PROBE_N, small enough to stay in its core's caches, so
 * the probe measures the arithmetic units, not memory), fills them, multiplies once to warm
 * up, then waits until every thread is ready; all start together and multiply again and again
 * until their window ends. The rate is the FLOPs of the finished products of all threads over
 * the span from the first start to the last end. Before any timing, the kernel is checked
 * against the naive product on an odd-sized problem that exercises the edge tiles.
 *
 * Threads are not pinned: with one thread per core the scheduler spreads them; a busy machine
 * lowers the rate (it is a measurement, not a peak).
 */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "device/cpu_internal.h"
#include "mfu/device.h"
#include "util/util.h"

#define PROBE_N 128 /* each thread: three n x n matrices and their packed copies */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* 64-byte aligned, zeroed; aligned_alloc wants a size that is a multiple of the alignment. */
static void *alloc_aligned(size_t bytes)
{
    size_t size = (bytes + 63) / 64 * 64;
    void *p = aligned_alloc(64, size ? size : 64);
    if (p)
        memset(p, 0, size ? size : 64);
    return p;
}

/* Deterministic values in [-1, 1): products stay well-conditioned in both precisions. */
static double fill_value(uint32_t *state)
{
    *state = *state * 1664525u + 1013904223u;
    return (double)(*state >> 8) / (double)(1u << 23) - 1.0;
}

static void fill(void *m, size_t count, bool f64, uint32_t *state)
{
    for (size_t i = 0; i < count; i++) {
        double v = fill_value(state);
        if (f64)
            ((double *)m)[i] = v;
        else
            ((float *)m)[i] = (float)v;
    }
}

/* ---- the correctness check ---------------------------------------------------------------- */

/* Max over C of |kernel - naive| / sum_p |a_ip b_pj|: the error relative to the magnitude of
 * the terms, which rounding bounds by about k x epsilon. -1 when out of memory. */
static double check_kernel(mfu__gemm_kernel kernel, bool f64)
{
    enum { M = 37, N = 45, K = 29 }; /* not multiples of any tile: edge tiles everywhere */
    size_t es = f64 ? sizeof(double) : sizeof(float);
    size_t work = mfu__gemm_work_elems(kernel, M, N, K, es);
    void *a = alloc_aligned(M * K * es), *b = alloc_aligned(K * N * es);
    void *c = alloc_aligned(M * N * es), *ref = alloc_aligned(M * N * es);
    void *w = alloc_aligned(work * es);
    double worst = -1;
    if (a && b && c && ref && w) {
        uint32_t s = 12345;
        worst = 0;
        fill(a, M * K, f64, &s);
        fill(b, K * N, f64, &s);
        if (f64) {
            mfu__gemm_f64(kernel, M, N, K, a, K, b, N, c, N, w);
            mfu__gemm_naive_f64(M, N, K, a, K, b, N, ref, N);
        } else {
            mfu__gemm_f32(kernel, M, N, K, a, K, b, N, c, N, w);
            mfu__gemm_naive_f32(M, N, K, a, K, b, N, ref, N);
        }
        for (size_t i = 0; i < M; i++)
            for (size_t j = 0; j < N; j++) {
                double mag = 0, got, want;
                for (size_t p = 0; p < K; p++)
                    mag += f64 ? fabs(((double *)a)[i * K + p] * ((double *)b)[p * N + j])
                               : fabs((double)((float *)a)[i * K + p] *
                                      (double)((float *)b)[p * N + j]);
                got = f64 ? ((double *)c)[i * N + j] : ((float *)c)[i * N + j];
                want = f64 ? ((double *)ref)[i * N + j] : ((float *)ref)[i * N + j];
                double e = mag > 0 ? fabs(got - want) / mag : fabs(got - want);
                if (!(e <= worst)) /* NaN counts as the worst */
                    worst = isnan(e) ? INFINITY : e;
            }
    }
    free(a);
    free(b);
    free(c);
    free(ref);
    free(w);
    return worst;
}

/* ---- the timed part ------------------------------------------------------------------------ */

typedef struct shared {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int ready;  /* threads that finished their setup */
    bool go;    /* every thread may start */
    bool abort; /* stop: a thread could not be started */
    double window_s;
    mfu__gemm_kernel kernel;
    bool f64;
} shared;

typedef struct worker {
    shared *sh;
    pthread_t tid;
    bool started;
    bool nomem;
    double t0, t1;
    int64_t products;
} worker;

static void *work_main(void *arg)
{
    worker *w = arg;
    shared *sh = w->sh;
    const size_t n = PROBE_N;
    size_t es = sh->f64 ? sizeof(double) : sizeof(float);
    size_t nwork = mfu__gemm_work_elems(sh->kernel, n, n, n, es);
    void *a = alloc_aligned(n * n * es), *b = alloc_aligned(n * n * es);
    void *c = alloc_aligned(n * n * es), *ws = alloc_aligned(nwork * es);
    w->nomem = !(a && b && c && ws);
    if (!w->nomem) {
        uint32_t s = 777;
        fill(a, n * n, sh->f64, &s);
        fill(b, n * n, sh->f64, &s);
    }
#define MULTIPLY()                                                                                 \
    (sh->f64 ? mfu__gemm_f64(sh->kernel, n, n, n, a, n, b, n, c, n, ws)                            \
             : mfu__gemm_f32(sh->kernel, n, n, n, a, n, b, n, c, n, ws))
    if (!w->nomem)
        MULTIPLY(); /* warm-up: caches, and the clock leaves its idle state */
    pthread_mutex_lock(&sh->mu);
    sh->ready++;
    pthread_cond_broadcast(&sh->cv);
    while (!sh->go && !sh->abort)
        pthread_cond_wait(&sh->cv, &sh->mu);
    bool run = sh->go && !sh->abort && !w->nomem;
    pthread_mutex_unlock(&sh->mu);
    if (run) {
        w->t0 = now_s();
        double end = w->t0 + sh->window_s;
        double t;
        do {
            MULTIPLY();
            w->products++;
            t = now_s();
        } while (t < end);
        w->t1 = t;
    }
#undef MULTIPLY
    free(a);
    free(b);
    free(c);
    free(ws);
    return NULL;
}

static void rate_clear(mfu_cpu_probe_rate *r)
{
    r->flops_per_s = r->flops = r->seconds = NAN;
    r->products = 0;
    r->peak_flops_per_s = r->ratio = r->max_rel_error = NAN;
}

/* One timed phase with nthreads threads; fills r (but not its peak). */
static mfu_status run_phase(mfu__gemm_kernel kernel, bool f64, int nthreads, double window_s,
                            mfu_cpu_probe_rate *r, mfu_error *err)
{
    worker *ws = calloc((size_t)nthreads, sizeof *ws);
    if (!ws)
        return mfu__fail(err, MFU_E_NOMEM, 0, "out of memory starting the probe's threads");
    shared sh;
    memset(&sh, 0, sizeof sh);
    pthread_mutex_init(&sh.mu, NULL);
    pthread_cond_init(&sh.cv, NULL);
    sh.window_s = window_s;
    sh.kernel = kernel;
    sh.f64 = f64;
    int started = 0;
    for (int i = 0; i < nthreads; i++) {
        ws[i].sh = &sh;
        if (pthread_create(&ws[i].tid, NULL, work_main, &ws[i]) != 0)
            break;
        ws[i].started = true;
        started++;
    }
    pthread_mutex_lock(&sh.mu);
    if (started < nthreads) {
        sh.abort = true;
    } else {
        while (sh.ready < nthreads)
            pthread_cond_wait(&sh.cv, &sh.mu);
        sh.go = true;
    }
    pthread_cond_broadcast(&sh.cv);
    pthread_mutex_unlock(&sh.mu);
    bool nomem = false;
    double t0 = INFINITY, t1 = -INFINITY;
    int64_t products = 0;
    for (int i = 0; i < nthreads; i++) {
        if (!ws[i].started)
            continue;
        pthread_join(ws[i].tid, NULL);
        nomem |= ws[i].nomem;
        if (ws[i].products > 0) {
            t0 = fmin(t0, ws[i].t0);
            t1 = fmax(t1, ws[i].t1);
            products += ws[i].products;
        }
    }
    free(ws);
    pthread_cond_destroy(&sh.cv);
    pthread_mutex_destroy(&sh.mu);
    if (started < nthreads)
        return mfu__fail_field(err, MFU_E_UNSUPPORTED, "--threads",
                               "could start only %d of %d probe threads: give --threads %d or "
                               "fewer",
                               started, nthreads, started > 1 ? started : 1);
    if (nomem)
        return mfu__fail(err, MFU_E_NOMEM, 0, "out of memory for the probe's matrices");
    double n = PROBE_N;
    r->products = products;
    r->flops = 2.0 * n * n * n * (double)products;
    r->seconds = t1 - t0;
    r->flops_per_s = r->seconds > 0 ? r->flops / r->seconds : NAN;
    return MFU_OK;
}

mfu_status mfu_cpu_probe(const mfu_cpu_probe_options *opt, mfu_cpu_probe_result *out,
                         mfu_error *err)
{
    if (out) {
        memset(out, 0, sizeof *out);
        out->kernel = "";
        rate_clear(&out->fp32);
        rate_clear(&out->fp64);
    }
    if (!out)
        return mfu__fail(err, MFU_E_INVALID, 0, "no place for the probe's result");
    mfu_cpu_probe_options o = {0};
    if (opt)
        o = *opt;
    if (o.seconds == 0)
        o.seconds = MFU_CPU_PROBE_SECONDS_DEFAULT;
    if (!(o.seconds >= MFU_CPU_PROBE_SECONDS_MIN && o.seconds <= MFU_CPU_PROBE_SECONDS_MAX))
        return mfu__fail_field(err, MFU_E_LIMIT, "--probe",
                               "the probe runs %g to %g seconds: give --probe SECONDS in that "
                               "range",
                               MFU_CPU_PROBE_SECONDS_MIN, MFU_CPU_PROBE_SECONDS_MAX);
    if (o.threads < 0 || o.threads > MFU_CPU_PROBE_THREADS_MAX)
        return mfu__fail_field(err, MFU_E_LIMIT, "--threads",
                               "the probe runs 1 to %d threads: give --threads N in that range",
                               MFU_CPU_PROBE_THREADS_MAX);

    /* the peak to compare with, and the default thread count: this machine's */
    mfu_cpu_peak own;
    const mfu_cpu_peak *peak = o.peak;
    mfu_cpu_info info;
    /* the machine is read only when the caller's peak and threads do not say it all */
    bool need_info = !peak || (o.threads == 0 && !(peak->cores > 0));
    bool have_info = need_info && mfu_cpu_detect(&info, NULL) == MFU_OK;
    if (!peak && have_info && mfu_cpu_peak_compute(&info, &own, NULL) == MFU_OK)
        peak = &own;
    int threads = o.threads;
    if (threads == 0) {
        threads = peak && peak->cores > 0              ? peak->cores
                  : have_info && info.logical_cpus > 0 ? info.logical_cpus
                                                       : 1;
        if (threads > MFU_CPU_PROBE_THREADS_MAX)
            threads = MFU_CPU_PROBE_THREADS_MAX;
    }

    mfu__gemm_kernel kernel = mfu__gemm_best();
    out->threads = threads;
    out->matrix_n = PROBE_N;
    out->kernel = mfu__gemm_kernel_name(kernel);
    for (int t = 0; t < 2; t++) {
        bool f64 = t == 1;
        mfu_cpu_probe_rate *r = f64 ? &out->fp64 : &out->fp32;
        double e = check_kernel(kernel, f64);
        if (e < 0)
            return mfu__fail(err, MFU_E_NOMEM, 0, "out of memory checking the probe's kernel");
        /* rounding bounds the error by about k (29) x epsilon; 4x that is a wrong kernel */
        double bound = 4 * 29 * (f64 ? 2.2e-16 : 1.2e-7);
        if (!(e <= bound))
            return mfu__fail(err, MFU_E_UNSUPPORTED, 0,
                             "the probe's %s kernel gave wrong %s products (relative error "
                             "%.3g): report it; use --peak-tflops meanwhile",
                             out->kernel, f64 ? "fp64" : "fp32", e);
        mfu_status st = run_phase(kernel, f64, threads, o.seconds / 2, r, err);
        r->max_rel_error = e;
        if (st != MFU_OK) {
            rate_clear(&out->fp32);
            rate_clear(&out->fp64);
            return st;
        }
        mfu_dtype dt = f64 ? MFU_DTYPE_FP64 : MFU_DTYPE_FP32;
        if (peak && peak->dense_flops_per_s[dt] > 0) {
            r->peak_flops_per_s = peak->dense_flops_per_s[dt];
            r->ratio = r->flops_per_s / r->peak_flops_per_s;
        }
    }
    return MFU_OK;
}
