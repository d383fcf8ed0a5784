#!/usr/bin/env bash
# e2e: `mfu report` on the fixtures of the formats that arrive with the ingest2 branch (hf,
# axolotl, deepspeed, neox, maxtext, composer, lightning, torchtune). A fixture whose format
# this build cannot read yet ('mfu convert --list-formats') is SKIPPED with the reason, so the
# script passes before the merge and runs fully after it. The run context of each fixture
# comes from its .md. Expected figures: counts and values printed in the logs, and `mfu
# estimate` / `mfu flops` for the recomputed ones.
set -u
bin=${MFU_BIN:?MFU_BIN is the built mfu}
logs=${MFU_TEST_DATA:?MFU_TEST_DATA is tests/data}/logs
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
skips=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
formats=$("$bin" convert --list-formats | awk '{ print $1 }')
# needs FORMAT NAME: true when the build reads FORMAT, else says SKIP
needs() {
    if grep -qx "$1" <<<"$formats"; then return 0; fi
    echo "SKIP: $2 (format '$1' is not in this build yet)"
    skips=$((skips + 1))
    return 1
}
run() { "$bin" report "$@" >"$tmp/out" 2>"$tmp/err"; rc=$?; }
ok() {
    run "$@"
    [ "$rc" = 0 ] || fail "report $*: exit $rc: $(cat "$tmp/err")"
}
is() {
    local got
    got=$(jq -r "$1" "$tmp/out" 2>&1)
    [ "$got" = "$2" ] || fail "$name: jq '$1' = '$got', want '$2'"
}
rel() {
    local got
    got=$(jq -r "$1" "$tmp/out" 2>&1) || { fail "jq '$1': $got"; return; }
    awk -v g="$got" -v w="$2" -v t="$3" 'BEGIN { d = g / w - 1; if (d < 0) d = -d; exit !(d <= t) }' ||
        fail "$name: jq '$1' = $got, want $2 within $3 relative"
}
calc() { awk "BEGIN { printf \"%.17g\", $1 }"; }

# ---- Hugging Face Trainer / Axolotl -------------------------------------------------------
name=hf-bigdl
if needs hf "$name"; then
    ok "$logs/hf-transformers/hf-bigdl-qlora-llama2-7b-intel-gpu.log" --json
    is .format hf
    is .steps 10
    is .lines.skipped 0
    is '.missing | map(.what) | index("sequence length") != null' true # samples/s, no seq
fi
name=hf-qwen25
if needs hf "$name"; then
    ok "$logs/hf-transformers/hf-qwen25-7b-lora-string-values.log" --json
    is .steps 3
    is .context.stack.convention 6n
fi
name=axolotl-pr82 # plain HF dicts: detected as hf
if needs hf "$name"; then
    ok "$logs/axolotl/axolotl-modal-llm-finetuning-pr82.log" --json
    is .format hf
    is .steps 13
    is .steady_steps 0 # no throughput at all
fi
name=axolotl-summary # 26.2 samples/s of 2048 tokens on one GPU
if needs axolotl "$name"; then
    ok "$logs/axolotl/axolotl-tutorial-llama32-1b-lora-summary.log" --seq 2048 --devices 1 --json
    is .format axolotl
    is .steps 1
    rel .summary.tokens_per_second.median "$(calc "26.2 * 2048")" 1e-9
fi

# ---- Composer / llm-foundry ---------------------------------------------------------------
name=composer-moe
if needs composer "$name"; then
    ok "$logs/composer-llm-foundry/composer-moe-research-tab-indented.log" --json
    is .steps 1
    rel .summary.tokens_per_second.median 222.2194 1e-9
fi
name=composer-mpt30b # MPT-30B, seq 8192, 8 x MI300X, amp_fp16; no MFU printed
if needs composer "$name"; then
    ok "$logs/composer-llm-foundry/rocm-blog-mpt30b-mi300x-1node.log" --model mpt-30b --seq 8192 \
        --device mi300x --dtype fp16 --json
    is .steps 1
    is .context.devices 8
    is .context.stack.convention llm-foundry
    want=$("$bin" estimate --model mpt-30b --seq 8192 --device mi300x --dtype fp16 --devices 8 \
        --tokens-per-sec 10347.9543 --json | jq -r .mfu)
    rel .summary.mfu.median "$want" 1e-9
fi

