#!/usr/bin/env bash
# e2e: FLOP/s are SI-scaled everywhere a person reads them (mfu__fmt_si): a CPU-scale run (gpt2
# at 4 tokens/s, about 3.2 GFLOP/s) shows GFLOP/s, never "0.0 TFLOP/s", in the text report, its
# HTML page, `mfu watch --once`, `mfu estimate` and `mfu compare`; a GPU run still reads in
# TFLOP/s. The printed figure is the JSON's (which keeps raw FLOP/s) to three significant
# digits.
E2E_CMD=report
source "$(dirname "$0")/lib/e2e.bash"
command -v jq >/dev/null || { echo "si_units.sh: jq is missing (bash scripts/deps.sh)"; exit 1; }
log=$tmp/cpu.jsonl
/usr/bin/python3 - "$log" <<'PY'
import json, sys
with open(sys.argv[1], "w") as f:
    for s in range(1, 31):
        f.write(json.dumps({"step": s, "step_time_s": 1.0 + 0.01 * (s % 3), "tokens": 4,
                            "loss": 3 - 0.01 * s}) + "\n")
PY
ctx=(--model gpt2 --seq 1024 --peak-tflops 0.5 --devices 1)
# the JSON's median model FLOP/s, in the SI form the text must print (3 significant digits)
ok "$log" "${ctx[@]}" --json
med=$(jq -r '.summary.model_flops_per_second_per_device.median' "$tmp/out")
want=$(/usr/bin/python3 -c 'import sys; v = float(sys.argv[1]); assert 1e9 <= v < 1e10, v; print("%.2f GFLOP/s" % (v / 1e9))' "$med") ||
    fail "median model FLOP/s $med is not a few GFLOP/s"
jq -e '.context.device.peak_flops == 5e11' "$tmp/out" >/dev/null || fail "the JSON's peak is not raw FLOP/s"
ok "$log" "${ctx[@]}"
grep -q "^model FLOP/s per device  *$want " "$tmp/out" ||
    fail "text: no '$want' row: $(grep -i flop "$tmp/out")"
grep -q "peak 500.0 GFLOP/s (--peak-tflops)" "$tmp/out" || fail "text peak: $(grep '^device' "$tmp/out")"
grep -q "TFLOP/s" "$tmp/out" && fail "text prints TFLOP/s for a CPU-scale run: $(grep TFLOP "$tmp/out")"
# the page: the tile and the peak
ok "$log" "${ctx[@]}" --html "$tmp/r.html"
grep -q ">$want<" "$tmp/r.html" || fail "HTML: no '$want' tile"
grep -q "dense peak 500.0 GFLOP/s" "$tmp/r.html" || fail "HTML: no peak in GFLOP/s"
grep -q "0\.0 TFLOP/s" "$tmp/r.html" && fail "HTML: 0.0 TFLOP/s"
# watch, estimate, compare
E2E_CMD=watch ok "$log" "${ctx[@]}" --once
grep -q "^FLOP/s     model $want, hardware $want per device (median)" "$tmp/out" ||
    fail "watch: $(grep -i flop "$tmp/out")"
E2E_CMD=estimate ok --model gpt2 --seq 1024 --peak-tflops 0.5 --tokens-per-sec 4
grep -q "^model FLOP/s per device  *3.19 GFLOP/s$" "$tmp/out" || fail "estimate: $(grep -i flop "$tmp/out")"
E2E_CMD=compare ok "$log" "$log" "${ctx[@]}"
grep -q "TFLOP/s" "$tmp/out" && fail "compare prints TFLOP/s: $(grep TFLOP "$tmp/out")"
# a GPU run keeps TFLOP/s, three significant digits
llmc=$data/logs/llm.c/llmc-discussion677-gpt2-1558m-8xh100.log
ok "$llmc" --model gpt2-xl --device h100-sxm --json
med=$(jq -r '.summary.model_flops_per_second_per_device.median' "$tmp/out")
want=$(/usr/bin/python3 -c 'import sys; print("%.0f TFLOP/s" % (float(sys.argv[1]) / 1e12))' "$med")
ok "$llmc" --model gpt2-xl --device h100-sxm
grep -q "^model FLOP/s per device  *$want " "$tmp/out" || fail "GPU text: $(grep -i flop "$tmp/out")"
grep -q "dense peak 989.5 TFLOP/s" "$tmp/out" || fail "GPU peak: $(grep '^device' "$tmp/out")"
# a dtype change mid-run: the boundary's peaks SI-scaled (989.5 TFLOP/s -> 1.979 PFLOP/s), and
# without a device count the sentence names the devices as what is missing, not the peak
dt=$tmp/dtype.jsonl
/usr/bin/python3 - "$dt" <<'PY'
import json, sys
with open(sys.argv[1], "w") as f:
    f.write(json.dumps({"mfu_run": 1, "format": "generic"}) + "\n")
    for s in range(1, 121):
        f.write(json.dumps({"step": s, "step_time_s": (1.0 if s <= 60 else 0.6) + 0.01 * (s % 3),
                            "tokens": 524288, "dtype": "bf16" if s <= 60 else "fp8"}) + "\n")
PY
ok "$dt" --model llama3-8b --seq 8192 --device h100-sxm --devices 64
grep -q "^at step 61 (dtype bf16 → fp8, peak 989.5 TFLOP/s → 1.979 PFLOP/s): .*capacity +100 %" \
    "$tmp/out" || fail "dtype boundary: $(grep 'at step' "$tmp/out")"
ok "$dt" --model llama3-8b --seq 8192 --device h100-sxm
grep -q "^at step 61 .*; devices unknown (give --devices): MFU unknown" "$tmp/out" ||
    fail "no devices: $(grep 'at step' "$tmp/out")"
e2e_finish
