"""tests/python/test_binding.py - the Python binding (python/mfu) against the CLI and against
arithmetic done here. Run by tests/e2e/python.sh with Debian's /usr/bin/python3 (standard
library only): MFU_BIN is the CLI, MFU_LIBRARY the shared library beside it.

A simulated training loop records steps through the binding (their times given, so nothing
depends on this machine's speed), writes the canonical JSON-lines file, and `mfu report` on
that file must give the same steady median MFU and the same findings as the binding.
"""
import ctypes
import json
import math
import os
import subprocess
import sys
import tempfile
import time
import unittest

import mfu

MFU_BIN = os.environ["MFU_BIN"]


def cli(*args):
    # The sanitizer runtime preloaded into this interpreter (tests/e2e/python.sh) is not the
    # CLI's: a clang-built mfu carries its own and aborts beside a second one.
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    out = subprocess.run([MFU_BIN] + list(args), check=True, capture_output=True, text=True, env=env)
    return out.stdout


class Library(unittest.TestCase):
    def test_version_is_the_cli_version(self):
        self.assertEqual(cli("--version").split()[1], mfu.version())

    def test_flops_per_token_is_mfu_flops(self):
        want = json.loads(cli("flops", "--model", "llama3-8b", "--seq", "8192", "--json"))
        # the CLI prints 10 significant digits
        got, cli_fpt = mfu.flops_per_token("llama3-8b", 8192), want["flops_per_token"]["model"]
        self.assertAlmostEqual(got, cli_fpt, delta=1e-9 * cli_fpt)
        self.assertGreater(got, 5e10)

    def test_device_peak_is_the_table(self):
        want = json.loads(cli("devices", "h100-sxm", "--json"))
        self.assertEqual(mfu.device_peak("h100-sxm"), want["device"]["dense_flops_per_s"]["bf16"])
        self.assertEqual(mfu.device_peak("NVIDIA H100 80GB HBM3", "fp8"),
                         want["device"]["dense_flops_per_s"]["fp8"])

    def test_cpu_peak_is_mfu_devices_cpu(self):
        want = json.loads(cli("devices", "cpu", "--json"))["device"]["dense_flops_per_s"]["fp32"]
        self.assertGreater(want, 0)
        self.assertEqual(mfu.device_peak("cpu", "fp32"), want)
        with mfu.Monitor(model="gpt2", seq=1024, device="cpu", dtype="fp32") as mon:
            self.assertEqual(mon.peak_flops_per_s, want)
            s = mon.record(tokens=4096, step_time_s=2.0)
            self.assertAlmostEqual(s.mfu, s.model_flops_per_s_per_device / want, delta=1e-15)

    def test_step_mirror_is_the_library_list(self):
        """The binding's mfu_step is laid out from the library's field list
        (mfu_step_field_at), and every double a caller may name reaches the canonical file
        under its own name."""
        from mfu import _lib
        members = [f[0] for f in _lib.STEP_FIELDS if f[1] not in (_lib.KIND_BIT, _lib.KIND_NANBIT)]
        self.assertEqual([f[0] for f in _lib.Step._fields_], members)
        self.assertEqual(ctypes.sizeof(_lib.Step), _lib.struct_size(b"mfu_step"))
        self.assertEqual(_lib.STEP_BITS["loss_nan"], 2)  # MFU_STEP_LOSS_NAN
        self.assertIn("power_limit_w", _lib.STEP_UNSCOPED_DOUBLES)
        self.assertNotIn("tokens_per_s", _lib.STEP_UNSCOPED_DOUBLES)
        named = [n for n in _lib.STEP_UNSCOPED_DOUBLES
                 if n not in ("step_time_s", "tokens", "loss")]
        values = {n: 10.0 + i for i, n in enumerate(named)}
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "run.mfu.jsonl")
            with mfu.Monitor(model="gpt2", seq=1024, device="h100-sxm", jsonl=path) as mon:
                mon.record(tokens=8192, step_time_s=0.5, **values)
            with open(path) as f:
                rows = [json.loads(line) for line in f if '"step"' in line]
        self.assertEqual(len(rows), 1)
        for n, v in values.items():
            self.assertEqual(rows[0].get(n), v, n)
        with self.assertRaises(mfu.Error):
            mfu.Monitor(model="gpt2", seq=1024).record(tokens=1, step_time_s=1, mfu=0.5)

    def test_errors_name_the_fix(self):
        with self.assertRaises(mfu.Error) as cm:
            mfu.Monitor(model="llama3-8b", seq=8192, device="h999")
        self.assertEqual(cm.exception.status, "unknown name")
        self.assertIn("h999", str(cm.exception))
        with self.assertRaises(mfu.Error) as cm:
            mfu.Monitor(model="llama3-8b")
        self.assertEqual(cm.exception.field, "seq")
        with self.assertRaises(mfu.Error) as cm:
            mfu.Monitor(model="llama3-8b", seq=8192, jsonl="/nonexistent-dir/x.jsonl")
        self.assertEqual(cm.exception.field, "jsonl")
        mon = mfu.Monitor(model="gpt2", seq=1024, device="a100-sxm")
        with self.assertRaises(mfu.Error) as cm:
            mon.record(tokens=0, step_time_s=1.0)
        self.assertEqual(cm.exception.field, "tokens")
        with self.assertRaises(TypeError):
            mon.record(tokens=1024, step_time_s=1.0, no_such_field=3)
        with self.assertRaises(ValueError):
            mon.record(tokens=1024)  # the first record needs a time
        mon.close()
        with self.assertRaises(ValueError):
            mon.record(tokens=1024, step_time_s=1.0)
        with self.assertRaises(mfu.Error) as cm:
            mfu.Monitor(model="gpt2", seq=1024).summary()
        self.assertEqual(cm.exception.status, "no usable input")


