"""What the three integrations share: the tokens of a batch, and a Meter that turns the
batches of each optimizer step into one step of an mfu.Monitor and the figures a logger
gets.

A batch is read the way trainers hand it over: a dict (or transformers' BatchEncoding) with
input_ids (or inputs_embeds) and, where there is one, attention_mask; a tensor of token ids
(batch x sequence); or a tuple/list whose first element is one of those. Padding is counted
from a 2-D attention_mask of the same shape as the ids (its sum is the useful tokens); without
one every token counts.
"""

import collections
import time

from .. import InvalidType, Monitor
from .._inputs import model_spec

METRICS = ("mfu", "tflops", "tokens_per_second")
SAMPLES_MAX = 100000  # Samples a Meter keeps (its .samples); older ones are dropped


def _is_tensor(x):
    return hasattr(x, "shape") and hasattr(x, "dtype") and hasattr(x, "numel")


def _mapping_get(batch, key):
    try:
        return batch[key] if key in batch else None
    except (TypeError, KeyError):
        return None


def batch_shape(batch):
    """(tokens, seq, useful) of one batch on this rank: tokens = batch x sequence, seq the
    sequence length, useful the attention mask's sum (None without a mask). Raises
    mfu.InvalidType for a batch it cannot read."""
    if isinstance(batch, (tuple, list)) and batch:
        return batch_shape(batch[0])
    ids = mask = None
    if _is_tensor(batch):
        ids = batch
    elif hasattr(batch, "keys") and hasattr(batch, "__getitem__"):
        ids = _mapping_get(batch, "input_ids")
        if ids is None:
            emb = _mapping_get(batch, "inputs_embeds")
            if _is_tensor(emb) and len(emb.shape) == 3:
                b, s = int(emb.shape[0]), int(emb.shape[1])
                mask = _mapping_get(batch, "attention_mask")
                return b * s, s, _useful(mask, (b, s))
        mask = _mapping_get(batch, "attention_mask")
    if not _is_tensor(ids) or len(ids.shape) not in (1, 2):
        raise InvalidType("batch", "batch: give a dict with input_ids (and attention_mask), a "
                          "tensor of token ids (batch x sequence) or a tuple whose first item is "
                          "one; got %s" % type(batch).__name__)
    shape = (1, int(ids.shape[0])) if len(ids.shape) == 1 else (int(ids.shape[0]),
                                                                 int(ids.shape[1]))
    return shape[0] * shape[1], shape[1], _useful(mask, shape)


def _useful(mask, shape):
    if not _is_tensor(mask) or tuple(int(d) for d in mask.shape) != shape:
        return None
    return int(mask.sum())


