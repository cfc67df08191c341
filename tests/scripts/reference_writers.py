#!/usr/bin/env python3
"""The real-file corpus: checkpoints written by other tools, read by weightscope as their own
readers read them.

Each file is written here, at test time, by the writer itself as published on PyPI (the versions
are printed), so the corpus needs no binary files in the repository:

| writer                                   | package (licence)                  | what it writes                                   |
|------------------------------------------|------------------------------------|--------------------------------------------------|
| llama.cpp's gguf-py GGUFWriter + quants  | gguf (MIT, ggml-org/llama.cpp)     | one GGUF of every type its quantizer writes;     |
|                                          |                                    | a split set (split_max_tensors)                  |
| safetensors' numpy API (save_file)       | safetensors (Apache-2.0)           | every numpy dtype, a scalar, an empty tensor,    |
|                                          |                                    | string metadata                                  |
| MLX (save_safetensors, quantize,         | mlx (MIT, ml-explore/mlx)          | `"__metadata__": null`, headers not padded to 8, |
| save_gguf)                               |                                    | affine 4-bit (group 64) and 8-bit (group 32)     |
|                                          |                                    | models with mlx-lm's config.json, a GGUF         |

For every file: `inspect --json` lists exactly the tensors of the reference reader (safe_open plus
the raw header, or gguf-py's GGUFReader) with the same name, dtype, shape, offset and size;
`dequant` of every tensor equals the reference's values bit for bit (gguf-py's
gguf.quants.dequantize, safetensors.numpy's arrays cast to float32, mlx.core.dequantize); and
`validate` finds no error.

Usage: reference_writers.py PATH/TO/weightscope"""
import json
import os
import subprocess
import sys
import tempfile
from importlib.metadata import version

import gguf
import mlx.core as mx
import numpy as np
from gguf import GGMLQuantizationType as Q
from gguf import GGUFReader
from gguf import quants as gq
from safetensors.numpy import load_file, save_file

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish  # noqa: E402
from reference_readers import compare, files_of, gguf_reference, inspect_json, safetensors_reference  # noqa: E402

WS = sys.argv[1]
RNG = np.random.default_rng(20261201)
print(f"writers: gguf {version('gguf')}, safetensors {version('safetensors')}, mlx {version('mlx')}, numpy {version('numpy')}")


def weights(rows, cols):
    return (RNG.standard_normal((rows, cols)) * 0.02).astype(np.float32)


def dequant(path, tensor, out):
    r = subprocess.run([WS, "dequant", path, tensor, "--out", out], capture_output=True, text=True)
    check(r.returncode == 0, f"dequant {os.path.basename(path)} {tensor}: exit {r.returncode}: {r.stderr.strip()}")
    return np.load(out) if r.returncode == 0 else None


def same_bits(label, got, want):
    want = np.array(want, dtype=np.float32, order="C")  # (ascontiguousarray would make a scalar 1-D)
    ok = got is not None and got.shape == want.shape and np.array_equal(got.view(np.uint32), want.view(np.uint32))
    check(ok, f"{label}: dequant differs from the reference" + ("" if got is None else f" (shapes {got.shape} / {want.shape})"))


def validates_clean(path):
    r = subprocess.run([WS, "validate", path], capture_output=True, text=True)
    check(r.returncode == 0, f"validate {os.path.basename(path)}: exit {r.returncode}: {r.stdout[-600:]}{r.stderr}")


def write_gguf_py(path, arch, tensors, **kw):
    """gguf-py, as llama.cpp's converters call it."""
    w = gguf.GGUFWriter(path, arch, **kw)
    w.add_block_count(1)
    for name, (data, qtype) in tensors.items():
        w.add_tensor(name, data, raw_dtype=qtype)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def check_gguf(label, path, parts):
    compare(label, inspect_json(WS, path), gguf_reference(parts))
    out = os.path.join(TMP, "out.npy")
    for part in parts:
        for t in GGUFReader(part).tensors:
            want = gq.dequantize(t.data, t.tensor_type).reshape([int(x) for x in reversed(list(t.shape))])
            same_bits(f"{label} {t.name} ({t.tensor_type.name})", dequant(path, t.name, out), want)
    validates_clean(path)


def check_safetensors(label, path, references):
    """`references`: tensor name -> the values dequant must give (float32)."""
    compare(label, inspect_json(WS, path), safetensors_reference(files_of(path, ".safetensors")))
    out = os.path.join(TMP, "out.npy")
    for name, want in references.items():
        same_bits(f"{label} {name}", dequant(path, name, out), want)
    validates_clean(path)


