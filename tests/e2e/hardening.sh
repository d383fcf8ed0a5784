#!/usr/bin/env bash
# e2e: the messages and limits of issue 13 (docs/testing.md, "Hardening"): a path named once,
# a directory refused as one, a write past `ulimit -f` said (not a silent SIGXFSZ), two
# ingests of one new run at once, mfu report naming its skipped lines (--verbose: all),
# implausible values skipped with their reasons, text that is not UTF-8 kept out of the store
# and never dropped from --json, and mfu serve --help saying what the token guards.
# Env: MFU_BIN, MFU_TEST_DATA. Needs jq and the sqlite3 CLI.
set -u
E2E_CMD=report
source "$(dirname "$0")/lib/e2e.bash"
unset MFU_DB
cd "$tmp" || exit 1

# ---- a path named once; a directory is a directory ------------------------------------------
for c in report convert ingest; do
    db=
    [ $c = ingest ] && db="--db $tmp/x.db"
    "$bin" $c $db missing.log >/dev/null 2>err
    grep -q 'missing.log: missing.log' err && fail "$c: the path is named twice: $(cat err)"
    grep -q "^mfu $c: missing.log: cannot open (No such file or directory)" err ||
        fail "$c: no 'cannot open' message: $(cat err)"
    mkdir -p adir
    "$bin" $c $db adir >/dev/null 2>err && fail "$c accepted a directory"
    grep -q "adir: is a directory, not a log" err || fail "$c: a directory: $(cat err)"
    grep -q 'read error' err && fail "$c: a directory reads as a read error: $(cat err)"
done

# ---- a write past the file-size limit fails with a message, not SIGXFSZ -------------------
log=$data/logs/megatron-lm/fixstars-mdk-gpt3-7b-fp8-2node.log
(ulimit -f 1; "$bin" ingest --db "$tmp/small.db" "$log") >/dev/null 2>err
rc=$?
[ "$rc" = 1 ] || fail "ingest past ulimit -f: exit $rc (153 is SIGXFSZ), want 1"
grep -q "file-size limit" err || fail "ingest past ulimit -f: $(cat err)"
(ulimit -f 1; "$bin" convert "$log" -o "$tmp/small.jsonl") >/dev/null 2>err
rc=$?
[ "$rc" = 1 ] || fail "convert past ulimit -f: exit $rc, want 1"
grep -q "^mfu convert: .*failed" err || fail "convert past ulimit -f: no message: $(cat err)"

# ---- two ingests of one new run at once: neither is told to pick another name -------------
awk 'BEGIN { for (i = 0; i < 60000; i++)
    printf "iter %d: loss %.4f, time %.2fms, mfu %.2f%%\n", i, 4 - i / 100000, 1099 + i % 7, 15.3 }' >big.log
for t in 1 2 3; do
    rm -f race.db race.db-wal race.db-shm
    "$bin" ingest --db race.db big.log >/dev/null 2>a.err &
    pa=$!
    "$bin" ingest --db race.db big.log >/dev/null 2>b.err &
    pb=$!
    wait $pa; ra=$?
    wait $pb; rb=$?
    grep -h 'pick another' a.err b.err && fail "race $t: the loser was told to pick another name"
    [ $ra = 0 ] || [ $rb = 0 ] || fail "race $t: both failed: $(cat a.err b.err)"
    for r in a b; do
        if [ -s $r.err ] && ! grep -q -e '-> run' -e 'another mfu is writing it' \
               -e 'created by another ingest' $r.err; then
            fail "race $t: $r says: $(cat $r.err)"
        fi
    done
    n=$(sqlite3 race.db "SELECT nrows FROM runs WHERE name='big'")
    [ "$n" = 60000 ] || fail "race $t: the run holds $n rows, want 60000"
done

