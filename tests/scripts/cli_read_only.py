#!/usr/bin/env python3
"""Read-only guarantee: every command that reads a checkpoint - inspect, validate (with a full
load), load, plan, stats, scales, dequant - leaves every file's bytes and mtime unchanged.

The checkpoints are copied into a temporary folder and made writable first: on the read-only
shared fixtures a stray write would fail and this test could not notice it.

usage: cli_read_only.py WEIGHTSCOPE FIXTURES
"""
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

WS, FX = sys.argv[1], sys.argv[2]
failures = []


def fingerprint(path):
    out = {}
    for root, _, files in os.walk(path):
        for f in files:
            p = os.path.join(root, f)
            st = os.stat(p)
            out[os.path.relpath(p, path)] = (hashlib.sha256(open(p, "rb").read()).hexdigest(), st.st_mtime_ns, st.st_size)
    return out


def commands(path, tensor):
    yield ["inspect", "--json", path]
    yield ["validate", path, "--full-load", "--device", "host"]
    yield ["load", path, "--device", "host"]
    yield ["plan", path, "--ep", "2"]
    yield ["scales", path]
    yield ["stats", path, "--all"]
    yield ["dequant", path, tensor, "--rows", "0:2"]


def first_tensor(path):
    r = subprocess.run([WS, "inspect", "--json", "--flat", path], capture_output=True, text=True)
    return json.loads(r.stdout)["tensors"][0]["name"]


with tempfile.TemporaryDirectory() as tmp:
    checkpoints = []
    for rel in ("hf/qwen3_moe", "hf/qwen3_moe_fp8", "hf/mixtral", "hf/qwen3_vl_moe", "hf/deepseek_v3"):
        dst = os.path.join(tmp, rel.replace("/", "_"))
        shutil.copytree(os.path.join(FX, rel), dst)
        checkpoints.append(dst)
    gdir = os.path.join(tmp, "gguf")
    shutil.copytree(os.path.join(FX, "gguf"), gdir)
    checkpoints += [os.path.join(gdir, "tiny-qwen3moe-kquants.gguf"), os.path.join(gdir, "tiny-qwen3moe-kquants-00001-of-00002.gguf")]
    kt = os.path.join(tmp, "kt")
    subprocess.run([WS, "synth", "--like", "deepseek-v3", "--scheme", "kt-int8", "--numa-nodes", "2", kt], check=True, capture_output=True)
    checkpoints.append(kt)
    for root, dirs, files in os.walk(tmp):
        for n in dirs + files:
            os.chmod(os.path.join(root, n), 0o755 if n in dirs else 0o644)

    ran = 0
    for ckpt in checkpoints:
        scope = ckpt if os.path.isdir(ckpt) else os.path.dirname(ckpt)
        before = fingerprint(scope)
        tensor = first_tensor(ckpt)
        for cmd in commands(ckpt, tensor):
            r = subprocess.run([WS, *cmd], capture_output=True, text=True)
            if r.returncode not in (0, 1):  # 1: findings / over budget, still a completed read
                failures.append(f"{' '.join(cmd)}: exit {r.returncode}: {r.stderr.strip()[:300]}")
            ran += 1
            after = fingerprint(scope)
            if after != before:
                changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
                failures.append(f"{' '.join(cmd)} changed {changed}")
                before = after

for f in failures:
    print("FAIL:", f)
print(f"{ran} commands on {len(checkpoints)} checkpoints: {'all left every file unchanged' if not failures else f'{len(failures)} failures'}")
sys.exit(1 if failures else 0)
