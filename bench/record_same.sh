#!/usr/bin/env bash
# record_same.sh OLD_LIBMFU_SO NEW_LIBMFU_SO [N]: the same N (default 100000) varied records
# (bench/record_same.c) through the monitor of each library; exit 1 when the JSON-lines files
# or the per-record figures differ. The check that a faster record changed no byte of the file.
set -euo pipefail
old=$(realpath "$1"); new=$(realpath "$2"); n=${3:-100000}
src=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
for which in old new; do
    lib=${!which}
    gcc -O2 -std=c11 -I"$src/include" "$src/bench/record_same.c" -o "$tmp/$which" \
        -L"$(dirname "$lib")" -l:"$(basename "$lib")" -Wl,-rpath,"$(dirname "$lib")" -lm
    "$tmp/$which" "$tmp/$which.jsonl" "$tmp/$which.samples" "$n"
done
status=0
cmp "$tmp/old.jsonl" "$tmp/new.jsonl" || status=1
cmp "$tmp/old.samples" "$tmp/new.samples" || status=1
echo "record_same: $(wc -l <"$tmp/new.jsonl") lines, $(wc -c <"$tmp/new.jsonl") bytes; $(tail -1 "$tmp/new.samples")"
[ $status = 0 ] && echo "record_same: identical" || echo "record_same: DIFFERENT"
exit $status
