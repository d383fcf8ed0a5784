/*
 * mfu/step_fields.h - the fields of a step record (mfu_step of mfu/run.h), listed once.
 *
 * MFU_STEP_FIELDS(X) calls X once per field, in the order of the struct:
 *
 *     X(kind, name, NAME, arg, map, since, unit, what, help)
 *
 * Everything that has one entry per field is made from this list: the struct mfu_step and its
 * column selectors (mfu/run.h), mfu_step_init, the run's columns, the canonical JSON-lines
 * writer and both its readers, the --map fields of the generic jsonl / csv readers, the run
 * store's columns and their migrations, the step's plausibility rules, the infinities a run
 * drops, step equality, and the field table a binding reads (mfu_step_field_at). A field is
 * added by one entry appended at the end (docs/internals/run.md "How to add a step field").
 *
 * kind   STEP    the step number, int64_t
 *        DOUBLE  a double, NaN when absent; each is a column of mfu_run_column (MFU_COL_NAME)
 *        SCOPE   the mfu_scope of the double before it; named after it ("<double>_scope")
 *        FLAGS   the flag bits, uint32_t: the BIT and NANBIT entries below name them
 *        RANK    the rank that printed the step, int32_t, -1 unknown
 *        CODE    an int32_t code, -1 unknown; arg names its codec (recompute: an mfu_recompute
 *                of model.h, dtype: an mfu_dtype of device.h)
 *        BIT     one bit of flags (MFU_STEP_NAME), no member of its own. Bits are numbered in
 *                the order of the list: a new bit goes after the last one
 *        NANBIT  a BIT that is set when the double arg was printed as nan or inf (arg is then
 *                NaN); mfu_run_append sets it for an infinite arg
 * name   the C member, and the same word everywhere else: the canonical JSON key, the store
 *        column, the --map field, the name mfu_step_field_at gives
 * NAME   name in capitals, for the constants made from it (MFU_COL_NAME, MFU_STEP_NAME)
 * arg    DOUBLE: NONNEG (mfu_run_append refuses a negative value) or ANY; CODE: the codec;
 *        NANBIT: the double it marks; otherwise _
 * map    how --map reads it: PLAIN (under its name), SCOPED (name: the whole job's,
 *        name_device: one device's), DEVICE (per device only), WHOLE (a whole number), NO
 * since  the store schema version that added its column (1, 3, 4; store.h); 0 for the bits,
 *        which the flags column holds
 * unit   the unit a message prints after a value ("s", "W"; "" where `what` says it)
 * what   the value in words, as a message names it ("token count")
 * help   what it is, with its units
 *
 * The struct's layout is the ABI: entries are only ever appended (a new member goes last, a
 * new double column last among MFU_COL_*), never reordered or removed.
 */
#ifndef MFU_STEP_FIELDS_H
#define MFU_STEP_FIELDS_H