with tempfile.TemporaryDirectory() as TMP:
    # ---- gguf-py: every type its quantizer writes, in one file and as a split set
    qtypes = [Q.F32, Q.F16, Q.BF16, Q.Q4_0, Q.Q4_1, Q.Q5_0, Q.Q5_1, Q.Q8_0, Q.MXFP4, Q.TQ1_0, Q.TQ2_0]
    tensors = {f"blk.0.{t.name.lower()}.weight": (gq.quantize(weights(8, 256), t), t) for t in qtypes}
    tensors["token_embd.weight"] = (gq.quantize(weights(32, 256), Q.Q8_0), Q.Q8_0)
    tensors["output_norm.weight"] = (np.ones(256, np.float32), Q.F32)
    single = os.path.join(TMP, "gguf-py.gguf")
    write_gguf_py(single, "llama", tensors)
    check_gguf("gguf-py", single, [single])

    split_dir = os.path.join(TMP, "split")
    os.mkdir(split_dir)
    write_gguf_py(os.path.join(split_dir, "model.gguf"), "llama", tensors, split_max_tensors=5)
    parts = files_of(split_dir, ".gguf")
    check(len(parts) == 3, f"gguf-py wrote {len(parts)} split parts")
    check_gguf("gguf-py split", parts[0], parts)

    # ---- safetensors' numpy API: every dtype numpy has
    arrays = {
        "f64": RNG.standard_normal((3, 4)),
        "f32": weights(4, 8),
        "f16": weights(2, 6).astype(np.float16),
        "i64": np.arange(-6, 6, dtype=np.int64).reshape(3, 4),
        "i32": np.arange(-4, 4, dtype=np.int32),
        "i16": np.arange(-4, 4, dtype=np.int16),
        "i8": np.arange(-4, 4, dtype=np.int8),
        "u8": np.arange(250, 256, dtype=np.uint8),
        "u16": np.arange(0, 8, dtype=np.uint16) * 9000,
        "bool": np.array([True, False, True]),
        "scalar": np.array(1.5, dtype=np.float32),
        "empty": np.zeros((0, 4), np.float32),
    }
    st = os.path.join(TMP, "numpy.safetensors")
    save_file(arrays, st, metadata={"format": "np", "writer": "safetensors.numpy"})
    check_safetensors("safetensors.numpy", st, {k: v.astype(np.float32) for k, v in load_file(st).items()})

    # ---- MLX: affine-quantized models as mlx-lm lays them out (config.json says group and bits),
    # and a GGUF
    for bits, group in ((4, 64), (8, 32)):
        folder = os.path.join(TMP, f"mlx-q{bits}")
        os.mkdir(folder)
        config = {"model_type": "llama", "hidden_size": 128, "intermediate_size": 256, "num_hidden_layers": 1,
                  "num_attention_heads": 2, "vocab_size": 64, "quantization": {"group_size": group, "bits": bits}}
        with open(os.path.join(folder, "config.json"), "w") as f:
            json.dump(config, f)
        saved, want = {}, {}
        for proj, (rows, cols) in {"gate_proj": (256, 128), "up_proj": (256, 128), "down_proj": (128, 256)}.items():
            base = f"model.layers.0.mlp.{proj}"
            wq, scales, biases = mx.quantize(mx.array(weights(rows, cols)), group_size=group, bits=bits)
            saved.update({base + ".weight": wq, base + ".scales": scales, base + ".biases": biases})
            want[base + ".weight"] = np.array(mx.dequantize(wq, scales, biases, group_size=group, bits=bits))
        saved["model.norm.weight"] = mx.ones((128,), dtype=mx.bfloat16)
        want["model.norm.weight"] = np.ones(128, np.float32)
        mx.save_safetensors(os.path.join(folder, "model.safetensors"), saved)
        with open(os.path.join(folder, "model.safetensors"), "rb") as f:
            n = int.from_bytes(f.read(8), "little")
            check(b'"__metadata__":null' in f.read(n), "MLX writes a null __metadata__ (what this case is for)")
        check_safetensors(f"mlx q{bits}", folder, want)

    mg = os.path.join(TMP, "mlx.gguf")
    mx.save_gguf(mg, {"token_embd.weight": mx.array(weights(32, 128)), "output_norm.weight": mx.ones((128,), dtype=mx.float16)},
                 {"general.architecture": "llama"})
    check_gguf("mlx gguf", mg, [mg])

finish()
