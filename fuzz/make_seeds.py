#!/usr/bin/env python3
"""Seed corpora for the fuzz targets, from the shared fixtures and small synthetic checkpoints.

usage: make_seeds.py WEIGHTSCOPE_BINARY FIXTURES_DIR OUT_DIR

Writes OUT_DIR/<target>/seed-* . Real files are too large to fuzz whole (megabytes), so each seed
keeps what the target parses - a header with its real names, dtypes and structure - and shrinks
only the data: safetensors headers get every dimension cut to at most 2 with offsets recomputed;
GGUF seeds are tiny checkpoints our own writer makes, plus the first KiB of each fixture (magic,
KV pairs). Standard library only: this runs before any virtual environment exists.
"""
import json
import os
import pathlib
import random
import struct
import subprocess
import sys
import tempfile


def write(out, target, name, data):
    d = out / target
    d.mkdir(parents=True, exist_ok=True)
    (d / ("seed-" + name)).write_bytes(data)


def safetensors_header(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        return json.loads(f.read(n))


ELEM_BITS = {"F64": 64, "I64": 64, "U64": 64, "F32": 32, "I32": 32, "U32": 32, "F16": 16, "BF16": 16, "I16": 16, "U16": 16,
             "F8_E4M3": 8, "F8_E5M2": 8, "F8_E8M0": 8, "I8": 8, "U8": 8, "BOOL": 8, "F4": 4}


def shrunk_safetensors(header):
    """The same tensors (names, dtypes, ranks) with every dimension at most 2, data zero."""
    tensors, offset = {}, 0
    for name, info in header.items():
        if name == "__metadata__":
            continue
        shape = [min(d, 2) for d in info["shape"]]
        elems = 1
        for d in shape:
            elems *= d
        nbytes = (elems * ELEM_BITS.get(info["dtype"], 8) + 7) // 8
        tensors[name] = {"dtype": info["dtype"], "shape": shape, "data_offsets": [offset, offset + nbytes]}
        offset += nbytes
    if "__metadata__" in header:
        tensors = {"__metadata__": header["__metadata__"], **tensors}
    text = json.dumps(tensors, separators=(",", ":")).encode()
    return struct.pack("<Q", len(text)) + text + bytes(offset)


def synth(binary, workdir):
    """Small one-shard checkpoints of every scheme: {label: folder}."""
    out = {}
    for like in ("qwen3-moe", "deepseek-v3", "gpt-oss"):
        for scheme in ("bf16", "fp8-block", "nvfp4", "mxfp4", "int4-ct", "kt-int8", "gguf-q4_k"):
            folder = workdir / f"{like}-{scheme}"
            cmd = [binary, "synth", "--like", like, "--scheme", scheme, "--layers", "1", "--experts", "2", "--hidden", "32",
                   "--intermediate", "32", "--dense-intermediate", "32", "--vocab", "16", "--shards", "1", str(folder)]
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
            out[f"{like}-{scheme}"] = folder
    return out


def main():
    binary, fixtures, out = sys.argv[1], pathlib.Path(sys.argv[2]), pathlib.Path(sys.argv[3])
    rng = random.Random(1)
    names = []
    for st in sorted(fixtures.rglob("*.safetensors")):
        h = safetensors_header(st)
        label = f"{st.parent.name}-{st.stem}"
        write(out, "fuzz_safetensors_header", label, shrunk_safetensors(h))
        names += [k for k in h if k != "__metadata__"]
    for idx in sorted(fixtures.rglob("*.safetensors.index.json")):
        write(out, "fuzz_safetensors_index", idx.parent.name, idx.read_bytes())
    for cfg in sorted(fixtures.rglob("config.json")):
        if cfg.name != "config.json":
            continue
        quant = cfg.parent / "hf_quant_config.json"
        write(out, "fuzz_config", cfg.parent.name, cfg.read_bytes() + (b"\0" + quant.read_bytes() if quant.exists() else b""))
    for g in sorted(fixtures.rglob("*.gguf")):
        write(out, "fuzz_gguf", g.stem, g.read_bytes()[:1024])

    with tempfile.TemporaryDirectory() as tmp:
        for label, folder in synth(binary, pathlib.Path(tmp)).items():
            cfg = folder / "config.json"
            config = cfg.read_bytes() if cfg.exists() else b""
            for f in sorted(folder.iterdir()):
                if f.suffix == ".gguf":
                    write(out, "fuzz_gguf", label, f.read_bytes())
                    write(out, "fuzz_checkpoint", label, b"\x01" + b"\0" + f.read_bytes())
                elif f.suffix == ".safetensors":
                    write(out, "fuzz_safetensors_header", label, f.read_bytes())
                    write(out, "fuzz_checkpoint", label, b"\x00" + config + b"\0" + f.read_bytes())
                    names += list(safetensors_header(f))
            if config:
                write(out, "fuzz_config", label, config)

    names = sorted(set(names))
    for k in range(0, len(names), 64):
        write(out, "fuzz_tensor_names", f"{k:05d}", bytes([k // 64 % 2]) + "\n".join(names[k:k + 64]).encode())

    # The expert-distribution recorder's files torch wrote (tests/data/kt), beside this script's tree.
    for pt in sorted((pathlib.Path(__file__).resolve().parent.parent / "tests" / "data" / "kt").glob("*.pt")):
        write(out, "fuzz_torch_save", pt.stem, pt.read_bytes())

    # Block decoders: a few blocks of every GGUF type id (random bytes; the decoders must take any).
    for type_id in range(48):
        write(out, "fuzz_gguf_blocks", f"type{type_id:02d}", bytes([type_id]) + bytes(rng.getrandbits(8) for _ in range(4 * 292)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
