/*
 * report/html_trace.h - the profiler-trace section of the HTML report (html_trace.c), which
 * html.c writes for a run that has a trace view (mfu_report_html_run.trace).
 */
#ifndef MFU_REPORT_HTML_TRACE_H
#define MFU_REPORT_HTML_TRACE_H

#include "mfu/trace.h"
#include "report/svg.h"

/* Append the section of view v to b: per rank the GPU window's parts (a stacked bar and a
 * table), the steps of each rank, the missing ranks and the straggler, the MFU waterfall (a
 * chart and its points) or why there is none, and each rank's main matmul kernels with their
 * achieved FLOP/s. Every text from a trace (file and kernel names) is escaped. */
void mfu__html_trace(mfu__rbuf *b, const mfu_trace_view *v);

#endif
