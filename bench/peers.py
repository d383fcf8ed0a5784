"""bench/peers.py - the logs and the Python peers of bench/ingest.sh (standard library only).

  peers.py gen DIR LINES         write DIR/run.jsonl and DIR/megatron.log (LINES steps each)
  peers.py json FILE REPEAT      Python's json module: json.loads per line, keep the fields
  peers.py re FILE REPEAT        Python's re module on the Megatron log, keep the fields

A peer extracts per step what `mfu-bench-ingest` extracts at least: step, loss, step time and
tokens, appended to lists in memory (no output). It times itself in-process (interpreter start
not counted), best of REPEAT, and prints one key=value line:
  best_s=0.4479 records=200000 loss_sum=500012.345678
"""
import json
import random
import re
import sys
import time


def gen(d, n):
    random.seed(1)
    with open(f"{d}/run.jsonl", "w") as f:
        for i in range(1, n + 1):
            f.write('{"step": %d, "loss": %.6f, "lr": %.6e, "grad_norm": %.4f, '
                    '"step_time_s": %.5f, "tokens": 1048576, "tokens_per_s": %.1f, '
                    '"memory_bytes": 71202000000}\n'
                    % (i, 2 + random.random(), 3e-4, 0.5 + random.random(),
                       0.9 + 0.1 * random.random(), 1048576 / 0.95))
    with open(f"{d}/megatron.log", "w") as f:
        for i in range(1, n + 1):
            f.write(" [2024-05-01 10:%02d:%02d] iteration %8d/ 1000000 | consumed samples: %12d | "
                    "elapsed time per iteration (ms): %.1f | throughput per GPU (TFLOP/s/GPU): "
                    "%.1f | learning rate: %.6E | global batch size:   256 | lm loss: %.6E | "
                    "loss scale: 1.0 | grad norm: %.3f | number of skipped iterations:   0 | "
                    "number of nan iterations:   0 |\n"
                    % (i // 60 % 60, i % 60, i, i * 256, 900 + random.random() * 50,
                       400 + random.random() * 10, 3e-4, 2 + random.random(),
                       0.5 + random.random()))


def peer_json(path):
    steps, loss, step_time, tokens = [], [], [], []
    with open(path) as f:
        for line in f:
            o = json.loads(line)
            steps.append(o["step"])
            loss.append(o.get("loss"))
            step_time.append(o.get("step_time_s"))
            tokens.append(o.get("tokens"))
    return steps, loss


MEGATRON = re.compile(r"iteration\s+(\d+)/.*?elapsed time per iteration \(ms\): ([0-9.]+).*?"
                      r"global batch size:\s+(\d+).*?lm loss: ([0-9.E+-]+)")


def peer_re(path):
    steps, loss, step_time, tokens = [], [], [], []
    with open(path) as f:
        for line in f:
            m = MEGATRON.search(line)
            if m:
                steps.append(int(m.group(1)))
                loss.append(float(m.group(4)))
                step_time.append(float(m.group(2)) / 1000)
                tokens.append(int(m.group(3)) * 4096)
    return steps, loss


def timed(fn, path, repeat):
    best = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        steps, loss = fn(path)
        t = time.perf_counter() - t0
        best = t if best is None or t < best else best
    print("best_s=%.6f records=%d loss_sum=%.6f" % (best, len(steps), sum(loss)))


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "gen":
        gen(sys.argv[2], int(sys.argv[3]))
    elif cmd in ("json", "re"):
        timed(peer_json if cmd == "json" else peer_re, sys.argv[2], int(sys.argv[3]))
    else:
        sys.exit("usage: peers.py gen DIR LINES | json FILE REPEAT | re FILE REPEAT")
