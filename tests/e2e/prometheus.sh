#!/usr/bin/env bash
# e2e: a real Prometheus (Debian's) scrapes two mfu serve instances, each holding the ranks of one
# node of a 16-device job; cluster MFU as a PromQL expression over the exported FLOP/s and peak
# series must equal the whole run's MFU computed independently (the identity of mfu estimate on
# the run's steady steps) within 0.1 point. The same for a run whose ranks POST their steps.
# promtool check metrics must accept /metrics. Loopback only, free ports, bounded waits; every
# process started is killed on exit.
E2E_CMD=serve
source "$(dirname "$0")/lib/e2e.bash"
for t in prometheus promtool curl; do
    command -v "$t" >/dev/null || {
        echo "prometheus.sh: '$t' is missing: install it with bash scripts/deps.sh (Debian package: ${t/promtool/prometheus})"
        exit 1
    }
done

# pids, wait_until and has: lib/e2e.bash

TOKEN=prom-e2e-token-0123456789
MODEL=(--model llama3-8b --seq 4096 --device h100-sxm --devices 16 --local-devices 8)

# The job: 16 devices on two nodes, 64 x 4096 tokens per step. Training is synchronous, so every
# rank prints the same step time; each node's log carries the lines of its first rank. Five
# warm-up steps are slow; the rest jitter by +-0.5 %.
/usr/bin/python3 - "$tmp" <<'EOF'
import json, math, sys
d = sys.argv[1]
tokens = 64 * 4096
times = [6.0] * 5 + [2.2 * (1 + 0.005 * math.sin(i * 1.7)) for i in range(295)]
for node, rank in (("a", 0), ("b", 8)):
    with open(f"{d}/node-{node}.jsonl", "w") as f:
        f.write(json.dumps({"mfu_run": 1, "format": "torchtitan", "world_size": 16,
                            "seq_len": 4096, "dtype": "bf16"}) + "\n")
        for i, t in enumerate(times):
            f.write(json.dumps({"step": i + 1, "step_time_s": t, "tokens": tokens,
                                "rank": rank}) + "\n")
steady = times[5:]
with open(f"{d}/mean_step", "w") as f:
    f.write(repr(sum(steady) / len(steady)))
# posted run: ranks 0-3 (two per node) post 60 steps of 2.5 s
for node, ranks in (("a", (0, 1)), ("b", (2, 3))):
    with open(f"{d}/post-{node}.jsonl", "w") as f:
        for s in range(1, 61):
            for r in ranks:
                f.write(json.dumps({"step": s, "step_time_s": 2.5, "tokens": tokens,
                                    "rank": r}) + "\n")
EOF

start() { # NAME ARGS...: sets URL_<NAME>
    local name=$1
    shift
    "$bin" serve "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" &
    pids+=($!)
    wait_until 15000 has "$tmp/$name.out" 'http://' || {
        fail "mfu serve $name did not start: $(cat "$tmp/$name.err")"
        # Every query of the Grafana dashboard runs on this Prometheus; those not about DCGM have data.
dash=$(cd "$MFU_SOURCE_DIR" && pwd)/docs/grafana/mfu-dashboard.json
jq -e '.panels | length > 0' "$dash" >/dev/null || fail "the dashboard is not valid JSON with panels"
while IFS= read -r expr; do
    e=${expr//\$run/.*}
    res=$(curl -s --get --data-urlencode "query=$e" "$P/api/v1/query")
    [ "$(jq -r .status <<<"$res")" = success ] || fail "dashboard query fails: $e: $res"
    case $e in *DCGM*) ;; *) [ "$(jq '.data.result | length' <<<"$res")" -ge 1 ] || fail "no data for: $e" ;; esac
done < <(jq -r '.panels[].targets[].expr' "$dash")
curl -s "$P/api/v1/label/run/values" | jq -e '.data | index("job") != null' >/dev/null ||
    fail "the dashboard's run variable (label_values of run) lacks the run"

e2e_finish
        exit 1
    }
    local u
    u=$(grep -o 'http://[^ ]*' "$tmp/$name.out" | head -1)
    printf -v "URL_$name" '%s' "${u%/}"
}
start a "$tmp/node-a.jsonl" --run job --db "$tmp/a.db" --listen 127.0.0.1:0 --token "$TOKEN" \
    --hostname node-a --gpus-per-node 2 "${MODEL[@]}"
start b "$tmp/node-b.jsonl" --run job --db "$tmp/b.db" --listen 127.0.0.1:0 --token "$TOKEN" \
    --hostname node-b --gpus-per-node 2 "${MODEL[@]}"
