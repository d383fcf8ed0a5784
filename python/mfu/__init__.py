"""mfu: model FLOPs utilization inside a training loop (a ctypes binding over libmfu).

    import mfu

    mon = mfu.Monitor(model=model, seq=1024, device=torch.device("cuda:0"),
                      dtype=torch.bfloat16, devices=world_size,
                      jsonl="run.mfu.jsonl")      # `mfu watch run.mfu.jsonl` follows it
    for step in range(1, steps + 1):
        with mon.step(tokens=global_batch * 1024) as s:   # times the block
            loss = train_step()
            s.loss = float(loss)
        print(f"step {step}: MFU {100 * s.mfu:.1f} %, {s.tflops:.1f} TFLOP/s per device")
    rep = mon.report()                                  # one report: summary and findings
    print(rep["summary"]["mfu"]["median"], [f["kind"] for f in rep["findings"]])
    mon.close()

model is a preset name, a config.json path, a dict of Hugging Face config fields, a config
object or a model with .config; device a torch.device, "cuda:N", "cpu" or a device of `mfu
devices`; dtype a torch.dtype or a name. Every figure is the one `mfu report` computes for the
same steps and context (the C API is include/mfu/monitor.h; docs/python.md documents this
module). Only the standard library is used; mfu.integrations has the callbacks of the Hugging
Face Trainer and Lightning and a helper for plain (and Accelerate) loops.
"""

import ctypes
import math
import numbers
import operator
import os
import struct
import time

from . import _lib
from ._inputs import Error, InvalidType, device_spec, dtype_spec, model_spec

__all__ = ["Error", "InvalidType", "Monitor", "Sample", "flops_per_token", "device_peak",
           "version", "library_path"]

library_path = _lib.path

# summary()'s keys are the report's series names (mfu_report_series_name), the names of
# `mfu report --json` and the CSV export
_SUMMARY_SERIES = ("mfu", "hfu", "tokens_per_second", "tokens_per_second_per_device",
                   "model_flops_per_second_per_device", "hardware_flops_per_second_per_device",
                   "step_time_s")


def _series_numbers():
    by_name = {}
    for i in range(64):
        name = _lib.report_series_name(i).decode()
        if name == "?":
            break
        by_name[name] = i
    missing = [n for n in _SUMMARY_SERIES if n not in by_name]
    if missing:
        raise ImportError("%s has no report series %s: rebuild the library and the binding from "
                          "one checkout" % (library_path, ", ".join(missing)))
    return {name: by_name[name] for name in _SUMMARY_SERIES}


_SERIES = _series_numbers()
_FLAG_LOSS_NAN = _lib.STEP_BITS["loss_nan"]  # MFU_STEP_LOSS_NAN
# the library's option names (mfu_error.field) as this module's arguments
_FIELDS = {"jsonl_path": "jsonl"}

# The record fast path (Monitor.record of plain numbers, record_many): the types it passes to
# the library as they are, the layout of mfu_step's head (step, time_s, step_time_s, tokens,
# samples, loss: checked against the library's field list here) and of mfu_monitor_sample.
_PLAIN = (int, float)
_NAN = math.nan
_perf_counter = time.perf_counter
_STEP_OFF = {f[0]: f[2] for f in _lib.STEP_FIELDS}
_HEAD = struct.Struct("=q5d")  # step, time_s, step_time_s, tokens, samples, loss
if [_STEP_OFF[k] for k in ("step", "time_s", "step_time_s", "tokens", "samples", "loss")] \
        != [0, 8, 16, 24, 32, 40]:
    raise ImportError("%s: mfu_step's first fields are not step, time_s, step_time_s, tokens, "
                      "samples, loss: rebuild the library and the binding from one checkout"
                      % _lib.path)
_FLAGS = struct.Struct("=I")
_SAMPLE = struct.Struct("=q8d")  # mfu_monitor_sample
if ctypes.sizeof(_lib.Sample) != _SAMPLE.size:
    raise ImportError("%s: mfu_monitor_sample is not 9 numbers" % _lib.path)


