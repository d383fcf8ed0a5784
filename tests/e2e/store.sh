#!/usr/bin/env bash
# e2e: mfu ingest / runs / rm against a store in a temporary directory, and runs read back from
# the store by mfu serve showing the findings mfu report shows on their logs.
# Env: MFU_BIN (the CLI). Needs jq, curl and the sqlite3 CLI.
set -u
mfu=${MFU_BIN:?MFU_BIN must point at the mfu binary}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mfu-e2e-store.XXXXXX")
srv=
trap '[ -n "$srv" ] && kill "$srv" 2>/dev/null; rm -rf "$tmp"' EXIT
unset MFU_DB
fails=0
pass=0
ok()   { pass=$((pass + 1)); }
bad()  { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
# expect RC CMD...: run CMD, keep stdout/stderr in $tmp/out, $tmp/err, check the exit status
expect() {
  local want=$1; shift
  "$@" >"$tmp/out" 2>"$tmp/err"
  local got=$?
  if [ "$got" -eq "$want" ]; then ok; else bad "exit $got, expected $want: $* ($(head -c 300 "$tmp/err"))"; fi
}
has()  { if grep -qF -- "$2" "$tmp/$1"; then ok; else bad "$1 lacks '$2': $(head -c 300 "$tmp/$1")"; fi; }
eq()   { if [ "$1" = "$2" ]; then ok; else bad "$3: got '$1', expected '$2'"; fi; }

# A synthetic Megatron-LM log: iterations FIRST..LAST appended to FILE.
megatron() {
  awk -v a="$2" -v b="$3" 'BEGIN {
    if (a == 1) print "using world size: 8, data-parallel size: 8"
    for (i = a; i <= b; i++)
      printf " [2024-09-03 16:38:39] iteration %8d/ 100000 | consumed samples: %10d | elapsed time per iteration (ms): %.1f | throughput per GPU (TFLOP/s/GPU): %.1f | learning rate: 1.000000E-04 | global batch size:  1024 | lm loss: %.6E | loss scale: 1.0 | grad norm: 1.500 | number of skipped iterations:   0 | number of nan iterations:   0 |\n", i, i * 1024, 14000 + i % 50, 700 + i % 9, 10 / (1 + i / 1000)
  }' >>"$1"
}
db=$tmp/runs.db
log=$tmp/train.log
megatron "$log" 1 300
steps() { sqlite3 "$1" "SELECT count(*) FROM steps"; }

# --help of each command: exit 0, usage and examples
for c in ingest runs rm; do
  expect 0 "$mfu" "$c" --help
  has out "usage: mfu $c"
  has out "examples:"
done
expect 0 "$mfu" --help
has out "ingest"

# first ingest, then the same file again: nothing new
expect 0 "$mfu" ingest "$log" --db "$db" --tag arm=baseline --tag gpu=h100
has err "-> run 'train': 300 steps (300 written), megatron"
has err "[created]"
expect 0 "$mfu" ingest "$log" --db "$db"
has err "unchanged, 300 steps"
eq "$(steps "$db")" 300 "rows after a repeated ingest"

# the list, as a table and as JSON
expect 0 "$mfu" runs --db "$db"
has out "NAME"
has out "SOURCE"
has out "arm=baseline,gpu=h100"
has out "$log"
eq "$(awk 'NR == 2 {print $1, $2, $3, $4, $5}' "$tmp/out")" "train megatron 300 1 300" "table row"
expect 0 "$mfu" ingest "$tmp/train.log" --run untagged --db "$tmp/untagged.db"
expect 0 "$mfu" runs --db "$tmp/untagged.db"
eq "$(awk 'NR == 2 {print $6}' "$tmp/out")" "-" "no tags shown as -"
expect 0 "$mfu" runs --db "$db" --json
eq "$(jq -r '.runs[0] | [.name, .format, .steps, .first_step, .last_step, .complete, .tags.gpu] | join(" ")' "$tmp/out")" \
   "train megatron 300 1 300 true h100" "json row"
eq "$(jq -r '.runs[0].source_lines' "$tmp/out")" 301 "lines read"
eq "$(jq -r '.runs[0].source_bytes' "$tmp/out")" "$(wc -c <"$log" | tr -d ' ')" "bytes read"

# the log grows: resumed, only the new rows (and the overlap) written
megatron "$log" 301 350
expect 0 "$mfu" ingest "$log" --db "$db"
has err "350 steps (115 written)"
has err "[resumed]"
eq "$(steps "$db")" 350 "rows after growth"
eq "$(sqlite3 "$db" "SELECT min(step) || ' ' || max(step) || ' ' || count(DISTINCT step) FROM steps")" "1 350 350" "steps after growth"

# truncated and rewritten: restarted from scratch
: >"$log"
megatron "$log" 1 100
expect 0 "$mfu" ingest "$log" --db "$db"
has err "[restarted: the file is shorter"
eq "$(steps "$db")" 100 "rows after truncation"
expect 0 "$mfu" runs --db "$db" --json
eq "$(jq -r '.runs[0].tags.arm' "$tmp/out")" baseline "tags survive a restart"

