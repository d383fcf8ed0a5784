#!/usr/bin/env python3
"""bench/record.py - the cost of mfu.Monitor.record (and record_many) in a Python training
loop, next to the least a Python logger could do: json.dumps of the same fields + file.write
per step (a buffered file), measured in the same run.

    python3 bench/record.py [--steps N] [--rounds R]

Rows, each the median over R rounds (default 5, the rows alternated in each round) of N
records (default 100000), in CPU ns per record (time.process_time_ns: a loaded machine moves
it less than the wall time):
    record, no file         Monitor.record(tokens, dt, loss=...)
    record, jsonl file      the same with jsonl= (the C monitor's batched writes)
    record_many, jsonl      Monitor.record_many of 1000 steps a call, with the file
    json.dumps + write      the peer: json.dumps({"step", "tokens", "step_time_s", "loss"}) + "\\n"
Uses the build tree's libmfu (python/mfu finds build/libmfu.so) or $MFU_LIBRARY. Not a test.
"""
import argparse
import json
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import mfu  # noqa: E402


def losses(n):
    return [2.0 + 1.0 / (1.0 + i * 1e-3) for i in range(n)]


def row_record(n, path):
    ls = losses(n)
    mon = mfu.Monitor(model="llama3-8b", seq=8192, device="h100-sxm", devices=64, jsonl=path)
    rec = mon.record
    t0 = time.process_time_ns()
    for i in range(n):
        rec(524288, 0.25, loss=ls[i])
    mon.close()
    return (time.process_time_ns() - t0) / n


def row_many(n, path):
    ls = losses(n)
    mon = mfu.Monitor(model="llama3-8b", seq=8192, device="h100-sxm", devices=64, jsonl=path)
    tok = [524288] * 1000
    dt = [0.25] * 1000
    t0 = time.process_time_ns()
    for i in range(0, n, 1000):
        mon.record_many(tok, dt, loss=ls[i:i + 1000])
    mon.close()
    return (time.process_time_ns() - t0) / n


def row_peer(n, path):
    ls = losses(n)
    t0 = time.process_time_ns()
    with open(path, "a") as f:
        dumps, write = json.dumps, f.write
        for i in range(n):
            write(dumps({"step": i + 1, "tokens": 524288, "step_time_s": 0.25, "loss": ls[i]})
                  + "\n")
    return (time.process_time_ns() - t0) / n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=100000)
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args()
    rows = [("record_no_file", lambda n, p: row_record(n, None)),
            ("record_jsonl_file", row_record),
            ("record_many_jsonl", row_many),
            ("json_dumps_write_peer", row_peer)]
    got = {name: [] for name, _ in rows}
    d = tempfile.mkdtemp()
    for r in range(a.rounds):
        for k in range(len(rows)):
            name, fn = rows[(k + r) % len(rows)]
            path = os.path.join(d, "bench.jsonl")
            got[name].append(fn(a.steps, path))
            if os.path.exists(path):
                os.remove(path)
    os.rmdir(d)
    print("python record benchmark: %d records per row, %d rounds, median (min - max), CPU ns"
          % (a.steps, a.rounds))
    med = {}
    for name, _ in rows:
        med[name] = statistics.median(got[name])
        print("name=%s ns_per_record=%.0f min=%.0f max=%.0f"
              % (name, med[name], min(got[name]), max(got[name])))
    print("ratio: record_jsonl_file / peer = %.2f; record_many_jsonl / peer = %.2f "
          "(target: record < 2000 ns)" % (med["record_jsonl_file"] / med["json_dumps_write_peer"],
                                           med["record_many_jsonl"] / med["json_dumps_write_peer"]))


if __name__ == "__main__":
    main()
