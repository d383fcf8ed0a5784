#!/usr/bin/env bash
# e2e: `mfu report --html FILE` on every real fixture (with the context report.sh gives them)
# and on a generated run with a sequence-length drop, then the page of that run rendered by a
# real browser (Debian's chromium, headless) to a PNG that must have the window's size and not
# be blank. Each page: one self-contained file (no script, no URL but the SVG namespace), the
# charts, and for the torchtitan, Megatron and llm.c fixtures the reported-vs-recomputed table.
# The screenshot is kept in $MFU_TEST_OUT (default: explain-out/ in the test's working
# directory, build/tests/) to be looked at.
E2E_CMD=report
source "$(dirname "$0")/lib/e2e.bash"
logs=$data/logs
out=${MFU_TEST_OUT:-$PWD/explain-out}
mkdir -p "$out" || fail "cannot create $out"

# page FILE: the checks every page passes
page() {
    local f=$1
    [ -s "$f" ] || { fail "$name: no page written"; return; }
    head -c 15 "$f" | grep -q '^<!DOCTYPE html>' || fail "$name: not an HTML page"
    grep -qi '<script' "$f" && fail "$name: the page has a script"
    local urls svgs
    urls=$(grep -o 'https\?://[^"]*' "$f" | sort -u)
    [ -z "$urls" ] || [ "$urls" = "http://www.w3.org/2000/svg" ] || fail "$name: external URLs: $urls"
    svgs=$(grep -o '<svg ' "$f" | wc -l)
    [ "$svgs" -ge 1 ] || fail "$name: no chart"
    grep -q '</html>' "$f" || fail "$name: the page is cut"
}

# every real fixture, with the run context report.sh and report_formats2.sh give it
while read -r rel args; do
    case "$rel" in '' | '#'*) continue ;; esac
    name=$(basename "$rel" .log)
    # shellcheck disable=SC2086 # the flags are whitespace-separated words
    run "$logs/$rel" $args --html "$tmp/$name.html"
    [ "$rc" = 0 ] || fail "$name: exit $rc: $(cat "$tmp/err")"
    page "$tmp/$name.html"
    case "$name" in torchtitan-pr1287* | llmc-discussion677* | fixstars* | megatron-issue756*)
        grep -q 'Reported vs recomputed' "$tmp/$name.html" || fail "$name: no comparison table"
        grep -q 'badge ok">agrees' "$tmp/$name.html" || fail "$name: no agreeing figure"
        ;;
    esac
done <<'LIST'
axolotl/axolotl-modal-llm-finetuning-pr82.log
axolotl/axolotl-tutorial-llama32-1b-lora-summary.log --seq 2048 --devices 1
composer-llm-foundry/composer-moe-research-tab-indented.log
composer-llm-foundry/rocm-blog-mpt30b-mi300x-1node.log --model mpt-30b --seq 8192 --device mi300x --dtype fp16
deepspeed/deepspeed-flops-profiler-tutorial-bert-large-a100.log
deepspeed/deepspeed-issue1825-2022-notebook.log
deepspeed/deepspeed-issue2629-v077-timer-every-step.log --seq 128
hf-transformers/hf-bigdl-qlora-llama2-7b-intel-gpu.log
hf-transformers/hf-qwen25-7b-lora-string-values.log
lightning/litgpt-issue1607-gpt2-124m-repro.log
llm.c/llmc-discussion677-gpt2-1558m-8xh100.log --model gpt2-xl --device h100-sxm
llm.c/llmc-issue796-blackwell-unknown-mfu.log --model gpt2 --seq 1024 --tokens-per-step 4096 --devices 1
maxtext/maxtext-docs-understand-logs-deepseek2-16b-v5p8.log --model deepseek-v2-lite --seq 2048 --devices 4 --device tpu-v5p
maxtext/maxtext-issue8-v3-8-old-format.log
maxtext/maxtext-maxtest-getting-started-v5p128.log
megatron-lm/epfllm-megatron-llm-issue11-a.log --seq 4096
megatron-lm/fixstars-mdk-gpt3-7b-fp8-2node.log --layers 30 --hidden 4096 --heads 32 --vocab 50304 --seq 4096 --devices 16
megatron-lm/megatron-issue756-mixtral-8x7b-16xh100-a.log --model mixtral-8x7b --seq 2048 --devices 16 --device h100-sxm
megatron-lm/nccl-issue743-megatron-bert-2022-timers.log
nanogpt/nanogpt-issue110-gpt2-124m-8xa100-preMFU.log --model gpt2 --seq 1024 --global-batch 480 --devices 8 --device a100
nanogpt/nanogpt-issue215-v100-fp16-nan.log --model gpt2 --seq 1024 --global-batch 60 --devices 1 --device v100-sxm2 --dtype fp16
nemo/nemo-automodel-pr3473-tps.log
nemo/nemo2-bionemo-pr740-progress-printer.log
torchtitan/torchtitan-pr1287-llama3-8b-h100-gc-profiler.log --model llama3-8b --seq 8192 --device h100-sxm
torchtitan/torchtitan-pr2389-moe-b200-8rank-noprefix.log
torchtune/torchtune-pr1358-codellama7b.log
LIST
# the one fixture without a step line (DeepSpeed timers only) is no run: no page, exit 1
name=neox
run "$logs/gpt-neox/gptneox-issue965-deepspeed-wallclock-breakdown.log" --html "$tmp/neox.html"
[ "$rc" = 1 ] || fail "neox: exit $rc, want 1"
[ -e "$tmp/neox.html" ] && fail "neox: a page without a run"