# ---- implausible values are skipped, and mfu report names the skipped lines ----------------
cat >bad.log <<'LOG'
iter 0: loss 4.2100, time 1100.00ms, mfu -100.00%
iter 1: loss 4.1000, time 561e50ms, mfu 15.34%
iter 2: loss 4.0000, time 1099.30ms, mfu 15.30%
iter -1: loss 3.9000, time 1099.10ms, mfu 15.30%
iter 3: loss 3.9000, time -100.00ms, mfu 15.30%
iter 4: loss 3.8000, time 1098.90ms, mfu 15.30%
iter 99999999999999999999: loss 3.8000, time 1098.90ms, mfu 15.30%
iter 5: loss 3.7000, time 1e309ms, mfu 15.30%
iter 6: loss 3.7000, time 1099.00ms, mfu 15.30%
LOG
ok bad.log
grep -q '^skipped    line 2: step time 5.61e+49 s is longer than a step can take' "$tmp/out" ||
    fail "report does not name line 2: $(cat "$tmp/out")"
grep -q '^           line 4: step number -1 is negative' "$tmp/out" || fail "no line 4 in the report"
grep -q '^           line 5: step time -0.1 s is negative' "$tmp/out" || fail "no line 5 in the report"
grep -q 'more skipped line.*--verbose names them all' "$tmp/out" || fail "no pointer to --verbose"
grep -q -- '--1)' "$tmp/out" && fail "a segment runs backwards: $(grep -- '--1)' "$tmp/out")"
ok --verbose bad.log
grep -q '^           line 7: nanoGPT iter line whose iteration number does not fit 64 bits' \
    "$tmp/out" || fail "--verbose does not name line 7: $(cat "$tmp/out")"
grep -q '^           line 8: nanoGPT iter line whose time is not a number that fits a double' \
    "$tmp/out" || fail "--verbose does not name line 8: $(cat "$tmp/out")"
ok --json bad.log
jq_is '.lines.skipped' 5
jq_is '[.lines.skipped_lines[].line] | map(tostring) | join(",")' "2,4,5,7,8"
printf 'step,step_time_s,tokens\n1,0.5,1000\n2,1e309,1000\n99999999999999999999,0.5,1000\n3,0.5,1000\n4,0.5,1000\n' >bad.csv
ok --json bad.csv
jq_is '.lines.skipped' 2
jq_is '.lines.skipped_lines[0].reason' "CSV row whose step_time_s '1e309' (column 2) is too large a number"
jq_is '.lines.skipped_lines[1].reason | test("not a whole number")' true

# ---- the store holds UTF-8 only, and --json never drops a field ---------------------------
rm -f u.db*
"$bin" ingest --db u.db --run "$(printf 'bad\377')" bad.log >/dev/null 2>err &&
    fail "a run name that is not UTF-8 was stored"
grep -q "run name is not valid UTF-8 (byte 4, 0xff)" err || fail "bad run name: $(cat err)"
"$bin" ingest --db u.db --tag "team=$(printf 'x\303(')" bad.log >/dev/null 2>err &&
    fail "a tag value that is not UTF-8 was stored"
grep -q "tag value is not valid UTF-8" err || fail "bad tag: $(cat err)"
"$bin" ingest --db u.db --tag team=ok bad.log >/dev/null 2>&1 || fail "ingest into u.db failed"
# a store written by an older mfu (or by hand) may still hold such bytes: --json repairs them
sqlite3 u.db "UPDATE runs SET name = CAST(X'6361666520E9' AS TEXT)"
"$bin" runs --db u.db --json >"$tmp/out" 2>err || fail "runs --json: $(cat err)"
jq_is '.runs[0].name' "cafe $(printf '\357\277\275')"
jq_is '.runs[0].tags.team' ok

# ---- mfu serve --help says what the token guards ------------------------------------------
"$bin" serve --help >"$tmp/out" 2>&1
grep -q "The token guards POST only: every GET" "$tmp/out" || fail "serve --help says nothing of GETs"

e2e_finish
