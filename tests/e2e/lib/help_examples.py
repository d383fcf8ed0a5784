#!/usr/bin/python3
"""help_examples.py - run every example that `mfu --help` and `mfu COMMAND --help` print.

    help_examples.py            (MFU_BIN, MFU_TEST_DATA, MFU_SOURCE_DIR, MFU_FAKE_NVML from CTest)

The examples are read from the help text itself (the lines under "Examples:", continuation
lines joined), so an example that is edited, added or broken is tested as printed. Each
command's examples run in order, as a user pasting them into one terminal would: in one
sandbox directory (the files they name exist there, made from the real log excerpts of
tests/data), with `mfu` and `build/mfu` on hand, `export` lines carried to the next examples,
and a job started with `&` kept running (and stopped) after the command's last example.

What counts as passing:
  - an example that ends: it exits 0, or the status its help documents (EXPECT_STATUS);
  - an example documented to run until Ctrl-C (a server, a follower: LONG_RUNNING): it is
    still running after READY_S seconds, has printed something, and a server answers HTTP on
    its port; then it gets SIGINT (Ctrl-C) and must stop.
Stand-ins, where an example needs what a test machine lacks: `torchrun ...` is a shell function
that prints a real torchtitan log (what the training run would write), and NVML is the fake
library of tests/fake (MFU_NVML_LIBRARY, documented in `mfu devices --help`).

Standard library only (run with /usr/bin/python3).
"""
import gzip
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

BIN = os.environ["MFU_BIN"]
DATA = os.environ["MFU_TEST_DATA"]
SRC = os.environ["MFU_SOURCE_DIR"]
NVML = os.environ.get("MFU_FAKE_NVML", "")
GENLOG = os.path.join(SRC, "tests/e2e/lib/genlog.py")
LOGS = os.path.join(DATA, "logs")
TORCHTITAN = os.path.join(LOGS, "torchtitan/torchtitan-pr1287-llama3-8b-h100-gc-profiler.log")
MEGATRON = os.path.join(LOGS, "megatron-lm/fixstars-mdk-gpt3-7b-fp8-2node.log")
LLMC = os.path.join(LOGS, "llm.c/llmc-discussion677-gpt2-1558m-8xh100.log")
NANOGPT = os.path.join(LOGS, "nanogpt/nanogpt-issue215-v100-fp16-nan.log")

READY_S = 2.5    # a long-running example must still run (and have printed) by then
END_S = 120      # an example that ends must end within this
# Examples documented to run until interrupted: servers and followers.
LONG_RUNNING = [r"\bmfu serve\b", r"\bmfu watch\b(?!.*--once)", r"--live --watch\b",
                r"examples/demo\.sh"]
# Statuses the help documents for an example (exit 3: a violated --expect). The torchtitan
# excerpt's MFU is 34 % (its own print; mfu says unknown without --seq): below 0.40 either way.
EXPECT_STATUS = {r"--expect 'mfu>=0\.40'": 3}

failures = []
VERBOSE = os.environ.get("MFU_EXAMPLES_VERBOSE") == "1"  # print every example and its output


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg, flush=True)


def help_text(cmd):
    args = [BIN] + ([cmd] if cmd else []) + ["--help"]
    p = subprocess.run(args, capture_output=True, text=True, timeout=30)
    if p.returncode != 0:
        fail("%s --help: exit %d" % (" ".join(args[1:]), p.returncode))
    return p.stdout


def commands():
    """The command names `mfu --help` lists."""
    out, names, inside = help_text(""), [], False
    for line in out.splitlines():
        if line.strip() == "commands:":
            inside = True
            continue
        if inside:
            m = re.match(r"^  (\S+)\s", line)
            if not m:
                break
            names.append(m.group(1))
    return names


