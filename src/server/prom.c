/*
 * prom.c - the Prometheus text exposition format, version 0.0.4 (the rules are summarised in
 * shared/reference/ecosystem.md §A4 from the Prometheus docs, exposition_formats.md).
 *
 *   # HELP name text        text escapes \ and newline
 *   # TYPE name gauge       before the first sample of the family
 *   name{label="value"} 1.5 label values escape \, " and newline; values as Go's ParseFloat
 *                           reads them, NaN, +Inf, -Inf; no timestamps (the scraper stamps)
 *
 * Label values must be valid UTF-8 for Prometheus to accept the scrape: invalid bytes in a run
 * name become U+FFFD here.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/internal.h"

void mfu__prom_family(mfu__sb *b, const char *name, const char *type, const char *help)
{
    mfu__sb_printf(b, "# HELP %s ", name);
    for (const char *p = help; *p; p++) {
        if (*p == '\\')
            mfu__sb_puts(b, "\\\\");
        else if (*p == '\n')
            mfu__sb_puts(b, "\\n");
        else
            mfu__sb_put(b, p, 1);
    }
    mfu__sb_printf(b, "\n# TYPE %s %s\n", name, type);
}

void mfu__prom_escape_label(mfu__sb *b, const char *v)
{
    mfu__sb clean;
    mfu__sb_init(&clean, 0);
    mfu__sb_utf8(&clean, v, strlen(v));
    const char *s = clean.p ? clean.p : "";
    for (const char *p = s; *p; p++) {
        if (*p == '\\')
            mfu__sb_puts(b, "\\\\");
        else if (*p == '"')
            mfu__sb_puts(b, "\\\"");
        else if (*p == '\n')
            mfu__sb_puts(b, "\\n");
        else
            mfu__sb_put(b, p, 1);
    }
    mfu__sb_free(&clean);
}

static void put_value(mfu__sb *b, double v)
{
    if (isnan(v)) {
        mfu__sb_puts(b, "NaN");
        return;
    }
    if (isinf(v)) {
        mfu__sb_puts(b, v > 0 ? "+Inf" : "-Inf");
        return;
    }
    char buf[40];
    mfu__fmt_roundtrip(buf, sizeof buf, v);
    mfu__sb_puts(b, buf);
}

void mfu__prom_sample(mfu__sb *b, const char *name, const mfu__label *labels, size_t nlabels,
                      double value)
{
    mfu__sb_puts(b, name);
    bool open = false;
    for (size_t i = 0; i < nlabels; i++) {
        if (!labels[i].value)
            continue;
        mfu__sb_puts(b, open ? "," : "{");
        open = true;
        mfu__sb_printf(b, "%s=\"", labels[i].name);
        mfu__prom_escape_label(b, labels[i].value);
        mfu__sb_put(b, "\"", 1);
    }
    if (open)
        mfu__sb_put(b, "}", 1);
    mfu__sb_put(b, " ", 1);
    put_value(b, value);
    mfu__sb_put(b, "\n", 1);
}
