"""mfu._inputs: what a training script already holds, turned into what libmfu takes.

- a model: a preset name, a config.json path (or a model directory holding one), a dict of
  Hugging Face config fields, a config object (.to_dict(), as transformers' PretrainedConfig),
  or a model with .config (a transformers model; a torch module holding one, as a
  LightningModule does, is searched for it) -> a preset/path string or config.json text;
- a device: a torch.device, "cuda", "cuda:N" (named by the driver: torch.cuda.get_device_name,
  else NVML), "cpu", or a name of the device table -> a name the library resolves;
- a dtype: a torch.dtype or a name -> a dtype name (float32 on a GPU that lets PyTorch use
  TF32 for matmuls is "tf32").

Nothing here imports torch unless the caller handed over a torch object or a "cuda" device:
the binding itself needs only the standard library. Internal: the API is the mfu package.
"""

import ctypes
import json
import os
import sys


class Error(ValueError):
    """Bad input or a failed call of libmfu. .status is the library's status name ("unknown
    name", "missing", ...), .field the argument concerned ("" when none); str() says what to
    change. A ValueError, so that code catching ValueError for bad arguments catches it."""

    def __init__(self, status, field, message):
        super().__init__(message)
        self.status = status
        self.field = field


class InvalidType(Error, TypeError):
    """An argument of a type mfu cannot use (model=42): an mfu.Error and a TypeError."""

    def __init__(self, field, message):
        super().__init__("invalid", field, message)


def _is_torch(obj, name):
    t = type(obj)
    return t.__module__.split(".")[0] == "torch" and t.__name__ == name


# ---- model -----------------------------------------------------------------------------------

def _jsonable(v):
    if isinstance(v, (set, frozenset, tuple)):
        return list(v)
    return str(v)  # torch.dtype and other objects a config may carry: never FLOPs fields


def _config_dict(cfg):
    """A config object's fields as a dict, or None when it is not one."""
    to_dict = getattr(cfg, "to_dict", None)
    if callable(to_dict):
        d = to_dict()
        if isinstance(d, dict):
            return d
    return None


def _find_config(model):
    """model.config, or the first submodule's .config (a LightningModule holding a
    transformers model), or None."""
    cfg = getattr(model, "config", None)
    if cfg is not None and (isinstance(cfg, dict) or _config_dict(cfg) is not None):
        return cfg
    modules = getattr(model, "modules", None)
    if callable(modules):
        for sub in modules():
            if sub is model:
                continue
            cfg = getattr(sub, "config", None)
            if cfg is not None and (isinstance(cfg, dict) or _config_dict(cfg) is not None):
                return cfg
    return None


MODEL_KINDS = ("a preset name (mfu flops --list-presets), a config.json path, a dict of Hugging "
               "Face config fields, a config object (.to_dict()) or a model with .config")


def model_spec(model, field="model"):
    """(string, text, name): string is a preset name or config.json path for the library (or
    None), text the config.json text of a dict or config object (or None), name the model's
    name for the run's metadata ("" when none). None gives (None, None, "")."""
    if model is None:
        return None, None, ""
    if isinstance(model, (str, os.PathLike)):
        s = os.fspath(model)
        if isinstance(s, bytes):
            s = os.fsdecode(s)
        if os.path.isdir(s):
            cand = os.path.join(s, "config.json")
            if not os.path.isfile(cand):
                raise Error("invalid", field, "%s: a directory without config.json; give a "
                            "preset name or a config.json path" % s)
            s = cand
        return s, None, s
    if isinstance(model, dict):
        d = model
    else:
        d = _config_dict(model)
        if d is None:
            cfg = _find_config(model)
            if cfg is None:
                raise InvalidType(field, "%s: give %s; got %s%s" % (
                    field, MODEL_KINDS, type(model).__name__,
                    " (a module without .config)" if hasattr(model, "parameters") else ""))
            d = cfg if isinstance(cfg, dict) else _config_dict(cfg)
    try:
        text = json.dumps(d, default=_jsonable)
    except (TypeError, ValueError) as e:
        raise InvalidType(field, "%s: the config's fields cannot be written as JSON: %s"
                          % (field, e)) from None
    name = ""
    for k in ("_name_or_path", "name_or_path", "model_type"):
        if isinstance(d.get(k), str) and d.get(k):
            name = d[k]
            break
    return None, text, name


# ---- device ----------------------------------------------------------------------------------

