#!/usr/bin/env python3
"""Open-and-plan speed on full-size MoE checkpoints (sparse synthetic files with every real name
and shape), against Python peers measured in the same run on the same files, warm page cache:

- weightscope: open_bench (open, catalog, structure recognition, EP plan; best of N, in-process)
  and the validation rules that read no weight bytes; and `weightscope inspect --json` as a whole
  process, against a Python process that only json.loads every header;
- safetensors.safe_open listing every tensor's name, dtype and shape, shard by shard;
- a bare loop doing only json.loads of each header (the floor under any Python tool);
- gguf.GGUFReader on a GGUF with the same tensor count as DeepSeek-V3, against open_bench on it;
- the GUI: tree_filter_bench types a filter into the main window's tree, one QTest keystroke at a
  time (best of 3 runs by slowest keystroke).

Prints a Markdown table and, with --write, replaces the open-bench section of docs/benchmarks.md.

usage: run_open_bench.py BUILD_DIR [--data DIR] [--runs N] [--write docs/benchmarks.md]
"""
import argparse
import json
import os
import platform
import struct
import subprocess
import sys
import time

import gguf
import numpy as np
from safetensors import safe_open
from doc_block import replace_block

GOAL_S, GOAL_RSS_MB, GOAL_VS_SAFE_OPEN, GOAL_VS_JSON, GOAL_RULES_S = 0.1, 200, 30, 5, 1.0


def best_of(fn, runs):
    fn()  # warm the page cache and the interpreter
    best = 1e30
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def shards(path):
    return sorted(os.path.join(path, f) for f in os.listdir(path) if f.endswith(".safetensors"))


def safe_open_listing(path):
    n = 0
    for f in shards(path):
        with safe_open(f, "np") as h:
            for k in h.keys():
                s = h.get_slice(k)
                s.get_dtype(), s.get_shape()
                n += 1
    return n


def json_loads_headers(path):
    for f in shards(path):
        with open(f, "rb") as h:
            n = struct.unpack("<Q", h.read(8))[0]
            json.loads(h.read(n))


def process_seconds(cmd, runs):
    """Best wall time of `cmd` run as a whole process (start-up, work, output to /dev/null, exit)."""
    return best_of(lambda: subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL), runs)


# The Python floor as a process: the interpreter starts and json.loads every header.
JSON_LOADS_PROCESS = ("import json, os, struct, sys\n"
                      "d = sys.argv[1]\n"
                      "for f in sorted(os.listdir(d)):\n"
                      "    if f.endswith('.safetensors'):\n"
                      "        with open(os.path.join(d, f), 'rb') as h:\n"
                      "            json.loads(h.read(struct.unpack('<Q', h.read(8))[0]))\n")


def ours(build, path, runs):
    exe = os.path.join(build, "bench", "open_bench")
    subprocess.run([exe, path, "--runs", "1"], check=True, capture_output=True)  # warm
    timed = json.loads(subprocess.run([exe, path, "--runs", str(runs)], check=True, capture_output=True, text=True).stdout)
    single = json.loads(subprocess.run([exe, path, "--runs", "1"], check=True, capture_output=True, text=True).stdout)
    timed["peak_rss_mb"] = single["peak_rss_mb"]  # one open, as a user would see it
    return timed


def ensure(build, data):
    ws = os.path.join(build, "app", "weightscope")
    out = {}
    for label, like, scheme in (("DeepSeek-V3 FP8", "deepseek-v3", "fp8-block"), ("Kimi-K2 INT4", "kimi-k2", "int4-ct")):
        d = os.path.join(data, f"{like}-{scheme}")
        if not os.path.isdir(d):
            subprocess.run([ws, "synth", "--like", like, "--scheme", scheme, "--size", "full", "--sparse", d], check=True)
        out[label] = d
    return out


