#!/usr/bin/python3
"""trace_check.py - an independent computation of a trace's GPU breakdown, to check mfu's.

    /usr/bin/python3 trace_check.py TRACE MFU_JSON RANK_INDEX [TOLERANCE_POINTS]

Reads the trace (plain or gzip) with Python's json module and computes, from the documented
rules (docs/internals/trace.md) but by another method than src/trace: interval unions instead
of a priority sweep.
  - steps: the ProfilerStep#N events not of category gpu_user_annotation;
  - a GPU activity (kernel, gpu_memcpy, gpu_memset) belongs to the window that holds the CPU
    time of its launch: the runtime event (category ending _runtime or _driver) with its
    args.correlation, else the ac2g flow start with that id; an activity without either is
    placed in the step whose GPU span it starts in (spans from the first launched activity's
    start to the next step's, the last to its last activity's end);
  - the rank's window runs from the first step activity's start to the last one's end; over
    it, compute = |union of compute kernels|, exposed communication = |union(compute, comm)| -
    compute, memcpy = |union(all)| - |union(compute, comm)|, idle = window - |union(all)|;
  - a kernel is communication when its name (without the parameter list) holds nccl, rccl,
    msccl or hccl, a copy when its category is gpu_memcpy/gpu_memset or its name starts
    Memcpy/Memset; compute otherwise.
Then compares with mfu trace --json's ranks[RANK_INDEX]: every step's span and the window's
idle, compute, exposed-communication and memcpy shares within TOLERANCE_POINTS (default 2),
and that mfu's parts sum to each span within 1 %. Prints one line; exit 1 on a mismatch.
Standard library only.
"""
import gzip
import json
import re
import sys

COMM = re.compile(r"nccl|rccl|msccl|hccl", re.I)


def head(name):
    depth = 0
    i = 0
    while i < len(name):
        c = name[i]
        if c == "<":
            depth += 1
        elif c == ">" and depth:
            depth -= 1
        elif c == "(" and depth == 0 and not name.startswith("(anonymous namespace)", i):
            return name[:i]
        i += 1
    return name


def kind(e):
    n = e.get("name", "")
    if e["cat"] in ("gpu_memcpy", "gpu_memset") or n.startswith(("Memcpy", "Memset")):
        return "copy"
    return "comm" if COMM.search(head(n)) else "compute"


def union(iv):
    total, cur = 0.0, None
    for a, b in sorted(iv):
        if cur is None or a > cur[1]:
            if cur:
                total += cur[1] - cur[0]
            cur = [a, b]
        else:
            cur[1] = max(cur[1], b)
    return total + (cur[1] - cur[0] if cur else 0.0)


