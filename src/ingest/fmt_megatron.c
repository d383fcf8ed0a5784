/*
 * fmt_megatron.c - NVIDIA Megatron-LM and microsoft Megatron-DeepSpeed training logs
 * (log-formats.md §2).
 *
 * Step line (after the cleaner removed the optional " [timestamp]"):
 *   iteration   20/ 500000 | consumed samples: 20480 | elapsed time per iteration (ms): 14351.0 |
 *   throughput per GPU (TFLOP/s/GPU): 793.1 | learning rate: 6.976744E-07 | global batch size:
 *   1024 | lm loss: 1.062389E+01 | loss scale: 262144.0 | grad norm: 46.226 | number of skipped
 *   iterations: 5 | number of nan iterations: 0 |
 * One line covers a log interval: the time is per iteration, averaged over the interval, and
 * the record's step is the last iteration of it. Megatron-DeepSpeed adds "consumed tokens",
 * "actual seqlen", "samples per second", "tokens per gpu per second (tgs)" and "TFLOPs" (per
 * GPU, counting activation recompute). Both TFLOP/s figures are per GPU.
 *
 * Side lines: the argument dump ("  seq_length ........ 4096" between the "arguments" rulers)
 * gives seq_length, world_size, global/micro batch, precision and the model shape; "using
 * world size: N" and "Total number of parameters in billions: X" too; the memory report
 * "[Rank 0] (after N iterations) memory (MB) | ... | max reserved: M" attaches its peak to
 * step N when that row is the last one. Timer lines ("time (ms) | name: v | ..." in 2022, the
 * "(min, max) time across ranks (ms):" block of "name ....: (min, max)" lines since 2023; per
 * iteration, averaged over the interval, printed after the iteration line) attach to the last
 * row: batch-generator -> data_loading_s, optimizer -> optimizer_s, backward-reduce-model-grads
 * (2022) or all-grads-sync -> comm_s; the block's max across ranks is taken. Also per step:
 * "power per GPU (W/GPU)" (--log-energy) -> power_w, "energy per GPU (J/iter/GPU)" -> energy_j,
 * Megatron-DeepSpeed "actual seqlen" -> seq_len.
 */
#include <math.h>
#include <string.h>

#include "ingest/fast.h"
#include "ingest/format.h"

/* The shape of the last step line (see piece_matches). */
#define MEG_SHAPE_PIECES 32
typedef struct megatron_shape {
    size_t n;                           /* pieces */
    uint16_t off[MEG_SHAPE_PIECES + 1]; /* piece i is text[off[i]..off[i + 1]) */
    uint8_t id[MEG_SHAPE_PIECES];       /* its key (step_key) */
    bool kbar[MEG_SHAPE_PIECES];        /* its key holds a '|' */
    char text[1024];
} megatron_shape;

typedef struct megatron_state {
    megatron_shape shape;
    mfu_step blank; /* mfu_step_init's step, copied per line (cheaper) */
    bool in_args;   /* inside the argument dump */
    bool in_timers; /* inside a "(min, max) time across ranks" block */
    int64_t layers, hidden, heads, ffn;
    bool deepspeed_seen; /* a Megatron-DeepSpeed field was seen */
} megatron_state;

/* "iteration  N/ M |" at the start: returns true, the iteration number and the first '|'
 * (iter and bar may be NULL). */
static bool step_head(mfu__span s, int64_t *iter, const char **bar)
{
    if (!mfu__span_starts(s, "iteration "))
        return false;
    mfu__span r = {s.p + 10, s.n - 10};
    /* the usual "   1234/": blanks, digits, the slash; what the general way below reads */
    size_t i = 0;
    while (i < r.n && r.p[i] == ' ')
        i++;
    size_t d0 = i;
    int64_t n = 0;
    for (; i < r.n && i - d0 < 16 && (unsigned)(r.p[i] - '0') < 10; i++)
        n = n * 10 + (r.p[i] - '0');
    if (i > d0 && i - d0 <= 15 && i < r.n && r.p[i] == '/') {
        /* no '|' before the slash: the first '|' is after it */
        const char *b = memchr(r.p + i, '|', r.n - i);
        if (!b)
            return false;
        if (iter)
            *iter = n;
        if (bar)
            *bar = b;
        return true;
    }
    long slash = mfu__span_find(r, "/");
    long b = mfu__span_find(r, "|");
    if (slash <= 0 || b <= slash)
        return false;
    int64_t v;
    if (!mfu__int_parse((mfu__span){r.p, (size_t)slash}, &v))
        return false;
    if (iter)
        *iter = v;
    if (bar)
        *bar = r.p + b;
    return true;
}

