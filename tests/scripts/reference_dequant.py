#!/usr/bin/env python3
"""Independent references for `weightscope dequant`, compared bit for bit.

A. qwen3_moe_fp8 (written by transformers): every FP8 tensor equals numpy + ml_dtypes applying the
   block-FP8 formula to the same bytes, and is within 5% relative Frobenius error of the same
   tensor in qwen3_moe (the model before quantization).
B. Schemes with no real writer here (NVFP4, gpt-oss MXFP4, compressed-tensors int4/int8 in every
   strategy, RAWINT4, MLX affine, KTransformers INT8, FP8 channel/tensor, E5M2): known values are
   packed by the formulas of formats.md into safetensors files written by this script, and the
   C++ result must equal the known values exactly.
E. compressed-tensors FP4 / FP8 layouts, against its own decompressors' formulas and op order.
F. `--numerics kt`, the KTransformers loader's arithmetic, transcribed here from its formula
   (weight.to(bf16) * scale.to(bf16), a BF16 multiply; every other tensor .to(bf16)), on the real
   FP8 fixture, whose scales are not BF16-exact, and on a GGUF K-quant tensor.
C. GGUF block types the fixtures lack (the I-quants IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS,
   IQ3_S, IQ4_NL, IQ4_XS; TQ1_0, TQ2_0, NVFP4, Q8_K, Q8_1, Q1_0, Q2_0): random blocks in a GGUF
   written by this script; expected values from gguf-py's gguf.quants.dequantize where it has the
   type (its codebooks are its own copy of ggml's), else from the ggml formula in numpy. The
   codebook types get rows enough for their random indices to reach nearly every grid point.
G. The I-quants as llama.cpp's own llama-quantize writes them, against ggml's own to_float.

Usage: reference_dequant.py PATH/TO/weightscope FIXTURES_DIR"""
import hashlib
import json
import os
import struct
import subprocess
import sys
import tempfile

import ml_dtypes
import numpy as np
from gguf import GGMLQuantizationType as Q
from gguf import quants as gq

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, fail, finish  # noqa: E402
from refpack import bf16_bytes, f32_bytes, iq1_m_scales, pack_int32_lsb, pack_nibbles_even_low, random_blocks, write_gguf, write_st  # noqa: E402

WS, FX = sys.argv[1], sys.argv[2]
RNG = np.random.default_rng(1234)
E2M1 = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6], np.float32)



def dequant(path, tensor, *extra):
    out = os.path.join(TMP, "out.npy")
    r = subprocess.run([WS, "dequant", path, tensor, "--out", out, *extra], capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"dequant {tensor}: {r.stderr.strip()}")
        return None
    return np.load(out)


def same_bits(got, want, label):
    if got is None:
        return
    want = np.ascontiguousarray(want, dtype=np.float32)
    # Bit for bit, except that any NaN equals any NaN (payloads are not part of the formulas).
    differ = lambda: (got.view(np.uint32) != want.view(np.uint32)) & ~(np.isnan(got) & np.isnan(want))
    ok = got.shape == want.shape and not differ().any()
    if not ok and got.shape == want.shape:
        bad = np.flatnonzero(differ())
        label += f": {bad.size} of {got.size} differ, first at {bad[0]}: {got.flat[bad[0]]!r} vs {want.flat[bad[0]]!r}"
    elif not ok:
        label += f": shape {got.shape} vs {want.shape}"
    check(ok, label)