def main():
    path, jpath, idx = sys.argv[1], sys.argv[2], int(sys.argv[3])
    tol = float(sys.argv[4]) if len(sys.argv) > 4 else 2.0
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rt") as f:
        doc = json.load(f)
    ev = doc["traceEvents"] if isinstance(doc, dict) else doc
    wins = sorted((e["ts"], e["ts"] + e["dur"], e["name"]) for e in ev
                  if e.get("ph") == "X" and str(e.get("name", "")).startswith("ProfilerStep#")
                  and e.get("cat") != "gpu_user_annotation")
    launch = {}
    for e in ev:
        c = e.get("args", {}).get("correlation") if isinstance(e.get("args"), dict) else None
        if e.get("ph") == "X" and str(e.get("cat", "")).endswith(("_runtime", "_driver")) \
                and c is not None:
            launch.setdefault(c, e["ts"])
    for e in ev:
        if e.get("ph") == "s" and e.get("cat") == "ac2g" and "id" in e:
            launch.setdefault(e["id"], e["ts"])
    acts = [e for e in ev if e.get("ph") == "X" and e.get("cat") in
            ("kernel", "gpu_memcpy", "gpu_memset") and "dur" in e]
    step_of, orphans = {}, []
    for i, e in enumerate(acts):
        c = e.get("args", {}).get("correlation")
        if c in launch:
            for w, (a, b, _) in enumerate(wins):
                if a <= launch[c] < b:
                    step_of[i] = w
        elif c not in launch:
            orphans.append(i)
    lo, hi = {}, {}
    for i, w in step_of.items():
        e = acts[i]
        lo[w] = min(lo.get(w, e["ts"]), e["ts"])
        hi[w] = max(hi.get(w, e["ts"] + e["dur"]), e["ts"] + e["dur"])
    order = sorted((lo[w], w) for w in lo)
    for i in orphans:
        t = acts[i]["ts"]
        for j, (start, w) in enumerate(order):
            end = order[j + 1][0] if j + 1 < len(order) else hi[w]
            if start <= t < end:
                step_of[i] = w
    spans = {}
    for i, w in step_of.items():
        e = acts[i]
        s = spans.setdefault(w, [e["ts"], e["ts"] + e["dur"]])
        s[0], s[1] = min(s[0], e["ts"]), max(s[1], e["ts"] + e["dur"])
    mine = [acts[i] for i in step_of]
    w0 = min(e["ts"] for e in mine)
    w1 = max(e["ts"] + e["dur"] for e in mine)
    window = w1 - w0
    iv = lambda ks: [(e["ts"], e["ts"] + e["dur"]) for e in mine if kind(e) in ks]
    comp = union(iv({"compute"}))
    cc = union(iv({"compute", "comm"}))
    busy = union(iv({"compute", "comm", "copy"}))
    ref = {"idle": 100 * (window - busy) / window, "compute": 100 * comp / window,
           "comm": 100 * (cc - comp) / window, "copy": 100 * (busy - cc) / window}

    with open(jpath) as f:
        j = json.load(f)
    r = j["ranks"][idx]
    bad = []
    t = r["totals"]
    parts = ["matmul_s", "attention_s", "other_s", "communication_exposed_s", "memcpy_s",
             "idle_s"]
    for s in r["steps"] + [dict(step="totals", breakdown=t, step_time_s=t["span_s"])]:
        b = s["breakdown"]
        if b["span_s"] > 0 and abs(sum(b[p] for p in parts) / b["span_s"] - 1) > 0.01:
            bad.append("step %s: parts sum to %r, span %r" % (s["step"],
                                                              sum(b[p] for p in parts),
                                                              b["span_s"]))
        if abs(b["compute_s"] - b["matmul_s"] - b["attention_s"] - b["other_s"]) > 1e-9:
            bad.append("step %s: compute is not matmul + attention + other" % s["step"])
    span = t["span_s"]
    got = {"idle": 100 * t["idle_s"] / span, "compute": 100 * t["compute_s"] / span,
           "comm": 100 * t["communication_exposed_s"] / span,
           "copy": 100 * t["memcpy_s"] / span}
    for k in ref:
        if abs(ref[k] - got[k]) > tol:
            bad.append("%s share: mfu %.3f, independent %.3f" % (k, got[k], ref[k]))
    if abs(span - window * 1e-6) > 1e-6 * max(1.0, window * 1e-6):
        bad.append("window: mfu %.9f s, independent %.9f s" % (span, window * 1e-6))
    by_step = {wins[w][2]: (s[1] - s[0]) * 1e-6 for w, s in spans.items()}
    for s in r["steps"]:
        name = "ProfilerStep#%d" % s["step"]
        want = by_step.get(name, 0.0)
        if abs(s["step_time_s"] - want) > 1e-6:
            bad.append("%s: step time mfu %r, independent %r" % (name, s["step_time_s"], want))
    print("%s rank %s: idle %.2f/%.2f compute %.2f/%.2f comm %.2f/%.2f copy %.2f/%.2f "
          "(mfu/independent, %%), %d steps: %s" % (
              path.split("/")[-1], r["rank"], got["idle"], ref["idle"], got["compute"],
              ref["compute"], got["comm"], ref["comm"], got["copy"], ref["copy"],
              len(r["steps"]), "ok" if not bad else "; ".join(bad[:4])))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
