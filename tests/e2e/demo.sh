#!/usr/bin/env bash
# e2e: the non-interactive part of 'make demo' (examples/demo.sh --no-serve): every example of
# examples/runs.txt is stored with its run context in the default store ($MFU_DB here) and
# reported; a second demo finds the store as it was (idempotent). The serving part is the
# mfu serve of tests/e2e/serve.sh and context.sh; 'make test' never starts an interactive one.
E2E_CMD=runs
source "$(dirname "$0")/lib/e2e.bash"
src=${MFU_SOURCE_DIR:?MFU_SOURCE_DIR is the source tree}
export MFU_DB=$tmp/demo.db

bash "$src/examples/demo.sh" --no-serve "$bin" >"$tmp/demo" 2>&1 || fail "demo: exit $?: $(tail -3 "$tmp/demo")"
[ "$(grep -c '^== examples/' "$tmp/demo")" = 5 ] || fail "demo: not 5 reports: $(head -5 "$tmp/demo")"
# the binding's CPU run: its file names the device and the peak, so it has an MFU
grep -q "^device     'cpu' (from the log), peak" "$tmp/demo" || fail "demo: the PyTorch CPU run has no peak"
grep -q 'MFU  *35\.75%' "$tmp/demo" || fail "demo lacks nanoGPT's steady MFU under the exact convention (35.75%)"
grep -q "the 5 runs and their context are in the store $MFU_DB" "$tmp/demo" || fail "demo's last line: $(tail -1 "$tmp/demo")"
ok --json
jq_is '.runs | length' 5
# each run holds the flags of its line in runs.txt, in order
while read -r file args; do
    case "$file" in '' | '#'*) continue ;; esac
    name=${file%.*}
    # shellcheck disable=SC2086
    # (a relative --config is stored absolute: demo.sh runs in the source tree)
    want=$(printf '%s\n' $args | paste -sd' ' | sed -E 's/(^| )--([a-z-]+) /\1--\2=/g' |
        sed -E "s|--config=([^/])|--config=$src/\1|")
    jq_is ".runs[] | select(.name == \"$name\") | .context | join(\" \")" "$want"
    jq_is ".runs[] | select(.name == \"$name\") | .steps > 0" true
done <"$src/examples/runs.txt"
cp "$tmp/out" "$tmp/first.json"

# again: nothing changes (same runs, steps, contexts, update times)
bash "$src/examples/demo.sh" --no-serve "$bin" >"$tmp/demo2" 2>&1 || fail "second demo: exit $?"
ok --json
cmp -s "$tmp/first.json" "$tmp/out" || fail "a second demo changed the store: $(diff "$tmp/first.json" "$tmp/out" | head -5)"
diff <(grep -v '^the ' "$tmp/demo") <(grep -v '^the ' "$tmp/demo2") >/dev/null || fail "the second demo printed other reports"
e2e_finish
