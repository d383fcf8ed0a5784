#!/usr/bin/env bash
# e2e: `mfu trace` on every bundled profiler trace (tests/data/traces): each step's parts sum
# to its span and the window's shares agree with an independent computation over the same
# events (tests/e2e/lib/trace_check.py); the straggler of the two-rank set; plain and gzip
# give the same answer; the MFU waterfall's points add up to 100 - MFU and its MFU is `mfu
# report`'s for a log of the same run (written here from the traces' own step times), by
# --log and by flags; --compare; and bad input: a rank twice, truncated JSON, a CPU-only trace,
# no ProfilerStep, not a trace, a missing file (exit 1, one line naming the file), bad usage
# (exit 2).
E2E_CMD=trace
source "$(dirname "$0")/lib/e2e.bash"
tr=$data/traces
check=$(dirname "$0")/lib/trace_check.py
py=/usr/bin/python3
S0=$tr/hta-sampled-2ranks/rank-0.json.gz
S1=$tr/hta-sampled-2ranks/rank-1.json.gz

# every GPU trace: parts, shares and spans against the independent computation
for f in "$S0" "$S1" "$tr"/hta-nccl-a100/rank-0.json.gz "$tr"/hta-diff/control.json.gz \
    "$tr"/hta-diff/test.json.gz "$tr"/hta-unlaunched/rank0.json.gz \
    "$tr"/hta-amd-mi250/mi250_minitoy_train_ROCm6_2_kineto.json.gz; do
    ok --json "$f"
    $py "$check" "$f" "$tmp/out" 0 2 >"$tmp/check" || fail "$(cat "$tmp/check")"
    jq_true '[.ranks[0].steps[] | .breakdown.span_s == .step_time_s] | all'
    # the intervals tile the window from its start
    jq_true '(([.ranks[0].steps[].interval_s] | add) - .ranks[0].totals.span_s) < 1e-6'
    jq_true '[.ranks[0].steps[] | select(.activities > 0) | .interval_s >= 0] | all'
done

# the two ranks together: the straggler, the missing ranks, both ranks checked
ok --json "$S0" "$S1"
jq_is '.straggler.rank' 1
jq_is '.straggler.steps' 2
jq_true '.straggler.excess > 0.1 and .straggler.wait_s > 0'
jq_is '.ranks_check.world_size' 128
jq_is '.ranks_check.missing' 126
jq_is '[.ranks[].rank] | join(",")' 0,1
$py "$check" "$S1" "$tmp/out" 1 2 >"$tmp/check" || fail "$(cat "$tmp/check")"
jq_true '(.totals.span_s - ([.ranks[].totals.span_s] | add) | fabs) < 1e-9'
cp "$tmp/out" "$tmp/two.json"
ok "$S0" "$S1"
grep -q '^straggler: rank 1 (' "$tmp/out" || fail "text: no straggler line: $(cat "$tmp/out")"
grep -q 'missing ranks: 126 of world size 128' "$tmp/out" || fail "text: no missing-ranks line"
grep -q 'waterfall: .*--model' "$tmp/out" || fail "text: without a model the waterfall line names the flags"

# gzip and plain read the same
zcat "$S0" >"$tmp/plain.json"
head -c 300000 "$tmp/plain.json" >"$tmp/cut.json"
ok --json "$tmp/plain.json"
jq -S '.ranks[0] | del(.file, .counts.bytes)' "$tmp/out" >"$tmp/a"
ok --json "$S0"
jq -S '.ranks[0] | del(.file, .counts.bytes)' "$tmp/out" >"$tmp/b"
cmp -s "$tmp/a" "$tmp/b" || fail "plain and gzip traces read differently"

# --launched-only on the trace with unlaunched activities
ok --json "$tr/hta-unlaunched/rank0.json.gz"
jq_is '.ranks[0].counts.placed_by_time' 868
ok --json --launched-only "$tr/hta-unlaunched/rank0.json.gz"
jq_is '.ranks[0].counts.placed_by_time' 0
jq_is '.ranks[0].counts.no_launch' 868

