#!/usr/bin/env python3
"""Opening a vocabulary GGUF of 256,000 tokens (253,333 merges, token types and scores, three chat
templates: tests/scripts/reference_metadata.py's file, written as llama.cpp's converter writes one)
as whole processes, warm page cache, best of N: `weightscope inspect --json` and `inspect` against
a Python process that only constructs gguf-py's GGUFReader on it (the reader gguf_dump uses).

usage: .venv/bin/python bench/run_vocab_bench.py BUILD_DIR [--runs N]
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "scripts"))


def best(cmd, runs):
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run(cmd, capture_output=True, check=True)
        times.append(time.perf_counter() - t)
    return min(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    ws = os.path.join(a.build, "app", "weightscope")
    sys.argv = [sys.argv[0], ws, ""]  # reference_metadata reads its arguments at import
    import importlib.util
    spec = importlib.util.spec_from_file_location("refmeta_writer", os.path.join(HERE, "..", "tests", "scripts", "reference_metadata.py"))
    src = open(spec.origin).read()
    src = src[:src.index("with tempfile.TemporaryDirectory() as tmp:")]  # the writer, not the checks
    ns = {"__name__": "refmeta_writer", "__file__": spec.origin}
    exec(compile(src, spec.origin, "exec"), ns)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "vocab.gguf")
        ns["write_vocab"](path)
        j = best([ws, "inspect", path, "--json"], a.runs)
        t = best([ws, "inspect", path], a.runs)
        py = best([sys.executable, "-c", f"from gguf import GGUFReader; GGUFReader({path!r})"], a.runs)
        print(f"| file | weightscope inspect --json | weightscope inspect | GGUFReader(path) in a Python process | ratio |")
        print(f"|---|---|---|---|---|")
        print(f"| {os.path.getsize(path):,} bytes | {j:.3f} s | {t:.3f} s | {py:.3f} s | {py / j:.0f}x |")


if __name__ == "__main__":
    main()
