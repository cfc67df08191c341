#!/usr/bin/env python3
"""Single-core dequantization of ik_llama.cpp's types: our CPU decoders (bench/dequant_bench) against
ik_llama.cpp's own to_float (its scalar dequantize_row_*, which ours follow) on the same bytes,
quantized by its own ggml_quantize_chunk, in the same run. to_float is called a row at a time, as
ggml does for types whose rows carry a scale (2,048 ctypes calls a type, well under 1% of its time).
Two peers do less than ours: IQ1_BN's and IQ2_BN's to_float never applies the row scale, and
MXFP4_R8's overruns its rows (make_ik_llama_reference.py REPACKED_FROM), so its peer is plain
MXFP4's to_float on the bytes before ik's own repack.
With --write, replaces the ik_llama.cpp block of docs/benchmarks.md.

Usage: run_ik_bench.py BUILD_DIR IK_LIBGGML [--rows N] [--repeat N] [--types a,b] [--write docs/benchmarks.md]
(IK_LIBGGML: ik_llama.cpp's libggml.so, built as tests/scripts/make_ik_llama_reference.py says)"""
import argparse
import os
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "scripts"))
import make_ik_llama_reference as ik  # noqa: E402
from doc_block import cpu_name, replace_block  # noqa: E402
from run_dequant_bench import best_of, run_ours  # noqa: E402

TYPES = ["q6_0", "iq2_k", "iq3_k", "iq4_k", "iq5_k", "iq6_k", "iq2_ks", "iq3_ks", "iq4_ks", "iq4_kss", "iq5_ks", "iq2_kl",
         "iq1_kt", "iq2_kt", "iq3_kt", "iq4_kt", "q8_0_r8", "q4_k_r4", "q6_k_r4", "iq4_xs_r8", "iq2_k_r4", "iq3_k_r4", "iq4_k_r4",
         "iq5_k_r4", "iq4_ks_r4", "iq5_ks_r4", "iq1_bn", "iq2_bn", "iq2_bn_r4", "q4_0_r8", "q5_0_r4", "q6_0_r4", "iq4_nl_r4",
         "mxfp4_r8", "q8_k_r8", "q8_k_r16", "q8_KV_r8", "q2_k_r4", "q3_k_r4", "q5_k_r4", "iq2_xxs_r4", "iq2_xs_r4", "iq3_xxs_r4",
         "iq1_s_r4", "iq3_s_r4", "iq2_s_r4", "iq1_m_r4"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("lib")
    ap.add_argument("--rows", type=int, default=2048)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--write")
    ap.add_argument("--types", help="comma-separated, a subset of TYPES (not with --write)")
    a = ap.parse_args()
    types = a.types.split(",") if a.types else TYPES
    lib = ik.load(a.lib)
    _, ids = ik.type_ids(lib)
    rng = np.random.default_rng(0)
    rows, cols = a.rows, 4096
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        tensors, blobs = [], {}
        for name in types:
            x = (rng.standard_normal((rows, cols)) * np.exp(rng.uniform(-6, 2, (rows, 1)))).astype(np.float32)
            imatrix = rng.uniform(0.1, 2.0, cols).astype(np.float32)
            if name in ik.REPACKED_FROM:  # its own to_float overruns: the peer is the plain type's, on the plain bytes
                plain = ids[ik.REPACKED_FROM[name]]
                q, row_size = ik.quantize(lib, plain, x, imatrix)
                blobs[name] = (q, row_size)
                tensors.append((f"t.{name}", ids[name], (rows, cols), ik.repacked(lib, plain, ids[name], q, rows, cols)))
                continue
            q, row_size = ik.quantize(lib, ids[name], x, imatrix)
            blobs[name] = (q, row_size)
            tensors.append((f"t.{name}", ids[name], (rows, cols), q))
        path = os.path.join(tmp, "bench.gguf")
        ik.write_gguf(lib, path, tensors)
        ours = run_ours(os.path.join(a.build, "bench", "dequant_bench"), path, [f"t.{n}" for n in types], a.repeat)
        out_bytes = rows * cols * 4
        for name in types:
            q, row_size = blobs[name]
            f = ik.to_float(lib, ids[ik.REPACKED_FROM.get(name, name)])
            y = np.empty((rows, cols), np.float32)

            R = 1 if name in ik.REPACKED_FROM else ik.interleave(name)  # an interleaved type's to_float takes a group of rows
            # The ternary types' to_float reads the blocks after the row scale and never applies it.
            skip = np.dtype(ik.ROW_SCALE[name]).itemsize if name in ik.ROW_SCALE else 0

            def theirs():
                for r in range(0, rows, R):
                    f(q.ctypes.data + r * row_size + skip, y[r].ctypes.data, R * cols)
            peer = out_bytes / best_of(theirs, a.repeat) / 1e9
            o = out_bytes / ours[f"t.{name}"]["seconds"] / 1e9
            results.append((name.upper(), o, peer))

    cpu = cpu_name()
    lines = [f"{rows} x {cols} values a type, best of {a.repeat}, one core of {cpu}; output F32 GB/s.", "",
             "| type | weightscope GB/s | ik_llama.cpp to_float GB/s | ratio |", "|---|---:|---:|---:|"]
    lines += [f"| {n} | {o:.2f} | {p:.2f} | {o / p:.2f}x |" for n, o, p in results]
    text = "\n".join(lines)
    print(text)
    if a.write:
        replace_block(a.write, "ik-llama-bench", text)


if __name__ == "__main__":
    main()
