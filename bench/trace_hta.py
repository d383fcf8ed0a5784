"""bench/trace_hta.py - run by bench/trace_hta.sh inside the HTA venv (see there).

For every trace: HTA's TraceAnalysis(include_last_profiler_step=True).get_temporal_breakdown()
and `mfu trace --json` (default, and --launched-only, which leaves out the activities that have
no launch event in the trace), the three shares side by side and their largest difference in
points. HTA keeps a GPU activity only when a CPU event carries its correlation id, except in
a trace with one ProfilerStep, where it keeps every activity; mfu by default places an
activity without a launch event in the step whose GPU span it starts in. So "same selection"
compares with the mfu column that selects the activities HTA selected on that trace; then the time of each (best of --repeat; HTA in-process, parse and
breakdown; mfu as a process, start included) and the ratio. HTA_DISABLE_NS_ROUNDING=1 (set by
the script) keeps HTA on the traces' nanoseconds; by default it rounds each event inward to
whole microseconds (ceil the start, floor the end), which moves short-kernel traces by up to a
point.

--big MB: mfu alone on a trace of about MB megabytes (the first trace's events, its steps
repeated with shifted times and ids), wall time and peak RSS of the process.
"""
import argparse
import gzip
import json
import logging
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

logging.disable(logging.WARNING)
from hta.trace_analysis import TraceAnalysis  # noqa: E402


def hta_breakdown(path):
    d = tempfile.mkdtemp()
    try:
        shutil.copy(path, d)
        t0 = time.perf_counter()
        a = TraceAnalysis(trace_dir=d, include_last_profiler_step=True)
        df = a.get_temporal_breakdown(visualize=False)
        dt = time.perf_counter() - t0
        r = df.iloc[0]
        k = float(r["kernel_time(us)"])
        return (100 * float(r["idle_time(us)"]) / k, 100 * float(r["compute_time(us)"]) / k,
                100 * float(r["non_compute_time(us)"]) / k), dt
    finally:
        shutil.rmtree(d)


def mfu_breakdown(mfu, path, extra):
    t0 = time.perf_counter()
    p = subprocess.run([mfu, "trace", "--json", "--kernels", "0"] + extra + [path],
                       capture_output=True, text=True)
    dt = time.perf_counter() - t0
    if p.returncode:
        raise SystemExit("mfu trace %s: %s" % (path, p.stderr.strip()))
    t = json.loads(p.stdout)["ranks"][0]["totals"]
    s = t["span_s"]
    return (100 * t["idle_s"] / s, 100 * t["compute_s"] / s,
            100 * (t["communication_exposed_s"] + t["memcpy_s"]) / s), dt


def fmt(v):
    return "%5.2f %5.2f %5.2f" % v


def big_trace(src, mb, out):
    """src's events, its ProfilerStep windows and their events repeated, shifted in time by
    the trace's length and in correlation / external ids, until about mb megabytes."""
    with gzip.open(src, "rt") as f:
        doc = json.load(f)
    ev = doc["traceEvents"]
    ts = [e["ts"] for e in ev if "ts" in e and e.get("ph") != "M"]
    length = max(ts) - min(ts) + 1000
    one = len(json.dumps(ev))
    n = max(1, int(mb * 1e6 / one))
    with open(out, "w") as f:
        head = {k: v for k, v in doc.items() if k != "traceEvents"}
        f.write(json.dumps(head)[:-1] + ', "traceEvents": [\n')
        first = True
        for rep in range(n):
            shift, idshift = rep * length, rep * 10_000_000
            for e in ev:
                if e.get("ph") == "M" and rep:
                    continue
                e2 = dict(e)
                if "ts" in e2:
                    e2["ts"] = e2["ts"] + shift
                if "id" in e2 and isinstance(e2["id"], int):
                    e2["id"] += idshift
                a = e2.get("args")
                if isinstance(a, dict):
                    a = dict(a)
                    for k in ("correlation", "External id"):
                        if isinstance(a.get(k), int):
                            a[k] += idshift
                    e2["args"] = a
                if str(e2.get("name", "")).startswith("ProfilerStep#"):
                    e2["name"] = "ProfilerStep#%d" % (rep * 1000 + int(e2["name"][13:]))
                f.write(("" if first else ",\n") + json.dumps(e2))
                first = False
        f.write("\n]}\n")
    return n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--big", type=float, default=0)
    ap.add_argument("mfu")
    ap.add_argument("traces", nargs="+")
    a = ap.parse_args()
    print("shares in %% of the profiled GPU window: idle compute non-compute (best of %d)"
          % a.repeat)
    print("%-34s %-17s %-17s %-17s %6s %6s %8s %8s %7s" % (
        "trace", "HTA", "mfu", "mfu launched-only", "diff", "diff-l", "HTA s", "mfu s",
        "ratio"))
    worst, ratios = 0.0, []
    for path in a.traces:
        h, th = min((hta_breakdown(path) for _ in range(a.repeat)), key=lambda x: x[1])
        m, tm = min((mfu_breakdown(a.mfu, path, []) for _ in range(a.repeat)),
                    key=lambda x: x[1])
        ml, _ = mfu_breakdown(a.mfu, path, ["--launched-only"])
        d = max(abs(x - y) for x, y in zip(h, m))
        dl = max(abs(x - y) for x, y in zip(h, ml))
        worst = max(worst, min(d, dl))
        ratios.append(th / tm)
        name = os.path.relpath(path, os.path.join(os.path.dirname(__file__), "..",
                                                  "tests", "data", "traces"))
        print("%-34s %-17s %-17s %-17s %6.2f %6.2f %8.3f %8.3f %6.1fx" % (
            name[:34], fmt(h), fmt(m), fmt(ml), d, dl, th, tm, th / tm))
    print("largest difference with the same selection of activities: %.2f points" % worst)
    ratios.sort()
    print("mfu trace is %.1fx faster than HTA (median over %d traces; %.1fx..%.1fx)"
          % (ratios[len(ratios) // 2], len(ratios), ratios[0], ratios[-1]))
    if a.big > 0:
        d = tempfile.mkdtemp()
        try:
            big = os.path.join(d, "big.json")
            n = big_trace(a.traces[0], a.big, big)
            size = os.path.getsize(big)
            best = None
            for _ in range(a.repeat):
                before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
                t0 = time.perf_counter()
                p = subprocess.run([a.mfu, "trace", "--json", "--kernels", "0", "--no-steps",
                                    big], capture_output=True, text=True)
                dt = time.perf_counter() - t0
                rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
                if p.returncode:
                    raise SystemExit("mfu trace (big): " + p.stderr.strip())
                best = dt if best is None else min(best, dt)
            held = json.loads(p.stdout)["ranks"][0]["counts"]["held_bytes"]
            print("big trace: %.0f MB (%d copies of %s), mfu trace %.2f s (%.0f MB/s), peak RSS "
                  "of the runs %.0f MB, held by the reader %.0f MB"
                  % (size / 1e6, n, os.path.basename(a.traces[0]), best, size / 1e6 / best,
                     max(before, rss) / 1024, held / 1e6))
        finally:
            shutil.rmtree(d)


if __name__ == "__main__":
    sys.exit(main())
