#!/usr/bin/env bash
# e2e: a workload change the log does not print. Logs written the way torchtitan, Megatron-LM,
# nanoGPT, llm.c and the Hugging Face Trainer print them (tests/e2e/lib/hidden.py), each with a
# change of sequence length, global batch or model that no line names. With no flags, and with
# the context of before the change: the boundary is found, the workload term carries the change
# within 1 point, the MFU term has the truth's sign and size (within 1 point) under the
# convention in use (the framework's own without a model, mfu's exact with one), and where the
# model is known the sequence length the log implies is named.
E2E_CMD=report
source "$(dirname "$0")/lib/e2e.bash"
py=/usr/bin/python3
lib=$(dirname "$0")/lib/hidden.py

fpt() { "$bin" flops --json "$@" | jq -r .flops_per_token.model; }
cat >"$tmp/flops.json" <<JSON
{"torchtitan_8192": $(fpt --model llama3-8b --seq 8192 --convention torchtitan),
 "torchtitan_2048": $(fpt --model llama3-8b --seq 2048 --convention torchtitan),
 "exact_llama_8192": $(fpt --model llama3-8b --seq 8192),
 "exact_llama_4096": $(fpt --model llama3-8b --seq 4096),
 "exact_llama_2048": $(fpt --model llama3-8b --seq 2048),
 "megatron_4096": $(fpt --model llama3-8b --seq 4096 --convention megatron-2025),
 "megatron_2048": $(fpt --model llama3-8b --seq 2048 --convention megatron-2025),
 "nanogpt_1024": $(fpt --model gpt2 --seq 1024 --convention nanogpt),
 "llmc_xl_1024": $(fpt --model gpt2-xl --seq 1024 --convention llmc),
 "llmc_xl_512": $(fpt --model gpt2-xl --seq 512 --convention llmc),
 "llmc_small_1024": $(fpt --model gpt2 --seq 1024 --convention llmc),
 "exact_xl_1024": $(fpt --model gpt2-xl --seq 1024),
 "exact_xl_512": $(fpt --model gpt2-xl --seq 512),
 "exact_small_1024": $(fpt --model gpt2 --seq 1024)}
JSON

# scenario, the context of before the change, the sequence length the log implies (or "")
scenario() {
    local name=$1 seq=$2
    shift 2
    $py "$lib" "$name" "$tmp/$name.log" "$tmp/flops.json" >"$tmp/$name.truth" || { fail "$name: no log"; return; }
    for mode in log context; do
        if [ "$mode" = log ]; then run "$tmp/$name.log" --json; else run "$tmp/$name.log" "$@" --json; fi
        [ "$rc" = 0 ] || { fail "$name ($mode): exit $rc: $(cat "$tmp/err")"; continue; }
        echo "$name, $mode:"
        local want=""
        [ "$mode" = context ] && want=$seq
        $py "$lib" check "$tmp/out" "$tmp/$name.truth" "$mode" "$want" || fail "$name ($mode)"
    done
}

scenario torchtitan 2048 --model llama3-8b --seq 8192 --device h100-sxm
scenario megatron 2048 --model llama3-8b --device h100-sxm
scenario nanogpt "" --model gpt2 --seq 1024 --global-batch 60 --devices 1 --device a100-sxm4-80gb
scenario llmc 512 --model gpt2-xl --device h100-sxm
scenario llmc_model "" --model gpt2-xl --device h100-sxm
scenario hf "" --model gpt2 --seq 1024 --global-batch 8 --devices 1 --device a100-sxm4-80gb
e2e_finish
