#!/usr/bin/env bash
# e2e: the Python package as a user installs it, with pip, into new virtual environments, with
# no network (pip --no-index: the in-tree backend has no build requirement) and nothing from
# this checkout on the path:
#   1. pip install ./python into a bare venv (no site packages): the binding imports the
#      library the package carries, the mfu CLI it installs runs, a Monitor works;
#   2. pip wheel ./python gives one wheel (library, CLI, binding, integrations, RECORD);
#   3. that wheel into a venv that sees Debian's torch: tests/python/test_loop.py, the
#      acceptance loop (dict config, torch.device, torch.dtype; mfu report of its file;
#      flops_per_token(..., attention="full") against PyTorch's count);
#   4. the sdist holds every C source the build globs, and CMake configures from it.
# The CMake build of the wheel lives in build/python-wheel (incremental). Env: MFU_BIN,
# MFU_SOURCE_DIR.
set -u
bin=${MFU_BIN:?MFU_BIN is the built mfu}
src=${MFU_SOURCE_DIR:?MFU_SOURCE_DIR is the source tree}
[ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import venv, torch' 2>/dev/null ||
    { echo "python_pip.sh: /usr/bin/python3 lacks venv or torch (bash scripts/deps.sh)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
# nothing of the checkout or the caller's Python setup leaks in
unset PYTHONPATH MFU_LIBRARY PIP_FIND_LINKS PIP_INDEX_URL PIP_EXTRA_INDEX_URL
export PIP_NO_INDEX=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONDONTWRITEBYTECODE=1
cd "$tmp" || exit 1

# 1. pip install ./python into a bare venv
/usr/bin/python3 -m venv "$tmp/bare" || { echo "python_pip.sh: venv failed"; exit 1; }
if ! "$tmp/bare/bin/pip" install "$src/python" >"$tmp/pip.log" 2>&1; then
    tail -30 "$tmp/pip.log"
    echo "FAIL: pip install ./python"
    exit 1
fi
"$tmp/bare/bin/python" - "$tmp/bare" <<'EOF' || fail "the installed binding"
import os, sys
import mfu
prefix = sys.argv[1]
assert mfu.library_path.startswith(prefix + "/lib/"), mfu.library_path
with mfu.Monitor(model="gpt2", seq=1024, device="h100-sxm", devices=8) as mon:
    s = mon.record(tokens=8 * 16 * 1024, step_time_s=0.41)
    want = 16 * 1024 / 0.41 * mfu.flops_per_token("gpt2", 1024) / 989.5e12
    assert abs(s.mfu - want) <= 1e-12 * want, (s, want)
import mfu.integrations  # lazy: needs neither transformers nor Lightning until used
assert "transformers" not in sys.modules and "torch" not in sys.modules
try:
    mfu.integrations.HFTrainerCallback
    raise AssertionError("HFTrainerCallback without transformers")
except ImportError:
    pass
EOF
[ "$("$tmp/bare/bin/mfu" --version)" = "$("$bin" --version)" ] ||
    fail "the installed mfu CLI: $("$tmp/bare/bin/mfu" --version 2>&1)"
"$tmp/bare/bin/mfu" flops --model gpt2 --seq 1024 --json >"$tmp/flops.json" ||
    fail "the installed mfu CLI cannot count"

# 2. a wheel
"$tmp/bare/bin/pip" wheel --no-deps -w "$tmp/wheels" "$src/python" >"$tmp/wheel.log" 2>&1 ||
    { tail -20 "$tmp/wheel.log"; fail "pip wheel ./python"; }
whl=$(ls "$tmp"/wheels/mfu-*.whl 2>/dev/null)
case "$whl" in
    */mfu-[0-9]*-py3-none-linux_*.whl) ;;
    *) fail "wheel name: '$whl'" ;;
esac
"$tmp/bare/bin/python" - "$whl" <<'EOF' || fail "wheel contents"
import sys, zipfile
names = set(zipfile.ZipFile(sys.argv[1]).namelist())
for want in ("mfu/__init__.py", "mfu/_lib.py", "mfu/_inputs.py", "mfu/libmfu.so",
             "mfu/integrations/__init__.py", "mfu/integrations/hf.py",
             "mfu/integrations/lightning.py", "mfu/integrations/loop.py"):
    assert want in names, want
assert any(n.endswith(".data/scripts/mfu") for n in names), sorted(names)
for meta in ("METADATA", "WHEEL", "RECORD"):
    assert any(n.endswith(".dist-info/" + meta) for n in names), meta
assert not any("__pycache__" in n for n in names)
EOF

# 3. the wheel beside Debian's torch: the acceptance loop
/usr/bin/python3 -m venv --system-site-packages "$tmp/torch" || fail "venv with site packages"
"$tmp/torch/bin/pip" install "$whl" >"$tmp/pip2.log" 2>&1 ||
    { tail -20 "$tmp/pip2.log"; fail "pip install the wheel"; }
MFU_EXAMPLES="$src/examples" "$tmp/torch/bin/python" "$src/tests/python/test_loop.py" ||
    fail "tests/python/test_loop.py in the installed package"

# 4. the sdist: every C source, and CMake configures from it
"$tmp/bare/bin/python" - "$src/python/_build" "$tmp/sdist" <<'EOF' || fail "build_sdist"
import sys
sys.path.insert(0, sys.argv[1])
import mfu_build
print(mfu_build.build_sdist(sys.argv[2]))
EOF
sd=$(ls "$tmp"/sdist/mfu-*.tar.gz 2>/dev/null)
if [ -n "$sd" ]; then
    mkdir "$tmp/sd" && tar -xzf "$sd" -C "$tmp/sd"
    top=$(ls "$tmp/sd")
    (cd "$src" && find CMakeLists.txt cmake include src web/dist -type f | sort) >"$tmp/want"
    (cd "$tmp/sd/$top/csrc" && find . -type f | sed 's|^\./||' | sort) >"$tmp/got"
    cmp -s "$tmp/want" "$tmp/got" || fail "the sdist's csrc/ differs: $(diff "$tmp/want" "$tmp/got" | head -5)"
    [ -f "$tmp/sd/$top/pyproject.toml" ] && [ -f "$tmp/sd/$top/_build/mfu_build.py" ] &&
        [ -f "$tmp/sd/$top/mfu/__init__.py" ] || fail "the sdist lacks the package"
    cmake -S "$tmp/sd/$top/csrc" -B "$tmp/sdb" -DBUILD_TESTING=OFF >"$tmp/cmake.log" 2>&1 ||
        fail "cmake cannot configure the sdist: $(tail -5 "$tmp/cmake.log")"
fi

[ "$fails" = 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "python_pip: ok"
