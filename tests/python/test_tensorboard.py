"""tests/python/test_tensorboard.py - `mfu report --tensorboard DIR` read back by the real
TensorBoard package's event reader (EventAccumulator, tensorboard 2.18 of
python/requirements-test.txt), in the project venv (scripts/pyenv.sh).

    python test_tensorboard.py        (env: MFU_BIN, the built mfu)

Two runs: a JSON-lines log with timestamps on every step but two (and a loss printed as NaN),
and the same log without any timestamp, its file's modification time set. Checked: the step
numbers; every event's wall time is the step's timestamp, between timestamps the one before
plus the step time, and without timestamps the log's modification time less the step times
after the step; the scalars equal `mfu report --json`'s series (as float32), seq_len and the
FLOPs per token among them, the NaN loss as NaN; a missing parent folder is made.
"""
import json
import math
import os
import struct
import subprocess
import sys
import tempfile

from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

MFU = os.environ["MFU_BIN"]
T0 = 1750000000.25  # the first step's end, s since 1970
DT = 2.0  # every step's time, s
STEPS = list(range(10, 130, 10))  # a line every 10 steps: 10 steps between two lines
NO_TIME = (50, 60)  # steps printed without a timestamp
NAN_LOSS = 70
TOKENS = 512  # per step: 0.2 TFLOP/s of gpt2 at 1024 tokens, MFU 0.2 of a 1 TFLOP/s peak
CONTEXT = ["--model", "gpt2", "--seq", "1024", "--peak-tflops", "1", "--devices", "1"]


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def write_log(path, timestamps):
    with open(path, "w") as f:
        for i, s in enumerate(STEPS):
            row = {"step": s, "step_time_s": DT, "tokens": TOKENS,
                   "loss": float("nan") if s == NAN_LOSS else 3.0 - 0.01 * s}
            if timestamps and s not in NO_TIME:
                row["time_s"] = T0 + i * 10 * DT
            f.write(json.dumps(row) + "\n")


def report(log, tb):
    subprocess.run([MFU, "report", log, *CONTEXT, "--tensorboard", tb], check=True,
                   stdout=subprocess.DEVNULL)
    out = subprocess.run([MFU, "report", log, *CONTEXT, "--json"], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)["series"]


def events(tb):
    runs = [os.path.join(tb, d) for d in sorted(os.listdir(tb))]
    assert len(runs) == 1, runs
    files = [f for f in os.listdir(runs[0]) if f.startswith("events.out.tfevents.")]
    assert len(files) == 1, files
    acc = EventAccumulator(runs[0], size_guidance={"scalars": 0})
    acc.Reload()
    return acc, files[0]


def check(acc, series, want_wall):
    tags = set(acc.Tags()["scalars"])
    need = {"mfu/mfu", "mfu/tokens_per_second", "mfu/model_flops_per_second_per_device",
            "mfu/step_time_s", "mfu/loss", "mfu/seq_len", "mfu/model_flops_per_token"}
    assert need <= tags, (need - tags, tags)
    for tag in need:
        ev = acc.Scalars(tag)
        assert [e.step for e in ev] == STEPS, (tag, [e.step for e in ev])
        for e, s in zip(ev, STEPS):
            assert e.wall_time == want_wall[s], (tag, s, e.wall_time, want_wall[s])
    by = {r["step"]: r for r in series}
    for tag, key in (("mfu/mfu", "mfu"), ("mfu/tokens_per_second", "tokens_per_second"),
                     ("mfu/model_flops_per_second_per_device",
                      "model_flops_per_second_per_device"),
                     ("mfu/step_time_s", "step_time_s"), ("mfu/loss", "loss")):
        for e in acc.Scalars(tag):
            want = by[e.step][key]
            if e.step == NAN_LOSS and key == "loss":
                assert want is None and math.isnan(e.value), (e.step, e.value)
                continue
            assert e.value == f32(want), (tag, e.step, e.value, want)
    for e in acc.Scalars("mfu/seq_len"):
        assert e.value == 1024, e
    for e in acc.Scalars("mfu/model_flops_per_token"):
        r = by[e.step]
        want = r["model_flops_per_second_per_device"] / r["tokens_per_second_per_device"]
        assert abs(e.value - want) <= 1e-6 * want, (e.step, e.value, want)
    return len(tags)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        # timestamps on the log's lines, two missing: the one before + 10 steps x 2 s
        log = os.path.join(tmp, "timed.jsonl")
        write_log(log, True)
        tb = os.path.join(tmp, "no", "such", "parent", "tb")  # made like mkdir -p
        series = report(log, tb)
        acc, name = events(tb)
        want = {s: T0 + i * 10 * DT for i, s in enumerate(STEPS)}
        n = check(acc, series, want)
        assert name.startswith("events.out.tfevents.%d." % int(T0 - DT)), name
        print("timestamps: %d steps, %d tags, wall times %.2f..%.2f (the log's), file %s"
              % (len(STEPS), n, want[STEPS[0]], want[STEPS[-1]], name))

        # no timestamp at all: the last step ends at the log's modification time
        log = os.path.join(tmp, "untimed.jsonl")
        write_log(log, False)
        end = 1760000000
        os.utime(log, (end, end))
        tb = os.path.join(tmp, "tb2")
        series = report(log, tb)
        acc, name = events(tb)
        want = {s: end - (len(STEPS) - 1 - i) * 10 * DT for i, s in enumerate(STEPS)}
        n = check(acc, series, want)
        print("no timestamps: %d steps, %d tags, wall times %.2f..%.2f (mtime less the steps "
              "after)" % (len(STEPS), n, want[STEPS[0]], want[STEPS[-1]]))

        # a parent that is a file: one line naming it, no traceback
        open(os.path.join(tmp, "file"), "w").close()
        p = subprocess.run([MFU, "report", log, *CONTEXT, "--tensorboard",
                            os.path.join(tmp, "file", "tb")], capture_output=True, text=True)
        assert p.returncode == 1 and "cannot create the directory" in p.stderr and \
            os.path.join(tmp, "file") in p.stderr, (p.returncode, p.stderr)
        print("under a file: exit 1,", p.stderr.strip().splitlines()[-1])
    print("1 passed, 0 failed")


if __name__ == "__main__":
    sys.exit(main())
