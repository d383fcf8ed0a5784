#!/usr/bin/env bash
# e2e: `mfu flops` - figures in --json (checked with jq), --convention all, --list-presets, and
# bad input: exit 1 or 2 with one line on stderr, never a crash.
E2E_CMD=flops
source "$(dirname "$0")/lib/e2e.bash"

# --- one convention, JSON ---------------------------------------------------------------------
run --model llama3-8b --seq 8192 --json
[ "$rc" = 0 ] || fail "llama3-8b --json exit $rc: $(cat "$tmp/err")"
jq_is '.convention' exact
jq_is '.attention' causal
jq_is '.model.name' llama3-8b
jq_is '.model.params_total' 8030261248
jq_is '.model.params_active' 8030261248
jq_is '.model.params_matmul' 7504924672
jq_is '.workload.seq' 8192
jq_is '.workload.recompute' none
jq_is '.n_params' null
# 3 x forward, model = hardware without recompute, the breakdown adds up
# (JSON carries 10 significant digits)
jq_true '(.flops_per_token.model / (3 * .flops_per_token.forward) - 1) | fabs < 1e-9'
jq_true '.flops_per_token.hardware == .flops_per_token.model'
jq_true '((.flops_per_token.breakdown | [.[]] | add) / .flops_per_token.model - 1) | fabs < 1e-9'
# attention core: 6 x 32 layers x 32 heads x 256 (QK + AV dims) x 8192/2 keys
jq_true '.flops_per_token.breakdown.attention_core == 6442450944'
jq_is '.flops_per_token.breakdown.router' 0

# selective recompute: hardware = model + one attention-core forward, model unchanged
model=$(jq '.flops_per_token.model' "$tmp/out")
run --model llama3-8b --seq 8192 --recompute selective --json
jq_true ".flops_per_token.model == $model"
jq_true '((.flops_per_token.hardware - .flops_per_token.model) / .flops_per_token.forward_breakdown.attention_core - 1) | fabs < 1e-6'

# the PaLM figure from flags only: (6 x 540e9 + 12 x 118 x 48 x 256 x 2048) x 238.3e3 / (6144 x 275e12)
run --convention palm --params 540e9 --layers 118 --heads 48 --head-dim 256 --seq 2048 --json
[ "$rc" = 0 ] || fail "palm from flags: exit $rc: $(cat "$tmp/err")"
jq_is '.n_params' 540000000000
jq_is '(.flops_per_token.model * 238.3e3 / (6144 * 275e12) * 1000 | round) / 10' 46.2
jq_is '.model.params_total' null

# torchtitan's A100 row: Llama 3 8B at 2904 tokens/s, N with embeddings (at that commit)
run --model llama3-8b --seq 8192 --convention torchtitan --count-embeddings --json
jq_is '(.flops_per_token.model * 2904 / 312e12 * 1000 | round) / 10' 56.8
jq_is '.count_embeddings' true

# Mosaic HFU with activation checkpointing: 8N + 16 L d s = 4/3 of the model count
run --model mpt-70b --seq 2048 --convention mosaic --recompute full --json
jq_is '.convention' llm-foundry
jq_is '.n_params' 64862437376
jq_true '(.flops_per_token.hardware / .flops_per_token.model - 4/3) | fabs < 1e-9'

# packed documents lower the attention core; a window lowers it too
run --model llama3-8b --seq 8192 --json
full=$(jq '.flops_per_token.breakdown.attention_core' "$tmp/out")
run --model llama3-8b --seq 8192 --doc-lengths 4096,2048,2048 --json
jq_true ".flops_per_token.breakdown.attention_core < $full"
jq_is '.workload.doc_count' 3
run --model llama3-8b --seq 8192 --window 1024 --json
jq_true ".flops_per_token.breakdown.attention_core < $full"
run --model mistral-7b --seq 8192 --window none --json
jq_is '.attention_context' 4096
run --model gemma2-9b --seq 8192 --global-every 1 --json
jq_is '.attention_context' 4096
run --model llama3-8b --seq 8192 --mean-doc-len 2048 --json
jq_is '.attention_context' 1024
run --model llama3-8b --seq 8192 --attention full --json
jq_is '.attention' full
jq_is '.attention_context' 8192

# a config.json with a flag supplying the missing field; flags override the file
run --config "$data/model/missing-kv-heads.json" --kv-heads 32 --seq 4096 --json
[ "$rc" = 0 ] || fail "config + --kv-heads: exit $rc: $(cat "$tmp/err")"
jq_is '.model.params_total' 6738415616
run --config "$data/model/llama3-8b.json" --seq 4096 --layers 16 --json
jq_is '.model.params_total' "$((8030261248 - 16 * 218112000))"

# MoE
run --model mixtral-8x7b --seq 4096 --json
jq_true '.model.params_active < .model.params_total'
jq_true '.flops_per_token.breakdown.experts > 0 and .flops_per_token.breakdown.router > 0'
jq_is '.flops_per_token.breakdown.mlp' 0

