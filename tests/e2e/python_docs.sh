#!/usr/bin/env bash
# e2e: every Python example of docs/python.md runs (tests/python/run_docs.py), in the project
# venv (scripts/pyenv.sh; $MFU_PYENV overrides build/pyenv) with this checkout's binding and
# library, on the CPU, nothing downloaded. Env: MFU_BIN, MFU_SOURCE_DIR.
set -u
bin=${MFU_BIN:?MFU_BIN is the built mfu}
src=${MFU_SOURCE_DIR:?MFU_SOURCE_DIR is the source tree}
py=${MFU_PYENV:-$src/build/pyenv}/bin/python
[ -x "$py" ] || { echo "python_docs.sh: $py is missing (bash scripts/pyenv.sh)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
MFU_LIBRARY=$(dirname "$bin")/libmfu.so PYTHONPATH=$src/python PYTHONDONTWRITEBYTECODE=1 \
    HF_HUB_OFFLINE=1 HOME=$tmp exec "$py" "$src/tests/python/run_docs.py" "$src/docs/python.md"
