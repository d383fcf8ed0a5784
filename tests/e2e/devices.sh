#!/usr/bin/env bash
# End-to-end tests of `mfu devices`: the table, one device, JSON (parsed with jq), the name
# traps, names several entries answer to (their rows), unknown names (exit 1, one line with
# suggestions), bad usage (exit 2).
set -u
bin=${MFU_BIN:?MFU_BIN must point at the mfu binary}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# run ARGS...: stdout in $tmp/out, stderr in $tmp/err, exit status in $rc
run() { "$bin" "$@" >"$tmp/out" 2>"$tmp/err"; rc=$?; }
expect_rc() { [ "$rc" -eq "$1" ] || fail "$2: exit $rc, want $1 (stderr: $(head -c 300 "$tmp/err"))"; }
out_has() { grep -qF -- "$1" "$tmp/out" || fail "$2: stdout lacks '$1'"; }
err_has() { grep -qF -- "$1" "$tmp/err" || fail "$2: stderr lacks '$1'"; }
jq_true() { jq -e "$1" "$tmp/out" >/dev/null || fail "$2: jq '$1' is not true"; }

# --- the table
run devices
expect_rc 0 "table"
out_has "dense peak in TFLOP/s" "table"
head -2 "$tmp/out" | tail -1 | grep -qE '^id +name +bf16 +fp16 +fp8 +fp32 +mem GB +TB/s$' \
    || fail "table header: $(head -2 "$tmp/out" | tail -1)"
grep -qE '^h100-sxm +NVIDIA H100 SXM5 80GB +989\.5 +989\.5 +1979\.0 +67\.0 +80 +3\.35$' "$tmp/out" \
    || fail "table row h100-sxm: $(grep '^h100-sxm' "$tmp/out")"
grep -qE '^tpu-v5p .* 459\.0 ' "$tmp/out" || fail "table row tpu-v5p"
[ -s "$tmp/err" ] && fail "table wrote to stderr"
rows=$(($(wc -l <"$tmp/out") - 2))
# every row is aligned: the "mem GB" column ends at the same offset on every line
awk 'NR>1 { print length($0) }' "$tmp/out" | sort -u | wc -l | grep -qx 1 \
    || fail "table rows have different widths"

# --- JSON of the whole table
run devices --json
expect_rc 0 "json"
jq_true '.devices | length >= 40' "json count"
jq_true "(.devices | length) == $rows" "json rows = table rows ($rows)"
jq_true '[.devices[].id] | (unique | length) == length' "json ids unique"
jq_true 'all(.devices[]; (.source | length) > 20)' "json sources"
jq_true '.devices[] | select(.id == "h100-sxm") | .dense_flops_per_s.bf16 == 989500000000000' \
    "json h100 bf16"
jq_true '.devices[] | select(.id == "h100-sxm") | .sparse_flops_per_s.bf16 == 1979000000000000' \
    "json h100 sparse apart"
jq_true '.devices[] | select(.id == "v100-sxm2") | .dense_flops_per_s.bf16 == null' \
    "json null for no figure"
jq_true '.devices[] | select(.id == "a100-sxm4-80gb") | .memory_bytes == 80000000000' \
    "json memory bytes"
jq_true 'all(.devices[]; (.dense_flops_per_s | keys) == ["bf16","fp16","fp32","fp64","fp8","int8","tf32"])' \
    "json stable dtype keys"
# the entries added later: datasheet peaks, null where no source states one, no sparse figure
jq_true '.devices[] | select(.id == "t4") | .dense_flops_per_s.fp16 == 65000000000000 and
    .dense_flops_per_s.int8 == 130000000000000 and .dense_flops_per_s.bf16 == null and
    .sparse_flops_per_s.fp16 == null' "json t4"
jq_true '.devices[] | select(.id == "v100s-pcie") | .dense_flops_per_s.fp16 == 130000000000000 and
    .memory_bandwidth_bytes_per_s == 1134000000000' "json v100s-pcie"
jq_true '.devices[] | select(.id == "mi350x") | .dense_flops_per_s.bf16 > 2.29e15 and
    .dense_flops_per_s.bf16 < 2.31e15 and .dense_flops_per_s.fp64 == null and
    .sparse_flops_per_s.bf16 == null' "json mi350x"

run devices --json --dtype fp8
expect_rc 0 "json dtype"
jq_true '.dtype == "fp8"' "json dtype key"
jq_true '.devices[] | select(.id == "h100-sxm") | .peak_flops_per_s == 1979000000000000' \
    "json dtype peak"
jq_true '.devices[] | select(.id == "a100-sxm4-80gb") | .peak_flops_per_s == null' \
    "json dtype peak null"

run devices --dtype bfloat16
expect_rc 0 "table dtype"
head -2 "$tmp/out" | tail -1 | grep -qE '^id +name +bf16 +mem GB +TB/s$' || fail "table --dtype header"

# --- one device
run devices h100-sxm
expect_rc 0 "one device"
head -1 "$tmp/out" | grep -q '^h100-sxm  NVIDIA H100 SXM5 80GB (NVIDIA)$' || fail "one device title"
grep -qE '^  bf16 +989\.5 +1979$' "$tmp/out" || fail "one device bf16 row"
grep -qE '^  fp64 +67 +-$' "$tmp/out" || fail "one device fp64 row"
out_has "boost 1980 MHz; peaks quoted at 1830 MHz" "one device clock"
out_has "'NVIDIA H100 80GB HBM3'" "one device reported names"
out_has "NVIDIA H100 datasheet" "one device source"
out_has "989 (torchtitan" "one device notes"

