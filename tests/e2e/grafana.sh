#!/usr/bin/env bash
# e2e: the Grafana dashboard (docs/grafana/mfu-dashboard.json).
#   1. it is a dashboard by Grafana's own schema: @grafana/schema (pinned in web/package-lock.json)
#      types it with TypeScript (tsc, pinned too), panel options and custom field config by each
#      panel type's schema (tests/grafana/schema.mjs);
#   2. every axis has a unit: each panel sets one, and a series moved to a second axis sets its own
#      (panel 10 plots a 0-1 ratio and a clock: never on one unitless axis);
#   3. its DCGM join holds for several runs per host: promtool evaluates the panel's queries on
#      series where two runs share a host and requires one line per (host, run) with that host's
#      value (a group_left on the host alone fails with many-to-many matching there).
set -u
src=${MFU_SOURCE_DIR:?MFU_SOURCE_DIR is the source tree}
dash="$src/docs/grafana/mfu-dashboard.json"
web="$src/web"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# --- 1. Grafana's schema
for p in typescript @grafana/schema; do
    [ -f "$web/node_modules/$p/package.json" ] || { echo "FAIL: web/node_modules lacks $p: run scripts/deps.sh"; exit 1; }
done
ln -s "$web/node_modules" "$tmp/node_modules"
cat >"$tmp/tsconfig.json" <<'JSON'
{"compilerOptions": {"strict": true, "noEmit": true, "module": "esnext", "moduleResolution": "bundler",
 "target": "es2022", "skipLibCheck": true, "types": []}, "files": ["dashboard.ts"]}
JSON
node "$src/tests/grafana/schema.mjs" "$dash" "$tmp/dashboard.ts" || fail "schema.mjs could not type the dashboard"
node "$web/node_modules/typescript/bin/tsc" -p "$tmp/tsconfig.json" >"$tmp/tsc.out" 2>&1 ||
    fail "the dashboard does not match @grafana/schema: $(head -c 2000 "$tmp/tsc.out")"
# the check itself catches a mistyped key and an enum value out of range
sed 's/"placement": "bottom"/"placement": "below"/' "$dash" >"$tmp/bad1.json"
sed '0,/"unit": "percentunit"/s//"units": "percentunit"/' "$dash" >"$tmp/bad2.json"
for bad in bad1 bad2; do
    node "$src/tests/grafana/schema.mjs" "$tmp/$bad.json" "$tmp/dashboard.ts" &&
        node "$web/node_modules/typescript/bin/tsc" -p "$tmp/tsconfig.json" >/dev/null 2>&1 &&
        fail "the schema check accepts a broken dashboard ($bad)"
done

# --- 2. a unit on every axis
jq -e '[.panels[] | select((.fieldConfig.defaults.unit // "") == "")] | length == 0' "$dash" >/dev/null ||
    fail "panels without a unit: $(jq -c '[.panels[] | select((.fieldConfig.defaults.unit // "") == "") | .id]' "$dash")"
jq -e '[.panels[].fieldConfig.overrides[]? | select(any(.properties[]; .id == "custom.axisPlacement"))
        | select(all(.properties[]; .id != "unit"))] | length == 0' "$dash" >/dev/null ||
    fail "a series on a second axis without its own unit"
jq -e '.panels[] | select(.id == 10) | .fieldConfig.defaults.unit == "percentunit" and
        (.fieldConfig.overrides[0].properties | any(.id == "unit" and .value == "hertz"))
        and (.fieldConfig.overrides[0].properties | any(.id == "custom.axisPlacement" and .value == "right"))' \
    "$dash" >/dev/null || fail "panel 10: the ratio and the clock do not have an axis and a unit each"

# --- 3. the DCGM join with two runs on one host (promtool's PromQL engine, Debian's prometheus)
expr() { jq -r --arg id "$1" --arg ref "$2" \
    '.panels[] | select(.id == ($id | tonumber)) | .targets[] | select(.refId == $ref) | .expr' "$dash" |
    sed 's/\$run/.*/g'; }
a=$(expr 10 A)
b=$(expr 10 B)
: >"$tmp/rules.yml"
cat >"$tmp/test.yml" <<YAML
rule_files: [rules.yml]
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
      # runs a and b share node-1 (one GPU each); run c is alone on node-2
      - series: 'mfu_ratio{run="a", hostname="node-1", gpu="0"}'
        values: '0.41x5'
      - series: 'mfu_ratio{run="b", hostname="node-1", gpu="1"}'
        values: '0.38x5'
      - series: 'mfu_ratio{run="c", hostname="node-2", gpu="0"}'
        values: '0.45x5'
      - series: 'DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{hostname="node-1", gpu="0", modelName="NVIDIA H100 80GB HBM3"}'
        values: '0.5x5'
      - series: 'DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{hostname="node-1", gpu="1", modelName="NVIDIA H100 80GB HBM3"}'
        values: '0.7x5'
      - series: 'DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{hostname="node-2", gpu="0", modelName="NVIDIA H100 80GB HBM3"}'
        values: '0.25x5'
      - series: 'DCGM_FI_DEV_SM_CLOCK{hostname="node-1", gpu="0"}'
        values: '1980x5'
      - series: 'DCGM_FI_DEV_SM_CLOCK{hostname="node-1", gpu="1"}'
        values: '1400x5'
      - series: 'DCGM_FI_DEV_SM_CLOCK{hostname="node-2", gpu="0"}'
        values: '1980x5'
    promql_expr_test:
      - expr: '$a'
        eval_time: 4m
        exp_samples:
          - {labels: '{hostname="node-1", run="a"}', value: 0.6}
          - {labels: '{hostname="node-1", run="b"}', value: 0.6}
          - {labels: '{hostname="node-2", run="c"}', value: 0.25}
      - expr: '$b'
        eval_time: 4m
        exp_samples:
          - {labels: '{hostname="node-1", run="a"}', value: 1.69e9}
          - {labels: '{hostname="node-1", run="b"}', value: 1.69e9}
          - {labels: '{hostname="node-2", run="c"}', value: 1.98e9}
YAML
(cd "$tmp" && promtool test rules test.yml) >"$tmp/promtool.out" 2>&1 ||
    fail "panel 10's join: $(cat "$tmp/promtool.out")"

if [ "$fails" -gt 0 ]; then
    echo "grafana.sh: $fails failure(s)"
    exit 1
fi
echo "grafana.sh: all checks passed"