class Monitor(unittest.TestCase):
    def test_one_step_by_hand(self):
        with mfu.Monitor(model="llama3-8b", seq=8192, device="h100-sxm", devices=8) as mon:
            s = mon.record(tokens=8 * 4 * 8192, step_time_s=1.9, loss=2.5)
            fpt = mfu.flops_per_token("llama3-8b", 8192)
            want = 8 * 4 * 8192 / 1.9 / 8 * fpt / 989.5e12
            self.assertEqual(s.step, 1)
            self.assertAlmostEqual(s.mfu, want, delta=1e-12 * want)
            self.assertAlmostEqual(s.tokens_per_s, 8 * 4 * 8192 / 1.9, delta=1e-6)
            self.assertEqual(s.hfu, s.mfu)
            self.assertEqual(mon.peak_flops_per_s, 989.5e12)
            # padding: MFU counts the real tokens only
            p = mon.record(tokens=8 * 4 * 8192, step_time_s=1.9, useful_tokens=6 * 4 * 8192)
            self.assertEqual(p.step, 2)
            self.assertAlmostEqual(p.mfu / p.hfu, 0.75, delta=1e-12)

    def test_timed_block(self):
        with mfu.Monitor(model="gpt2", seq=1024, peak_flops_per_s=1e15) as mon:
            with mon.step(tokens=4096) as s:
                time.sleep(0.05)
                s.loss = 3.25
            self.assertEqual(s.step, 1)
            self.assertGreaterEqual(s.step_time_s, 0.05)
            self.assertLess(s.step_time_s, 5)
            self.assertAlmostEqual(s.tokens_per_s, 4096 / s.step_time_s, delta=1e-6)
            self.assertTrue(0 < s.mfu < 1)
            # an exception in the block records nothing
            with self.assertRaises(RuntimeError):
                with mon.step(tokens=4096):
                    raise RuntimeError("the step failed")
            t = mon.record(tokens=4096, step_time_s=0.5)
            self.assertEqual(t.step, 2)

    def test_training_loop_matches_mfu_report(self):
        """400 steps of a simulated run (a 3x stall every 50 steps, a NaN loss at the end),
        written to JSON-lines: `mfu report` on the file agrees with the binding."""
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "run.mfu.jsonl")
            ctx = ["--model", "gpt2-xl", "--seq", "1024", "--device", "h100-sxm",
                   "--devices", "8"]
            mon = mfu.Monitor(model="gpt2-xl", seq=1024, device="h100-sxm", devices=8,
                              jsonl=path, name="gpt2-xl test")
            tokens = 8 * 16 * 1024
            mfus = []
            for i in range(1, 401):
                t = 0.41 + 0.004 * math.sin(i)
                if i % 50 == 0:
                    t *= 3
                loss = float("nan") if i > 390 else 4.0 - i / 200
                s = mon.record(tokens=tokens, step_time_s=t, loss=loss, step=i)
                mfus.append(s.mfu)
            got = mon.summary()
            kinds = sorted(f["kind"] for f in mon.findings())
            both = mon.report()  # one report: the same summary and findings
            self.assertEqual(both["summary"], got)
            self.assertEqual(sorted(f["kind"] for f in both["findings"]), kinds)
            mon.close()
            rep = json.loads(cli("report", path, *ctx, "--json", "--no-series"))
            self.assertEqual(rep["format"], "mfu")
            self.assertEqual(rep["steps"], 400)
            # the CLI's JSON has 10 significant digits
            want = rep["summary"]["mfu"]["median"]
            self.assertAlmostEqual(got["mfu"]["median"], want, delta=1e-9 * want)
            want = rep["summary"]["tokens_per_second"]["median"]
            self.assertAlmostEqual(got["tokens_per_second"]["median"], want, delta=1e-9 * want)
            self.assertEqual(kinds, sorted(f["kind"] for f in rep["findings"]))
            self.assertIn("stall", kinds)
            self.assertIn("loss_nan", kinds)
            # the steady median is the median of the non-stall steps the binding returned
            typical = sorted(m for i, m in enumerate(mfus, 1) if i % 50)
            self.assertTrue(typical[0] <= got["mfu"]["median"] <= typical[-1])
            # the file is followed by `mfu watch` as a log
            frame = cli("watch", path, "--once", *ctx)
            self.assertIn("400 steps", frame)


