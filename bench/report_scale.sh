#!/usr/bin/env bash
# bench/report_scale.sh - what `mfu report` costs beyond reading the log, and its peak memory per
# step, at 100k, 1M and 10M steps, next to a peer build (by default main, built here from a git
# worktree) in the same run: rounds alternate the two binaries (which goes first alternates too),
# and the table gives medians and the peer/new ratio.
#
# Logs (mfu-bench-gen_steps, fixed seed): JSON-lines with 8 fields a step (bench/peers.py's),
#   clean  one level, 2 % noise
#   shift  a level shift every 2000 steps (the change-point search's pathological case)
# Per log, size and output mode (text; --json --no-series; --json with the per-step series):
#   cpu      user + system seconds of the whole `mfu report` process (/usr/bin/time)
#   beyond   cpu less the CPU time of ingesting the same log (mfu-bench-ingest --repeat 1 of
#            the same build, the least of the rounds: its system time, the kernel zeroing the
#            run's fresh pages, swings 0.3 - 2.3 s at 10M steps on the project's VM, and the
#            least keeps that swing out of "beyond"): what the analysis and the report add
#   B/step   peak resident memory (maxrss, KiB x 1024) / steps, one decimal
#   ratio    peer beyond / new beyond (> 1: the new build is faster), and peer / new B/step
# CPU time, not wall time: the machines are shared, and CPU time moves less under load.
#
# usage: bench/report_scale.sh [--sizes "100000 1000000 10000000"] [--rounds 5]
#            [--kinds "clean shift"] [--modes "text nos json"] [--peer MFU | --peer-ref REV]
#            [--no-peer] [--peer-max N] [NEW_MFU]
#   NEW_MFU      default build/mfu (mfu-bench-gen_steps and mfu-bench-ingest beside it)
#   --peer MFU   a built peer (its mfu-bench-ingest beside it, else the new one's)
#   --peer-ref   a git revision to build as the peer (default main), in
#                build/bench-peer-<commit> (kept: built once)
#   --peer-max N run the peer only up to N steps (default 1000000: main needs about 7.7 GB and
#                30 s a report at 10M steps, and the pathological log grows as n^1.9)
#   modes: text = `mfu report LOG`; nos = `--json --no-series`; json = `--json`
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(dirname "$here")
new=build/mfu
sizes="100000 1000000 10000000"
kinds="clean shift"
modes="text nos json"
rounds=5
peer=""
peer_ref=main
use_peer=1
peer_max=1000000
while [ $# -gt 0 ]; do
    case $1 in
    --sizes) sizes=$2; shift 2 ;;
    --kinds) kinds=$2; shift 2 ;;
    --modes) modes=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --peer) peer=$2; shift 2 ;;
    --peer-ref) peer_ref=$2; shift 2 ;;
    --no-peer) use_peer=0; shift ;;
    --peer-max) peer_max=$2; shift 2 ;;
    -h | --help) sed -n '2,/^set -e/p' "$0" | sed -e 's/^# \{0,1\}//' -e '/^set -e/d'; exit 0 ;;
    *) new=$1; shift ;;
    esac
