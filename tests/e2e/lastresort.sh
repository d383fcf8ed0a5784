#!/usr/bin/env bash
# e2e: the logs of issue 10 through the CLI - `mfu report` with no flag gives step figures for
# every excerpt added then (tests/data/logs, each with its .md); the generic reader's note is
# printed and --map corrects it; a log nothing reads fails with one message that names the file
# once, the closest format and the --format / --map to use.
set -euo pipefail
MFU=${MFU_BIN:?MFU_BIN}
DATA=${MFU_TEST_DATA:?MFU_TEST_DATA}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# every excerpt of these stacks: a report with steps, and the format expected
n=0
for d in fairseq:fairseq nanotron:nanotron llama2.c:llama2c modded-nanogpt:modded_nanogpt \
         colossalai:colossalai litgpt:lightning unsloth:hf mlx:generic tinygrad:generic \
         gluon-nlp:generic oneflow:generic openpcdet:generic cltr:generic \
         llamafactory:generic nvidia-dle:generic; do
  dir=${d%%:*} want=${d##*:}
  for f in "$DATA/logs/$dir"/*.log; do
    "$MFU" report "$f" >"$tmp/out" 2>"$tmp/err" || { cat "$tmp/err" >&2; fail "report $f"; }
    grep -q "^log  *$want (detected), [1-9][0-9]* step" "$tmp/out" ||
      { head -3 "$tmp/out" >&2; fail "$f: not '$want' with steps"; }
    n=$((n + 1))
  done
done
[ "$n" -ge 25 ] || fail "only $n excerpts"

# the note: what the generic reader mapped, on stderr, and --map changes it
mlx=$DATA/logs/mlx/mlx-vlm-pr795-orpo.log
"$MFU" convert "$mlx" >"$tmp/a.jsonl" 2>"$tmp/err"
grep -q "generic: 11 rows from lines of one shape: step <- 'Iter'" "$tmp/err" || { cat "$tmp/err"; fail "note"; }
grep -q "tokens_per_s <- 'Tokens/sec'" "$tmp/err" || fail "note: tokens/s"
[ "$(sed -n 2p "$tmp/a.jsonl" | jq -r '.tokens_per_s_scope')" = global ] || fail "scope global"
"$MFU" convert --map "tokens_per_s_device=Tokens/sec" "$mlx" >"$tmp/b.jsonl" 2>/dev/null
[ "$(sed -n 2p "$tmp/b.jsonl" | jq -r '.tokens_per_s_scope')" = device ] || fail "--map scope"
"$MFU" report "$mlx" >/dev/null 2>"$tmp/err"
grep -q "generic: 11 rows" "$tmp/err" || fail "report prints the note"

# nothing reads it: one message, the file once, the closest format and the fix
printf 'iter %d: loss 3.0\n' 1 2 3 4 5 >"$tmp/iter-loss.log"
set +e; "$MFU" convert "$tmp/iter-loss.log" >/dev/null 2>"$tmp/err"; rc=$?; set -e
[ "$rc" -eq 1 ] || fail "exit $rc for a log nothing reads"
[ "$(wc -l <"$tmp/err")" -eq 1 ] || { cat "$tmp/err"; fail "one line"; }
[ "$(grep -o "iter-loss.log" "$tmp/err" | wc -l)" -eq 1 ] || { cat "$tmp/err"; fail "file named once"; }
grep -q "nanogpt: 5 lines of its shape unread" "$tmp/err" || { cat "$tmp/err"; fail "closest"; }
grep -q -- "--format generic --map step=KEY" "$tmp/err" || fail "the fix"
# forced, the generic reader reads it
"$MFU" convert --format generic "$tmp/iter-loss.log" >"$tmp/c.jsonl" 2>/dev/null
[ "$(wc -l <"$tmp/c.jsonl")" -eq 6 ] || fail "forced generic: 5 rows"
echo "lastresort.sh: $n excerpts, note, --map and the error checked"