def _lines(path):
    with open(path, "rb") as f:
        return f.read().count(b"\n")


def _bytes(path):
    with open(path, "rb") as f:
        return f.read()


class Recording(unittest.TestCase):
    """record's fast path (plain numbers) against its general path (a step field given, even
    as None, takes it), record_many against one record at a time, and the batched writes of
    the file: flush(), close(), flush_interval."""

    CTX = dict(model="llama3-8b", seq=8192, device="h100-sxm", devices=8)

    def _pair(self, d, **kw):
        return (mfu.Monitor(jsonl=os.path.join(d, "fast.jsonl"), **self.CTX, **kw),
                mfu.Monitor(jsonl=os.path.join(d, "slow.jsonl"), **self.CTX, **kw))

    def test_fast_path_is_the_general_path(self):
        with tempfile.TemporaryDirectory() as d:
            fast, slow = self._pair(d)
            for i in range(1, 201):
                t = 0.5 + 0.001 * (i % 13)
                loss = 2.0 + 1.0 / (1.0 + i * 1e-3)
                kw = dict(step=i + 10) if i % 3 == 0 else {}
                a = fast.record(262144 + i, t, loss=loss, **kw)
                b = slow.record(262144 + i, t, loss=loss, lr=None, **kw)  # lr: general path
                for k in ("step", "tokens_per_s", "model_flops_per_s_per_device", "mfu", "hfu",
                          "step_time_s", "loss"):
                    self.assertEqual(getattr(a, k), getattr(b, k), (i, k))
                self.assertEqual(a.fields, {})
            # an int loss and no time (the time since the previous record) take it too
            a = fast.record(262144, loss=3)
            self.assertEqual(a.loss, 3)
            self.assertGreater(a.step_time_s, 0)
            self.assertEqual(a.step, fast.record(262144, 0.5).step - 1)
            fast.close()
            slow.record(262144, a.step_time_s, loss=3, step=a.step)
            slow.record(262144, 0.5)
            slow.close()
            self.assertEqual(_bytes(os.path.join(d, "fast.jsonl")),
                             _bytes(os.path.join(d, "slow.jsonl")))

    def test_fast_path_errors(self):
        with mfu.Monitor(**self.CTX) as mon:
            mon.record(262144, 0.5)
            with self.assertRaises(mfu.Error) as cm:
                mon.record(0, 0.5)
            self.assertEqual(cm.exception.field, "tokens")
            # the library's message, read from the prepared call's error
            self.assertIn("tokens must be the tokens of the step", str(cm.exception))
            with self.assertRaises(mfu.Error) as cm:
                mon.record(262144, -1.0)
            self.assertEqual(cm.exception.field, "step_time_s")
            with self.assertRaises(mfu.Error):
                mon.record(262144, 0.5, step=-3)
            self.assertEqual(mon.record(262144, 0.5).step, 2)  # nothing was recorded
        with self.assertRaises(mfu.Error):
            mon.record(262144, 0.5)  # closed

    def test_record_many_is_record_one_at_a_time(self):
        with tempfile.TemporaryDirectory() as d:
            one, many = self._pair(d)
            n = 300
            tok = [262144 + 64 * i for i in range(n)]
            dt = [0.5 + 0.002 * (i % 7) for i in range(n)]
            loss = [2.0 + 1.0 / (1.0 + i) for i in range(n)]
            loss[100] = float("nan")  # flagged as a NaN loss, as record() does
            want = [one.record(tok[i], dt[i], loss=loss[i]) for i in range(n)]
            mid = many.record_many(tok[:150], dt[:150], loss=loss[:150])
            last = many.record_many(tok[150:], dt[150:], loss=loss[150:])
            for a, b in ((want[149], mid), (want[-1], last)):
                self.assertEqual((a.step, a.mfu, a.tokens_per_s, a.hfu, a.step_time_s, a.loss),
                                 (b.step, b.mfu, b.tokens_per_s, b.hfu, b.step_time_s, b.loss))
            self.assertEqual(many.record(262144, 0.5).step, n + 1)
            one.record(262144, 0.5)
            # a bad step: those before it are recorded, the error names the field
            with self.assertRaises(mfu.Error) as cm:
                many.record_many([262144, 262144, 0, 262144], [0.5] * 4)
            self.assertEqual(cm.exception.field, "tokens")
            self.assertEqual(many.record(262144, 0.5).step, n + 4)
            for _ in range(2):
                one.record(262144, 0.5)
            one.record(262144, 0.5)
            with self.assertRaises(mfu.Error) as cm:
                many.record_many([1, 2], [0.5])
            with self.assertRaises(TypeError):
                many.record_many(["x"], [0.5])
            self.assertIsNone(many.record_many([], []))
            one.close()
            many.close()
            self.assertEqual(_bytes(os.path.join(d, "fast.jsonl")),
                             _bytes(os.path.join(d, "slow.jsonl")))
            self.assertIn(b'"loss_nan":true', _bytes(os.path.join(d, "slow.jsonl")))

    def test_flush(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "run.jsonl")
            mon = mfu.Monitor(jsonl=path, flush_interval=3600, **self.CTX)
            for i in range(20):
                mon.record(262144, 0.5, loss=2.5)
            self.assertEqual(_lines(path), 1)  # the header; the steps wait in memory
            mon.flush()
            self.assertEqual(_lines(path), 21)
            mon.record_many([262144] * 5, [0.5] * 5)
            self.assertEqual(_lines(path), 21)
            mon.close()
            self.assertEqual(_lines(path), 26)
            every = mfu.Monitor(jsonl=path, flush_interval=0, **self.CTX)
            every.record(262144, 0.5)
            self.assertEqual(_lines(path), 27)  # at once
            every.close()
            with self.assertRaises(mfu.Error) as cm:
                mfu.Monitor(jsonl=path, flush_interval=-1, **self.CTX)
            self.assertEqual(cm.exception.field, "flush_interval")

    def test_close_reports_a_failed_last_write(self):
        # the file may not grow past its header (RLIMIT_FSIZE, in a child process): the steps
        # still waiting fail to be written at close(), which raises rather than lose them
        # without a word
        code = ("import os, resource, signal, sys, mfu\n"
                "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
                "mon = mfu.Monitor(jsonl=sys.argv[1], flush_interval=3600, **%r)\n"
                "resource.setrlimit(resource.RLIMIT_FSIZE,\n"
                "                   (os.path.getsize(sys.argv[1]), resource.RLIM_INFINITY))\n"
                "for i in range(20):\n"
                "    mon.record(262144, 0.5)\n"
                "try:\n"
                "    mon.close()\n"
                "except mfu.Error as e:\n"
                "    print('raised', e.status, e.field)\n"
                "    sys.exit(0)\n"
                "print('close() said nothing')\n"
                "sys.exit(1)\n" % (self.CTX,))
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "run.jsonl")
            p = subprocess.run([sys.executable, "-c", code, path], capture_output=True,
                               text=True, timeout=120)
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            # mfu.Error's status and the argument to fix
            self.assertEqual(p.stdout.strip(), "raised input/output error jsonl")
            self.assertEqual(_lines(path), 1)  # the header only