/* clang-format off */
#define MFU_STEP_FIELDS(X) \
    X(STEP, step, STEP, _, WHOLE, 1, "", "step number", \
      "step / iteration number as printed") \
    X(DOUBLE, time_s, TIME_S, ANY, PLAIN, 1, "s", "timestamp", \
      "wall-clock timestamp, seconds since 1970 (printed time taken as UTC)") \
    X(DOUBLE, step_time_s, STEP_TIME_S, NONNEG, PLAIN, 1, "s", "step time", \
      "wall time of one step, s (Megatron: averaged over the log interval)") \
    X(DOUBLE, tokens, TOKENS, NONNEG, PLAIN, 1, "", "token count", \
      "tokens processed by the whole job in this step") \
    X(DOUBLE, samples, SAMPLES, NONNEG, PLAIN, 1, "", "sample count", \
      "sequences (samples) processed by the whole job in this step") \
    X(DOUBLE, loss, LOSS, ANY, PLAIN, 1, "", "loss", \
      "training loss") \
    X(DOUBLE, lr, LR, ANY, PLAIN, 1, "", "learning rate", \
      "learning rate") \
    X(DOUBLE, grad_norm, GRAD_NORM, ANY, PLAIN, 1, "", "gradient norm", \
      "gradient norm") \
    X(DOUBLE, memory_bytes, MEMORY_BYTES, NONNEG, PLAIN, 1, "bytes", "memory", \
      "device memory the log reported (peak reserved/allocated), bytes") \
    X(DOUBLE, tokens_per_s, TOKENS_PER_S, NONNEG, SCOPED, 1, "", "tokens/s", \
      "the framework's own tokens/s") \
    X(SCOPE, tokens_per_s_scope, TOKENS_PER_S_SCOPE, _, NO, 1, "", "tokens/s scope", \
      "who tokens_per_s is about: one device or the whole job") \
    X(DOUBLE, flops_per_s, FLOPS_PER_S, NONNEG, SCOPED, 1, "", "FLOP/s", \
      "the framework's own FLOP/s (printed as TFLOP/s etc.)") \
    X(SCOPE, flops_per_s_scope, FLOPS_PER_S_SCOPE, _, NO, 1, "", "FLOP/s scope", \
      "who flops_per_s is about") \
    X(DOUBLE, mfu, MFU, ANY, DEVICE, 1, "", "MFU", \
      "the framework's own MFU, fraction 0..1") \
    X(SCOPE, mfu_scope, MFU_SCOPE, _, NO, 1, "", "MFU scope", \
      "who mfu is about") \
    X(DOUBLE, samples_per_s, SAMPLES_PER_S, NONNEG, SCOPED, 1, "", "samples/s", \
      "the framework's own samples (sequences) per second") \
    X(SCOPE, samples_per_s_scope, SAMPLES_PER_S_SCOPE, _, NO, 1, "", "samples/s scope", \
      "who samples_per_s is about") \
    X(FLAGS, flags, FLAGS, _, NO, 1, "", "flags", \
      "MFU_STEP_* bits") \
    X(RANK, rank, RANK, _, WHOLE, 1, "", "rank", \
      "the rank that printed the line, -1 when unknown") \
    X(BIT, skipped, SKIPPED, _, NO, 0, "", "skipped", \
      "the optimizer skipped this step (fp16 overflow, ...)") \
    X(NANBIT, loss_nan, LOSS_NAN, loss, NO, 0, "", "loss printed as nan", \
      "the loss was printed as nan or inf (loss is NaN)") \
    X(BIT, mfu_sentinel, MFU_SENTINEL, _, NO, 0, "", "MFU sentinel", \
      "MFU printed as a sentinel (-100%, N/A): mfu is NaN") \
    X(BIT, tokens_derived, TOKENS_DERIVED, _, NO, 0, "", "tokens derived", \
      "tokens came from the header (batch x seq), not the line") \
    X(DOUBLE, seq_len, SEQ_LEN, NONNEG, PLAIN, 3, "", "sequence length", \
      "tokens per sequence in this step") \
    X(DOUBLE, devices, DEVICES, NONNEG, PLAIN, 3, "", "device count", \
      "devices (GPUs, chips) in the job during this step") \
    X(DOUBLE, useful_tokens, USEFUL_TOKENS, NONNEG, PLAIN, 3, "", "useful token count", \
      "non-padding tokens in the step, whole job (<= tokens)") \
    X(DOUBLE, clock_mhz, CLOCK_MHZ, NONNEG, PLAIN, 3, "MHz", "clock", \
      "SM / core clock during the step, MHz") \
    X(DOUBLE, power_w, POWER_W, NONNEG, PLAIN, 3, "W", "power", \
      "board power during the step, W (per device)") \
    X(DOUBLE, power_limit_w, POWER_LIMIT_W, NONNEG, PLAIN, 3, "W", "power limit", \
      "the enforced power limit, W (per device)") \
    X(DOUBLE, data_loading_s, DATA_LOADING_S, NONNEG, PLAIN, 3, "s", "data loading time", \
      "time the step waited for data, s") \
    X(DOUBLE, comm_s, COMM_S, NONNEG, PLAIN, 3, "s", "communication time", \
      "exposed (not overlapped) communication time, s") \
    X(DOUBLE, optimizer_s, OPTIMIZER_S, NONNEG, PLAIN, 3, "s", "optimizer time", \
      "optimizer step time, s") \
    X(CODE, recompute, RECOMPUTE, recompute, NO, 3, "", "recompute", \
      "activation recomputation: an mfu_recompute of model.h (0 none, 1 selective, " \
      "2 full); -1 unknown") \
    X(CODE, dtype, DTYPE, dtype, NO, 3, "", "dtype", \
      "precision of the matmuls: an mfu_dtype of device.h; -1 unknown") \
    X(DOUBLE, energy_j, ENERGY_J, NONNEG, PLAIN, 4, "J", "energy", \
      "energy one device used in the step, J (per device, as power_w)") \
    X(DOUBLE, tensor_active, TENSOR_ACTIVE, NONNEG, PLAIN, 4, "", "tensor activity", \
      "fraction 0..1 of the step the device's tensor pipes were active (NVML GPM)")
