#!/usr/bin/python3
"""hidden.py - training logs with a workload change the log does not print, in the line formats
of real frameworks (tests/e2e/hidden_change.sh). Standard library only.

    hidden.py SCENARIO OUT FLOPS_JSON    write the log of SCENARIO to OUT; print its truth as JSON

FLOPS_JSON holds the FLOPs per token the frameworks would count (`mfu flops` under each
framework's convention, computed by the test). Each scenario prints lines the way its
framework prints them, and hides what it hides: nothing in the log names the new sequence
length, batch or model. The truth printed (JSON) is what the change really was:

  torchtitan  Llama 3 8B, sequence 8192 -> 2048 from step 1001 (log every 10 steps): tps,
              tflops and mfu (its formula, its 989 TFLOP/s) on every line; tokens/s +12 %
  megatron    Llama 3 8B on 64 GPUs, the argument dump says seq_length 4096; from iteration
              501 the job runs 2048 (a restart whose dump is not in the excerpt): iteration
              time, TFLOP/s/GPU (its formula at the real length) and the global batch (512,
              unchanged) per line; TFLOP/s/GPU 420 -> 400
  nanogpt     GPT-2 124M on one A100: "tokens per iteration will be: 61,440" (12 x 1024 x 5)
              in the header; from iter 2000 gradient accumulation doubles (122,880 tokens): the
              iteration time and the EMA'd mfu (its formula, 312 TFLOP/s); MFU 0.30 -> 0.33
  llmc        GPT-2 1558M on 8 H100s (header: B=16 T=1024 x 8, total 1048576): from step 501
              T = 512 with B = 32 (the same tokens per step): ms, MFU (its formula, its table's
              988.8 TFLOP/s) and tok/s per line; MFU 0.47 -> 0.44
  llmc_model  as llmc, but from step 501 another model (the 124M one's FLOPs per token in a
              log that said 1558M): a model-size change no sequence length explains
  hf          GPT-2 124M, Hugging Face Trainer with include_num_input_tokens_seen: the bar's
              s/it and the dicts (every 10 steps) with num_input_tokens_seen; the per-device
              batch 8 -> 16 from step 501 (1024 tokens each, one device); tokens/s +15 %
"""
import json
import math
import random
import sys


def noise(rng, sd=0.006):
    return math.exp(rng.gauss(0, sd))


def ts(t):
    """A log timestamp of t seconds after 2025-06-16 22:30:00 UTC (a date after Megatron-LM's
    causal formula, 2025-03-06)."""
    base = 1750113000
    x = base + t
    days, rem = divmod(int(x), 86400)
    h, rem = divmod(rem, 3600)
    m, s = divmod(rem, 60)
    # 2025-06-16 is day 20255 since 1970
    d = 16 + days - 20255
    return "2025-06-%02d %02d:%02d:%02d" % (d, h, m, s), int((x - int(x)) * 1000)


def torchtitan(out, F, rng):
    ft = {8192: F["torchtitan_8192"], 2048: F["torchtitan_2048"]}
    lines, t = [], 0.0
    tps0 = 5800.0
    for step in range(10, 2001, 10):
        seq = 8192 if step <= 1000 else 2048
        tps = tps0 * (1.12 if seq == 2048 else 1.0) * noise(rng)
        if step == 10:
            tps *= 0.25  # compile and warm-up
        t += 10 * 8192 / tps
        d, ms = ts(t)
        tflops = ft[seq] * tps / 1e12
        mfu = 100 * ft[seq] * tps / 989e12
        lines.append("[rank0]:[titan] %s,%03d - root - INFO - step: %4d  loss: %8.4f  memory: "
                     "49.66GiB(52.28%%)  tps: %s  tflops: %.2f  mfu: %.2f%%"
                     % (d, ms, step, 7.0 - step / 1000, "{:,}".format(round(tps)), tflops, mfu))
    open(out, "w").write("\n".join(lines) + "\n")
    fe8, fe2 = F["exact_llama_8192"], F["exact_llama_2048"]
    return {"change_step": 1010, "tokens_pct": 0.12, "seq_after": 2048,
            "log": {"workload_pct": ft[8192] / ft[2048] - 1,
                    "mfu_pct": 1.12 * ft[2048] / ft[8192] - 1},
            "context": {"workload_pct": fe8 / fe2 - 1, "mfu_pct": 1.12 * fe2 / fe8 - 1}}


