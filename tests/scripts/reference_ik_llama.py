#!/usr/bin/env python3
"""ik_llama.cpp's own types, against its own code (tests/data/ik_llama, made by
make_ik_llama_reference.py; its docstring has the recipe and commit).

- `dequant` of each tensor of ik-types.gguf (one per decoded type: Q6_0, the IQn_K, IQn_KS, IQ4_KSS,
  IQ2_KL and the KT trellis types, several stacked over two experts, whose rows each begin with a
  float or f16 scale, the ternary IQ1_BN / IQ2_BN, and the row-interleaved _R4 / _R8 / _R16 types)
  equals ik_llama.cpp's own to_float bit for bit (BF16_R16, which has none: plain BF16's)
  (truth.json: SHA-256 of the float32 values), and one expert's rows equal the whole's;
- `inspect` sizes every tensor as ik_llama.cpp's ggml_nbytes does (the file's own layout: each
  tensor ends where the next begins, after alignment);
- a tensor retyped to an interleaved type whose rows are not whole groups (IQ4_K_R4 over 6 rows) is refused naming the group size; one retyped to an id
  neither ggml nor ik_llama.cpp stores in files (99, ik's in-memory Q8_2_X4) is refused at open
  naming the id.

usage: reference_ik_llama.py WEIGHTSCOPE CORPUS_DIR"""
import hashlib
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, fail, finish  # noqa: E402

WS, CORPUS = sys.argv[1], sys.argv[2]
GGUF = os.path.join(CORPUS, "ik-types.gguf")


def run(*args):
    return subprocess.run([WS, *args], capture_output=True, text=True)


def retyped(path, tensor, type_id, out, rows=None):
    """A copy of the GGUF with `tensor`'s type id (after its name, n_dims and ne in the tensor info)
    replaced, and its ne[1] (rows) too when given."""
    data = bytearray(open(path, "rb").read())
    name = tensor.encode()
    at = data.index(struct.pack("<Q", len(name)) + name) + 8 + len(name)
    n_dims = struct.unpack_from("<I", data, at)[0]
    struct.pack_into("<i", data, at + 4 + 8 * n_dims, type_id)
    if rows is not None:
        struct.pack_into("<Q", data, at + 4 + 8, rows)
    open(out, "wb").write(bytes(data))
    return out


truth = json.load(open(os.path.join(CORPUS, "truth.json")))
with tempfile.TemporaryDirectory() as tmp:
    out = os.path.join(tmp, "w.npy")
    for tensor, t in sorted(truth.items()):
        r = run("dequant", GGUF, tensor, "--out", out)
        if r.returncode != 0:
            fail(f"dequant {tensor}: exit {r.returncode}: {r.stderr.strip()}")
            continue
        got = np.load(out)
        ok = list(got.shape) == t["shape"] and hashlib.sha256(got.astype("<f4").tobytes()).hexdigest() == t["sha256"]
        check(ok, f"{tensor} ({t['type']}): dequant {list(got.shape)} differs from ik_llama.cpp's to_float")
        if len(t["shape"]) == 3:
            r = run("dequant", GGUF, tensor, "--expert", "1", "--out", out)
            check(r.returncode == 0 and np.array_equal(np.load(out).view(np.uint32), got[1].view(np.uint32)), f"{tensor}: expert 1 differs from the whole's")
    r = run("inspect", GGUF, "--json")
    if r.returncode != 0:
        fail(f"inspect: exit {r.returncode}: {r.stderr.strip()}")
    else:
        j = json.loads(r.stdout)
        by_name = {x["name"]: x for x in j["tensors"]}
        for tensor, t in truth.items():
            want = t["type"].upper()
            check(by_name.get(tensor, {}).get("dtype") == want, f"inspect: {tensor} is {by_name.get(tensor, {}).get('dtype')}, expected {want}")
        # IQ4_KS [2, 8, 512]: 16 rows of a 4-byte row scale and two 136-byte blocks.
        check(by_name["blk.0.ffn_down_exps.weight"]["bytes"] == 16 * (4 + 2 * 136), f"IQ4_KS bytes {by_name['blk.0.ffn_down_exps.weight']['bytes']}")
        # IQ2_KS [2, 8, 512]: 16 rows of a 2-byte (f16) row scale and two 70-byte blocks.
        check(by_name["blk.1.ffn_down_exps.weight"]["bytes"] == 16 * (2 + 2 * 70), f"IQ2_KS bytes {by_name['blk.1.ffn_down_exps.weight']['bytes']}")
    r = run("dequant", retyped(GGUF, "blk.0.attn_k.weight", 339, os.path.join(tmp, "r4-6.gguf"), rows=6), "blk.0.attn_k.weight", "--out", out)
    check(r.returncode not in (0, -6, -11) and "interleaved groups of 4; the tensor's 6 rows are not whole groups" in r.stderr and "blk.0.attn_k.weight" in r.stderr,
          f"IQ4_K_R4 over 6 rows: exit {r.returncode}: {r.stderr.strip()}")
    r = run("inspect", retyped(GGUF, "blk.0.attn_k.weight", 99, os.path.join(tmp, "99.gguf")))
    check(r.returncode not in (0, -6, -11) and "ggml type id 99 is not a type ggml or ik_llama.cpp" in r.stderr and "blk.0.attn_k.weight" in r.stderr,
          f"type 99: exit {r.returncode}: {r.stderr.strip()}")
finish()
