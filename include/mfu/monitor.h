/*
 * mfu/monitor.h - MFU inside a training loop. Tell the monitor what each optimizer step did
 * (tokens, wall time, loss); it answers at once with that step's tokens/s, model FLOP/s per
 * device, MFU and HFU, keeps every step as a run (mfu/run.h), gives a full report of the steps
 * so far whenever asked (steady medians, comparisons, findings: mfu/report.h), and can append
 * each step to a canonical JSON-lines file that `mfu watch`, `mfu serve` and `mfu report` read
 * while the job runs.
 *
 *     mfu_monitor_config c = {0};
 *     c.model = "llama3-8b"; c.seq = 8192; c.device = "h100-sxm"; c.devices = 64;
 *     c.jsonl_path = "run.mfu.jsonl";
 *     mfu_monitor *m;  mfu_error e = {0};
 *     if (mfu_monitor_new(&c, &m, &e) != MFU_OK) { fprintf(stderr, "%s\n", e.message); ... }
 *     for (step ...) {
 *         ... train ...
 *         mfu_monitor_sample s;
 *         mfu_monitor_record(m, step, tokens_this_step, seconds_this_step, loss, &s, &e);
 *         printf("MFU %.1f %%\n", 100 * s.mfu);
 *     }
 *     mfu_report *r;  mfu_monitor_report(m, &r, &e);  ...  mfu_report_free(r);
 *     mfu_monitor_free(m);
 *
 * The per-step figures are the ones `mfu report` computes for the same step from the same
 * context (its MFU series), so the two never disagree. A monitor is not thread-safe: call it
 * from the training loop's thread (one monitor per rank; the ranks' files can be served or
 * reported together).
 */
#ifndef MFU_MONITOR_H
#define MFU_MONITOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mfu/common.h"
#include "mfu/model.h"
#include "mfu/report.h"
#include "mfu/run.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What the monitor needs to turn tokens and time into MFU. Zero-initialise, then set what is
 * known: without a model there are no FLOPs (tokens/s only), without a device or peak no MFU.
 * Strings are copied by mfu_monitor_new(). */
typedef struct mfu_monitor_config {
    const char *model;       /* a preset name ("llama3-8b", see `mfu flops --list-presets`) or the
                                path of a Hugging Face config.json; NULL = no model */
    const mfu_arch *arch;    /* instead of model: an architecture (copied); NULL = use model */
    int64_t seq;             /* tokens per sequence; required with a model */
    const char *convention;  /* FLOPs convention (`mfu flops --convention`); NULL = exact */
    const char *recompute;   /* "none" (NULL), "selective", "full": HFU only */
    const char *device;      /* a device of `mfu devices` (id or reported name), or "cpu" for
                                this machine's CPU (`mfu devices cpu`); NULL = none */
    const char *dtype;       /* precision of the matmuls; NULL = bf16 */
    double peak_flops_per_s; /* > 0: dense peak of one device, instead of the device table */
    int64_t devices;         /* devices in the job (all ranks); 0 = 1 */
    const char *jsonl_path;  /* append every step to this canonical JSON-lines file (created
                                when absent, a header object first when empty: the device's
                                id, "h100-sxm" or "cpu", and the peak the monitor divides
                                by, so that `mfu report` and `mfu serve` of the file need no
                                --device); NULL = none */
    const char *name;        /* the run's model description in its metadata; NULL = model */
    /* Appended fields (the struct only grows at its end). */
    bool nvml;             /* true: take each step's clock_mhz, power_w, power_limit_w and
                              energy_j, when the step does not carry them, from an NVML sample
                              of GPU nvml_index at record time (mfu_nvml_*, mfu/device.h), so
                              the report's throttling and power_cap findings and its energy
                              figures work in the loop; energy_j is the increase of the GPU's
                              energy counter since the previous record (none at the first),
                              and tensor_active GPM's tensor-pipe activity over the same
                              interval where the GPU has GPM (Hopper and newer; else NaN).
                              NVML is loaded at run time: no library or driver makes
                              mfu_monitor_new fail with NVML's error. false = no NVML. */
    int nvml_index;        /* NVML's index of this rank's GPU (0-based); with nvml only */
    const char *attention; /* "causal" or "full" (`mfu flops --attention`): how the attention
                              core is counted; NULL = as the convention counts it */
} mfu_monitor_config;

