"""tests/python/test_integrations.py - mfu.integrations with the real packages, on the CPU:
the Hugging Face Trainer and Lightning each run a few real training steps of a tiny GPT-2
built from a config (nothing downloaded: HF_HUB_OFFLINE=1), and what they logged as `mfu`,
`tflops` and `tokens_per_second` must be what `mfu report` computes from the JSON-lines file
of the same run; the loop helper does the same under a real Accelerator with a tracker of its
own; and the binding's torch inputs (torch.device, "cuda:N" named through NVML, torch.dtype,
a config object, a module holding a model) resolve as the CLI resolves their names.

Run by tests/e2e/python_integrations.sh with the project venv (scripts/pyenv.sh: Debian's
torch, the pinned PyPI packages) and the binding of this checkout (PYTHONPATH, MFU_LIBRARY).
MFU_BIN is the CLI, MFU_FAKE_NVML the fake NVML library the tests build.
"""
import csv
import glob
import json
import math
import os
import subprocess
import tempfile
import unittest

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"

import torch  # noqa: E402

# Debian's torch 1.13 cannot import torch.distributed._shard on Python 3.11 (a dataclass
# with a mutable default), which LightningModule.__init__ does for torch < 2.1; with
# torch.distributed reported unavailable Lightning skips it (one process needs none).
torch.distributed.is_available = lambda: False

import lightning.pytorch as L  # noqa: E402
from accelerate import Accelerator  # noqa: E402
from accelerate.tracking import GeneralTracker  # noqa: E402
from lightning.pytorch.loggers import CSVLogger  # noqa: E402
from transformers import (GPT2Config, GPT2LMHeadModel, Trainer, TrainerCallback,  # noqa: E402
                          TrainingArguments)
from transformers.utils import logging as hf_logging  # noqa: E402

import mfu  # noqa: E402
from mfu.integrations import HFTrainerCallback, LightningCallback, LoopMonitor  # noqa: E402
from mfu.integrations import batch_shape  # noqa: E402
from mfu.integrations.hf import add_to  # noqa: E402

hf_logging.set_verbosity_error()
MFU_BIN = os.environ["MFU_BIN"]
SEQ = 32
TINY = dict(n_layer=2, n_embd=64, n_head=4, vocab_size=256, n_positions=64)


def tiny_gpt2():
    torch.manual_seed(0)
    return GPT2LMHeadModel(GPT2Config(**TINY))


class Padded(torch.utils.data.Dataset):
    """Token sequences of SEQ ending in padding (attention_mask 0): `pads` tokens, or 0, 4,
    8, 12 in turn (so that 4 sequences in order have 104 of 128 tokens real)."""

    def __init__(self, pads=None):
        self.pads = pads

    def __len__(self):
        return 64

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        ids = torch.randint(0, TINY["vocab_size"], (SEQ,), generator=g)
        mask = torch.ones(SEQ, dtype=torch.long)
        mask[SEQ - (4 * (i % 4) if self.pads is None else self.pads):] = 0
        return {"input_ids": ids, "attention_mask": mask, "labels": ids}


def report(path, config):
    """`mfu report FILE --config CONFIG --json` of a run's file (its model only)."""
    cfg = os.path.join(os.path.dirname(path), "config.json")
    with open(cfg, "w") as f:
        json.dump(config.to_dict() if hasattr(config, "to_dict") else config, f, default=str)
    out = subprocess.run([MFU_BIN, "report", path, "--config", cfg, "--json"], check=True,
                         capture_output=True, text=True)
    return json.loads(out.stdout)


def close(a, b, what, rel=1e-9):  # the CLI's JSON has 10 significant digits
    if not (math.isfinite(a) and math.isfinite(b) and abs(a - b) <= rel * abs(b)):
        raise AssertionError("%s: %r != %r" % (what, a, b))


class Spy(TrainerCallback):
    """What a reporting integration (TensorBoard, W&B) sees in on_log."""

    def __init__(self):
        self.logs = []

    def on_log(self, args, state, control, logs=None, **kwargs):
        self.logs.append(dict(logs or {}))


