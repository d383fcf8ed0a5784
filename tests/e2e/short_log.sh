#!/usr/bin/env bash
# e2e: logs of 2, 3 and 4 steps follow the warm-up rule of long logs, and every view says the
# same headline. The logs are written as torchtitan prints them on 4 ranks (each rank prints
# every step; the first step is the compile-and-warm-up step, 3x slower); with no flags and with
# the context (llama3-8b, seq 8192, h100-sxm, 4 devices): the warm-up step is excluded, the
# headline MFU and tokens/s are the median of the steady steps, and the segment's level, the
# HTML card and the text agree with it.
E2E_CMD=report
source "$(dirname "$0")/lib/e2e.bash"

# log N: N steps, 4 ranks; step 1 at 1,930 tps (warm-up), then 5,800 +- a few tps
write() {
    local n=$1 out=$2 t=12 step r tps
    : >"$out"
    for step in $(seq 1 "$n"); do
        for r in 0 1 2 3; do
            if [ "$step" = 1 ]; then tps=$((1930 + r)); else tps=$((5790 + 7 * step + r)); fi
            awk -v s="$step" -v r="$r" -v tps="$tps" -v t="$t" 'BEGIN {
                tf = tps * 57.96e9 / 1e12
                printf "[rank%d]:[titan] 2025-06-16 22:30:%02d,%03d - root - INFO - step: %2d  loss: %7.4f  memory: 49.66GiB(52.28%%)  tps: %d,%03d  tflops: %.2f  mfu: %.2f%%\n",
                    r, int(t), 1000 * (t - int(t)), s, 12 - s / 10, int(tps / 1000), tps % 1000, tf, 100 * tf / 989 }' >>"$out"
        done
        t=$(awk -v t="$t" -v s="$step" 'BEGIN { print t + (s == 1 ? 4.24 : 1.413) }')
    done
}

for n in 2 3 4; do
    write "$n" "$tmp/s$n.log"
    for ctx in none full; do
        args=()
        [ "$ctx" = full ] && args=(--model llama3-8b --seq 8192 --device h100-sxm --devices 4)
        ok "$tmp/s$n.log" "${args[@]}" --json
        cp "$tmp/out" "$tmp/j"
        what="$n steps, context $ctx"
        jq_is '.warmup.steps' 1
        jq_is '.warmup.first_step' 1
        jq_is '.steady_steps' $((n - 1))
        jq_is '.segments | length' 1
        # the headline is the median of the steady steps; the segment's level is the same figure
        h=$(jq -r '.summary.mfu.median' "$tmp/j")
        lvl=$(jq -r '.segments[0].levels.mfu.value' "$tmp/j")
        awk -v a="$h" -v b="$lvl" 'BEGIN { exit !(a == b && a > 0.30 && a < 0.40) }' ||
            fail "$what: headline MFU $h, segment level $lvl (want equal, the steady steps')"
        tk=$(jq -r '.summary.tokens_per_second_per_device.median' "$tmp/j")
        lt=$(jq -r '.segments[0].levels.tokens_per_second.value' "$tmp/j")
        if [ "$ctx" = none ]; then
            awk -v a="$tk" -v b="$lt" 'BEGIN { exit !(a == b && a > 5790) }' ||
                fail "$what: headline tokens/s per device $tk, segment level $lt"
        else
            tj=$(jq -r '.summary.tokens_per_second.median' "$tmp/j")
            awk -v a="$tj" -v b="$lt" -v d="$tk" 'BEGIN { exit !(a == b && a == 4 * d) }' ||
                fail "$what: headline tokens/s $tj, segment level $lt, per device $tk"
        fi
        # the text says the same headline, and the HTML card too (to its two decimals)
        ok "$tmp/s$n.log" "${args[@]}"
        pct=$(grep '^MFU' "$tmp/out" | awk '{ for (i = 2; i <= NF; i++) if ($i ~ /%$/) { print $i; exit } }')
        awk -v p="${pct%\%}" -v m="$h" 'BEGIN { d = p - 100 * m; if (d < 0) d = -d; exit !(d <= 0.0051) }' ||
            fail "$what: the text's MFU row says $pct, the JSON's headline $h"
        grep -q "segments: 1 .*MFU $pct" "$tmp/out" || fail "$what: the segment line is not $pct: $(grep '^segments' "$tmp/out")"
        ok "$tmp/s$n.log" "${args[@]}" --html "$tmp/r.html"
        grep -q "${pct%\%} %" "$tmp/r.html" || fail "$what: the HTML report never says ${pct%\%} %"
        echo "$what: headline = segment = $pct"
    done
done
e2e_finish
