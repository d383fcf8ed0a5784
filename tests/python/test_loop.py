"""tests/python/test_loop.py - the acceptance test of the pip-installed package: a real
PyTorch training loop (examples/tinygpt.py's GPT-2-shaped model, on this CPU) that hands the
Monitor a dict of config fields, a torch.device and a torch.dtype.

Run by tests/e2e/python_pip.sh with the python of a new venv into which pip installed the
package's wheel (no PYTHONPATH, no MFU_LIBRARY: the binding must find the library it carries),
seeing Debian's torch. MFU_EXAMPLES is examples/ (the model). Checks: every step's MFU is in
(0, 1); the file the monitor wrote reports an MFU with no flag but the model (`mfu report FILE
--config config.json`, with the CLI the wheel installed), the same per step and in the median;
flops_per_token(..., attention="full") equals PyTorch's own count of the model's matmul FLOPs
at both sequence lengths of the loop.
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

import torch

import mfu

sys.path.insert(0, os.environ["MFU_EXAMPLES"])
import tinygpt  # noqa: E402

CONFIG = {"model_type": "gpt2", "n_layer": 2, "n_embd": 64, "n_head": 4, "n_inner": None,
          "n_positions": 128, "vocab_size": 256}
CLI = os.path.join(sys.prefix, "bin", "mfu")


class InstalledPackage(unittest.TestCase):
    def test_the_package_carries_its_library_and_cli(self):
        self.assertTrue(mfu.library_path.startswith(sys.prefix), mfu.library_path)
        self.assertNotIn("MFU_LIBRARY", os.environ)
        out = subprocess.run([CLI, "--version"], check=True, capture_output=True, text=True)
        self.assertEqual(out.stdout.split()[1], mfu.version())


class TrainingLoop(unittest.TestCase):
    def test_loop_with_dict_device_and_dtype(self):
        torch.manual_seed(0)
        model = tinygpt.GPT(CONFIG)
        opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "loop.mfu.jsonl")
            mon = mfu.Monitor(model=CONFIG, seq=64, device=torch.device("cpu"),
                              dtype=torch.float32, jsonl=path, name="tinygpt")
            self.assertEqual(mon.peak_flops_per_s, mfu.device_peak("cpu", "fp32"))
            mfus = []
            for step in range(1, 17):
                seq = 64 if step <= 8 else 32  # the sequence length changes half-way
                batch = torch.randint(0, CONFIG["vocab_size"], (4, seq + 1))
                with mon.step(tokens=4 * seq, seq=seq) as s:
                    loss = model(batch[:, :-1], batch[:, 1:])
                    opt.zero_grad()
                    loss.backward()
                    opt.step()
                    s.loss = loss.item()
                self.assertTrue(0 < s.mfu < 1, "step %d: MFU %r" % (step, s.mfu))
                mfus.append(s.mfu)
            median = mon.summary()["mfu"]["median"]
            mon.close()
            cfg = os.path.join(d, "config.json")
            with open(cfg, "w") as f:
                json.dump(CONFIG, f)
            rep = json.loads(subprocess.run([CLI, "report", path, "--config", cfg, "--json"],
                                            check=True, capture_output=True, text=True).stdout)
            self.assertEqual(rep["missing"], [])
            self.assertEqual(rep["context"]["device"]["name"], "cpu")
            self.assertEqual(rep["context"]["device"]["dtype"], "fp32")
            series = [r["mfu"] for r in rep["series"]]
            self.assertEqual(len(series), 16)
            for i, (a, b) in enumerate(zip(mfus, series), 1):  # the CLI prints 10 digits
                self.assertAlmostEqual(a, b, delta=1e-9 * a, msg="step %d" % i)
            want = rep["summary"]["mfu"]["median"]
            self.assertAlmostEqual(median, want, delta=1e-9 * want)
            text = subprocess.run([CLI, "report", path, "--config", cfg], check=True,
                                  capture_output=True, text=True).stdout
            self.assertRegex(text, r"\nMFU +[0-9.]+%")

    def test_flops_per_token_full_is_pytorchs_count(self):
        model = tinygpt.GPT(CONFIG)
        for seq in (64, 32):
            batch = torch.randint(0, CONFIG["vocab_size"], (2, seq + 1))
            counted = tinygpt.matmul_flops(
                lambda: model(batch[:, :-1], batch[:, 1:]).backward())
            got = mfu.flops_per_token(CONFIG, seq, attention="full") * 2 * seq
            self.assertEqual(got, counted, "seq %d" % seq)
            # the default (causal) counts half of the score matrix: less than PyTorch runs
            self.assertLess(mfu.flops_per_token(CONFIG, seq) * 2 * seq, counted)


if __name__ == "__main__":
    unittest.main(verbosity=2)
