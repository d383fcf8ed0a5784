#!/usr/bin/env bash
# gpu-check.sh - the one prepared check for a session that is lent a GPU machine (issue 12):
#   1. `mfu devices --live --json`: what NVML says of the card;
#   2. a short PyTorch training loop on the GPU (a small GPT written here, bf16 autocast) through
#      mfu.Monitor with NVML on: per-step MFU, energy (NVML's energy counter) and, on Hopper and
#      newer, GPM's tensor-pipe activity next to MFU;
#   3. `mfu report` (text and JSON) of the JSON-lines file the loop wrote.
# Everything it printed goes to a folder (--out), with the machine, the card and the date, so
# that the results can be recorded in docs/ by hand. Nothing here is a test of CI: CI runs the
# script with --dry-run, on the CPU against the fake NVML the tests build
# (tests/e2e/gpu_check.sh), which checks the script itself, never a GPU.
#
# usage: scripts/gpu-check.sh [--dry-run] [--out DIR] [--steps N] [--seq N] [--batch N]
#   --dry-run   the CPU and the fake NVML ($MFU_FAKE_NVML, else build/fake/libnvidia-ml.so.1)
#   --out DIR   where to write (default: gpu-check-<UTC time>); created
#   --steps N   training steps (default 30; the first ones are the warm-up)
# env: MFU_BIN (default build/mfu), MFU_LIBRARY (default: libmfu.so beside MFU_BIN),
#      MFU_PYTHON (default: build/pyenv/bin/python when it exists, else python3)
# Exit status: 0 when every part ran, else the number of parts that failed (each part's exit
# status is in OUT/status.txt).
set -u
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dry=0
out=""
steps=30
seq_len=256
batch=8
while [ $# -gt 0 ]; do
    case $1 in
    --dry-run) dry=1 ;;
    --out) out=${2:?--out needs a folder}; shift ;;
    --steps) steps=${2:?--steps needs a number}; shift ;;
    --seq) seq_len=${2:?--seq needs a number}; shift ;;
    --batch) batch=${2:?--batch needs a number}; shift ;;
    -h | --help) sed -n '2,25p' "$0"; exit 0 ;;
    *) echo "gpu-check.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
    shift
done
case "$steps$seq_len$batch" in *[!0-9]*) echo "gpu-check.sh: --steps, --seq and --batch take whole numbers" >&2; exit 2 ;; esac
[ -n "$out" ] || out=gpu-check-$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$out" || exit 2
out=$(cd "$out" && pwd)
bin=${MFU_BIN:-$root/build/mfu}
[ -x "$bin" ] || { echo "gpu-check.sh: $bin is missing: build mfu first (or set MFU_BIN)" >&2; exit 2; }
lib=${MFU_LIBRARY:-$(dirname "$bin")/libmfu.so}
py=${MFU_PYTHON:-}
if [ -z "$py" ]; then
    if [ -x "$root/build/pyenv/bin/python" ]; then py=$root/build/pyenv/bin/python; else py=python3; fi
fi
export MFU_LIBRARY=$lib PYTHONPATH=$root/python${PYTHONPATH:+:$PYTHONPATH} PYTHONDONTWRITEBYTECODE=1
if [ "$dry" = 1 ]; then
    fake=${MFU_FAKE_NVML:-$root/build/fake/libnvidia-ml.so.1}
    [ -e "$fake" ] || { echo "gpu-check.sh: --dry-run needs the fake NVML ($fake): build the tests" >&2; exit 2; }
    export MFU_NVML_LIBRARY=$fake
    # the fake's H100: 500 W, the energy counter 250 J a call, GPM tensor activity 60 %
    printf 'device NVIDIA H100 80GB HBM3\nuuid GPU-dry-run\ntensor 60\n' >"$out/fake-nvml.txt"
    export MFU_FAKE_NVML_SCRIPT=$out/fake-nvml.txt
fi

failed=0
: >"$out/status.txt"
part() { # NAME COMMAND...: run it, stdout to OUT/NAME, stderr to OUT/NAME.err
    local name=$1
    shift
    "$@" >"$out/$name" 2>"$out/$name.err"
    local rc=$?
    echo "$name $rc" >>"$out/status.txt"
    [ "$rc" = 0 ] || failed=$((failed + 1))
    echo "gpu-check: $name: exit $rc"
}

{
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "dry_run: $dry"
    echo "host: $(uname -srm)"
    echo "mfu: $("$bin" --version 2>&1 | head -1)"
    echo "git: $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)"
    echo "python: $("$py" -c 'import sys; print(sys.version.split()[0])' 2>&1)"
    echo "torch: $("$py" -c 'import torch; print(torch.__version__, "cuda", torch.version.cuda, "available", torch.cuda.is_available())' 2>&1 | tail -1)"
    command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,power.limit --format=csv 2>&1
} >"$out/machine.txt"
cat "$out/machine.txt"

part devices.json "$bin" devices --live --json

if [ "$dry" = 1 ]; then # a model the CPU trains in well under a second a step
    echo '{"model_type": "gpt2", "n_layer": 2, "n_embd": 64, "n_head": 4, "n_positions": 128, "vocab_size": 1024, "tie_word_embeddings": true}' >"$out/config.json"
    steps=$((steps < 8 ? steps : 8)) seq_len=$((seq_len < 32 ? seq_len : 32)) batch=$((batch < 2 ? batch : 2))