def megatron(out, F, rng):
    fm = {4096: F["megatron_4096"], 2048: F["megatron_2048"]}
    args = [
        "------------------------ arguments ------------------------",
        "  global_batch_size ............................... 512",
        "  micro_batch_size ................................ 1",
        "  num_layers ...................................... 32",
        "  seq_length ...................................... 4096",
        "  world_size ...................................... 64",
        "  bf16 ............................................ True",
        "-------------------- end of arguments ---------------------",
    ]
    lines, t, consumed = list(args), 0.0, 0
    for it in range(10, 1001, 10):
        seq = 4096 if it <= 500 else 2048
        flops_gpu = (420e12 if seq == 4096 else 400e12) * noise(rng)
        if it == 10:
            flops_gpu *= 0.5
        itime = fm[seq] * 512 * seq / (flops_gpu * 64)
        t += 10 * itime
        consumed += 10 * 512
        d, _ = ts(t)
        lines.append(" [%s] iteration %8d/    1000 | consumed samples: %12d | elapsed time per "
                     "iteration (ms): %.1f | throughput per GPU (TFLOP/s/GPU): %.1f | learning "
                     "rate: 3.000000E-04 | global batch size:   512 | lm loss: %.6E | loss scale: "
                     "1.0 | grad norm: 1.234 | number of skipped iterations:   0 | number of nan "
                     "iterations:   0 |"
                     % (d, it, consumed, itime * 1000, flops_gpu / 1e12, 3.0 - it / 2000))
    open(out, "w").write("\n".join(lines) + "\n")
    fe4, fe2 = F["exact_llama_4096"], F["exact_llama_2048"]
    fr = 400 / 420
    return {"change_step": 510, "seq_after": 2048,
            "log": {"workload_pct": 2 * fm[4096] / fm[2048] - 1, "flops_pct": fr - 1},
            "context": {"workload_pct": fe4 / fe2 - 1,
                        "mfu_pct": fr * (fe2 / fm[2048]) / (fe4 / fm[4096]) - 1}}


def nanogpt(out, F, rng):
    fn = F["nanogpt_1024"]
    lines = ["tokens per iteration will be: 61,440",
             "Initializing from OpenAI GPT-2 weights: gpt2",
             "number of parameters: 123.65M",
             "compiling the model... (takes a ~minute)"]
    ema = -1.0
    for it in range(0, 4001, 10):
        ga = 5 if it < 2000 else 10
        mfu_true = (0.30 if ga == 5 else 0.33) * noise(rng)
        tokens = 12 * 1024 * ga
        dt = fn * tokens / (mfu_true * 312e12)
        if it == 0:
            dt *= 30  # compilation
        mfu_print = -1.0
        if it >= 50:  # nanoGPT starts its EMA after 5 logged iterations
            ema = mfu_true if ema < 0 else 0.9 * ema + 0.1 * mfu_true
            mfu_print = ema
        lines.append("iter %d: loss %.4f, time %.2fms, mfu %.2f%%"
                     % (it, 4.0 - it / 4000, dt * 1000, 100 * mfu_print))
    open(out, "w").write("\n".join(lines) + "\n")
    return {"change_step": 2000, "tokens_pct": 0.33 / 0.30 - 1, "relative_in_log": True,
            "log": {"workload_pct": 0.0, "mfu_pct": 0.33 / 0.30 - 1},
            "context": {"workload_pct": 0.0, "mfu_pct": 0.33 / 0.30 - 1}}


def llmc(out, F, rng, model_change=False):
    fl = {1024: F["llmc_xl_1024"], 512: F["llmc_xl_512"]}
    lines = ["num_parameters: 1557686400 => bytes: 3115372800",
             "allocated 2971 MiB for model parameters",
             "batch_size B=16 * seq_len T=1024 * num_processes=8 and total_batch_size=1048576",
             "=> setting grad_accum_steps=8"]
    for step in range(1, 1001):
        after = step > 500
        if model_change:
            f = F["llmc_small_1024"] if after else fl[1024]
            mfu = (0.30 if after else 0.47) * noise(rng)
        else:
            f = fl[512] if after else fl[1024]
            mfu = (0.44 if after else 0.47) * noise(rng)
        if step == 1:
            mfu *= 0.9
        tps = mfu * 988.8e12 * 8 / f
        ms = 1048576 / tps * 1000
        lines.append("step %4d/1000 | loss %.6f (+nanz)| norm 1.2345 (+nanz)| lr 3.00e-04 | "
                     "%.2f ms | %.1f%% bf16 MFU | %d tok/s"
                     % (step, 4.0 - step / 2000, ms, 100 * mfu, round(tps)))
    open(out, "w").write("\n".join(lines) + "\n")
    if model_change:
        small = F["exact_small_1024"] / F["exact_xl_1024"]
        q = F["llmc_small_1024"] / fl[1024]
        return {"change_step": 501, "model_change": True, "relative_in_log": True,
                "log": {"workload_pct": 1 / q - 1, "mfu_pct": 0.30 / 0.47 - 1},
                # the log's FLOPs per token scale mfu's count: MFU follows the log's FLOP/s
                "context": {"workload_pct": 1 / q - 1, "mfu_pct": 0.30 / 0.47 - 1},
                "exact_ratio": small}
    fe1, fe5 = F["exact_xl_1024"], F["exact_xl_512"]
    tps_ratio = (0.44 / 0.47) * (fl[1024] / fl[512])
    return {"change_step": 501, "seq_after": 512, "relative_in_log": True,
            "log": {"workload_pct": fl[1024] / fl[512] - 1, "mfu_pct": 0.44 / 0.47 - 1},
            "context": {"workload_pct": fe1 / fe5 - 1, "mfu_pct": tps_ratio * fe5 / fe1 - 1}}


