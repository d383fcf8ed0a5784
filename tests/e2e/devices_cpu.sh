#!/usr/bin/env bash
# e2e: `mfu devices cpu` - this machine's CPU, its computed peak (text and --json with stable
# keys), the probe (--probe 0.2: a positive rate below 1.5x the peak), the limits of --probe
# and --threads (exit 2, one line), and `--device cpu` where the other commands take a device.
E2E_CMD=devices
source "$(dirname "$0")/lib/e2e.bash"

# --- JSON first: everything else is checked against it
ok cpu --json
jq_is '[keys[]] | join(",")' "cpu,device,error,match,peak,probe,query"
jq_is '.query' cpu
jq_is '.cpu | [keys[]] | join(",")' \
    "arch,clock_hz,clock_source,family,features,features_source,hybrid,implementer,logical_cpus,logical_cpus_source,model,model_name,part,physical_cores,physical_cores_source,stepping,vendor"
jq_true '.cpu.logical_cpus >= 1'
jq_true '.probe == null'
if [ "$(jq -r '.peak == null' "$tmp/out")" = true ]; then
    # a machine whose clock or core count cannot be found: the error names the fix
    jq_true '.error | test("--peak-tflops")'
    echo "devices_cpu.sh: no peak on this machine ($(jq -r .error "$tmp/out")); the rest skipped"
    e2e_finish
    exit 0
fi
jq_true '.error == null'
jq_is '.peak | [keys[]] | join(",")' \
    "clock_hz,core,cores,dense_flops_per_s,flops_per_cycle_per_core,fma_bits,fma_units,isa_bits,known_core,rule,source"
jq_is '.peak.dense_flops_per_s | [keys[]] | join(",")' "bf16,fp16,fp32,fp64,fp8,int8,tf32"
# the formula: cores x clock x FLOP/cycle/core, for fp32 and fp64
jq_true '(.peak.dense_flops_per_s.fp32 / (.peak.cores * .peak.clock_hz * .peak.flops_per_cycle_per_core.fp32) - 1) | fabs < 1e-9'
jq_true '(.peak.dense_flops_per_s.fp64 / (.peak.cores * .peak.clock_hz * .peak.flops_per_cycle_per_core.fp64) - 1) | fabs < 1e-9'
jq_true '.peak.flops_per_cycle_per_core.fp32 == .peak.fma_units * (.peak.fma_bits / 32) * 2 or .peak.fma_bits == 0'
jq_true '.peak.dense_flops_per_s.fp32 == 2 * .peak.dense_flops_per_s.fp64'
jq_true '.peak.rule | test("FLOP/cycle/core") and test("clock")'
jq_true '.device.id == "cpu" and .device.dense_flops_per_s.fp32 == .peak.dense_flops_per_s.fp32'
jq_true '.device.memory_bandwidth_bytes_per_s == 0'
fp32=$(jq -r '.peak.dense_flops_per_s.fp32' "$tmp/out")
cores=$(jq -r '.peak.cores' "$tmp/out")

# --- text
ok cpu
grep -q '^cpu  ' "$tmp/out" || fail "text: first line"
for w in "cores" "clock" "features" "dense peak" "rule" "fp32" "fp64"; do
    grep -qF -- "$w" "$tmp/out" || fail "text lacks '$w'"
done
[ -s "$tmp/err" ] && fail "text wrote to stderr"
ok CPU --dtype fp32 # the name ignores case; --dtype keeps one row
grep -q '^  fp32 ' "$tmp/out" || fail "--dtype fp32 row"
grep -q '^  fp64 ' "$tmp/out" && fail "--dtype fp32 shows fp64"
ok cpu --dtype fp32 --json
jq_true ".device.peak_flops_per_s == $fp32"
bad 1 cpu --dtype fp8 # no fp8 on a CPU: named, exit 1

# --- the probe
ok cpu --probe 0.2 --json
jq_is '.probe | [keys[]] | join(",")' "fp32,fp64,kernel,matrix_n,seconds_requested,threads"
jq_is '.probe.fp32 | [keys[]] | join(",")' \
    "flops,flops_per_s,max_rel_error,peak_flops_per_s,products,ratio,seconds"
jq_true ".probe.threads == ([$cores, 256] | min)"
jq_true '.probe.seconds_requested == 0.2 and .probe.matrix_n == 128'
for t in fp32 fp64; do
    jq_true ".probe.$t.flops_per_s > 0 and .probe.$t.products >= 1"
    # all cores may turbo above the clock of the rule (a VM's 'cpu MHz' is the nominal one):
    # here 2x would mean a wrong peak; one thread on a multi-core CPU is held to 1.5x below
    jq_true ".probe.$t.ratio > 0 and .probe.$t.ratio < 2"
    jq_true ".probe.$t.peak_flops_per_s == .peak.dense_flops_per_s.$t"
    jq_true ".probe.$t.max_rel_error < 1e-5"
done
ok cpu --probe=0.2 --threads 1 --json
jq_true '.probe.threads == 1'
jq_true '.probe.fp32.ratio > 0 and .probe.fp32.ratio < 1.5 and .probe.fp64.ratio < 1.5'
ok cpu --probe 0.2
grep -q '^probe: 0.2 s' "$tmp/out" || fail "probe text: header"
grep -q 'of the peak' "$tmp/out" || fail "probe text: ratio"

# --- limits and misuse: exit 2, one line
bad 2 cpu --probe 0.01
grep -qF "0.05" "$tmp/err" || fail "--probe 0.01: range not named"
bad 2 cpu --probe 61
bad 2 cpu --probe 0
bad 2 cpu --probe -1
bad 2 cpu --probe 0.2 --threads 0
bad 2 cpu --probe 0.2 --threads 257
grep -qF "256" "$tmp/err" || fail "--threads 257: limit not named"
bad 2 cpu --probe 0.2 --threads many
bad 2 cpu --threads 2
bad 2 h100-sxm --probe 0.2
bad 2 cpu --probe abc # not seconds: 'cpu abc' is no CPU

# --- --device cpu in the other commands: the same peak
E2E_CMD=estimate
ok --model gpt2 --seq 1024 --device cpu --dtype fp32 --tokens-per-sec 100 --json
jq_true ".device.peak_flops == $fp32"
E2E_CMD=roofline
bad 1 --model gpt2 --seq 1024 --device cpu --dtype fp32
grep -qF -- "--bandwidth-tbs" "$tmp/err" || fail "roofline: bandwidth hint"
ok --model gpt2 --seq 1024 --device cpu --dtype fp32 --bandwidth-tbs 0.1 --json
log="$data/logs/nanogpt/nanogpt-issue110-gpt2-124m-8xa100-preMFU.log"
E2E_CMD=report
ok "$log" --model gpt2 --seq 1024 --device cpu --dtype fp32 --json
jq_true ".context.device.id == \"cpu\" and .context.device.peak_flops == $fp32"
E2E_CMD=watch
ok "$log" --once --plain --device cpu --dtype fp32
grep -q 'x cpu, peak' "$tmp/out" || fail "watch: the cpu peak line"
E2E_CMD=ingest
ok "$log" --db "$tmp/runs.db" --run cpu-run --device cpu --dtype fp32 --model gpt2 --seq 1024
E2E_CMD=report
ok --run cpu-run --db "$tmp/runs.db" --json
jq_true ".context.device.id == \"cpu\" and .context.device.peak_flops == $fp32"

e2e_finish