# stdin needs --run; a name and tags
expect 0 sh -c "cat '$log' | '$mfu' ingest - --run piped --db '$db'"
has err "stdin -> run 'piped': 100 steps"
expect 2 sh -c "cat '$log' | '$mfu' ingest - --db '$db'"
has err "--run NAME"

# the store path: --db, then MFU_DB, then ./mfu-runs.db
expect 0 env MFU_DB="$tmp/env.db" "$mfu" ingest "$log" --run via-env
eq "$(sqlite3 "$tmp/env.db" "SELECT name FROM runs")" via-env "MFU_DB"
expect 0 env MFU_DB="$tmp/env.db" "$mfu" ingest "$log" --run via-flag --db "$tmp/flag.db"
eq "$(sqlite3 "$tmp/flag.db" "SELECT name FROM runs")" via-flag "--db over MFU_DB"
mkdir "$tmp/cwd"
expect 0 sh -c "cd '$tmp/cwd' && '$mfu' ingest '$log' && '$mfu' runs --json"
eq "$(jq -r '.db + " " + .runs[0].name' "$tmp/out")" "mfu-runs.db train" "default store"
[ -f "$tmp/cwd/mfu-runs.db" ] && ok || bad "no ./mfu-runs.db"

# two logs with the same file name cannot share a run silently
mkdir "$tmp/other"
megatron "$tmp/other/train.log" 1 10
expect 1 "$mfu" ingest "$tmp/other/train.log" --db "$db"
has err "was made from $log"
has err "--run NAME"
expect 0 "$mfu" ingest "$tmp/other/train.log" --db "$db" --run train-other
# several logs, one missing: the others are stored, the exit status says it failed
megatron "$tmp/b.log" 1 5
expect 1 "$mfu" ingest "$tmp/missing.log" "$tmp/b.log" --db "$db"
has err "missing.log: cannot open"
has err "-> run 'b': 5 steps"

# a file with no training log in it stores nothing
printf 'hello\nnothing to see here\n' >"$tmp/junk.log"
expect 1 "$mfu" ingest "$tmp/junk.log" --db "$db"
has err "no known training-log format"
eq "$(sqlite3 "$db" "SELECT count(*) FROM runs WHERE name = 'junk'")" 0 "no run for junk"

# rm
expect 0 "$mfu" rm piped train-other --db "$db"
has err "removed run 'piped'"
expect 0 "$mfu" runs --db "$db" --json
eq "$(jq -r '[.runs[].name] | join(",")' "$tmp/out")" "b,train" "runs after rm"
eq "$(sqlite3 "$db" "SELECT count(*) FROM steps WHERE run_id NOT IN (SELECT id FROM runs)")" 0 "orphan rows"
expect 1 "$mfu" rm nope --db "$db"
has err "no run called 'nope'"
expect 2 "$mfu" rm --db "$db"

# usage errors exit 2
expect 2 "$mfu" ingest --db "$db"
expect 2 "$mfu" ingest "$log" "$tmp/b.log" --run x --db "$db"
expect 2 "$mfu" ingest "$log" --tag novalue --db "$db"
expect 2 "$mfu" ingest "$log" --tag 'bad key=1' --db "$db"
expect 2 "$mfu" ingest "$log" --run -x --db "$db"
expect 2 "$mfu" ingest "$log" --format nope --db "$db"
has err "use one of: auto"
expect 2 "$mfu" ingest "$log" --wait -1 --db "$db"
expect 2 "$mfu" runs --bogus
expect 2 "$mfu" runs extra --db "$db"

# store problems exit 1 with a message that says what to do
expect 1 "$mfu" runs --db "$tmp/absent.db"
has err "no run store there"
[ ! -e "$tmp/absent.db" ] && ok || bad "runs created a store"
printf 'not a database at all, just some text\n%.0s' $(seq 100) >"$tmp/garbage.db"
expect 1 "$mfu" runs --db "$tmp/garbage.db"
has err "not an SQLite database"
expect 1 "$mfu" ingest "$log" --db "$tmp/garbage.db"
sqlite3 "$tmp/foreign.db" "CREATE TABLE t(x)"
expect 1 "$mfu" ingest "$log" --db "$tmp/no/such/dir/x.db"
has err "cannot open the store"
expect 1 "$mfu" runs --db "$tmp/foreign.db"
has err "not an mfu run store"
# a store locked by another writer: wait, then fail naming --wait
(echo "BEGIN IMMEDIATE; UPDATE runs SET name = name;"; sleep 2; echo "COMMIT;") | sqlite3 "$db" &
locker=$!
sleep 0.7
start=$(date +%s%N)
expect 1 "$mfu" ingest "$tmp/b.log" --run locked --db "$db" --wait 0.3
has err "locked"
has err "--wait"
expect 0 "$mfu" runs --db "$db" # readers are not blocked
elapsed_ms=$(( ($(date +%s%N) - start) / 1000000 ))
[ "$elapsed_ms" -lt 2500 ] && ok || bad "waited ${elapsed_ms} ms for a 0.3 s --wait"
wait "$locker"
expect 0 "$mfu" ingest "$tmp/b.log" --run locked --db "$db"
eq "$(sqlite3 "$db" "PRAGMA integrity_check")" ok "integrity"

