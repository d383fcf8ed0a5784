/*
 * server/server.h - `mfu serve` as a library object: an HTTP server (libmicrohttpd) over a run
 * store and followed logs, with the dashboard page, a JSON API, server-sent events for live runs,
 * Prometheus exposition and POST ingestion. Internal to mfu (the CLI and the tests use it); the
 * HTTP API it implements is the contract in docs/server-api.md, and its threads, queues, limits
 * and security rules are in docs/internals/server.md.
 *
 * Lifecycle: mfu__server_start() binds, starts the HTTP threads and one follower thread per log,
 * and returns; mfu__server_url() says where it listens; mfu__server_stop() stops every thread,
 * writes what followers still hold into the store and frees everything. The library never
 * prints: diagnostics go to opts.log (one line each, no newline), which may be NULL.
 */
#ifndef MFU_SERVER_H
#define MFU_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mfu/mfu.h"

/* Named limits (docs/internals/server.md). A request over a limit is refused with the status
 * named; the server keeps serving. */
#define MFU_SERVER_MAX_BODY_BYTES (8L * 1024 * 1024) /* POST body; over it: 413 */
#define MFU_SERVER_MAX_PATH_BYTES 1024               /* request path; over it: 414 */
#define MFU_SERVER_CONN_MEMORY_BYTES (64 * 1024)     /* request line + headers; over: 414/431 */
#define MFU_SERVER_MAX_CONNECTIONS 128               /* open connections; more are refused */
#define MFU_SERVER_MAX_CLIENT_CONNECTIONS 32         /* open connections from one address */
#define MFU_SERVER_CONN_TIMEOUT_S 60                 /* idle connection closed after this */
#define MFU_SERVER_HEADER_DEADLINE_S                                                               \
    10                                /* a request line and headers complete within this,          \
                                         from the connection or the previous answer */
#define MFU_SERVER_BODY_DEADLINE_S 60 /* a POST body complete within this of its headers */
#define MFU_SERVER_MAX_SSE_CLIENTS 32 /* open event streams; more: 503 */
#define MFU_SERVER_SSE_QUEUE_BYTES                                                                 \
    (1L * 1024 * 1024)                 /* unsent events of one client; over it                     \
                                         the client is dropped (stream ends) */
#define MFU_SERVER_SSE_PING_S 15       /* ": ping" comment interval */
#define MFU_SERVER_SSE_MAX_STEPS 1000  /* rows in one "steps" event; more: a "run" reset event */
#define MFU_SERVER_POINTS_DEFAULT 2000 /* series max_points when not given */
#define MFU_SERVER_POINTS_LIMIT 20000  /* the largest max_points accepted (default cap) */
#define MFU_SERVER_MAX_FIELDS 8        /* fields of one series request */
#define MFU_SERVER_MAX_LOGS 64         /* followed logs */
#define MFU_SERVER_FOLLOW_POLL_MS 200  /* how often a follower looks at its file */
#define MFU_SERVER_STORE_SYNC_MS                                                                   \
    2000                             /* a followed log is written to the store at most this        \
                                        often (and once more at shutdown) */
#define MFU_SERVER_METRICS_WINDOW 50 /* steps behind each /metrics figure */
#define MFU_SERVER_METRICS_IDLE_S                                                                  \
    900                           /* a live run without new steps for this long leaves             \
                                     /metrics (a finished run stops being a series) */
#define MFU_SERVER_MAX_RANKS 1024 /* ranks tracked per posted run for /metrics */
#define MFU_SERVER_TOKEN_MIN 16   /* shortest accepted --token, bytes */
#define MFU_SERVER_TOKEN_MAX 256  /* longest accepted --token, bytes */
#define MFU_SERVER_LIST_LOAD_ROWS                                                                  \
    100000 /* /api/runs reads runs up to this size to summarise                                    \
              them; larger ones are summarised once opened */

typedef void (*mfu__server_log_fn)(void *ctx, const char *line);

/* What the server needs to know about the model and the hardware to turn tokens/s into MFU
 * (the identity of mfu/estimate.h). Everything is optional: without a model or a peak, MFU
 * and FLOP/s are unknown (null) and tokens/s and step times are still served. */