def examples(text):
    """The example command lines of a help text: the indented lines under 'Examples:' (or
    'examples:'), a line ending in a backslash joined with the next."""
    out, inside, cur = [], False, ""
    for line in text.splitlines():
        if re.match(r"^\s*[Ee]xamples:\s*$", line):
            inside = True
            continue
        if not inside:
            continue
        if not line.startswith(" ") or not line.strip():
            if cur:
                out.append(cur)
                cur = ""
            inside = False
            continue
        part = line.strip()
        if cur:
            cur += " " + part
        else:
            cur = part
        if cur.endswith("\\"):
            cur = cur[:-1].rstrip()
        else:
            out.append(cur)
            cur = ""
    if cur:
        out.append(cur)
    return out


def run(args, **kw):
    return subprocess.run(args, capture_output=True, text=True, timeout=60, **kw)


def genlog(out, model_flops, mfu, steps, peak):
    p = run(["/usr/bin/python3", GENLOG, "clean", out, "--steps", str(steps), "--flops",
             str(model_flops), "--mfu", str(mfu), "--peak", str(peak), "--noise", "0.01"])
    if p.returncode:
        raise SystemExit("genlog: " + p.stderr)


def flops_per_token(*args):
    import json
    p = run([BIN, "flops", "--json"] + list(args))
    return json.loads(p.stdout)["flops_per_token"]["model"]


def sandbox(cmd, base):
    """A directory holding every file the examples name (copies of real excerpts)."""
    d = tempfile.mkdtemp(prefix="ex-%s-" % (cmd or "mfu"), dir=base)
    os.makedirs(os.path.join(d, "bin"))
    os.makedirs(os.path.join(d, "build"))
    os.symlink(BIN, os.path.join(d, "bin/mfu"))
    os.symlink(BIN, os.path.join(d, "build/mfu"))
    os.symlink(os.path.join(SRC, "examples"), os.path.join(d, "examples"))
    for name in ("train.log", "run.log", "node3.log"):
        shutil.copy(TORCHTITAN, os.path.join(d, name))
    shutil.copy(os.path.join(DATA, "model/llama3-8b.json"), os.path.join(d, "config.json"))
    logs = os.path.join(d, "logs")
    os.makedirs(logs)
    shutil.copy(LLMC, os.path.join(logs, "gpt2.log"))
    shutil.copy(NANOGPT, os.path.join(logs, "nanogpt.log"))
    lines = open(MEGATRON, "rb").read().splitlines(keepends=True)
    cut = next(i for i, ln in enumerate(lines) if b"iteration       50/" in ln)
    for name, part in (("part1.log.gz", lines[:cut]), ("part2.log.gz", lines[cut:])):
        with gzip.open(os.path.join(logs, name), "wb") as f:
            f.writelines(part)
    with gzip.open(os.path.join(d, "node0.log.gz"), "wb") as f:
        f.writelines(lines)
    # a CSV of the kind a training script writes with its own column names
    with open(os.path.join(d, "metrics.csv"), "w") as f:
        f.write("iter,dt_ms,loss\n")
        for i in range(1, 41):
            f.write("%d,%.1f,%.4f\n" % (i, 1398.0 + (i * 37) % 11, 6.2 - 0.01 * i))
    # canonical step objects, as a monitor posts them: mfu convert's lines without the header
    conv = run([BIN, "convert", TORCHTITAN])
    with open(os.path.join(d, "steps.jsonl"), "w") as f:
        f.writelines(ln + "\n" for ln in conv.stdout.splitlines()[1:])
    # profiler traces (real ones, tests/data/traces): two ranks, one trace, a before/after pair
    tr = os.path.join(DATA, "traces")
    for name, src in (("rank0.json.gz", "hta-sampled-2ranks/rank-0.json.gz"),
                      ("rank1.json.gz", "hta-sampled-2ranks/rank-1.json.gz"),
                      ("before.json", "hta-diff/control.json.gz"),
                      ("after.json", "hta-diff/test.json.gz"),
                      ("trace.json", "hta-nccl-a100/rank-0.json.gz")):
        with gzip.open(os.path.join(tr, src), "rb") as fi, open(os.path.join(d, name), "wb") as fo:
            shutil.copyfileobj(fi, fo)
        if name.endswith(".gz"):
            with open(os.path.join(d, name), "rb") as fi:
                raw = fi.read()
            with gzip.open(os.path.join(d, name), "wb") as fo:
                fo.write(raw)
    # before/after: llama3-8b on 8 H100 at MFU 0.40 and 0.43 (canonical logs, known truth)
    fpt = flops_per_token("--model", "llama3-8b", "--seq", "4096")
    genlog(os.path.join(d, "before.log"), fpt, 0.40, 300, 989.5e12)
    genlog(os.path.join(d, "after.log"), fpt, 0.43, 300, 989.5e12)
    if cmd == "compare":  # run.log:1000-2000 run.log:3000-4000 --model gpt2 --device a100
        genlog(os.path.join(d, "run.log"), flops_per_token("--model", "gpt2", "--seq", "4096"),
               0.35, 4200, 312e12)
    ctx = ["--model", "gpt2-xl", "--device", "h100-sxm", "--devices", "8"]
    if cmd == "report":  # mfu report --run llmc-gpt2 --db runs.db
        ingest(d, [LLMC, "--run", "llmc-gpt2", "--db", "runs.db"] + ctx)
    if cmd == "runs":
        ingest(d, [LLMC, "--run", "llmc-gpt2", "--db", "runs.db"] + ctx)
        ingest(d, [LLMC, "--run", "llmc-gpt2"] + ctx)
    if cmd == "rm":  # mfu rm train; mfu rm old-a old-b --db runs.db
        ingest(d, [TORCHTITAN, "--run", "train"])
        ingest(d, [LLMC, "--run", "old-a", "--db", "runs.db"])
        ingest(d, [NANOGPT, "--run", "old-b", "--db", "runs.db"])
    return d


