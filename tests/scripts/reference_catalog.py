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
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import fail, finish  # noqa: E402
from reference_readers import compare, files_of, gguf_reference, inspect_json, safetensors_reference  # noqa: E402

WS, FX = sys.argv[1], sys.argv[2]


def inspect(path):
    return inspect_json(WS, path)


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