static int megatron_detect(const mfu__line *ln)
{
    mfu__span s = {ln->text, ln->len};
    if (step_head(s, NULL, NULL) && mfu__span_find(s, "elapsed time per iteration (ms):") > 0)
        return MFU__DETECT_STEP;
    if (mfu__span_starts(s, "time (ms) |") || mfu__span_starts(s, "(min, max) time across ranks") ||
        mfu__span_starts(s, "[before the start of training step]") ||
        mfu__span_find(s, ") memory (MB) | allocated:") > 0 ||
        mfu__span_find(s, "---- arguments ----") >= 0 || mfu__span_starts(s, "using world size:"))
        return MFU__DETECT_HINT;
    return MFU__DETECT_NONE;
}

/* "name ......... value" inside the argument dump. */
static bool arg_line(mfu__span s, mfu__span *name, mfu__span *value)
{
    long dots = mfu__span_find(s, " ..");
    if (dots <= 0)
        return false;
    size_t i = (size_t)dots + 1;
    while (i < s.n && s.p[i] == '.')
        i++;
    *name = mfu__span_trim((mfu__span){s.p, (size_t)dots});
    *value = mfu__span_trim((mfu__span){s.p + i, s.n - i});
    return name->n > 0 && value->n > 0;
}

static void set_int(int64_t *dst, mfu__span v)
{
    int64_t x;
    if (mfu__int_parse(v, &x) && x > 0)
        *dst = x;
}

static void describe_model(megatron_state *st, mfu_run_meta *m)
{
    if (!st->layers && !st->hidden)
        return;
    char buf[MFU_META_STR] = "";
    mfu__appendf(buf, sizeof buf, "layers %lld, hidden %lld", (long long)st->layers,
                 (long long)st->hidden);
    if (st->heads)
        mfu__appendf(buf, sizeof buf, ", heads %lld", (long long)st->heads);
    if (st->ffn)
        mfu__appendf(buf, sizeof buf, ", ffn %lld", (long long)st->ffn);
    mfu__strlcpy(m->model, buf, sizeof m->model);
}

static void read_arg(megatron_state *st, mfu_run_meta *m, mfu__span name, mfu__span v)
{
    if (mfu__span_eq(name, "seq_length"))
        set_int(&m->seq_len, v);
    else if (mfu__span_eq(name, "world_size"))
        set_int(&m->world_size, v);
    else if (mfu__span_eq(name, "global_batch_size"))
        set_int(&m->global_batch, v);
    else if (mfu__span_eq(name, "micro_batch_size"))
        set_int(&m->micro_batch, v);
    else if (mfu__span_eq(name, "num_layers"))
        set_int(&st->layers, v);
    else if (mfu__span_eq(name, "hidden_size"))
        set_int(&st->hidden, v);
    else if (mfu__span_eq(name, "num_attention_heads"))
        set_int(&st->heads, v);
    else if (mfu__span_eq(name, "ffn_hidden_size"))
        set_int(&st->ffn, v);
    else if (mfu__span_eq(name, "bf16") && mfu__span_eq(v, "True"))
        mfu__strlcpy(m->dtype, "bf16", sizeof m->dtype);
    else if (mfu__span_eq(name, "fp16") && mfu__span_eq(v, "True"))
        mfu__strlcpy(m->dtype, "fp16", sizeof m->dtype);
    else if (mfu__span_eq(name, "fp8") && !mfu__span_eq(v, "None") && !mfu__span_eq(v, "False"))
        mfu__strlcpy(m->dtype, "fp8", sizeof m->dtype);
    describe_model(st, m);
}

/* The loss of a step line: "lm loss" first, else the first other "... loss" / "..._loss". */
static bool is_loss_key(mfu__span k)
{
    if (k.n >= 5 && memcmp(k.p + k.n - 5, " loss", 5) == 0)
        return true;
    return false;
}