/* The figures of one step. NaN when they cannot be known (no model: no FLOPs or MFU; no
 * device: no MFU; a step time <= 0). */
typedef struct mfu_monitor_sample {
    int64_t step;
    double tokens_per_s;                 /* counted tokens per second, whole job */
    double model_flops_per_s_per_device; /* useful model FLOP/s of one device */
    double mfu;                          /* fraction of the dense peak */
    double hfu;                          /* with recomputation */
    /* Appended fields. Energy beside utilization (src/figures/energy.c), NaN where unknown: */
    double energy_j;         /* one device's energy in the step, J: the step's energy_j (with
                                nvml: the GPU energy counter's increase since the previous
                                record), else its power_w x step time */
    double joules_per_pflop; /* energy_j / (one device's useful model FLOPs / 1e15) */
    double tokens_per_kwh;   /* the step's tokens (whole job) / (energy_j x devices in kWh) */
    double tensor_active;    /* the step's tensor_active: with nvml, NVML GPM's tensor-pipe
                                activity since the previous record (Hopper and newer), 0..1 */
} mfu_monitor_sample;

typedef struct mfu_monitor mfu_monitor;

/* Check the configuration (the model resolves, the device is known and has a peak for the
 * dtype, seq given with a model, the file can be opened for appending) and start a monitor.
 * Errors name the field to fix: MFU_E_INVALID (NULL cfg or out, devices < 0, a negative peak),
 * MFU_E_MISSING (seq with a model), MFU_E_UNKNOWN / MFU_E_AMBIGUOUS (model, device,
 * convention, attention, dtype, recompute), MFU_E_UNSUPPORTED (no peak for the dtype), MFU_E_IO
 * (jsonl_path), MFU_E_NOMEM; with nvml: mfu_nvml_new()'s errors (MFU_E_UNSUPPORTED: no NVML,
 * field "MFU_NVML_LIBRARY" where it applies) and MFU_E_INVALID (field "nvml_index": no such GPU).
 * *out is NULL on failure. */
MFU_API mfu_status mfu_monitor_new(const mfu_monitor_config *cfg, mfu_monitor **out,
                                   mfu_error *err);

/* Close the file (if any), after writing the steps still buffered for it (a failure there is
 * not reported: call mfu_monitor_flush first to know), and free the monitor. NULL is
 * allowed. */
MFU_API void mfu_monitor_free(mfu_monitor *m);

/* Record one step: its number, the tokens it processed (whole job: every rank's), its wall
 * time in seconds and its loss (NaN when not known; a NaN loss is not flagged as a failure:
 * use mfu_monitor_step with MFU_STEP_LOSS_NAN for that). out (may be NULL) gets the step's
 * figures. A repeated step number merges into that step, as in a run. Errors: MFU_E_INVALID
 * (NULL m, tokens or step time not finite and > 0), MFU_E_LIMIT (the run's step limit),
 * MFU_E_IO (the file; with nvml, an NVML sample that failed: the message names the NVML
 * function), MFU_E_NOMEM; the step is not recorded then. */
MFU_API mfu_status mfu_monitor_record(mfu_monitor *m, int64_t step, double tokens,
                                      double step_time_s, double loss, mfu_monitor_sample *out,
                                      mfu_error *err);

/* As mfu_monitor_record for a full step record (useful tokens, per-step sequence length,
 * clocks, timers, flags: mfu/run.h); tokens and step_time_s must be set as above. With nvml,
 * a clock_mhz, power_w, power_limit_w, energy_j or tensor_active the step carries (not NaN) is
 * kept; only the missing ones come from NVML (one sample per step, taken only when one of the
 * first four is missing; one GPM sample when tensor_active is). A step that carries all of
 * the first four leaves the energy counter unread, so the next step gets no energy from it. */
MFU_API mfu_status mfu_monitor_step(mfu_monitor *m, const mfu_step *s, mfu_monitor_sample *out,
                                    mfu_error *err);

/* mfu_monitor_step for steps[0 .. n) in order, out[i] (out may be NULL) getting step i's
 * figures. Returns how many were recorded: n, or at the first step that fails the index of
 * that step, with err set as mfu_monitor_step sets it (the steps before it are recorded; it
 * and those after it are not). NULL m, or NULL steps with n > 0: 0 and MFU_E_INVALID. */
