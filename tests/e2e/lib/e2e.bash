# tests/e2e/lib/e2e.bash - helpers shared by the end-to-end scripts (sourced, not a test).
#
#   E2E_CMD=flops; source "$(dirname "$0")/lib/e2e.bash"
#   run ARGS...          mfu $E2E_CMD ARGS: stdout in $tmp/out, stderr in $tmp/err, status in $rc
#   ok ARGS...           run, and fail unless the status is 0
#   bad WANT ARGS...     run, and fail unless: status WANT, one line on stderr starting
#                        "mfu $E2E_CMD: ", nothing on stdout
#   jq_is FILTER WANT    jq -r FILTER on the last stdout prints WANT
#   jq_true FILTER       jq -r FILTER on the last stdout prints true
#   near FILTER WANT TOL |jq FILTER - WANT| <= TOL
#   e2e_finish           exit 1 with a count when anything failed
#   pids+=("$!")         a background process (a server) to stop at exit: TERM, then KILL
#   wait_until MS CMD... run CMD every 50 ms until it succeeds; false after MS milliseconds
#   has FILE PATTERN     grep -q PATTERN FILE (false when FILE is absent)
set -u
bin=${MFU_BIN:?MFU_BIN is the built mfu}
data=${MFU_TEST_DATA:?MFU_TEST_DATA is tests/data}
tmp=$(mktemp -d)
pids=()
e2e_cleanup() {
    if [ "${#pids[@]}" -gt 0 ]; then
        for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null; done
        sleep 0.2
        for p in "${pids[@]}"; do
            kill -KILL "$p" 2>/dev/null
            wait "$p" 2>/dev/null
        done
    fi
    rm -rf "$tmp"
}
trap e2e_cleanup EXIT
ms() { date +%s%3N; }
wait_until() {
    local limit=$(($(ms) + $1))
    shift
    until "$@"; do
        [ "$(ms)" -lt "$limit" ] || return 1
        sleep 0.05
    done
}
has() { grep -q -- "$2" "$1" 2>/dev/null; }
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
run() { "$bin" "$E2E_CMD" "$@" >"$tmp/out" 2>"$tmp/err"; rc=$?; }
ok() {
    run "$@"
    [ "$rc" = 0 ] || fail "$E2E_CMD $*: exit $rc: $(cat "$tmp/err")"
}
bad() {
    local want=$1
    shift
    run "$@"
    [ "$rc" = "$want" ] || fail "$E2E_CMD $*: exit $rc, want $want ($(cat "$tmp/err"))"
    [ "$(wc -l <"$tmp/err")" = 1 ] || fail "$E2E_CMD $*: stderr is not one line: $(cat "$tmp/err")"
    grep -q "^mfu $E2E_CMD: " "$tmp/err" || fail "$E2E_CMD $*: stderr lacks the prefix"
    [ -s "$tmp/out" ] && fail "$E2E_CMD $*: printed to stdout on failure"
    return 0
}
jq_is() {
    local got
    got=$(jq -r "$1" "$tmp/out" 2>&1) || { fail "jq '$1' failed: $got"; return; }
    [ "$got" = "$2" ] || fail "jq '$1': got '$got', want '$2'"
}
jq_true() {
    local got
    got=$(jq -r "$1" "$tmp/out" 2>&1)
    [ "$got" = "true" ] || fail "jq '$1' is not true (got '$got')"
}
near() {
    local got
    got=$(jq -r "$1" "$tmp/out" 2>&1) || { fail "jq '$1': $got"; return; }
    awk -v g="$got" -v w="$2" -v t="$3" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(d <= t) }' ||
        fail "jq '$1' = $got, want $2 +- $3"
}
e2e_finish() {
    if [ "$fails" -gt 0 ]; then
        echo "$(basename "$0"): $fails failure(s)"
        exit 1
    fi
    echo "$(basename "$0"): all checks passed"
}
