"""Packing helpers shared by the reference tests and the benchmarks: a plain safetensors writer,
a minimal GGUF v3 writer, and the bit packings of formats.md (independent of the C++ code)."""
import json
import os
import struct

import ml_dtypes
import numpy as np


def write_st(path, tensors):
    """tensors: list of (name, dtype string, shape, bytes)"""
    header, off, blobs = {}, 0, []
    for name, dt, shape, blob in tensors:
        header[name] = {"dtype": dt, "shape": list(shape), "data_offsets": [off, off + len(blob)]}
        off += len(blob)
        blobs.append(blob)
    h = json.dumps(header).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def read_st_folder(folder):
    """Every tensor of a folder's *.safetensors files as name -> (dtype string, shape, raw bytes), in
    file order: the inverse of write_st, with no dtype conversion (BF16 stays its bytes)."""
    out = {}
    for f in sorted(x for x in os.listdir(folder) if x.endswith(".safetensors")):
        with open(os.path.join(folder, f), "rb") as fh:
            n = struct.unpack("<Q", fh.read(8))[0]
            header = json.loads(fh.read(n))
            header.pop("__metadata__", None)
            data = fh.read()
        for k, v in header.items():
            out[k] = (v["dtype"], v["shape"], data[v["data_offsets"][0]:v["data_offsets"][1]])
    return out


def bf16_bytes(a):
    return np.asarray(a, np.float32).astype(ml_dtypes.bfloat16).tobytes()


def f32_bytes(a):
    return np.asarray(a, np.float32).tobytes()


def pack_nibbles_even_low(codes):
    codes = codes.reshape(*codes.shape[:-1], -1, 2)
    return (codes[..., 0] | (codes[..., 1] << 4)).astype(np.uint8)


def pack_int32_lsb(u, bits):
    """u: unsigned codes [..., n]; pads with zero codes to whole words (compressed-tensors)."""
    pf = 32 // bits
    pad = (-u.shape[-1]) % pf
    u = np.concatenate([u, np.zeros((*u.shape[:-1], pad), u.dtype)], -1).astype(np.uint64)
    u = u.reshape(*u.shape[:-1], -1, pf)
    words = np.zeros(u.shape[:-1], np.uint64)
    for k in range(pf):
        words |= u[..., k] << np.uint64(k * bits)
    return words.astype(np.uint32).view(np.int32)


def write_gguf(path, tensors):
    """tensors: list of (name, ggml type id, ne list, bytes); a minimal GGUF v3 writer."""
    def s(x):
        b = x.encode()
        return struct.pack("<Q", len(b)) + b
    out = b"GGUF" + struct.pack("<Iqq", 3, len(tensors), 1)
    out += s("general.architecture") + struct.pack("<i", 8) + s("llama")
    off, blobs = 0, []
    for name, tid, ne, blob in tensors:
        out += s(name) + struct.pack("<I", len(ne)) + b"".join(struct.pack("<q", n) for n in ne) + struct.pack("<iQ", tid, off)
        pad = (-len(blob)) % 32
        blobs.append(blob + b"\0" * pad)
        off += len(blob) + pad
    out += b"\0" * ((-len(out)) % 32)
    with open(path, "wb") as f:
        f.write(out + b"".join(blobs))


def random_blocks(rng, n, size, f16_at=(), f32_at=()):
    """n random blocks of `size` bytes whose f16 / f32 scale fields hold sane small values."""
    b = rng.integers(0, 256, (n, size), dtype=np.uint8)
    for at in f16_at:
        b[:, at:at + 2] = np.abs(rng.normal(0, 0.01, n)).astype(np.float16).view(np.uint8).reshape(n, 2)
    for at in f32_at:
        b[:, at:at + 4] = rng.normal(0, 0.01, n).astype(np.float32).view(np.uint8).reshape(n, 4)
    return b


def iq1_m_scales(rng, b):
    """IQ1_M keeps its fp16 block scale in the top nibbles of its four scale words (bytes 48-55):
    put a small positive one there, keeping the random 3-bit sub-block scales below."""
    n = len(b)
    d = np.abs(rng.normal(0, 0.01, n)).astype(np.float16).view(np.uint16)
    words = b[:, 48:56].copy().view(np.uint16).reshape(n, 4) & 0x0FFF
    for k in range(4):
        words[:, k] |= ((d >> (4 * k)) & 0xF) << 12
    b[:, 48:56] = words.view(np.uint8).reshape(n, 8)