def hf(out, F, rng):
    lines = ["***** Running training *****",
             "  Num examples = 160,000",
             "  Num Epochs = 1",
             "  Instantaneous batch size per device = 8",
             "  Total train batch size (w. parallel, distributed & accumulation) = 8",
             "  Gradient Accumulation steps = 1",
             "  Total optimization steps = 1,000"]
    seen, t = 0, 0.0
    t0 = 0.40
    for step in range(1, 1001):
        batch = 8 if step <= 500 else 16
        st = t0 * (batch / 8) / (1.15 if batch == 16 else 1.0) * noise(rng)
        if step == 1:
            st *= 5
        seen += batch * 1024
        t += st
        if step % 10 == 0:
            pct = step // 10
            lines.append("%3d%%|%-20s| %d/1000 [%02d:%02d<00:00, %.2fs/it]"
                         % (pct, "#" * (pct // 5), step, int(t) // 60, int(t) % 60, st))
            lines.append("{'loss': %.4f, 'grad_norm': 1.2345, 'learning_rate': 5e-05, 'epoch': "
                         "%.2f, 'num_input_tokens_seen': %d}" % (3.0 - step / 1000, step / 1000, seen))
    open(out, "w").write("\n".join(lines) + "\n")
    return {"change_step": 510, "tokens_pct": 0.15,
            "context": {"workload_pct": 0.0, "mfu_pct": 0.15}}


def main():
    if sys.argv[1] == "check":
        check(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5] if len(sys.argv) > 5 else "")
        return
    scen, out, fpath = sys.argv[1], sys.argv[2], sys.argv[3]
    F = json.load(open(fpath))
    rng = random.Random(7)
    fn = {"torchtitan": torchtitan, "megatron": megatron, "nanogpt": nanogpt, "llmc": llmc,
          "llmc_model": lambda o, f, r: llmc(o, f, r, True), "hf": hf}[scen]
    print(json.dumps(fn(out, F, rng)))


def check(report_path, truth_path, mode, want_seq):
    """hidden.py check REPORT.json TRUTH.json log|context [SEQ]: the boundary, the terms, the
    implied sequence length. One line per verdict; exit 1 on any failure."""
    rep, truth = json.load(open(report_path)), json.load(open(truth_path))
    bad = []
    at = truth["change_step"]
    decs = [d for d in rep["decomposition"] if abs(d["at_step"] - at) <= 20]
    if not decs:
        bad.append("no boundary near step %d: %s" % (at, [d["at_step"] for d in rep["decomposition"]]))
    else:
        d = max(decs, key=lambda x: abs(x["terms"]["tokens_per_second"]["dln"] or 0))
        terms = d["terms"]
        want = truth.get(mode, {})
        def near(name, got, w, tol=0.01):
            if got is None or abs(got - w) > tol:
                bad.append("%s: %s, want %+.4f (+- %.2f)" % (name, got, w, tol))
            else:
                print("  %s %+.4f (truth %+.4f)" % (name, got, w))
        if "tokens_pct" in truth:
            near("tokens/s", terms["tokens_per_second"]["pct"], truth["tokens_pct"])
        if "workload_pct" in want:
            near("workload", terms["flops_per_token"]["pct"], want["workload_pct"])
        if "mfu_pct" in want:
            near("MFU", terms["mfu"]["pct"], want["mfu_pct"])
        if "flops_pct" in want:
            if not d.get("capacity_unknown"):
                bad.append("no peak in the log: the decomposition should say capacity_unknown")
            near("FLOP/s per device", terms["mfu"]["pct"], want["flops_pct"])
        if mode == "log" and not want:  # no FLOPs at all (HF): the split is unknown, said so
            if terms["mfu"]["pct"] is not None or "split unknown" not in d["sentence"]:
                bad.append("HF without a model: want 'split unknown', got: " + d["sentence"])
        print("  at step %d: %s" % (d["at_step"], d["sentence"]))
    # a framework's MFU without its peak (llm.c names no device) or without a device count
    # (nanoGPT): FLOPs per token known only as ratios, never printed as figures
    rel = truth.get("relative_in_log", False) and mode == "log"
    if rep["context"].get("flops_relative") != rel:
        bad.append("context.flops_relative: %s, want %s" % (rep["context"].get("flops_relative"), rel))
    for d in rep["decomposition"]:
        if rel and (d["from"]["flops_per_token"] is not None or not d["from"]["flops_relative"]):
            bad.append("FLOPs per token in units of an unknown peak printed as a figure: %s"
                       % d["from"]["flops_per_token"])
    notes = " | ".join(rep["notes"])
    if want_seq and ("imply seq %s " % want_seq) not in notes:
        bad.append("the implied seq %s is not named: %s" % (want_seq, notes))
    if truth.get("model_change") and mode == "context" and "no sequence length" not in notes:
        bad.append("a model change is read as a sequence length: " + notes)
    if mode == "context" and rep["context"]["context_breaks"] < 1:
        bad.append("the context check says the context held throughout")
    for b in bad:
        print("FAIL: " + b)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