for n in a b; do
    u=URL_$n
    code=$(curl -s -o "$tmp/post.out" -w '%{http_code}' -H "Authorization: Bearer $TOKEN" \
        --data-binary @"$tmp/post-$n.jsonl" "${!u}/api/runs/posted/steps")
    [ "$code" = 201 ] || fail "POST to $n: HTTP $code $(cat "$tmp/post.out")"
    wait_until 10000 bash -c "curl -s '${!u}/api/runs/job' | jq -e '.steps == 300' >/dev/null" ||
        fail "instance $n did not read its log"
done

# promtool's own checks: format and naming conventions. Any output is a failure.
curl -s "$URL_a/metrics" >"$tmp/metrics"
promtool check metrics <"$tmp/metrics" >"$tmp/promtool" 2>&1
prc=$?
[ "$prc" = 0 ] && [ ! -s "$tmp/promtool" ] || fail "promtool check metrics (exit $prc): $(cat "$tmp/promtool")"
grep -q '^mfu_ratio{run="posted",rank="1",hostname="node-a",model_name="NVIDIA H100 80GB HBM3",gpu="1"} ' "$tmp/metrics" ||
    fail "per-rank labels: $(grep '^mfu_ratio' "$tmp/metrics")"

# Prometheus on a free loopback port, scraping both every second.
port=$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
# The scrape and the rules are the ones docs/prometheus.md gives (at a 1 s interval).
rules=$(cd "${MFU_SOURCE_DIR:?}" && pwd)/docs/prometheus/mfu-rules.yml
promtool check rules "$rules" >"$tmp/rules.out" 2>&1 || fail "promtool check rules: $(cat "$tmp/rules.out")"
# docs/prometheus.md shows the same rules (the file less its comments).
doc=$(cd "$MFU_SOURCE_DIR" && pwd)/docs/prometheus.md
diff <(awk '/^## Recording rules/ { r = 1 } r && /^```yaml/ { y = 1; next } y && /^```/ { exit } y' "$doc") \
    <(grep -v '^#' "$rules") >"$tmp/rules.diff" || fail "docs/prometheus.md's rules differ from $rules: $(cat "$tmp/rules.diff")"
cat >"$tmp/prom.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files:
  - $rules
scrape_configs:
  - job_name: mfu
    static_configs:
      - targets: ['${URL_a#http://}', '${URL_b#http://}']
    metric_relabel_configs:
      - source_labels: [model_name]
        regex: (.+)
        target_label: modelName
      - regex: model_name
        action: labeldrop
EOF
promtool check config "$tmp/prom.yml" >"$tmp/config.out" 2>&1 || fail "promtool check config: $(cat "$tmp/config.out")"
prometheus --config.file="$tmp/prom.yml" --storage.tsdb.path="$tmp/prom-data" \
    --web.listen-address="127.0.0.1:$port" --log.level=warn >"$tmp/prom.log" 2>&1 &
pids+=($!)
P=http://127.0.0.1:$port
wait_until 30000 bash -c "curl -sf '$P/-/ready' >/dev/null" || fail "prometheus not ready: $(tail -5 "$tmp/prom.log")"
up() { [ "$(curl -s "$P/api/v1/targets" | jq '[.data.activeTargets[] | select(.health == "up")] | length')" = 2 ]; }
wait_until 30000 up || fail "targets not up: $(curl -s "$P/api/v1/targets" | jq -c '[.data.activeTargets[] | {health, lastError}]')"

query() { # PROMQL: prints the single value, empty when none
    curl -s --get --data-urlencode "query=$1" "$P/api/v1/query" | jq -r '.data.result | if length == 1 then .[0].value[1] else empty end'
}
cluster='sum(mfu_model_flops_per_second{run="job"}) / sum(mfu_peak_flops_per_second{run="job"})'
series_up() { [ "$(query 'count(mfu_peak_flops_per_second{run="job"})')" = 2 ] && [ -n "$(query "$cluster")" ]; }
wait_until 30000 series_up || fail "both instances' series did not reach prometheus"
got=$(query "$cluster")

# The whole run's MFU as mfu report computes it (median over the steady steps), and, as a second
# opinion, the identity (mfu estimate) on the steady steps' mean step time.
"$bin" report "$tmp/node-a.jsonl" --model llama3-8b --seq 4096 --device h100-sxm --devices 16 \
    --json >"$tmp/report" 2>"$tmp/report.err" || fail "mfu report failed: $(cat "$tmp/report.err")"
want=$(jq -r .summary.mfu.median "$tmp/report")
mean=$(cat "$tmp/mean_step")
"$bin" estimate --model llama3-8b --seq 4096 --device h100-sxm --devices 16 --step-time "$mean" \
    --batch-tokens 262144 --json >"$tmp/est" || fail "mfu estimate failed"
want_e=$(jq -r .mfu "$tmp/est")
echo "prometheus.sh: cluster MFU from PromQL $got; mfu report $want; mfu estimate $want_e"
for w in "$want" "$want_e"; do
    awk -v g="$got" -v w="$w" 'BEGIN { d = (g - w) * 100; if (d < 0) d = -d; exit !(d <= 0.1 && w > 0.05) }' ||
        fail "cluster MFU $got differs from the run's $w by more than 0.1 point"