GPT2_FIELDS = {"model_type": "gpt2", "n_layer": 12, "n_embd": 768, "n_head": 12,
               "n_inner": None, "n_positions": 1024, "vocab_size": 50257,
               "_name_or_path": "openai-community/gpt2"}


class FakeConfig:
    """What a transformers PretrainedConfig offers the binding: to_dict()."""

    def __init__(self, fields):
        self.fields = fields

    def to_dict(self):
        return dict(self.fields)


class FakeModel:
    def __init__(self, fields):
        self.config = FakeConfig(fields)


class Inputs(unittest.TestCase):
    """The forms a training script already holds: a dict of config fields, a config object, a
    model with .config, a model directory; what the binding answers for each is what the CLI
    answers for the same config.json."""

    def test_model_forms_are_one_model(self):
        want = mfu.flops_per_token("gpt2", 1024)
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "config.json"), "w") as f:
                json.dump(GPT2_FIELDS, f)
            cli_fpt = json.loads(cli("flops", "--config", os.path.join(d, "config.json"),
                                     "--seq", "1024", "--json"))["flops_per_token"]["model"]
            for form in (GPT2_FIELDS, FakeConfig(GPT2_FIELDS), FakeModel(GPT2_FIELDS), d,
                         os.path.join(d, "config.json")):
                self.assertEqual(mfu.flops_per_token(form, 1024), want, repr(form))
        self.assertAlmostEqual(want, cli_fpt, delta=1e-9 * cli_fpt)

    def test_attention_full_is_mfu_flops_attention_full(self):
        want = json.loads(cli("flops", "--model", "gpt2", "--seq", "1024", "--attention",
                              "full", "--json"))["flops_per_token"]["model"]
        full = mfu.flops_per_token(GPT2_FIELDS, 1024, attention="full")
        self.assertAlmostEqual(full, want, delta=1e-9 * want)
        self.assertGreater(full, mfu.flops_per_token(GPT2_FIELDS, 1024, attention="causal"))
        with self.assertRaises(mfu.Error) as cm:
            mfu.flops_per_token("gpt2", 1024, attention="sideways")
        self.assertEqual(cm.exception.field, "attention")

    def test_bad_input_is_an_error_of_both_kinds(self):
        for bad in (42, object(), ["gpt2"]):
            with self.assertRaises(mfu.Error) as cm:
                mfu.Monitor(model=bad, seq=1024)
            self.assertIsInstance(cm.exception, TypeError)
            self.assertEqual(cm.exception.field, "model")
            self.assertIn("config", str(cm.exception))
        with self.assertRaises(mfu.Error) as cm:  # a dict that lacks a required field
            mfu.Monitor(model={"model_type": "gpt2", "n_embd": 768}, seq=1024)
        self.assertIsInstance(cm.exception, ValueError)
        self.assertEqual(cm.exception.field, "model")
        self.assertIn("n_layer", str(cm.exception))
        with self.assertRaises(mfu.Error) as cm:
            mfu.Monitor(model="gpt2", seq=1024, device=3.5)
        self.assertIsInstance(cm.exception, TypeError)
        self.assertEqual(cm.exception.field, "device")
        with self.assertRaises(mfu.Error) as cm:
            mfu.Monitor(model="gpt2", seq=1024, device="cpu", dtype=16)
        self.assertEqual(cm.exception.field, "dtype")
        with self.assertRaises(ValueError):
            mfu.Monitor(model="gpt2", seq="long")
        with self.assertRaises(mfu.Error) as cm:
            mfu.Monitor(model="gpt2", seq=1024, device="mps")
        self.assertEqual(cm.exception.status, "unsupported")

    def test_cpu_defaults_to_its_fp32_peak(self):
        peaks = json.loads(cli("devices", "cpu", "--json"))["device"]["dense_flops_per_s"]
        with mfu.Monitor(model="gpt2", seq=1024, device="cpu") as mon:
            self.assertEqual(mon.peak_flops_per_s, peaks["fp32"])
        self.assertEqual(mfu.device_peak("cpu"), peaks["fp32"])
        self.assertEqual(mfu.device_peak("h100-sxm"), 989.5e12)  # a GPU: bf16

    def test_sequence_length_change(self):
        with mfu.Monitor(model="gpt2", seq=1024, device="a100-sxm") as mon:
            a = mon.record(tokens=65536, step_time_s=1.0)
            b = mon.record(tokens=65536, step_time_s=1.0, seq=512)
            with mon.step(tokens=65536, seq=256) as c:
                pass
            self.assertEqual(a.model_flops_per_s_per_device,
                             65536 * mfu.flops_per_token("gpt2", 1024))
            self.assertEqual(b.model_flops_per_s_per_device,
                             65536 * mfu.flops_per_token("gpt2", 512))
            self.assertAlmostEqual(c.model_flops_per_s_per_device,
                                   65536 / c.step_time_s * mfu.flops_per_token("gpt2", 256),
                                   delta=1e-9 * c.model_flops_per_s_per_device)
            self.assertEqual(c.tflops, c.model_flops_per_s_per_device / 1e12)
            self.assertEqual(c.tokens_per_second, c.tokens_per_s)
            self.assertEqual(set(mon.summary()), {
                "mfu", "hfu", "tokens_per_second", "tokens_per_second_per_device",
                "model_flops_per_second_per_device", "hardware_flops_per_second_per_device",
                "step_time_s"})

    def test_cpu_file_reports_mfu_with_the_model_only(self):
        """The header names the device "cpu" and the peak divided by: `mfu report FILE
        --model M` (no --device) has the binding's MFU."""
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "cpu.mfu.jsonl")
            with mfu.Monitor(model=GPT2_FIELDS, seq=1024, device="cpu", jsonl=path) as mon:
                for i in range(1, 41):
                    mon.record(tokens=8192, step_time_s=40 + 0.3 * math.sin(i))
                got = mon.summary()["mfu"]["median"]
            with open(path) as f:
                header = json.loads(f.readline())
            self.assertEqual(header["device"], "cpu")
            self.assertEqual(header["dtype"], "fp32")
            self.assertEqual(header["model"], "openai-community/gpt2")
            self.assertEqual(header["reported_peak_flops_per_s"], mfu.device_peak("cpu"))
            rep = json.loads(cli("report", path, "--model", "gpt2", "--json", "--no-series"))
            self.assertEqual(rep["missing"], [])
            want = rep["summary"]["mfu"]["median"]
            self.assertAlmostEqual(got, want, delta=1e-9 * want)
            text = cli("report", path, "--model", "gpt2")
            self.assertIn("device     'cpu' (from the log), peak", text)


