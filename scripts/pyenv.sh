#!/usr/bin/env bash
# pyenv.sh: the project's Python environment for the tests of the integrations (tests/python/):
# a venv of Debian's /usr/bin/python3 that sees its python3-torch (scripts/deps.sh installs it)
# plus the pinned PyPI packages of python/requirements-test.txt, installed with --no-deps
# (every dependency is pinned there, so pip never replaces Debian's torch with PyPI's).
# Idempotent: a venv whose stamp matches the lock file is left alone; a changed lock remakes it.
# usage: scripts/pyenv.sh [VENV]     (default: $MFU_PYENV, else build/pyenv)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
venv=${1:-${MFU_PYENV:-$root/build/pyenv}}
lock=$root/python/requirements-test.txt
want=$(sha256sum "$lock" | cut -d' ' -f1)
stamp=$venv/.mfu-requirements
if [ -x "$venv/bin/python" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
    exit 0
fi
/usr/bin/python3 -c 'import torch' 2>/dev/null ||
    { echo "pyenv.sh: Debian's python3-torch is missing (bash scripts/deps.sh)" >&2; exit 1; }
echo "pyenv.sh: making $venv (python/requirements-test.txt)" >&2
mkdir -p "$(dirname "$venv")"
/usr/bin/python3 -m venv --system-site-packages --clear "$venv"
"$venv/bin/python" -m pip install --quiet --no-deps --disable-pip-version-check -r "$lock"
"$venv/bin/python" -c 'import torch, transformers, accelerate, lightning, tensorboard.backend.event_processing.event_accumulator' ||
    { echo "pyenv.sh: $venv cannot import the test packages" >&2; exit 1; }
echo "$want" >"$stamp"
