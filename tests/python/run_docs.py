"""tests/python/run_docs.py DOC.md - run every ```python block of a page as a test, each as a
new process in a new folder (so that the files an example writes stay apart), and fail with
the block's line number and its output when one fails. A block right after a line
'<!-- not run: WHY -->' is skipped (a GPU example). Run by tests/e2e/python_docs.sh with the
project venv's python.

A block that uses Lightning runs after one line of harness: Debian's torch 1.13 cannot import
torch.distributed._shard under Python 3.11, which LightningModule.__init__ does for torch
< 2.1, so there torch.distributed is reported unavailable (docs/python.md, "Test
environment"). Nothing else is added to what the page says.
"""
import os
import re
import subprocess
import sys
import tempfile

SHIM = ("import torch\n"
        "if tuple(int(v) for v in torch.__version__.split('.')[:2]) < (2, 1):\n"
        "    torch.distributed.is_available = lambda: False\n")


def blocks(path):
    lines = open(path, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        if lines[i].strip() == "```python":
            start = i + 1
            j = start
            while j < len(lines) and lines[j].strip() != "```":
                j += 1
            skip = i > 0 and re.match(r"\s*<!-- not run", lines[i - 1])
            yield start + 1, "\n".join(lines[start:j]) + "\n", bool(skip)
            i = j
        i += 1


def main():
    doc = sys.argv[1]
    ran = failed = 0
    for line, code, skip in blocks(doc):
        if skip:
            print("skip %s:%d (not run)" % (doc, line))
            continue
        with tempfile.TemporaryDirectory() as d:
            script = os.path.join(d, "example.py")
            with open(script, "w") as f:
                f.write((SHIM if "lightning" in code else "") + code)
            p = subprocess.run([sys.executable, script], cwd=d, capture_output=True,
                               text=True, timeout=300)
        ran += 1
        if p.returncode != 0:
            failed += 1
            print("FAIL %s:%d exit %d\n%s" % (doc, line, p.returncode,
                                             (p.stdout + p.stderr)[-3000:]))
        else:
            print("ok   %s:%d" % (doc, line))
    print("%d passed, %d failed" % (ran - failed, failed))
    sys.exit(1 if failed or ran == 0 else 0)


if __name__ == "__main__":
    main()
