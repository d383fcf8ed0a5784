"""mfu: model FLOPs utilization inside a training loop (a ctypes binding over libmfu).

    import mfu

    mon = mfu.Monitor(model="llama3-8b", seq=8192, device="h100-sxm", devices=64,
                      jsonl="run.mfu.jsonl")      # `mfu watch run.mfu.jsonl` follows it
    for step in range(1, steps + 1):
        with mon.step(tokens=global_batch * 8192) as s:   # times the block
            loss = train_step()
            s.loss = float(loss)
        print(f"step {step}: MFU {100 * s.mfu:.1f} %")
    rep = mon.report()                                  # one report: summary and findings
    print(rep["summary"]["mfu"]["median"], [f["kind"] for f in rep["findings"]])
    mon.close()

Every figure is the one `mfu report` computes for the same steps and context (the C API is
include/mfu/monitor.h; docs/python.md documents this module). Only the standard library is
used. The shared library is found through $MFU_LIBRARY, then the build tree next to this
package (build/libmfu.so), then the system's library path.
"""

import ctypes
import ctypes.util
import math
import os
import time

__all__ = ["Error", "Monitor", "Sample", "flops_per_token", "device_peak", "version",
           "library_path"]


class Error(Exception):
    """A call of libmfu failed. .status is the mfu_status name ("unknown", ...), .field the
    option concerned ("" when none); str() is the library's one-line message with its fix."""

    def __init__(self, status, field, message):
        super().__init__(message)
        self.status = status
        self.field = field


def _find_library():
    env = os.environ.get("MFU_LIBRARY")
    if env:
        return env
    here = os.path.dirname(os.path.abspath(__file__))
    for cand in (os.path.join(here, "..", "..", "build", "libmfu.so"),
                 os.path.join(here, "libmfu.so")):
        if os.path.exists(cand):
            return os.path.normpath(cand)
    found = ctypes.util.find_library("mfu")
    if found:
        return found
    raise ImportError("libmfu.so not found: build it (make build) or set MFU_LIBRARY to its path")


library_path = _find_library()
_lib = ctypes.CDLL(library_path)


# ---- mirrors of the C structs (checked against mfu_struct_size below) -----------------------

class _Error(ctypes.Structure):
    _fields_ = [("code", ctypes.c_int), ("line", ctypes.c_long), ("column", ctypes.c_long),
                ("field", ctypes.c_char * 64), ("message", ctypes.c_char * 512)]


_STEP_DOUBLES_A = ["time_s", "step_time_s", "tokens", "samples", "loss", "lr", "grad_norm",
                   "memory_bytes", "tokens_per_s"]
_STEP_DOUBLES_B = ["seq_len", "devices", "useful_tokens", "clock_mhz", "power_w",
                   "power_limit_w", "data_loading_s", "comm_s", "optimizer_s"]


class _Step(ctypes.Structure):
    _fields_ = ([("step", ctypes.c_int64)]
                + [(n, ctypes.c_double) for n in _STEP_DOUBLES_A]
                + [("tokens_per_s_scope", ctypes.c_int), ("flops_per_s", ctypes.c_double),
                   ("flops_per_s_scope", ctypes.c_int), ("mfu", ctypes.c_double),
                   ("mfu_scope", ctypes.c_int), ("samples_per_s", ctypes.c_double),
                   ("samples_per_s_scope", ctypes.c_int), ("flags", ctypes.c_uint32),
                   ("rank", ctypes.c_int32)]
                + [(n, ctypes.c_double) for n in _STEP_DOUBLES_B]
                + [("recompute", ctypes.c_int32), ("dtype", ctypes.c_int32)])


class _Config(ctypes.Structure):
    _fields_ = [("model", ctypes.c_char_p), ("arch", ctypes.c_void_p), ("seq", ctypes.c_int64),
                ("convention", ctypes.c_char_p), ("recompute", ctypes.c_char_p),
                ("device", ctypes.c_char_p), ("dtype", ctypes.c_char_p),
                ("peak_flops_per_s", ctypes.c_double), ("devices", ctypes.c_int64),
                ("jsonl_path", ctypes.c_char_p), ("name", ctypes.c_char_p),
                ("nvml", ctypes.c_bool), ("nvml_index", ctypes.c_int)]


class _Sample(ctypes.Structure):
    _fields_ = [("step", ctypes.c_int64), ("tokens_per_s", ctypes.c_double),
                ("model_flops_per_s_per_device", ctypes.c_double), ("mfu", ctypes.c_double),
                ("hfu", ctypes.c_double)]