/* The keys of a step line that give a field. The key is looked up before its value is read,
 * so the pieces nobody uses ("consumed samples", "loss scale", router statistics) cost no
 * number parsing. */
typedef enum step_key {
    K_OTHER = 0,
    K_MS,        /* elapsed time per iteration (ms) */
    K_TFLOPS,    /* throughput per GPU (TFLOP/s/GPU) */
    K_DS_TFLOPS, /* TFLOPs (Megatron-DeepSpeed) */
    K_TGS,       /* tokens per gpu per second (tgs) */
    K_SPS,       /* samples per second */
    K_SEQLEN,    /* actual seqlen */
    K_LR,        /* learning rate */
    K_GBS,       /* global batch size */
    K_GRAD_NORM, /* grad norm */
    K_SKIPPED,   /* number of skipped iterations */
    K_NAN_ITERS, /* number of nan iterations */
    K_LM_LOSS,   /* lm loss */
    K_POWER,     /* power per GPU (W/GPU) (--log-energy) */
    K_ENERGY,    /* energy per GPU (J/iter/GPU) (--log-energy) */
    K_OTHER_LOSS /* another "... loss" */
} step_key;

#define KEY_IS(k, lit) ((k).n == sizeof(lit) - 1 && memcmp((k).p, lit, sizeof(lit) - 1) == 0)

static step_key key_of(mfu__span k)
{
    switch (k.n) {
    case sizeof("TFLOPs") - 1:
        if (KEY_IS(k, "TFLOPs"))
            return K_DS_TFLOPS;
        break;
    case sizeof("lm loss") - 1:
        if (KEY_IS(k, "lm loss"))
            return K_LM_LOSS;
        break;
    case sizeof("grad norm") - 1:
        if (KEY_IS(k, "grad norm"))
            return K_GRAD_NORM;
        break;
    case sizeof("learning rate") - 1: /* = sizeof("actual seqlen") - 1 */
        if (KEY_IS(k, "learning rate"))
            return K_LR;
        if (KEY_IS(k, "actual seqlen"))
            return K_SEQLEN;
        break;
    case sizeof("global batch size") - 1:
        if (KEY_IS(k, "global batch size"))
            return K_GBS;
        break;
    case sizeof("samples per second") - 1:
        if (KEY_IS(k, "samples per second"))
            return K_SPS;
        break;
    case sizeof("number of nan iterations") - 1:
        if (KEY_IS(k, "number of nan iterations"))
            return K_NAN_ITERS;
        break;
    case sizeof("number of skipped iterations") - 1:
        if (KEY_IS(k, "number of skipped iterations"))
            return K_SKIPPED;
        break;
    case sizeof("elapsed time per iteration (ms)") - 1: /* = the tgs key's length */
        if (KEY_IS(k, "elapsed time per iteration (ms)"))
            return K_MS;
        if (KEY_IS(k, "tokens per gpu per second (tgs)"))
            return K_TGS;
        break;
    case sizeof("throughput per GPU (TFLOP/s/GPU)") - 1:
        if (KEY_IS(k, "throughput per GPU (TFLOP/s/GPU)"))
            return K_TFLOPS;
        break;
    case sizeof("power per GPU (W/GPU)") - 1:
        if (KEY_IS(k, "power per GPU (W/GPU)"))
            return K_POWER;
        break;
    case sizeof("energy per GPU (J/iter/GPU)") - 1:
        if (KEY_IS(k, "energy per GPU (J/iter/GPU)"))
            return K_ENERGY;
        break;
    default: break;
    }
    return is_loss_key(k) ? K_OTHER_LOSS : K_OTHER;
}

static bool blank_byte(char c)
{
    return c == ' ' || (c >= '\t' && c <= '\r'); /* mfu__span_trim's blanks */
}

/* Shift of a key's value: ms -> s and TFLOP/s -> FLOP/s are scaled in the decimal, exactly. */
static int key_shift(step_key id)
{
    return id == K_MS ? -3 : id == K_TFLOPS || id == K_DS_TFLOPS ? 12 : 0;
}

