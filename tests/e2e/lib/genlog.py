#!/usr/bin/python3
"""genlog.py - training logs with a known truth, in real formats, for tests/e2e/explain*.sh.

    genlog.py SCENARIO OUT [--seed N] [--steps N] [--flops F1,F2] [--hw H] [--peak P]
                           [--mfu M1,M2] [--noise S]

Every step's time follows from the MFU identity (tokens/s = MFU x devices x peak / FLOPs per
token) with multiplicative noise: AR(1) (phi 0.3) of relative size --noise (default 2 %), a
3-step warm-up (3x, 1.8x, 1.2x slower) and no other trend. FLOPs per token come from the test
(`mfu flops`), so the truth of every decomposition term is known. Scenarios (default 600
steps, the change at the middle):

  seqdrop    Megatron-DeepSpeed lines: sequence 4096 -> 1024 (actual seqlen), global batch
             256 -> 1024 (tokens per step constant), MFU M1 -> M2; 8 devices (argument dump)
  devices    canonical JSON-lines: devices 8 -> 16, MFU M1 -> M2
  stall      canonical: every 50th step (from step 25) takes 0.5 s longer
  throttle   canonical: clock 1980 MHz, 1400 MHz on steps 300-399 (tokens/s x 1400/1980);
             power 650 W of a 700 W limit
  padding    canonical: 30 % of counted tokens are padding (useful_tokens = 0.7 x tokens)
  recompute  canonical: recompute full for the first half, none after; HFU M1 throughout
             (--flops model, --hw hardware FLOPs per token of the full recomputation)
  nanloss    canonical: the loss is NaN (loss_nan) from step 400 on, throughput steady
  straggler  torchtitan lines of 8 ranks ([rankN]: prefixes): rank 3's tps is 12 % lower
  rankrecompute
             canonical lines of 8 ranks ("rank"), each with its own step time: rank 3 is 12 %
             slower; recompute full for the first half, none after (HFU M1 throughout, as
             recompute)
  timers     Megatron-LM lines with the (min, max) timer block: batch-generator 10 % of the
             step, optimizer 3 %
  clean      canonical: steady, nothing to find (a falling loss, clock and power noise)

Standard library only (run with /usr/bin/python3).
"""
import argparse
import json
import math
import random

DEV = 8
TOKENS = 1048576  # tokens per step (256 x 4096)


def noise_series(rng, n, sd, phi=0.3):
    """AR(1) of stationary sd `sd` in log space, as factors."""
    out, x = [], 0.0
    inn = sd * math.sqrt(1 - phi * phi)
    for _ in range(n):
        x = phi * x + rng.gauss(0, inn)
        out.append(math.exp(x))
    return out


def warm(i):
    return (3.0, 1.8, 1.2)[i] if i < 3 else 1.0


def step_time(mfu, dev, peak, fpt, tokens):
    return tokens * fpt / (mfu * dev * peak)