def ingest(d, args):
    p = run([BIN, "ingest"] + args, cwd=d)
    if p.returncode:
        raise SystemExit("setup ingest %s: %s" % (args, p.stderr))


def env_for(d):
    e = dict(os.environ)
    e["PATH"] = os.path.join(d, "bin") + os.pathsep + e.get("PATH", "")
    e["HOME"] = d
    e.pop("MFU_DB", None)
    e.pop("MFU_TOKEN", None)
    if NVML:
        e["MFU_NVML_LIBRARY"] = NVML
    # torchrun stands in for the training run: it prints a real torchtitan log
    e["BASH_FUNC_torchrun%%"] = "() { cat '%s'; }" % TORCHTITAN
    return e


def listen_port(ex):
    m = re.search(r"--listen\s+\S*:(\d+)", ex)
    if m:
        return int(m.group(1))
    return 8080 if re.search(r"\bmfu serve\b", ex) else None


def port_free(port):
    s = socket.socket()
    try:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", port))
        return True
    except OSError:
        return False
    finally:
        s.close()


def served_url(text):
    m = re.search(r"http://[0-9.]+:(\d+)/", text)
    return int(m.group(1)) if m else None


def http_ok(port):
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d/api/runs" % port, timeout=5) as r:
            return r.status == 200
    except (urllib.error.URLError, OSError):
        return False


def start(ex, d, env, n):
    out = open(os.path.join(d, ".ex%d.out" % n), "w+")
    p = subprocess.Popen(["bash", "-o", "pipefail", "-c", ex], cwd=d, env=env, stdout=out,
                         stderr=subprocess.STDOUT, start_new_session=True)
    return p, out


def output_of(out):
    out.flush()
    out.seek(0)
    return out.read()


def stop(p, label):
    """Ctrl-C: SIGINT to the job's process group; it must end."""
    try:
        os.killpg(p.pid, signal.SIGINT)
    except ProcessLookupError:
        return
    try:
        p.wait(timeout=15)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
        fail("%s: did not stop on Ctrl-C" % label)


