"""mfu._lib: libmfu through ctypes. The shared library, the mirrors of the public C structs the
binding reads or fills (checked at import against mfu_struct_size, so that a binding and a
library from different checkouts fail here instead of reading garbage), and the signatures of
the functions it calls. Internal: the public API is the mfu package.

The library is, in order: $MFU_LIBRARY; the libmfu.so installed inside this package (the
wheel's); the build tree's build/libmfu.so next to python/ (a checkout); the system's
library path.
"""

import ctypes
import ctypes.util
import os


def _find_library():
    env = os.environ.get("MFU_LIBRARY")
    if env:
        return env
    here = os.path.dirname(os.path.abspath(__file__))
    for cand in (os.path.join(here, "libmfu.so"),
                 os.path.join(here, "..", "..", "build", "libmfu.so")):
        if os.path.exists(cand):
            return os.path.normpath(cand)
    found = ctypes.util.find_library("mfu")
    if found:
        return found
    raise ImportError("libmfu.so not found: pip install the package (pip install ./python), "
                      "build it in the checkout (make build), or set MFU_LIBRARY to its path")


path = _find_library()
lib = ctypes.CDLL(path)


# ---- mirrors of the C structs ---------------------------------------------------------------

class Error(ctypes.Structure):
    _fields_ = [("code", ctypes.c_int), ("line", ctypes.c_long), ("column", ctypes.c_long),
                ("field", ctypes.c_char * 64), ("message", ctypes.c_char * 512)]


def _sig(name, restype, *argtypes):
    try:
        fn = getattr(lib, name)
    except AttributeError:
        raise ImportError("%s is older than this binding (no %s): rebuild the library and the "
                          "binding from one checkout" % (path, name)) from None
    fn.restype = restype
    fn.argtypes = list(argtypes)
    return fn


P = ctypes.POINTER


class FieldInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("kind", ctypes.c_int), ("offset", ctypes.c_size_t),
                ("size", ctypes.c_size_t), ("bit", ctypes.c_uint32), ("unit", ctypes.c_char_p),
                ("what", ctypes.c_char_p), ("help", ctypes.c_char_p)]


# The fields of mfu_step as the library lists them (mfu_step_field_at: include/mfu/step_fields.h),
# so that this mirror cannot drift from the C struct: (name, kind, offset, size, bit) in struct
# order. Kinds are mfu_step_kind's.
KIND_STEP, KIND_DOUBLE, KIND_SCOPE, KIND_FLAGS, KIND_RANK, KIND_CODE, KIND_BIT, KIND_NANBIT = range(8)
_KIND_CTYPES = {KIND_STEP: ctypes.c_int64, KIND_DOUBLE: ctypes.c_double, KIND_SCOPE: ctypes.c_int,
                KIND_FLAGS: ctypes.c_uint32, KIND_RANK: ctypes.c_int32, KIND_CODE: ctypes.c_int32}
_field_count = _sig("mfu_step_field_count", ctypes.c_size_t)
_field_at = _sig("mfu_step_field_at", P(FieldInfo), ctypes.c_size_t)
STEP_FIELDS = []
for _i in range(_field_count()):
    _f = _field_at(_i).contents
    STEP_FIELDS.append((_f.name.decode(), _f.kind, _f.offset, _f.size, _f.bit))
for _name, _kind, _off, _size, _bit in STEP_FIELDS:
    if _kind not in _KIND_CTYPES and _kind not in (KIND_BIT, KIND_NANBIT):
        raise ImportError("%s has a step field %r of a kind this binding does not know (%d): "
                          "rebuild the library and the binding from one checkout"
                          % (path, _name, _kind))
# The doubles a caller may set by name: those without a scope (tokens_per_s has one).
STEP_UNSCOPED_DOUBLES = [f[0] for f in STEP_FIELDS if f[1] == KIND_DOUBLE
                         and not any(g[0] == f[0] + "_scope" for g in STEP_FIELDS)]