# Runs read back from the store keep what their findings need (schema 3): Megatron-LM timers,
# clock and power, useful tokens, per-step recompute, per-rank observations. Logs with a known
# truth from tests/e2e/lib/genlog.py; `mfu serve --db` loads each stored run with
# mfu_store_get_run and analyses it.
gen() { /usr/bin/python3 "$(dirname "$0")/lib/genlog.py" "$@" || bad "genlog $*"; }
kinds() { jq -r '[.findings[].kind] | sort | join(",")' "$1"; }
fdb=$tmp/findings.db
F4=$("$mfu" flops --json --model gpt2 --seq 4096 | jq -r .flops_per_token.model)
H4=$("$mfu" flops --json --model gpt2 --seq 4096 --recompute full | jq -r .flops_per_token.hardware)
ctx=(--model gpt2 --device h100-sxm)
gen timers "$tmp/timers.log" --seed 19 --steps 200 --flops "$F4"
gen throttle "$tmp/throttle.jsonl" --seed 14 --steps 400 --flops "$F4"
gen padding "$tmp/padding.jsonl" --seed 15 --steps 200 --flops "$F4"
gen straggler "$tmp/straggler.log" --seed 18 --steps 200 --flops "$F4"
gen recompute "$tmp/recompute.jsonl" --seed 16 --steps 200 --flops "$F4" --hw "$H4" --mfu 0.5
for r in timers:log throttle:jsonl padding:jsonl straggler:log recompute:jsonl; do
  n=${r%%:*}
  extra=()
  [ "$n" = straggler ] && extra=(--seq 4096 --devices 8)
  expect 0 "$mfu" ingest "$tmp/$n.${r#*:}" --db "$fdb" "${ctx[@]}" "${extra[@]}"
  "$mfu" report "$tmp/$n.${r#*:}" "${ctx[@]}" "${extra[@]}" --json --no-series >"$tmp/$n.report" 2>/dev/null ||
    bad "mfu report $n failed"
done
eq "$(kinds "$tmp/timers.report")" data_loading "report: Megatron timers"
eq "$(kinds "$tmp/throttle.report")" throttling "report: clock"
eq "$(kinds "$tmp/padding.report")" padding "report: useful tokens"
# what the store holds: every merged rank line as an observation of its row, the codes, the
# telemetry (NULL where a row had none)
eq "$(sqlite3 "$fdb" "SELECT count(*) || ' ' || count(DISTINCT rank) || ' ' || max(row_no) FROM rank_obs o
     JOIN runs r ON r.id = o.run_id WHERE r.name = 'straggler'")" "$(jq -r .lines.merged "$tmp/straggler.report") 7 199" "rank observations"
eq "$(sqlite3 "$fdb" "SELECT count(*) FROM rank_obs o JOIN steps s ON s.run_id = o.run_id AND s.row_no = o.row_no
     WHERE s.step <> o.step OR o.rank = s.rank")" 0 "observations name their row"
eq "$(sqlite3 "$fdb" "SELECT group_concat(DISTINCT s.recompute) FROM steps s JOIN runs r ON r.id = s.run_id
     WHERE r.name = 'recompute'")" "2,0" "recompute codes"
eq "$(sqlite3 "$fdb" "SELECT count(data_loading_s) || ' ' || count(optimizer_s) FROM steps s JOIN runs r
     ON r.id = s.run_id WHERE r.name = 'timers'")" "200 200" "timer columns"
eq "$(sqlite3 "$fdb" "SELECT count(clock_mhz) || ' ' || count(power_w) || ' ' || count(useful_tokens)
     FROM steps")" "400 400 200" "telemetry columns"
if command -v curl >/dev/null; then
  "$mfu" serve --db "$fdb" --listen 127.0.0.1:0 >"$tmp/srv.out" 2>"$tmp/srv.err" &
  srv=$!
  for _ in $(seq 200); do grep -q 'http://' "$tmp/srv.out" 2>/dev/null && break; sleep 0.05; done
  url=$(grep -o 'http://[^ ]*' "$tmp/srv.out" | head -1)
  url=${url%/}
  [ -n "$url" ] && ok || bad "mfu serve --db did not start: $(cat "$tmp/srv.err")"
  for n in timers throttle padding; do
    curl -s --max-time 20 -o "$tmp/$n.served" "$url/api/runs/$n/findings"
    eq "$(kinds "$tmp/$n.served")" "$(kinds "$tmp/$n.report")" "findings of stored run '$n' as served"
  done
  kill "$srv"
  wait "$srv" 2>/dev/null
  srv=
else
  bad "curl is missing (bash scripts/deps.sh)"
fi

echo "store.sh: $pass passed, $fails failed"
[ "$fails" -eq 0 ]
