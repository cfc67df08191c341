#!/usr/bin/env python3
"""Makes tests/data/ik_llama/: ik_llama.cpp's own type table, and a GGUF of its own types quantized
by its own code, with its own dequantization as the truth.

Not run by the suite (it needs ik_llama.cpp built, minutes on two cores); run by hand when the
corpus changes:

  git clone https://github.com/ikawrakow/ik_llama.cpp /tmp/ik/src   # 8337e4c was used
  cmake -S /tmp/ik/src -B /tmp/ik/build -G Ninja -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=OFF \\
      -DGGML_AVX2=ON -DGGML_OPENMP=OFF -DGGML_IQK_FA_ALL_QUANTS=OFF -DBUILD_SHARED_LIBS=ON
  cmake --build /tmp/ik/build -j2 --target ggml
  PYTHONPATH=/tmp/ik/src/gguf-py python3 tests/scripts/make_ik_llama_reference.py \\
      /tmp/ik/build/ggml/src/libggml.so tests/data/ik_llama

types.json: every type id ik_llama.cpp's library names (ggml_internal_get_type_traits): name, block
size, type size, row meta size - what core/model/dtype.cpp's ik rows must equal (tst_dtype).
ik-types.gguf (every type in DECODED; written by ik_llama.cpp's own gguf writer, gguf_write_to_file; its gguf-py cannot
write types with row meta): one tensor per decoded ik type, random
weights (a spread of magnitudes per row, some rows all zero) quantized by ggml_quantize_chunk
with a random importance matrix, a stacked [2, 8, 512] expert tensor among them so the row meta
of every expert row is exercised.
truth.json: each tensor's PyTorch shape and the SHA-256 of the float32 values ik_llama.cpp's own
to_float gives, row by row (a row's meta is at its start; a group of rows at once for the _R4 / _R8
/ _R16 types; IQ1_BN and IQ2_BN: to_float of the blocks times the row scale, see ROW_SCALE), which
`weightscope dequant` must equal
bit for bit (tests/scripts/reference_ik_llama.py).
"""
import ctypes
import hashlib
import json
import os
import sys

import numpy as np

