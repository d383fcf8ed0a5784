#!/usr/bin/env bash
# e2e: mfu.integrations with the real Hugging Face Trainer, Lightning and Accelerate, on the
# CPU (tests/python/test_integrations.py), in the project venv (scripts/pyenv.sh: Debian's
# torch and the pinned PyPI packages; $MFU_PYENV overrides build/pyenv), with this checkout's
# binding and library. Nothing is downloaded (HF_HUB_OFFLINE). Env: MFU_BIN, MFU_SOURCE_DIR,
# MFU_FAKE_NVML.
set -u
bin=${MFU_BIN:?MFU_BIN is the built mfu}
src=${MFU_SOURCE_DIR:?MFU_SOURCE_DIR is the source tree}
py=${MFU_PYENV:-$src/build/pyenv}/bin/python
lib=$(dirname "$bin")/libmfu.so
[ -x "$py" ] || { echo "python_integrations.sh: $py is missing (bash scripts/pyenv.sh)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
MFU_BIN=$bin MFU_LIBRARY=$lib PYTHONPATH=$src/python PYTHONDONTWRITEBYTECODE=1 HF_HUB_OFFLINE=1 \
    HOME=$tmp exec "$py" "$src/tests/python/test_integrations.py"
