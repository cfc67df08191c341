#!/usr/bin/env python3
"""Value scans against the storage's own rate, measured in the same run on the same files, page
cache warm and cold (cold: the files evicted before each run, by /proc/sys/vm/drop_caches where
it can be written, else posix_fadvise(DONTNEED) per file):

- `weightscope validate PATH --rules values` (every weight and scale decoded and checked) against
  `cat` of all the checkpoint's files to /dev/null: the rate is the bytes each read over its wall
  time, and the goal is at least 80% of cat's;
- `weightscope scales PATH --json` (only the scale bytes) against a Python loop that only preads
  the same scale tensors' byte ranges (the floor under any tool that reads them). The loop is
  handed the ranges; `scales` has to start and open the checkpoint first, so the start-up and
  open alone (`weightscope inspect PATH --filter` matching nothing) are timed too, and the loop is
  also set against `scales` less that time: how the pass itself compares. And against
  bench/scale_count_floor, which reads the same ranges on every core and counts each 16-bit code
  in a table, the one store a scale that every statistic `scales` reports follows from, and does
  nothing else: the least a pass that counts every scale by its code can cost. And, as the
  distributed issue words its goal, the rate `scales` reads the scale bytes at against cat's rate
  over the files (the storage's rate).

The checkpoints are written here with real (not sparse) bytes by `weightscope synth`: a
DeepSeek-V3-shaped FP8 block checkpoint and a Kimi-K2-shaped INT4 (compressed-tensors) one, a few
GB each, so the cold runs read from the disk.

Prints a Markdown table and, with --write, replaces its paragraph and table in docs/benchmarks.md
(between the scan-bench markers; bench/doc_block.py).

usage: run_scan_bench.py BUILD_DIR [--data DIR] [--runs N] [--write docs/benchmarks.md]
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import time

from doc_block import replace_block

GOAL = 0.80
CHECKPOINTS = {
    "deepseek-v3 fp8-block": ["--like", "deepseek-v3", "--scheme", "fp8-block", "--layers", "8", "--dense-layers", "1", "--experts", "64",
                              "--hidden", "2048", "--intermediate", "1024", "--shards", "8"],
    "kimi-k2 int4-ct": ["--like", "kimi-k2", "--scheme", "int4-ct", "--layers", "8", "--dense-layers", "1", "--experts", "96",
                        "--hidden", "2048", "--intermediate", "1024", "--shards", "8"],
}
SCALE_COMPONENTS = {"scale", "global_scale"}


def files_of(path):
    return sorted(os.path.join(path, f) for f in os.listdir(path) if f.endswith(".safetensors"))


def evict(path):
    try:
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
        return "drop_caches"
    except OSError:
        for p in files_of(path):
            fd = os.open(p, os.O_RDONLY)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            os.close(fd)
        return "fadvise"


def once(fn, cold, path):
    if cold:
        evict(path)
    else:
        fn()  # warm: a first pass fills the page cache
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def timed(fn, cold, path, runs, self_timed=False):
    """The best time of `runs` runs of fn, and what it returned. self_timed: fn returns (seconds,
    result), the time its program measured around its own work."""
    best, out = 1e30, None
    for _ in range(runs):
        t, out = once(fn, cold, path)
        if self_timed:
            t, out = out
        best = min(best, t)
    return best, out


def paired(fa, fb, cold, path, runs):
    """Runs a then b, `runs` times: the best time of each, what each returned, and the median of
    the per-run ratios t_a / t_b. This machine's speed drifts within a session (cat's warm rate
    ranged over 10-25 GB/s); a ratio of runs taken side by side follows the drift, a ratio of
    two best times taken minutes apart need not."""
    ta, tb, ratios = [], [], []
    for _ in range(runs):
        t1, a = once(fa, cold, path)
        t2, b = once(fb, cold, path)
        ta.append(t1), tb.append(t2), ratios.append(t1 / t2)
    ratios.sort()
    return min(ta), a, min(tb), b, ratios[len(ratios) // 2]


def goal(ratio):
    return f"{100 * ratio:.0f}%{'' if ratio >= GOAL else ' (below the goal)'}"


def ms(t):
    return "-" if t is None else f"{1e3 * t:.0f} ms"


def cat(path):
    subprocess.run(["cat", *files_of(path)], stdout=subprocess.DEVNULL, check=True)
    return sum(os.path.getsize(p) for p in files_of(path))


def pread_ranges(ranges):
    n = 0
    fds = {}
    for path, offset, size in ranges:
        fd = fds.get(path) or fds.setdefault(path, os.open(path, os.O_RDONLY))
        n += len(os.pread(fd, size, offset))
    for fd in fds.values():
        os.close(fd)
    return n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--data", default="/tmp/ws-scan-bench")
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--write")
    a = ap.parse_args()
    ws = os.path.join(a.build, "app", "weightscope")
    floor = os.path.join(a.build, "bench", "scale_count_floor")
    os.makedirs(a.data, exist_ok=True)
    rows = []
    for name, args in CHECKPOINTS.items():
        path = os.path.join(a.data, name.replace(" ", "-"))
        if not os.path.exists(os.path.join(path, "config.json")):
            subprocess.run([ws, "synth", *args, path], check=True, stdout=subprocess.DEVNULL)
        inspect = json.loads(subprocess.run([ws, "inspect", path, "--json"], capture_output=True, text=True, check=True).stdout)
        names = [f["path"] for f in inspect["files"]]
        scale_tensors = [t for t in inspect["tensors"] if t["component"] in SCALE_COMPONENTS]
        ranges = [(names[t["file"]], t["offset"], t["bytes"]) for t in scale_tensors]
        # The floor counts 16-bit codes; the FP8 checkpoint's block scales are F32.
        sixteen_bit = all(t["dtype"] in ("BF16", "F16") for t in scale_tensors)
        total = sum(os.path.getsize(p) for p in files_of(path))

        def validate():
            r = subprocess.run([ws, "validate", path, "--rules", "values", "--format", "json"], capture_output=True, text=True)
            return json.loads(r.stdout)["summary"]["bytes_read"]

        def scales():
            r = subprocess.run([ws, "scales", path, "--json"], capture_output=True, text=True, check=True)
            return json.loads(r.stdout)["bytes_read"]

        def count_floor():
            r = subprocess.run([floor], input="".join(f"{p} {o} {n}\n" for p, o, n in ranges), capture_output=True, text=True, check=True)
            millis, codes = r.stdout.split()[0::2]
            return float(millis) / 1e3, int(codes)

        def open_only():
            subprocess.run([ws, "inspect", path, "--filter", "no tensor is named this"], stdout=subprocess.DEVNULL, check=True)

        for cold in (False, True):
            cache = "cold" if cold else "warm"
            t_cat, n_cat, t_val, n_val, ratio = paired(lambda: cat(path), validate, cold, path, a.runs)
            t_sc, n_sc = timed(scales, cold, path, a.runs)
            t_pr, n_pr = timed(lambda: pread_ranges(ranges), cold, path, a.runs)
            t_open, _ = timed(open_only, cold, path, a.runs)
            t_floor = None
            if sixteen_bit:
                t_floor, n_floor = timed(count_floor, cold, path, a.runs, self_timed=True)
                assert n_floor == n_sc // 2, f"the floor counted {n_floor} codes in {n_sc} scale bytes"
            assert n_pr == n_sc, f"the pread loop read {n_pr} scale bytes, scales {n_sc}"
            # Both rates over the checkpoint's files (validate's own count leaves out the headers
            # and the tensors no value rule reads, such as biases).
            rows.append((name, cache, total, n_cat / t_cat, n_val, total / t_val, ratio, n_sc, t_sc, t_pr, t_open, t_floor))
            print(f"{name} {cache}: cat {n_cat / t_cat / 1e9:.2f} GB/s; validate --values {total / t_val / 1e9:.2f} GB/s "
                  f"({100 * ratio:.0f}% of cat, median of paired runs; it read {n_val:,} B); scales {n_sc:,} B in {1e3 * t_sc:.0f} ms ({n_sc / t_sc / 1e9:.2f} GB/s), pread loop {1e3 * t_pr:.0f} ms, "
                  f"start-up and open {1e3 * t_open:.0f} ms, read + count floor {ms(t_floor)}", flush=True)
    cpu = platform.processor() or platform.machine()
    lines = [f"`python3 bench/run_scan_bench.py build --runs {a.runs}` on this machine ({os.cpu_count()} cores, {cpu}): {a.runs} runs of cat "
             "each followed by one of validate; rates are the best of each, *of cat* the median of the runs' time ratios (cat / validate). "
             "Cold: the page cache dropped before each run. Checkpoints written by `weightscope synth` with real bytes (not sparse). "
             "`validate --rules values` checks every weight and scale; its rate is the checkpoint's file bytes over its wall time "
             "(*validate read*: the bytes it read, by its own report), against `cat` of all the files to /dev/null. "
             "`scales` reads only the scale tensors, against a Python loop "
             "that only preads the same byte ranges (inside this script's process: no start-up, no open; *of loop*: the loop's time "
             "over that of `scales`; *open*: `inspect` with a filter that matches nothing, the start-up and open alone; *of loop, open "
             "aside*: the loop's time over that of `scales` less *open*, all three the best of their runs; *count floor*: "
             "bench/scale_count_floor, which reads the same ranges on every core and counts each scale's code in a table, the "
             "least a pass that counts every scale by its code can do, timed by itself, for 16-bit scales only; *of floor, open aside*: its time over that of "
             "`scales` less *open*; *scales, of cat*: the scale bytes over the best time of `scales`, against cat's best rate). "
             "Goal: at least 80% of cat's rate.", "",
             "| checkpoint | page cache | files | cat | validate --values | of cat | validate read | scale bytes | scales | scales, of cat | pread loop "
             "| of loop | open | of loop, open aside | count floor | of floor, open aside |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, cache, total, cat_rate, n_val, val_rate, ratio, n_sc, t_sc, t_pr, t_open, t_floor in rows:
        def open_aside(t):  # "-" without a floor, or where the pass is within the noise of the open
            return f"{100 * t / (t_sc - t_open):.0f}%" if t is not None and t_sc > t_open else "-"
        lines.append(f"| {name} | {cache} | {total / 1e9:.2f} GB | {cat_rate / 1e9:.2f} GB/s | {val_rate / 1e9:.2f} GB/s | "
                     f"{goal(ratio)} | {n_val / 1e9:.2f} GB | "
                     f"{n_sc / 1e6:.1f} MB | {1e3 * t_sc:.0f} ms | {goal(n_sc / t_sc / cat_rate)} | {1e3 * t_pr:.0f} ms | {100 * t_pr / t_sc:.0f}% | "
                     f"{1e3 * t_open:.0f} ms | {open_aside(t_pr)} | {ms(t_floor)} | {open_aside(t_floor)} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if a.write:
        replace_block(a.write, "scan-bench", text)


if __name__ == "__main__":
    sys.exit(main())
