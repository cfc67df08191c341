#!/usr/bin/env python3
"""What the expert-health rules cost the value pass: `weightscope validate PATH --rules values`
(every weight and scale decoded and checked; windows of every routed expert's stored bytes fingerprinted,
WS-V013; every routed expert projection sampled and sketched, WS-V015 / WS-V016, and the
candidates decoded whole) against the same pass with `--skip-rules WS-V013,WS-V015,WS-V016`, run side by
side on the same files with the page cache warm (bench/run_scan_bench.py's `paired`: the median of
the per-run ratios). Issue 53's goal: the expert-health additions cost at most 25% of the pass.

The checkpoints are written here with real bytes by `weightscope synth`: DeepSeek-V3-shaped FP8
blocks and BF16 (per-expert tensors), a Kimi-K2-shaped INT4 compressed-tensors one, and a GGUF
Q4_K one (stacked experts: each expert a slice of ffn_*_exps).

Prints a Markdown table and, with --write, replaces its block in docs/benchmarks.md
(between the expert-health-bench markers; bench/doc_block.py).

usage: run_expert_health_bench.py BUILD_DIR [--data DIR] [--runs N] [--write docs/benchmarks.md]
"""
import argparse
import os
import platform
import subprocess

from doc_block import cpu_name, replace_block
from run_scan_bench import paired

GOAL = 0.25
SHAPE = ["--layers", "4", "--dense-layers", "1", "--experts", "64", "--hidden", "2048", "--intermediate", "1024"]
CHECKPOINTS = {
    "deepseek-v3 fp8-block": ["--like", "deepseek-v3", "--scheme", "fp8-block", *SHAPE, "--shards", "4"],
    "deepseek-v3 bf16": ["--like", "deepseek-v3", "--scheme", "bf16", *SHAPE, "--shards", "4"],
    "kimi-k2 int4-ct": ["--like", "kimi-k2", "--scheme", "int4-ct", *SHAPE, "--shards", "4"],
    "qwen3-moe gguf-q4_k": ["--like", "qwen3-moe", "--scheme", "gguf-q4_k", *SHAPE],
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--data", default="/tmp/ws-expert-health-bench")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--write")
    a = ap.parse_args()
    ws = os.path.join(a.build, "app", "weightscope")
    rows = []
    for name, args in CHECKPOINTS.items():
        path = os.path.join(a.data, name.replace(" ", "-"))
        if not os.path.exists(path):
            subprocess.run([ws, "synth", *args, path], check=True, stdout=subprocess.DEVNULL)
        size = sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(path) for f in fs)

        def run(*extra):
            return lambda: subprocess.run([ws, "validate", path, "--rules", "values", "--format", "json", *extra], capture_output=True, text=True)

        t_with, _, t_without, _, ratio = paired(run(), run("--skip-rules", "WS-V013,WS-V015,WS-V016"), False, path, a.runs)
        rows.append((name, size, t_with, t_without, ratio))
        print(f"{name}: {size / 2**30:.2f} GiB, with {t_with:.3f} s, without {t_without:.3f} s, ratio {ratio:.3f}", flush=True)
    table = ["| checkpoint | GiB | values pass with fingerprints and samples (s) | without (s) | cost (median ratio - 1) | goal <= 25% |", "|---|---|---|---|---|---|"]
    for name, size, tw, to, ratio in rows:
        table.append(f"| {name} | {size / 2**30:.2f} | {tw:.3f} | {to:.3f} | {100 * (ratio - 1):+.1f}% | {'met' if ratio - 1 <= GOAL else 'missed'} |")
    text = (f"The expert-health rules - WS-V013's fingerprints (xxHash XXH3 of four 4 KiB windows of every routed expert's stored bytes, read with pread; every byte of the experts they find alike), WS-V015 / WS-V016's samples "
            f"(1024 values of each routed expert projection decoded and projected on 64 directions) - against the value pass without them, page cache warm, "
            f"best of {a.runs} paired runs each and the median of the per-run ratios, on {cpu_name()} ({os.cpu_count()} cores, {platform.system()}). "
            f"Command: `python3 bench/run_expert_health_bench.py build --write docs/benchmarks.md`.\n\n" + "\n".join(table))
    print(text)
    if a.write:
        replace_block(a.write, "expert-health-bench", "## Expert health: fingerprints and samples (validate --values, WS-V013, WS-V015, WS-V016)\n\n" + text)


if __name__ == "__main__":
    main()
