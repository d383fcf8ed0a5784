/*
 * analysis/json.h - the analysis as JSON (jansson), for `mfu report --json`, `mfu compare`
 * and the HTML report. Internal: the keys are the stable contract described in
 * docs/internals/analysis.md ("JSON"); non-finite numbers become null.
 *
 * Every function returns a new reference (the caller json_decref()s it) or NULL when out of
 * memory.
 */
#ifndef MFU_ANALYSIS_JSON_H
#define MFU_ANALYSIS_JSON_H

#include <jansson.h>

#include "mfu/analysis.h"

/* {"method", "steps", "warmup", "steady", "segments", "decomposition", "findings",
 *  "invariants"} */
json_t *mfu__analysis_json(const mfu_analysis *a);
/* One window's levels: {"first_step", "last_step", "steps", "tokens_per_second": {value, lo,
 * hi}, "mfu", "hfu", "useful_tokens_per_second", "step_time_s", ...}. */
json_t *mfu__level_json(const mfu_level *l);
/* {"from", "to", "sentence", "config_change", "mfu_points", "terms": {"tokens_per_second":
 * {"dln", "pct", "share", "lo_pct", "hi_pct", "direction_certain", "size_known"}, "mfu",
 * "capacity", "flops_per_token", "padding"}} - also what `mfu compare` prints. */
json_t *mfu__decomposition_json(const mfu_decomposition *d);
/* {"kind", "severity", "steps": [first, last], "summary", "evidence": {name: value},
 *  "next_step"} */
json_t *mfu__finding_json(const mfu_finding *f);

#endif
