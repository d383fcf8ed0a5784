/*
 * trace/internal.h - what the files of src/trace share (not for other modules: what they use,
 * json.c's builder of a view's JSON, is in trace/trace.h).
 *
 *   jtok.c      a push tokenizer of JSON: bytes in any pieces -> tokens, strict grammar,
 *               bounded memory (strings cut at MFU_TRACE_MAX_STRING), line and column
 *   read.c      Kineto events -> steps, launches, activities (the compact records); the
 *               attribution of activities to steps
 *   breakdown.c one step's activities -> its disjoint parts (a sweep over start/end points)
 *   classify.c  kernel classes by name; FLOPs of a matmul op from its "Input Dims"
 *   set.c       ranks of a set, the straggler, the run of the steps, the waterfall
 *   json.c      the JSON of a set (mfu trace --json, the store, the dashboard)
 */
#ifndef MFU_TRACE_INTERNAL_H
#define MFU_TRACE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "mfu/trace.h"
#include "trace/trace.h"
#include "util/util.h"

/* ---- jtok.c: the tokenizer ---------------------------------------------------------------- */

typedef enum mfu__jt_kind {
    MFU__JT_OBJ = 0, /* { */
    MFU__JT_END_OBJ, /* } */
    MFU__JT_ARR,     /* [ */
    MFU__JT_END_ARR, /* ] */
    MFU__JT_KEY,     /* an object key (text unescaped) */
    MFU__JT_STR,     /* a string value (text unescaped) */
    MFU__JT_NUM,     /* a number as written (also NaN, Infinity, -Infinity, as Python writes) */
    MFU__JT_TRUE,
    MFU__JT_FALSE,
    MFU__JT_NULL
} mfu__jt_kind;

/* One token. text is valid during the callback only (NUL-terminated); depth is the number of
 * containers open around the token ({ and [ tokens: before they open; } and ]: after they
 * close), so the top-level value is at depth 0. */
typedef struct mfu__jt {
    mfu__jt_kind kind;
    const char *text;
    size_t len;
    int depth;
    bool cut;       /* a string longer than MFU_TRACE_MAX_STRING: text is its first bytes */
    long line, col; /* where the token starts (1-based) */
} mfu__jt;

/* The consumer: MFU_OK to go on; any other status stops the tokenizer, which returns it (the
 * consumer has filled err). */
typedef mfu_status (*mfu__jt_fn)(void *ctx, const mfu__jt *t, mfu_error *err);

/* Bytes of the longest number or literal accepted. */
#define MFU__JT_MAX_WORD 128

typedef struct mfu__jtok {
    mfu__jt_fn fn;
    void *ctx;
    int depth;
    unsigned char stack[MFU_TRACE_MAX_DEPTH]; /* 'o' object, 'a' array */
    int expect;                               /* what the grammar wants next (jtok.c) */
    int lex;                                  /* inside a string, a word, or neither */
    bool key;                                 /* the string is an object key */
    int esc;                                  /* escape state inside a string */
    uint32_t u, hi;                           /* \uXXXX being read; a pending high surrogate */
    char *buf;                                /* the string or word (MFU_TRACE_MAX_STRING + 8) */
    size_t len;
    bool cut;
    long line, col;   /* position of the next byte (1-based) */
    long tline, tcol; /* where the current token started */
    size_t offset;    /* bytes consumed */
    bool done;        /* the top-level value is complete */
    bool started;     /* a value began */
} mfu__jtok;

/* Start a tokenizer that calls fn(ctx, ...) for every token. false when out of memory. */
bool mfu__jtok_init(mfu__jtok *j, mfu__jt_fn fn, void *ctx);
void mfu__jtok_free(mfu__jtok *j);
/* Feed the next n bytes. MFU_E_PARSE (err: line, column, what was expected) on bad JSON;
 * the consumer's status when it stopped. */