def _step_template():
    s = _lib.Step()
    _lib.step_init(ctypes.byref(s))
    return bytes(s)


_STEP_INIT = _step_template()
_HEAD_PACK = _HEAD.pack_into
_SAMPLE_UNPACK_FROM = _SAMPLE.unpack_from
# Monitor.record's one call: mfu_monitor_step_call of a prepared mfu_monitor_call (the step's
# head packed into it, the figures unpacked from it), its one pointer a c_void_p. ctypes costs
# about 70 ns an argument: one instead of four. Without NVML the call keeps the GIL (the
# record is a few hundred ns, at most a write() of 64 KiB of rows; releasing and taking the
# GIL back costs more than that in most records); with NVML, whose samples may take longer,
# it releases it.
_CALL_STEP_OFF = _lib.Call.step.offset
_CALL_SAMPLE_OFF = _lib.Call.sample.offset
_step_call_gil = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_void_p)(
    ("mfu_monitor_step_call", _lib.lib))
_step_call_nogil = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)(
    ("mfu_monitor_step_call", _lib.lib))


def _raise(status, err, field=None):
    f = err.field.decode()
    f = field or _FIELDS.get(f, f[2:].replace("-", "_") if f.startswith("--") else f)
    raise Error(_lib.strerror(status).decode(), f, err.message.decode())


def _b(s):
    return None if s is None else os.fsencode(s) if isinstance(s, os.PathLike) else s.encode()


def _int(v, field, minimum=0):
    """v as an int >= minimum (None or 0 -> 0); a float must be whole."""
    if v is None:
        return 0
    try:
        n = operator.index(v)
    except TypeError:
        if not isinstance(v, numbers.Real) or isinstance(v, bool) or not float(v).is_integer():
            raise InvalidType(field, "%s: give a whole number; got %r" % (field, v)) from None
        n = int(v)
    if n < minimum:
        raise Error("invalid", field, "%s must be >= %d; got %d" % (field, minimum, n))
    return n


def _num(v, field):
    """v as a float (a number, or a one-element tensor)."""
    try:
        return float(v)
    except (TypeError, ValueError):
        raise InvalidType(field, "%s: give a number; got %r" % (field, v)) from None


def version():
    """The library's version string ("0.1.0")."""
    return _lib.version().decode()


def _resolve_device(name, slot):
    """The library's device entry for name (slot holds a "cpu" entry) and its table id."""
    err = _lib.Error()
    dev = ctypes.c_void_p()
    st = _lib.device_resolve(_b(name), slot, ctypes.byref(dev), ctypes.byref(err))
    if st:
        _raise(st, err, "device")
    # mfu_device_info's first member is its id (const char *)
    return dev, ctypes.cast(dev, ctypes.POINTER(ctypes.c_char_p))[0].decode()


def device_peak(device, dtype=None):
    """Dense peak FLOP/s of one device for dtype: a device of the table (`mfu devices`), a
    torch.device or "cuda:N" (named by the driver), or "cpu", this machine's CPU (`mfu devices
    cpu`: computed from its instruction set, cores and clock). dtype None is fp32 on a CPU,
    bf16 elsewhere."""
    slot = ctypes.create_string_buffer(_lib.DEVICE_SLOT_BYTES)
    dev, dev_id = _resolve_device(device_spec(device), slot)
    err = _lib.Error()
    dt = ctypes.c_int()
    st = _lib.dtype_parse(_b(dtype_spec(dtype, dev_id) or "bf16"), ctypes.byref(dt),
                          ctypes.byref(err))
    if st:
        _raise(st, err, "dtype")
    out = ctypes.c_double()
    st = _lib.device_peak(dev, dt.value, False, ctypes.byref(out), ctypes.byref(err))
    if st:
        _raise(st, err, "dtype")
    return out.value