# the waterfall. A log of the same run: canonical JSON-lines whose step times are the traces'
# step intervals (first activity to the next step's; the mean over the two ranks), what a
# training log's step time measures and what mfu trace makes the run of its steps from.
CTX=(--model gpt2 --seq 1024 --tokens-per-step 8192 --device a100-sxm --devices 2)
jq -c '.ranks | map(.steps[]) | group_by(.step)[] |
       {step: .[0].step, tokens: 8192, step_time_s: (map(.interval_s) | add / length)}' \
    "$tmp/two.json" >"$tmp/rows"
{ echo '{"mfu_run":1,"format":"generic","seq_len":1024,"world_size":2}'; cat "$tmp/rows"; } \
    >"$tmp/run.jsonl"
"$bin" report "$tmp/run.jsonl" "${CTX[@]}" --json >"$tmp/rep" 2>"$tmp/err" ||
    fail "mfu report of the log: $(cat "$tmp/err")"
want=$(jq -r .summary.mfu.median "$tmp/rep")
[ -n "$want" ] && [ "$want" != null ] || fail "mfu report gives no MFU: $(cat "$tmp/rep")"
for how in log flags; do
    if [ $how = log ]; then
        ok --json "$S0" "$S1" --log "$tmp/run.jsonl" "${CTX[@]}"
        jq_true '.waterfall.mfu_source | startswith("mfu report of ")'
    else
        ok --json "$S0" "$S1" "${CTX[@]}"
        jq_true '.waterfall.mfu_source | contains("traces")'
    fi
    jq_true "((.waterfall.mfu - $want) | fabs) <= 1e-12 * $want"
    # the points add up to 100 - MFU, and the steps of the waterfall fall to the MFU
    jq_true '((.waterfall.lost_points | add) - (100 - 100 * .waterfall.mfu) | fabs) < 1e-9'
    jq_true '((.waterfall.steps[-2].level) - 100 * .waterfall.mfu | fabs) < 1e-9'
    jq_is '[.waterfall.steps[].label] | join(",")' \
        peak,idle,communication,memcpy,non_matmul,matmul_below_peak,mfu
    jq_true '(.waterfall.lost_points.idle - 100 * .totals.idle_s / .totals.span_s | fabs) < 1e-6'
done
ok "$S0" "$S1" --log "$tmp/run.jsonl" "${CTX[@]}"
grep -q '^MFU waterfall (points of peak; MFU from mfu report of ' "$tmp/out" ||
    fail "text: no waterfall: $(cat "$tmp/out")"
grep -q 'achieved MFU' "$tmp/out" || fail "text: no achieved MFU row"
# the same views on the HTML report of the log: mfu report --trace
"$bin" report "$tmp/run.jsonl" "${CTX[@]}" --trace "$S0" --trace "$S1" --html "$tmp/page.html" \
    >/dev/null 2>"$tmp/err" || fail "report --trace --html: $(cat "$tmp/err")"
grep -q 'Where the GPU time went (profiler trace, 2 ranks)' "$tmp/page.html" || fail "page: no trace section"
grep -q 'Straggler: rank 1,' "$tmp/page.html" || fail "page: no straggler"
grep -q 'class="mfu-trace-waterfall"' "$tmp/page.html" || fail "page: no waterfall chart"
pts=$(awk -v m="$want" 'BEGIN { printf "%.1f", 100 * m }')
grep -q "<b>achieved MFU</b></td><td class=\"num\"><b>$pts</b>" "$tmp/page.html" ||
    fail "page: the achieved MFU is not the report's ($pts)"
grep -c '<script' "$tmp/page.html" | grep -qx 0 || fail "page: a script"
"$bin" report "$tmp/run.jsonl" "${CTX[@]}" --trace "$S0" >/dev/null 2>"$tmp/err"
[ $? = 2 ] && grep -q -- '--trace puts one run' "$tmp/err" || fail "report --trace without --html: $(cat "$tmp/err")"
"$bin" report "$tmp/run.jsonl" "${CTX[@]}" --trace "$tmp/cut.json" --html "$tmp/p2.html" \
    >/dev/null 2>"$tmp/err"
[ $? = 1 ] && grep -q '^mfu report: .*cut.json' "$tmp/err" || fail "report --trace of a bad trace: $(cat "$tmp/err")"

# a model without the tokens of a step: no waterfall, the reason said
ok --json "$S0" "$S1" --model gpt2 --device a100-sxm
jq_is '.waterfall' null
jq_true '.waterfall_missing | test("tokens")'

# matmul kernels with recorded shapes get their FLOP/s (and a share of the peak with a device)
ok --json "$tr/hta-diff/control.json.gz" --model gpt2 --seq 1024 --tokens-per-step 8192 \
    --device a100-sxm