STEP_BITS = {f[0]: f[4] for f in STEP_FIELDS if f[1] in (KIND_BIT, KIND_NANBIT)}


class Step(ctypes.Structure):
    _fields_ = [(f[0], _KIND_CTYPES[f[1]]) for f in STEP_FIELDS if f[1] in _KIND_CTYPES]


for _name, _kind, _off, _size, _bit in STEP_FIELDS:
    if _kind in _KIND_CTYPES and (getattr(Step, _name).offset != _off
                                  or getattr(Step, _name).size != _size):
        raise ImportError("%s: step field %s lies at %d (%d bytes) in C, %d (%d) here: rebuild "
                          "the library and the binding from one checkout"
                          % (path, _name, _off, _size, getattr(Step, _name).offset,
                             getattr(Step, _name).size))


class Config(ctypes.Structure):
    _fields_ = [("model", ctypes.c_char_p), ("arch", ctypes.c_void_p), ("seq", ctypes.c_int64),
                ("convention", ctypes.c_char_p), ("recompute", ctypes.c_char_p),
                ("device", ctypes.c_char_p), ("dtype", ctypes.c_char_p),
                ("peak_flops_per_s", ctypes.c_double), ("devices", ctypes.c_int64),
                ("jsonl_path", ctypes.c_char_p), ("name", ctypes.c_char_p),
                ("nvml", ctypes.c_bool), ("nvml_index", ctypes.c_int),
                ("attention", ctypes.c_char_p)]


class Sample(ctypes.Structure):
    _fields_ = [("step", ctypes.c_int64), ("tokens_per_s", ctypes.c_double),
                ("model_flops_per_s_per_device", ctypes.c_double), ("mfu", ctypes.c_double),
                ("hfu", ctypes.c_double), ("energy_j", ctypes.c_double),
                ("joules_per_pflop", ctypes.c_double), ("tokens_per_kwh", ctypes.c_double),
                ("tensor_active", ctypes.c_double)]


class Energy(ctypes.Structure):  # mfu_energy (mfu/report.h)
    _fields_ = [("steps", ctypes.c_size_t), ("power_steps", ctypes.c_size_t),
                ("joules", ctypes.c_double), ("useful_pflop", ctypes.c_double),
                ("joules_per_pflop", ctypes.c_double), ("tokens", ctypes.c_double),
                ("tokens_per_kwh", ctypes.c_double), ("tensor_steps", ctypes.c_size_t),
                ("tensor_active", ctypes.c_double), ("mfu", ctypes.c_double),
                ("check", ctypes.c_int), ("check_text", ctypes.c_char * 320)]


class Stat(ctypes.Structure):
    _fields_ = [("n", ctypes.c_size_t), ("median", ctypes.c_double), ("mean", ctypes.c_double),
                ("p10", ctypes.c_double), ("p90", ctypes.c_double)]


class Evidence(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char * 32), ("value", ctypes.c_double)]


class Finding(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_char * 32), ("severity", ctypes.c_int),
                ("first_step", ctypes.c_int64), ("last_step", ctypes.c_int64),
                ("nevidence", ctypes.c_size_t), ("evidence", Evidence * 8),
                ("summary", ctypes.c_char * 320), ("next_step", ctypes.c_char * 320)]


class Call(ctypes.Structure):  # mfu_monitor_call (mfu/monitor.h): Monitor.record's one argument
    _fields_ = [("monitor", ctypes.c_void_p), ("sample", Sample), ("error", Error),
                ("step", Step)]


struct_size = _sig("mfu_struct_size", ctypes.c_size_t, ctypes.c_char_p)
for _name, _cls in (("mfu_error", Error), ("mfu_step", Step), ("mfu_monitor_config", Config),
                    ("mfu_monitor_sample", Sample), ("mfu_report_stat", Stat),
                    ("mfu_finding", Finding), ("mfu_energy", Energy), ("mfu_monitor_call", Call)):
    if struct_size(_name.encode()) != ctypes.sizeof(_cls):
        raise ImportError("%s does not match this binding (%s: C %d bytes, Python %d): rebuild "
                          "the library and the binding from one checkout"
                          % (path, _name, struct_size(_name.encode()), ctypes.sizeof(_cls)))