class _Stat(ctypes.Structure):
    _fields_ = [("n", ctypes.c_size_t), ("median", ctypes.c_double), ("mean", ctypes.c_double),
                ("p10", ctypes.c_double), ("p90", ctypes.c_double)]


class _Evidence(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char * 32), ("value", ctypes.c_double)]


class _Finding(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_char * 32), ("severity", ctypes.c_int),
                ("first_step", ctypes.c_int64), ("last_step", ctypes.c_int64),
                ("nevidence", ctypes.c_size_t), ("evidence", _Evidence * 8),
                ("summary", ctypes.c_char * 320), ("next_step", ctypes.c_char * 320)]


def _sig(name, restype, *argtypes):
    fn = getattr(_lib, name)
    fn.restype = restype
    fn.argtypes = list(argtypes)
    return fn


_P = ctypes.POINTER
_struct_size = _sig("mfu_struct_size", ctypes.c_size_t, ctypes.c_char_p)
for _name, _cls in (("mfu_error", _Error), ("mfu_step", _Step), ("mfu_monitor_config", _Config),
                    ("mfu_monitor_sample", _Sample), ("mfu_report_stat", _Stat),
                    ("mfu_finding", _Finding)):
    if _struct_size(_name.encode()) != ctypes.sizeof(_cls):
        raise ImportError("%s does not match this binding (%s: C %d bytes, Python %d): rebuild "
                          "the library and the binding from one checkout"
                          % (library_path, _name, _struct_size(_name.encode()),
                             ctypes.sizeof(_cls)))

_version = _sig("mfu_version", ctypes.c_char_p)
_strerror = _sig("mfu_strerror", ctypes.c_char_p, ctypes.c_int)
_step_init = _sig("mfu_step_init", None, _P(_Step))
_mon_new = _sig("mfu_monitor_new", ctypes.c_int, _P(_Config), _P(ctypes.c_void_p), _P(_Error))
_mon_free = _sig("mfu_monitor_free", None, ctypes.c_void_p)
_mon_step = _sig("mfu_monitor_step", ctypes.c_int, ctypes.c_void_p, _P(_Step), _P(_Sample),
                 _P(_Error))
_mon_report = _sig("mfu_monitor_report", ctypes.c_int, ctypes.c_void_p, _P(ctypes.c_void_p),
                   _P(_Error))
_mon_fpt = _sig("mfu_monitor_model_flops_per_token", ctypes.c_double, ctypes.c_void_p)
_mon_peak = _sig("mfu_monitor_peak_flops_per_s", ctypes.c_double, ctypes.c_void_p)
_report_free = _sig("mfu_report_free", None, ctypes.c_void_p)
_report_summary = _sig("mfu_report_summary", _Stat, ctypes.c_void_p, ctypes.c_int)
_report_series_name = _sig("mfu_report_series_name", ctypes.c_char_p, ctypes.c_int)
_report_analysis = _sig("mfu_report_analysis", ctypes.c_void_p, ctypes.c_void_p)
_finding_count = _sig("mfu_analysis_finding_count", ctypes.c_size_t, ctypes.c_void_p)
_finding_at = _sig("mfu_analysis_finding", _P(_Finding), ctypes.c_void_p, ctypes.c_size_t)
_severity_name = _sig("mfu_severity_name", ctypes.c_char_p, ctypes.c_int)
_device_resolve = _sig("mfu_device_resolve", ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p,
                       _P(ctypes.c_void_p), _P(_Error))
_DEVICE_SLOT_BYTES = _struct_size(b"mfu_device_slot")
_dtype_parse = _sig("mfu_dtype_parse", ctypes.c_int, ctypes.c_char_p, _P(ctypes.c_int),
                    _P(_Error))
_device_peak = _sig("mfu_device_peak_flops_per_s", ctypes.c_int, ctypes.c_void_p, ctypes.c_int,
                    ctypes.c_bool, _P(ctypes.c_double), _P(_Error))

# summary()'s keys and the report series they read, by the library's series names
# (mfu_report_series_name), so a renumbered enum cannot shift them
_SERIES_NAMES = {"tokens_per_s": "tokens_per_second",
                 "tokens_per_s_per_device": "tokens_per_second_per_device",
                 "model_flops_per_s_per_device": "model_flops_per_second_per_device",
                 "hardware_flops_per_s_per_device": "hardware_flops_per_second_per_device",
                 "mfu": "mfu", "hfu": "hfu", "step_time_s": "step_time_s"}


