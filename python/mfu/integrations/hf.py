"""mfu.integrations.hf: MFU in the Hugging Face Trainer's logs.

    from mfu.integrations.hf import MFUCallback
    trainer = Trainer(model=model, args=args, train_dataset=ds,
                      callbacks=[MFUCallback(jsonl="run.mfu.jsonl")])
    trainer.train()          # every log of the loss also has mfu, tflops, tokens_per_second

The callback reads the architecture from the trainer's model (model.config), the device from
args.device, the precision from args.bf16 / args.fp16 (else the parameters' dtype) and the
world size from args.world_size. The Trainer hands callbacks no batch, so the callback wraps
the model's forward for the length of train(): each training forward (model.training, grad
enabled) adds its input_ids (tokens, sequence length) and attention_mask (padding) to the
current optimizer step. A step lasts from one on_step_end to the next (the first from its
on_step_begin). Each log of the loss gets the time-weighted figures of the steps since the
previous log (with logging_steps=1, the step's own, which are the file's), in the logs the
other callbacks see after this one and in state.log_history.

Callbacks passed to Trainer(callbacks=...) run after the reporting integrations
(report_to: TensorBoard, W&B, ...). add_to(trainer, ...) puts this one first, so that they log
mfu as well.
"""

import torch
from transformers import TrainerCallback

from ._common import OPTIONS, WithMeter, precision_dtype, trainer_meter


class MFUCallback(WithMeter, TrainerCallback):
    """MFUCallback(model=None, device=None, dtype=None, jsonl=None, name=None,
    attention=None, convention=None, recompute=None, peak_flops_per_s=None, nvml=False,
    nvml_index=0): None reads it from the Trainer (model: its model's .config); the others as
    mfu.Monitor. jsonl is written by the main process only. .samples holds every step's
    mfu.Sample, .monitor the mfu.Monitor."""

    def __init__(self, model=None, device=None, dtype=None, jsonl=None, name=None,
                 attention=None, convention=None, recompute=None, peak_flops_per_s=None,
                 nvml=False, nvml_index=0):
        values = locals()
        self.opts = {k: values[k] for k in OPTIONS}
        self.meter = None
        self._unwrap = None

    def on_train_begin(self, args, state, control, model=None, **kwargs):
        dtype = precision_dtype("bf16" if args.bf16 else "16" if args.fp16 else None)
        self.meter = trainer_meter(self.opts, model, args.device, dtype, args.world_size,
                                   state.is_world_process_zero)
        self._wrap(model)

    def _wrap(self, model):
        orig = model.forward
        had = "forward" in vars(model)
        meter = self.meter

        def forward(*a, **k):
            if model.training and torch.is_grad_enabled():
                batch = dict(k)
                if a and "input_ids" not in batch and "inputs_embeds" not in batch:
                    batch["input_ids"] = a[0]
                meter.add(batch)
            return orig(*a, **k)

        model.forward = forward

        def unwrap():
            if had:
                model.forward = orig
            else:
                del model.forward

        self._unwrap = unwrap

    def on_step_begin(self, args, state, control, **kwargs):
        self.meter.start()

    def on_step_end(self, args, state, control, **kwargs):
        self.meter.record(step=state.global_step)

    def on_log(self, args, state, control, logs=None, **kwargs):
        if logs is None or "loss" not in logs or self.meter is None:
            return  # an evaluation's or the run's summary: no steps of their own
        figures = self.meter.metrics()
        if not figures:
            return
        logs.update(figures)
        last = state.log_history[-1] if state.log_history else None
        if last is not None and last.get("step") == state.global_step and "loss" in last:
            last.update(figures)

    def on_train_end(self, args, state, control, **kwargs):
        if self.meter is not None:
            self.meter.flush()  # the file has every step once train() returns
        if self._unwrap:
            self._unwrap()
            self._unwrap = None


def add_to(trainer, **kwargs):
    """Make an MFUCallback(**kwargs), put it first among trainer's callbacks (before the
    reporting integrations, so that they log its figures too) and return it."""
    cb = MFUCallback(**kwargs)
    trainer.callback_handler.callbacks.insert(0, cb)
    return cb
