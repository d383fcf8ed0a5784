"""mfu.integrations: MFU where training already reports, from the objects it hands over.

    HFTrainerCallback   a transformers TrainerCallback (mfu.integrations.hf.MFUCallback)
    LightningCallback   a Lightning Callback (mfu.integrations.lightning.MFUCallback)
    LoopMonitor         a plain PyTorch or Accelerate loop (mfu.integrations.loop.LoopMonitor)

Each reads the model's architecture from the model it is given (.config), the tokens and the
sequence length from each batch, the padding from its attention_mask, the device, precision
and world size from the trainer, and logs `mfu`, `tflops` (useful model TFLOP/s per device)
and `tokens_per_second` (whole job) to the framework's own logger, plus (on rank 0) the
canonical JSON-lines file of mfu.Monitor. A name is imported only when used, so this module
needs neither transformers nor Lightning. docs/python.md has the examples.
"""

from ._common import batch_shape

__all__ = ["HFTrainerCallback", "LightningCallback", "LoopMonitor", "batch_shape"]


def __getattr__(name):
    if name == "HFTrainerCallback":
        from .hf import MFUCallback
        return MFUCallback
    if name == "LightningCallback":
        from .lightning import MFUCallback
        return MFUCallback
    if name == "LoopMonitor":
        from .loop import LoopMonitor
        return LoopMonitor
    raise AttributeError("module 'mfu.integrations' has no attribute %r" % name)