jq_true '[.ranks[0].matmul_kernels[] | select(.flops_per_s != null)] | length > 0'
jq_true '[.ranks[0].matmul_kernels[].class] | all(. == "matmul")'
jq_true '[.ranks[0].matmul_kernels[] | select(.peak_share != null) | .peak_share] | all(. > 0 and . < 1)'

# --compare: the shares' changes sum to zero; with a model, MFU points too
ok --json --compare "$tr/hta-diff/control.json.gz" "$tr/hta-diff/test.json.gz"
jq_true '(.delta.share_points | add | fabs) < 1e-6'
jq_true '.delta.step_time_b_s > .delta.step_time_a_s'
jq_is '.delta.mfu_points' null
ok --json --compare "$tr/hta-diff/control.json.gz" "$tr/hta-diff/test.json.gz" \
    --model gpt2 --seq 1024 --tokens-per-step 8192 --peak-tflops 100 --devices 1
jq_true '((.delta.lost_points | add) + .delta.mfu_points | fabs) < 1e-6'
jq_true '.delta.mfu_points < 0'
ok --compare "$tr/hta-diff/control.json.gz" "$tr/hta-diff/test.json.gz"
grep -q 'idle_s' "$tmp/out" || fail "compare text: no table"

# bad input: one line naming the file and what was expected, exit 1, nothing on stdout
bad 1 "$S0" "$S0"
grep -q 'both rank 0.*--compare' "$tmp/err" || fail "a rank twice: $(cat "$tmp/err")"
bad 1 "$tmp/cut.json"
grep -q "cut.json: line .*truncated" "$tmp/err" || fail "truncated: $(cat "$tmp/err")"
zcat "$S0" | head -c 200000 | gzip >"$tmp/cut.json.gz"
bad 1 "$tmp/cut.json.gz"
grep -q "cut.json.gz: .*\(truncated\|ends early\)" "$tmp/err" || fail "truncated gzip: $(cat "$tmp/err")"
for f in "$tr"/hta-cpu-only/*.json.gz "$tr"/cpu-torch113/steps.json.gz "$tr"/cpu-torch113/nostep.json.gz; do
    bad 1 "$f"
    grep -q "$(basename "$f"): CPU-only trace: .*no GPU activity" "$tmp/err" ||
        fail "CPU-only: $(cat "$tmp/err")"
done
bad 1 "$tr"/hta-alexnet-nostep/*.json.gz
grep -q 'no ProfilerStep#N window.*prof.step()' "$tmp/err" || fail "no step: $(cat "$tmp/err")"
bad 1 "$data/logs/torchtitan/torchtitan-pr1287-llama3-8b-h100-gc-profiler.log"
grep -q 'invalid JSON' "$tmp/err" || fail "a log: $(cat "$tmp/err")"
echo '{"schemaVersion": 1, "deviceProperties": []}' >"$tmp/nots.json"
bad 1 "$tmp/nots.json"
grep -q 'not a Chrome trace.*traceEvents' "$tmp/err" || fail "no traceEvents: $(cat "$tmp/err")"
echo '{"traceEvents": []}' >"$tmp/empty.json"
bad 1 "$tmp/empty.json"
grep -q 'no trace event' "$tmp/err" || fail "empty: $(cat "$tmp/err")"
bad 1 "$tmp/does-not-exist.json"
grep -q 'does-not-exist.json: cannot open it' "$tmp/err" || fail "missing file: $(cat "$tmp/err")"
# a rank without distributedInfo in a set
bad 1 "$tr/hta-amd-mi250/mi250_minitoy_train_ROCm6_2_kineto.json.gz" "$S0"
grep -q 'does not name its rank' "$tmp/err" || fail "no rank: $(cat "$tmp/err")"
# two world sizes
bad 1 "$tr/hta-diff/control.json.gz" "$tr/hta-diff/test.json.gz"
grep -q 'world size' "$tmp/err" || fail "world sizes: $(cat "$tmp/err")"

# usage
bad 2
bad 2 --compare "$S0"
bad 2 --kernels -1 "$S0"
bad 2 --db x.db "$S0"
bad 2 "$S0" --log a.log --log b.log
ok --help
grep -q 'usage: mfu trace FILE' "$tmp/out" || fail "--help"
e2e_finish
