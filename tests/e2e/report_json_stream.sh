#!/usr/bin/env bash
# e2e: `mfu report --json` writes each run's per-step series a step at a time
# (report_out_json_write) instead of building it as one tree; the document must still be what
# the tree gave: valid JSON, its part before "series" byte for byte the --no-series document,
# one series element per step with the keys docs/cli.md lists, and for several logs an array
# of the single-log documents (a log that fails leaves no element and no broken syntax).
# (bench/report_same.sh compares the bytes with another build on every fixture.)
set -u
bin=${MFU_BIN:?MFU_BIN is the built mfu}
data=${MFU_TEST_DATA:?MFU_TEST_DATA is tests/data}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
logs=("$data"/logs/megatron-lm/*.log)
[ ${#logs[@]} -ge 2 ] || { echo "FAIL: no megatron fixtures"; exit 1; }
a=${logs[0]} b=${logs[1]}
for log in "$a" "$b"; do
    n=$(basename "$log")
    "$bin" report "$log" --json >"$tmp/full" 2>"$tmp/err" || fail "$n: --json: $(cat "$tmp/err")"
    "$bin" report "$log" --json --no-series >"$tmp/nos" || fail "$n: --no-series failed"
    jq -e . "$tmp/full" >/dev/null || fail "$n: --json is not valid JSON"
    # everything before the series: the --no-series document less its closing "\n}\n"
    head -c $(($(wc -c <"$tmp/nos") - 3)) "$tmp/nos" >"$tmp/head"
    head -c "$(wc -c <"$tmp/head")" "$tmp/full" | cmp -s - "$tmp/head" ||
        fail "$n: the document before \"series\" differs from --no-series"
    [ "$(jq 'del(.series)' "$tmp/full")" = "$(jq . "$tmp/nos")" ] ||
        fail "$n: --json without its series is not the --no-series document"
    steps=$(jq '.series | length' "$tmp/full")
    [ "$steps" = "$(jq .steps "$tmp/nos")" ] || fail "$n: $steps series elements, want $(jq .steps "$tmp/nos")"
    [ "$steps" -gt 0 ] || fail "$n: an empty series"
    keys=$(jq -r '.series[0] | keys_unsorted | join(",")' "$tmp/full")
    case $keys in step,state,step_time_s,tokens,tokens_per_second,*,loss) ;; *) fail "$n: series keys $keys" ;; esac
    # jansson's layout at depth 0: each step an object at 4 spaces, its keys at 6
    sed -n '/^  "series": \[$/,$p' "$tmp/full" >"$tmp/ser"
    [ "$(grep -c '^    {$' "$tmp/ser")" = "$steps" ] || fail "$n: series objects not at 4 spaces"
    [ "$(grep -c '^      "step": [0-9]*,$' "$tmp/ser")" = "$steps" ] || fail "$n: series keys not at 6 spaces"
    tail -c 2 "$tmp/full" | od -c | grep -q '}  *\\n' || fail "$n: the document does not end in }\\n"
done
# several logs: an array of the single documents, in order; a failing log in between is left out
"$bin" report "$a" /nonexistent.log "$b" --json >"$tmp/arr" 2>"$tmp/err"
rc=$?
[ $rc = 1 ] || fail "two logs and a missing one: exit $rc, want 1"
grep -q nonexistent "$tmp/err" || fail "the missing log is not named: $(cat "$tmp/err")"
jq -e . "$tmp/arr" >/dev/null || fail "the array is not valid JSON"
"$bin" report "$a" --json >"$tmp/one_a"
"$bin" report "$b" --json >"$tmp/one_b"
[ "$(jq -c '.[0]' "$tmp/arr")" = "$(jq -c . "$tmp/one_a")" ] || fail "array element 0 is not the first log's document"
[ "$(jq -c '.[1]' "$tmp/arr")" = "$(jq -c . "$tmp/one_b")" ] || fail "array element 1 is not the third log's document"
# byte for byte what printing the array of the two objects gives: each line 2 spaces deeper
{
    printf '[\n'
    sed -e 's/^/  /' "$tmp/one_a" | head -c -1
    printf ',\n'
    sed -e 's/^/  /' "$tmp/one_b" | head -c -1
    printf '\n]\n'
} >"$tmp/want_arr"
cmp -s "$tmp/arr" "$tmp/want_arr" || fail "the array is not the two documents indented: $(diff "$tmp/arr" "$tmp/want_arr" | head -5)"
[ "$(jq length "$tmp/arr")" = 2 ] || fail "the array has $(jq length "$tmp/arr") elements, want 2"
# only missing logs: nothing on stdout, as before
"$bin" report /nonexistent.log /nonexistent2.log --json >"$tmp/none" 2>/dev/null
[ -s "$tmp/none" ] && fail "no run reported, yet stdout has: $(head -c 80 "$tmp/none")"
[ $fails = 0 ] && echo "report_json_stream: ok"
exit $((fails > 0))