def _nvml_name(index):
    """The name NVML gives GPU index (NVML's order), or None without NVML. The library file is
    $MFU_NVML_LIBRARY (as libmfu's), else libnvidia-ml.so.1."""
    try:
        nv = ctypes.CDLL(os.environ.get("MFU_NVML_LIBRARY") or "libnvidia-ml.so.1")
    except OSError:
        return None
    try:
        if nv.nvmlInit_v2() != 0:
            return None
    except AttributeError:
        return None
    try:
        h = ctypes.c_void_p()
        if nv.nvmlDeviceGetHandleByIndex_v2(ctypes.c_uint(index), ctypes.byref(h)) != 0:
            return None
        buf = ctypes.create_string_buffer(256)
        if nv.nvmlDeviceGetName(h, buf, ctypes.c_uint(len(buf))) != 0:
            return None
        return buf.value.decode(errors="replace")
    finally:
        nv.nvmlShutdown()


def _nvml_index(index, field, spec):
    """CUDA's device index -> NVML's, through CUDA_VISIBLE_DEVICES when it lists indices."""
    vis = os.environ.get("CUDA_VISIBLE_DEVICES")
    if vis is None or vis.strip() == "":
        return index
    items = [v.strip() for v in vis.split(",") if v.strip()]
    if not all(v.isdigit() for v in items):
        raise Error("unsupported", field, "device %r: CUDA_VISIBLE_DEVICES=%s names GPUs by "
                    "UUID, which only torch.cuda can map; give the GPU's name or id (mfu "
                    "devices) instead" % (spec, vis))
    if index >= len(items):
        raise Error("invalid", field, "device %r: CUDA_VISIBLE_DEVICES=%s shows %d GPU(s)"
                    % (spec, vis, len(items)))
    return int(items[index])


def _accelerator_name(kind, index, spec, field):
    """The driver's name of accelerator `index` (None: the current one) of torch device type
    `kind` ("cuda", "xpu"): torch.<kind>.get_device_name when PyTorch has it and the device
    is there, else (CUDA only) NVML."""
    torch = sys.modules.get("torch")
    if torch is None:
        try:
            import torch  # noqa: F811 - only for a device that needs it named
        except ImportError:
            torch = None
    mod = getattr(torch, kind, None) if torch is not None else None
    avail = getattr(mod, "is_available", None)
    if mod is not None and callable(avail) and avail():
        if index is None:
            index = mod.current_device()
        count = mod.device_count()
        if index >= count:
            raise Error("invalid", field, "device %r: PyTorch sees %d %s device(s)"
                        % (spec, count, kind))
        return mod.get_device_name(index)
    if kind == "cuda":
        name = _nvml_name(_nvml_index(index or 0, field, spec))
        if name:
            return name
    raise Error("unsupported", field, "device %r: neither PyTorch nor NVML names this %s "
                "device here; give its name or id (mfu devices) or peak_flops_per_s" % (spec, kind))


def device_spec(device, field="device"):
    """A device name for the library, or None. torch.device / "cuda[:N]" / "xpu[:N]" are named
    by the driver; "cpu" stays "cpu"; other strings are names of the table."""
    if device is None:
        return None
    if _is_torch(device, "device"):
        kind, index, spec = device.type, device.index, str(device)
    elif isinstance(device, str):
        spec = device
        kind, _, idx = device.strip().partition(":")
        kind = kind.lower()
        if kind not in ("cuda", "xpu", "mps", "meta") or (idx and not idx.isdigit()):
            return device  # a name of the table ("h100-sxm", "NVIDIA H100 80GB HBM3", "cpu")
        index = int(idx) if idx else None
    else:
        raise InvalidType(field, "%s: give a torch.device, \"cuda:N\", \"cpu\" or a device of "
                          "`mfu devices`; got %s" % (field, type(device).__name__))
    if kind == "cpu":
        return "cpu"
    if kind in ("mps", "meta"):
        raise Error("unsupported", field, "device %r: mfu has no peak for it; give "
                    "peak_flops_per_s" % spec)
    return _accelerator_name(kind, index, spec, field)


# ---- dtype -----------------------------------------------------------------------------------

def _tf32_matmuls():
    torch = sys.modules.get("torch")
    if torch is None:
        return False
    prec = getattr(torch, "get_float32_matmul_precision", None)
    if callable(prec) and prec() != "highest":
        return True
    return bool(getattr(torch.backends.cuda.matmul, "allow_tf32", False))


def dtype_spec(dtype, device_id, field="dtype"):
    """A dtype name for the library, or None (the library's default). device_id is the
    resolved device's table id ("cpu", "h100-sxm") or None: a CPU with no dtype is fp32, a
    torch.float32 on a GPU with TF32 matmuls allowed is tf32."""
    if dtype is None:
        return "fp32" if device_id == "cpu" else None
    if _is_torch(dtype, "dtype"):
        name = str(dtype)  # "torch.bfloat16": the library takes the torch. prefix
        if name == "torch.float32" and device_id not in (None, "cpu") and _tf32_matmuls():
            return "tf32"
        return name
    if isinstance(dtype, str):
        return dtype
    raise InvalidType(field, "%s: give a torch.dtype or a name (bf16, fp16, fp32, tf32, fp8, "
                      "fp64); got %s" % (field, type(dtype).__name__))