class Nvml(unittest.TestCase):
    """Monitor(nvml=True) against the fake NVML the tests build (MFU_FAKE_NVML)."""

    def setUp(self):
        self.saved = {k: os.environ.get(k) for k in ("MFU_NVML_LIBRARY", "MFU_FAKE_NVML_SCRIPT")}

    def tearDown(self):
        for k, v in self.saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v

    def test_missing_library_is_an_error_only_when_asked(self):
        os.environ["MFU_NVML_LIBRARY"] = "/nonexistent/libnvidia-ml.so.1"
        with self.assertRaises(mfu.Error) as cm:
            mfu.Monitor(model="gpt2", seq=1024, device="h100-sxm", nvml=True)
        self.assertEqual(cm.exception.status, "unsupported")
        self.assertIn("NVML not found", str(cm.exception))
        mfu.Monitor(model="gpt2", seq=1024, device="h100-sxm").close()  # nvml off: no NVML

    @unittest.skipUnless(os.environ.get("MFU_FAKE_NVML"), "MFU_FAKE_NVML: the fake NVML")
    def test_clock_drop_is_found(self):
        with tempfile.TemporaryDirectory() as d:
            script = os.path.join(d, "nvml.txt")
            with open(script, "w") as f:
                f.write("device NVIDIA H100 80GB HBM3\nclock 1980*80 1400*30 1980*90\n"
                        "power 450000\nlimit 700000\n")
            os.environ["MFU_NVML_LIBRARY"] = os.environ["MFU_FAKE_NVML"]
            os.environ["MFU_FAKE_NVML_SCRIPT"] = script
            with mfu.Monitor(model="gpt2", seq=1024, device="h100-sxm", nvml=True) as mon:
                for i in range(1, 201):
                    slow = 81 <= i <= 110
                    mon.record(tokens=16384, step_time_s=0.5 * (1980 / 1400 if slow else 1))
                kinds = {f["kind"]: f for f in mon.findings()}
            self.assertIn("throttling", kinds)
            ev = kinds["throttling"]["evidence"]
            self.assertEqual(ev["clock_mhz"], 1400)
            self.assertEqual(ev["affected_steps"], 30)

    @unittest.skipUnless(os.environ.get("MFU_FAKE_NVML"), "MFU_FAKE_NVML: the fake NVML")
    def test_energy_and_tensor_activity(self):
        """The fake's energy counter (mJ) and GPM tensor activity: Sample and energy() equal
        the arithmetic here and `mfu report --json` of the monitor's file."""
        with tempfile.TemporaryDirectory() as d:
            script = os.path.join(d, "nvml.txt")
            counter = " ".join(str(7000000 + 812500 * i) for i in range(40))
            with open(script, "w") as f:
                f.write("device NVIDIA H100 80GB HBM3\nenergy %s\ntensor 80\n" % counter)
            os.environ["MFU_NVML_LIBRARY"] = os.environ["MFU_FAKE_NVML"]
            os.environ["MFU_FAKE_NVML_SCRIPT"] = script
            path = os.path.join(d, "run.jsonl")
            fpt = mfu.flops_per_token("gpt2", 1024)
            with mfu.Monitor(model="gpt2", seq=1024, device="h100-sxm", devices=8, nvml=True,
                             jsonl=path) as mon:
                for i in range(1, 41):
                    s = mon.record(tokens=8 * 64 * 1024, step_time_s=0.5)
                    if i > 1:  # the first record starts the count (power x time instead)
                        self.assertEqual(s.energy_j, 812.5)
                        self.assertEqual(s.tensor_active, 0.80)
                    want = s.energy_j / (fpt * 64 * 1024 / 1e15)
                    self.assertAlmostEqual(s.joules_per_pflop, want, delta=1e-12 * want)
                    want = 8 * 64 * 1024 / (s.energy_j * 8 / 3.6e6)
                    self.assertAlmostEqual(s.tokens_per_kwh, want, delta=1e-12 * want)
                e = mon.energy()
            rep = json.loads(cli("report", path, "--model", "gpt2", "--json", "--no-series"))
            for k in ("steps", "power_steps", "joules", "joules_per_pflop", "tokens_per_kwh",
                      "tensor_active", "tensor_check"):
                if isinstance(e[k], float):
                    self.assertAlmostEqual(e[k], rep["energy"][k], delta=1e-9 * abs(e[k]))
                else:
                    self.assertEqual(e[k], rep["energy"][k])
            self.assertEqual(e["tensor_check"], "far_below")  # MFU 10.6 % beside 80 % busy
            self.assertIn("far below", e["tensor_check_text"])
        with mfu.Monitor(model="gpt2", seq=1024, device="h100-sxm") as mon:
            mon.record(tokens=65536, step_time_s=0.5)
            self.assertIsNone(mon.energy())  # nothing known: nothing shown


if __name__ == "__main__":
    unittest.main(verbosity=2)