# The ik types decoded (core/numerics/gguf_block_formulas.h), and the tensor each is stored as.
DECODED = {"iq2_k": ("blk.0.attn_q.weight", (16, 512)), "iq4_k": ("blk.0.attn_k.weight", (16, 512)),
           "iq4_ks": ("blk.0.ffn_down_exps.weight", (2, 8, 512)), "q6_0": ("blk.0.attn_v.weight", (16, 512)),
           "iq3_k": ("blk.0.attn_output.weight", (16, 512)), "iq5_k": ("blk.0.ffn_gate_exps.weight", (2, 8, 512)),
           "iq5_ks": ("blk.0.ffn_up_exps.weight", (2, 8, 512)), "iq6_k": ("blk.1.attn_q.weight", (16, 512)),
           "iq2_ks": ("blk.1.ffn_down_exps.weight", (2, 8, 512)), "iq4_kss": ("blk.1.attn_k.weight", (16, 512)),
           "iq3_ks": ("blk.1.ffn_gate_exps.weight", (2, 8, 512)), "iq2_kl": ("blk.1.attn_v.weight", (16, 512)),
           "iq1_kt": ("blk.1.attn_output.weight", (16, 512)), "iq2_kt": ("blk.1.ffn_up_exps.weight", (2, 8, 512)),
           "iq3_kt": ("blk.2.attn_q.weight", (16, 512)), "iq4_kt": ("blk.2.ffn_down_exps.weight", (2, 8, 512)),
           # Row-interleaved (repacked) types: groups of 4 or 8 rows, an expert's 8 rows whole groups.
           "q8_0_r8": ("blk.2.attn_k.weight", (16, 512)), "q4_k_r4": ("blk.2.attn_v.weight", (16, 512)),
           "q6_k_r4": ("blk.2.attn_output.weight", (16, 512)), "iq4_xs_r8": ("blk.2.ffn_gate_exps.weight", (2, 8, 512)),
           "iq2_k_r4": ("blk.2.ffn_up_exps.weight", (2, 8, 512)), "iq3_k_r4": ("blk.3.attn_q.weight", (16, 512)),
           "iq4_k_r4": ("blk.3.attn_k.weight", (16, 512)), "iq5_k_r4": ("blk.3.ffn_down_exps.weight", (2, 8, 512)),
           "iq4_ks_r4": ("blk.3.ffn_gate_exps.weight", (2, 8, 512)), "iq5_ks_r4": ("blk.3.ffn_up_exps.weight", (2, 8, 512)),
           # Appended later (the draws of the types above are unchanged): the ternary types and
           # more repacks. Q8_K_R16's groups of 16 rows make its tensor 16 rows, not two experts of 8.
           "iq1_bn": ("blk.4.attn_q.weight", (16, 512)), "iq2_bn": ("blk.4.ffn_down_exps.weight", (2, 8, 512)),
           "iq2_bn_r4": ("blk.4.attn_k.weight", (16, 512)), "q4_0_r8": ("blk.4.ffn_gate_exps.weight", (2, 8, 512)),
           "q5_0_r4": ("blk.4.attn_v.weight", (16, 512)), "q6_0_r4": ("blk.4.ffn_up_exps.weight", (2, 8, 512)),
           "iq4_nl_r4": ("blk.4.attn_output.weight", (16, 512)), "mxfp4_r8": ("blk.5.ffn_down_exps.weight", (2, 8, 512)),
           "q8_k_r8": ("blk.5.attn_q.weight", (16, 512)), "q8_k_r16": ("blk.5.attn_k.weight", (16, 512)),
           "q8_KV_r8": ("blk.5.ffn_gate_exps.weight", (2, 8, 512)),
           "q2_k_r4": ("blk.5.attn_v.weight", (16, 512)), "q3_k_r4": ("blk.5.ffn_up_exps.weight", (2, 8, 512)),
           "q5_k_r4": ("blk.5.attn_output.weight", (16, 512)), "iq2_xxs_r4": ("blk.6.attn_q.weight", (16, 512)),
           "iq2_xs_r4": ("blk.6.ffn_down_exps.weight", (2, 8, 512)), "iq3_xxs_r4": ("blk.6.attn_k.weight", (16, 512)),
           "iq1_s_r4": ("blk.6.ffn_gate_exps.weight", (2, 8, 512)), "iq3_s_r4": ("blk.6.attn_v.weight", (16, 512)),
           "iq2_s_r4": ("blk.6.ffn_up_exps.weight", (2, 8, 512)), "iq1_m_r4": ("blk.6.attn_output.weight", (16, 512)),
           # BF16_R16's groups of 16 rows: one 16-row tensor, as Q8_K_R16's.
           "bf16_r16": ("blk.7.attn_q.weight", (16, 512))}

# The ternary types' CPU to_float gives d-less values and reads from the blocks, not the row: their
# row scale (f16 for IQ1_BN, f32 for IQ2_BN) is applied after, as ik_llama.cpp's CUDA dequantization
# applies it (ggml-cuda/convert.cu dequantize_block_iq1_bn / _iq2_bn).
ROW_SCALE = {"iq1_bn": np.float16, "iq2_bn": np.float32}

# MXFP4_R8's to_float at 8337e4c writes past its rows (dequantize_row_mxfp4_r8 counts k / 32 blocks
# where a row has k / 8 / 32, iqk/iqk_quantize.cpp:4333): no reference. Its rows are quantized as
# plain MXFP4, whose to_float is the truth, then repacked by ik_llama.cpp's own run-time repacker
# (iqk_repack_tensor, repack_mxfp4: lossless), the bytes `--repack` writes.
REPACKED_FROM = {"mxfp4_r8": "mxfp4"}

# BF16_R16 has no to_float at all (ggml.c's type traits at 8337e4c leave it commented out), and
# iqk_repack_tensor repacks BF16 only in an AVX512-BF16 build. Its bytes are ggml_quantize_chunk's
# (repack_f32_bf16_r16, which truncates each float to bf16); the truth is plain BF16's to_float of
# ggml_quantize_chunk's plain BF16 (which rounds). Both are fed floats already exact in bf16, so
# truncating and rounding agree and the two hold the same values.
TRUTH_FROM = {"bf16_r16": "bf16"}


def interleave(name):
    """Rows a group of the type holds: 4 for _r4, 8 for _r8, 1 for the plain types."""
    return int(name.rsplit("_r", 1)[1]) if "_r" in name else 1


class InitParams(ctypes.Structure):
    _fields_ = [("mem_size", ctypes.c_size_t), ("mem_buffer", ctypes.c_void_p), ("no_alloc", ctypes.c_bool)]


