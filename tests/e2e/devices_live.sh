#!/usr/bin/env bash
# e2e: `mfu devices --live` against the fake NVML the tests build (MFU_FAKE_NVML,
# tests/fake/nvml_fake.c): two GPUs from a script (one in the table, one not), text and --json
# with stable keys, --dtype, --watch/--count sampling the script's sequence, and the errors:
# no NVML, NVML failing, options that do not go together (exit 1 or 2, one line on stderr).
E2E_CMD=devices
source "$(dirname "$0")/lib/e2e.bash"
fake=${MFU_FAKE_NVML:?MFU_FAKE_NVML is the fake NVML library (tests/CMakeLists.txt)}
export MFU_NVML_LIBRARY=$fake
cat >"$tmp/two.txt" <<'SCRIPT'
device NVIDIA H100 80GB HBM3
uuid GPU-1111
clock 1410 1500 1980
max_clock 1980
power 699500
limit 700000
reasons 0x84 0x4 0
temp 83
util 100 61
energy 123456789
device Fake Accelerator 9000
gpm 0
fail nvmlDeviceGetCurrentClocksEventReasons 3
fail nvmlDeviceGetTemperature 3
SCRIPT
export MFU_FAKE_NVML_SCRIPT=$tmp/two.txt

# --- JSON
ok --live --json
jq_is '[keys_unsorted[]] | join(",")' "library,gpus_reported,gpus"
jq_is '.library' "$fake"
jq_is '.gpus_reported' 2
jq_is '.gpus | length' 2
jq_is '.gpus[0] | [keys_unsorted[]] | join(",")' \
    "index,name,uuid,device,match,dtype,peak_flops_per_s,sm_clock_mhz,max_sm_clock_mhz,power_w,power_limit_w,reasons,reasons_mask,slowdown,temperature_c,gpu_utilization,memory_utilization,energy_j,gpm"
jq_is '.gpus[0].name' "NVIDIA H100 80GB HBM3"
jq_is '.gpus[0].uuid' "GPU-1111"
jq_is '.gpus[0].device' "h100-sxm"
jq_is '.gpus[0].dtype' "bf16"
peak=$("$bin" devices h100-sxm --json | jq '.device.dense_flops_per_s.bf16')
jq_true ".gpus[0].peak_flops_per_s == $peak"
jq_true '.gpus[0].sm_clock_mhz == 1410 and .gpus[0].max_sm_clock_mhz == 1980'
jq_true '.gpus[0].power_w == 699.5 and .gpus[0].power_limit_w == 700'
jq_is '.gpus[0].reasons | join(",")' "sw_power_cap,hw_power_brake"
jq_true '.gpus[0].reasons_mask == 132 and .gpus[0].slowdown == true'
jq_true '.gpus[0].temperature_c == 83 and .gpus[0].gpu_utilization == 1 and .gpus[0].memory_utilization == 0.61'
# the energy counter in J (NVML reports mJ) and GPM: GPU 0 has both, GPU 1 says it has no GPM
jq_true '.gpus[0].energy_j == 123456.789 and .gpus[0].gpm == true'
jq_true '.gpus[1].gpm == false'
jq_is '.gpus[1].name' "Fake Accelerator 9000"
jq_true '.gpus[1].device == null and .gpus[1].match == "none" and .gpus[1].peak_flops_per_s == null'
jq_true '.gpus[1].reasons == null and .gpus[1].reasons_mask == null and .gpus[1].slowdown == null'
jq_true '.gpus[1].temperature_c == null and .gpus[1].sm_clock_mhz == 1980'

ok --live --json --dtype fp8
fp8=$("$bin" devices h100-sxm --json | jq '.device.dense_flops_per_s.fp8')
jq_true ".gpus[0].dtype == \"fp8\" and .gpus[0].peak_flops_per_s == $fp8"

# --- text: a header and one row per GPU
ok --live
grep -q '^gpu  *name  *device  *bf16 TFLOP/s  *SM MHz  *power W  *reasons  *temp C  *util %' "$tmp/out" ||
    fail "text: header: $(head -1 "$tmp/out")"
grep -Eq '^0 +NVIDIA H100 80GB HBM3 +h100-sxm +989\.5 +1410 / 1980 +700 / 700 +sw_power_cap,hw_power_brake +83 +100$' "$tmp/out" ||
    fail "text: GPU 0 row: $(sed -n 3p "$tmp/out")"
grep -Eq '^1 +Fake Accelerator 9000 +\(not in table\) +- +1980 / 1980 +500 / 700 +- +- +97$' "$tmp/out" ||
    fail "text: GPU 1 row: $(sed -n 4p "$tmp/out")"

# --- --watch: one sample per period, the script's sequence in order
ok --live --json --watch 0.1 --count 3
[ "$(jq -s length "$tmp/out")" = 3 ] || fail "--watch --count 3: not three documents"
[ "$(jq -s 'map(.gpus[0].sm_clock_mhz) | join(",")' -r "$tmp/out")" = "1410,1500,1980" ] ||
    fail "--watch clocks: $(jq -s -c 'map(.gpus[0].sm_clock_mhz)' "$tmp/out")"
[ "$(jq -s -r 'map(.gpus[0].reasons | join("+")) | join(",")' "$tmp/out")" = "sw_power_cap+hw_power_brake,sw_power_cap," ] ||
    fail "--watch reasons: $(jq -s -c 'map(.gpus[0].reasons)' "$tmp/out")"
ok --live --watch 0.1 --count 2
[ "$(grep -c '^gpu ' "$tmp/out")" = 2 ] || fail "--watch text: two tables expected"

# --- errors
MFU_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1 bad 1 --live
grep -q 'NVML not found (/nonexistent/libnvidia-ml.so.1)' "$tmp/err" || fail "no NVML: $(cat "$tmp/err")"
MFU_NVML_LIBRARY=libm.so.6 bad 1 --live --json
grep -q 'lacks nvmlInit_v2' "$tmp/err" || fail "not NVML: $(cat "$tmp/err")"
printf 'init 9\n' >"$tmp/init.txt"
MFU_FAKE_NVML_SCRIPT=$tmp/init.txt bad 1 --live
grep -q 'nvmlInit_v2 failed: Driver Not Loaded (NVML error 9)' "$tmp/err" || fail "init: $(cat "$tmp/err")"
printf 'device NVIDIA H100 80GB HBM3\nfail nvmlDeviceGetPowerUsage 15\n' >"$tmp/lost.txt"
MFU_FAKE_NVML_SCRIPT=$tmp/lost.txt bad 1 --live
grep -q 'nvmlDeviceGetPowerUsage failed for GPU 0: GPU is lost' "$tmp/err" || fail "lost: $(cat "$tmp/err")"
bad 2 --watch 1
bad 2 --live --count 2
bad 2 --live --watch 0
bad 2 --live --watch abc
bad 2 --live h100-sxm
bad 2 --live --probe

# --- no GPU at all: an empty list, not an error
printf '# no device\n' >"$tmp/none.txt"
MFU_FAKE_NVML_SCRIPT=$tmp/none.txt ok --live --json
jq_true '.gpus == [] and .gpus_reported == 0'
MFU_FAKE_NVML_SCRIPT=$tmp/none.txt ok --live
grep -q '^no NVIDIA GPU' "$tmp/out" || fail "no GPU text: $(cat "$tmp/out")"
e2e_finish
