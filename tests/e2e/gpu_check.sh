#!/usr/bin/env bash
# e2e: scripts/gpu-check.sh --dry-run, the prepared GPU check run on the CPU against the fake
# NVML (MFU_FAKE_NVML) with the project venv's PyTorch ($MFU_PYENV, else build/pyenv): every
# part runs and writes its file, `mfu devices --live --json` shows the fake's H100, the loop's
# per-step lines carry MFU, the energy counter's 250 J a step and GPM's 60 %, and `mfu report`
# of the loop's file agrees with the monitor (MFU, energy, the tensor check). This checks the
# script, never a GPU. Env: MFU_BIN, MFU_SOURCE_DIR, MFU_FAKE_NVML.
E2E_CMD=report
source "$(dirname "$0")/lib/e2e.bash"
src=${MFU_SOURCE_DIR:?MFU_SOURCE_DIR is the source tree}
py=${MFU_PYENV:-$src/build/pyenv}/bin/python
[ -x "$py" ] || { echo "gpu_check.sh: $py is missing (bash scripts/pyenv.sh)"; exit 1; }
o=$tmp/check
MFU_PYTHON=$py MFU_BIN=$bin HOME=$tmp bash "$src/scripts/gpu-check.sh" --dry-run --out "$o" \
    >"$tmp/log" 2>&1
rc=$?
[ "$rc" = 0 ] || fail "gpu-check.sh --dry-run: exit $rc: $(tail -20 "$tmp/log")"
for f in machine.txt devices.json loop.txt report.txt report.json run.mfu.jsonl config.json status.txt; do
    [ -s "$o/$f" ] || fail "$f was not written"
done
[ "$(awk '$2 != 0' "$o/status.txt")" = "" ] || fail "a part failed: $(cat "$o/status.txt")"
grep -q '^dry_run: 1$' "$o/machine.txt" || fail "machine.txt: $(cat "$o/machine.txt")"
jq -e '.gpus[0].name == "NVIDIA H100 80GB HBM3" and .gpus[0].device == "h100-sxm"' "$o/devices.json" >/dev/null ||
    fail "devices.json: $(head -c 400 "$o/devices.json")"
[ "$(grep -c '^step ' "$o/loop.txt")" = 8 ] || fail "loop.txt has not 8 steps: $(cat "$o/loop.txt")"
[ "$(grep -c 'energy 250.0 J .* tensor 60.0 %$' "$o/loop.txt")" = 7 ] ||
    fail "the fake's energy and tensor activity are not in steps 2-8: $(cat "$o/loop.txt")"
# every row of the file carries what NVML gave
[ "$(jq -s '[.[1:][] | select(.energy_j == 250 and .tensor_active == 0.6)] | length' "$o/run.mfu.jsonl")" = 7 ] ||
    fail "run.mfu.jsonl: $(head -3 "$o/run.mfu.jsonl")"
# the report of the file says what the monitor said
cp "$o/report.json" "$tmp/out"
mon=$(sed -n 's/^energy: //p' "$o/loop.txt")
echo "$mon" | jq -e . >/dev/null || fail "the loop printed no energy object: $(tail -3 "$o/loop.txt")"
for k in steps power_steps tensor_active tensor_check; do
    jq_is ".energy.$k" "$(echo "$mon" | jq -r ".$k")"
done
# the CLI's JSON has 10 significant digits
for k in joules joules_per_pflop tokens_per_kwh; do
    near ".energy.$k" "$(echo "$mon" | jq -r ".$k")" "$(echo "$mon" | jq -r ".$k * 1e-9")"
done
near '.summary.mfu.median' "$(sed -n 's/^summary: //p' "$o/loop.txt" | jq -r .mfu.median)" "$(sed -n 's/^summary: //p' "$o/loop.txt" | jq -r '.mfu.median * 1e-9')"
jq_true '.summary.mfu.median > 0 and .summary.mfu.median < 1'
grep -q '^energy     .* per useful PFLOP' "$o/report.txt" || fail "report.txt has no energy line"
grep -q '^tensor     MFU .* (NVML GPM)' "$o/report.txt" || fail "report.txt has no tensor line"
grep -q "gpu-check: wrote $o (0 part(s) failed)" "$tmp/log" || fail "last line: $(tail -1 "$tmp/log")"
# bad usage
bash "$src/scripts/gpu-check.sh" --steps x >/dev/null 2>"$tmp/err"
[ "$?" = 2 ] || fail "--steps x is not exit 2"
e2e_finish
