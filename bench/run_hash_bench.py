#!/usr/bin/env python3
"""Checking a download against the Hub: `weightscope validate DIR --hub hf://... --rules hub` (the
Hub's record fetched from tests/scripts/hub_server.py, every file's sha256 on all cores) against
`sha256sum` of the same files, one process, in the same run, page cache warm for both (each run
once before timing). The files are random bytes written here (FILES x SIZE MiB of .safetensors
named shards; their content is not parsed by the hub rules). Best of N.

Prints a Markdown table and, with --write, replaces the hash-bench section of docs/benchmarks.md.

usage: run_hash_bench.py BUILD_DIR [--files 4] [--mib 256] [--runs 3] [--write docs/benchmarks.md]
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

from doc_block import cpu_name, replace_block

HERE = os.path.dirname(os.path.abspath(__file__))


def best(cmd, runs, env=None):
    subprocess.run(cmd, capture_output=True, env=env)  # warm
    t = 1e30
    for _ in range(runs):
        t0 = time.perf_counter()
        r = subprocess.run(cmd, capture_output=True, env=env)
        t = min(t, time.perf_counter() - t0)
    return t, r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--files", type=int, default=4)
    ap.add_argument("--mib", type=int, default=256)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--write")
    a = ap.parse_args()
    ws = os.path.join(a.build, "app", "weightscope")
    with tempfile.TemporaryDirectory() as tmp:
        folder = os.path.join(tmp, "model")
        os.makedirs(folder)
        names = [f"model-{i + 1:05d}-of-{a.files:05d}.safetensors" for i in range(a.files)]
        for n in names:  # a valid empty safetensors header, then random bytes the header does not claim
            with open(os.path.join(folder, n), "wb") as f:
                f.write((2).to_bytes(8, "little") + b"{}")
                for _ in range(a.mib):
                    f.write(os.urandom(1 << 20))
        srv = subprocess.Popen([sys.executable, os.path.join(HERE, "..", "tests", "scripts", "hub_server.py"), "0", f"bench/hash={folder}"], stdout=subprocess.PIPE, text=True)
        try:
            port = int(srv.stdout.readline())
            env = dict(os.environ, HF_ENDPOINT=f"http://127.0.0.1:{port}")
            env.pop("HF_TOKEN", None)
            ours, r = best([ws, "validate", folder, "--hub", "hf://bench/hash", "--rules", "hub", "--format", "json"], a.runs, env)
            if r.returncode != 0:
                raise SystemExit(f"weightscope: exit {r.returncode}: {r.stderr.decode()[:300]} {r.stdout.decode()[:300]}")
            theirs, r = best(["sha256sum", *[os.path.join(folder, n) for n in names]], a.runs)
        finally:
            srv.kill()
            srv.wait()
    gib = a.files * a.mib / 1024
    table = "\n".join([
        f"{a.files} files of {a.mib} MiB ({gib:.1f} GiB), page cache warm, best of {a.runs}; {cpu_name()}, {os.cpu_count()} cores. "
        f"`python3 bench/run_hash_bench.py build --files {a.files} --mib {a.mib} --runs {a.runs}`.",
        "",
        "| tool | seconds | GiB/s | sha256sum / tool |",
        "|---|---|---|---|",
        f"| `weightscope validate DIR --hub hf://... --rules hub` (open, the Hub's record, every sha256) | {ours:.2f} | {gib / ours:.2f} | {theirs / ours:.2f}x |",
        f"| `sha256sum` of the same files (one process) | {theirs:.2f} | {gib / theirs:.2f} | 1.00x |",
    ])
    print(table)
    if a.write:
        replace_block(a.write, "hash-bench", table)


if __name__ == "__main__":
    main()
