#!/usr/bin/env python3
"""GPTQ, AWQ and bitsandbytes weights as the libraries themselves pack them, against each library's
own dequantization (tests/data/library_quant, made by make_library_corpus.py; its docstring has the
recipe and versions).

For every folder of the corpus:
- inspect says the schemes are declared, every expert projection has the scheme its folder names
  (with the GPTQ width), and the parameters are the unpacked weights' (plus the BF16 router);
- `dequant` of every quantized module equals the library's own dequantization bit for bit
  (truth.json: SHA-256 of its float32 bytes), and a row range equals the same rows of the whole;
- `validate --values` finds no error or warning.
Then lying companions, each an error naming the tensor, never a crash or a silent wrong answer: a
g_idx entry past the groups, a bitsandbytes quant state whose shape disagrees with the bytes, an
AWQ version whose packing is not decoded, AWQ GEMV's padded scales against a wrong or missing group size, a GPTQ width the config and shapes cannot tell.

usage: reference_library_quant.py WEIGHTSCOPE CORPUS_DIR"""
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

import struct

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, fail, finish, schemes_by_logical  # noqa: E402

WS, CORPUS = sys.argv[1], sys.argv[2]
EXPECT = {
    "gptq-2bit": "gptq-int2", "gptq-3bit": "gptq-int3", "gptq-4bit": "gptq-int4", "gptq-4bit-actorder": "gptq-int4",
    "gptq-4bit-v2": "gptq-int4", "gptq-8bit": "gptq-int8", "awq-gemm": "awq-int4", "awq-gemv": "awq-int4", "bnb-nf4": "bnb-nf4",
    "bnb-nf4-nested": "bnb-nf4", "bnb-fp4-nested-f16": "bnb-fp4", "bnb-int8": "bnb-int8",
}
ROUTER = "model.layers.0.mlp.gate"


def run(*args):
    return subprocess.run([WS, *args], capture_output=True, text=True)


def dequant(path, module, out, *extra):
    r = run("dequant", path, module, "--out", out, *extra)
    if r.returncode != 0:
        fail(f"dequant {path} {module}: exit {r.returncode}: {r.stderr.strip()}")
        return None
    return np.load(out)


def refused(path, module, needle, label):
    r = run("dequant", path, module, "--out", os.devnull)
    check(r.returncode not in (0, -11, -6) and needle in r.stderr, f"{label}: exit {r.returncode}, {r.stderr.strip()!r} lacks {needle!r}")