class HuggingFaceTrainer(unittest.TestCase):
    def train(self, d, cb, steps, logging_steps, extra=()):
        args = TrainingArguments(output_dir=d, per_device_train_batch_size=4, max_steps=steps,
                                 logging_steps=logging_steps, report_to=[], use_cpu=True,
                                 save_strategy="no", disable_tqdm=True, seed=0)
        # the Trainer shuffles: every sequence has 6 pads, so every step has 104 real tokens
        t = Trainer(model=tiny_gpt2(), args=args, train_dataset=Padded(pads=6),
                    callbacks=[cb] + list(extra) if cb else list(extra))
        return t

    def test_logged_mfu_is_mfu_report_of_the_file(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "hf.mfu.jsonl")
            cb = HFTrainerCallback(jsonl=path)
            t = self.train(d, cb, steps=6, logging_steps=1)
            t.train()
            logged = [h for h in t.state.log_history if "loss" in h]
            self.assertEqual([h["step"] for h in logged], list(range(1, 7)))
            rep = report(path, t.model.config)
            self.assertEqual(rep["missing"], [])
            series = {r["step"]: r for r in rep["series"]}
            for h in logged:
                row = series[h["step"]]
                close(h["mfu"], row["mfu"], "step %d mfu" % h["step"])
                close(h["tokens_per_second"], row["tokens_per_second"], "tokens/s")
                close(h["tflops"], row["model_flops_per_second_per_device"] / 1e12, "tflops")
                self.assertTrue(0 < h["mfu"] < 1)
            # padding: 4 sequences of 32 with 6 pads each = 104 of 128 tokens counted
            with open(path) as f:
                rows = [json.loads(line) for line in f][1:]
            self.assertEqual({(r["tokens"], r["useful_tokens"], r["seq_len"]) for r in rows},
                             {(128, 104, 32)})
            s = cb.samples[0]
            self.assertAlmostEqual(s.mfu / s.hfu, 104 / 128, delta=1e-12)
            # the model's forward is the Trainer's again after train()
            self.assertNotIn("forward", vars(t.model))

    def test_a_log_of_several_steps_has_their_time_weighted_figures(self):
        with tempfile.TemporaryDirectory() as d:
            cb = HFTrainerCallback()
            t = self.train(d, cb, steps=6, logging_steps=3)
            t.train()
            logged = [h for h in t.state.log_history if "loss" in h]
            self.assertEqual([h["step"] for h in logged], [3, 6])
            samples = list(cb.samples)
            for h, part in zip(logged, (samples[:3], samples[3:])):
                time = sum(s.step_time_s for s in part)
                close(h["mfu"], sum(s.mfu * s.step_time_s for s in part) / time, "mfu")
                close(h["tokens_per_second"], 3 * 128 / time, "tokens/s")

    def test_add_to_puts_it_before_the_reporting_integrations(self):
        with tempfile.TemporaryDirectory() as d:
            spy = Spy()
            t = self.train(d, None, steps=2, logging_steps=1, extra=[spy])
            add_to(t)
            t.train()
            seen = [log for log in spy.logs if "loss" in log]
            self.assertEqual(len(seen), 2)
            for log in seen:
                self.assertIn("mfu", log)
                self.assertIn("tflops", log)
                self.assertIn("tokens_per_second", log)


class LitGPT(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.model = tiny_gpt2()  # the callback finds its .config

    def training_step(self, batch, batch_idx):
        return self.model(**batch).loss

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=1e-3)