# words without quotes are joined
run devices NVIDIA H100 80GB HBM3
expect_rc 0 "unquoted words"
head -1 "$tmp/out" | grep -q '^h100-sxm ' || fail "unquoted words: $(head -1 "$tmp/out")"

run devices "AMD Instinct MI300X" --json
expect_rc 0 "mi300x json"
jq_true '.device.id == "mi300x" and .match == "exact"' "mi300x json"
jq_true '.device.dense_flops_per_s.bf16 == 1307400000000000' "mi300x bf16"

run devices a100 --json
expect_rc 0 "a100 equal peaks"
jq_true '.match == "equal-peaks" and (.candidates | length) == 4 and .device.id == "a100-sxm4-80gb"' \
    "a100 equal peaks"
run devices a100
out_has "matches 4 entries with equal peaks" "a100 note"

# --- the traps, through the CLI
for pair in "GB200:gb200" "B200:b200" "H200:h200-sxm" "H20:h20" "H100 NVL:h100-nvl" \
    "L4:l4" "L40:l40" "L40S:l40s" "v5litepod-8:tpu-v5e" "TPU v5 lite:tpu-v5e" \
    "Tesla T4:t4" "T4:t4" "TPU v4:tpu-v4" "Tesla V100S-PCIE-32GB:v100s-pcie" "V100S:v100s-pcie" \
    "Tesla V100-PCIE-32GB:v100-pcie" "AMD Instinct MI350X:mi350x" "MI355X:mi355x" \
    "GB300:gb300" "B300:b300" "RTX 6000 Ada:rtx-6000-ada"; do
    name=${pair%%:*} want=${pair#*:}
    run devices "$name" --json
    got=$(jq -r .device.id "$tmp/out" 2>/dev/null)
    [ "$rc" -eq 0 ] && [ "$got" = "$want" ] || fail "'$name' -> '$got' (exit $rc), want $want"
done

# --- unknown and ambiguous: exit 1, one line on stderr, nothing on stdout
run devices mi300
expect_rc 1 "unknown"
[ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "unknown: stderr is not one line"
[ -s "$tmp/out" ] && fail "unknown: wrote to stdout"
err_has "unknown device 'mi300' (closest: mi300x" "unknown"
err_has "--peak-tflops" "unknown"

# --- a name several entries answer to with different peaks (the example of 'mfu --help'): the
# answer is their rows, exit 0; JSON lists them in full
run devices h100
expect_rc 0 "several"
out_has "'h100' matches 3 devices whose peaks differ; name one for its full entry, e.g. 'mfu devices h100-sxm'" "several"
grep -qE '^h100-sxm +NVIDIA H100 SXM5 80GB +989\.5 ' "$tmp/out" || fail "several: no h100-sxm row"
grep -qE '^h100-pcie +NVIDIA H100 PCIe 80GB +756\.5 ' "$tmp/out" || fail "several: no h100-pcie row"
grep -q '^h100-nvl ' "$tmp/out" || fail "several: no h100-nvl row"
[ "$(grep -c '^h100' "$tmp/out")" -eq 3 ] || fail "several: not exactly 3 rows"
[ -s "$tmp/err" ] && fail "several: wrote to stderr"
run devices h100 --json
expect_rc 0 "several json"
jq_true '.match == "several" and .count == 3' "several json"
jq_true '[.devices[].id] == ["h100-sxm", "h100-pcie", "h100-nvl"]' "several json ids"
jq_true '.devices[0].dense_flops_per_s.bf16 == 989500000000000' "several json peaks"
run devices h100 --dtype fp8
expect_rc 0 "several fp8"
sed -n 4p "$tmp/out" | grep -qE "^id +name +fp8 +mem GB +TB/s$" || fail "several fp8: header"

run devices v100 --json
expect_rc 0 "v100 several"
jq_true '[.devices[].id] == ["v100-sxm2", "v100-pcie"]' "v100 several, not v100s"

# not in the table: what the drivers report for an RTX PRO 6000 is unknown, never the 6000 Ada
run devices NVIDIA RTX PRO 6000 Blackwell Server Edition
expect_rc 1 "rtx pro 6000"
err_has "unknown device 'NVIDIA RTX PRO 6000 Blackwell Server Edition'" "rtx pro 6000"
[ -s "$tmp/out" ] && fail "rtx pro 6000: wrote to stdout"
run devices T40
expect_rc 1 "t40"
err_has "unknown device 'T40'" "t40"

run devices "$(printf 'x%.0s' $(seq 300))"
expect_rc 1 "long name"
err_has "longer than 256 bytes" "long name"

run devices NVIDIA
expect_rc 1 "no model word"
err_has "names no model" "no model word"

# --- bad usage: exit 2
run devices --bogus
expect_rc 2 "unknown option"
err_has "unknown option '--bogus'" "unknown option"
run devices --dtype fp4
expect_rc 2 "bad dtype"
err_has "unknown dtype 'fp4'" "bad dtype"
run devices --dtype
expect_rc 2 "missing dtype value"
run devices --json=yes
expect_rc 2 "flag with value"

# --- help
run devices --help
expect_rc 0 "help"
out_has "examples:" "help"
out_has "mfu devices NVIDIA H100 80GB HBM3" "help"
run --help
out_has "devices" "mfu --help lists devices"

if [ "$fails" -ne 0 ]; then
    echo "$fails failure(s)"
    exit 1
fi
echo "devices.sh: all passed"