def _series_numbers():
    by_name = {}
    for i in range(64):
        name = _report_series_name(i).decode()
        if name == "?":
            break
        by_name[name] = i
    missing = [n for n in _SERIES_NAMES.values() if n not in by_name]
    if missing:
        raise ImportError("%s has no report series %s: rebuild the library and the binding from "
                          "one checkout" % (library_path, ", ".join(missing)))
    return {key: by_name[name] for key, name in _SERIES_NAMES.items()}


_SERIES = _series_numbers()
_FLAG_LOSS_NAN = 1 << 1  # MFU_STEP_LOSS_NAN


def _raise(status, err):
    raise Error(_strerror(status).decode(), err.field.decode(), err.message.decode())


def _b(s):
    return None if s is None else os.fsencode(s) if isinstance(s, os.PathLike) else s.encode()


def version():
    """The library's version string ("0.1.0")."""
    return _version().decode()


def device_peak(device, dtype="bf16"):
    """Dense peak FLOP/s of one device of the table (`mfu devices`) for dtype; "cpu" is this
    machine's CPU (`mfu devices cpu`: computed from its instruction set, cores and clock)."""
    err = _Error()
    dev = ctypes.c_void_p()
    slot = ctypes.create_string_buffer(_DEVICE_SLOT_BYTES)  # holds the "cpu" entry
    st = _device_resolve(_b(device), slot, ctypes.byref(dev), ctypes.byref(err))
    if st:
        _raise(st, err)
    dt = ctypes.c_int()
    st = _dtype_parse(_b(dtype), ctypes.byref(dt), ctypes.byref(err))
    if st:
        _raise(st, err)
    out = ctypes.c_double()
    st = _device_peak(dev, dt.value, False, ctypes.byref(out), ctypes.byref(err))
    if st:
        _raise(st, err)
    return out.value


def flops_per_token(model, seq, convention=None, recompute=None):
    """Training model FLOPs per token of a preset or config.json at seq tokens per sequence,
    as `mfu flops --model MODEL --seq SEQ --json` gives .flops_per_token.model."""
    mon = Monitor(model=model, seq=seq, convention=convention, recompute=recompute)
    try:
        return mon.model_flops_per_token
    finally:
        mon.close()


def _summary_of(rep):
    out = {}
    for name, num in _SERIES.items():
        s = _report_summary(rep, num)
        out[name] = {"n": s.n, "median": s.median, "mean": s.mean, "p10": s.p10, "p90": s.p90}
    return out


def _findings_of(rep):
    a = _report_analysis(rep)
    out = []
    for i in range(_finding_count(a) if a else 0):
        f = _finding_at(a, i).contents
        out.append({
            "kind": f.kind.decode(), "severity": _severity_name(f.severity).decode(),
            "first_step": f.first_step, "last_step": f.last_step,
            "summary": f.summary.decode(), "next_step": f.next_step.decode(),
            "evidence": {f.evidence[k].name.decode(): f.evidence[k].value
                         for k in range(min(f.nevidence, 8))},
        })
    return out


class Sample:
    """One step's figures (NaN where they cannot be known). In `with monitor.step(...) as s`,
    set s.loss (and any step field by name) inside the block; the figures are filled when the
    block ends."""

    def __init__(self, step):
        self.step = step
        self.tokens_per_s = math.nan
        self.model_flops_per_s_per_device = math.nan
        self.mfu = math.nan
        self.hfu = math.nan
        self.step_time_s = math.nan
        self.loss = None
        self.fields = {}

    def __repr__(self):
        return ("Sample(step=%d, tokens_per_s=%.6g, mfu=%.4f, hfu=%.4f)"
                % (self.step, self.tokens_per_s, self.mfu, self.hfu))


