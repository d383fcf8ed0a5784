#!/usr/bin/env bash
# e2e: `mfu report --csv FILE --tensorboard DIR`. The CSV has one header and a row per step of
# every run (logs and a stored run), its figures equal to the --json series; the TensorBoard
# files (one directory per run) are read back by tests/e2e/lib/tfevents.py (framing, masked
# CRC-32C, protobuf) and hold exactly the CSV's scalars as float32. --csv - replaces the text
# on stdout; the errors (unwritable paths, --csv - with --json) are one line.
E2E_CMD=report
source "$(dirname "$0")/lib/e2e.bash"
command -v jq >/dev/null || { echo "report_export.sh: jq is missing (bash scripts/deps.sh)"; exit 1; }
lib=$(dirname "$0")/lib
llmc=$data/logs/llm.c/llmc-discussion677-gpt2-1558m-8xh100.log
tt=$data/logs/torchtitan/torchtitan-pr1287-llama3-8b-h100-gc-profiler.log
db=$tmp/runs.db
"$bin" ingest "$llmc" --run stored --db "$db" --model gpt2-xl --device h100-sxm 2>/dev/null ||
    fail "ingest"

ok "$llmc" "$tt" --model gpt2-xl --device h100-sxm --run stored --db "$db" \
    --csv "$tmp/all.csv" --tensorboard "$tmp/tb"
[ "$(grep -c '^run,step,state,' "$tmp/all.csv")" = 1 ] || fail "the CSV has not one header"
rows_llmc=$(grep -c "^$llmc," "$tmp/all.csv")
rows_stored=$(grep -c "^stored," "$tmp/all.csv")
[ "$rows_llmc" = 10 ] && [ "$rows_stored" = 10 ] || fail "rows: llmc $rows_llmc, stored $rows_stored"
grep -q "^$tt," "$tmp/all.csv" || fail "no torchtitan rows"
# the figures are the --json series, value for value
"$bin" report "$llmc" --model gpt2-xl --device h100-sxm --json >"$tmp/r.json" 2>/dev/null
want=$(jq -r '[.series[] | .mfu] | map(tostring) | join(" ")' "$tmp/r.json")
got=$(awk -F, -v f="$llmc" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "mfu") c = i }
      $1 == f { printf "%s%s", (n++ ? " " : ""), $c }' "$tmp/all.csv")
/usr/bin/python3 - "$want" "$got" <<'PY' || fail "CSV mfu column differs from --json: $got vs $want"
import sys
w = [float(x) for x in sys.argv[1].split()]
g = [float(x) for x in sys.argv[2].split()]
assert len(w) == len(g) == 10 and all(abs(a - b) <= 1e-9 * abs(a) for a, b in zip(w, g)), (w, g)
PY
# TensorBoard: one directory per run, each file read back and equal to the CSV
n=$(find "$tmp/tb" -name 'events.out.tfevents.*' | wc -l)
[ "$n" = 3 ] || fail "$n event files, want 3"
for pair in "01-$(basename "$llmc"):$llmc" "02-$(basename "$tt"):$tt" "03-stored:stored"; do
    d=${pair%%:*}
    run=${pair#*:}
    f=$(find "$tmp/tb/$d" -name 'events.out.tfevents.*' | head -1)
    [ -n "$f" ] || { fail "no event file in $d"; continue; }
    out=$(/usr/bin/python3 "$lib/tfevents.py" "$f" "$tmp/all.csv" "$run" 2>&1) ||
        fail "$d: $out"
    echo "$d: $out"
done
# --csv - is stdout, instead of the text
ok "$llmc" --model gpt2-xl --device h100-sxm --csv -
head -1 "$tmp/out" | grep -q '^run,step,state,step_time_s,' || fail "--csv -: $(head -1 "$tmp/out")"
grep -q '^== ' "$tmp/out" && fail "--csv - also printed the text report"
[ "$(wc -l <"$tmp/out")" = 11 ] || fail "--csv -: $(wc -l <"$tmp/out") lines"
# a path with a comma and a quote is one quoted field (RFC 4180)
cp "$llmc" "$tmp/a,\"b.log"
ok "$tmp/a,\"b.log" --model gpt2-xl --device h100-sxm --csv "$tmp/q.csv"
/usr/bin/python3 - "$tmp/q.csv" "$tmp/a,\"b.log" <<'PY' || fail "quoted run field"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 10 and all(r["run"] == sys.argv[2] for r in rows), rows[0]
assert rows[0]["reported_flops_per_second_per_device"] == "", rows[0]  # absent: empty
PY
# a loss logged as NaN is `nan`, not the empty field of a value never logged; Python's csv and
# mfu's own CSV reader read it back as NaN (the loss_nan flag), the empty field as absent; the
# TensorBoard file has it as NaN
/usr/bin/python3 - "$tmp/nan.jsonl" <<'PY'
import json, sys
with open(sys.argv[1], "w") as f:
    for s in range(1, 9):
        row = {"step": s, "step_time_s": 0.5, "tokens": 4096, "loss": 3.0 - 0.1 * s}
        if s == 4:
            row["loss"] = float("nan")
        if s == 6:
            del row["loss"]
        f.write(json.dumps(row) + "\n")
PY
ok "$tmp/nan.jsonl" --model gpt2 --seq 1024 --peak-tflops 10 --devices 1 --csv "$tmp/nan.csv" \
    --tensorboard "$tmp/tbnan"
/usr/bin/python3 - "$tmp/nan.csv" <<'PY' || fail "NaN loss in the CSV"
import csv, math, sys
rows = {int(r["step"]): r for r in csv.DictReader(open(sys.argv[1]))}
assert rows[4]["loss"] == "nan" and math.isnan(float(rows[4]["loss"])), rows[4]
assert rows[6]["loss"] == "", rows[6]  # not logged: empty
assert rows[3]["loss"] != "" and float(rows[3]["loss"]) == 2.7, rows[3]
assert rows[4]["reported_mfu"] == "", rows[4]  # never printed: empty, not nan
PY
f=$(find "$tmp/tbnan" -name 'events.out.tfevents.*' | head -1)
out=$(/usr/bin/python3 "$lib/tfevents.py" "$f" "$tmp/nan.csv" "$tmp/nan.jsonl" 2>&1) ||
    fail "NaN loss in the event file: $out"
"$bin" convert "$tmp/nan.csv" --format csv >"$tmp/nan.canon" 2>"$tmp/err" || fail "$(cat "$tmp/err")"
grep -q '"step":4,.*"loss_nan":true' "$tmp/nan.canon" || fail "the CSV reader: $(grep '"step":4,' "$tmp/nan.canon")"
grep '"step":6,' "$tmp/nan.canon" | grep -q 'loss' && fail "an empty loss read as: $(grep '"step":6,' "$tmp/nan.canon")"
grep -q '"step":3,.*"loss":2.7' "$tmp/nan.canon" || fail "the CSV reader: $(grep '"step":3,' "$tmp/nan.canon")"
# errors
bad 2 "$llmc" --csv - --json
grep -q "both write to stdout" "$tmp/err" || fail "$(cat "$tmp/err")"
bad 1 "$llmc" --csv "$tmp/no/such/dir/x.csv"
grep -q "cannot write it" "$tmp/err" || fail "$(cat "$tmp/err")"
touch "$tmp/file"
run "$llmc" --model gpt2-xl --device h100-sxm --tensorboard "$tmp/file/tb"
[ "$rc" = 1 ] || fail "--tensorboard under a file: exit $rc"
grep -q "cannot create the directory" "$tmp/err" || fail "$(cat "$tmp/err")"
e2e_finish
