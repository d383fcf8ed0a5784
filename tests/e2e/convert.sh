#!/usr/bin/env bash
# e2e: `mfu convert` - stdin, .gz, .zst, several files, -o, --format, --map, round trip through
# the canonical reader, the summary line, and the exit codes / messages of bad input.
set -euo pipefail
MFU=${MFU_BIN:?MFU_BIN}
DATA=${MFU_TEST_DATA:?MFU_TEST_DATA}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
expect_rc() { # expect_rc WANT CMD... : run CMD, check its exit status, keep stderr in $tmp/err
  local want=$1; shift
  set +e; "$@" >"$tmp/out" 2>"$tmp/err"; local rc=$?; set -e
  [ "$rc" -eq "$want" ] || { cat "$tmp/err" >&2; fail "'$*' exited $rc, expected $want"; }
}

fix=$DATA/logs/megatron-lm/fixstars-mdk-gpt3-7b-fp8-2node.log

# plain file: header first, then one object per step, summary on stderr
"$MFU" convert "$fix" >"$tmp/a.jsonl" 2>"$tmp/err"
[ "$(head -1 "$tmp/a.jsonl" | jq -r '.mfu_run')" = 1 ] || fail "header first"
[ "$(head -1 "$tmp/a.jsonl" | jq -r '.format')" = megatron ] || fail "format in header"
[ "$(wc -l <"$tmp/a.jsonl")" -eq 11 ] || fail "10 steps + header"
[ "$(sed -n 10p "$tmp/a.jsonl" | jq -r '.step')" = 90 ] || fail "step 90 on line 10"
[ "$(sed -n 10p "$tmp/a.jsonl" | jq -r '.flops_per_s')" = 802600000000000 ] || fail "802.6 TFLOP/s"
grep -q "megatron (detected), 10 steps; lines: 13 used" "$tmp/err" || { cat "$tmp/err"; fail "summary"; }

# stdin, gzip, zstd give the same output
"$MFU" convert - <"$fix" 2>/dev/null | cmp -s - "$tmp/a.jsonl" || fail "stdin differs"
gzip -c "$fix" >"$tmp/f.log.gz"
"$MFU" convert "$tmp/f.log.gz" 2>/dev/null | cmp -s - "$tmp/a.jsonl" || fail ".gz differs"
gzip -c "$fix" | "$MFU" convert - 2>/dev/null | cmp -s - "$tmp/a.jsonl" || fail "gzip on stdin differs"
if command -v zstd >/dev/null; then
  zstd -q -c "$fix" >"$tmp/f.log.zst"
  "$MFU" convert "$tmp/f.log.zst" 2>/dev/null | cmp -s - "$tmp/a.jsonl" || fail ".zst differs"
fi

# round trip: the canonical output converts to itself
"$MFU" convert "$tmp/a.jsonl" >"$tmp/b.jsonl" 2>"$tmp/err"
cmp -s "$tmp/a.jsonl" "$tmp/b.jsonl" || fail "round trip changed the output"
grep -q ": mfu (detected)" "$tmp/err" || fail "canonical detected"

# -o writes the file, nothing on stdout; --quiet drops the summary
"$MFU" convert --quiet -o "$tmp/c.jsonl" "$fix" >"$tmp/out" 2>"$tmp/err"
[ ! -s "$tmp/out" ] && [ ! -s "$tmp/err" ] || fail "-o/--quiet printed something"
cmp -s "$tmp/c.jsonl" "$tmp/a.jsonl" || fail "-o content"

# several files form one run
half=$DATA/logs/torchtitan/torchtitan-pr2389-moe-b200-8rank-noprefix.log
"$MFU" convert "$DATA/logs/torchtitan/torchtitan-pr1287-llama3-8b-h100-gc-profiler.log" "$half" \
  >"$tmp/two.jsonl" 2>/dev/null
[ "$(head -1 "$tmp/two.jsonl" | jq -r '.steps')" = 8 ] || fail "two files: 6 + 2 steps"

# --format and --map
printf 'iter,loss,dt_ms\n1,2.5,400\n2,2.4,410\n' >"$tmp/m.csv"
"$MFU" convert "$tmp/m.csv" --map step=iter --map step_time_s=dt_ms*0.001 2>/dev/null >"$tmp/m.jsonl"
[ "$(sed -n 3p "$tmp/m.jsonl" | jq -r '.step_time_s')" = 0.41 ] || fail "--map factor"
"$MFU" convert --format nanogpt "$DATA/logs/nanogpt/nanogpt-issue110-gpt2-124m-8xa100-preMFU.log" \
  2>"$tmp/err" >/dev/null
grep -q "nanogpt (forced), 11 steps" "$tmp/err" || fail "forced format summary"
"$MFU" convert --list-formats | grep -q '^torchtitan ' || fail "--list-formats"
"$MFU" convert --help | grep -q 'examples:' || fail "--help has examples"

# errors: exit 1 with file, line and what was expected; usage errors exit 2
expect_rc 2 "$MFU" convert
grep -q "no LOG given" "$tmp/err" || fail "missing LOG message"
expect_rc 2 "$MFU" convert --bogus "$fix"
expect_rc 2 "$MFU" convert --format nosuch "$fix"
grep -q "unknown format 'nosuch'; use one of: auto, mfu, megatron" "$tmp/err" || fail "format list"
expect_rc 2 "$MFU" convert --map speed=tps "$tmp/m.csv"
expect_rc 1 "$MFU" convert "$tmp/does-not-exist.log"
grep -q "does-not-exist.log: cannot open" "$tmp/err" || fail "missing file message"
: >"$tmp/empty.log"
expect_rc 1 "$MFU" convert "$tmp/empty.log"
grep -q "no known training-log format" "$tmp/err" || fail "empty file message"
head -c 3000 /dev/urandom >"$tmp/bin.log"
printf '\0' >>"$tmp/bin.log"
expect_rc 1 "$MFU" convert "$tmp/bin.log"
grep -q "binary data" "$tmp/err" || fail "binary message"
printf '{"mfu_run":1}\n{"step":1}\n{"mfu_run":1}\n' >"$tmp/two-headers.jsonl"
expect_rc 1 "$MFU" convert "$tmp/two-headers.jsonl"
grep -q "two-headers.jsonl:3: a canonical header after the first step" "$tmp/err" || { cat "$tmp/err"; fail "file:line message"; }
head -c 200 "$tmp/f.log.gz" >"$tmp/cut.log.gz"
expect_rc 1 "$MFU" convert "$tmp/cut.log.gz"
grep -q "gzip data ends early" "$tmp/err" || fail "truncated gzip message"
[ ! -e "$tmp/none.jsonl" ] || fail "setup"
expect_rc 1 "$MFU" convert -o "$tmp/none.jsonl" "$tmp/empty.log"
[ ! -e "$tmp/none.jsonl" ] || fail "-o file created on failure"
echo "convert.sh: ok"
