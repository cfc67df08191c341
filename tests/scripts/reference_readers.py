"""The catalog as the reference readers see it - safetensors' own Rust reader (safe_open) plus a
plain header read for offsets, and gguf-py's GGUFReader - and its comparison with `weightscope
inspect --json`, shared by reference_catalog.py and reference_writers.py."""
import json
import os
import struct
import subprocess

from gguf import GGUFReader
from safetensors import safe_open

from checks import check


def inspect_json(ws, path):
    """`inspect --json` of a checkpoint that must open whole (exit 0)."""
    r = subprocess.run([ws, "inspect", "--json", path], capture_output=True, text=True)
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