folders = sorted(d for d in os.listdir(CORPUS) if os.path.isdir(os.path.join(CORPUS, d)))
check(folders == sorted(EXPECT), f"corpus folders {folders}")
with tempfile.TemporaryDirectory() as tmp:
    out = os.path.join(tmp, "w.npy")
    for folder in folders:
        path = os.path.join(CORPUS, folder)
        truth = json.load(open(os.path.join(path, "truth.json")))
        r = run("inspect", path, "--json")
        if r.returncode != 0:
            fail(f"{folder}: inspect exit {r.returncode}: {r.stderr.strip()}")
            continue
        j = json.loads(r.stdout)
        check(j["model"]["quantization"]["schemes"] == "declared", f"{folder}: schemes {j['model']['quantization']['schemes']}")
        by_logical = schemes_by_logical(j)
        for logical, schemes in sorted(by_logical.items()):
            want = EXPECT[folder] if logical in truth else "bf16"
            check(schemes == {want}, f"{folder}: {logical} is {sorted(schemes)}, expected {want}")
        check(set(truth) | {ROUTER} == set(by_logical), f"{folder}: logical tensors {sorted(by_logical)}")
        params = sum(int(np.prod(t["shape"])) for t in truth.values()) + 2 * 64
        check(j["totals"]["parameters"] == params, f"{folder}: {j['totals']['parameters']} parameters, expected {params}")

        for module, t in sorted(truth.items()):
            got = dequant(path, module, out)
            if got is None:
                continue
            ok = list(got.shape) == t["shape"] and got.dtype == np.float32 and hashlib.sha256(got.astype("<f4").tobytes()).hexdigest() == t["sha256"]
            check(ok, f"{folder}: dequant {module} {list(got.shape)} differs from the library's own dequantization")
            rows = dequant(path, module, out, "--rows", "5:17")
            check(rows is not None and np.array_equal(rows.view(np.uint32), got[5:17].view(np.uint32)), f"{folder}: {module} rows 5:17 differ from the whole's")
        r = run("validate", path, "--values", "--format", "json")
        rep = json.loads(r.stdout) if r.stdout.strip().startswith("{") else {}
        bad = [f for f in rep.get("findings", []) if f.get("severity") in ("error", "warning")]
        summary = rep.get("summary", {})
        check(r.returncode == 0 and summary.get("errors") == 0 and summary.get("warnings") == 0 and summary.get("bytes_read", 0) > 0,
              f"{folder}: validate --values exit {r.returncode}: {[(f['code'], f['message'][:80]) for f in bad][:3]} {r.stderr.strip()[:200]}")

    # Lying companions, in copies of the real files: tensors edited as raw bytes (the router is
    # BF16, which numpy has no dtype for).
    def load_raw(path):
        with open(path, "rb") as f:
            n = struct.unpack("<Q", f.read(8))[0]
            header = json.loads(f.read(n))
            data = f.read()
        header.pop("__metadata__", None)
        return {k: (v["dtype"], v["shape"], data[v["data_offsets"][0]:v["data_offsets"][1]]) for k, v in header.items()}

    def save_raw(tensors, path):
        header, blobs, at = {}, [], 0
        for k, (dtype, shape, blob) in tensors.items():
            header[k] = {"dtype": dtype, "shape": shape, "data_offsets": [at, at + len(blob)]}
            blobs.append(blob)
            at += len(blob)
        h = json.dumps(header).encode()
        with open(path, "wb") as f:
            f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))

    def copy(folder, edit_tensors=None, edit_config=None):
        d = os.path.join(tmp, folder + "-" + str(len(os.listdir(tmp))))
        shutil.copytree(os.path.join(CORPUS, folder), d)
        st = os.path.join(d, "model.safetensors")
        if edit_tensors:
            t = load_raw(st)
            edit_tensors(t)
            save_raw(t, st)
        if edit_config:
            cfg = json.load(open(os.path.join(d, "config.json")))
            edit_config(cfg["quantization_config"])
            json.dump(cfg, open(os.path.join(d, "config.json"), "w"))
        return d

    mod = "model.layers.0.mlp.experts.1.up_proj"

    def past_groups(t):
        dtype, shape, blob = t[mod + ".g_idx"]
        g = np.frombuffer(blob, dtype="<i4").copy()
        g[7] = 2
        t[mod + ".g_idx"] = (dtype, shape, g.tobytes())
    refused(copy("gptq-4bit-actorder", past_groups), mod, "g_idx[7] = 2", "g_idx past the 2 groups")

    def lying_state(t):
        key = mod + ".weight.quant_state.bitsandbytes__nf4"
        state = json.loads(t[key][2].decode())
        state["shape"] = [64, 65]
        blob = json.dumps(state).encode()
        t[key] = ("U8", [len(blob)], blob)
    refused(copy("bnb-nf4-nested", lying_state), mod, "quant state's shape has 4160 values", "quant state shape against the bytes")
    refused(copy("awq-gemm", edit_config=lambda q: q.update(version="gemv_fast")), mod, 'AWQ version "gemv_fast" is not decoded', "AWQ gemv_fast")
    refused(copy("awq-gemv", edit_config=lambda q: q.update(group_size=64)), mod, "AWQ GEMV scales [64, 32] are not [64, 16]", "AWQ GEMV scales against the group size")
    refused(copy("awq-gemv", edit_config=lambda q: q.pop("group_size")), mod, "AWQ GEMV needs quantization_config.group_size", "AWQ GEMV without a group size")

    def no_width(t):
        for name in list(t):
            if name.endswith(".g_idx"):
                del t[name]
    refused(copy("gptq-3bit", no_width, lambda q: q.pop("bits")), mod, "GPTQ width unknown", "GPTQ without bits or g_idx")
    refused(copy("gptq-4bit", edit_config=lambda q: q.update(format="gptq_p", checkpoint_format="gptq_p")), mod,
            'GPTQ checkpoint format "gptq_p" is not decoded', "GPTQ planar format")

finish()