typedef struct mfu__server_model {
    bool has_model;        /* arch/workload/options below are meaningful */
    mfu_arch arch;         /* as built by the CLI's model options (not resolved) */
    mfu_workload workload; /* seq 0: each run's own seq_len; doc_lengths copied */
    mfu_flops_options options;
    const mfu_device_info *device; /* NULL: none given */
    const char *device_as_given;   /* the --device string (a driver's name joins DCGM) */
    bool dtype_given;
    mfu_dtype dtype;             /* when not given: the run's own dtype, else bf16 */
    double peak_flops_per_s;     /* > 0: --peak-tflops overrides the table; NaN otherwise */
    double devices;              /* --devices (whole job); NaN: the run's world_size, else 1 */
    double local_devices;        /* --local-devices: devices this server speaks for in
                                    /metrics; NaN: all of them */
    int64_t global_batch;        /* --global-batch: sequences per step, whole job; 0: the log's */
    double tokens_per_step;      /* --tokens-per-step, whole job; 0: the log's (wins over
                                    global_batch) */
    double real_tokens_per_step; /* --real-tokens-per-step; 0: every token is real */
} mfu__server_model;

/* Deep copy of src into *dst: doc_lengths and device_as_given are heap copies that
 * mfu__server_model_free() releases. Errors: MFU_E_NOMEM (*dst then needs no free). */
mfu_status mfu__server_model_copy(const mfu__server_model *src, mfu__server_model *dst,
                                  mfu_error *err);
void mfu__server_model_free(mfu__server_model *m);

/* Turns a run's stored context (mfu_store_get_context: a JSON array of command-line
 * arguments) into the model of that run. The CLI provides it: the arguments are its options.
 * On MFU_OK *out is a deep copy (mfu__server_model_copy) the server frees. Called from server
 * threads, one call at a time per run; it must be thread-safe. */
typedef mfu_status (*mfu__server_context_fn)(void *ctx, const char *context_json,
                                             mfu__server_model *out, mfu_error *err);

typedef struct mfu__server_opts {
    const char *db_path;     /* the run store (created when absent); required */
    const char *listen;      /* "HOST:PORT" (IPv4, [IPv6] or localhost); NULL =
                                127.0.0.1:8080; port 0 picks a free port */
    const char *token;       /* bearer token for POST; NULL or "" disables POST. Required
                                (MFU_SERVER_TOKEN_MIN..MAX bytes) beyond loopback */
    const char *const *logs; /* nlogs files to follow like `tail -F` */
    size_t nlogs;
    const char *run_name;    /* run name for a single followed log (NULL: from its name) */
    mfu_ingest_opts ingest;  /* format and --map for followed logs */
    mfu__server_model model; /* for runs without a stored context, and followed logs when any
                                model or device option is given */
    mfu__server_context_fn context_fn; /* NULL: stored contexts are not used */
    void *context_ctx;
    const char *hostname;   /* the "hostname" label; NULL: gethostname() */
    int gpus_per_node;      /* > 0: posted ranks get gpu="rank % N" */
    size_t points_limit;    /* the largest max_points; 0 = MFU_SERVER_POINTS_LIMIT */
    int follow_poll_ms;     /* 0 = MFU_SERVER_FOLLOW_POLL_MS */
    int sse_ping_s;         /* 0 = MFU_SERVER_SSE_PING_S */
    mfu__server_log_fn log; /* diagnostics; NULL drops them */
    void *log_ctx;
    /* Limits against slow and greedy clients (0 = the MFU_SERVER_* default; tests lower them) */
    unsigned max_connections;        /* MFU_SERVER_MAX_CONNECTIONS */
    unsigned max_client_connections; /* MFU_SERVER_MAX_CLIENT_CONNECTIONS */
    int header_deadline_ms;          /* MFU_SERVER_HEADER_DEADLINE_S x 1000 */
    int body_deadline_ms;            /* MFU_SERVER_BODY_DEADLINE_S x 1000 */
} mfu__server_opts;

typedef struct mfu__server mfu__server;

/* Start serving. Errors: MFU_E_INVALID (bad listen address, a token missing beyond loopback
 * or of the wrong length, two logs with one run name, too many logs: field names the flag),
 * MFU_E_IO (the store cannot be opened, the address cannot be bound), MFU_E_NOMEM.
 * *out is NULL on failure. */
mfu_status mfu__server_start(const mfu__server_opts *opts, mfu__server **out, mfu_error *err);

/* "http://HOST:PORT/" the server listens on (owned by s). */
const char *mfu__server_url(const mfu__server *s);

/* The TCP port bound (useful with port 0). */
unsigned mfu__server_port(const mfu__server *s);

/* Whether s listens on a loopback address only (beyond it, GETs are open to whoever reaches
 * the port: only POST needs the token). */
bool mfu__server_loopback(const mfu__server *s);

/* Connections the server closed because a request's headers or body missed its deadline
 * (MFU_SERVER_HEADER_DEADLINE_S, MFU_SERVER_BODY_DEADLINE_S), since start. */
unsigned long mfu__server_deadline_closes(const mfu__server *s);

/* Stop every thread (followers write what they hold into the store first), close the store
 * and free s. NULL is allowed. */
void mfu__server_stop(mfu__server *s);

#endif /* MFU_SERVER_H */
