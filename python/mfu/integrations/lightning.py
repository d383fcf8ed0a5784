"""mfu.integrations.lightning: MFU in a Lightning Trainer's loggers.

    from mfu.integrations.lightning import MFUCallback
    trainer = L.Trainer(max_steps=1000, callbacks=[MFUCallback(jsonl="run.mfu.jsonl")])
    trainer.fit(module, loader)    # the loggers get mfu, tflops, tokens_per_second per step

The callback reads the architecture from the LightningModule (its .config, or the .config of
the first submodule that has one: a transformers model it holds; or give model=), the device
from pl_module.device, the precision from trainer.precision (else the parameters' dtype) and
the world size from trainer.world_size. Each training batch (on_train_batch_start) adds its
tokens, sequence length and padding (attention_mask) to the current optimizer step; a step is
recorded when trainer.global_step moves (gradient accumulation: several batches), timed from
the previous one, with the loss the training step returned, and logged with
pl_module.log_dict(on_step=True), so every logger of the trainer gets it at its cadence
(log_every_n_steps). Works with the `lightning` and the `pytorch_lightning` package.
"""

import torch

try:
    import lightning.pytorch as pl
except ImportError:  # the older package name
    import pytorch_lightning as pl

from ._common import OPTIONS, WithMeter, precision_dtype, trainer_meter


def _loss_of(outputs):
    loss = outputs.get("loss") if isinstance(outputs, dict) else outputs
    if torch.is_tensor(loss) and loss.numel() == 1:
        return float(loss.detach())
    return None


class MFUCallback(WithMeter, pl.Callback):
    """MFUCallback(model=None, device=None, dtype=None, jsonl=None, name=None,
    attention=None, convention=None, recompute=None, peak_flops_per_s=None, nvml=False,
    nvml_index=0, prog_bar=False): None reads it from the trainer and the module; the others
    as mfu.Monitor; prog_bar shows mfu in the progress bar. jsonl is written by global rank 0
    only. .samples holds every step's mfu.Sample, .monitor the mfu.Monitor."""

    def __init__(self, model=None, device=None, dtype=None, jsonl=None, name=None,
                 attention=None, convention=None, recompute=None, peak_flops_per_s=None,
                 nvml=False, nvml_index=0, prog_bar=False):
        super().__init__()
        values = locals()
        self.opts = {k: values[k] for k in OPTIONS}
        self.prog_bar = prog_bar
        self.meter = None
        self._global_step = 0

    def on_train_start(self, trainer, pl_module):
        self.meter = trainer_meter(self.opts, pl_module, pl_module.device,
                                   precision_dtype(trainer.precision), trainer.world_size,
                                   trainer.is_global_zero)
        self._global_step = trainer.global_step

    def on_train_batch_start(self, trainer, pl_module, batch, batch_idx):
        self.meter.add(batch)

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        if trainer.global_step == self._global_step:
            return  # accumulating gradients (or a skipped optimizer step): the step goes on
        self._global_step = trainer.global_step
        self.meter.record(step=trainer.global_step, loss=_loss_of(outputs))
        figures = self.meter.metrics()
        # float64 tensors: Lightning keeps a tensor's dtype (a float would become float32)
        pl_module.log_dict({k: torch.tensor(v, dtype=torch.float64) for k, v in figures.items()},
                           on_step=True, on_epoch=False, prog_bar=self.prog_bar, logger=True)

    def on_train_end(self, trainer, pl_module):
        if self.meter is not None:
            self.meter.flush()  # the file has every step once fit() returns