# held opaquely: only their sizes matter here
DEVICE_SLOT_BYTES = struct_size(b"mfu_device_slot")
ARCH_BYTES = struct_size(b"mfu_arch")
if not DEVICE_SLOT_BYTES or not ARCH_BYTES:
    raise ImportError("%s is older than this binding (no size for mfu_device_slot or mfu_arch): "
                      "rebuild the library and the binding from one checkout" % path)

version = _sig("mfu_version", ctypes.c_char_p)
strerror = _sig("mfu_strerror", ctypes.c_char_p, ctypes.c_int)
step_init = _sig("mfu_step_init", None, P(Step))
monitor_new = _sig("mfu_monitor_new", ctypes.c_int, P(Config), P(ctypes.c_void_p), P(Error))
monitor_free = _sig("mfu_monitor_free", None, ctypes.c_void_p)
monitor_step = _sig("mfu_monitor_step", ctypes.c_int, ctypes.c_void_p, P(Step), P(Sample),
                    P(Error))
monitor_record_many = _sig("mfu_monitor_record_many", ctypes.c_size_t, ctypes.c_void_p, P(Step),
                           ctypes.c_size_t, P(Sample), P(Error))
monitor_flush = _sig("mfu_monitor_flush", ctypes.c_int, ctypes.c_void_p, P(Error))
monitor_set_flush_interval = _sig("mfu_monitor_set_flush_interval", ctypes.c_int,
                                  ctypes.c_void_p, ctypes.c_double, P(Error))
monitor_report = _sig("mfu_monitor_report", ctypes.c_int, ctypes.c_void_p, P(ctypes.c_void_p),
                      P(Error))
monitor_fpt = _sig("mfu_monitor_model_flops_per_token", ctypes.c_double, ctypes.c_void_p)
monitor_peak = _sig("mfu_monitor_peak_flops_per_s", ctypes.c_double, ctypes.c_void_p)
report_free = _sig("mfu_report_free", None, ctypes.c_void_p)
report_summary = _sig("mfu_report_summary", Stat, ctypes.c_void_p, ctypes.c_int)
report_energy = _sig("mfu_report_get_energy", P(Energy), ctypes.c_void_p)
tensor_check_name = _sig("mfu_tensor_check_name", ctypes.c_char_p, ctypes.c_int)
report_series_name = _sig("mfu_report_series_name", ctypes.c_char_p, ctypes.c_int)
report_analysis = _sig("mfu_report_analysis", ctypes.c_void_p, ctypes.c_void_p)
finding_count = _sig("mfu_analysis_finding_count", ctypes.c_size_t, ctypes.c_void_p)
finding_at = _sig("mfu_analysis_finding", P(Finding), ctypes.c_void_p, ctypes.c_size_t)
severity_name = _sig("mfu_severity_name", ctypes.c_char_p, ctypes.c_int)
device_resolve = _sig("mfu_device_resolve", ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p,
                      P(ctypes.c_void_p), P(Error))
dtype_parse = _sig("mfu_dtype_parse", ctypes.c_int, ctypes.c_char_p, P(ctypes.c_int), P(Error))
device_peak = _sig("mfu_device_peak_flops_per_s", ctypes.c_int, ctypes.c_void_p, ctypes.c_int,
                   ctypes.c_bool, P(ctypes.c_double), P(Error))
arch_from_config_text = _sig("mfu_arch_from_config_text", ctypes.c_int, ctypes.c_char_p,
                             ctypes.c_size_t, ctypes.c_void_p, ctypes.c_void_p, P(Error))