# --- every convention ---------------------------------------------------------------------------
run --model llama3-8b --seq 8192 --convention all --json
[ "$rc" = 0 ] || fail "--convention all --json: exit $rc"
jq_is 'length' 13
jq_is '[.[].convention] | join(",")' \
    exact,megatron-2025,maxtext-2025,palm,6n,nanogpt,llmc,torchtitan,llm-foundry,nemo-2024,maxtext-2023,megatron-2021,korthikanti
jq_is '[.[] | select(.error)] | length' 0
jq_true '.[3].flops_per_token.model > .[0].flops_per_token.model'  # palm counts the full matrix
jq_true '.[4].flops_per_token.breakdown.attention_core == 0'        # 6n
run --model mixtral-8x7b --seq 4096 --convention all --json
jq_is '[.[] | select(.error)] | .[0].convention' nemo-2024
run --model llama3-8b --seq 8192 --convention all
[ "$rc" = 0 ] || fail "--convention all: exit $rc"
grep -q '^torchtitan ' "$tmp/out" || fail "--convention all: no torchtitan row"
grep -q 'vs exact' "$tmp/out" || fail "--convention all: no header"
[ "$(grep -cE '^(exact|palm|6n|llmc|korthikanti) ' "$tmp/out")" -ge 5 ] || fail "--convention all: rows"
run --params 7e9 --convention all --json
jq_is '[.[] | select(.error | not)] | map(.convention) | join(",")' 6n

# --- text output, help, presets ----------------------------------------------------------------
run --model deepseek-v3 --seq 4096
[ "$rc" = 0 ] || fail "text: exit $rc"
grep -q '^convention  exact' "$tmp/out" || fail "text: no convention line"
grep -q '^source ' "$tmp/out" || fail "text: no source line"
grep -q '^experts ' "$tmp/out" || fail "text: no experts row"
grep -q 'hardware (HFU numerator)' "$tmp/out" || fail "text: no hardware row"
run --help
[ "$rc" = 0 ] && grep -q 'Examples:' "$tmp/out" && grep -q -- '--doc-lengths' "$tmp/out" \
    || fail "--help"
run --list-presets --json
jq_true 'length >= 36'
jq_is '[.[] | select(.name == "gpt2")] | .[0].params_total' 124439808
run --list-presets
grep -q '^deepseek-v3 ' "$tmp/out" || fail "--list-presets text"
"$bin" --help | grep -q '^  flops ' || fail "mfu --help does not list flops"

# --- a preset brings the length it was trained at: every convention has a figure, the output
# names the length and its source, and --seq overrides it
run --model llama3-8b --convention all
[ "$rc" = 0 ] || fail "all without --seq: exit $rc"
grep -q 'n/a' "$tmp/out" && fail "all without --seq: a convention is n/a"
grep -q '^workload    seq 8192, recompute none$' "$tmp/out" || fail "all without --seq: workload line"
grep -q '^note        seq 8192, the length llama3-8b was trained at: config.json max_position_embeddings 8192 (Meta Llama 3 model card: context length 8k). --seq N overrides it$' "$tmp/out" ||
    fail "all without --seq: no note naming the length and its source"
run --model llama3-8b --json
jq_is '.workload.seq' 8192
jq_is '.workload.seq_source' trained_seq
jq_true '.flops_per_token.breakdown.attention_core == 6442450944' # the --seq 8192 figure
run --model llama3-8b --seq 4096 --json
jq_is '.workload.seq' 4096
jq_is '.workload.seq_source' --seq
jq_is '.workload.trained_seq' 8192
run --model llama3-8b --seq 4096
grep -q '^note ' "$tmp/out" && fail "--seq given: a trained-length note"
run --model qwen2.5-7b --json   # the pre-training length, not the config's 131072 context
jq_is '.workload.seq' 4096
jq_true '.workload.trained_seq_source | test("arXiv:2412.15115")'
run --list-presets --json
jq_true 'all(.[]; .trained_seq >= 1024 and (.trained_seq_source | length) > 30)'
run --list-presets
head -1 "$tmp/out" | grep -q 'trained seq' || fail "--list-presets: no trained seq column"

# --- 0 where the configs write 0: first_k_dense_replace 0 (Qwen MoE, Mixtral style), no shared
# experts, full-rank queries; 0 on a preset that sets it clears it
run --layers 24 --hidden 2048 --heads 16 --ffn 5632 --vocab 151936 --experts 60 \
    --experts-per-token 4 --moe-ffn 1408 --first-dense 0 --shared-experts 0 --seq 4096 --json
[ "$rc" = 0 ] || fail "--first-dense 0: exit $rc: $(cat "$tmp/err")"
zero=$(jq '.flops_per_token.model' "$tmp/out")
run --layers 24 --hidden 2048 --heads 16 --ffn 5632 --vocab 151936 --experts 60 \
    --experts-per-token 4 --moe-ffn 1408 --seq 4096 --json