done
# The recording rule of docs/prometheus/mfu-rules.yml gives the same figure.
rule_up() { [ -n "$(query 'run:mfu_ratio:cluster{run="job"}')" ]; }
wait_until 30000 rule_up || fail "the recording rule run:mfu_ratio:cluster has no value"
got_r=$(query 'run:mfu_ratio:cluster{run="job"}')
awk -v g="$got_r" -v w="$want" 'BEGIN { d = (g - w) * 100; if (d < 0) d = -d; exit !(d <= 0.1) }' ||
    fail "run:mfu_ratio:cluster = $got_r, want $want"
# Every evaluation of the rule so far, not only the latest: a rule that divides two recorded sums
# reads them at different moments, so a scrape committed between the two halves gives a sample
# with one instance's FLOP/s over both instances' peaks (half the MFU). Let it run for a few
# evaluations first, both instances scraped.
sleep 3
for agg in min max; do
    v=$(query "${agg}_over_time(run:mfu_ratio:cluster{run=\"job\"}[10m])")
    n=$(query "count_over_time(run:mfu_ratio:cluster{run=\"job\"}[10m])")
    awk -v g="$v" -v w="$want" 'BEGIN { d = (g - w) * 100; if (d < 0) d = -d; exit !(g != "" && d <= 0.1) }' ||
        fail "the $agg of $n evaluations of run:mfu_ratio:cluster is $v, want $want"
done
# The relabelling of docs/prometheus.md gives DCGM's modelName label.
[ "$(query 'count(mfu_ratio{run="job",modelName="NVIDIA H100 80GB HBM3"})')" = 2 ] ||
    fail "modelName after relabelling: $(query 'count(mfu_ratio{run="job"})')"
# Each instance speaks for 8 devices: the peaks add up to the job's 16.
peak_sum=$(query 'sum(mfu_peak_flops_per_second{run="job"})')
peak_one=$(jq -r .device.peak_flops "$tmp/est")
awk -v s="$peak_sum" -v p="$peak_one" 'BEGIN { d = s / (16 * p) - 1; if (d < 0) d = -d; exit !(d < 1e-9) }' ||
    fail "sum of peaks $peak_sum is not 16 x $peak_one"

# The posted run: four ranks, one device each, on two servers.
posted='sum(mfu_model_flops_per_second{run="posted"}) / sum(mfu_peak_flops_per_second{run="posted"})'
posted_up() { [ "$(query 'count(mfu_ratio{run="posted"})')" = 4 ]; }
wait_until 15000 posted_up || fail "the four ranks did not reach prometheus"
got_p=$(query "$posted")
jq -c 'del(.rank)' "$tmp/post-a.jsonl" >"$tmp/posted-run.jsonl"
"$bin" report "$tmp/posted-run.jsonl" --format jsonl --model llama3-8b --seq 4096 \
    --device h100-sxm --devices 16 --json >"$tmp/report2" 2>/dev/null
want_p=$(jq -r .summary.mfu.median "$tmp/report2")
echo "prometheus.sh: posted ranks: cluster MFU $got_p, whole run $want_p"
awk -v g="$got_p" -v w="$want_p" 'BEGIN { d = (g - w) * 100; if (d < 0) d = -d; exit !(d <= 0.1 && w > 0.05) }' ||
    fail "posted cluster MFU $got_p differs from $want_p by more than 0.1 point"
# and the DCGM-style join keys are there to join on
[ "$(query 'count(count by (hostname, gpu) (mfu_ratio{run="posted"}))')" = 4 ] ||
    fail "hostname/gpu do not tell the four ranks apart"

# Every query of the Grafana dashboard runs on this Prometheus; those not about DCGM have data.
dash=$(cd "$MFU_SOURCE_DIR" && pwd)/docs/grafana/mfu-dashboard.json
jq -e '.panels | length > 0' "$dash" >/dev/null || fail "the dashboard is not valid JSON with panels"
while IFS= read -r expr; do
    e=${expr//\$run/.*}
    res=$(curl -s --get --data-urlencode "query=$e" "$P/api/v1/query")
    [ "$(jq -r .status <<<"$res")" = success ] || fail "dashboard query fails: $e: $res"
    case $e in *DCGM*) ;; *) [ "$(jq '.data.result | length' <<<"$res")" -ge 1 ] || fail "no data for: $e" ;; esac
done < <(jq -r '.panels[].targets[].expr' "$dash")
curl -s "$P/api/v1/label/run/values" | jq -e '.data | index("job") != null' >/dev/null ||
    fail "the dashboard's run variable (label_values of run) lacks the run"

e2e_finish
