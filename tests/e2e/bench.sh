#!/usr/bin/env bash
# e2e: the ingest benchmark runs (bench/ingest.sh on small logs, no timing asserted) and mfu
# reads the same steps and losses as the Python peers (the script exits 1 on a mismatch).
set -euo pipefail
MFU=${MFU_BIN:?MFU_BIN}
SRC=${MFU_SOURCE_DIR:?MFU_SOURCE_DIR}
out=$(bash "$SRC/bench/ingest.sh" --lines 3000 --repeat 1 --no-jq "$MFU")
fail() { echo "FAIL: $*" >&2; echo "$out" >&2; exit 1; }
echo "$out" | grep -q "jsonl log: .* format jsonl detected" || fail "jsonl row"
echo "$out" | grep -q "megatron log: .* format megatron detected" || fail "megatron row"
[ "$(echo "$out" | grep -c 'ratio: mfu ingest')" -eq 2 ] || fail "two ratio lines"
echo "$out" | grep -q MISMATCH && fail "mfu and python disagree"
b=$(dirname "$MFU")/mfu-bench-ingest
"$b" --repeat 1 "$SRC/tests/data/logs/megatron-lm/fixstars-mdk-gpt3-7b-fp8-2node.log" |
  grep -q "format=megatron .* steps=10 " || fail "mfu-bench-ingest on a fixture"
"$b" --bogus 2>/dev/null && fail "bad option accepted"
echo "bench e2e: ok"
