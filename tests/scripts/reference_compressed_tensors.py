#!/usr/bin/env python3
"""Quantized safetensors exactly as llmcompressor writes them, against compressed-tensors' own
decompressor (tests/data/compressed_tensors, made by make_ct_corpus.py; its docstring has the
recipe and versions).

For every checkpoint of the corpus (W4A16 group 32 on the experts only, W4A16, W4A16_ASYM, W8A16,
FP8_BLOCK with a [2, 1] grid on 128-wide weights, FP8_DYNAMIC, NVFP4A16, MXFP4A16):
- inspect says the schemes are declared, every quantized module has the scheme its format and
  bits name, and the BF16 modules llmcompressor left alone (router, lm_head, attention where only
  experts were targeted) are BF16;
- `dequant --dtype bf16` of every quantized module equals the library's decompression bit for bit
  (truth.json: SHA-256 of its BF16 bytes);
- `validate` finds no error or warning;
- `validate --against source` (the BF16 model they were made from) matches every tensor, within
  the scheme's quantization error.

usage: reference_compressed_tensors.py WEIGHTSCOPE CORPUS_DIR"""
import hashlib
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, fail, finish, schemes_by_logical  # noqa: E402

WS, CORPUS = sys.argv[1], sys.argv[2]
SOURCE = os.path.join(CORPUS, "source")
# folder -> (the scheme weightscope names its quantized modules with, the relative Frobenius error
# against the BF16 source: the largest `diff source FOLDER` measured, times 1.3 rounded up)
EXPECT = {
    "w4a16-g32-experts": ("int4-ct", 0.125),
    "w4a16": ("int4-ct", 0.15),
    "w4a16-asym": ("int4-ct", 0.13),
    "w8a16": ("int8-ct", 0.01),
    "fp8-block": ("fp8-block", 0.035),
    "fp8-dynamic": ("fp8-channel", 0.035),
    "nvfp4a16": ("nvfp4-ct", 0.125),
    "mxfp4a16": ("mxfp4-ct", 0.15),
}


def run(*args):
    return subprocess.run([WS, *args], capture_output=True, text=True)


folders = sorted(d for d in os.listdir(CORPUS) if d != "source" and os.path.isdir(os.path.join(CORPUS, d)))
check(folders == sorted(EXPECT), f"corpus folders {folders}")
with tempfile.TemporaryDirectory() as tmp:
    out = os.path.join(tmp, "w.npy")
    for folder in folders:
        path = os.path.join(CORPUS, folder)
        scheme, max_rel = EXPECT.get(folder, ("?", 0))
        truth = json.load(open(os.path.join(path, "truth.json")))
        r = run("inspect", path, "--json")
        if r.returncode != 0:
            fail(f"{folder}: inspect exit {r.returncode}: {r.stderr.strip()}")
            continue
        j = json.loads(r.stdout)
        check(j["model"]["quantization"]["schemes"] == "declared", f"{folder}: schemes {j['model']['quantization']['schemes']}")
        by_logical = schemes_by_logical(j)
        for logical, schemes in sorted(by_logical.items()):
            want = scheme if logical in truth else "bf16"
            check(schemes == {want}, f"{folder}: {logical} is {sorted(schemes)}, expected {want}")
        check(len(truth) > 0 and set(truth) <= set(by_logical), f"{folder}: {len(truth)} quantized modules, not all in the catalog")

        same = 0
        for module, t in sorted(truth.items()):
            r = run("dequant", path, module, "--dtype", "bf16", "--out", out)
            if r.returncode != 0:
                fail(f"{folder}: dequant {module}: exit {r.returncode}: {r.stderr.strip()}")
                continue
            got = np.load(out)
            ok = list(got.shape) == t["shape"] and hashlib.sha256(got.astype("<u2").tobytes()).hexdigest() == t["sha256"]
            check(ok, f"{folder}: dequant {module} {list(got.shape)} differs from compressed-tensors' decompression")
            same += ok
        print(f"{folder}: {same} of {len(truth)} modules bit-identical to compressed-tensors ({scheme})")

        report = os.path.join(tmp, folder + ".json")
        r = run("validate", path, "--report", report)
        v = json.load(open(report)) if os.path.exists(report) else {"findings": []}
        bad = [f"{f['code']} {f.get('tensor', '')}" for f in v["findings"] if f["severity"] in ("error", "warning")]
        check(r.returncode == 0 and not bad, f"{folder}: validate exit {r.returncode}: {bad[:5]}")

        r = run("validate", path, "--against", SOURCE, "--max-rel-error", str(max_rel), "--report", report)
        v = json.load(open(report)) if os.path.exists(report) else {"findings": []}
        bad = [f"{f['code']} {f.get('tensor', '')}: {f.get('message', '')}" for f in v["findings"] if f["severity"] in ("error", "warning")]
        check(r.returncode == 0 and not bad, f"{folder}: validate --against source --max-rel-error {max_rel}: exit {r.returncode}: {bad[:5]}")

    # The bound means something: 8-bit at 4-bit's error passes, 4-bit at 8-bit's does not.
    r = run("validate", os.path.join(CORPUS, "w4a16"), "--against", SOURCE, "--max-rel-error", "0.01")
    check(r.returncode == 1, f"w4a16 within 1% of its source: exit {r.returncode}")

finish()
