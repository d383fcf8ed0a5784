#!/usr/bin/python3
"""record.py - record PyTorch profiler traces of a small training loop on this machine's CPU.

    /usr/bin/python3 record.py OUTDIR

Debian 12's python3-torch (1.13.1, built without Kineto) on the CPU: a 2-layer MLP (256 ->
1024 -> 256, GELU) trained with AdamW on a fixed random batch of 64, two threads. Writes
OUTDIR/steps.json.gz (torch.profiler with a schedule of wait 1, warmup 1, active 3 and
prof.step() after every step: three ProfilerStep windows, CPU operators only) and
OUTDIR/nostep.json.gz (one step profiled without a schedule: no ProfilerStep window), and
prints one line per step the way a plain training script logs (step, loss, seconds).
"""
import gzip
import os
import sys
import tempfile
import time

import torch
import torch.nn as nn
from torch.profiler import ProfilerActivity, profile, schedule


def export(prof, path):
    # export_chrome_trace writes plain JSON; the bundle keeps it gzip'd, bytes unchanged
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as tmp:
        name = tmp.name
    prof.export_chrome_trace(name)
    with open(name, "rb") as f, gzip.GzipFile(path, "wb", compresslevel=9, mtime=0) as g:
        g.write(f.read())
    os.unlink(name)


def main():
    out = sys.argv[1]
    torch.manual_seed(0)
    torch.set_num_threads(2)
    model = nn.Sequential(nn.Linear(256, 1024), nn.GELU(), nn.Linear(1024, 256))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x, y = torch.randn(64, 256), torch.randn(64, 256)

    def step():
        opt.zero_grad(set_to_none=True)
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        return loss.item()

    with profile(activities=[ProfilerActivity.CPU], record_shapes=True,
                 schedule=schedule(wait=1, warmup=1, active=3),
                 on_trace_ready=lambda p: export(p, os.path.join(out, "steps.json.gz"))) as prof:
        for i in range(6):
            t0 = time.time()
            loss = step()
            prof.step()
            print("step %d loss %.4f time %.4f" % (i + 1, loss, time.time() - t0))
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        step()
    export(prof, os.path.join(out, "nostep.json.gz"))


if __name__ == "__main__":
    main()
