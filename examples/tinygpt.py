"""examples/tinygpt.py - a GPT-2-shaped language model in plain PyTorch, built from a dict of
Hugging Face GPT-2 config fields (model_type, n_layer, n_embd, n_head, n_inner, n_positions,
vocab_size), and PyTorch's own count of the matrix-multiply FLOPs a piece of code runs.

The model is GPT-2's: learned positions, pre-LayerNorm blocks of a fused QKV projection, an
eager attention (the whole score matrix, then the causal mask: what mfu counts with
attention="full") and a GELU MLP, tied input and output embeddings. examples/train_cpu_gpt.py
trains it through the mfu binding; tests/python/test_loop.py checks mfu's FLOPs per token
against matmul_flops().
"""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, hidden, heads, inner):
        super().__init__()
        self.heads = heads
        self.ln_1 = nn.LayerNorm(hidden)
        self.qkv = nn.Linear(hidden, 3 * hidden)
        self.proj = nn.Linear(hidden, hidden)
        self.ln_2 = nn.LayerNorm(hidden)
        self.fc = nn.Linear(hidden, inner)
        self.fc_proj = nn.Linear(inner, hidden)

    def forward(self, x):
        b, s, h = x.shape
        q, k, v = self.qkv(self.ln_1(x)).split(h, dim=2)
        q, k, v = (t.view(b, s, self.heads, h // self.heads).transpose(1, 2) for t in (q, k, v))
        att = (q @ k.transpose(-2, -1)) / math.sqrt(h // self.heads)
        causal = torch.ones(s, s, dtype=torch.bool, device=x.device).tril()
        att = att.masked_fill(~causal, float("-inf")).softmax(dim=-1)
        y = (att @ v).transpose(1, 2).reshape(b, s, h)
        x = x + self.proj(y)
        return x + self.fc_proj(F.gelu(self.fc(self.ln_2(x))))


class GPT(nn.Module):
    """GPT(config): config is a dict of Hugging Face GPT-2 fields; .config is that dict, which
    is what mfu.Monitor(model=...) reads."""

    def __init__(self, config):
        super().__init__()
        self.config = dict(config)
        h = config["n_embd"]
        inner = config.get("n_inner") or 4 * h
        self.wte = nn.Embedding(config["vocab_size"], h)
        self.wpe = nn.Embedding(config["n_positions"], h)
        self.blocks = nn.ModuleList(Block(h, config["n_head"], inner)
                                    for _ in range(config["n_layer"]))
        self.ln_f = nn.LayerNorm(h)
        for m in self.modules():  # GPT-2's initialisation: N(0, 0.02) weights, zero biases
            if isinstance(m, (nn.Linear, nn.Embedding)):
                nn.init.normal_(m.weight, std=0.02)
            if isinstance(m, nn.Linear):
                nn.init.zeros_(m.bias)

    def forward(self, idx, targets=None):
        pos = torch.arange(idx.shape[1], device=idx.device)
        x = self.wte(idx) + self.wpe(pos)
        for blk in self.blocks:
            x = blk(x)
        logits = F.linear(self.ln_f(x), self.wte.weight)  # tied output projection
        if targets is None:
            return logits
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


def matmul_flops(fn):
    """The floating-point operations of every matrix multiply fn() runs (forward and backward:
    call the whole training step), counted by PyTorch: torch.utils.flop_counter.FlopCounterMode
    where this PyTorch has it (2.1 and newer), else the aten mm/addmm/bmm/baddbmm calls PyTorch
    dispatches, seen through a TorchDispatchMode (2 x m x n x k each). Any other matrix op
    raises, so that nothing is left uncounted."""
    try:
        from torch.utils.flop_counter import FlopCounterMode
    except ImportError:
        FlopCounterMode = None
    if FlopCounterMode is not None:
        counter = FlopCounterMode(display=False)
        with counter:
            fn()
        return counter.get_total_flops()
    from torch.utils._python_dispatch import TorchDispatchMode
    aten = torch.ops.aten

    class Count(TorchDispatchMode):
        flops = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            op = func.overloadpacket
            if op is aten.mm:
                a, b = args[0], args[1]
                self.flops += 2 * a.shape[0] * a.shape[1] * b.shape[1]
            elif op is aten.addmm:
                a, b = args[1], args[2]
                self.flops += 2 * a.shape[0] * a.shape[1] * b.shape[1]
            elif op is aten.bmm:
                a, b = args[0], args[1]
                self.flops += 2 * a.shape[0] * a.shape[1] * a.shape[2] * b.shape[2]
            elif op is aten.baddbmm:
                a, b = args[1], args[2]
                self.flops += 2 * a.shape[0] * a.shape[1] * a.shape[2] * b.shape[2]
            elif any(w in str(op) for w in ("mm", "matmul", "conv", "linear", "dot", "mv")):
                raise NotImplementedError("matmul_flops: %s is not counted" % op)
            return func(*args, **(kwargs or {}))

    counter = Count()
    with counter:
        fn()
    return counter.flops
