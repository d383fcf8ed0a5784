/*
 * cli/trace_view.h - profiler traces read for a view, shared by `mfu trace` (cmd_trace.c, which
 * implements this) and `mfu report --trace FILE --html PAGE`.
 */
#ifndef MFU_CLI_TRACE_VIEW_H
#define MFU_CLI_TRACE_VIEW_H

#include "cli/cli.h"
#include "mfu/mfu.h"

typedef struct cli_trace_set {
    mfu_trace **traces; /* owned */
    size_t n;
    mfu_trace_view view; /* borrows traces */
    char source[256];    /* where the view's MFU came from */
} cli_trace_set;

/* Read paths[0..n) (errors printed as "mfu CMD: PATH: ...") and make their view with the MFU
 * of report (may be NULL), said to come from source. Returns CLI_EXIT_OK (free *out with
 * cli_trace_set_free), or the exit status of the failure (*out then needs no free). */
int cli_trace_set_read(const char *cmd, const char *const *paths, size_t n,
                       const mfu_report *report, const char *source, cli_trace_set *out);
void cli_trace_set_free(cli_trace_set *s);

#endif
