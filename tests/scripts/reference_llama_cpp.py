#!/usr/bin/env python3
"""diff, inspect and validate on real llama.cpp conversions (tests/data/llama_cpp, made by
llama.cpp's own convert_hf_to_gguf.py: see make_llama_cpp_conversions.py and the folder's README).

The HF sources are made again here by `weightscope synth` with the arguments the corpus was made
from (deterministic), so each GGUF meets the exact checkpoint it was converted from:
- BF16 conversions: every unit matched and identical, nothing on one side only - the converter's
  transformations undone (Llama's RoPE permutation of Q/K, DeepSeek's kv_b split into k_b/v_b,
  GLM-4.5's and gpt-oss's post_attention_norm, gpt-oss's attention sinks), and the report says
  which it undid;
- F16: every unit identical or within F16 rounding (2^-11 relative);
- Q8_0: every unit within Q8_0's error: |a - b| <= max|a| x (1/254 + 2^-11) (half a step of the
  block's largest value over 127, plus the F16 rounding of the block scale);
- the HF and GGUF forms have equal parameter counts; bytes by scheme equal bytes by dtype;
- validate: every conversion clean; a GGUF whose stacked ffn_down_exps contradicts its own expert
  count and lengths (written here by gguf-py) is a WS-S003 error, one whose head_count_kv its
  attn_k does not hold a WS-S008 error, their correct twin neither.

usage: reference_llama_cpp.py WEIGHTSCOPE
"""
import json
import os
import struct
import subprocess
import sys
import tempfile

import gguf
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish  # noqa: E402
from make_llama_cpp_conversions import OUTTYPES, SOURCES  # noqa: E402

WS = sys.argv[1]
DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "llama_cpp")
# What each architecture's conversion must have undone or renamed: (key suffix, text in "undone")
EXPECTED = {
    "mixtral": [("blk.0.attn_q", "RoPE row permutation over 4 heads"), ("blk.1.attn_k", "RoPE row permutation over 2 heads")],
    "deepseek-v3": [("blk.0.attn_k_b", "per-head transpose"), ("blk.1.attn_v_b", "V rows")],
    "glm-4.5": [("blk.1.post_attention_norm", None)],
    "gpt-oss": [("blk.0.post_attention_norm", None), ("blk.1.attn_sinks", None)],
}