class Traits(ctypes.Structure):
    _fields_ = [("type_name", ctypes.c_char_p), ("blck_size", ctypes.c_int64), ("blck_size_interleave", ctypes.c_int64),
                ("type_size", ctypes.c_size_t), ("is_quantized", ctypes.c_bool), ("to_float", ctypes.c_void_p),
                ("from_float", ctypes.c_void_p), ("from_float_ref", ctypes.c_void_p), ("from_float_to_mat", ctypes.c_void_p),
                ("vec_dot", ctypes.c_void_p), ("vec_dot_type", ctypes.c_int), ("nrows", ctypes.c_int64), ("ncols", ctypes.c_int64),
                ("gemv", ctypes.c_void_p), ("gemm", ctypes.c_void_p), ("row_meta_size", ctypes.c_int64)]


def load(lib_path):
    """ik_llama.cpp's built ggml library, its functions typed for ctypes."""
    lib = ctypes.CDLL(lib_path)
    lib.ggml_internal_get_type_traits.restype = Traits
    lib.ggml_internal_get_type_traits.argtypes = [ctypes.c_int]
    lib.ggml_quantize_chunk.restype = ctypes.c_size_t
    lib.ggml_quantize_chunk.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64,
                                        ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p]
    lib.ggml_row_size.restype = ctypes.c_size_t
    lib.ggml_row_size.argtypes = [ctypes.c_int, ctypes.c_int64]
    lib.ggml_init.restype = ctypes.c_void_p
    lib.ggml_init.argtypes = [InitParams]
    lib.ggml_new_tensor.restype = ctypes.c_void_p
    lib.ggml_new_tensor.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.POINTER(ctypes.c_int64)]
    lib.ggml_set_name.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    lib.ggml_get_data.restype = ctypes.c_void_p
    lib.ggml_get_data.argtypes = [ctypes.c_void_p]
    lib.ggml_nbytes.restype = ctypes.c_size_t
    lib.ggml_nbytes.argtypes = [ctypes.c_void_p]
    lib.gguf_init_empty.restype = ctypes.c_void_p
    lib.gguf_set_val_str.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p]
    lib.gguf_add_tensor.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    lib.gguf_write_to_file.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_bool]
    lib.iqk_repack_tensor.argtypes = [ctypes.c_void_p]
    # ggml_init fills the fp16 -> fp32 table GGML_FP16_TO_FP32 reads on this build: to_float of a
    # type with fp16 scales (IQ2_K, IQ4_K) returns zeros before it.
    lib.ggml_init(InitParams(1 << 20, None, False))
    return lib


def type_ids(lib):
    """name -> id and id -> traits summary, for every type the library names."""
    types, ids = {}, {}
    for t in range(400):
        tr = lib.ggml_internal_get_type_traits(t)
        if not tr.type_name or tr.blck_size <= 0:
            continue
        name = tr.type_name.decode()
        types[str(t)] = {"name": name, "blck_size": tr.blck_size, "type_size": tr.type_size, "row_meta_size": tr.row_meta_size}
        ids[name] = t
    return types, ids


def quantize(lib, t, x, imatrix):
    """x [rows, n_per_row] float32 quantized by ggml_quantize_chunk: the rows' bytes, and each row's size."""
    rows, n_per_row = x.shape
    row_size = lib.ggml_row_size(t, n_per_row)
    q = np.zeros(rows * row_size, np.uint8)
    done = lib.ggml_quantize_chunk(t, x.ctypes.data, q.ctypes.data, 0, rows, n_per_row, imatrix.ctypes.data, None)
    assert done == q.size, (t, done, q.size)
    return q, row_size


def to_float(lib, t):
    """ik_llama.cpp's own to_float of type t: (row bytes pointer, output pointer, n)."""
    return ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64)(lib.ggml_internal_get_type_traits(t).to_float)


def repacked(lib, plain, want, q, rows, n_per_row):
    """q (rows of type `plain`) as ik_llama.cpp's iqk_repack_tensor rewrites them, checked to be type `want`."""
    ctx = lib.ggml_init(InitParams(q.size + (1 << 20), None, False))
    ne = (ctypes.c_int64 * 2)(n_per_row, rows)
    gt = lib.ggml_new_tensor(ctx, plain, 2, ne)
    lib.ggml_set_name(gt, b"blk.0.ffn_down.weight")
    ctypes.memmove(lib.ggml_get_data(gt), q.ctypes.data, q.size)
    lib.iqk_repack_tensor(gt)
    assert ctypes.c_int.from_address(gt).value == want, "iqk_repack_tensor left the type"  # ggml_tensor.type comes first
    out = np.empty_like(q)
    ctypes.memmove(out.ctypes.data, lib.ggml_get_data(gt), q.size)
    return out


