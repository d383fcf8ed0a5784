#!/usr/bin/env bash
# e2e: sentences that misled a first reader (issue 15), in text and in the HTML report.
#   - a warm-up step is said as a multiple of the steady step time, not as "% slower" (a step
#     7.93x slower read "87% slower");
#   - a Megatron log dated before 2025-03-06 names the change it predates (causal halving), not
#     "the formula" whose name it is counted under (megatron-2025);
#   - a roofline ceiling of 90 % or more is not given as a number (roofline.sh checks the CLI).
E2E_CMD=report
source "$(dirname "$0")/lib/e2e.bash"
logs="$data/logs"

# MaxText: step 0 took 44.923 s, the steady steps 5.668 s
f=$logs/maxtext/maxtext-docs-understand-logs-deepseek2-16b-v5p8.log
ok "$f" --html "$tmp/r.html"
grep -q '^steady  .*; warm-up excluded: step 0 (7.93× the steady step time);' "$tmp/out" ||
    fail "maxtext warm-up: $(grep '^steady' "$tmp/out")"
grep -q 'slower' "$tmp/out" && fail "a step time said as % slower: $(grep slower "$tmp/out")"
grep -q 'warm-up step 0 excluded (7.93× the steady step time)' "$tmp/r.html" || fail "html warm-up"

# Megatron-LM, dated 2024-09-03: the line says it predates the causal halving of 2025-03-06
f=$logs/megatron-lm/fixstars-mdk-gpt3-7b-fp8-2node.log
ok "$f" --model llama3-8b --seq 4096 --device h100-sxm --html "$tmp/m.html"
want='framework  Megatron-LM: counts FLOPs as megatron-2025 (full attention); log dated 2024-09-03: before 2025-03-06, when Megatron-LM began halving causal attention'
grep -qxF "$want" "$tmp/out" || fail "megatron line: $(grep '^framework' "$tmp/out")"
grep -q "formula before" "$tmp/out" && fail "megatron line still says 'formula before'"
grep -qF 'counts FLOPs as megatron-2025 (full attention); ' "$tmp/m.html" || fail "html megatron: no attention"
grep -qF 'log dated 2024-09-03: before 2025-03-06, when Megatron-LM began halving causal attention' "$tmp/m.html" ||
    fail "html megatron: no date rule"
# no date: the current formula is assumed, and said so
f=$logs/megatron-lm/epfllm-megatron-llm-issue11-a.log
ok "$f" --model llama3-8b --seq 4096 --device h100-sxm
grep -qF 'counts FLOPs as megatron-2025 (causal attention); no date in the log: assumed after 2025-03-06, when Megatron-LM began halving causal attention' "$tmp/out" ||
    fail "undated megatron: $(grep '^framework' "$tmp/out")"

e2e_finish
