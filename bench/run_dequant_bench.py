#!/usr/bin/env python3
"""Single-core dequantization throughput of weightscope's CPU reference, against gguf-py's
`gguf.quants.dequantize` (numpy) for the GGUF types and numpy + ml_dtypes for FP8 and BF16, all
measured in the same run on the same bytes. Prints a Markdown table (GB/s of F32 output, best of
N runs) and, with --write, replaces the dequantization section of docs/benchmarks.md. With --ggml
LIB (libggml-base.so of llama.cpp built by tests/scripts/llama_cpp_build.py) the GGUF types are
also decoded by ggml's own to_float, the scalar C code our decoders follow, on the same bytes.

Usage: run_dequant_bench.py BUILD_DIR [--elements N] [--repeat N] [--ggml LIB] [--write docs/benchmarks.md]"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import ml_dtypes
import numpy as np
from gguf import GGMLQuantizationType as Q
from gguf import quants as gq

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "scripts"))
from refpack import bf16_bytes, f32_bytes, iq1_m_scales, pack_int32_lsb, pack_nibbles_even_low, random_blocks, write_gguf, write_st  # noqa: E402
from llama_cpp_build import ggml_to_float  # noqa: E402
from doc_block import cpu_name, replace_block  # noqa: E402

GGUF_TYPES = [  # name, id, block elements, block bytes, f16 fields, f32 fields
    ("Q4_0", 2, 32, 18, (0,), ()), ("Q4_1", 3, 32, 20, (0, 2), ()), ("Q5_0", 6, 32, 22, (0,), ()), ("Q5_1", 7, 32, 24, (0, 2), ()),
    ("Q8_0", 8, 32, 34, (0,), ()), ("Q2_K", 10, 256, 84, (80, 82), ()), ("Q3_K", 11, 256, 110, (108,), ()),
    ("Q4_K", 12, 256, 144, (0, 2), ()), ("Q5_K", 13, 256, 176, (0, 2), ()), ("Q6_K", 14, 256, 210, (208,), ()),
    ("IQ4_NL", 20, 32, 18, (0,), ()), ("IQ4_XS", 23, 256, 136, (0,), ()), ("TQ1_0", 34, 256, 54, (52,), ()),
    ("TQ2_0", 35, 256, 66, (64,), ()), ("MXFP4", 39, 32, 17, (), ()), ("NVFP4", 40, 64, 36, (), ()),
    ("Q8_K", 15, 256, 292, (), (0,)), ("Q1_0", 41, 128, 18, (0,), ()), ("Q2_0", 42, 64, 18, (0,), ()),
    ("IQ2_XXS", 16, 256, 66, (0,), ()), ("IQ2_XS", 17, 256, 74, (0,), ()), ("IQ2_S", 22, 256, 82, (0,), ()),
    ("IQ3_XXS", 18, 256, 98, (0,), ()), ("IQ3_S", 21, 256, 110, (0,), ()), ("IQ1_S", 19, 256, 50, (0,), ()), ("IQ1_M", 29, 256, 56, (), ()),
]
K_QUANTS = {"Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K"}


def best_of(fn, repeat):
    best = 1e30
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def run_ours(bench, path, names, repeat):
    r = subprocess.run([bench, path, *names, "--repeat", str(repeat)], capture_output=True, text=True, check=True)
    return {j["tensor"]: j for j in map(json.loads, r.stdout.splitlines())}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--elements", type=int, default=1 << 23)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--ggml")
    ap.add_argument("--write")
    a = ap.parse_args()
    bench = os.path.join(a.build, "bench", "dequant_bench")
    rng = np.random.default_rng(0)
    rows, cols = a.elements // 4096, 4096
    to_float = ggml_to_float(a.ggml) if a.ggml else None
    results = []  # (scheme, ours GB/s, peer name, peer GB/s, ggml to_float GB/s)
    with tempfile.TemporaryDirectory() as tmp:
        # GGUF block types
        tensors, blobs = [], {}
        for name, tid, be, bb, f16s, f32s in GGUF_TYPES:
            b = random_blocks(rng, rows * cols // be, bb, f16s, f32s)
            if name == "NVFP4":
                b[:, :4] = rng.integers(0x20, 0x50, (len(b), 4), dtype=np.uint8)
            if name == "IQ1_M":
                iq1_m_scales(rng, b)
            blobs[name] = b
            tensors.append((f"t.{name}", tid, [cols, rows], b.tobytes()))
        gpath = os.path.join(tmp, "bench.gguf")
        write_gguf(gpath, tensors)
        ours = run_ours(bench, gpath, [f"t.{n}" for n, *_ in GGUF_TYPES], a.repeat)
        out_bytes = rows * cols * 4
        for name, tid, *_ in GGUF_TYPES:
            o = out_bytes / ours[f"t.{name}"]["seconds"] / 1e9
            qt = getattr(Q, name, None)
            peer = None
            if qt is not None and name not in ("Q8_K", "Q1_0"):
                try:
                    peer = out_bytes / best_of(lambda: gq.dequantize(blobs[name], qt), a.repeat) / 1e9
                except NotImplementedError:
                    peer = None
            ggml = None
            if to_float and to_float.decodes(tid, name):
                dst = np.empty(rows * cols, np.float32)
                ggml = out_bytes / best_of(lambda: to_float(tid, blobs[name], rows * cols, dst), a.repeat) / 1e9
            results.append((f"gguf {name}", o, "gguf-py" if peer else "-", peer, ggml))
        # safetensors schemes
        M, N = rows, cols
        w8 = rng.integers(0, 256, (M, N), dtype=np.uint8)
        w8[(w8 & 0x7F) == 0x7F] = 0
        s8 = rng.uniform(1e-4, 1e-3, (-(-M // 128), -(-N // 128))).astype(np.float32)
        bf = rng.normal(0, 0.02, (M, N)).astype(ml_dtypes.bfloat16)
        codes = rng.integers(0, 256, (M, N // 2), dtype=np.uint8)
        e4 = rng.uniform(0.01, 1, (M, N // 16)).astype(ml_dtypes.float8_e4m3fn)
        ex = rng.integers(118, 127, (M, N // 32), dtype=np.uint8)
        q4 = rng.integers(0, 16, (M, N)).astype(np.uint32)
        sc = rng.uniform(1e-3, 1e-2, (M, N // 32)).astype(np.float32)
        write_st(os.path.join(tmp, "model.safetensors"), [
            ("a.fp8.weight", "F8_E4M3", (M, N), w8.tobytes()), ("a.fp8.weight_scale_inv", "F32", s8.shape, f32_bytes(s8)),
            ("a.bf16.weight", "BF16", (M, N), bf.tobytes()),
            ("a.nvfp4.weight", "U8", (M, N // 2), codes.tobytes()), ("a.nvfp4.weight_scale", "F8_E4M3", e4.shape, e4.tobytes()),
            ("a.nvfp4.weight_scale_2", "F32", (), f32_bytes([0.01])),
            ("a.mxfp4_blocks", "U8", (M, N // 32, 16), codes.tobytes()), ("a.mxfp4_scales", "U8", ex.shape, ex.tobytes()),
            ("a.int4.weight_packed", "I32", (M, N // 8), pack_int32_lsb(q4, 4).tobytes()), ("a.int4.weight_scale", "BF16", sc.shape, bf16_bytes(sc)),
            ("a.raw4.weight_packed", "U8", (M, N // 2), codes.tobytes()), ("a.raw4.weight_scale", "BF16", sc.shape, bf16_bytes(sc)),
        ])
        names = ["a.fp8.weight", "a.bf16.weight", "a.nvfp4.weight", "a.mxfp4_blocks", "a.int4.weight_packed", "a.raw4.weight_packed"]
        ours = run_ours(bench, tmp, names, a.repeat)
        rep = lambda s: np.repeat(np.repeat(s, 128, 0), 128, 1)[:M, :N]
        peers = {
            "a.fp8.weight": ("numpy+ml_dtypes", lambda: w8.view(ml_dtypes.float8_e4m3fn).astype(np.float32) * rep(s8)),
            "a.bf16.weight": ("numpy+ml_dtypes", lambda: bf.astype(np.float32)),
        }
        for n in names:
            o = out_bytes / ours[n]["seconds"] / 1e9
            pname, fn = peers.get(n, ("-", None))
            peer = out_bytes / best_of(fn, a.repeat) / 1e9 if fn else None
            results.append((ours[n]["scheme"], o, pname, peer, None))

    cpu = cpu_name()
    lines = [f"Machine: {cpu}, {os.cpu_count()} cores; one core used by both sides. "
             f"{rows * cols:,} elements per tensor ({rows * cols * 4 / 2**20:.0f} MiB of F32 output), best of {a.repeat} runs.",
             "", "| scheme | weightscope GB/s | peer | peer GB/s | ratio | ggml to_float GB/s | vs ggml | goals |",
             "|---|---:|---|---:|---:|---:|---:|---|"]
    for scheme, o, pname, peer, ggml in results:
        name = scheme.split()[-1]
        goals = []
        if peer and (scheme.startswith("gguf") or scheme.startswith("fp8")):
            goals.append("20x peer " + ("met" if o >= 20 * peer else "MISSED"))
        if name in K_QUANTS:
            goals.append("1 GB/s " + ("met" if o >= 1.0 else "MISSED"))
        vs_peer = f"{pname} | {peer:.3f} | {o / peer:.1f}x" if peer else "- | - | -"
        vs_ggml = f"{ggml:.2f} | {o / ggml:.2f}x" if ggml else "- | -"
        lines.append(f"| {scheme} | {o:.2f} | {vs_peer} | {vs_ggml} | {', '.join(goals)} |")
    table = "\n".join(lines)
    print(table)
    if a.write:
        replace_block(a.write, "dequant-bench", table)


if __name__ == "__main__":  # run_ik_bench.py imports its helpers
    main()