def check_long(ex, d, env, n, label):
    """A server or follower: running after READY_S, with output; a server answers HTTP."""
    port = listen_port(ex)
    if port and port != 0 and not port_free(port):
        print("skip: %s (port %d is in use on this machine)" % (label, port), flush=True)
        return None
    p, out = start(ex.rstrip(" &"), d, env, n)
    deadline = time.time() + 20
    text = ""
    while time.time() < deadline:
        time.sleep(0.2)
        text = output_of(out)
        redirect = re.search(r">>?\s*(\S+)\s*$", ex)
        if redirect and os.path.exists(os.path.join(d, redirect.group(1))):
            text += open(os.path.join(d, redirect.group(1))).read()
        if p.poll() is not None:
            break
        if text.strip() and (port is None or served_url(text)) and \
                time.time() > deadline - 20 + READY_S:
            break
    if p.poll() is not None:
        fail("%s: ended (exit %d) though it runs until Ctrl-C: %s" % (label, p.returncode,
                                                                     text[-400:]))
        return None
    if not text.strip():
        fail("%s: printed nothing in %.1f s" % (label, READY_S))
    if VERBOSE:
        print("== %s: running\n%s" % (label, text[-800:]), flush=True)
    if port is not None:
        got = served_url(text)
        if not got or not http_ok(got):
            fail("%s: no HTTP answer (printed: %s)" % (label, text[-300:]))
    return p


def main():
    base = tempfile.mkdtemp(prefix="mfu-help-examples-")
    total = 0
    try:
        for cmd in [""] + commands():
            exs = examples(help_text(cmd))
            if cmd and cmd != "version" and not exs:
                fail("mfu %s --help has no examples" % cmd)
            if not exs:
                continue
            d = sandbox(cmd, base)
            env = env_for(d)
            background = []
            for n, ex in enumerate(exs):
                total += 1
                label = "mfu %s --help, example %d: %s" % (cmd, n + 1, ex) if cmd else \
                    "mfu --help, example %d: %s" % (n + 1, ex)
                if ex.startswith("export "):
                    p = run(["bash", "-c", ex + "; env -0"], cwd=d, env=env)
                    if p.returncode:
                        fail("%s: exit %d" % (label, p.returncode))
                    for kv in p.stdout.split("\0"):
                        k, _, v = kv.partition("=")
                        if k and not k.startswith("BASH_FUNC"):
                            env[k] = v
                    continue
                if ex.endswith("&") or any(re.search(r, ex) for r in LONG_RUNNING):
                    p = check_long(ex, d, env, n, label)
                    if p is None:
                        continue
                    if ex.endswith("&"):
                        background.append((p, label))
                    else:
                        stop(p, label)
                    continue
                want = 0
                for pat, st in EXPECT_STATUS.items():
                    if re.search(pat, ex):
                        want = st
                p, out = start(ex, d, env, n)
                try:
                    p.wait(timeout=END_S)
                except subprocess.TimeoutExpired:
                    os.killpg(p.pid, signal.SIGKILL)
                    p.wait()
                    fail("%s: still running after %d s" % (label, END_S))
                    continue
                text = output_of(out)
                if VERBOSE:
                    print("== %s: exit %d\n%s" % (label, p.returncode, text[-800:]), flush=True)
                if p.returncode != want:
                    fail("%s: exit %d, want %d: %s" % (label, p.returncode, want, text[-600:]))
                elif not text.strip() and ">" not in ex:
                    fail("%s: printed nothing" % label)
            for p, label in background:
                stop(p, label)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    if total < 40:
        fail("only %d examples found in the help texts" % total)
    if failures:
        print("help_examples: %d of %d examples failed" % (len(failures), total))
        return 1
    print("help_examples: all %d examples ran as documented" % total)
    return 0


if __name__ == "__main__":
    sys.exit(main())