def write_gguf(lib, path, tensors):
    """tensors: (name, type id, PyTorch shape, bytes as ggml_nbytes counts them), through ik's gguf writer."""
    ctx = lib.ggml_init(InitParams(sum(q.size for *_, q in tensors) + (16 << 20), None, False))
    g = lib.gguf_init_empty()
    lib.gguf_set_val_str(g, b"general.architecture", b"llama")
    for name, t, shape, q in tensors:
        ne = (ctypes.c_int64 * 4)(*reversed(shape))
        gt = lib.ggml_new_tensor(ctx, t, len(shape), ne)
        lib.ggml_set_name(gt, name.encode())
        assert lib.ggml_nbytes(gt) == q.size, (name, lib.ggml_nbytes(gt), q.size)
        ctypes.memmove(lib.ggml_get_data(gt), q.ctypes.data, q.size)
        lib.gguf_add_tensor(g, gt)
    lib.gguf_write_to_file(g, path.encode(), False)


def main(lib_path, out):
    lib = load(lib_path)
    os.makedirs(out, exist_ok=True)
    types, ids = type_ids(lib)
    json.dump(types, open(os.path.join(out, "types.json"), "w"), indent=1)

    rng = np.random.default_rng(0)
    tensors, truth = [], {}
    for tname, (tensor, shape) in DECODED.items():
        t = ids[tname]
        rows, n_per_row = int(np.prod(shape[:-1])), shape[-1]
        x = (rng.standard_normal((rows, n_per_row)) * np.exp(rng.uniform(-6, 2, (rows, 1)))).astype(np.float32)
        x[1] = 0  # an all-zero row
        imatrix = rng.uniform(0.1, 2.0, n_per_row).astype(np.float32)
        y = np.empty((rows, n_per_row), np.float32)
        if tname in TRUTH_FROM:
            x = (x.view(np.uint32) & np.uint32(0xFFFF0000)).view(np.float32)  # exact in bf16
            plain = ids[TRUTH_FROM[tname]]
            p, row_size = quantize(lib, plain, x, imatrix)
            for r in range(rows):
                to_float(lib, plain)(p.ctypes.data + r * row_size, y[r].ctypes.data, n_per_row)
            q, _ = quantize(lib, t, x, imatrix)
            tensors.append((tensor, t, shape, q))
            truth[tensor] = {"type": tname, "shape": list(shape), "sha256": hashlib.sha256(y.astype("<f4").tobytes()).hexdigest()}
            continue
        if tname in REPACKED_FROM:
            plain = ids[REPACKED_FROM[tname]]
            q, row_size = quantize(lib, plain, x, imatrix)
            for r in range(rows):
                to_float(lib, plain)(q.ctypes.data + r * row_size, y[r].ctypes.data, n_per_row)
            tensors.append((tensor, t, shape, repacked(lib, plain, t, q, rows, n_per_row)))
            truth[tensor] = {"type": tname, "shape": list(shape), "sha256": hashlib.sha256(y.astype("<f4").tobytes()).hexdigest()}
            continue
        q, row_size = quantize(lib, t, x, imatrix)
        f = to_float(lib, t)
        R = interleave(tname)  # an interleaved type's to_float takes a whole group of rows
        for r in range(0, rows, R):
            if tname in ROW_SCALE:
                meta = np.dtype(ROW_SCALE[tname]).itemsize
                f(q.ctypes.data + r * row_size + meta, y[r].ctypes.data, n_per_row)
                y[r] *= np.float32(q[r * row_size:r * row_size + meta].view(ROW_SCALE[tname])[0])
                continue
            f(q.ctypes.data + r * row_size, y[r].ctypes.data, R * n_per_row)
        tensors.append((tensor, t, shape, q))
        truth[tensor] = {"type": tname, "shape": list(shape), "sha256": hashlib.sha256(y.astype("<f4").tobytes()).hexdigest()}
    write_gguf(lib, os.path.join(out, "ik-types.gguf"), tensors)
    json.dump(truth, open(os.path.join(out, "truth.json"), "w"), indent=1, sort_keys=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
