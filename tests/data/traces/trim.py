#!/usr/bin/python3
"""trim.py - cut a PyTorch profiler (Kineto) trace down to some of its ProfilerStep windows.

    trim.py IN.json[.gz] OUT.json.gz [--ops matmul] STEP [STEP ...]

Keeps, unchanged: every top-level key but traceEvents; metadata events (ph "M") and the
profiler's own span events; the ProfilerStep#STEP windows named; every CPU-side event (ops,
annotations, runtime calls, flow starts) that starts inside the first to the last of them;
the GPU-side events (kernels, copies, memsets, GPU annotations, syncs, flow ends) whose
correlation id is one of a kept runtime call's; and GPU activities without a runtime call in
the trace that start inside the GPU span of the kept ones. Nothing is rewritten: what is kept
is the trace's own bytes as JSON values, so the result is real data, only less of it.
--ops matmul keeps, of the CPU operators (cat cpu_op), only the matmul ones (aten::mm, addmm,
bmm, baddbmm, _scaled_mm, whose "Input Dims" give FLOPs): most of a trace's bytes are
operators that no GPU breakdown reads (kernels are tied to runtime calls, not to ops).
Standard library only.
"""
import gzip
import json
import sys

GPU_CATS = {"kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation", "cuda_sync"}


def load(path):
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rt") as f:
        return json.load(f)


def main():
    args = sys.argv[1:]
    ops_matmul = "--ops" in args
    if ops_matmul:
        i = args.index("--ops")
        if args[i + 1] != "matmul":
            raise SystemExit("trim.py: --ops takes 'matmul'")
        del args[i:i + 2]
    src, dst, steps = args[0], args[1], {"ProfilerStep#" + s for s in args[2:]}
    matmul = {"aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::_scaled_mm"}
    doc = load(src)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    wins = [(e["ts"], e["ts"] + e["dur"]) for e in events
            if e.get("name") in steps and e.get("cat") != "gpu_user_annotation"]
    if not wins:
        raise SystemExit("trim.py: no window named " + ", ".join(sorted(steps)))
    lo, hi = min(w[0] for w in wins), max(w[1] for w in wins)
    keep, corr = [], set()
    is_gpu = lambda e: e.get("cat") in GPU_CATS or (e.get("ph") == "f" and e.get("cat") == "ac2g")
    for e in events:
        if e.get("ph") == "M" or e.get("cat") == "Trace" or e.get("ph") == "i":
            keep.append(e)
        elif not is_gpu(e) and lo <= e.get("ts", -1) < hi:
            if str(e.get("name", "")).startswith("ProfilerStep#") and e.get("name") not in steps:
                continue
            if ops_matmul and e.get("cat") == "cpu_op" and e.get("name") not in matmul:
                continue
            keep.append(e)
            c = e.get("args", {}).get("correlation")
            if c is not None:
                corr.add(c)
            if e.get("ph") == "s" and e.get("cat") == "ac2g":
                corr.add(e.get("id"))
    launched = [e for e in events if is_gpu(e)
                and (e.get("args", {}).get("correlation", e.get("id")) in corr)]
    g_lo = min(e["ts"] for e in launched)
    g_hi = max(e["ts"] + e.get("dur", 0) for e in launched)
    all_corr = {e.get("args", {}).get("correlation") for e in events if not is_gpu(e)}
    orphans = [e for e in events if is_gpu(e) and e.get("ph") == "X"
               and e.get("args", {}).get("correlation") not in all_corr
               and g_lo <= e["ts"] < g_hi]
    keep_ids = {id(e) for e in keep + launched + orphans}
    out = [e for e in events if id(e) in keep_ids]  # the trace's own order
    if isinstance(doc, dict):
        doc = dict(doc)
        doc["traceEvents"] = out
    else:
        doc = out
    with gzip.GzipFile(dst, "wb", compresslevel=9, mtime=0) as f:
        f.write(json.dumps(doc).encode())
    print("%s: %d of %d events kept (%d GPU launched, %d without a launch)"
          % (dst, len(out), len(events), len(launched), len(orphans)))


if __name__ == "__main__":
    main()
