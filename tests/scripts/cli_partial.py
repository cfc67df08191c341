#!/usr/bin/env python3
"""Partial checkpoints on the command line, as a user meets them: a download cut in the middle and
one part of a split GGUF set.

- `inspect` shows the whole catalog, marks exactly the tensors whose bytes run past the end of the
  file as "cut" (worked out here from the raw header, not from weightscope), lists the problem as
  a finding and exits 1;
- `dequant` of a tensor whose bytes are there exits 0 and writes the same .npy as from the whole
  file; of a cut one it exits 2 naming the tensor;
- `plan` refuses the partial checkpoint (exit 2): its numbers would pass for the whole model's.

usage: cli_partial.py WEIGHTSCOPE FIXTURES
"""
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish  # noqa: E402

WS, FX = sys.argv[1], sys.argv[2]


def run(*args):
    return subprocess.run([WS, *args], capture_output=True, text=True)


def raw_header(path):
    """name -> (absolute begin, absolute end) from the 8-byte length and the JSON header."""
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
    header.pop("__metadata__", None)
    return {k: (8 + n + v["data_offsets"][0], 8 + n + v["data_offsets"][1]) for k, v in header.items()}


with tempfile.TemporaryDirectory() as tmp:
    # A download cut a little past the middle of the data.
    src = os.path.join(FX, "hf/mixtral/model.safetensors")
    spans = raw_header(src)
    cut_at = os.path.getsize(src) // 2 + 5
    cut_dir = os.path.join(tmp, "cut")
    os.mkdir(cut_dir)
    shutil.copy(os.path.join(FX, "hf/mixtral/config.json"), cut_dir)
    with open(src, "rb") as f, open(os.path.join(cut_dir, "model.safetensors"), "wb") as g:
        g.write(f.read(cut_at))

    r = run("inspect", "--json", cut_dir)
    check(r.returncode == 1, f"inspect of a cut file exits {r.returncode}, expected 1: {r.stderr}")
    doc = json.loads(r.stdout)
    listed = {t["name"]: t for t in doc["tensors"]}
    check(set(listed) == set(spans), "inspect of a cut file lists every tensor of the header")
    for name, (begin, end) in spans.items():
        t = listed.get(name, {})
        check(t.get("cut", False) == (end > cut_at), f"{name}: cut={t.get('cut', False)}, its bytes end at {end}, the file at {cut_at}")
    first_cut = min((b, n) for n, (b, e) in spans.items() if e > cut_at)[1]
    codes = [(f["code"], f["tensor"]) for f in doc["findings"]]
    check(codes == [("WS-I011", first_cut)], f"findings {codes}, expected WS-I011 on {first_cut}")

    present = min((b, n) for n, (b, e) in spans.items() if e <= cut_at and n.endswith(".weight"))[1]
    cut_one = max((b, n) for n, (b, e) in spans.items() if e > cut_at)[1]
    a, b = os.path.join(tmp, "a.npy"), os.path.join(tmp, "b.npy")
    r = run("dequant", cut_dir, present, "--out", a)
    check(r.returncode == 0, f"dequant of {present}, whose bytes are there, exits {r.returncode}: {r.stderr}")
    run("dequant", os.path.join(FX, "hf/mixtral"), present, "--out", b)
    check(os.path.exists(a) and open(a, "rb").read() == open(b, "rb").read(), f"{present}: the cut file's .npy differs from the whole file's")
    r = run("dequant", cut_dir, cut_one)
    check(r.returncode == 2 and f"'{cut_one}'" in r.stderr and "past the end" in r.stderr, f"dequant of cut {cut_one}: exit {r.returncode}, {r.stderr}")
    r = run("plan", cut_dir, "--ep", "2")
    check(r.returncode == 2, f"plan of a cut checkpoint exits {r.returncode}, expected 2")

    # The second part of a split GGUF set, alone.
    whole = json.loads(run("inspect", "--json", os.path.join(FX, "gguf/tiny-qwen3moe-kquants-00001-of-00002.gguf")).stdout)
    second = {t["name"] for t in whole["tensors"] if t["file"] == 1}
    part = os.path.join(tmp, "m-00002-of-00002.gguf")
    shutil.copy(os.path.join(FX, "gguf/tiny-qwen3moe-kquants-00002-of-00002.gguf"), part)
    r = run("inspect", "--json", part)
    check(r.returncode == 1, f"inspect of a lone split part exits {r.returncode}, expected 1")
    doc = json.loads(r.stdout)
    check({t["name"] for t in doc["tensors"]} == second, "a lone split part lists exactly its own tensors")
    check([(f["code"], os.path.basename(f["file"])) for f in doc["findings"]] == [("WS-I013", "m-00001-of-00002.gguf")],
          f"a lone split part names the missing one: {doc['findings']}")
    name = sorted(second)[0]
    r = run("dequant", part, name, "--rows", "0:1")
    check(r.returncode == 0, f"dequant {name} from a lone part exits {r.returncode}: {r.stderr}")

finish()
