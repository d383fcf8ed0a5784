#!/usr/bin/python3
"""one_truth.py - the log and the checks of tests/e2e/one_truth.sh (standard library only).

    one_truth.py log OUT          write a canonical JSON-lines log where precedence matters
    one_truth.py check NAME REPORT.json ARGS...   compare one view with the report's figures

The log (300 steps, mfu's canonical JSON-lines, world size 8, sequence 2048): every step prints
its tokens, its step time and a tokens/s that disagrees with them (half of tokens / step time,
as a framework that counts one of two data-parallel groups would); from step 121 to 180 the job
runs on 16 devices, from 181 to 220 in fp8, from 221 to 260 a fifth of the tokens are padding
(useful_tokens), from 261 on the sequences are 1024 tokens (twice as many of them).

Checks (each prints one line and exits 1 on a mismatch):
    series REPORT SERIES.json     the server's per-step MFU and tokens/s equal the report's
    summary REPORT RUNS.json      /api/runs' summary equals the report's steady medians
    metrics REPORT METRICS.txt    /metrics mfu_ratio and mfu_tokens_per_second equal the
                                  medians of the report's last 50 steps
    html REPORT PAGE.html         the HTML page's MFU and tokens/s tiles are the report's medians
    watch REPORT FRAME.txt        mfu watch's "now" is the report's last step, its medians the
                                  report's (to the digits printed)
"""
import json
import math
import re
import sys

REL = 1e-9


def close(a, b, rel=REL):
    return a is not None and b is not None and abs(a - b) <= rel * abs(b)


def write_log(path):
    lines = [json.dumps({"mfu_run": 1, "format": "mfu", "world_size": 8, "seq_len": 2048})]
    for i in range(1, 301):
        tokens = 8 * 16 * 2048
        t = 0.9 * (1 + 0.01 * math.sin(i))
        row = {"step": i, "tokens": tokens, "step_time_s": t,
               "tokens_per_s": tokens / t / 2, "tokens_per_s_scope": "global",
               "loss": 3 - i / 1000}
        if 121 <= i <= 180:
            row["devices"] = 16
            row["step_time_s"] = t / 1.8
        if 181 <= i <= 220:
            row["dtype"] = "fp8"
        if 221 <= i <= 260:
            row["useful_tokens"] = 0.8 * tokens
        if i >= 261:
            row["seq_len"] = 1024
        lines.append(json.dumps(row))
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def report_series(rep):
    return {r["step"]: r for r in rep["series"]}


def median(v):
    v = sorted(x for x in v if x is not None)
    n = len(v)
    if n == 0:
        return None
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def check(name, rep_path, arg):
    rep = json.load(open(rep_path))
    rows = report_series(rep)
    mfu_med = rep["summary"]["mfu"]["median"]
    tps_med = rep["summary"]["tokens_per_second"]["median"]
    if name == "series":
        s = json.load(open(arg))
        cols = s["columns"]
        n = 0
        for k, step in enumerate(s["step"]):
            for key, col in (("mfu", "mfu"), ("tokens_per_second", "tokens_per_second")):
                want, got = rows[step][key], cols[col][k]
                if not close(got, want):
                    fail(f"series step {step} {key}: server {got}, report {want}")
            n += 1
        if n != len(rows):
            fail(f"series has {n} steps, the report {len(rows)}")
        print(f"series: {n} steps, MFU and tokens/s equal the report's")
    elif name == "summary":
        runs = json.load(open(arg))["runs"]
        sm = runs[0]["summary"]
        if not close(sm["mfu"], mfu_med) or not close(sm["tokens_per_second"], tps_med):
            fail(f"summary {sm}: report MFU {mfu_med}, tokens/s {tps_med}")
        print(f"summary: MFU {sm['mfu']:.6f}, tokens/s {sm['tokens_per_second']:.1f} = the report's")
    elif name == "metrics":
        text = open(arg).read()
        got = {}
        for m in ("mfu_ratio", "mfu_tokens_per_second"):
            x = re.search(r"^%s\{[^}]*\} (\S+)$" % m, text, re.M)
            if not x:
                fail(f"/metrics has no {m}")
            got[m] = float(x.group(1))
        last = [rows[s] for s in sorted(rows)][-50:]
        want_mfu = median([r["mfu"] for r in last if r["tokens_per_second"] is not None])
        want_tps = median([r["tokens_per_second"] for r in last if r["tokens_per_second"] is not None])
        if not close(got["mfu_ratio"], want_mfu) or not close(got["mfu_tokens_per_second"], want_tps):
            fail(f"/metrics {got}: the report's last 50 steps: MFU {want_mfu}, tokens/s {want_tps}")
        print(f"metrics: mfu_ratio {got['mfu_ratio']:.6f} = the median of the report's last 50 steps")
    elif name == "html":
        page = open(arg).read()
        tiles = dict(re.findall(r'<div class="tile"><span>([^<]*)</span><b>([^<]*)</b>', page))
        want = "%.2f %%" % (100 * mfu_med)
        if tiles.get("MFU") != want:
            fail(f"HTML MFU tile {tiles.get('MFU')!r}, report {want!r}")
        print(f"html: the MFU tile is {want}, the report's median")
    elif name == "watch":
        frame = open(arg).read()
        m = re.search(r"^MFU .* now (\S+)%\s+median (\S+)%", frame, re.M)
        if not m:
            fail("no MFU line in the watch frame")
        last = rows[max(rows)]
        now, med = float(m.group(1)), float(m.group(2))
        if abs(now - round(100 * last["mfu"], 1)) > 1e-9 or abs(med - round(100 * mfu_med, 1)) > 1e-9:
            fail(f"watch now {now} % median {med} %: report last {100 * last['mfu']:.3f} %, median {100 * mfu_med:.3f} %")
        print(f"watch: now {now} % (the last step), median {med} % (the report's)")
    else:
        fail("unknown check " + name)


if __name__ == "__main__":
    if sys.argv[1] == "log":
        write_log(sys.argv[2])
    else:
        check(sys.argv[2], sys.argv[3], sys.argv[4])