class Lightning(unittest.TestCase):
    def test_logged_mfu_is_mfu_report_of_the_file(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "lit.mfu.jsonl")
            cb = LightningCallback(jsonl=path)
            tr = L.Trainer(max_steps=6, accelerator="cpu", devices=1, logger=CSVLogger(d),
                           log_every_n_steps=1, callbacks=[cb], enable_checkpointing=False,
                           enable_progress_bar=False, enable_model_summary=False)
            module = LitGPT()
            tr.fit(module, torch.utils.data.DataLoader(Padded(), batch_size=4))
            with open(glob.glob(os.path.join(d, "lightning_logs", "*", "metrics.csv"))[0]) as f:
                logged = [r for r in csv.DictReader(f) if r.get("mfu")]
            self.assertEqual(len(logged), 6)
            rep = report(path, module.model.config)
            self.assertEqual(rep["missing"], [])
            # Lightning's logger step is 0-based: global step - 1
            series = {r["step"]: r for r in rep["series"]}
            for r in logged:
                row = series[int(r["step"]) + 1]
                close(float(r["mfu"]), row["mfu"], "step %s mfu" % r["step"])
                close(float(r["tokens_per_second"]), row["tokens_per_second"], "tokens/s")
                close(float(r["tflops"]), row["model_flops_per_second_per_device"] / 1e12,
                      "tflops")
            self.assertEqual([s.step for s in cb.samples], list(range(1, 7)))
            self.assertTrue(all(s.mfu > 0 for s in cb.samples))
            with open(path) as f:
                rows = [json.loads(line) for line in f][1:]
            self.assertEqual({(r["tokens"], r["useful_tokens"]) for r in rows}, {(128, 104)})
            self.assertTrue(all(math.isfinite(r["loss"]) for r in rows))

    def test_gradient_accumulation_makes_one_step_of_several_batches(self):
        with tempfile.TemporaryDirectory() as d:
            cb = LightningCallback()
            tr = L.Trainer(max_steps=3, accelerator="cpu", devices=1, logger=False,
                           accumulate_grad_batches=2, callbacks=[cb],
                           enable_checkpointing=False, enable_progress_bar=False,
                           enable_model_summary=False)
            tr.fit(LitGPT(), torch.utils.data.DataLoader(Padded(), batch_size=4))
            self.assertEqual([s.step for s in cb.samples], [1, 2, 3])
            for s in cb.samples:  # two batches of 4 x 32 tokens
                close(s.tokens_per_s * s.step_time_s, 256, "tokens of step %d" % s.step)


class Collect(GeneralTracker):
    """An Accelerate tracker that keeps what accelerator.log sends it."""
    name = "collect"
    requires_logging_directory = False

    def __init__(self):
        super().__init__()
        self.logged = []

    @property
    def tracker(self):
        return self

    def store_init_configuration(self, values):
        pass

    def log(self, values, step=None, **kwargs):
        self.logged.append((step, dict(values)))


class AccelerateLoop(unittest.TestCase):
    def test_accelerator_log_gets_the_files_figures(self):
        tracker = Collect()
        acc = Accelerator(cpu=True, log_with=[tracker])
        acc.init_trackers("mfu-test")
        model = tiny_gpt2()
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
        loader = torch.utils.data.DataLoader(Padded(), batch_size=4)
        model, opt, loader = acc.prepare(model, opt, loader)
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "acc.mfu.jsonl")
            meter = LoopMonitor(model, accelerator=acc, jsonl=path)
            for i, batch in enumerate(loader):
                if i == 5:
                    break
                with meter.step(batch) as s:
                    loss = model(**batch).loss
                    acc.backward(loss)
                    opt.step()
                    opt.zero_grad()
                    s.loss = loss
                self.assertTrue(0 < s.mfu < 1)
            meter.close()
            self.assertEqual([step for step, _ in tracker.logged], [1, 2, 3, 4, 5])
            rep = report(path, TINY | {"model_type": "gpt2"})
            series = {r["step"]: r for r in rep["series"]}
            for step, figures in tracker.logged:
                close(figures["mfu"], series[step]["mfu"], "step %d" % step)
                close(figures["tokens_per_second"], series[step]["tokens_per_second"], "tps")

    def test_plain_loop_with_accumulation(self):
        model = tiny_gpt2()
        meter = LoopMonitor(model)  # device and dtype from the parameters: cpu, fp32
        self.assertEqual(meter.meter.args["dtype"], torch.float32)
        for i, batch in enumerate(torch.utils.data.DataLoader(Padded(), batch_size=2)):
            if i == 6:
                break
            with meter.step(batch, sync=i % 2 == 1) as s:
                model(**batch).loss.backward()
            self.assertEqual(math.isnan(s.mfu), i % 2 == 0)  # a step ends every 2 batches
        self.assertEqual([s.step for s in meter.samples], [1, 2, 3])
        self.assertEqual(meter.monitor.peak_flops_per_s, mfu.device_peak("cpu", "fp32"))


