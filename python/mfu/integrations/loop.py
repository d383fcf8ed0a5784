"""mfu.integrations.loop: MFU of a plain PyTorch loop or an Accelerate one.

    from mfu.integrations import LoopMonitor
    meter = LoopMonitor(model, accelerator=accelerator, jsonl="run.mfu.jsonl")
    for batch in loader:
        with meter.step(batch) as s:          # tokens, sequence length, padding of the batch
            with accelerator.accumulate(model):
                loss = model(**batch).loss
                accelerator.backward(loss)
                optimizer.step()
                optimizer.zero_grad()
            s.loss = loss
        # s.mfu, s.tflops, s.tokens_per_second: this step's; accelerator.log got them

Without an accelerator, give device= and dtype= (or let them be read from the model's first
parameter) and, to log somewhere, log=callable(figures_dict, step). With one, the device, the
mixed precision, the number of processes and the logger (accelerator.log, every log_every
steps) come from it, and the file is written by the main process only. A batch belongs to the
optimizer step that ends at the next batch with accelerator.sync_gradients (every batch
without an accelerator): under gradient accumulation one step has several batches, and the
Sample of a batch that ends no step stays NaN.
"""

from .. import Sample
from ._common import OPTIONS, WithMeter, precision_dtype, trainer_meter


def _first_param_device(model):
    params = getattr(model, "parameters", None)
    if callable(params):
        for p in params():
            return p.device
    return None


class _Step:
    def __init__(self, loop, batch, step, sync):
        self.loop, self.batch, self.step_number, self.sync = loop, batch, step, sync
        self.sample = Sample(step if step is not None else 0)

    def __enter__(self):
        self.loop.meter.start()
        self.loop.meter.add(self.batch)
        return self.sample

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.loop._end(self.sample, self.step_number, self.sync)
        else:
            self.loop.meter.discard()  # a failed step counts nothing
        return False


class LoopMonitor(WithMeter):
    """LoopMonitor(model, device=None, dtype=None, devices=None, accelerator=None,
    jsonl=None, log=None, log_every=1, name=None, attention=None, convention=None,
    recompute=None, peak_flops_per_s=None, nvml=False, nvml_index=0)

    model: anything mfu.Monitor takes (a transformers model: its .config); devices: devices
    in the job, and the factor from this process's tokens to the job's (None: the
    accelerator's processes, else 1). .samples holds every recorded step's mfu.Sample,
    .monitor the mfu.Monitor."""

    def __init__(self, model, device=None, dtype=None, devices=None, accelerator=None,
                 jsonl=None, log=None, log_every=1, name=None, attention=None,
                 convention=None, recompute=None, peak_flops_per_s=None, nvml=False,
                 nvml_index=0):
        values = locals()
        opts = {k: values[k] for k in OPTIONS}
        self.accelerator = accelerator
        acc = accelerator
        if acc is not None and log is None:
            def log(figures, step):
                acc.log(figures, step=step)
        self.log = log
        self.log_every = max(int(log_every), 1)
        self.meter = trainer_meter(
            opts, model, acc.device if acc is not None else _first_param_device(model),
            precision_dtype(acc.mixed_precision) if acc is not None else None,
            devices or (acc.num_processes if acc is not None else 1),
            acc is None or acc.is_main_process)
        self._since_log = 0

    def step(self, batch, step=None, sync=None):
        """A context manager for one batch: reads its shape on entry, and on a clean exit
        ends the optimizer step when sync (None: accelerator.sync_gradients, or True without
        an accelerator). Yields an mfu.Sample (set .loss inside; figures after the block)."""
        return _Step(self, batch, step, sync)

    def _end(self, sample, step, sync):
        if sync is None:
            sync = self.accelerator is None or bool(self.accelerator.sync_gradients)
        if not sync:
            return
        s = self.meter.record(step=step, loss=sample.loss)
        sample.__dict__.update(s.__dict__)
        self._since_log += 1
        if self.log is not None and self._since_log >= self.log_every:
            self._since_log = 0
            self.log(self.meter.metrics(), s.step)

    def flush(self):
        """Write the steps still held in memory to the file (Monitor.flush)."""
        self.meter.flush()

    def close(self):
        """Close the Monitor (and its file)."""
        self.meter.close()