# several logs: one page, one section each; the text still goes to stdout
name=two
run "$logs/nanogpt/nanogpt-issue215-v100-fp16-nan.log" "$logs/llm.c/llmc-discussion677-gpt2-1558m-8xh100.log" \
    --model gpt2 --html "$tmp/two.html"
[ "$rc" = 0 ] || fail "two: exit $rc"
[ "$(grep -o '<section class="run">' "$tmp/two.html" | wc -l)" = 2 ] || fail "two: not two sections"
[ "$(grep -c '^== ' "$tmp/out")" = 2 ] || fail "two: the text report is missing"
# --html -: the page on stdout instead of the text
run "$logs/llm.c/llmc-discussion677-gpt2-1558m-8xh100.log" --html -
[ "$rc" = 0 ] && head -c 15 "$tmp/out" | grep -q '^<!DOCTYPE html>' || fail "--html -: no page on stdout"
bad 2 "$logs/llm.c/llmc-discussion677-gpt2-1558m-8xh100.log" --html - --json
bad 1 "$logs/llm.c/llmc-discussion677-gpt2-1558m-8xh100.log" --html "$tmp/no/such/dir/x.html"

# a generated run with a sequence-length drop: every section of the page
name=seqdrop
F4=$("$bin" flops --json --model gpt2 --seq 4096 | jq -r .flops_per_token.model)
F1=$("$bin" flops --json --model gpt2 --seq 1024 | jq -r .flops_per_token.model)
/usr/bin/python3 "$(dirname "$0")/lib/genlog.py" seqdrop "$tmp/seq.log" --seed 11 \
    --flops "$F4,$F1" --mfu 0.45,0.414 || fail "genlog"
run "$tmp/seq.log" --model gpt2 --device h100-sxm --expect 'mfu>=0.4' --html "$out/report.html"
[ "$rc" = 0 ] || fail "seqdrop: exit $rc: $(cat "$tmp/err")"
page "$out/report.html"
for want in 'Utilization and throughput over steps' 'Segments (2)' 'What changed at each boundary' \
    'tokens/s +12 %: workload 21 % easier (sequence 4096 → 1024' 'Step times (steady steps)' \
    'Findings (1)' 'throughput_up_mfu_down' 'Expectations' 'class="mfu-boundary"' 'mfu-bar'; do
    grep -qF "$want" "$out/report.html" || fail "seqdrop page lacks: $want"
done
[ "$(grep -o '<svg ' "$out/report.html" | wc -l)" = 5 ] || fail "seqdrop: want 5 charts (MFU, tokens/s, loss, waterfall, histogram)"

# ---- a real browser --------------------------------------------------------------------------
chromium=${MFU_CHROMIUM:-/usr/bin/chromium}
if [ ! -x "$chromium" ]; then
    fail "no $chromium: install Debian's chromium (scripts/deps.sh) to check the page in a browser"
else
    shot() { # shot HTML PNG WIDTH HEIGHT
        timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --hide-scrollbars \
            --no-first-run --user-data-dir="$tmp/chromium" --window-size="$3,$4" \
            --screenshot="$2" "file://$1" >"$tmp/chromium.log" 2>&1
    }
    rm -f "$out/report.png"
    shot "$out/report.html" "$out/report.png" 1100 2400 || fail "chromium failed: $(tail -3 "$tmp/chromium.log")"
    /usr/bin/python3 "$(dirname "$0")/lib/pngcheck.py" "$out/report.png" 1100 2400 >"$tmp/png" ||
        fail "the screenshot is not a rendered page: $(cat "$tmp/png")"
    # the check can fail: an empty page is blank
    printf '<!DOCTYPE html><html><body></body></html>' >"$tmp/blank.html"
    shot "$tmp/blank.html" "$tmp/blank.png" 200 150 || fail "chromium failed on a blank page"
    /usr/bin/python3 "$(dirname "$0")/lib/pngcheck.py" "$tmp/blank.png" 200 150 >/dev/null &&
        fail "pngcheck takes a blank page for a rendering"
fi
e2e_finish