class TorchInputs(unittest.TestCase):
    def test_forms_of_a_model(self):
        model = tiny_gpt2()
        want = mfu.flops_per_token(TINY | {"model_type": "gpt2"}, SEQ)
        for form in (model, model.config, LitGPT()):
            self.assertEqual(mfu.flops_per_token(form, SEQ), want)
        with self.assertRaises(mfu.Error) as cm:
            mfu.flops_per_token(torch.nn.Linear(4, 4), SEQ)
        self.assertIsInstance(cm.exception, TypeError)
        self.assertIn("without .config", str(cm.exception))
        with self.assertRaises(mfu.Error) as cm:  # at once, not at the first step
            LoopMonitor(torch.nn.Linear(4, 4))
        self.assertEqual(cm.exception.field, "model")

    def test_devices_and_dtypes(self):
        peaks = json.loads(subprocess.run([MFU_BIN, "devices", "cpu", "--json"], check=True,
                                          capture_output=True, text=True).stdout)
        cpu = peaks["device"]["dense_flops_per_s"]
        with mfu.Monitor(model=tiny_gpt2(), seq=SEQ, device=torch.device("cpu"),
                         dtype=torch.bfloat16) as mon:
            self.assertEqual(mon.peak_flops_per_s, cpu["bf16"])
        self.assertEqual(mfu.device_peak(torch.device("cpu"), torch.float32), cpu["fp32"])
        self.assertEqual(mfu.device_peak("h100-sxm", torch.float16), 989.5e12)
        self.assertEqual(mfu.device_peak("h100-sxm", torch.float64), 67e12)

    def test_cuda_is_named_by_nvml_without_a_gpu_in_torch(self):
        self.assertFalse(torch.cuda.is_available())
        saved = {k: os.environ.get(k) for k in ("MFU_NVML_LIBRARY", "MFU_FAKE_NVML_SCRIPT",
                                                "CUDA_VISIBLE_DEVICES")}
        try:
            with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
                f.write("device NVIDIA A100-SXM4-80GB\ndevice NVIDIA H100 80GB HBM3\n")
            os.environ["MFU_NVML_LIBRARY"] = os.environ["MFU_FAKE_NVML"]
            os.environ["MFU_FAKE_NVML_SCRIPT"] = f.name
            os.environ.pop("CUDA_VISIBLE_DEVICES", None)
            self.assertEqual(mfu.device_peak("cuda:0"), 312e12)
            self.assertEqual(mfu.device_peak(torch.device("cuda", 1)), 989.5e12)
            self.assertEqual(mfu.device_peak("cuda"), 312e12)
            os.environ["CUDA_VISIBLE_DEVICES"] = "1"
            self.assertEqual(mfu.device_peak("cuda:0"), 989.5e12)
            with self.assertRaises(mfu.Error) as cm:
                mfu.device_peak("cuda:1")
            self.assertEqual(cm.exception.field, "device")
            os.environ["MFU_NVML_LIBRARY"] = "/nonexistent/libnvidia-ml.so.1"
            with self.assertRaises(mfu.Error) as cm:
                mfu.Monitor(model="gpt2", seq=1024, device="cuda:0")
            self.assertEqual(cm.exception.status, "unsupported")
            self.assertIn("NVML", str(cm.exception))
        finally:
            os.unlink(f.name)
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v

    def test_batches(self):
        ids = torch.zeros(4, 16, dtype=torch.long)
        mask = torch.ones(4, 16, dtype=torch.long)
        mask[0, 8:] = 0
        self.assertEqual(batch_shape({"input_ids": ids, "attention_mask": mask}), (64, 16, 56))
        self.assertEqual(batch_shape(ids), (64, 16, None))
        self.assertEqual(batch_shape((ids, ids)), (64, 16, None))
        self.assertEqual(batch_shape(torch.zeros(16, dtype=torch.long)), (16, 16, None))
        emb = torch.zeros(2, 8, 64)
        self.assertEqual(batch_shape({"inputs_embeds": emb}), (16, 8, None))
        for bad in ({"pixels": ids}, torch.zeros(2, 3, 4, 5), "text"):
            with self.assertRaises(mfu.Error) as cm:
                batch_shape(bad)
            self.assertIsInstance(cm.exception, TypeError)
            self.assertEqual(cm.exception.field, "batch")


if __name__ == "__main__":
    unittest.main(verbosity=2)
