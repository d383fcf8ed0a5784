#!/usr/bin/env bash
# e2e: a peak the log implies (its TFLOP/s / its MFU) names the device when exactly one entry of
# the framework's own table has it, and is then used for MFU, marked inferred; several entries
# are named, none chosen; a given device always wins. The logs are written as torchtitan prints
# them: tps, tflops and mfu per line, no device, no sequence length.
E2E_CMD=report
source "$(dirname "$0")/lib/e2e.bash"

# write OUT PEAK_TFLOPS: 30 lines, llama3-8b at 8192 under torchtitan's count (57.96 GFLOP/token)
write() {
    awk -v peak="$2" 'BEGIN {
        for (i = 1; i <= 30; i++) {
            tps = 1200 + (i * 37) % 11; tf = tps * 57.96e9 / 1e12; t = 10 * i * 8192 / tps
            printf "[rank0]:[titan] 2025-06-16 %02d:%02d:%02d,%03d - root - INFO - step: %3d  loss:  6.1384  memory: 49.66GiB(52.28%%)  tps: %d,%03d  tflops: %.2f  mfu: %.2f%%\n",
                int(t / 3600) % 24, int(t / 60) % 60, int(t) % 60, 1000 * (t - int(t)), 10 * i,
                int(tps / 1000), tps % 1000, tf, 100 * tf / peak }
    }' >"$1"
}

# H20: 148 TFLOP/s in torchtitan's table, no other entry
write "$tmp/h20.log" 148
ok "$tmp/h20.log" --model llama3-8b --seq 8192 --json
jq_is .context.device.id h20
jq_is .context.device.source inferred
jq_is .context.device.peak_flops 148000000000000
jq_true '[.notes[] | select(test("device inferred: .*only h20 has in torchtitan.s table"))] | length == 1'
jq_true '.summary.mfu.median > 0.40 and .summary.mfu.median < 0.43'
ok "$tmp/h20.log" --model llama3-8b --seq 8192
grep -q '^device     h20 (NVIDIA H20' "$tmp/out" || fail "h20: the device line: $(grep '^device' "$tmp/out")"
# without a model the log's own MFU stands, and the note names the device the peak belongs to
ok "$tmp/h20.log" --json
jq_true '[.notes[] | select(test("imply a peak of 148.* torchtitan.s figure for h20$"))] | length == 1'
# a given device wins: no inference, that device's peak
ok "$tmp/h20.log" --model llama3-8b --seq 8192 --device h100-sxm --json
jq_is .context.device.id h100-sxm
jq_is .context.device.source input
jq_true '[.notes[] | select(test("device inferred"))] | length == 0'

# 2250 TFLOP/s: b200 and b300 share it in torchtitan's table: named, not chosen, no MFU
write "$tmp/b.log" 2250
ok "$tmp/b.log" --model llama3-8b --seq 8192 --json
jq_is .context.device.id null
jq_is .summary.mfu.n 0
jq_true '[.notes[] | select(test("figure for b200, b300"))] | length == 1'
e2e_finish
