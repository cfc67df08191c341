#!/usr/bin/env python3
"""Independent reference for the catalog.

1. For every fixture, `weightscope inspect --json` must list exactly the tensors that the
   reference readers see - safetensors' own Rust reader (safe_open) plus a plain header read for
   offsets, and gguf-py's GGUFReader - with the same dtype, shape (PyTorch order), absolute
   offset and byte length.
2. Every `weightscope synth --like X --scheme Y` checkpoint must open in those same reference
   readers (the writer's output is valid by their checks), and weightscope must agree with them.

Usage: reference_catalog.py PATH/TO/weightscope FIXTURES_DIR
Prints one line per failure and "N passed, M failed" last; exit 1 on any failure."""
import json
import os
import struct
import subprocess
import sys
import tempfile

from gguf import GGUFReader
from safetensors import safe_open

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, fail, finish  # noqa: E402

WS, FX = sys.argv[1], sys.argv[2]



def inspect(path):
    r = subprocess.run([WS, "inspect", "--json", path], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"inspect {path} failed: {r.stderr.strip()}")
    return json.loads(r.stdout)


def safetensors_reference(files):
    """name -> (dtype, shape, absolute offset, bytes, file) from safe_open and the raw header."""
    ref = {}
    for f in files:
        with open(f, "rb") as h:
            n = struct.unpack("<Q", h.read(8))[0]
            header = json.loads(h.read(n))
        with safe_open(f, framework="numpy") as st:  # the Rust reader validates the whole file
            names = set(st.keys())
            for name in names:
                sl = st.get_slice(name)
                b, e = header[name]["data_offsets"]
                ref[name] = (sl.get_dtype(), list(sl.get_shape()), 8 + n + b, e - b, f)
        check(names == {k for k in header if k != "__metadata__"}, f"{f}: safe_open keys differ from the header")
    return ref


GGUF_DTYPE_NAMES = {"F32": "F32", "F16": "F16", "BF16": "BF16"}


def gguf_reference(files):
    ref = {}
    for f in files:
        r = GGUFReader(f)
        for t in r.tensors:
            shape = [int(x) for x in reversed(list(t.shape))]
            ref[t.name] = (t.tensor_type.name, shape, int(t.data_offset), int(t.n_bytes), f)
    return ref


def compare(label, doc, ref):
    ours = {t["name"]: t for t in doc["tensors"]}
    check(set(ours) == set(ref), f"{label}: tensor names differ: only ours {sorted(set(ours) - set(ref))[:3]}, only reference {sorted(set(ref) - set(ours))[:3]}")
    files = doc["files"]
    for name, (dtype, shape, offset, nbytes, path) in ref.items():
        t = ours.get(name)
        if t is None:
            continue
        got = (t["dtype"], t["shape"], t["offset"], t["bytes"], os.path.realpath(files[t["file"]]["path"]))
        want = (dtype, shape, offset, nbytes, os.path.realpath(path))
        check(got == want, f"{label}: {name}: ours {got}, reference {want}")
    check(doc["totals"]["bytes"] == sum(v[3] for v in ref.values()), f"{label}: totals.bytes")


def files_of(path, ext):
    if os.path.isdir(path):
        return sorted(os.path.join(path, f) for f in os.listdir(path) if f.endswith(ext))
    return [path]


for rel in ["hf/qwen3_moe", "hf/qwen3_moe_fp8", "hf/deepseek_v3", "hf/mixtral", "hf/qwen3_vl_moe"]:
    path = os.path.join(FX, rel)
    compare(rel, inspect(path), safetensors_reference(files_of(path, ".safetensors")))
for rel, parts in [("gguf/tiny-qwen3moe-kquants.gguf", ["gguf/tiny-qwen3moe-kquants.gguf"]),
                   ("gguf/tiny-qwen3moe-kquants-00001-of-00002.gguf",
                    ["gguf/tiny-qwen3moe-kquants-00001-of-00002.gguf", "gguf/tiny-qwen3moe-kquants-00002-of-00002.gguf"])]:
    compare(rel, inspect(os.path.join(FX, rel)), gguf_reference([os.path.join(FX, p) for p in parts]))

LIKES = ["qwen3-moe", "deepseek-v3", "kimi-k2", "mixtral", "gpt-oss", "qwen3-vl-moe", "glm-4.5"]
SCHEMES = ["bf16", "fp8-block", "nvfp4", "mxfp4", "int4-ct", "kt-int8", "gguf-q4_k"]
with tempfile.TemporaryDirectory() as tmp:
    for like in LIKES:
        for scheme in SCHEMES:
            out = os.path.join(tmp, f"{like}-{scheme}")
            r = subprocess.run([WS, "synth", "--like", like, "--scheme", scheme, "--shards", "2", out], capture_output=True, text=True)
            if r.returncode != 0:
                fail(f"synth {like} {scheme}: {r.stderr.strip()}")
                continue
            try:
                ref = gguf_reference(files_of(out, ".gguf")) if scheme == "gguf-q4_k" else safetensors_reference(files_of(out, ".safetensors"))
            except Exception as e:  # the reference reader refused our file
                fail(f"synth {like} {scheme}: reference reader refused it: {e}")
                continue
            compare(f"synth {like} {scheme}", inspect(out), ref)

finish()