def flops_per_token(model, seq, convention=None, recompute=None, attention=None):
    """Training model FLOPs per token of a model (any form Monitor takes) at seq tokens per
    sequence, as `mfu flops --seq SEQ --json` gives .flops_per_token.model. attention "full"
    counts the whole score matrix (an eager attention that masks after the matmul), "causal"
    half of it; None as the convention counts it (exact: causal)."""
    mon = Monitor(model=model, seq=seq, convention=convention, recompute=recompute,
                  attention=attention)
    try:
        return mon.model_flops_per_token
    finally:
        mon.close()


def _summary_of(rep):
    out = {}
    for name, num in _SERIES.items():
        s = _lib.report_summary(rep, num)
        out[name] = {"n": s.n, "median": s.median, "mean": s.mean, "p10": s.p10, "p90": s.p90}
    return out


def _energy_of(rep):
    e = _lib.report_energy(rep).contents
    if not e.steps and not e.tensor_steps and not math.isfinite(e.tokens_per_kwh):
        return None
    return {"steps": e.steps, "power_steps": e.power_steps, "joules": e.joules,
            "useful_pflop": e.useful_pflop, "joules_per_pflop": e.joules_per_pflop,
            "tokens": e.tokens, "tokens_per_kwh": e.tokens_per_kwh,
            "tensor_steps": e.tensor_steps, "tensor_active": e.tensor_active,
            "tensor_mfu": e.mfu, "tensor_check": _lib.tensor_check_name(e.check).decode(),
            "tensor_check_text": e.check_text.decode() or None}


def _findings_of(rep):
    a = _lib.report_analysis(rep)
    out = []
    for i in range(_lib.finding_count(a) if a else 0):
        f = _lib.finding_at(a, i).contents
        out.append({
            "kind": f.kind.decode(), "severity": _lib.severity_name(f.severity).decode(),
            "first_step": f.first_step, "last_step": f.last_step,
            "summary": f.summary.decode(), "next_step": f.next_step.decode(),
            "evidence": {f.evidence[k].name.decode(): f.evidence[k].value
                         for k in range(min(f.nevidence, 8))},
        })
    return out


class Sample:
    """One step's figures (NaN where they cannot be known). In `with monitor.step(...) as s`,
    set s.loss (and any step field by name in s.fields) inside the block; the figures are
    filled when the block ends.

    step, step_time_s, tokens_per_s (whole job; also .tokens_per_second),
    model_flops_per_s_per_device (.tflops: the same in TFLOP/s), mfu, hfu (fractions);
    energy beside them: energy_j (one device's, J: the step's energy_j, NVML's counter with
    nvml, else power_w x step time), joules_per_pflop (per useful PFLOP), tokens_per_kwh,
    tensor_active (NVML GPM's tensor-pipe activity, 0..1)."""

    def __init__(self, step, tokens_per_s=_NAN, model_flops_per_s_per_device=_NAN, mfu=_NAN,
                 hfu=_NAN, step_time_s=_NAN, loss=None, energy_j=_NAN, joules_per_pflop=_NAN,
                 tokens_per_kwh=_NAN, tensor_active=_NAN):
        self.step = step
        self.tokens_per_s = tokens_per_s
        self.model_flops_per_s_per_device = model_flops_per_s_per_device
        self.mfu = mfu
        self.hfu = hfu
        self.step_time_s = step_time_s
        self.energy_j = energy_j
        self.joules_per_pflop = joules_per_pflop
        self.tokens_per_kwh = tokens_per_kwh
        self.tensor_active = tensor_active
        self.loss = loss
        self.fields = {}

    @property
    def tokens_per_second(self):
        """Tokens per second, whole job (the name `mfu report --json` uses)."""
        return self.tokens_per_s

    @property
    def tflops(self):
        """Useful model TFLOP/s of one device."""
        return self.model_flops_per_s_per_device / 1e12

    def __repr__(self):
        return ("Sample(step=%d, tokens_per_s=%.6g, mfu=%.4f, hfu=%.4f)"
                % (self.step, self.tokens_per_s, self.mfu, self.hfu))