# ---- DeepSpeed / GPT-NeoX -----------------------------------------------------------------
name=deepspeed-profiler # BERT-large on 1 A100: 102.0 fwd+bwd TFLOPS per GPU, no MFU
if needs deepspeed "$name"; then
    ok "$logs/deepspeed/deepspeed-flops-profiler-tutorial-bert-large-a100.log" --json
    is .steps 1
    is .context.devices 1
    rel .summary.reported_flops_per_second_per_device.median 102e12 1e-9
fi
name=deepspeed-1825
if needs deepspeed "$name"; then
    ok "$logs/deepspeed/deepspeed-issue1825-2022-notebook.log" --json
    is .steps 2
    is '.missing | map(.what) | index("sequence length") != null' true
fi
name=deepspeed-2629 # CurrSamplesPerSec (global) x an assumed 128 tokens per sample
if needs deepspeed "$name"; then
    ok "$logs/deepspeed/deepspeed-issue2629-v077-timer-every-step.log" --seq 128 --json
    is .steps 6
    is .warmup.steps 0
    rel .summary.tokens_per_second.median \
        "$(calc "128 * (155.10475468488542 + 155.14401867030702) / 2")" 1e-9
fi
# NeoX: the only excerpt has DeepSpeed timer lines and no training step: exit 1, one line.
name=neox
run "$logs/gpt-neox/gptneox-issue965-deepspeed-wallclock-breakdown.log"
[ "$rc" = 1 ] || fail "$name: exit $rc, want 1"
[ "$(wc -l <"$tmp/err")" = 1 ] || fail "$name: stderr is not one line: $(cat "$tmp/err")"
grep -q -- '--format' "$tmp/err" || fail "$name: the message does not name --format"

# ---- Lightning ----------------------------------------------------------------------------
name=litgpt # iter time is one micro-iteration: no step time, no throughput
if needs lightning "$name"; then
    ok "$logs/lightning/litgpt-issue1607-gpt2-124m-repro.log" --json
    is .steps 7
    is .warmup.unusable 7
    is .steady_steps 0
fi

# ---- MaxText ------------------------------------------------------------------------------
# deepseek2-16b (= DeepSeek-V2-Lite) on a v5p-8 (4 chips), 24 x 2048 tokens per device.
name=maxtext-deepseek
if needs maxtext "$name"; then
    ok "$logs/maxtext/maxtext-docs-understand-logs-deepseek2-16b-v5p8.log" \
        --model deepseek-v2-lite --seq 2048 --devices 4 --device tpu-v5p --json
    is .steps 10
    is .warmup.steps 1       # step 0: compilation
    is .warmup.first_step 0
    is .warmup.artifacts 1   # step 1: 0.319 s, 2400 TFLOP/s/device
    is .context.stack.convention maxtext-2025
    is '.comparisons | map(select(.figure == "flops_per_second_per_device"))[0].agrees' true
    rel '.comparisons | map(select(.figure == "flops_per_second_per_device"))[0].ratio' 1 0.005
    is '.comparisons | map(select(.figure == "tokens_per_second"))[0].agrees' true
    # the doc's MFU: 134.924 TFLOP/s/device / 459 = 29.40 %
    rel .summary.mfu.median "$(calc "134.924 / 459")" 0.005
fi
name=maxtext-old # 2023 layout: TFLOP/s without /device, no Tokens/s
if needs maxtext "$name"; then
    ok "$logs/maxtext/maxtext-issue8-v3-8-old-format.log" --json
    is .steps 3
    is .context.stack.convention maxtext-2023
    is .warmup.checked false # 3 steps are too few
fi
name=maxtext-maxtest # steps 0 (1.353 s) and 2 (0.002 s) are timing artifacts
if needs maxtext "$name"; then
    ok "$logs/maxtext/maxtext-maxtest-getting-started-v5p128.log" --json
    is .steps 5
    is .warmup.artifacts 2
    is .warmup.steps 1
    is .steady_steps 2
    is .context.tokens_per_step 1572864
fi

# ---- torchtune ----------------------------------------------------------------------------
name=torchtune # step 1 (57.8 tokens/s/GPU) is warm-up; the median of the 11 others
if needs torchtune "$name"; then
    ok "$logs/torchtune/torchtune-pr1358-codellama7b.log" --json
    is .steps 12
    is .warmup.steps 1
    rel .summary.tokens_per_second_per_device.median 417.49818620797487 1e-9
fi

[ "$fails" = 0 ] || { echo "$fails failure(s), $skips skipped"; exit 1; }
echo "report_formats2: all checks passed ($skips skipped)"