def read_st(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    return header, data


def raw(header, data, name):
    b, e = header[name]["data_offsets"]
    return data[b:e], header[name]


def case_dir(name, tensors, config=None):
    d = os.path.join(TMP, name)
    os.makedirs(d)
    write_st(os.path.join(d, "model.safetensors"), tensors)
    if config:
        with open(os.path.join(d, "config.json"), "w") as f:
            json.dump(config, f)
    return d


# ---------------------------------------------------------------------------------------------
# A. the real FP8 checkpoint
def part_a():
    fp8_dir, bf_dir = os.path.join(FX, "hf/qwen3_moe_fp8"), os.path.join(FX, "hf/qwen3_moe")
    h8, d8 = read_st(os.path.join(fp8_dir, "model.safetensors"))
    bf = {}
    for f in sorted(os.listdir(bf_dir)):
        if f.endswith(".safetensors"):
            h, d = read_st(os.path.join(bf_dir, f))
            for k in h:
                if k != "__metadata__":
                    bf[k] = (h, d)
    n = 0
    for name, info in h8.items():
        if name == "__metadata__" or info["dtype"] != "F8_E4M3":
            continue
        w = np.frombuffer(raw(h8, d8, name)[0], np.uint8).view(ml_dtypes.float8_e4m3fn).astype(np.float32).reshape(info["shape"])
        M, N = w.shape
        gm, gn = -(-M // 128), -(-N // 128)
        s = np.frombuffer(raw(h8, d8, name + "_scale_inv")[0], np.float32).reshape(gm, gn)  # squeezed 1-D included
        want = w * np.repeat(np.repeat(s, 128, 0), 128, 1)[:M, :N]
        got = dequant(fp8_dir, name)
        same_bits(got, want, f"A {name}")
        h, d = bf[name]
        ref = np.frombuffer(raw(h, d, name)[0], ml_dtypes.bfloat16).astype(np.float32).reshape(M, N)
        if got is not None:
            rel = np.linalg.norm(got - ref) / np.linalg.norm(ref)
            check(rel < 0.05, f"A {name}: relative Frobenius error {rel:.4f} >= 5%")
        n += 1
    check(n == 63, f"A: {n} FP8 tensors, expected 63")


# ---------------------------------------------------------------------------------------------
# B. known values packed by the formulas
def part_b():
    pfx = "model.layers.0.mlp.experts.0."
    # NVFP4 (ModelOpt): e2m1 * (e4m3 block scale * f32 global)
    M, N = 16, 64
    codes = RNG.integers(0, 16, (M, N), dtype=np.uint8)
    sc = (2.0 ** RNG.integers(-6, 4, (M, N // 16))).astype(np.float32)
    g = np.float32(0.125)
    want = E2M1[codes] * np.repeat(sc * g, 16, 1)
    d = case_dir("nvfp4", [(pfx + "up_proj.weight", "U8", (M, N // 2), pack_nibbles_even_low(codes).tobytes()),
                           (pfx + "up_proj.weight_scale", "F8_E4M3", (M, N // 16), sc.astype(ml_dtypes.float8_e4m3fn).tobytes()),
                           (pfx + "up_proj.weight_scale_2", "F32", (), f32_bytes([g])),
                           (pfx + "up_proj.input_scale", "F32", (), f32_bytes([1.0]))])
    same_bits(dequant(d, pfx + "up_proj.weight"), want, "B nvfp4")

    # gpt-oss MXFP4: [E, rows, nb, 16] blocks, E8M0 scales, element 2k in the low nibble
    E, R, NB = 2, 8, 2
    codes = RNG.integers(0, 16, (E, R, NB * 32), dtype=np.uint8)
    ex = RNG.integers(118, 131, (E, R, NB), dtype=np.uint8)
    want = E2M1[codes] * np.repeat(np.ldexp(np.float32(1), ex.astype(np.int32) - 127).astype(np.float32), 32, -1)
    blocks = pack_nibbles_even_low(codes).reshape(E, R, NB, 16)
    d = case_dir("mxfp4", [("model.layers.0.mlp.experts.gate_up_proj_blocks", "U8", blocks.shape, blocks.tobytes()),
                           ("model.layers.0.mlp.experts.gate_up_proj_scales", "U8", ex.shape, ex.tobytes())],
                 {"model_type": "gpt_oss", "num_hidden_layers": 1, "num_local_experts": E, "hidden_size": 64, "intermediate_size": 4})
    same_bits(dequant(d, "model.layers.0.mlp.experts.gate_up_proj_blocks"), want, "B mxfp4 gpt-oss")
    same_bits(dequant(d, "model.layers.0.mlp.experts.gate_up_proj", "--expert", "1", "--rows", "2:5"), want[1, 2:5], "B mxfp4 expert rows")

    # compressed-tensors int4, symmetric, group 32, odd width (padding trimmed by weight_shape)
    M, N, G = 8, 84, 32
    q = RNG.integers(-8, 8, (M, N))
    s = (2.0 ** RNG.integers(-8, -2, (M, -(-N // G)))).astype(np.float32) * 3
    want = q.astype(np.float32) * np.repeat(s, G, 1)[:, :N]
    d = case_dir("ct4", [(pfx + "gate_proj.weight_packed", "I32", (M, -(-N // 8)), pack_int32_lsb((q + 8).astype(np.uint32), 4).tobytes()),
                         (pfx + "gate_proj.weight_scale", "BF16", s.shape, bf16_bytes(s)),
                         (pfx + "gate_proj.weight_shape", "I64", (2,), np.array([M, N], np.int64).tobytes())],
                 {"model_type": "deepseek_v3", "quantization_config": {"quant_method": "compressed-tensors", "config_groups": {"g": {"weights": {"num_bits": 4, "group_size": 32, "strategy": "group"}}}}})
    same_bits(dequant(d, pfx + "gate_proj.weight_packed"), want, "B int4-ct group")

    # compressed-tensors int8, asymmetric, channel: (q - zp) * s, zero points packed along dim 0
    M, N = 6, 20
    q = RNG.integers(-128, 128, (M, N))
    zp = RNG.integers(-20, 20, (M, 1))
    s = (2.0 ** RNG.integers(-10, -4, (M, 1))).astype(np.float32)
    want = (q - zp).astype(np.float32) * s
    zp_packed = pack_int32_lsb((zp + 128).T.astype(np.uint32), 8).T  # [ceil(M/4), 1]
    d = case_dir("ct8", [(pfx + "down_proj.weight_packed", "I32", (M, N // 4), pack_int32_lsb((q + 128).astype(np.uint32), 8).tobytes()),
                         (pfx + "down_proj.weight_scale", "F32", s.shape, f32_bytes(s)),
                         (pfx + "down_proj.weight_zero_point", "I32", zp_packed.shape, np.ascontiguousarray(zp_packed).tobytes()),
                         (pfx + "down_proj.weight_shape", "I64", (2,), np.array([M, N], np.int64).tobytes())])
    same_bits(dequant(d, pfx + "down_proj.weight_packed"), want, "B int8-ct asymmetric channel")

    # compressed-tensors int4 with g_idx (activation order): group of column j is g_idx[j]
    M, N, G = 4, 64, 16
    q = RNG.integers(-8, 8, (M, N))
    gidx = RNG.permutation(np.repeat(np.arange(N // G), G)).astype(np.int32)
    s = (2.0 ** RNG.integers(-8, -2, (M, N // G))).astype(np.float32)
    want = q.astype(np.float32) * s[:, gidx]
    d = case_dir("ctg", [(pfx + "up_proj.weight_packed", "I32", (M, N // 8), pack_int32_lsb((q + 8).astype(np.uint32), 4).tobytes()),
                         (pfx + "up_proj.weight_scale", "BF16", s.shape, bf16_bytes(s)),
                         (pfx + "up_proj.weight_g_idx", "I32", (N,), gidx.tobytes()),
                         (pfx + "up_proj.weight_shape", "I64", (2,), np.array([M, N], np.int64).tobytes())])
    same_bits(dequant(d, pfx + "up_proj.weight_packed"), want, "B int4-ct g_idx")

    # compressed-tensors int4, tensor strategy: one scale
    s = np.float32(0.0625)
    want = q.astype(np.float32) * s
    d = case_dir("ctt", [(pfx + "up_proj.weight_packed", "I32", (M, N // 8), pack_int32_lsb((q + 8).astype(np.uint32), 4).tobytes()),
                         (pfx + "up_proj.weight_scale", "F32", (1,), f32_bytes([s]))])
    same_bits(dequant(d, pfx + "up_proj.weight_packed"), want, "B int4-ct tensor")

    # RAWINT4: bytes, low nibble first, codes biased by 8, BF16 scale per 32
    M, N = 8, 64
    q = RNG.integers(-8, 8, (M, N))
    s = (2.0 ** RNG.integers(-9, -3, (M, N // 32))).astype(np.float32)
    want = q.astype(np.float32) * np.repeat(s, 32, 1)
    d = case_dir("raw4", [(pfx + "gate_proj.weight_packed", "U8", (M, N // 2), pack_nibbles_even_low((q + 8).astype(np.uint8)).tobytes()),
                          (pfx + "gate_proj.weight_scale", "BF16", s.shape, bf16_bytes(s)),
                          (pfx + "gate_proj.weight_shape", "I64", (2,), np.array([M, N], np.int64).tobytes())])
    same_bits(dequant(d, pfx + "gate_proj.weight_packed"), want, "B rawint4")

    # MLX affine 4 and 8 bit: scale * q + bias per group of 64, codes LSB first in u32 words
    for bits in (4, 8):
        E, M, N = 2, 4, 128
        q = RNG.integers(0, 2 ** bits, (E, M, N)).astype(np.uint32)
        s = (2.0 ** RNG.integers(-8, -3, (E, M, N // 64))).astype(np.float32)
        b = (RNG.integers(-64, 64, (E, M, N // 64)) / 256).astype(np.float32)
        want = np.repeat(s, 64, -1) * q.astype(np.float32) + np.repeat(b, 64, -1)
        words = pack_int32_lsb(q, bits).view(np.uint32)
        d = case_dir(f"mlx{bits}", [(f"model.layers.0.mlp.switch_mlp.up_proj.weight", "U32", words.shape, words.tobytes()),
                                    (f"model.layers.0.mlp.switch_mlp.up_proj.scales", "BF16", s.shape, bf16_bytes(s)),
                                    (f"model.layers.0.mlp.switch_mlp.up_proj.biases", "BF16", b.shape, bf16_bytes(b))],
                     {"model_type": "qwen3_moe", "quantization": {"group_size": 64, "bits": bits}})
        same_bits(dequant(d, "model.layers.0.mlp.switch_mlp.up_proj.weight"), want, f"B mlx-affine{bits}")

    # KTransformers INT8 NUMA: node k holds rows [k*I/2, (k+1)*I/2), one F32 scale per row
    H, I = 64, 32
    q = RNG.integers(-127, 128, (I, H)).astype(np.int8)
    s = (2.0 ** RNG.integers(-10, -4, (I,))).astype(np.float32)
    want = q.astype(np.float32) * s[:, None]
    tensors = []
    for k in range(2):
        rows = slice(k * I // 2, (k + 1) * I // 2)
        tensors += [(f"blk.0.ffn_up_exps.0.numa.{k}.weight", "I8", (I // 2, H), q[rows].tobytes()),
                    (f"blk.0.ffn_up_exps.0.numa.{k}.scale", "F32", (I // 2,), f32_bytes(s[rows]))]
    d = case_dir("kt8", tensors, {"model_type": "deepseek_v3", "hidden_size": H, "moe_intermediate_size": I, "n_routed_experts": 1, "num_hidden_layers": 1})
    same_bits(dequant(d, "blk.0.ffn_up_exps.0.numa.0.weight"), want, "B kt-int8")

    # KTransformers INT4 NUMA (our documented reading): two codes a byte, low nibble first,
    # biased by 8, one F32 scale per row
    q4 = RNG.integers(-8, 8, (I, H))
    want = q4.astype(np.float32) * s[:, None]
    tensors = []
    for k in range(2):
        rows = slice(k * I // 2, (k + 1) * I // 2)
        tensors += [(f"blk.0.ffn_gate_exps.0.numa.{k}.weight", "U8", (I // 2 * H // 2,), pack_nibbles_even_low((q4[rows] + 8).astype(np.uint8)).tobytes()),
                    (f"blk.0.ffn_gate_exps.0.numa.{k}.scale", "F32", (I // 2,), f32_bytes(s[rows]))]
    d = case_dir("kt4", tensors, {"model_type": "deepseek_v3", "hidden_size": H, "moe_intermediate_size": I, "n_routed_experts": 1, "num_hidden_layers": 1})
    same_bits(dequant(d, "blk.0.ffn_gate_exps.0.numa.1.weight"), want, "B kt-int4")

    # FP8 block, stacked experts [E, M, N] with a [E, gm, gn] grid, and a non-square
    # weight_block_size [64, 32] that divides neither dimension: each expert is its own grid
    # (edge blocks included) - the stacked indexing and the config's block shape, by numpy
    E, M, N, BM, BN = 3, 200, 160 + 8, 64, 32
    gm, gn = -(-M // BM), -(-N // BN)
    w8 = RNG.integers(0, 256, (E, M, N), dtype=np.uint8)
    w8[(w8 & 0x7F) == 0x7F] = 0x11  # no NaN codes: bit patterns, not NaN payloads, are compared
    s = (2.0 ** RNG.integers(-12, -4, (E, gm, gn))).astype(np.float32) * RNG.uniform(1, 2, (E, gm, gn)).astype(np.float32)
    want = w8.view(ml_dtypes.float8_e4m3fn).astype(np.float32) * np.repeat(np.repeat(s, BM, 1), BN, 2)[:, :M, :N]
    d = case_dir("fp8-block-stacked", [("model.layers.0.mlp.experts.gate_up_proj.weight", "F8_E4M3", (E, M, N), w8.tobytes()),
                                       ("model.layers.0.mlp.experts.gate_up_proj.weight_scale_inv", "F32", s.shape, f32_bytes(s))],
                 {"model_type": "qwen3_moe", "num_hidden_layers": 1, "num_experts": E,
                  "quantization_config": {"quant_method": "fp8", "weight_block_size": [BM, BN]}})
    same_bits(dequant(d, "model.layers.0.mlp.experts.gate_up_proj.weight"), want, "B fp8-block stacked, 64x32 blocks")
    same_bits(dequant(d, "model.layers.0.mlp.experts.gate_up_proj.weight", "--expert", "2", "--rows", "60:130"), want[2, 60:130],
              "B fp8-block stacked, expert 2 rows across block rows")

    # FP8 per-channel and per-tensor scales; unscaled E5M2
    M, N = 8, 32
    w8 = RNG.integers(0, 256, (M, N), dtype=np.uint8)
    w8[(w8 & 0x7F) == 0x7F] = 0  # no NaN codes
    wf = w8.view(ml_dtypes.float8_e4m3fn).astype(np.float32)
    sch = (2.0 ** RNG.integers(-6, 0, (M, 1))).astype(np.float32)
    d = case_dir("fp8c", [(pfx + "up_proj.weight", "F8_E4M3", (M, N), w8.tobytes()), (pfx + "up_proj.weight_scale", "F32", (M, 1), f32_bytes(sch))])
    same_bits(dequant(d, pfx + "up_proj.weight"), wf * sch, "B fp8-channel")
    d = case_dir("fp8t", [(pfx + "up_proj.weight", "F8_E4M3", (M, N), w8.tobytes()), (pfx + "up_proj.weight_scale", "F32", (), f32_bytes([0.75]))])
    same_bits(dequant(d, pfx + "up_proj.weight"), wf * np.float32(0.75), "B fp8-tensor")
    w5 = RNG.integers(0, 256, (M, N), dtype=np.uint8)
    d = case_dir("e5m2", [(pfx + "up_proj.weight", "F8_E5M2", (M, N), w5.tobytes())])
    same_bits(dequant(d, pfx + "up_proj.weight"), w5.view(ml_dtypes.float8_e5m2).astype(np.float32), "B fp8 e5m2")

    # BF16 output: round to nearest even of the F32 value
    got = dequant(d, pfx + "up_proj.weight", "--dtype", "bf16")
    if got is not None:
        want = w5.view(ml_dtypes.float8_e5m2).astype(np.float32).astype(ml_dtypes.bfloat16)
        nan = np.isnan(want.astype(np.float32))
        check(np.array_equal(got[~nan], want.view(np.uint16)[~nan]) and np.isnan(got.view(ml_dtypes.bfloat16)[nan].astype(np.float32)).all(),
              "B bf16 output")


# ---------------------------------------------------------------------------------------------
# C. GGUF block types beyond the fixtures
def q1_0_ref(b):
    d = b[:, :2].copy().view(np.float16).astype(np.float32)
    bits = np.unpackbits(b[:, 2:], axis=1, bitorder="little").astype(np.float32)
    return np.where(bits == 1, d, -d)


def q2_0_ref(b):
    d = b[:, :2].copy().view(np.float16).astype(np.float32)
    qs = b[:, 2:]
    codes = np.stack([(qs >> (2 * k)) & 3 for k in range(4)], -1).reshape(len(b), 64)
    return (codes.astype(np.int32) - 1).astype(np.float32) * d


def q8_k_ref(b):
    d = b[:, :4].copy().view(np.float32)
    return b[:, 4:260].copy().view(np.int8).astype(np.float32) * d


def q8_1_ref(b):
    # block_q8_1 (ggml-common.h): f16 d, f16 s (= d * sum of codes, used by dot products only),
    # then 32 int8 codes; a value is d * code
    d = b[:, :2].copy().view(np.float16).astype(np.float32)
    return b[:, 4:36].copy().view(np.int8).astype(np.float32) * d


# Rows (one super-block each) for the codebook types: enough that the random grid indices draw every
# entry about 8 times over (entries x 8 / indices per block), so all but ~0.03% of entries are used.
CODEBOOK_ROWS = {"IQ2_XXS": 256 * 8 // 32, "IQ2_XS": 512 * 8 // 32, "IQ2_S": 1024 * 8 // 32, "IQ3_XXS": 256 * 8 // 64,
                 "IQ3_S": 512 * 8 // 64, "IQ1_S": 2048 * 8 // 32, "IQ1_M": 2048 * 8 // 32}


def part_c():
    cols = 256
    types = [  # (name, id, block elems, block bytes, f16 fields, f32 fields, reference)
        ("IQ2_XXS", 16, 256, 66, (0,), (), lambda b: gq.dequantize(b, Q.IQ2_XXS)),
        ("IQ2_XS", 17, 256, 74, (0,), (), lambda b: gq.dequantize(b, Q.IQ2_XS)),
        ("IQ2_S", 22, 256, 82, (0,), (), lambda b: gq.dequantize(b, Q.IQ2_S)),
        ("IQ3_XXS", 18, 256, 98, (0,), (), lambda b: gq.dequantize(b, Q.IQ3_XXS)),
        ("IQ3_S", 21, 256, 110, (0,), (), lambda b: gq.dequantize(b, Q.IQ3_S)),
        ("IQ1_S", 19, 256, 50, (0,), (), lambda b: gq.dequantize(b, Q.IQ1_S)),
        ("IQ1_M", 29, 256, 56, (), (), lambda b: gq.dequantize(b, Q.IQ1_M)),
        ("IQ4_NL", 20, 32, 18, (0,), (), lambda b: gq.dequantize(b, Q.IQ4_NL)),
        ("IQ4_XS", 23, 256, 136, (0,), (), lambda b: gq.dequantize(b, Q.IQ4_XS)),
        ("TQ1_0", 34, 256, 54, (52,), (), lambda b: gq.dequantize(b, Q.TQ1_0)),
        ("TQ2_0", 35, 256, 66, (64,), (), lambda b: gq.dequantize(b, Q.TQ2_0)),
        ("NVFP4", 40, 64, 36, (), (), lambda b: gq.dequantize(b, Q.NVFP4)),
        ("Q8_K", 15, 256, 292, (), (0,), q8_k_ref),
        ("Q8_1", 9, 32, 36, (0, 2), (), q8_1_ref),
        ("Q1_0", 41, 128, 18, (0,), (), q1_0_ref),
        ("Q2_0", 42, 64, 18, (0,), (), q2_0_ref),
    ]
    tensors, wants = [], {}
    for name, tid, be, bb, f16s, f32s, ref in types:
        rows = CODEBOOK_ROWS.get(name, 4)
        n = rows * cols // be
        b = random_blocks(RNG, n, bb, f16s, f32s)
        if name == "NVFP4":  # keep UE4M3 scales away from the 0x7F "zero" code for a richer test
            b[:, :4] = RNG.integers(0x20, 0x50, (n, 4), dtype=np.uint8)
        if name == "IQ1_M":
            iq1_m_scales(RNG, b)
        tensors.append((f"t.{name}", tid, [cols, rows], b.tobytes()))
        wants[name] = np.asarray(ref(b), np.float32).reshape(rows, cols)
    path = os.path.join(TMP, "types.gguf")
    write_gguf(path, tensors)
    for name in wants:
        same_bits(dequant(path, f"t.{name}"), wants[name], f"C {name}")


# ---------------------------------------------------------------------------------------------
# D. stats and scales from the command line agree with numpy on the same values
def part_d():
    fp8_dir = os.path.join(FX, "hf/qwen3_moe_fp8")
    name = "model.layers.2.mlp.experts.5.down_proj.weight"
    vals = dequant(fp8_dir, name)
    r = subprocess.run([WS, "stats", fp8_dir, name, "--json"], capture_output=True, text=True)
    st = json.loads(r.stdout)["tensors"][0]["stats"] if r.returncode == 0 else None
    check(st is not None, f"D stats failed: {r.stderr.strip()}")
    if st and vals is not None:
        v = vals.astype(np.float64)
        check(st["count"] == v.size and st["min"] == v.min() and st["max"] == v.max() and st["zero"] == int((v == 0).sum()), "D stats counts/min/max")
        check(abs(st["mean"] - v.mean()) <= 1e-12 + 1e-9 * abs(v.mean()) and abs(st["std"] - v.std()) <= 1e-9 * v.std(), "D stats mean/std")
        check(sum(json.loads(r.stdout)["tensors"][0]["histogram"]["counts"]) + json.loads(r.stdout)["tensors"][0]["histogram"]["below"] == v.size,
              "D stats histogram covers every value")
    r = subprocess.run([WS, "scales", fp8_dir, "--by", "layer", "--json"], capture_output=True, text=True)
    sc = json.loads(r.stdout) if r.returncode == 0 else None
    check(sc is not None, f"D scales failed: {r.stderr.strip()}")
    if sc:
        h, _ = read_st(os.path.join(fp8_dir, "model.safetensors"))
        scale_bytes = sum(e - b for k, v in h.items() if k.endswith("_scale_inv") for b, e in [v["data_offsets"]])
        # the report's own figure, checked against the header; that only scale pages are touched
        # is proven by tst_stats (fp8ScalesReadOnlyScaleBytes records the pages read)
        check(sc["bytes_read"] == scale_bytes, f"D scales read {sc['bytes_read']} bytes, scale tensors hold {scale_bytes}")
        n1 = sum(int(np.prod(v["shape"])) for k, v in h.items() if k.endswith("_scale_inv") and ".layers.1." in k)
        check(sc["groups"]["layer 1"]["scale"]["stats"]["count"] == n1, "D scales per layer count")


# ---------------------------------------------------------------------------------------------
# E. compressed-tensors FP4 and FP8 as its compressors lay them out and its decompressors read them
#    (compressed_tensors 0.20: compressors/nvfp4, compressors/mxfp4, quantization/lifecycle
#    _dequantize): NVFP4 is e2m1 * (e4m3 / weight_global_scale) with the division in F32, then
#    BF16; MXFP4 is e2m1 * 2^(e - 127); a block-strategy FP8 weight 128 wide has a [rows/128, 1]
#    grid. `dequant --dtype bf16` must equal the library's BF16 result bit for bit, and validate
#    must find nothing wrong.
def ct_config(fmt, weights):
    return {"model_type": "qwen3_moe", "quantization_config": {
        "quant_method": "compressed-tensors", "format": fmt, "quantization_status": "compressed", "ignore": ["lm_head"],
        "config_groups": {"group_0": {"targets": ["Linear"], "format": fmt, "weights": weights}}}}


def dequant_bf16(path, tensor, *extra):
    got = dequant(path, tensor, "--dtype", "bf16", *extra)
    return None if got is None else got.view(np.uint16)


def same_bf16(got, want_f32, label):
    want = np.asarray(want_f32, np.float32).astype(ml_dtypes.bfloat16).view(np.uint16)
    check(got is not None and got.shape == want.shape and np.array_equal(got, want),
          label + ("" if got is None else f": {int((got != want).sum()) if got.shape == want.shape else 'shape'} differ"))


def no_errors(path, label):
    """Integrity, shapes and values: these one-projection files are not whole models."""
    r = subprocess.run([WS, "validate", path, "--skip-rules", "completeness"], capture_output=True, text=True)
    check(r.returncode == 0, f"{label}: validate exit {r.returncode}: {r.stdout[-500:]}")


def part_e():
    pfx = "model.layers.0.mlp.experts.0."
    M, N = 32, 64
    codes = RNG.integers(0, 16, (M, N), dtype=np.uint8)
    sc = np.abs(RNG.normal(0, 40, (M, N // 16))).astype(ml_dtypes.float8_e4m3fn)
    g = np.float32(2301.7)  # not a power of two: dividing differs from multiplying by 1/g
    want = E2M1[codes] * np.repeat(sc.astype(np.float32) / g, 16, 1)
    for declared in (True, False):  # from the config, and from the tensors alone
        d = case_dir(f"ct-nvfp4-{declared}", [(pfx + "up_proj.weight_packed", "U8", (M, N // 2), pack_nibbles_even_low(codes).tobytes()),
                                              (pfx + "up_proj.weight_scale", "F8_E4M3", sc.shape, sc.tobytes()),
                                              (pfx + "up_proj.weight_global_scale", "F32", (1,), f32_bytes([g]))],
                     ct_config("nvfp4-pack-quantized", {"num_bits": 4, "type": "float", "strategy": "tensor_group", "group_size": 16}) if declared else None)
        same_bf16(dequant_bf16(d, pfx + "up_proj.weight_packed"), want, f"E nvfp4-pack-quantized (declared {declared})")
        no_errors(d, f"E nvfp4 (declared {declared})")

    # NVFP4 stacked experts [E, M, N] with one global scale per expert (weight_global_scale [E]):
    # each expert's values divided by its own global scale, worked out here expert by expert
    E = 3
    codes3 = RNG.integers(0, 16, (E, M, N), dtype=np.uint8)
    sc3 = np.abs(RNG.normal(0, 40, (E, M, N // 16))).astype(ml_dtypes.float8_e4m3fn)
    g3 = np.array([2301.7, 517.3, 96.1], np.float32)
    want3 = np.stack([E2M1[codes3[e]] * np.repeat(sc3[e].astype(np.float32) / g3[e], 16, 1) for e in range(E)])
    spfx = "model.layers.0.mlp.experts.gate_up_proj."
    d = case_dir("ct-nvfp4-stacked", [(spfx + "weight_packed", "U8", (E, M, N // 2), pack_nibbles_even_low(codes3.reshape(E * M, N)).tobytes()),
                                      (spfx + "weight_scale", "F8_E4M3", sc3.shape, sc3.tobytes()),
                                      (spfx + "weight_global_scale", "F32", (E,), f32_bytes(g3))],
                 ct_config("nvfp4-pack-quantized", {"num_bits": 4, "type": "float", "strategy": "tensor_group", "group_size": 16}))
    same_bf16(dequant_bf16(d, spfx + "weight_packed"), want3, "E nvfp4 stacked, a global scale per expert")
    same_bf16(dequant_bf16(d, spfx + "weight_packed", "--expert", "2"), want3[2], "E nvfp4 stacked, expert 2")

    ex = RNG.integers(110, 125, (M, N // 32), dtype=np.uint8)
    want = E2M1[codes] * np.repeat(np.ldexp(np.float32(1), ex.astype(np.int32) - 127).astype(np.float32), 32, 1)
    d = case_dir("ct-mxfp4", [(pfx + "gate_proj.weight_packed", "U8", (M, N // 2), pack_nibbles_even_low(codes).tobytes()),
                              (pfx + "gate_proj.weight_scale", "U8", ex.shape, ex.tobytes())],
                 ct_config("mxfp4-pack-quantized", {"num_bits": 4, "type": "float", "strategy": "group", "group_size": 32}))
    same_bf16(dequant_bf16(d, pfx + "gate_proj.weight_packed"), want, "E mxfp4-pack-quantized")
    no_errors(d, "E mxfp4")

    M, N = 256, 128  # 128 wide: the block grid is [2, 1], which looks like one scale per channel
    w = RNG.normal(0, 100, (M, N)).astype(ml_dtypes.float8_e4m3fn)
    s = np.array([[0.0031], [0.0007]], np.float32)
    want = w.astype(np.float32) * np.repeat(s, 128, 0)
    d = case_dir("ct-fp8-block", [(pfx + "down_proj.weight", "F8_E4M3", (M, N), w.tobytes()),
                                  (pfx + "down_proj.weight_scale", "F32", s.shape, s.tobytes())],
                 ct_config("float-quantized", {"num_bits": 8, "type": "float", "strategy": "block", "block_structure": [128, 128]}))
    same_bf16(dequant_bf16(d, pfx + "down_proj.weight"), want, "E float-quantized block [2, 1]")
    no_errors(d, "E fp8 block")


# ---------------------------------------------------------------------------------------------
# F. the KTransformers loader's numerics: its _dequant_fp8_experts computes
#    w.to(torch.bfloat16) * s.to(torch.bfloat16) with the [rows/128, cols/128] scales broadcast over
#    their blocks. torch's BF16 multiply on the CPU is the F32 product of the two BF16 values rounded
#    to BF16 (nearest even), which ml_dtypes does the same way. Everything else is .to(bf16) of the
#    reference value.
def part_f():
    fp8_dir = os.path.join(FX, "hf/qwen3_moe_fp8")
    h8, d8 = read_st(os.path.join(fp8_dir, "model.safetensors"))
    n = differs = 0
    for name, info in h8.items():
        if name == "__metadata__" or info["dtype"] != "F8_E4M3":
            continue
        w = np.frombuffer(raw(h8, d8, name)[0], np.uint8).view(ml_dtypes.float8_e4m3fn).reshape(info["shape"])
        M, N = w.shape
        s = np.frombuffer(raw(h8, d8, name + "_scale_inv")[0], np.float32).reshape(-(-M // 128), -(-N // 128))
        s_bf = np.repeat(np.repeat(s.astype(ml_dtypes.bfloat16), 128, 0), 128, 1)[:M, :N]
        want = (w.astype(ml_dtypes.bfloat16).astype(np.float32) * s_bf.astype(np.float32)).astype(ml_dtypes.bfloat16)
        got = dequant_bf16(fp8_dir, name, "--numerics", "kt")
        check(got is not None and got.shape == want.shape and np.array_equal(got, want.view(np.uint16)),
              f"F kt {name}" + ("" if got is None or got.shape != want.shape else f": {int((got != want.view(np.uint16)).sum())} differ"))
        ref = dequant_bf16(fp8_dir, name)  # the published formula in F32, then rounded: not the same
        if got is not None and ref is not None:
            differs += int(not np.array_equal(got, ref))
        n += 1
    check(n == 63 and differs == n, f"F: {n} FP8 tensors, {differs} where kt differs from the reference (expected 63 and 63)")
    # Stacked experts [E, M, N] with a [E, gm, gn] grid (64 x 32 blocks, edge blocks): each expert
    # multiplies by its own scales under the same BF16 arithmetic
    E, M, N, BM, BN = 3, 200, 168, 64, 32
    gm, gn = -(-M // BM), -(-N // BN)
    w8 = RNG.integers(0, 256, (E, M, N), dtype=np.uint8)
    w8[(w8 & 0x7F) == 0x7F] = 0x11  # no NaN codes
    s = (2.0 ** RNG.integers(-12, -4, (E, gm, gn))).astype(np.float32) * RNG.uniform(1, 2, (E, gm, gn)).astype(np.float32)
    s_bf = np.repeat(np.repeat(s.astype(ml_dtypes.bfloat16), BM, 1), BN, 2)[:, :M, :N]
    want = (w8.view(ml_dtypes.float8_e4m3fn).astype(ml_dtypes.bfloat16).astype(np.float32) * s_bf.astype(np.float32)).astype(ml_dtypes.bfloat16)
    sname = "model.layers.0.mlp.experts.gate_up_proj.weight"
    d = case_dir("kt-fp8-stacked", [(sname, "F8_E4M3", (E, M, N), w8.tobytes()), (sname + "_scale_inv", "F32", s.shape, s.tobytes())],
                 {"model_type": "qwen3_moe", "num_hidden_layers": 1, "num_experts": E,
                  "quantization_config": {"quant_method": "fp8", "weight_block_size": [BM, BN]}})
    for extra, label, part in (((), "all experts", want), (("--expert", "2"), "expert 2", want[2])):
        got = dequant_bf16(d, sname, "--numerics", "kt", *extra)
        check(got is not None and np.array_equal(got, part.view(np.uint16)), f"F kt stacked FP8, {label}" + ("" if got is None or got.shape != part.shape else f": {int((got != part.view(np.uint16)).sum())} differ"))
    # A plain BF16 tensor is itself under both; a K-quant is its reference value rounded to BF16.
    plain = "model.layers.1.mlp.gate.weight"
    check(np.array_equal(dequant_bf16(fp8_dir, plain, "--numerics", "kt"), dequant_bf16(fp8_dir, plain)), f"F kt {plain}: a BF16 tensor changed")
    gguf_path = os.path.join(FX, "gguf/tiny-qwen3moe-kquants.gguf")
    q = "blk.0.ffn_down_exps.weight"
    f32 = dequant(gguf_path, q)
    kt = dequant(gguf_path, q, "--numerics", "kt")
    if f32 is not None and kt is not None:
        same_bits(kt, f32.astype(ml_dtypes.bfloat16).astype(np.float32), f"F kt {q} (.to(bf16) of the reference)")
        check(not np.array_equal(kt, f32), f"F kt {q}: no value was rounded")
    r = subprocess.run([WS, "dequant", fp8_dir, plain, "--numerics", "ieee"], capture_output=True, text=True)
    check(r.returncode == 2 and "--numerics" in r.stderr, f"F --numerics ieee: exit {r.returncode} {r.stderr.strip()}")


# ---------------------------------------------------------------------------------------------
# G. I-quants as llama.cpp writes them: a model quantized by llama.cpp's own llama-quantize with an
#    importance matrix from its own llama-imatrix, to each of IQ1_S ... IQ3_S, and the SHA-256 of
#    what ggml's own to_float decodes from every quantized tensor (tests/data/llama_cpp/iquants,
#    made by make_iquant_reference.py). Part C's random blocks reach every codebook entry; these
#    are the blocks the real quantizer chooses, decoded by the real decoder.
def part_g():
    folder = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "llama_cpp", "iquants")
    expected = json.load(open(os.path.join(folder, "expected.json")))
    seen = set()
    for file, tensors in sorted(expected.items()):
        for name, want in sorted(tensors.items()):
            got = dequant(os.path.join(folder, file), name)
            if got is None:
                continue
            digest = hashlib.sha256(np.ascontiguousarray(got, np.float32).tobytes()).hexdigest()
            check(digest == want["sha256"] and [float(v) for v in got.flat[:4]] == want["first"],
                  f"G {file} {name} ({want['type']}): ggml's to_float differs (first {list(got.flat[:4])} vs {want['first']})")
            seen.add(want["type"])
    types = {"IQ1_S", "IQ1_M", "IQ2_XXS", "IQ2_XS", "IQ2_S", "IQ3_XXS", "IQ3_S"}
    check(types <= seen, f"G: llama-quantize's files hold {sorted(seen)}, expected all of {sorted(types)}")


with tempfile.TemporaryDirectory() as TMP:
    part_g()
    part_f()
    part_a()
    part_b()
    part_c()
    part_d()
    part_e()

finish()