class _Timed:
    def __init__(self, mon, sample, tokens, fields):
        self.mon, self.sample, self.tokens = mon, sample, tokens
        sample.fields.update(fields)

    def __enter__(self):
        self.t0 = time.perf_counter()
        return self.sample

    def __exit__(self, exc_type, exc, tb):
        dt = time.perf_counter() - self.t0
        if exc_type is None:
            self.mon.record(self.tokens, dt, loss=self.sample.loss, step=self.sample.step,
                            _sample=self.sample, **self.sample.fields)
        return False


class Monitor:
    """MFU of a training loop, step by step (include/mfu/monitor.h).

    Monitor(model=None, seq=0, device=None, devices=1, dtype=None, peak_flops_per_s=0,
            convention=None, recompute=None, attention=None, jsonl=None, name=None,
            nvml=False, nvml_index=0, flush_interval=None)

    model: a preset name (`mfu flops --list-presets`), a config.json path (or a directory
    holding one), a dict of Hugging Face config fields, a config object (.to_dict()) or a model
    with .config; seq: tokens per sequence (required with a model; a step may say its own);
    device: a torch.device, "cuda:N" (named by torch.cuda.get_device_name, else NVML), "cpu"
    (this machine's CPU) or a device of `mfu devices` (or give peak_flops_per_s); dtype: a
    torch.dtype or a name (None: fp32 on a CPU, bf16 elsewhere); devices: devices in the job;
    attention: "causal" or "full" (None: as the convention counts it); jsonl: append each step
    to this canonical JSON-lines file (read by `mfu watch`, `mfu serve`, `mfu report`); nvml:
    sample GPU nvml_index's SM clock, power, power limit and energy counter through NVML at
    every step, and its tensor-pipe activity (GPM, Hopper and newer) where it has one.
    flush_interval: the most seconds a recorded step waits in memory before it is written to
    the jsonl file (None: the library's 1 s; 0: every step at once; flush() writes now).
    Bad values raise mfu.Error naming the argument to fix (.field).
    """

    def __init__(self, model=None, seq=0, device=None, devices=1, dtype=None,
                 peak_flops_per_s=0.0, convention=None, recompute=None, attention=None,
                 jsonl=None, name=None, nvml=False, nvml_index=0, flush_interval=None):
        self._h = None
        m_str, m_text, m_name = model_spec(model)
        dev = device_spec(device)
        dev_id = None
        if dev is not None:
            slot = ctypes.create_string_buffer(_lib.DEVICE_SLOT_BYTES)
            dev_id = _resolve_device(dev, slot)[1]
        dt = dtype_spec(dtype, dev_id)
        err = _lib.Error()
        self._arch = None
        if m_text is not None:
            self._arch = ctypes.create_string_buffer(_lib.ARCH_BYTES)
            raw = m_text.encode()
            st = _lib.arch_from_config_text(raw, len(raw), None, self._arch, ctypes.byref(err))
            if st:
                _raise(st, err, "model")
        for k, v in (("convention", convention), ("recompute", recompute),
                     ("attention", attention), ("name", name)):
            if v is not None and not isinstance(v, str):
                raise InvalidType(k, "%s: give a name (a string); got %s"
                                  % (k, type(v).__name__))
        if jsonl is not None and not isinstance(jsonl, (str, os.PathLike)):
            raise InvalidType("jsonl", "jsonl: give a file path; got %s" % type(jsonl).__name__)
        self._keep = [_b(m_str), _b(convention), _b(recompute), _b(dev), _b(dt), _b(jsonl),
                      _b(name or m_name or None), _b(attention)]
        cfg = _lib.Config(self._keep[0], ctypes.addressof(self._arch) if self._arch else None,
                          _int(seq, "seq"), self._keep[1], self._keep[2], self._keep[3],
                          self._keep[4], _num(peak_flops_per_s or 0, "peak_flops_per_s"),
                          _int(devices, "devices"), self._keep[5], self._keep[6], bool(nvml),
                          _int(nvml_index, "nvml_index"), self._keep[7])
        h = ctypes.c_void_p()
        st = _lib.monitor_new(ctypes.byref(cfg), ctypes.byref(h), ctypes.byref(err))
        if st:
            _raise(st, err)
        self._h = h
        self._next = 1
        self._last_t = None
        # the record fast path's prepared call: an mfu_monitor_call holding the monitor and a
        # step (mfu_step_init's, whose head each record packs), its address as a c_void_p (the
        # cheapest argument ctypes converts)
        self._err = _lib.Error()
        self._errp = ctypes.byref(self._err)
        self._call = _lib.Call()
        self._call.monitor = h.value
        ctypes.memmove(ctypes.addressof(self._call) + _CALL_STEP_OFF, _STEP_INIT,
                       len(_STEP_INIT))
        self._callmv = memoryview(self._call).cast("B")
        self._callp = ctypes.c_void_p(ctypes.addressof(self._call))
        self._step_call = _step_call_nogil if nvml else _step_call_gil
        if flush_interval is not None:
            st = _lib.monitor_set_flush_interval(h, _num(flush_interval, "flush_interval"),
                                                 self._errp)
            if st:
                self.close()
                _raise(st, self._err)

    def flush(self):
        """Write the steps recorded so far that still wait in memory to the jsonl file
        (nothing without one). Writes are batched: a step reaches the file when 64 KiB of
        rows wait, at the first record flush_interval after the last write, at flush() and
        at close(); a process killed before that loses the rows still waiting. Raises
        mfu.Error ("io") when the write fails."""
        st = _lib.monitor_flush(self._handle(), self._errp)
        if st:
            _raise(st, self._err)

    # -- lifetime --
    def close(self):
        """Write the steps still waiting, free the monitor and close its file. Raises
        mfu.Error ("io") when that last write fails (the monitor is freed all the same);
        further calls raise mfu.Error."""
        if getattr(self, "_h", None):
            st = _lib.monitor_flush(self._h, self._errp)
            _lib.monitor_free(self._h)
            self._h = None
            if st:
                _raise(st, self._err)

    def __del__(self):
        if getattr(self, "_h", None):  # at exit: nothing to raise to; free writes what waits
            _lib.monitor_free(self._h)
            self._h = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def _handle(self):
        if not self._h:
            raise Error("invalid", "", "the monitor is closed")
        return self._h

    # -- steps --
    @property
    def model_flops_per_token(self):
        """Training model FLOPs per token of the model at the configured seq (NaN without a
        model)."""
        return _lib.monitor_fpt(self._handle())

    @property
    def peak_flops_per_s(self):
        """The dense peak of one device the monitor divides by (NaN without one)."""
        return _lib.monitor_peak(self._handle())

    def record(self, tokens, step_time_s=None, loss=None, step=None, seq=None,
               useful_tokens=None, _sample=None, **fields):
        """Record one step: tokens of the whole job, its wall time in seconds (None: the time
        since the previous record, which needs one before it), loss (None: unknown; a NaN or
        infinite loss is flagged as a NaN loss), step number (None: the next), seq: this
        step's tokens per sequence (None: the configured one; the FLOPs per token follow it),
        useful_tokens: the non-padding tokens among tokens (MFU counts only these). Other step
        fields by name: devices, clock_mhz, power_w, power_limit_w, data_loading_s, comm_s,
        optimizer_s, lr, grad_norm, memory_bytes, samples. Returns a Sample.

        Plain ints and floats for tokens, step_time_s, loss (finite) and step, with no other
        field, take a fast path: the step's head packed into a prepared mfu_step, one
        mfu_monitor_step call with prepared pointers, the figures unpacked at once."""
        now = _perf_counter()
        if (not fields and seq is None and useful_tokens is None and _sample is None
                and self._h and type(tokens) in _PLAIN
                and (type(step_time_s) in _PLAIN
                     or (step_time_s is None and self._last_t is not None))
                and (loss is None or (type(loss) in _PLAIN and loss - loss == 0))
                and (step is None or (type(step) is int and 0 <= step < 9223372036854775807))):
            n = self._next if step is None else step
            dt = float(now - self._last_t if step_time_s is None else step_time_s)
            mv = self._callmv
            _HEAD_PACK(mv, _CALL_STEP_OFF, n, _NAN, dt, tokens, _NAN,
                       _NAN if loss is None else loss)
            st = self._step_call(self._callp)
            if st:
                _raise(st, self._call.error)
            self._last_t = now
            self._next = n + 1
            _, tps, flops, mfu_, hfu, ej, jpp, tpk, ta = _SAMPLE_UNPACK_FROM(mv, _CALL_SAMPLE_OFF)
            return Sample(n, tps, flops, mfu_, hfu, dt, loss, ej, jpp, tpk, ta)
        h = self._handle()
        if step_time_s is None:
            if self._last_t is None:
                raise Error("invalid", "step_time_s", "the first record needs step_time_s (or "
                            "use monitor.step(): it times the block)")
            step_time_s = now - self._last_t
        if seq is not None:
            fields["seq_len"] = _int(seq, "seq", 1)
        if useful_tokens is not None:
            fields["useful_tokens"] = useful_tokens
        s = _lib.Step()
        _lib.step_init(ctypes.byref(s))
        s.step = self._next if step is None else _int(step, "step")
        s.tokens = _num(tokens, "tokens")
        s.step_time_s = _num(step_time_s, "step_time_s")
        if loss is not None:
            lv = _num(loss, "loss")
            s.loss = lv
            if math.isnan(lv) or math.isinf(lv):
                s.flags |= _FLAG_LOSS_NAN
        for k, v in fields.items():
            if (k not in _lib.STEP_UNSCOPED_DOUBLES
                    or k in ("step_time_s", "tokens", "loss")):
                raise InvalidType(k, "record(): no step field %r" % k)
            if v is not None:
                setattr(s, k, _num(v, k))
        out = _lib.Sample()
        err = _lib.Error()
        st = _lib.monitor_step(h, ctypes.byref(s), ctypes.byref(out), ctypes.byref(err))
        if st:
            _raise(st, err)
        self._last_t = now  # a later record without a time is timed from here
        self._next = s.step + 1
        r = _sample or Sample(s.step, loss=loss)
        r.step = s.step
        r.step_time_s = s.step_time_s
        r.tokens_per_s = out.tokens_per_s
        r.model_flops_per_s_per_device = out.model_flops_per_s_per_device
        r.mfu = out.mfu
        r.hfu = out.hfu
        r.energy_j = out.energy_j
        r.joules_per_pflop = out.joules_per_pflop
        r.tokens_per_kwh = out.tokens_per_kwh
        r.tensor_active = out.tensor_active
        return r

    def record_many(self, tokens, step_time_s, loss=None, step=None):
        """Record len(tokens) steps in one call: tokens and step_time_s are sequences of the
        same length (each item as in record()), loss a sequence of that length or None
        (unknown; a NaN or infinite one is flagged as a NaN loss, as in record()), step the
        first step number (None: the next; the others follow). Returns the Sample of the last
        step (None for no steps): the figures of every step are in report() and the file. A
        step the library refuses raises mfu.Error; the steps before it are recorded."""
        h = self._handle()
        n = len(tokens)
        if len(step_time_s) != n or (loss is not None and len(loss) != n):
            raise Error("invalid", "step_time_s" if len(step_time_s) != n else "loss",
                        "record_many(): tokens, step_time_s and loss must have the same length "
                        "(%d, %d, %s)" % (n, len(step_time_s),
                                          "-" if loss is None else len(loss)))
        if n == 0:
            return None
        first = self._next if step is None else _int(step, "step")
        try:
            tok = [float(x) for x in tokens]
        except (TypeError, ValueError):
            raise InvalidType("tokens", "tokens: give numbers") from None
        try:
            dts = [float(x) for x in step_time_s]
        except (TypeError, ValueError):
            raise InvalidType("step_time_s", "step_time_s: give numbers") from None
        try:
            ls = [_NAN] * n if loss is None else [float(x) for x in loss]
        except (TypeError, ValueError):
            raise InvalidType("loss", "loss: give numbers or None") from None
        size = ctypes.sizeof(_lib.Step)
        buf = bytearray(_STEP_INIT * n)
        pack = _HEAD_PACK
        at = 0
        for i, t, d, lv in zip(range(first, first + n), tok, dts, ls):
            pack(buf, at, i, _NAN, d, t, _NAN, lv)
            at += size
        if loss is not None:
            off = _STEP_OFF["flags"]
            flags0 = _FLAGS.unpack_from(_STEP_INIT, off)[0]
            for i in [i for i, lv in enumerate(ls) if lv - lv != 0]:
                _FLAGS.pack_into(buf, i * size + off, flags0 | _FLAG_LOSS_NAN)
        steps = (_lib.Step * n).from_buffer(buf)
        out = (_lib.Sample * n)()
        done = _lib.monitor_record_many(h, steps, n, out, self._errp)
        del steps  # the buffer's export ends here
        if done:
            self._last_t = _perf_counter()
            self._next = first + done
        if done != n:
            _raise(self._err.code, self._err)
        s_, tps, flops, mfu_, hfu, ej, jpp, tpk, ta = _SAMPLE.unpack_from(
            memoryview(out).cast("B"), (n - 1) * _SAMPLE.size)
        return Sample(s_, tps, flops, mfu_, hfu, dts[-1], None if loss is None else loss[-1],
                      ej, jpp, tpk, ta)

    def step(self, tokens, step=None, seq=None, useful_tokens=None):
        """A context manager that times its block as one step of `tokens` tokens (seq and
        useful_tokens as in record()) and records it when the block ends without an
        exception: `with mon.step(tokens=n, seq=512) as s: ...`."""
        self._handle()
        fields = {}
        if seq is not None:
            fields["seq"] = seq
        if useful_tokens is not None:
            fields["useful_tokens"] = useful_tokens
        return _Timed(self, Sample(self._next if step is None else _int(step, "step")), tokens,
                      fields)

    # -- the report of the steps so far --
    def report(self):
        """The report of the steps so far, computed once: {"summary": summary(),
        "findings": findings(), "energy": energy()}. Asking for them this way costs one
        report, not three."""
        rep = ctypes.c_void_p()
        err = _lib.Error()
        st = _lib.monitor_report(self._handle(), ctypes.byref(rep), ctypes.byref(err))
        if st:
            _raise(st, err)
        try:
            return {"summary": _summary_of(rep), "findings": _findings_of(rep),
                    "energy": _energy_of(rep)}
        finally:
            _lib.report_free(rep)

    def summary(self):
        """Median, mean, p10, p90 and count of the steady steps (warm-up excluded, as `mfu
        report` does) for each of mfu, hfu, tokens_per_second, tokens_per_second_per_device,
        model_flops_per_second_per_device, hardware_flops_per_second_per_device and
        step_time_s (the names of `mfu report --json`): a dict of dicts."""
        return self.report()["summary"]

    def energy(self):
        """Energy beside utilization over the steady steps, as `mfu report --json`'s "energy":
        a dict of steps, power_steps, joules (whole job), useful_pflop, joules_per_pflop,
        tokens, tokens_per_kwh, tensor_steps, tensor_active (median), tensor_mfu (median MFU
        of the same steps), tensor_check ("consistent", "mfu_above": a counting error,
        "far_below": wasted tensor work, "none") and tensor_check_text; None when no step has
        an energy, a power or a tensor activity."""
        return self.report()["energy"]

    def findings(self):
        """The analysis' findings of the steps so far (stalls, throttling, padding, a NaN
        loss, ...): a list of dicts with kind, severity, first_step, last_step, summary,
        next_step and evidence."""
        return self.report()["findings"]