def many_tensor_gguf(path, count):
    if os.path.exists(path):
        return
    w = gguf.GGUFWriter(path, "llama")
    w.add_block_count(count // 16)
    x = np.zeros(8, dtype=np.float32)
    for i in range(count):
        w.add_tensor(f"blk.{i // 16}.t{i % 16}.weight", x)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--data", default=None)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--write")
    a = ap.parse_args()
    data = a.data or os.path.join(a.build, "bench-data")
    os.makedirs(data, exist_ok=True)
    rows = []
    counts = {}
    for label, path in ensure(a.build, data).items():
        o = ours(a.build, path, a.runs)
        counts[label] = o["tensors"]
        t_safe = best_of(lambda: safe_open_listing(path), a.runs)
        t_json = best_of(lambda: json_loads_headers(path), a.runs)
        ws = os.path.join(a.build, "app", "weightscope")
        t_proc = process_seconds([ws, "inspect", path, "--json"], a.runs)
        t_py_proc = process_seconds([sys.executable, "-c", JSON_LOADS_PROCESS, path], a.runs)
        rows.append((label, o, t_safe, t_json, t_proc, t_py_proc))
    gui = []
    exe = os.path.join(a.build, "bench", "tree_filter_bench")
    if os.path.exists(exe):
        env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
        # the same names typed in each filter mode of the tree
        modes = [("substring", "experts.17.down"), ("glob", "*experts.1?.down*"), ("regex", r"experts\.1[78]\.down")]
        for label, path in ensure(a.build, data).items():
            for mode, text in modes:
                runs = [json.loads(subprocess.run([exe, path, text, mode], check=True, capture_output=True, text=True, env=env).stdout) for _ in range(3)]
                gui.append((label, mode, text, min(runs, key=lambda r: r["keystroke_max_ms"])))
    gpath = os.path.join(data, "many-tensors.gguf")
    many_tensor_gguf(gpath, counts["DeepSeek-V3 FP8"])
    og = ours(a.build, gpath, a.runs)
    t_reader = best_of(lambda: gguf.GGUFReader(gpath), a.runs)

    cpu = platform.processor() or "x86-64"
    lines = [f"Machine: {os.cpu_count()} cores ({cpu}), warm page cache; best of {a.runs} runs each side. "
             "weightscope times are in-process (open_bench), Python peers are timed around the call.", "",
             "| checkpoint | tensors | files | weightscope open + plan | peak RSS | bytes/record | safe_open listing | ratio (goal >= 30x) | json.loads only | ratio (goal >= 5x) | no-weight-bytes rules (goal <= 1 s) |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for label, o, t_safe, t_json, _, _ in rows:
        t = o["open_plan_s"]
        rec = o["record_bytes"] + o["record_heap_bytes_avg"]
        lines.append(f"| {label} | {o['tensors']:,} | {o['files']} | {t * 1000:.0f} ms (goal <= {GOAL_S * 1000:.0f}) | {o['peak_rss_mb']:.0f} MB (goal <= {GOAL_RSS_MB}) | "
                     f"{rec:.0f} | {t_safe * 1000:.0f} ms | {t_safe / t:.1f}x | {t_json * 1000:.0f} ms | {t_json / t:.1f}x | {o['structure_rules_s'] * 1000:.0f} ms |")
    lines += ["", "As users run it, whole processes (start-up, work, output to /dev/null, exit), best of the same runs:", "",
              "| checkpoint | `weightscope inspect PATH --json` (goal <= 100 ms) | Python process doing only json.loads of every header | ratio |",
              "|---|---:|---:|---:|"]
    for label, _, _, _, t_proc, t_py_proc in rows:
        lines.append(f"| {label} | {t_proc * 1000:.0f} ms | {t_py_proc * 1000:.0f} ms | {t_py_proc / t_proc:.1f}x |")
    lines += ["", "| GGUF | tensors | weightscope open | gguf.GGUFReader | ratio |", "|---|---:|---:|---:|---:|",
              f"| {og['tensors']:,} tiny F32 tensors | {og['tensors']:,} | {og['open_s'] * 1000:.0f} ms | {t_reader * 1000:.0f} ms | {t_reader / og['open_s']:.1f}x |"]
    if gui:
        lines += ["", "| GUI (offscreen, QTest keystrokes typing the filter; then 200 page-downs through the expanded tree) | filter typed | tensors | slowest keystroke (goal <= 100 ms) | median keystroke | slowest / median scroll frame | openPath to a usable tree |",
                  "|---|---|---:|---:|---:|---:|---:|"]
        for label, mode, text, g in gui:
            lines.append(f"| {label} | {mode} `{text}` | {g['tensors']:,} | {g['keystroke_max_ms']:.0f} ms | {g['keystroke_median_ms']:.0f} ms | "
                         f"{g['scroll_frame_max_ms']:.0f} / {g['scroll_frame_median_ms']:.0f} ms | {g['open_to_tree_ms']:.0f} ms |")
    table = "\n".join(lines)
    print(table)
    if a.write:
        replace_block(a.write, "open-bench", table)


if __name__ == "__main__":
    main()
