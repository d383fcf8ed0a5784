/*
 * cli/commands.h - the subcommands of `mfu`. Each lives in its own cmd_NAME.c and is listed in
 * the table in main.c.
 */
#ifndef MFU_COMMANDS_H
#define MFU_COMMANDS_H

int cmd_devices(int argc, char **argv); /* cmd_devices.c: the accelerator table */
/* mfu flops: FLOPs per token of a model under a counting convention (cmd_flops.c) */
int cmd_flops(int argc, char **argv);
/* mfu estimate: MFU/HFU/tokens/s from model, device, throughput (cmd_estimate.c) */
int cmd_estimate(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_ingest(int argc, char **argv); /* cmd_ingest.c: logs -> the run store */
int cmd_runs(int argc, char **argv);   /* cmd_runs.c: list the runs in the store */
int cmd_rm(int argc, char **argv);     /* cmd_rm.c: remove runs from the store */
/* mfu report: MFU of training logs, checked against the framework's own figures */
int cmd_report(int argc, char **argv);
/* mfu compare: before/after of two runs or step ranges, decomposed, with intervals */
int cmd_compare(int argc, char **argv);
/* mfu roofline: matrix shapes, arithmetic intensity, the MFU ceiling (cmd_roofline.c) */
int cmd_roofline(int argc, char **argv);
int cmd_watch(int argc, char **argv); /* cmd_watch.c: follow a log live in the terminal */
int cmd_serve(int argc, char **argv); /* cmd_serve.c: HTTP dashboard, API, /metrics */
int cmd_trace(int argc, char **argv); /* cmd_trace.c: profiler traces, the MFU waterfall */

#endif
