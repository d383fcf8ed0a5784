"""bench/peers.py - the logs and the Python peers of bench/ingest.sh (standard library only).

  peers.py gen DIR LINES         write DIR/run.jsonl and DIR/megatron.log (LINES steps each)
  peers.py json FILE REPEAT      Python's json module: json.loads per line, keep the fields
  peers.py re FILE REPEAT        Python's re module on the Megatron log, keep the fields

A peer extracts per step the same fields that `mfu-bench-ingest` stores in its run (the same
extraction): from the JSON-lines log all 8 fields; from the Megatron log the timestamp (as
seconds since 1970, UTC), iteration, step time (ms -> s), TFLOP/s per GPU (-> FLOP/s), learning
rate, global batch (samples), lm loss, grad norm and the skipped / nan iteration counters,
converted to numbers and appended to lists in memory (no output). It times itself in-process
(interpreter start not counted), best of REPEAT, in wall time and in CPU time (user + system,
time.process_time), and prints one key=value line:
  best_s=0.4479 records=200000 loss_sum=500012.345678 best_cpu_s=0.4452
"""
import calendar
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


JSON_FIELDS = ("step", "loss", "lr", "grad_norm", "step_time_s", "tokens", "tokens_per_s",
               "memory_bytes")


def peer_json(path):
    cols = {k: [] for k in JSON_FIELDS}
    appends = [(k, cols[k].append) for k in JSON_FIELDS]
    with open(path) as f:
        for line in f:
            o = json.loads(line)
            for k, app in appends:
                app(o.get(k))
    return cols["step"], cols["loss"]


MEGATRON = re.compile(
    r"\[(\d{4})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)\] iteration\s+(\d+)/.*?"
    r"elapsed time per iteration \(ms\): ([0-9.]+) \| "
    r"throughput per GPU \(TFLOP/s/GPU\): ([0-9.]+) \| learning rate: ([0-9.E+-]+) \| "
    r"global batch size:\s+(\d+) \| lm loss: ([0-9.E+-]+) \|.*?grad norm: ([0-9.]+) \| "
    r"number of skipped iterations:\s+(\d+) \| number of nan iterations:\s+(\d+)")


def peer_re(path):
    names = ("time_s", "step", "step_time_s", "flops_per_s", "lr", "samples", "loss",
             "grad_norm", "skipped", "nan")
    cols = {k: [] for k in names}
    a = [cols[k].append for k in names]
    timegm = calendar.timegm
    with open(path) as f:
        for line in f:
            m = MEGATRON.search(line)
            if m:
                g = m.groups()
                a[0](timegm((int(g[0]), int(g[1]), int(g[2]), int(g[3]), int(g[4]), int(g[5]))))
                a[1](int(g[6]))
                a[2](float(g[7]) / 1000)
                a[3](float(g[8]) * 1e12)
                a[4](float(g[9]))
                a[5](int(g[10]))
                a[6](float(g[11]))
                a[7](float(g[12]))
                a[8](int(g[13]))
                a[9](int(g[14]))
    return cols["step"], cols["loss"]


def timed(fn, path, repeat):
    best = best_cpu = None
    for _ in range(repeat):
        c0 = time.process_time()
        t0 = time.perf_counter()
        steps, loss = fn(path)
        t = time.perf_counter() - t0
        c = time.process_time() - c0
        best = t if best is None or t < best else best
        best_cpu = c if best_cpu is None or c < best_cpu else best_cpu
    print("best_s=%.6f records=%d loss_sum=%.6f best_cpu_s=%.6f"
          % (best, len(steps), sum(loss), best_cpu))


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "gen":
        gen(sys.argv[2], int(sys.argv[3]))
    elif cmd in ("json", "re"):
        timed(peer_json if cmd == "json" else peer_re, sys.argv[2], int(sys.argv[3]))
    else:
        sys.exit("usage: peers.py gen DIR LINES | json FILE REPEAT | re FILE REPEAT")
