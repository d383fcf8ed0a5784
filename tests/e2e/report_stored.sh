#!/usr/bin/env bash
# e2e: `mfu report --run NAME --db PATH` reports a run of the store as `mfu report LOG` reports
# the log: the same figures, comparisons and findings (text below the two header lines, and
# the JSON summary), under the context stored by `mfu ingest`, or under the context options of
# the command line, which replace it. Logs and stored runs in one call; --json, --html,
# --expect; the errors (no such run, no store, --db without --run).
E2E_CMD=report
source "$(dirname "$0")/lib/e2e.bash"
command -v jq >/dev/null || { echo "report_stored.sh: jq is missing (bash scripts/deps.sh)"; exit 1; }

db=$tmp/runs.db
nano=$data/logs/nanogpt/nanogpt-issue215-v100-fp16-nan.log
nano_ctx=(--model gpt2 --seq 1024 --global-batch 60 --devices 1 --device v100-sxm2 --dtype fp16)
llmc=$data/logs/llm.c/llmc-discussion677-gpt2-1558m-8xh100.log
llmc_ctx=(--model gpt2-xl --device h100-sxm)
"$bin" ingest "$nano" --run nano --db "$db" "${nano_ctx[@]}" 2>"$tmp/err" ||
    fail "ingest nano: $(cat "$tmp/err")"
"$bin" ingest "$llmc" --run llmc --db "$db" "${llmc_ctx[@]}" 2>"$tmp/err" ||
    fail "ingest llmc: $(cat "$tmp/err")"
"$bin" ingest "$llmc" --run bare --db "$db" 2>"$tmp/err" || fail "ingest bare: $(cat "$tmp/err")"

# ---- the same report as the log's, under the stored context ------------------------------------
for r in nano llmc; do
    if [ $r = nano ]; then log=$nano; ctx=("${nano_ctx[@]}"); else log=$llmc; ctx=("${llmc_ctx[@]}"); fi
    ok --run $r --db "$db"
    head -1 "$tmp/out" | grep -qx "== run $r (store $db)" || fail "$r: header $(head -1 "$tmp/out")"
    sed -n 2p "$tmp/out" | grep -qF "steps stored; ingested from $(realpath "$log") (" ||
        fail "$r: source line $(sed -n 2p "$tmp/out")"
    tail -n +3 "$tmp/out" >"$tmp/stored.txt"
    "$bin" report "$log" "${ctx[@]}" 2>/dev/null | tail -n +3 >"$tmp/log.txt"
    [ -s "$tmp/log.txt" ] || fail "$r: the log's own report is empty"
    diff "$tmp/log.txt" "$tmp/stored.txt" >"$tmp/diff" ||
        fail "$r: stored report differs from the log's: $(head -20 "$tmp/diff")"
done
# the nanoGPT run's findings came through the store: the stall and the NaN loss
ok --run nano --db "$db"
grep -q "\[error\] loss_nan, steps 3010-3060" "$tmp/out" || fail "nano: no loss_nan finding"
grep -q "\[warning\] stall, steps 3000-3000" "$tmp/out" || fail "nano: no stall finding"

# ---- JSON: the run, its store and source; the log's figures --------------------------------------
ok --run nano --db "$db" --json --no-series
jq_is .run nano
jq_is .store "$db"
jq_is .file "$(realpath "$nano")"
jq_is .format nanogpt
jq_is .lines null
jq_is .steps 15
cp "$tmp/out" "$tmp/stored.json"
"$bin" report "$nano" "${nano_ctx[@]}" --json --no-series >"$tmp/log.json" 2>/dev/null
for k in mfu tokens_per_second model_flops_per_second_per_device; do
    a=$(jq ".summary.$k.median" "$tmp/stored.json")
    b=$(jq ".summary.$k.median" "$tmp/log.json")
    [ "$a" = "$b" ] && [ "$a" != null ] || fail "summary.$k.median: stored $a, log $b"
done
kinds=$(jq -c '[.findings[].kind]' "$tmp/stored.json")
[ "$kinds" = '["stall","loss_nan","reported_mismatch"]' ] || fail "stored finding kinds: $kinds"
[ "$kinds" = "$(jq -c '[.findings[].kind]' "$tmp/log.json")" ] || fail "finding kinds differ from the log's"

# ---- context options on the command line replace the stored context ----------------------------
# the same run on an A100's bf16 peak (312 TFLOP/s) instead of the V100's fp16 (125): MFU x 125/312
ok --run nano --db "$db" --model gpt2 --seq 1024 --global-batch 60 --devices 1 --device a100-sxm --json --no-series
a100=$(jq .summary.mfu.median "$tmp/out")
v100=$(jq .summary.mfu.median "$tmp/stored.json")
awk -v a="$a100" -v v="$v100" 'BEGIN { r = a / v; exit !(r > 125 / 312 - 1e-9 && r < 125 / 312 + 1e-9) }' ||
    fail "flags did not replace the stored context: MFU $a100 on a100 vs $v100 on v100"
# a run stored without context: no MFU, and the report names what is missing
ok --run bare --db "$db"
grep -q "^missing: " "$tmp/out" || fail "bare: no 'missing:' line"
ok --run bare --db "$db" "${llmc_ctx[@]}" --json --no-series
b=$(jq .summary.mfu.median "$tmp/out")
ok --run llmc --db "$db" --json --no-series
[ "$b" = "$(jq .summary.mfu.median "$tmp/out")" ] || fail "bare + flags $b vs llmc stored context"

# ---- logs and runs in one call; MFU_DB; --expect; --html ------------------------------------------
ok "$llmc" "${llmc_ctx[@]}" --run llmc --run nano --db "$db" --json --no-series
jq_is 'length' 3
jq_is '.[0].run' null
jq_is '.[1].run' llmc
jq_is '.[2].run' nano
# flags given: they apply to the stored runs too (nano on an H100 with gpt2-xl: another MFU)
jq_true '.[0].summary.mfu.median == .[1].summary.mfu.median'
MFU_DB=$db "$bin" report --run llmc >"$tmp/out" 2>"$tmp/err" || fail "MFU_DB: $(cat "$tmp/err")"
grep -q "^== run llmc (store $db)" "$tmp/out" || fail "MFU_DB: $(head -1 "$tmp/out")"
run --run nano --db "$db" --expect 'mfu>=0.9'
[ "$rc" = 3 ] || fail "--expect violated: exit $rc, want 3"
grep -q "nano: expectation failed" "$tmp/err" || fail "--expect: $(cat "$tmp/err")"
ok --run nano --run llmc --db "$db" --html "$tmp/page.html"
grep -q "run of $db: nanogpt, 15 steps stored" "$tmp/page.html" || fail "--html lacks the run's line"

# ---- errors ---------------------------------------------------------------------------------------
bad 1 --run nosuch --db "$db"
grep -q "no run of that name in $db; 'mfu runs --db $db' lists them" "$tmp/err" || fail "$(cat "$tmp/err")"
bad 1 --run nano --db "$tmp/absent.db"
[ -e "$tmp/absent.db" ] && fail "a missing store was created"
bad 2 "$nano" --db "$db"
grep -q "add --run" "$tmp/err" || fail "$(cat "$tmp/err")"
bad 2
grep -q -- "--run NAME" "$tmp/err" || fail "$(cat "$tmp/err")"
e2e_finish
