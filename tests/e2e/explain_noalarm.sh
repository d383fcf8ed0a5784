#!/usr/bin/env bash
# e2e: no false alarms through the CLI. 30 clean runs written as log files (canonical
# JSON-lines from tests/e2e/lib/genlog.py: 2 % AR(0.3) noise, a 3-step warm-up, clock and power
# noise, a falling loss; 600 steps each, a new seed each) give one segment and no finding, and
# `--expect findings==0` holds (exit 0). The library's no-alarm tests cover 300 more seeds.
E2E_CMD=report
source "$(dirname "$0")/lib/e2e.bash"
F4=$("$bin" flops --json --model gpt2 --seq 4096 | jq -r .flops_per_token.model)
alarms=0
for seed in $(seq 1001 1030); do
    /usr/bin/python3 "$(dirname "$0")/lib/genlog.py" clean "$tmp/c.jsonl" --seed "$seed" \
        --flops "$F4" || fail "genlog seed $seed"
    run "$tmp/c.jsonl" --model gpt2 --device h100-sxm --json --no-series --expect 'findings==0'
    got=$(jq -c '[(.segments | length), [.findings[].kind], .warmup.steps]' "$tmp/out")
    if [ "$rc" != 0 ] || [ "$got" != '[1,[],3]' ]; then
        alarms=$((alarms + 1))
        fail "clean run, seed $seed: exit $rc, [segments, findings, warm-up] = $got"
    fi
done
[ "$alarms" = 0 ] || echo "false alarms in $alarms of 30 clean runs"
e2e_finish