mfu_status mfu__jtok_feed(mfu__jtok *j, const char *p, size_t n, mfu_error *err);
/* The input ended: MFU_E_PARSE when the document is incomplete (truncated) or empty. */
mfu_status mfu__jtok_end(mfu__jtok *j, mfu_error *err);
/* Bytes the tokenizer holds. */
size_t mfu__jtok_bytes(const mfu__jtok *j);

/* The largest |time| in microseconds a trace may give (4e15 us, 127 years): any start plus any
 * duration, and any difference of two, stays inside int64 nanoseconds. */
#define MFU__JT_MAX_US 4000000000000000LL

/* A JSON number token as an integer of nanoseconds when it counts microseconds (Chrome trace
 * "ts" and "dur": "1712195495519689.047" -> 1712195495519689047): exact for up to 3 decimals,
 * rounded beyond; false for non-numbers, NaN, infinities and values past MFU__JT_MAX_US. */
bool mfu__jt_us_to_ns(const char *text, int64_t *out);
/* A JSON number token (or a string of digits, as some traces write ids) as int64; false
 * otherwise. Hex strings "0x1f" are read too (stream handles). */
bool mfu__jt_int(const char *text, int64_t *out);

/* ---- classify.c --------------------------------------------------------------------------- */

/* FLOPs of one call of a matmul op from its input dimensions (dims[i][0..ndim[i]) of input i,
 * n inputs): aten::mm, aten::_scaled_mm ([m,k] x [k,n] -> 2mkn), aten::addmm (bias, [m,k],
 * [k,n]), aten::bmm ([b,m,k] x [b,k,n] -> 2bmkn), aten::baddbmm (bias, A, B). NaN for any
 * other op or shapes that do not fit. */
#define MFU__TRACE_DIMS_INPUTS 4
#define MFU__TRACE_DIMS_RANK 6
double mfu__trace_matmul_flops(const char *op, const int64_t dims[][MFU__TRACE_DIMS_RANK],
                               const int ndim[], int n);
/* True for the names of those ops. */
bool mfu__trace_is_matmul_op(const char *op);

/* ---- breakdown.c -------------------------------------------------------------------------- */

/* One activity as the timeline sees it. */
typedef struct mfu__tspan {
    int64_t start_ns, end_ns;
    uint8_t cls; /* mfu_trace_class */
} mfu__tspan;

/* A start or end point of the sweep. */
typedef struct mfu__sweep_pt {
    int64_t t;
    int32_t cls;
    int32_t delta;
} mfu__sweep_pt;

/* An interval of the timeline in which one part holds (mfu_trace_part). */
typedef struct mfu__seg {
    int64_t t0, t1;
    uint8_t part;
    bool overlapped; /* communication runs under the compute of this interval */
} mfu__seg;

/* The timeline of the activities s[0..n): segments (at most 2n) into seg, in time order,
 * tiling [first start, last end]; returns how many. pt holds 2n points (scratch). */
size_t mfu__trace_timeline(const mfu__tspan *s, size_t n, mfu__sweep_pt *pt, mfu__seg *seg);
/* The parts of the window [lo, hi) of the timeline g[0..n) into *out (what lies outside the
 * timeline is idle). The parts sum to hi - lo exactly before they become seconds. */
void mfu__trace_window(const mfu__seg *g, size_t n, int64_t lo, int64_t hi,
                       mfu_trace_breakdown *out);
/* a += b, part by part. */
void mfu__trace_add(mfu_trace_breakdown *a, const mfu_trace_breakdown *b);

/* ---- json.c ------------------------------------------------------------------------------- */

/* mfu__trace_json, the whole view: trace/trace.h. */
/* The breakdown as {"span_s", "compute_s", parts..., "communication_overlapped_s"}. */
json_t *mfu__trace_breakdown_json(const mfu_trace_breakdown *b);
/* The waterfall as {"mfu", "peak", "lost": {...}, "points": [...]} (in order). */
json_t *mfu__trace_waterfall_json(const mfu_trace_waterfall *w, const char *mfu_source);

#endif /* MFU_TRACE_INTERNAL_H */
