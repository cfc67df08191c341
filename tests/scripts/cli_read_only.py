#!/usr/bin/env python3
"""Read-only guarantee: every command that reads a checkpoint, and the GUI, leaves every file of it
unchanged - checked two ways:

1. Writable copies: the checkpoints are copied into a temporary folder and made writable; after
   each command every file's bytes, mtime and size must be as before (only an output the command
   was asked to write next to the checkpoint may appear).
2. Where a write would fail: the same commands on the copies made read-only (files 0444, folders
   0555) and, when this runs as root (for whom modes mean nothing), run as the unprivileged user
   `nobody` through setpriv. A command that opened a checkpoint file for writing would fail here
   instead of passing silently.

Every command `weightscope --help` lists must be covered here except `synth`, whose job is to write
a checkpoint: a new command without a read-only check fails this test.

usage: cli_read_only.py WEIGHTSCOPE FIXTURES
"""
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

WS, FX = sys.argv[1], sys.argv[2]
HAS_GUI = "--screenshot" in subprocess.run([WS, "--help"], capture_output=True, text=True).stdout
failures = []
WRITERS = {"synth"}  # commands whose purpose is writing a checkpoint


def fingerprint(path):
    out = {}
    for root, _, files in os.walk(path):
        for f in files:
            p = os.path.join(root, f)
            st = os.stat(p)
            out[os.path.relpath(p, path)] = (hashlib.sha256(open(p, "rb").read()).hexdigest(), st.st_mtime_ns, st.st_size)
    return out


def commands(path, tensor, other, out):
    """(command name, arguments) for everything that reads `path`; `other` is a second checkpoint,
    `out` a file next to the checkpoint (None where nothing may be written)."""
    yield "inspect", ["inspect", path]
    yield "inspect", ["inspect", "--json", path]
    yield "meta", ["meta", path]
    yield "validate", ["validate", path, "--full-load", "--device", "host"]
    yield "validate", ["validate", path, "--against", other]
    yield "load", ["load", path, "--device", "host", "--derive", "fused-gate-up,transpose,bf16", "--verify"]
    yield "plan", ["plan", path, "--ep", "2"]
    yield "scales", ["scales", path]
    yield "stats", ["stats", path, "--all"]
    yield "dequant", ["dequant", path, tensor, "--rows", "0:2"]
    if out:
        yield "dequant", ["dequant", path, tensor, "--rows", "0:2", "--out", out]
    yield "diff", ["diff", path, other]
    if HAS_GUI:  # a build with the GUI off (the GPU machine's) has no window to open
        yield "gui", ["--screenshot", os.path.join(SHOTS, "shot.png"), path]


def first_tensor(path):
    r = subprocess.run([WS, "inspect", "--json", "--flat", path], capture_output=True, text=True)
    return json.loads(r.stdout)["tensors"][0]["name"]


def listed_commands():
    r = subprocess.run([WS, "--help"], capture_output=True, text=True)
    block = r.stdout.split("commands:", 1)[1].split("\n\n", 1)[0]
    return {m.group(1) for m in re.finditer(r"^  (\S+)", block, re.M)}


def run(cmd, as_nobody):
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", HOME=SHOTS, XDG_CONFIG_HOME=SHOTS, XDG_CACHE_HOME=SHOTS)
    prefix = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"] if as_nobody else []
    return subprocess.run(prefix + [WS, *cmd], capture_output=True, text=True, env=env)


with tempfile.TemporaryDirectory() as tmp:
    os.chmod(tmp, 0o755)
    SHOTS = os.path.join(tmp, "shots")  # where the GUI may write (its screenshot, its settings)
    os.makedirs(SHOTS)
    os.chmod(SHOTS, 0o777)
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

    def set_modes(writable):
        for root, dirs, files in os.walk(tmp):
            if root.startswith(SHOTS):
                continue
            for n in dirs + files:
                p = os.path.join(root, n)
                if p != SHOTS:
                    os.chmod(p, (0o755 if writable else 0o555) if n in dirs else (0o644 if writable else 0o444))

    as_nobody = os.geteuid() == 0
    if as_nobody and run(["--version"], True).returncode != 0:
        # nobody cannot reach the binary (a private build folder): the read-only pass still runs,
        # as root, where file modes do not stop writes - say so rather than pass quietly
        print("NOTE: the binary is not executable by nobody here; the read-only pass runs as root")
        as_nobody = False
    covered, ran = set(), 0
    for writable in (True, False):
        set_modes(writable)
        for i, ckpt in enumerate(checkpoints):
            scope = ckpt if os.path.isdir(ckpt) else os.path.dirname(ckpt)
            other = checkpoints[(i + 1) % len(checkpoints)]
            out = os.path.join(scope, "out.npy") if writable else None
            before = fingerprint(scope)
            tensor = first_tensor(ckpt)
            for name, cmd in commands(ckpt, tensor, other, out):
                r = run(cmd, as_nobody and not writable)
                where = "writable" if writable else ("read-only, as nobody" if as_nobody else "read-only")
                if r.returncode not in (0, 1):  # 1: findings / differences / over budget, still a completed read
                    failures.append(f"[{where}] {' '.join(cmd)}: exit {r.returncode}: {r.stderr.strip()[:300]}")
                covered.add(name)
                if name == "gui" and os.path.exists(os.path.join(SHOTS, "shot.png")):
                    os.remove(os.path.join(SHOTS, "shot.png"))  # the next run (perhaps as nobody) writes its own
                ran += 1
                after = fingerprint(scope)
                after.pop("out.npy", None)  # the output asked for, next to the checkpoint
                if after != before:
                    changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
                    failures.append(f"[{where}] {' '.join(cmd)} changed {changed}")
                    before = after
            if out and os.path.exists(out):
                os.remove(out)
    set_modes(True)  # so the temporary folder can be removed

    missing = listed_commands() - WRITERS - covered
    if missing:
        failures.append(f"commands with no read-only check: {sorted(missing)}")

for f in failures:
    print("FAIL:", f)
print(f"{ran} commands on {len(checkpoints)} checkpoints, writable and read-only{' (as nobody)' if os.geteuid() == 0 else ''}: "
      f"{'all left every file unchanged' if not failures else f'{len(failures)} failures'}")
sys.exit(1 if failures else 0)