def canonical(path, header, rows):
    with open(path, "w") as f:
        f.write(json.dumps(dict({"mfu_run": 1}, **header), separators=(",", ":")) + "\n")
        for r in rows:
            f.write(json.dumps(r, separators=(",", ":")) + "\n")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("scenario")
    p.add_argument("out")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--steps", type=int, default=600)
    p.add_argument("--flops", default="")
    p.add_argument("--hw", type=float, default=0.0)
    p.add_argument("--peak", type=float, default=989.5e12)
    p.add_argument("--mfu", default="0.45,0.45")
    p.add_argument("--noise", type=float, default=0.02)
    a = p.parse_args()
    rng = random.Random(a.seed)
    n, half = a.steps, a.steps // 2
    fl = [float(x) for x in a.flops.split(",")] if a.flops else [8.0e8, 8.0e8]
    if len(fl) == 1:
        fl.append(fl[0])
    m = [float(x) for x in a.mfu.split(",")]
    if len(m) == 1:
        m.append(m[0])
    z = noise_series(rng, n, a.noise)
    loss = [5.0 * math.exp(-i / 2000.0) + 2.0 + rng.gauss(0, 0.01) for i in range(n)]
    s = a.scenario

    if s == "seqdrop":
        with open(a.out, "w") as f:
            f.write("using world size: %d, data-parallel size: %d\n" % (DEV, DEV))
            f.write("------------------------ arguments ------------------------\n")
            f.write("  bf16 ............................................ True\n")
            f.write("  global_batch_size ............................... 256\n")
            f.write("  seq_length ...................................... 4096\n")
            f.write("  world_size ...................................... %d\n" % DEV)
            f.write("-------------------- end of arguments ---------------------\n")
            for i in range(n):
                second = i >= half
                seq, batch = (1024, 1024) if second else (4096, 256)
                t = step_time(m[1] if second else m[0], DEV, a.peak, fl[1] if second else fl[0],
                              seq * batch) * z[i] * warm(i)
                f.write(" iteration %8d/ 100000 | consumed samples: %12d | elapsed time per "
                        "iteration (ms): %.3f | learning rate: 1.000E-04 | global batch size: "
                        "%5d | lm loss: %.6E | loss scale: 1.0 | actual seqlen: %5d | number of "
                        "skipped iterations:   0 | number of nan iterations:   0 |\n"
                        % (i + 1, (i + 1) * batch, 1000 * t, batch, loss[i], seq))
        return

    if s == "straggler":
        with open(a.out, "w") as f:
            t0 = 1735689600.0
            for i in range(n):
                t = step_time(m[0], DEV, a.peak, fl[0], TOKENS) * z[i] * warm(i)
                t0 += t
                sec = int(t0)
                ms = int((t0 - sec) * 1000)
                stamp = "2025-01-01 %02d:%02d:%02d,%03d" % (
                    (sec // 3600) % 24, (sec // 60) % 60, sec % 60, ms)
                for r in range(DEV):
                    own = t * (1.12 if r == 3 else 1.0) * math.exp(rng.gauss(0, 0.01))
                    tps = TOKENS / DEV / own
                    f.write("[rank%d]:[titan] %s - root - INFO - step: %d  loss: %.4f  memory: "
                            "30.00GiB(37.50%%)  tps: %d  mfu: %.2f%%\n"
                            % (r, stamp, i + 1, loss[i], round(tps), 100 * m[0] * t / own))
        return

    if s == "rankrecompute":
        header = {"format": "generic", "seq_len": 4096, "world_size": DEV, "global_batch": 256,
                  "dtype": "bf16"}
        with open(a.out, "w") as f:
            f.write(json.dumps(dict({"mfu_run": 1}, **header), separators=(",", ":")) + "\n")
            for i in range(n):
                full = i < half
                t = step_time(m[0], DEV, a.peak, a.hw if full else fl[0], TOKENS) * z[i] * warm(i)
                for r in range(DEV):
                    own = t if r == 0 else t * (1.12 if r == 3 else 1.0) * math.exp(
                        rng.gauss(0, 0.01))
                    f.write(json.dumps({"step": i + 1, "rank": r, "tokens": TOKENS,
                                        "loss": round(loss[i], 6),
                                        "recompute": "full" if full else "none",
                                        "step_time_s": round(own, 9)},
                                       separators=(",", ":")) + "\n")
        return

    if s == "timers":
        with open(a.out, "w") as f:
            f.write("------------------------ arguments ------------------------\n")
            f.write("  global_batch_size ............................... 256\n")
            f.write("  seq_length ...................................... 4096\n")
            f.write("  world_size ...................................... %d\n" % DEV)
            f.write("-------------------- end of arguments ---------------------\n")
            for i in range(n):
                t = step_time(m[0], DEV, a.peak, fl[0], TOKENS) * z[i] * warm(i)
                f.write(" iteration %8d/ 100000 | consumed samples: %12d | elapsed time per "
                        "iteration (ms): %.3f | learning rate: 1.000E-04 | global batch size: "
                        "  256 | lm loss: %.6E | loss scale: 1.0 | number of skipped iterations:"
                        "   0 | number of nan iterations:   0 |\n" % (i + 1, (i + 1) * 256,
                                                                      1000 * t, loss[i]))
                f.write("(min, max) time across ranks (ms):\n")
                f.write("    forward-backward ...............................: (%.2f, %.2f)\n"
                        % (800 * t, 860 * t))
                f.write("    batch-generator ................................: (%.2f, %.2f)\n"
                        % (60 * t, 100 * t))
                f.write("    optimizer ......................................: (%.2f, %.2f)\n"
                        % (29 * t, 30 * t))
        return

    header = {"format": "generic", "seq_len": 4096, "world_size": DEV, "global_batch": 256,
              "dtype": "bf16"}
    rows = []
    for i in range(n):
        r = {"step": i + 1, "tokens": TOKENS, "loss": round(loss[i], 6)}
        mi, fi, dev = m[0], fl[0], DEV
        extra = 0.0
        if s == "devices":
            if i >= half:
                mi, dev = m[1], 16
            r["devices"] = dev
        elif s == "stall":
            if i >= 25 and (i - 25) % 50 == 0:
                extra = 0.5
        elif s == "throttle":
            clock = 1400.0 if 300 <= i < 400 else 1980.0
            mi = m[0] * clock / 1980.0
            r["clock_mhz"] = round(clock + rng.gauss(0, 3), 1)
            r["power_w"] = round(650 + rng.gauss(0, 5), 1)
            r["power_limit_w"] = 700
        elif s == "padding":
            r["useful_tokens"] = 0.7 * TOKENS
        elif s == "recompute":
            # HFU m[0] throughout: full recomputation makes every token cost a.hw FLOPs
            full = i < half
            r["recompute"] = "full" if full else "none"
            fi = a.hw if full else fl[0]
        elif s == "nanloss":
            if i >= 400:
                del r["loss"]
                r["loss_nan"] = True
        elif s == "clean":
            r["clock_mhz"] = round(1980 + rng.gauss(0, 4), 1)
            r["power_w"] = round(600 + rng.gauss(0, 15), 1)
            r["power_limit_w"] = 700
        elif s == "steady":
            pass
        else:
            raise SystemExit("genlog.py: unknown scenario " + s)
        t = step_time(mi, dev, a.peak, fi, TOKENS) * z[i] * warm(i) + extra
        r["step_time_s"] = round(t, 9)
        rows.append(r)
    canonical(a.out, header, rows)


if __name__ == "__main__":
    main()