/* The key of the piece at p, found at its first ':' when a blank follows that colon (the
 * usual " key: value |"): *colon, *kid and *kbar (the key holds a '|', so that colon may lie
 * past the piece's end). false when the first ':' is not followed by a blank. */
static bool piece_key(const char *p, const char *end, const char **colon, step_key *kid, bool *kbar)
{
    const char *c = memchr(p, ':', (size_t)(end - p));
    if (!c || c + 1 >= end || c[1] != ' ')
        return false;
    const char *k0 = p, *k1 = c;
    while (k0 < k1 && blank_byte(*k0))
        k0++;
    while (k1 > k0 && blank_byte(k1[-1]))
        k1--;
    *colon = c;
    *kid = key_of((mfu__span){k0, (size_t)(k1 - k0)});
    *kbar = memchr(k0, '|', (size_t)(k1 - k0)) != NULL;
    return true;
}

/* The piece at *pp (up to the next '|'): what mfu__split_next(&rest, "|", &piece),
 * mfu__kv(piece, ": ", &key, &val) and mfu__num_parse_shift(val, shift, &n) give (n.value and
 * n.kind into *v and *kind), for the keys that are fields. Moves *pp past the piece. Returns
 * false for a piece that gives nothing (no ": ", not a field, a later loss when
 * want_other_loss is false, not a number). keyed: piece_key() found colon, kid and kbar. The
 * usual piece " key: 912.3 |" with a known key is read without looking for its '|', and one
 * with another key is passed over at its '|'; anything else takes the general way. */
static bool read_piece(const char **pp, const char *end, bool want_other_loss, bool keyed,
                       const char *colon, step_key kid, bool kbar, step_key *id, double *v,
                       mfu__numkind *kind)
{
    const char *p = *pp;
    if (keyed) {
        *id = kid;
        /* a key that is one of the names (not any "... loss") holds no '|': this colon is the
         * first ": " of the piece */
        if (kid != K_OTHER && kid != K_OTHER_LOSS) {
            const char *val = colon + 2;
            while (val < end && blank_byte(*val))
                val++;
            const char *after = mfu__dec_scan_value(val, end, key_shift(kid), v);
            while (after && after < end && blank_byte(*after))
                after++;
            if (after && (after == end || *after == '|')) { /* the whole value is that decimal */
                *pp = after < end ? after + 1 : end;
                *kind = MFU__NUM_FINITE;
                return true;
            }
        } else if (kid == K_OTHER && !kbar) {
            /* blanks, a key without '|', blanks: the piece's first ": " is this colon too, and
             * a key that is no field gives nothing */
            const char *bar = memchr(colon, '|', (size_t)(end - colon));
            *pp = bar ? bar + 1 : end;
            return false;
        }
    }
    /* the general way */
    const char *bar = memchr(p, '|', (size_t)(end - p));
    mfu__span piece = {p, (size_t)((bar ? bar : end) - p)};
    *pp = bar ? bar + 1 : end;
    const char *sep = piece.p, *pend = piece.p + piece.n;
    while ((sep = memchr(sep, ':', (size_t)(pend - sep))) && sep + 1 < pend && sep[1] != ' ')
        sep++;
    if (!sep || sep + 1 >= pend)
        return false; /* no ": " in the piece */
    mfu__span key = mfu__span_trim((mfu__span){piece.p, (size_t)(sep - piece.p)});
    mfu__span val = mfu__span_trim((mfu__span){sep + 2, (size_t)(pend - sep - 2)});
    *id = key_of(key);
    if (*id == K_OTHER || (*id == K_OTHER_LOSS && !want_other_loss))
        return false;
    mfu__num n;
    if (!mfu__num_parse_shift(val, key_shift(*id), &n))
        return false; /* router stats, text */
    *v = n.value;
    *kind = n.kind;
    return true;
}

/* A step line's pieces up to each key's ": " (blanks, key, ": ") as the last step line had
 * them: the next line's pieces are compared with these bytes instead of being searched for
 * their ':' and their key looked up. A piece that differs ends the match; the rest of the line
 * is read the general way and becomes the new shape from that piece on. */