else
    echo '{"model_type": "gpt2", "n_layer": 4, "n_embd": 512, "n_head": 8, "n_positions": 1024, "vocab_size": 16384, "tie_word_embeddings": true}' >"$out/config.json"
fi
rm -f "$out/run.mfu.jsonl" "$out/attention.txt" # one run per folder
part loop.txt "$py" - "$out" "$dry" "$steps" "$seq_len" "$batch" <<'EOF'
# A small GPT (the shapes of config.json: mfu counts the same matmuls) trained for a few
# steps with mfu.Monitor and NVML on. On a GPU: bf16 autocast; on the CPU (--dry-run): fp32.
import contextlib, json, math, sys
import torch
import torch.nn as nn
import torch.nn.functional as F
import mfu

out, dry, steps, seq, batch = sys.argv[1], sys.argv[2] == "1", *map(int, sys.argv[3:6])
cfg = json.load(open(out + "/config.json"))
cuda = torch.cuda.is_available() and not dry
dev = torch.device("cuda:0" if cuda else "cpu")
sdpa = hasattr(F, "scaled_dot_product_attention")
torch.manual_seed(0)
if dry:
    torch.set_num_threads(1)


class Block(nn.Module):
    def __init__(self, h, heads):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(h), nn.LayerNorm(h)
        self.qkv, self.proj = nn.Linear(h, 3 * h), nn.Linear(h, h)
        self.fc, self.out = nn.Linear(h, 4 * h), nn.Linear(4 * h, h)

    def forward(self, x):
        b, s, h = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, s, 3, self.heads, h // self.heads).unbind(2)
        q, k, v = (t.transpose(1, 2) for t in (q, k, v))
        if sdpa:  # a causal kernel: half the score matrix
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:  # masked after the matmul: the whole matrix is computed
            w = (q @ k.transpose(-1, -2)) / math.sqrt(h // self.heads)
            mask = torch.ones(s, s, dtype=torch.bool, device=x.device).triu(1)
            a = w.masked_fill(mask, float("-inf")).softmax(-1) @ v
        x = x + self.proj(a.transpose(1, 2).reshape(b, s, h))
        return x + self.out(F.gelu(self.fc(self.ln2(x))))


class GPT(nn.Module):
    def __init__(self, c):
        super().__init__()
        h = c["n_embd"]
        self.wte, self.wpe = nn.Embedding(c["vocab_size"], h), nn.Embedding(c["n_positions"], h)
        self.blocks = nn.ModuleList(Block(h, c["n_head"]) for _ in range(c["n_layer"]))
        self.ln = nn.LayerNorm(h)

    def forward(self, idx):
        x = self.wte(idx) + self.wpe(torch.arange(idx.shape[1], device=idx.device))
        for b in self.blocks:
            x = b(x)
        return self.ln(x) @ self.wte.weight.t()  # tied output projection


open(out + "/attention.txt", "w").write("causal\n" if sdpa else "full\n")
model = GPT(cfg).to(dev)
opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
dtype = torch.bfloat16 if cuda else torch.float32
mon = mfu.Monitor(model=cfg, seq=seq, device=dev, dtype=dtype, nvml=True, nvml_index=0,
                  attention="causal" if sdpa else "full", jsonl=out + "/run.mfu.jsonl",
                  name="gpu-check small GPT")
print("device %s, dtype %s, attention %s, batch %d x seq %d, peak %.4g FLOP/s, %.4g FLOPs/token"
      % (dev, dtype, "causal (sdpa)" if sdpa else "full (masked)", batch, seq,
         mon.peak_flops_per_s, mon.model_flops_per_token))
for i in range(1, steps + 1):
    x = torch.randint(0, cfg["vocab_size"], (batch, seq + 1), device=dev)
    with mon.step(tokens=batch * seq) as s:
        with torch.autocast("cuda", dtype=dtype) if cuda else contextlib.nullcontext():
            logits = model(x[:, :-1])
            loss = F.cross_entropy(logits.float().view(-1, logits.shape[-1]), x[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if cuda:
            torch.cuda.synchronize()
        s.loss = loss.item()
    print("step %3d  %.4f s  MFU %6.2f %%  %.4g tokens/s  energy %s J  %s J/PFLOP  tensor %s"
          % (s.step, s.step_time_s, 100 * s.mfu, s.tokens_per_s,
             "%.1f" % s.energy_j if s.energy_j == s.energy_j else "-",
             "%.4g" % s.joules_per_pflop if s.joules_per_pflop == s.joules_per_pflop else "-",
             "%.1f %%" % (100 * s.tensor_active) if s.tensor_active == s.tensor_active else "-"))
rep = mon.report()
print("summary:", json.dumps({k: rep["summary"][k] for k in ("mfu", "tokens_per_second")}))
print("energy:", json.dumps(rep["energy"]))
mon.close()
EOF
# the report counts attention as the loop's kernel did (the monitor's attention=)
att=$(cat "$out/attention.txt" 2>/dev/null || echo causal)
part report.txt "$bin" report "$out/run.mfu.jsonl" --config "$out/config.json" --attention "$att"
part report.json "$bin" report "$out/run.mfu.jsonl" --config "$out/config.json" --attention "$att" \
    --json --no-series
for f in devices.json loop.txt report.txt; do
    echo "==== $f"
    cat "$out/$f"
    [ -s "$out/$f.err" ] && sed 's/^/stderr: /' "$out/$f.err"
done
echo "gpu-check: wrote $out ($failed part(s) failed)"
exit "$failed"
