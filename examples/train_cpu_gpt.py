"""examples/train_cpu_gpt.py - a real training run on this CPU, through the mfu binding: the
GPT-2-shaped tinygpt (examples/tinygpt.py, 4 layers of width 128) learns the bytes of this
repository's documentation, 100 steps at 128 tokens per sequence, then 100 at 256 (the same
1024 tokens per step in half as many sequences), with mfu.Monitor recording every step into
the canonical JSON-lines file that `make demo` reports (examples/runs.txt).

    build/pyenv/bin/python examples/train_cpu_gpt.py      # or any python with torch and mfu
    # writes examples/pytorch-cpu-tinygpt-seq-change.jsonl (replacing it)
    #    and examples/pytorch-cpu-tinygpt.config.json

The binding is this checkout's (python/ and build/libmfu.so) unless an installed mfu is
importable. examples/pytorch-cpu-tinygpt-seq-change.md says how the bundled run was made.
"""
import glob
import json
import os
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
try:
    import mfu
except ImportError:  # this checkout's binding
    sys.path.insert(0, os.path.join(ROOT, "python"))
    import mfu
sys.path.insert(0, HERE)
import tinygpt  # noqa: E402

CONFIG = {"model_type": "gpt2", "n_layer": 4, "n_embd": 128, "n_head": 4, "n_inner": None,
          "n_positions": 256, "vocab_size": 256}
PHASES = [(100, 128, 8), (100, 256, 4)]  # (steps, tokens per sequence, sequences per step)
OUT = os.path.join(HERE, "pytorch-cpu-tinygpt-seq-change.jsonl")
CONFIG_OUT = os.path.join(HERE, "pytorch-cpu-tinygpt.config.json")


def corpus():
    """The bytes of README.md and docs/**/*.md: real text, a 256-token byte vocabulary."""
    files = [os.path.join(ROOT, "README.md")] + sorted(
        glob.glob(os.path.join(ROOT, "docs", "**", "*.md"), recursive=True))
    data = b"\n".join(open(f, "rb").read() for f in files)
    return torch.tensor(list(data), dtype=torch.long)


def main():
    torch.manual_seed(1234)
    torch.set_num_threads(os.cpu_count() or 1)
    data = corpus()
    model = tinygpt.GPT(CONFIG)
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=0.01)
    with open(CONFIG_OUT, "w") as f:
        json.dump(CONFIG, f, indent=2)
        f.write("\n")
    if os.path.exists(OUT):
        os.remove(OUT)
    mon = mfu.Monitor(model=model, seq=PHASES[0][1], device=torch.device("cpu"),
                      dtype=torch.float32, jsonl=OUT, name="tinygpt 4L-128 (bytes of docs/)")
    print("%d bytes of text; %.2f M parameters; CPU fp32 peak %.1f GFLOP/s; %d threads"
          % (len(data), sum(p.numel() for p in model.parameters()) / 1e6,
             mon.peak_flops_per_s / 1e9, torch.get_num_threads()))
    step = 0
    t0 = time.time()
    for steps, seq, batch in PHASES:
        for _ in range(steps):
            step += 1
            starts = torch.randint(0, len(data) - seq - 1, (batch,))
            x = torch.stack([data[s:s + seq + 1] for s in starts.tolist()])
            with mon.step(tokens=batch * seq, seq=seq) as s:
                loss = model(x[:, :-1], x[:, 1:])
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
                s.loss = loss.item()
            if step % 25 == 0:
                print("step %3d  seq %3d  loss %.3f  %6.0f tokens/s  %.3f TFLOP/s  MFU %.1f %%"
                      % (step, seq, s.loss, s.tokens_per_second, s.tflops, 100 * s.mfu))
    rep = mon.report()
    mon.close()
    print("%d steps in %.0f s; steady median MFU %.1f %%; findings: %s"
          % (step, time.time() - t0, 100 * rep["summary"]["mfu"]["median"],
             ", ".join(f["kind"] for f in rep["findings"]) or "none"))


if __name__ == "__main__":
    main()