static bool piece_matches(const megatron_shape *sh, size_t i, const char *p, const char *end)
{
    size_t n = (size_t)(sh->off[i + 1] - sh->off[i]);
    if ((size_t)(end - p) < n)
        return false;
    return mfu__same_bytes(p, sh->text + sh->off[i], n);
}

static void shape_add(megatron_shape *sh, const char *p, const char *colon, step_key kid, bool kbar)
{
    size_t n = (size_t)(colon + 2 - p), at = sh->off[sh->n];
    if (sh->n == MEG_SHAPE_PIECES || at + n > sizeof sh->text)
        return;
    memcpy(sh->text + at, p, n);
    sh->id[sh->n] = (uint8_t)kid;
    sh->kbar[sh->n] = kbar;
    sh->n++;
    sh->off[sh->n] = (uint16_t)(at + n);
}

static mfu_status step_line(megatron_state *st, mfu__ictx *c, const mfu__line *ln, int64_t iter,
                            const char *bar)
{
    mfu_step s = st->blank;
    s.step = iter;
    double lm_loss = NAN, other_loss = NAN, seqlen = NAN;
    bool loss_nan = false;
    int64_t skipped = 0, nan_iters = 0;
    /* The pieces after "iteration N/M |" (read_piece), their keys by the last line's shape */
    const char *p = bar + 1, *end = ln->text + ln->len;
    megatron_shape *sh = &st->shape;
    bool matching = true;
    for (size_t i = 0; p < end; i++) {
        step_key id, kid = K_OTHER;
        double v;
        mfu__numkind kind;
        const char *colon = NULL;
        bool kbar = false, keyed;
        if (matching && i < sh->n && piece_matches(sh, i, p, end)) {
            keyed = true;
            colon = p + (sh->off[i + 1] - sh->off[i]) - 2;
            kid = (step_key)sh->id[i];
            kbar = sh->kbar[i];
        } else {
            if (matching) { /* the shape ends here; this line's pieces follow */
                matching = false;
                sh->n = i < sh->n ? i : sh->n;
            }
            keyed = piece_key(p, end, &colon, &kid, &kbar);
            if (keyed && sh->n == i)
                shape_add(sh, p, colon, kid, kbar);
        }
        if (!read_piece(&p, end, isnan(other_loss), keyed, colon, kid, kbar, &id, &v, &kind))
            continue;
        switch (id) {
        case K_MS: s.step_time_s = v; break;
        case K_TFLOPS:
            s.flops_per_s = v;
            s.flops_per_s_scope = MFU_SCOPE_DEVICE;
            break;
        case K_DS_TFLOPS: /* Megatron-DeepSpeed */
            s.flops_per_s = v;
            s.flops_per_s_scope = MFU_SCOPE_DEVICE;
            st->deepspeed_seen = true;
            break;
        case K_TGS:
            s.tokens_per_s = v;
            s.tokens_per_s_scope = MFU_SCOPE_DEVICE;
            st->deepspeed_seen = true;
            break;
        case K_SPS:
            s.samples_per_s = v;
            s.samples_per_s_scope = MFU_SCOPE_GLOBAL;
            break;
        case K_SEQLEN:
            seqlen = v;
            s.seq_len = v;
            st->deepspeed_seen = true;
            break;
        case K_LR: s.lr = v; break;
        case K_GBS: s.samples = v; break;
        case K_GRAD_NORM: s.grad_norm = v; break;
        case K_SKIPPED: skipped = v >= 1; break;     /* what (int64_t)v > 0 meant, without */
        case K_NAN_ITERS: nan_iters = v >= 1; break; /* its undefined cast of nan / 1e30 */
        case K_LM_LOSS:
            lm_loss = v;
            loss_nan = kind == MFU__NUM_NAN || kind == MFU__NUM_INF;
            break;
        case K_OTHER_LOSS: other_loss = v; break;
        case K_POWER: s.power_w = v; break;
        case K_ENERGY: s.energy_j = v; break;
        case K_OTHER: break;
        }
    }
    if (isnan(s.step_time_s)) {
        mfu__skip(c, "Megatron iteration line without 'elapsed time per iteration (ms): N'");
        return MFU_OK;
    }
    s.loss = !isnan(lm_loss) || loss_nan ? lm_loss : other_loss;
    if (loss_nan) {
        s.loss = NAN;
        s.flags |= MFU_STEP_LOSS_NAN;
    }
    if (skipped > 0)
        s.flags |= MFU_STEP_SKIPPED;
    if (nan_iters > 0)
        s.flags |= MFU_STEP_LOSS_NAN;
    if (!isnan(seqlen) && !isnan(s.samples))
        s.tokens = s.samples * seqlen;
    mfu_run_meta *m = mfu__meta(c);
    if (m->global_batch == 0 && !isnan(s.samples) && s.samples > 0)
        m->global_batch = mfu__int64_sat(s.samples);
    if (st->deepspeed_seen && m->convention[0] == '\0')
        mfu__strlcpy(m->convention,
                     "Megatron-DeepSpeed: TFLOPs per GPU from throughput_calculator (counts "
                     "activation recompute: hardware FLOPs); tgs = tokens/s per GPU",
                     sizeof m->convention);
    else if (!st->deepspeed_seen && !isnan(s.flops_per_s) && m->convention[0] == '\0')
        mfu__strlcpy(m->convention,
                     "Megatron-LM: TFLOP/s per GPU = analytic model FLOPs / (iteration time x "
                     "world size), no recompute",
                     sizeof m->convention);
    return mfu__emit(c, &s);
}

