#!/usr/bin/env python3
"""Remote open at real round-trip times: `weightscope inspect hf://... --json --no-cache` of the
full-size sparse DeepSeek-V3 (163 shards, every real name and shape) against hf-mem 0.5.6 (PyPI,
the test venv) on the same Hub-shaped server (tests/scripts/hub_server.py, a separate process) that holds
every answer back by 0, 10, 30 and 100 ms, in the same run. weightscope is timed as a whole process
(start-up included); hf-mem as its own `arun` coroutine inside an already started interpreter (its
imports and start-up excluded: the stricter comparison for weightscope), its https://huggingface.co
URLs pointed at the server. Both are counted by the server's own request count. Best of N runs.

Prints a Markdown table and, with --write, replaces the remote-bench section of docs/benchmarks.md.

usage: run_remote_bench.py BUILD_DIR [--runs N] [--delays 0,10,30,100] [--write docs/benchmarks.md]
"""
import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time
import urllib.request

from doc_block import replace_block

HERE = os.path.dirname(os.path.abspath(__file__))
GOAL = 3.0
REPO = "bench/deepseek-v3"

# hf-mem, in a process of its own started once per delay: every https://huggingface.co URL it asks
# for goes to the bench server; it prints the seconds of each arun.
HF_MEM = r"""
import asyncio, sys, time
import httpx2
base, runs = sys.argv[1], int(sys.argv[2])
get = httpx2.AsyncClient.get
async def local_get(self, url, *a, **k):
    return await get(self, str(url).replace("https://huggingface.co", base), *a, **k)
httpx2.AsyncClient.get = local_get
from hf_mem.run import arun
for _ in range(runs):
    t0 = time.perf_counter()
    r = asyncio.run(arun(model_id="%s"))
    print(time.perf_counter() - t0, flush=True)
""" % REPO


def server(delay_ms, folder):
    p = subprocess.Popen([sys.executable, os.path.join(HERE, "..", "tests", "scripts", "hub_server.py"), str(delay_ms / 1000), f"{REPO}={folder}"], stdout=subprocess.PIPE, text=True)
    return p, int(p.stdout.readline())


def count(port):
    return int(urllib.request.urlopen(f"http://127.0.0.1:{port}/__count").read())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--delays", default="0,10,30,100")
    ap.add_argument("--write")
    a = ap.parse_args()
    ws = os.path.join(a.build, "app", "weightscope")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = os.path.join(tmp, "deepseek-v3")
        subprocess.run([ws, "synth", "--like", "deepseek-v3", "--scheme", "fp8-block", "--size", "full", "--sparse", folder], check=True, capture_output=True)
        files = len([n for n in os.listdir(folder) if n.endswith(".safetensors")])
        for delay in [int(d) for d in a.delays.split(",")]:
            srv, port = server(delay, folder)
            try:
                env = dict(os.environ, HF_ENDPOINT=f"http://127.0.0.1:{port}", XDG_CACHE_HOME=os.path.join(tmp, "cache"))
                env.pop("HF_TOKEN", None)
                ours, ours_requests = 1e30, 0
                for _ in range(a.runs):
                    before = count(port)
                    t0 = time.perf_counter()
                    r = subprocess.run([ws, "inspect", "hf://" + REPO, "--json", "--no-cache"], capture_output=True, env=env)
                    took = time.perf_counter() - t0
                    if r.returncode != 0:
                        raise SystemExit(f"weightscope: exit {r.returncode}: {r.stderr.decode()[:300]}")
                    ours, ours_requests = min(ours, took), count(port) - before
                before = count(port)
                h = subprocess.run([sys.executable, "-c", HF_MEM, f"http://127.0.0.1:{port}", str(a.runs)], capture_output=True, text=True, env=env)
                if h.returncode != 0:
                    raise SystemExit(f"hf-mem: exit {h.returncode}: {h.stderr[-500:]}")
                theirs = min(float(x) for x in h.stdout.split())
                theirs_requests = (count(port) - before) // a.runs
            finally:
                srv.kill()
                srv.wait()
            rows.append((delay, ours, ours_requests, theirs, theirs_requests))
            print(f"delay {delay} ms: weightscope {ours:.3f} s ({ours_requests} requests), hf-mem {theirs:.3f} s ({theirs_requests} requests)", file=sys.stderr)
    lines = [f"DeepSeek-V3 full-size sparse ({files} shards), `python3 bench/run_remote_bench.py build --runs {a.runs}` on {platform.processor() or platform.machine()}, "
             f"{os.cpu_count()} cores; best of {a.runs}. weightscope: `inspect hf://... --json --no-cache`, whole process; hf-mem 0.5.6: its `arun`, "
             f"interpreter start-up excluded. Goal: {GOAL:g}x at every delay, and no more requests than files + list + index + config ({files + 3}).",
             "",
             "| delay a request | weightscope | requests | hf-mem | requests | hf-mem / weightscope | goal |",
             "|---|---|---|---|---|---|---|"]
    for delay, ours, oreq, theirs, treq in rows:
        ratio = theirs / ours
        lines.append(f"| {delay} ms | {ours:.3f} s | {oreq} | {theirs:.3f} s | {treq} | {ratio:.1f}x | {'met' if ratio >= GOAL and oreq <= files + 3 else 'not met'} |")
    table = "\n".join(lines)
    print(table)
    if a.write:
        replace_block(a.write, "remote-bench", table)


if __name__ == "__main__":
    main()