def run(*args):
    r = subprocess.run([WS, *args], capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr


def js(*args):
    rc, out, err = run(*args)
    return rc, (json.loads(out) if out.strip().startswith("{") else {"error": err})


def hf_values(folder):
    """name -> float32 array of every BF16/F32 tensor of a one-file safetensors checkpoint."""
    raw = open(os.path.join(folder, "model.safetensors"), "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    out = {}
    for name, info in json.loads(raw[8:8 + n]).items():
        if name == "__metadata__":
            continue
        b, e = info["data_offsets"]
        data = raw[8 + n + b:8 + n + e]
        if info["dtype"] == "BF16":
            out[name] = (np.frombuffer(data, np.uint16).astype(np.uint32) << 16).view(np.float32)
        elif info["dtype"] == "F32":
            out[name] = np.frombuffer(data, np.float32)
    return out


def amax_of(values, logical):
    for suffix in ("", ".weight", "_bias", ".bias"):
        if logical + suffix in values:
            return float(np.abs(values[logical + suffix]).max())
    return None


with tempfile.TemporaryDirectory() as tmp:
    for name, args in SOURCES.items():
        src = os.path.join(tmp, name)
        subprocess.run([WS, "synth", "--scheme", "bf16", "--shards", "1", *args, src], check=True, capture_output=True)
        values = hf_values(src)
        _, hf_inspect = js("inspect", "--json", src)
        for outtype in OUTTYPES:
            path = os.path.join(DATA, f"{name}-{outtype}.gguf")
            label = f"{name} {outtype}"
            rc, d = js("diff", src, path, "--json")
            if "tensors" not in d:
                check(False, f"{label}: diff failed: {d.get('error', '')[:300]}")
                continue
            check(rc in (0, 1) and not d["only_a"] and not d["only_b"], f"{label}: only in A {d['only_a'][:3]}, only in B {d['only_b'][:3]}")
            check(d["summary"]["shape_mismatches"] == 0 and d["summary"]["errors"] == 0, f"{label}: {d['summary']}")
            for t in d["tensors"]:
                where = f"{label} {t['key']}"
                if outtype == "bf16":
                    check(t["status"] == "identical", f"{where}: {t['status']}, rel {t.get('rel_frobenius')}")
                elif outtype == "f16":
                    check(t["status"] == "identical" or t.get("rel_frobenius", float("inf")) <= 2 ** -11, f"{where}: rel {t.get('rel_frobenius')} beyond F16 rounding")
                else:
                    amax = amax_of(values, t["a"])
                    check(amax is not None and t.get("max_abs", float("inf")) <= amax * (1 / 254 + 2 ** -11) + 1e-12,
                          f"{where}: max |a-b| {t.get('max_abs')} beyond Q8_0's error for max|a| {amax}")
            keys = {t["key"]: t for t in d["tensors"]}
            for key, undone in EXPECTED[name]:
                t = keys.get(key)
                check(t is not None and (undone is None or any(undone in u for u in t["undone"])),
                      f"{label}: {key} {'missing' if t is None else 'undone ' + str(t['undone'])}, expected {undone!r}")
            _, g = js("inspect", "--json", path)
            check(g["totals"]["parameters"] == hf_inspect["totals"]["parameters"],
                  f"{label}: {g['totals']['parameters']} parameters, the HF source {hf_inspect['totals']['parameters']}")
            if outtype != "q8_0":
                by_dtype = {k.lower(): v for k, v in g["totals"]["bytes_by_dtype"].items()}
                check(by_dtype == g["totals"]["bytes_by_scheme"], f"{label}: bytes by scheme {g['totals']['bytes_by_scheme']} vs by dtype {by_dtype}")
            rc, v = js("validate", path, "--report", os.path.join(tmp, "v.json"))
            findings = json.load(open(os.path.join(tmp, "v.json")))["findings"]
            errors = [f["code"] for f in findings if f["severity"] == "error"]
            check(rc == 0 and not errors, f"{label}: validate exit {rc}, errors {errors[:5]}")
        print(f"{name}: {len(SOURCES[name])} synth args, {', '.join(OUTTYPES)} diffed, inspected, validated")

    # A stacked expert tensor that contradicts the file's own metadata (the transformers-5
    # Qwen3-VL-MoE converter bug: ffn_down_exps written with gate's shape), and a head_count_kv
    # the attention tensors do not hold (WS-S008 from the GGUF's attention.* keys).
    H, I, E, V = 256, 128, 8, 512
    for damage, want in (("down", [("WS-S003", "blk.0.ffn_down_exps.weight")]), ("kv heads", [("WS-S008", "blk.0.attn_k.weight")]), (None, [])):
        path = os.path.join(tmp, "stacked.gguf")
        w = gguf.GGUFWriter(path, "qwen3moe")
        w.add_block_count(1)
        w.add_embedding_length(H)
        w.add_expert_count(E)
        w.add_expert_used_count(2)
        w.add_expert_feed_forward_length(I)
        w.add_head_count(4)
        w.add_head_count_kv(4 if damage == "kv heads" else 2)
        w.add_context_length(4096)
        rng = np.random.default_rng(0)
        f = lambda *s: rng.standard_normal(s).astype(np.float32)  # noqa: E731
        for n, s in (("token_embd", (V, H)), ("output_norm", (H,)), ("output", (V, H)), ("blk.0.attn_norm", (H,)), ("blk.0.ffn_norm", (H,)),
                     ("blk.0.attn_q", (256, H)), ("blk.0.attn_k", (128, H)), ("blk.0.attn_v", (128, H)), ("blk.0.attn_output", (H, 256)),
                     ("blk.0.ffn_gate_inp", (E, H)), ("blk.0.ffn_gate_exps", (E, I, H)), ("blk.0.ffn_up_exps", (E, I, H)),
                     ("blk.0.ffn_down_exps", (E, I, H) if damage == "down" else (E, H, I))):
            w.add_tensor(n + ".weight", f(*s))
        w.write_header_to_file()
        w.write_kv_data_to_file()
        w.write_tensors_to_file()
        w.close()
        rc, _, _ = run("validate", path, "--report", os.path.join(tmp, "s.json"))
        rules = [(x["code"], x.get("tensor")) for x in json.load(open(os.path.join(tmp, "s.json")))["findings"] if x["severity"] == "error"]
        check(rc == (1 if want else 0) and rules == want, f"GGUF with {damage or 'nothing'} contradicting its metadata: exit {rc}, {rules}, expected {want}")

finish()