/* "[Rank 0] (after 20 iterations) memory (MB) | allocated: ... | max reserved: 71202.0": the
 * peak merged into the last row. The merge can fail (out of memory making the memory column). */
static mfu_status memory_line(mfu__ictx *c, mfu__span text)
{
    long after = mfu__span_find(text, "(after ");
    if (after < 0)
        return MFU_OK;
    mfu__span r = {text.p + after + 7, text.n - (size_t)after - 7};
    long sp = mfu__span_find(r, " ");
    int64_t iter;
    if (sp <= 0 || !mfu__int_parse((mfu__span){r.p, (size_t)sp}, &iter))
        return MFU_OK;
    double peak = NAN;
    mfu__span piece, key, val;
    while (mfu__split_next(&r, "|", &piece))
        if (mfu__kv(piece, ": ", &key, &val) && mfu__span_eq(key, "max reserved"))
            peak = mfu__num_value(val);
    const mfu_run *run = mfu__run(c);
    size_t n = mfu_run_count(run);
    mfu_step last;
    if (isnan(peak) || n == 0 || !mfu_run_get(run, n - 1, &last) || last.step != iter) {
        mfu__used(c); /* understood, but no row to attach it to */
        return MFU_OK;
    }
    mfu_step s;
    mfu_step_init(&s);
    s.step = iter;
    s.memory_bytes = peak * 1024.0 * 1024.0; /* Megatron divides bytes by 1024*1024 */
    return mfu__emit(c, &s);                 /* merges into the last row */
}

/* Put a timer (per iteration, ms) into the field that carries that part of the step; false
 * when the timer is not one of them. */
static bool timer_field(mfu_step *s, mfu__span name, double ms)
{
    double v = ms / 1000.0;
    if (!(v >= 0))
        return false;
    if (mfu__span_eq(name, "batch-generator"))
        s->data_loading_s = v;
    else if (mfu__span_eq(name, "optimizer"))
        s->optimizer_s = v;
    else if (mfu__span_eq(name, "backward-reduce-model-grads") ||
             mfu__span_eq(name, "all-grads-sync"))
        s->comm_s = v;
    else
        return false;
    return true;
}

/* Attach the timers in *s to the last row (a merge fills what the row lacks). */
static mfu_status attach_timers(mfu__ictx *c, mfu_step *s)
{
    const mfu_run *run = mfu__run(c);
    size_t n = mfu_run_count(run);
    if (n == 0) {
        mfu__used(c); /* understood, but no row to attach it to */
        return MFU_OK;
    }
    s->step = mfu_run_steps(run)[n - 1];
    return mfu__emit(c, s);
}

