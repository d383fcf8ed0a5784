#!/usr/bin/env bash
# e2e: the Python binding (python/mfu, ctypes over build/libmfu.so) under Debian's
# /usr/bin/python3, standard library only: tests/python/test_binding.py compares it with the
# CLI (flops, devices, report and watch of the JSON-lines file it writes). Env: MFU_BIN,
# MFU_SOURCE_DIR.
set -u
bin=${MFU_BIN:?MFU_BIN is the built mfu}
src=${MFU_SOURCE_DIR:?MFU_SOURCE_DIR is the source tree}
lib=$(dirname "$bin")/libmfu.so
[ -e "$lib" ] || { echo "python.sh: $lib is missing (the shared library is built with mfu)"; exit 1; }
[ -x /usr/bin/python3 ] || { echo "python.sh: /usr/bin/python3 is missing (bash scripts/deps.sh)"; exit 1; }
# The sanitizer suite's library is built with ASan + UBSan: their runtimes must be loaded
# before anything else in the interpreter, and the interpreter's own allocations left at exit
# are not leaks of the library.
preload=""
if ldd "$lib" | grep -q libasan; then # gcc: the runtimes are shared libraries
    for rt in libasan.so libubsan.so; do
        p=$(cc -print-file-name="$rt")
        [ -e "$p" ] && preload="$preload${preload:+ }$p"
    done
    export ASAN_OPTIONS=${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}detect_leaks=0
elif nm -D --undefined-only "$lib" 2>/dev/null | grep -q '__asan_init'; then
    # clang: a shared library leaves the runtime to the program; its shared form has UBSan too
    p=$(clang-14 -print-file-name=libclang_rt.asan-x86_64.so 2>/dev/null)
    [ -e "$p" ] || { echo "python.sh: clang's ASan runtime is missing (bash scripts/deps.sh)"; exit 1; }
    preload=$p
    export ASAN_OPTIONS=${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}detect_leaks=0
fi
MFU_BIN=$bin MFU_LIBRARY=$lib PYTHONPATH=$src/python PYTHONDONTWRITEBYTECODE=1 \
    LD_PRELOAD=$preload exec /usr/bin/python3 "$src/tests/python/test_binding.py"
