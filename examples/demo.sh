#!/usr/bin/env bash
# The main job on the bundled example: what one token of Llama 3 8B costs under every
# convention, and the MFU of a run on 8 H100 at a stated throughput.
# usage: examples/demo.sh PATH/TO/mfu
set -euo pipefail
mfu=${1:-build/mfu}

say() {
    if [ -t 1 ]; then printf '\n\033[1m$ %s\033[0m\n' "$*"; else printf '\n$ %s\n' "$*"; fi
}

say mfu flops --model llama3-8b --seq 8192 --convention all
"$mfu" flops --model llama3-8b --seq 8192 --convention all

# torchtitan's PR #1287 log (tests/data/logs/torchtitan): Llama 3 8B at seq 8192 on H100,
# 5,856 tokens/s per GPU, printed as 339.16 TFLOP/s and 34.29 % MFU by torchtitan.
say mfu estimate --model llama3-8b --seq 8192 --device h100-sxm --devices 8 --tokens-per-sec-per-device 5856
"$mfu" estimate --model llama3-8b --seq 8192 --device h100-sxm --devices 8 \
    --tokens-per-sec-per-device 5856

say mfu estimate ... --convention torchtitan   '# what torchtitan itself prints'
"$mfu" estimate --model llama3-8b --seq 8192 --device h100-sxm --devices 8 \
    --tokens-per-sec-per-device 5856 --convention torchtitan | tail -6
