#!/usr/bin/env bash
# bench/trace_hta.sh - `mfu trace` beside Holistic Trace Analysis (HTA, Meta's trace analyser)
# on the same traces, in the same run: HTA's temporal breakdown (idle, compute, non-compute)
# against mfu's, and the time each takes, printed as ratios. A benchmark, not a test.
#
# HTA comes from PyPI, pinned (HolisticTraceAnalysis 0.5.0 and every dependency at the version
# in bench/trace_hta-requirements.txt), into a venv this script makes once in
# build/hta-venv (python3 -m venv; about 500 MB, HTA pulls in jupyterlab).
#
# usage: bash bench/trace_hta.sh [--repeat N] [--big MB] [MFU_BIN [TRACE...]]
#   MFU_BIN   default build/mfu
#   TRACE...  default every bundled GPU trace under tests/data/traces
#   --repeat  timings are the best of N runs (default 3)
#   --big MB  also time mfu alone on a trace of about MB megabytes made by repeating a
#             bundled trace's step (shifted ids and times), with its peak memory (RSS)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
repeat=3
big=0
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --repeat) repeat=$2; shift 2 ;;
    --big) big=$2; shift 2 ;;
    *) args+=("$1"); shift ;;
  esac
done
mfu=${args[0]:-$root/build/mfu}
traces=("${args[@]:1}")
if [ ${#traces[@]} -eq 0 ]; then
  for d in hta-sampled-2ranks hta-nccl-a100 hta-diff hta-unlaunched hta-amd-mi250; do
    for f in "$root/tests/data/traces/$d"/*.json.gz; do traces+=("$f"); done
  done
fi
venv=$root/build/hta-venv
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import hta' 2>/dev/null; then
  echo "trace_hta.sh: making $venv (HolisticTraceAnalysis 0.5.0, pinned)" >&2
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q -r "$here/trace_hta-requirements.txt" >&2
fi
HTA_DISABLE_NS_ROUNDING=1 "$venv/bin/python" "$here/trace_hta.py" --repeat "$repeat" \
  --big "$big" "$mfu" "${traces[@]}"