/* clang-format on */

/* The C type of each kind's member (bits have none). */
#define MFU__STEP_CTYPE_STEP int64_t
#define MFU__STEP_CTYPE_DOUBLE double
#define MFU__STEP_CTYPE_SCOPE enum mfu_scope /* "enum": C++ sees the member mfu_scope */
#define MFU__STEP_CTYPE_FLAGS uint32_t
#define MFU__STEP_CTYPE_RANK int32_t
#define MFU__STEP_CTYPE_CODE int32_t

/* Expansion helpers, so that an X of the list can do something for some kinds only:
 * MFU__STEP_IF_MEMBER_##kind(x) is x for the kinds with a member of their own (every kind but
 * the bits), MFU__STEP_IF_BIT_##kind(x) for the flag bits, MFU__STEP_IF_DOUBLE_##kind(x) for
 * the doubles; nothing for the other kinds. Where x needs a comma, x is a call of a macro that
 * makes it (a comma of x's own would end the argument). */
#define MFU__STEP_IF_MEMBER_STEP(x) x
#define MFU__STEP_IF_MEMBER_DOUBLE(x) x
#define MFU__STEP_IF_MEMBER_SCOPE(x) x
#define MFU__STEP_IF_MEMBER_FLAGS(x) x
#define MFU__STEP_IF_MEMBER_RANK(x) x
#define MFU__STEP_IF_MEMBER_CODE(x) x
#define MFU__STEP_IF_MEMBER_BIT(x)
#define MFU__STEP_IF_MEMBER_NANBIT(x)
#define MFU__STEP_IF_BIT_STEP(x)
#define MFU__STEP_IF_BIT_DOUBLE(x)
#define MFU__STEP_IF_BIT_SCOPE(x)
#define MFU__STEP_IF_BIT_FLAGS(x)
#define MFU__STEP_IF_BIT_RANK(x)
#define MFU__STEP_IF_BIT_CODE(x)
#define MFU__STEP_IF_BIT_BIT(x) x
#define MFU__STEP_IF_BIT_NANBIT(x) x
#define MFU__STEP_IF_DOUBLE_STEP(x)
#define MFU__STEP_IF_DOUBLE_DOUBLE(x) x
#define MFU__STEP_IF_DOUBLE_SCOPE(x)
#define MFU__STEP_IF_DOUBLE_FLAGS(x)
#define MFU__STEP_IF_DOUBLE_RANK(x)
#define MFU__STEP_IF_DOUBLE_CODE(x)
#define MFU__STEP_IF_DOUBLE_BIT(x)
#define MFU__STEP_IF_DOUBLE_NANBIT(x)

/* What mfu/run.h makes of the list: the members of mfu_step, the double columns (mfu_column),
 * the bit numbers and the bits (MFU_STEP_SKIPPED = 1u << 0, ...). */
#define MFU__STEP_MEMBER(kind, name, NAME, arg, map, since, unit, what, help)                      \
    MFU__STEP_IF_MEMBER_##kind(MFU__STEP_CTYPE_##kind name;)
#define MFU__STEP_COLUMN(kind, name, NAME, arg, map, since, unit, what, help)                      \
    MFU__STEP_IF_DOUBLE_##kind(MFU__STEP_COLUMN_1(NAME))
#define MFU__STEP_COLUMN_1(NAME) MFU_COL_##NAME,
#define MFU__STEP_BITNO(kind, name, NAME, arg, map, since, unit, what, help)                       \
    MFU__STEP_IF_BIT_##kind(MFU__STEP_BITNO_1(NAME))
#define MFU__STEP_BITNO_1(NAME) MFU__STEP_BITNO_##NAME,
#define MFU__STEP_BIT(kind, name, NAME, arg, map, since, unit, what, help)                         \
    MFU__STEP_IF_BIT_##kind(MFU__STEP_BIT_1(NAME))
#define MFU__STEP_BIT_1(NAME) MFU_STEP_##NAME = 1u << MFU__STEP_BITNO_##NAME,

#endif /* MFU_STEP_FIELDS_H */
