#!/usr/bin/env bash
# e2e: energy beside utilization in `mfu report` (src/figures/energy.c): a Megatron log with
# --log-energy's J/iter/GPU (joules per useful PFLOP and tokens per kWh checked by arithmetic
# here against the report's own useful FLOPs), a canonical file with only power per step
# (energy = power x step time), tensor activity beside MFU both ways (above: a counting error;
# far below: wasted tensor work), and a log with none of them: no energy line, no JSON key.
E2E_CMD=report
source "$(dirname "$0")/lib/e2e.bash"

ctx=(--model gpt2 --seq 1024 --device h100-sxm --devices 8)
for i in $(seq 1 40); do
    printf ' [2025-06-10 10:00:%02d] iteration %8d/     100 | consumed samples: %12d | elapsed time per iteration (ms): 1250.0 | energy per GPU (J/iter/GPU): 812.5 | power per GPU (W/GPU): 650.0 | learning rate: 1.000000E-04 | global batch size:    32 | lm loss: 2.500000E+00 | loss scale: 1.0 | number of skipped iterations:   0 | number of nan iterations:   0 |\n' \
        $((i % 60)) "$i" $((32 * i))
done >"$tmp/meg.log"

# --- JSON: 40 steps x 812.5 J x 8 devices; tokens 40 x 32 x 1024
ok "$tmp/meg.log" "${ctx[@]}" --json
jq_is '.energy.steps' 40
jq_is '.energy.power_steps' 0
jq_is '.energy.joules' 260000
jq_is '.energy.tokens' 1310720
near '.energy.tokens_per_kwh' "$(awk 'BEGIN { printf "%.6f", 1310720 / (260000 / 3.6e6) }')" 1
# J per PFLOP from the report's own useful FLOPs: FLOP/s per device x time x devices
near '.energy.joules_per_pflop' "$(jq -r '260000 / (.summary.model_flops_per_second_per_device.median * 1.25 * 8 * 40 / 1e15)' "$tmp/out")" 0.01
near '.energy.useful_pflop * .energy.joules_per_pflop' 260000 0.01
jq_is '.energy.tensor_check' none
# --- text: one line
ok "$tmp/meg.log" "${ctx[@]}"
grep -q '^energy     248.6 kJ per useful PFLOP, 18.1 M tokens per kWh (260 kJ over 40 steady steps, whole job)$' "$tmp/out" ||
    fail "energy line: $(grep energy "$tmp/out")"
grep -q '^tensor ' "$tmp/out" && fail "a tensor line without tensor activity"
# --- no model: no useful FLOPs, yet tokens per kWh (tokens and the devices' energy), as the
# monitor's per-step figure gives it
ok "$tmp/meg.log" --seq 1024 --devices 8 --json
jq_is '.energy.steps' 0
jq_is '.energy.joules_per_pflop' null
jq_is '.energy.tokens' 1310720
near '.energy.tokens_per_kwh' "$(awk 'BEGIN { printf "%.6f", 1310720 / (260000 / 3.6e6) }')" 1
ok "$tmp/meg.log" --seq 1024 --devices 8
grep -q "^energy     18.1 M tokens per kWh (J per useful PFLOP needs the model's FLOPs)$" "$tmp/out" ||
    fail "energy line without a model: $(grep energy "$tmp/out")"

# --- canonical file: power only (400 W x 2 s), tensor activity per step
canon() { # $1 tensor_active
    echo '{"mfu_run":1,"format":"mfu","seq_len":1024,"devices":8}'
    for i in $(seq 1 40); do
        echo "{\"step\":$i,\"step_time_s\":2,\"tokens\":5242880,\"power_w\":400,\"tensor_active\":$1}"
    done
}
canon 0.1 >"$tmp/above.jsonl"
ok "$tmp/above.jsonl" "${ctx[@]}" --json
jq_is '.energy.power_steps' 40
jq_is '.energy.joules' 256000
jq_is '.energy.tensor_check' mfu_above
jq_true '.energy.tensor_mfu == .summary.mfu.median'
ok "$tmp/above.jsonl" "${ctx[@]}"
grep -q '^tensor     MFU .* is above the tensor pipes. activity 10.0 % (NVML GPM).*counted wrong' "$tmp/out" ||
    fail "above: $(grep tensor "$tmp/out")"
