#!/usr/bin/env bash
# e2e: the ingest benchmark runs (bench/ingest.sh on small logs, no timing asserted) and mfu
# reads the same steps and losses as the Python peers (the script exits 1 on a mismatch).
set -euo pipefail
MFU=${MFU_BIN:?MFU_BIN}
SRC=${MFU_SOURCE_DIR:?MFU_SOURCE_DIR}
out=$(bash "$SRC/bench/ingest.sh" --lines 3000 --repeat 1 --no-jq "$MFU")
fail() { echo "FAIL: $*" >&2; echo "$out" >&2; exit 1; }
# here-strings, not pipes: grep -q may exit before a writer finishes (SIGPIPE under pipefail)
grep -q "jsonl log: .* format jsonl detected" <<<"$out" || fail "jsonl row"
grep -q "megatron log: .* format megatron detected" <<<"$out" || fail "megatron row"
[ "$(grep -c 'ratio: mfu ingest' <<<"$out")" -eq 2 ] || fail "two ratio lines"
[ "$(grep -c 'cpu time: mfu ingest .* s, python3 .* s: .*x' <<<"$out")" -eq 2 ] || fail "two cpu lines"
! grep -q MISMATCH <<<"$out" || fail "mfu and python disagree"
b=$(dirname "$MFU")/mfu-bench-ingest
one=$("$b" --repeat 1 "$SRC/tests/data/logs/megatron-lm/fixstars-mdk-gpt3-7b-fp8-2node.log")
grep -q "format=megatron .* steps=10 .*best_cpu_s=" <<<"$one" || fail "mfu-bench-ingest on a fixture: $one"
if "$b" --bogus 2>/dev/null; then fail "bad option accepted"; fi
echo "bench e2e: ok"