jq_true ".flops_per_token.model == $zero"
run --model deepseek-v3 --json
v3=$(jq '.flops_per_token.breakdown.mlp' "$tmp/out")
run --model deepseek-v3 --first-dense 0 --json
[ "$rc" = 0 ] || fail "deepseek-v3 --first-dense 0: exit $rc"
jq_is '.flops_per_token.breakdown.mlp' 0 # no dense MLP layer left (3 before)
jq_true "$v3 > 0"
run --model deepseek-v2-lite --q-lora-rank 0 --json
[ "$rc" = 0 ] || fail "--q-lora-rank 0: exit $rc"
bad 2 --model deepseek-v3 --first-dense -1
grep -q 'must be 0 or more' "$tmp/err" || fail "--first-dense -1: message"
bad 2 --model llama3-8b --heads 0

# --- did you mean: an option or a preset a typo away
bad 2 --model llama-3-70b
grep -qF "unknown model preset 'llama-3-70b' (did you mean llama3-70b?)" "$tmp/err" || fail "preset did-you-mean"
bad 2 --model llama3-8b --convetion all
grep -qF "unknown option '--convetion' (did you mean --convention? see 'mfu flops --help')" "$tmp/err" ||
    fail "option did-you-mean"
bad 2 --model llama3-8b --frobnicate
grep -qF "unknown option '--frobnicate' (see 'mfu flops --help')" "$tmp/err" || fail "far option: a suggestion"

# --- bad input: exit 1 or 2, one line, no crash -----------------------------------------------
bad 2 --model nope --seq 1
bad 2 --seq 10
bad 2 --config "$data/model/llama3-8b.json"   # a user's config.json brings no trained length
grep -q 'pass --seq' "$tmp/err" || fail "config without --seq: message does not name --seq"
bad 2 --model llama3-8b --seq -1
bad 2 --model llama3-8b --seq abc
bad 2 --model llama3-8b --seq 8 --convention foo
bad 2 --model llama3-8b --seq 8 --attention half
bad 2 --model llama3-8b --seq 8 --recompute most
bad 2 --model llama3-8b --seq 8 --params 7e9
bad 2 --model gpt2 --seq 1024 --doc-lengths 1,x
bad 2 --model gpt2 --seq 1024 --doc-lengths 1,,2
bad 2 --model gpt2 --seq 1024 --doc-lengths 2048
bad 2 --model gpt2 --seq 1024 --doc-lengths 10 --mean-doc-len 10
bad 2 --model gpt2 --seq 1024 --params abc --convention palm
bad 2 --model gpt2 --config x
bad 2 --model gpt2 --seq 1024 extra
bad 2 --bogus
bad 2 --model gpt2 --seq 1024 --heads 5
bad 2 --model mixtral-8x7b --seq 8 --experts-per-token 9
bad 2 --layers 2 --hidden 64 --heads 4 --vocab 10 --seq 8 --global-every 2
bad 2 --layers 3000000000 --hidden 64 --heads 4 --vocab 10 --seq 8
bad 1 --config "$data/model/malformed.json" --seq 8
grep -q 'line 5, column' "$tmp/err" || fail "malformed: no line/column: $(cat "$tmp/err")"
bad 2 --config "$data/model/missing-kv-heads.json" --seq 8
grep -q 'num_key_value_heads.*--kv-heads' "$tmp/err" || fail "missing field: $(cat "$tmp/err")"
bad 1 --config "$data/model/unknown-type.json" --seq 8
grep -q "falcon" "$tmp/err" || fail "unknown model_type: $(cat "$tmp/err")"
bad 1 --config "$data/model/wrong-type.json" --seq 8
bad 1 --config "$tmp/none.json" --seq 8
bad 1 --model mixtral-8x7b --seq 8 --convention nemo-2024
printf '\x00\xff{{{' >"$tmp/binary.json"
bad 1 --config "$tmp/binary.json" --seq 8
# the --doc-lengths limit
docs=$(printf '1,%.0s' $(seq 1 16384))1
bad 2 --model gpt2 --seq 1024 --doc-lengths "$docs"
grep -q 'limit of 16384' "$tmp/err" || fail "doc limit: $(cat "$tmp/err")"
run --model gpt2 --seq 1024 --doc-lengths "${docs%,1}" --json
[ "$rc" = 0 ] || fail "16384 documents: exit $rc"
jq_is '.workload.doc_count' 16384

# a dimension flag on a preset is applied before the preset is resolved, as on a config.json:
# what is derived from it (head_dim = hidden / heads, ffn = 4 hidden) follows it
ok --model gpt2 --hidden 1536 --seq 1024 --json
preset=$(jq -c .flops_per_token "$tmp/out")
ok --config "${MFU_SOURCE_DIR:?}/src/model/presets/gpt2.json" --hidden 1536 --seq 1024 --json
[ "$preset" = "$(jq -c .flops_per_token "$tmp/out")" ] || fail "--model gpt2 --hidden 1536 differs from the config path"
jq_is '.flops_per_token.forward_breakdown.mlp' 452984832 # 2 x 2 x 1536 x 6144 x 12 layers
bad 2 --model gpt2 --hidden 1024 --seq 1024
grep -q "does not divide" "$tmp/err" || fail "$(cat "$tmp/err")"

e2e_finish