grep -q '40 from power x step time' "$tmp/out" || fail "power steps not said: $(grep energy "$tmp/out")"
canon 0.9 >"$tmp/below.jsonl"
ok "$tmp/below.jsonl" "${ctx[@]}"
grep -q '^tensor     MFU .* is far below the tensor pipes. activity 90.0 %' "$tmp/out" ||
    fail "far below: $(grep tensor "$tmp/out")"

# --- no energy, power or activity: nothing printed, no key
grep -v energy_j "$tmp/meg.log" >/dev/null
sed -e 's/ energy per GPU (J\/iter\/GPU): 812.5 | power per GPU (W\/GPU): 650.0 |//' "$tmp/meg.log" >"$tmp/plain.log"
ok "$tmp/plain.log" "${ctx[@]}"
grep -q -e '^energy ' -e '^tensor ' "$tmp/out" && fail "energy shown without energy: $(cat "$tmp/out")"
ok "$tmp/plain.log" "${ctx[@]}" --json
jq_is 'has("energy")' false
# --- /metrics of a followed file: the last 50 steps, every step alike, so the gauges equal the
# report's figures; none of them for a run without energy
canon 0.5 >"$tmp/live.jsonl"
"$bin" serve "$tmp/live.jsonl" "$tmp/plain.log" --db "$tmp/s.db" --listen 127.0.0.1:0 "${ctx[@]}" \
    >"$tmp/srv.out" 2>"$tmp/srv.err" &
pids+=("$!") # stopped at exit (lib/e2e.bash)
wait_until 20000 has "$tmp/srv.out" 'http://'
url=$(grep -o 'http://[^ ]*' "$tmp/srv.out" | head -1)
url=${url%/}
[ -n "$url" ] || fail "mfu serve did not start: $(cat "$tmp/srv.err")"
metric() { grep "^$1{run=\"$2\"" "$tmp/metrics" | awk '{ print $NF }'; }
for _ in $(seq 1 100); do
    curl -s "$url/metrics" >"$tmp/metrics"
    [ -n "$(metric mfu_joules_per_pflop live)" ] && break
    sleep 0.1
done
ok "$tmp/live.jsonl" "${ctx[@]}" --json
got=$(metric mfu_joules_per_pflop live)
awk -v g="$got" -v w="$(jq -r .energy.joules_per_pflop "$tmp/out")" 'BEGIN { exit !(g > 0 && (g - w) ^ 2 <= (1e-6 * w) ^ 2) }' ||
    fail "mfu_joules_per_pflop $got, report $(jq -r .energy.joules_per_pflop "$tmp/out")"
got=$(metric mfu_tokens_per_kwh live)
awk -v g="$got" -v w="$(jq -r .energy.tokens_per_kwh "$tmp/out")" 'BEGIN { exit !(g > 0 && (g - w) ^ 2 <= (1e-6 * w) ^ 2) }' ||
    fail "mfu_tokens_per_kwh $got, report $(jq -r .energy.tokens_per_kwh "$tmp/out")"
[ "$(metric mfu_tensor_active_ratio live)" = 0.5 ] || fail "mfu_tensor_active_ratio: $(grep tensor "$tmp/metrics")"
grep -q '^# TYPE mfu_joules_per_pflop gauge$' "$tmp/metrics" || fail "no TYPE line: $(grep joules "$tmp/metrics")"
[ -n "$(metric mfu_ratio plain)" ] || fail "the plain run has no mfu_ratio: $(grep '^mfu_ratio' "$tmp/metrics")"
[ -z "$(metric mfu_joules_per_pflop plain)$(metric mfu_tokens_per_kwh plain)$(metric mfu_tensor_active_ratio plain)" ] ||
    fail "energy gauges for a run without energy: $(grep plain "$tmp/metrics")"
if command -v promtool >/dev/null; then
    promtool check metrics <"$tmp/metrics" >"$tmp/promtool" 2>&1 && [ ! -s "$tmp/promtool" ] ||
        fail "promtool check metrics: $(cat "$tmp/promtool")"
fi
e2e_finish