class Meter:
    """The batches of each optimizer step -> one Monitor step, and the figures since the last
    log. The Monitor is made at the first step, from the model and that step's sequence
    length; every later step says its own sequence length (the longest of its batches), so a
    length change is counted.

    model, device, dtype, devices and the other Monitor arguments as mfu.Monitor; scale: the
    factor from this rank's tokens to the whole job's (the data-parallel ranks: devices)."""

    def __init__(self, model, device=None, dtype=None, devices=1, scale=None, jsonl=None,
                 name=None, attention=None, convention=None, recompute=None,
                 peak_flops_per_s=None, nvml=False, nvml_index=0):
        self.args = dict(model=model, device=device, dtype=dtype, devices=devices, jsonl=jsonl,
                         name=name, attention=attention, convention=convention,
                         recompute=recompute, peak_flops_per_s=peak_flops_per_s or 0.0,
                         nvml=nvml, nvml_index=nvml_index)
        model_spec(model)  # a model mfu cannot read fails here, not at the first step
        self.scale = float(scale if scale is not None else devices or 1)
        self.monitor = None
        self.tokens = 0
        self.useful = 0
        self.padded = False  # some batch of the step had a mask
        self.seq = None
        self.t_last = None
        # since the last log: steps, their time, time-weighted sums of METRICS, the last Sample
        self.interval = [0, 0.0, [0.0, 0.0, 0.0], None]
        # the last SAMPLES_MAX Samples (what was logged can be checked against the file)
        self.samples = collections.deque(maxlen=SAMPLES_MAX)

    def start(self, now=None):
        """Start timing the first step (later steps are timed from the previous record)."""
        if self.t_last is None:
            self.t_last = time.perf_counter() if now is None else now

    def add(self, batch):
        """Count one (micro-)batch of the current step."""
        tokens, seq, useful = batch_shape(batch)
        self.start()
        self.tokens += tokens
        self.useful += tokens if useful is None else useful
        self.padded = self.padded or useful is not None
        self.seq = seq if self.seq is None else max(self.seq, seq)

    def discard(self):
        """Forget the batches added since the last record (a step that failed)."""
        self.tokens = self.useful = 0
        self.padded = False
        self.seq = None

    def record(self, step=None, loss=None, now=None):
        """Record the batches added since the last record as one step (its time: since the
        previous record, or since start() for the first). Returns the Sample, or None when no
        batch was added."""
        if not self.tokens:
            return None
        now = time.perf_counter() if now is None else now
        dt = now - self.t_last
        if self.monitor is None:
            self.monitor = Monitor(seq=self.seq, **self.args)
        s = self.monitor.record(tokens=self.tokens * self.scale, step_time_s=dt, loss=loss,
                                step=step, seq=self.seq,
                                useful_tokens=self.useful * self.scale if self.padded else None)
        self.t_last = now
        self.discard()
        n, t, sums, _ = self.interval
        for i, v in enumerate((s.mfu, s.tflops, s.tokens_per_s)):
            sums[i] += dt * v
        self.interval = [n + 1, t + dt, sums, s]
        self.samples.append(s)
        return s

    def metrics(self):
        """mfu, tflops (useful model TFLOP/s per device) and tokens_per_second (whole job) over
        the steps since the last call, weighted by their time (one step: its own figures), then
        starts a new interval. {} when no step was recorded since."""
        n, t, sums, last = self.interval
        self.interval = [0, 0.0, [0.0, 0.0, 0.0], None]
        if n == 0:
            return {}
        if n == 1:
            return {"mfu": last.mfu, "tflops": last.tflops, "tokens_per_second": last.tokens_per_s}
        return {k: v / t for k, v in zip(METRICS, sums)}

    def flush(self):
        """Write the steps the monitor still holds to its file (writes are batched: a file read
        while training goes on lags by up to the monitor's flush interval)."""
        if self.monitor is not None:
            self.monitor.flush()

    def close(self):
        if self.monitor is not None:
            self.monitor.close()


OPTIONS = ("model", "device", "dtype", "jsonl", "name", "attention", "convention", "recompute",
           "peak_flops_per_s", "nvml", "nvml_index")


def trainer_meter(opts, model, device, dtype, world, main):
    """The Meter of an integration: opts are the arguments it was given (OPTIONS; None = read
    from the trainer), the others what the trainer says: its model, device, dtype (None: the
    model's parameters'), world size and whether this is the process that writes the file."""
    o = dict(opts)
    if o["model"] is None:
        o["model"] = model
    if o["device"] is None and o["peak_flops_per_s"] is None:
        o["device"] = device
    if o["dtype"] is None:
        o["dtype"] = dtype or param_dtype(model)
    if not main:
        o["jsonl"] = None
    world = max(int(world or 1), 1)
    return Meter(devices=world, scale=world, **o)


class WithMeter:
    """.samples (the last SAMPLES_MAX steps' Samples) and .monitor (the mfu.Monitor, None
    before the first step) of an integration that keeps its Meter in .meter."""
    meter = None

    @property
    def samples(self):
        return self.meter.samples if self.meter else []

    @property
    def monitor(self):
        return self.meter.monitor if self.meter else None


def precision_dtype(precision):
    """A dtype name from a trainer's precision setting ("bf16-mixed", "16-mixed", "64-true",
    "bf16", "fp16", ...): None when it does not say (32-bit, "no")."""
    if precision is None:
        return None
    p = str(precision).lower()
    if p.startswith("bf16"):
        return "bf16"
    if p.startswith("16") or p.startswith("fp16"):
        return "fp16"
    if p.startswith("fp8") or p.startswith("transformer-engine"):
        return "fp8"
    if p.startswith("64"):
        return "fp64"
    return None  # "32-true": the parameters' dtype says it (fp32, or tf32 where allowed)


def param_dtype(model):
    """The dtype of the model's first floating-point parameter (a torch.dtype), or None."""
    params = getattr(model, "parameters", None)
    if not callable(params):
        return None
    for p in params():
        if getattr(p, "is_floating_point", lambda: False)():
            return p.dtype
    return None
