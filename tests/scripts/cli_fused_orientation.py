#!/usr/bin/env python3
"""Fused experts stored either way round (issue 50 item 8; the seed's _canonicalize_qwen3_vl_fused_expert_weights
and extract_moe_weights' split of gate_up_proj at I):

The fixture hf/qwen3_vl_moe was written by transformers 5 ([E, 2I, H] gate_up, [E, H, I] down) with
2I == H, so its gate_up shape alone cannot tell the orientation. This writes the same experts with
I = 64 (2I != H) in the other orientation Qwen3-VL's transformers 4 code stores ([E, H, 2I] gate_up,
[E, I, H] down), the values taken from the fixture's own bytes (gate = rows 0..63 of its gate half,
up = rows 0..63 of its up half), and checks:
1. inspect --json calls both tensors fused_in_out (Layout::FusedInOut; the fixture fused_out_in), and validate
   accepts the shapes against the config's moe_intermediate_size (no WS-S001);
2. dequant --expert E of the in-out gate_up, transposed, is gate then up - the split at I, each half
   bit for bit the fixture's values; down likewise.

usage: cli_fused_orientation.py WEIGHTSCOPE FIXTURES"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish  # noqa: E402
from refpack import read_st_folder, write_st  # noqa: E402

WS, FX = sys.argv[1], sys.argv[2]
SRC = os.path.join(FX, "hf", "qwen3_vl_moe")
NEW_I = 64


def run(*args):
    return subprocess.run([WS, *args], capture_output=True, text=True, timeout=120)


def bf16(dtype, shape, blob):
    assert dtype == "BF16"
    return np.frombuffer(blob, np.uint16).reshape(shape)


def f32_of(u16):
    return (u16.astype(np.uint32) << 16).view(np.float32)


tmp = tempfile.mkdtemp(prefix="ws-fused-")
try:
    tensors = read_st_folder(SRC)
    cfg = json.load(open(os.path.join(SRC, "config.json")))
    I, H = cfg["text_config"]["moe_intermediate_size"], cfg["text_config"]["hidden_size"]
    # As Qwen3-VL shipped (transformers 4.57), and re-saved under a transformers 5 version that would
    # otherwise mean [E, 2I, H]: the shapes decide.
    for version in ("4.57.1", "5.0.0"):
        cfg["text_config"]["moe_intermediate_size"] = NEW_I
        cfg["transformers_version"] = version
        dst = os.path.join(tmp, "in_out-" + version)
        os.makedirs(dst)
        json.dump(cfg, open(os.path.join(dst, "config.json"), "w"))
        want, out = {}, []
        for name, (dt, shape, blob) in tensors.items():
            if name.endswith("mlp.experts.gate_up_proj"):
                gu = bf16(dt, shape, blob)                                  # [E, 2I, H]
                gate, up = gu[:, :NEW_I, :], gu[:, I:I + NEW_I, :]          # [E, I', H] each
                stored = np.ascontiguousarray(np.concatenate([gate, up], 1).transpose(0, 2, 1))  # [E, H, 2I']
                want[name] = (gate, up)
                out.append((name, dt, list(stored.shape), stored.tobytes()))
            elif name.endswith("mlp.experts.down_proj"):
                down = bf16(dt, shape, blob)[:, :, :NEW_I]                   # [E, H, I']
                stored = np.ascontiguousarray(down.transpose(0, 2, 1))       # [E, I', H]
                want[name] = (down,)
                out.append((name, dt, list(stored.shape), stored.tobytes()))
            else:
                out.append((name, dt, shape, blob))
        write_st(os.path.join(dst, "model.safetensors"), out)
        check(2 * NEW_I != H and want, f"the copy tells the orientation apart: 2I' = {2 * NEW_I}, H = {H}")

        # 1. orientation and shapes
        layouts = {t["name"]: t["layout"] for t in json.loads(run("inspect", "--json", dst).stdout)["tensors"] if t["name"] in want}
        check(layouts == {n: "fused_in_out" for n in want}, f"the [E, H, 2I] / [E, I, H] copy saying transformers {version}: {layouts}")
        fixture = {t["name"]: t["layout"] for t in json.loads(run("inspect", "--json", SRC).stdout)["tensors"] if t["name"] in want}
        check(fixture == {n: "fused_out_in" for n in want}, f"the fixture: {fixture}")
        r = run("validate", dst, "--format", "json")
        codes = [f["code"] for f in json.loads(r.stdout)["findings"]] if r.stdout else [r.stderr]
        check(r.returncode == 0 and "WS-S001" not in codes, f"validate of the in-out copy ({version}): exit {r.returncode}, {codes[:5]}")

        # 2. the split at I, expert by expert
        npy = os.path.join(tmp, "x.npy")
        E = next(iter(want.values()))[0].shape[0]
        for name, parts in want.items():
            for e in (0, E - 1):
                r = run("dequant", dst, name, "--expert", str(e), "--out", npy)
                check(r.returncode == 0, f"dequant {name} --expert {e}: {r.stderr.strip()[:200]}")
                if r.returncode != 0:
                    continue
                got = np.load(npy)                                   # as stored: [H, 2I'] or [I', H]
                if len(parts) == 2:
                    gate, up = got.T[:NEW_I], got.T[NEW_I:]
                    check(np.array_equal(gate.view(np.uint32), f32_of(parts[0][e]).view(np.uint32)) and
                          np.array_equal(up.view(np.uint32), f32_of(parts[1][e]).view(np.uint32)),
                          f"{name} expert {e} ({version}): gate then up, split at I = {NEW_I}")
                else:
                    check(np.array_equal(got.T.view(np.uint32), f32_of(parts[0][e]).view(np.uint32)), f"{name} expert {e}: down [H, I] once transposed")
finally:
    shutil.rmtree(tmp, ignore_errors=True)
finish()