/* "time (ms) | forward-compute: 193.77 | ... | batch-generator: 25.27" */
static mfu_status timer_line(mfu__ictx *c, mfu__span s)
{
    mfu__span rest = {s.p + 11, s.n - 11}, piece, key, val;
    mfu_step t;
    mfu_step_init(&t);
    bool any = false;
    while (mfu__split_next(&rest, "|", &piece)) {
        if (!mfu__kv(piece, ": ", &key, &val))
            continue;
        double ms = mfu__num_value(val);
        if (!isnan(ms) && timer_field(&t, mfu__span_trim(key), ms))
            any = true;
    }
    if (!any) {
        mfu__used(c);
        return MFU_OK;
    }
    return attach_timers(c, &t);
}

/* "    forward-backward ...............................: (1800.00, 1810.00)": the max. */
static mfu_status timer_block_line(mfu__ictx *c, mfu__span s)
{
    long colon = mfu__span_find(s, ": (");
    mfu__span name = mfu__span_trim((mfu__span){s.p, (size_t)colon});
    while (name.n > 0 && (name.p[name.n - 1] == '.' || name.p[name.n - 1] == ' '))
        name.n--;
    mfu__span r = {s.p + colon + 3, s.n - (size_t)colon - 3};
    long comma = mfu__span_find(r, ",");
    long close = mfu__span_find(r, ")");
    if (comma > 0 && close > comma) {
        double ms = mfu__num_value(
            mfu__span_trim((mfu__span){r.p + comma + 1, (size_t)(close - comma - 1)}));
        mfu_step t;
        mfu_step_init(&t);
        if (!isnan(ms) && timer_field(&t, name, ms))
            return attach_timers(c, &t);
    }
    mfu__used(c);
    return MFU_OK;
}

static mfu_status megatron_line(void *state, mfu__ictx *c, const mfu__line *ln)
{
    megatron_state *st = state;
    mfu__span s = {ln->text, ln->len};
    mfu_run_meta *m = mfu__meta(c);
    int64_t iter;
    const char *bar;
    if (step_head(s, &iter, &bar)) { /* step_line skips one without its elapsed time */
        st->in_timers = false;
        return step_line(st, c, ln, iter, bar);
    }
    if (mfu__span_find(s, "---- arguments ----") >= 0) {
        st->in_args = true;
        mfu__used(c);
        return MFU_OK;
    }
    if (mfu__span_find(s, "---- end of arguments ----") >= 0) {
        st->in_args = false;
        mfu__used(c);
        return MFU_OK;
    }
    mfu__span name, value;
    if (st->in_args && arg_line(s, &name, &value)) {
        read_arg(st, m, name, value);
        mfu__used(c);
        return MFU_OK;
    }
    if (mfu__span_starts(s, "using world size:")) {
        mfu__span r = {s.p + 17, s.n - 17};
        mfu__span first;
        mfu__split_next(&r, ",", &first);
        set_int(&m->world_size, first);
        mfu__used(c);
        return MFU_OK;
    }
    if (mfu__span_starts(s, "Total number of parameters in billions:")) {
        double b = mfu__num_value((mfu__span){s.p + 39, s.n - 39});
        if (!isnan(b))
            m->model_params = mfu__scale10(b, 9);
        mfu__used(c);
        return MFU_OK;
    }
    if (mfu__span_find(s, ") memory (MB) | allocated:") > 0)
        return memory_line(c, s);
    if (mfu__span_starts(s, "time (ms) |"))
        return timer_line(c, s);
    if (mfu__span_starts(s, "[before the start of training step]")) {
        mfu__used(c);
        return MFU_OK;
    }
    if (mfu__span_starts(s, "(min, max) time across ranks")) {
        st->in_timers = true;
        mfu__used(c);
        return MFU_OK;
    }
    if (st->in_timers && mfu__span_find(s, ": (") > 0)
        return timer_block_line(c, s);
    st->in_timers = false;
    return MFU_OK;
}

static mfu_status megatron_init(void *state, const mfu_ingest_opts *opts, mfu_error *err)
{
    (void)opts;
    (void)err;
    megatron_state *st = state;
    mfu_step_init(&st->blank);
    return MFU_OK;
}

const mfu__format mfu__fmt_megatron = {
    .name = "megatron",
    .summary = "Megatron-LM and Megatron-DeepSpeed 'iteration N/M | ...' lines, argument dump",
    .detect = megatron_detect,
    .state_size = sizeof(megatron_state),
    .init = megatron_init,
    .line = megatron_line,
};