class _Timed:
    def __init__(self, mon, sample, tokens):
        self.mon, self.sample, self.tokens = mon, sample, tokens

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
            convention=None, recompute=None, jsonl=None, name=None, nvml=False, nvml_index=0)

    model: a preset name (`mfu flops --list-presets`) or a config.json path; seq: tokens per
    sequence (required with a model); device: a device of `mfu devices` (or peak_flops_per_s);
    devices: devices in the job; jsonl: append each step to this canonical JSON-lines file
    (read by `mfu watch`, `mfu serve`, `mfu report`); nvml: sample GPU nvml_index's SM clock,
    power and power limit through NVML (loaded at run time; env MFU_NVML_LIBRARY overrides the
    library) at every step, so the report finds throttling and power capping. Bad values raise
    mfu.Error naming the option to fix; nvml=True without NVML raises it too.
    """

    def __init__(self, model=None, seq=0, device=None, devices=1, dtype=None,
                 peak_flops_per_s=0.0, convention=None, recompute=None, jsonl=None, name=None,
                 nvml=False, nvml_index=0):
        self._keep = [_b(model), _b(convention), _b(recompute), _b(device), _b(dtype),
                      _b(jsonl), _b(name)]
        cfg = _Config(self._keep[0], None, int(seq or 0), self._keep[1], self._keep[2],
                      self._keep[3], self._keep[4], float(peak_flops_per_s or 0),
                      int(devices or 0), self._keep[5], self._keep[6], bool(nvml),
                      int(nvml_index or 0))
        err = _Error()
        h = ctypes.c_void_p()
        st = _mon_new(ctypes.byref(cfg), ctypes.byref(h), ctypes.byref(err))
        if st:
            _raise(st, err)
        self._h = h
        self._next = 1
        self._last_t = None

    # -- lifetime --
    def close(self):
        """Free the monitor (and close its file). Further calls raise ValueError."""
        if getattr(self, "_h", None):
            _mon_free(self._h)
            self._h = None

    def __del__(self):
        self.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def _handle(self):
        if not self._h:
            raise ValueError("the monitor is closed")
        return self._h

    # -- steps --
    @property
    def model_flops_per_token(self):
        """Training model FLOPs per token of the model (NaN without one)."""
        return _mon_fpt(self._handle())

    @property
    def peak_flops_per_s(self):
        """The dense peak of one device the monitor divides by (NaN without one)."""
        return _mon_peak(self._handle())

    def record(self, tokens, step_time_s=None, loss=None, step=None, _sample=None, **fields):
        """Record one step: tokens of the whole job, its wall time in seconds (None: the time
        since the previous record, which needs one before it), loss (None or NaN: unknown;
        float('nan') from the training is flagged as a NaN loss), step number (None: the
        next). Other step fields by name: seq_len, useful_tokens, devices, clock_mhz, power_w,
        power_limit_w, data_loading_s, comm_s, optimizer_s, lr, grad_norm, memory_bytes,
        samples. Returns a Sample."""
        h = self._handle()
        now = time.perf_counter()
        if step_time_s is None:
            if self._last_t is None:
                raise ValueError("the first record needs step_time_s (or use monitor.step(): "
                                 "it times the block)")
            step_time_s = now - self._last_t
        s = _Step()
        _step_init(ctypes.byref(s))
        s.step = self._next if step is None else int(step)
        s.tokens = float(tokens)
        s.step_time_s = float(step_time_s)
        if loss is not None:
            lv = float(loss)
            s.loss = lv
            if math.isnan(lv) or math.isinf(lv):
                s.flags |= _FLAG_LOSS_NAN
        for k, v in fields.items():
            if k not in _STEP_DOUBLES_A + _STEP_DOUBLES_B or k in ("step_time_s", "tokens", "loss"):
                raise TypeError("record(): no step field %r" % k)
            if v is not None:
                setattr(s, k, float(v))
        out = _Sample()
        err = _Error()
        st = _mon_step(h, ctypes.byref(s), ctypes.byref(out), ctypes.byref(err))
        if st:
            _raise(st, err)
        self._last_t = now  # a later record without a time is timed from here
        self._next = s.step + 1
        r = _sample or Sample(s.step)
        r.step = s.step
        r.step_time_s = s.step_time_s
        r.tokens_per_s = out.tokens_per_s
        r.model_flops_per_s_per_device = out.model_flops_per_s_per_device
        r.mfu = out.mfu
        r.hfu = out.hfu
        return r

    def step(self, tokens, step=None):
        """A context manager that times its block as one step of `tokens` tokens and records
        it when the block ends without an exception: `with mon.step(tokens=n) as s: ...`."""
        self._handle()
        return _Timed(self, Sample(self._next if step is None else int(step)), tokens)

    # -- the report of the steps so far --
    def report(self):
        """The report of the steps so far, computed once: {"summary": summary(),
        "findings": findings()}. Asking for both this way costs one report, not two."""
        rep = ctypes.c_void_p()
        err = _Error()
        st = _mon_report(self._handle(), ctypes.byref(rep), ctypes.byref(err))
        if st:
            _raise(st, err)
        try:
            return {"summary": _summary_of(rep), "findings": _findings_of(rep)}
        finally:
            _report_free(rep)

    def summary(self):
        """Median, mean, p10, p90 and count of the steady steps (warm-up excluded, as `mfu
        report` does) for mfu, hfu, tokens_per_s, model_flops_per_s_per_device, ...: a dict of
        dicts."""
        return self.report()["summary"]

    def findings(self):
        """The analysis' findings of the steps so far (stalls, throttling, padding, a NaN
        loss, ...): a list of dicts with kind, severity, first_step, last_step, summary,
        next_step and evidence."""
        return self.report()["findings"]