done
gen=$(dirname "$new")/mfu-bench-gen_steps
[ -x "$new" ] || { echo "report_scale: $new not found; run 'make build' first" >&2; exit 2; }
[ -x "$gen" ] || { echo "report_scale: $gen not found; run 'make build' first" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "report_scale: needs /usr/bin/time (GNU time)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ $use_peer = 1 ] && [ -z "$peer" ]; then
    commit=$(git -C "$src" rev-parse --short "$peer_ref")
    pdir=$src/build/bench-peer-$commit
    if [ ! -x "$pdir/build/mfu" ]; then
        echo "report_scale: building the peer ($peer_ref = $commit) in $pdir" >&2
        rm -rf "$pdir"
        mkdir -p "$pdir"
        git -C "$src" archive "$commit" | tar -x -C "$pdir"
        cp -r "$src/web/dist" "$pdir/web/" # made by web/build.sh, not in git
        cmake -S "$pdir" -B "$pdir/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
            -DMFU_SANITIZER_SUITE=OFF -DBUILD_TESTING=OFF >"$pdir/cmake.log" 2>&1
        cmake --build "$pdir/build" -j2 --target mfu mfu-bench-ingest >"$pdir/build.log" 2>&1 ||
            { echo "report_scale: the peer build failed: $pdir/build.log" >&2; exit 1; }
    fi
    peer=$pdir/build/mfu
fi
[ $use_peer = 0 ] || [ -x "$peer" ] || { echo "report_scale: peer $peer not found" >&2; exit 2; }

ingest_of() { # ingest_of MFU: its mfu-bench-ingest, else the new build's
    local b
    b=$(dirname "$1")/mfu-bench-ingest
    [ -x "$b" ] || b=$(dirname "$new")/mfu-bench-ingest
    echo "$b"
}
args_of() { # args_of MODE
    case $1 in
    text) echo "" ;;
    nos) echo "--json --no-series" ;;
    json) echo "--json" ;;
    esac
}
measure() { # measure MFU LOG MODE: "cpu_s maxrss_kb"
    # shellcheck disable=SC2046
    /usr/bin/time -f "%U %S %M" -o "$tmp/time" "$1" report "$2" $(args_of "$3") >/dev/null 2>"$tmp/err" ||
        { echo "report_scale: $1 report $2 $(args_of "$3") failed: $(cat "$tmp/err")" >&2; exit 1; }
    awk '{ printf "%.3f %d\n", $1 + $2, $3 }' "$tmp/time"
}
ingest_cpu() { # ingest_cpu MFU LOG: CPU seconds of one ingest
    "$(ingest_of "$1")" --repeat 1 "$2" | tr ' ' '\n' | sed -n 's/^best_cpu_s=//p'
}
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
least() { sort -g | head -1; }

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -1)
echo "report_scale: $rounds rounds; new $new ($(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo ?)), peer ${peer:-none}"
echo "$(date -u '+%Y-%m-%d %H:%M UTC'), ${cpu:-unknown CPU}, $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-6s %9s %-5s | %7s %7s %8s | %7s %7s %8s | %7s %7s\n' log steps mode "new cpu" beyond B/step \
    "peer" beyond B/step "ratio" "B ratio"
for kind in $kinds; do
    for n in $sizes; do
        log=$tmp/$kind-$n.jsonl
        "$gen" "$n" "$kind" "$log"
        with_peer=$use_peer
        [ "$n" -le "$peer_max" ] || with_peer=0
        for mode in $modes; do
            : >"$tmp/new.cpu"; : >"$tmp/new.rss"; : >"$tmp/new.ing"
            : >"$tmp/peer.cpu"; : >"$tmp/peer.rss"; : >"$tmp/peer.ing"
            for r in $(seq "$rounds"); do
                order="new peer"
                [ $((r % 2)) = 0 ] && order="peer new"
                for who in $order; do
                    if [ "$who" = new ]; then b=$new; else
                        [ $with_peer = 1 ] || continue
                        b=$peer
                    fi
                    read -r c m < <(measure "$b" "$log" "$mode")
                    echo "$c" >>"$tmp/$who.cpu"
                    echo "$m" >>"$tmp/$who.rss"
                    ingest_cpu "$b" "$log" >>"$tmp/$who.ing"
                done
            done
            nc=$(median <"$tmp/new.cpu"); ni=$(least <"$tmp/new.ing"); nr=$(median <"$tmp/new.rss")
            nb=$(awk -v c="$nc" -v i="$ni" 'BEGIN { printf "%.3f", c - i }')
            nbs=$(awk -v m="$nr" -v n="$n" 'BEGIN { printf "%.1f", m * 1024 / n }')
            if [ $with_peer = 1 ]; then
                pc=$(median <"$tmp/peer.cpu"); pi=$(least <"$tmp/peer.ing"); pr=$(median <"$tmp/peer.rss")
                pb=$(awk -v c="$pc" -v i="$pi" 'BEGIN { printf "%.3f", c - i }')
                pbs=$(awk -v m="$pr" -v n="$n" 'BEGIN { printf "%.1f", m * 1024 / n }')
                ratio=$(awk -v p="$pb" -v q="$nb" 'BEGIN { if (q > 0) printf "%.1fx", p / q; else print "-" }')
                bratio=$(awk -v p="$pbs" -v q="$nbs" 'BEGIN { printf "%.2fx", p / q }')
            else
                pc=- pb=- pbs=- ratio=- bratio=-
            fi
            printf '%-6s %9s %-5s | %7s %7s %8s | %7s %7s %8s | %7s %7s\n' "$kind" "$n" "$mode" \
                "$nc" "$nb" "$nbs" "$pc" "$pb" "$pbs" "$ratio" "$bratio"
        done
        rm -f "$log"
    done
done
echo "cpu: medians of $rounds rounds, seconds; beyond = cpu - the least ingest cpu of the rounds (mfu-bench-ingest) of the same build"
