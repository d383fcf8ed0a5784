#!/usr/bin/env bash
# e2e: `mfu report --tensorboard DIR` read back by the real TensorBoard package's event reader
# (tests/python/test_tensorboard.py: step numbers, each step's wall time from the log, the
# scalars against --json, seq_len and FLOPs per token), in the project venv (scripts/pyenv.sh;
# $MFU_PYENV overrides build/pyenv). Env: MFU_BIN, MFU_SOURCE_DIR.
set -u
bin=${MFU_BIN:?MFU_BIN is the built mfu}
src=${MFU_SOURCE_DIR:?MFU_SOURCE_DIR is the source tree}
py=${MFU_PYENV:-$src/build/pyenv}/bin/python
[ -x "$py" ] || { echo "python_tensorboard.sh: $py is missing (bash scripts/pyenv.sh)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
MFU_BIN=$bin PYTHONDONTWRITEBYTECODE=1 HOME=$tmp exec "$py" "$src/tests/python/test_tensorboard.py"
