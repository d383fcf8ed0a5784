"""tests/python/run_docs.py DOC.md - run every ```python block of a page as a test, each in a
new folder (so that the files an example writes stay apart) with fresh globals, one after the
other in this interpreter (PyTorch and transformers are imported once, not once a block),
and fail with the block's line number and traceback when one fails. A block right after a
line '<!-- not run: WHY -->' is skipped (a GPU example). Run by tests/e2e/python_docs.sh with
the project venv's python.

When a block uses Lightning, one line of harness runs first: Debian's torch 1.13 cannot import
torch.distributed._shard under Python 3.11, which LightningModule.__init__ does for torch
< 2.1, so there torch.distributed is reported unavailable (docs/python.md, "Test
environment"). Nothing else is added to what the page says.
"""
import os
import re
import sys
import tempfile
import time
import traceback


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


def lightning_shim():
    import torch
    if tuple(int(v) for v in torch.__version__.split(".")[:2]) < (2, 1):
        torch.distributed.is_available = lambda: False


def main():
    doc = os.path.abspath(sys.argv[1])
    todo = list(blocks(doc))
    if any("lightning" in code for _, code, skip in todo if not skip):
        lightning_shim()
    ran = failed = 0
    here = os.getcwd()
    for line, code, skip in todo:
        if skip:
            print("skip %s:%d (not run)" % (doc, line))
            continue
        ran += 1
        with tempfile.TemporaryDirectory() as d:
            os.chdir(d)
            t0 = time.perf_counter()
            try:
                exec(compile(code, "%s:%d" % (doc, line), "exec"), {"__name__": "__main__"})
                print("ok   %s:%d (%.1f s)" % (doc, line, time.perf_counter() - t0))
            except BaseException:  # an example that exits or raises fails, whatever it raises
                failed += 1
                print("FAIL %s:%d\n%s" % (doc, line, traceback.format_exc()[-3000:]))
            finally:
                os.chdir(here)
        sys.stdout.flush()
    print("%d passed, %d failed" % (ran - failed, failed))
    sys.exit(1 if failed or ran == 0 else 0)


if __name__ == "__main__":
    main()