MFU_API size_t mfu_monitor_record_many(mfu_monitor *m, const mfu_step *steps, size_t n,
                                       mfu_monitor_sample *out, mfu_error *err);

/* One mfu_monitor_step whose arguments and results are one block, for a binding whose calls
 * cost per argument (Python's ctypes: about 70 ns an argument, a quarter of a record): the
 * caller fills monitor and step once, then per record rewrites the step and calls
 * mfu_monitor_step_call(&call); sample and error are its out and err. The status is
 * mfu_monitor_step's (MFU_E_INVALID for a NULL call or monitor). */
typedef struct mfu_monitor_call {
    mfu_monitor *monitor;
    mfu_monitor_sample sample; /* out: the step's figures */
    mfu_error error;           /* out: set when the status is not MFU_OK */
    mfu_step step;             /* in: the step to record */
} mfu_monitor_call;

MFU_API mfu_status mfu_monitor_step_call(mfu_monitor_call *call);

/* Writes to jsonl_path are batched: a record appends its row to a buffer in memory, and the
 * buffer goes to the file in one write (whole lines only) when it holds
 * MFU_MONITOR_FLUSH_BYTES or more, at the first record at least the flush interval (default
 * MFU_MONITOR_FLUSH_INTERVAL_S) after the last write, at mfu_monitor_flush() and at
 * mfu_monitor_free(). So a reader of the file (`mfu watch`, `mfu serve`) sees a step within
 * about the interval of the next record, and a process that dies (a crash, SIGKILL) loses the
 * rows still in the buffer: at most those of one interval, or 64 KiB of rows (the steps stay in
 * the monitor's run). */
#define MFU_MONITOR_FLUSH_BYTES (64 * 1024)
#define MFU_MONITOR_FLUSH_INTERVAL_S 1.0

/* Write the buffered rows to the JSON-lines file now (nothing to do without a file or rows).
 * After MFU_OK every step recorded so far is in the file (written to the operating system:
 * not fsync'ed). Errors: MFU_E_INVALID (NULL m), MFU_E_IO (the write failed: those rows are
 * dropped from the buffer, not retried; they stay in the monitor's run). A record that
 * triggers a write reports the same MFU_E_IO (its step is in the run). */
MFU_API mfu_status mfu_monitor_flush(mfu_monitor *m, mfu_error *err);

/* Set the flush interval in seconds (>= 0, finite): 0 writes every step at its record, as one
 * write() per step. Takes effect at the next record. Errors: MFU_E_INVALID (NULL m, or a
 * negative, NaN or infinite interval; field "flush_interval"). */
MFU_API mfu_status mfu_monitor_set_flush_interval(mfu_monitor *m, double seconds, mfu_error *err);

/* The report of every step recorded so far, under the monitor's context (*out: free with
 * mfu_report_free). Errors: MFU_E_INVALID (NULL), MFU_E_EMPTY (no step yet), those of
 * mfu_report_compute(). */
MFU_API mfu_status mfu_monitor_report(const mfu_monitor *m, mfu_report **out, mfu_error *err);

/* The run of the steps recorded so far, owned by the monitor (valid until the next record or
 * free). NULL for NULL. */
MFU_API const mfu_run *mfu_monitor_run(const mfu_monitor *m);

/* Model FLOPs per token and the dense peak of one device the monitor divides by (NaN when it
 * has no model / no device). */
MFU_API double mfu_monitor_model_flops_per_token(const mfu_monitor *m);
MFU_API double mfu_monitor_peak_flops_per_s(const mfu_monitor *m);

/* sizeof of a public struct by name, for bindings that mirror it (python/mfu checks its copies
 * against these, and sizes buffers for those it keeps opaque): "mfu_error", "mfu_step",
 * "mfu_monitor_config", "mfu_monitor_sample", "mfu_report_stat", "mfu_finding",
 * "mfu_device_slot", "mfu_arch", "mfu_energy", "mfu_monitor_call". 0 for any other name or
 * NULL. */
MFU_API size_t mfu_struct_size(const char *name);

#ifdef __cplusplus
}
#endif
#endif /* MFU_MONITOR_H */
