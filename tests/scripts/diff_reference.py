#!/usr/bin/env python3
"""weightscope diff against independent references.

1. qwen3_moe (BF16) against qwen3_moe_fp8: every tensor matched; FP8 ones differ by what numpy +
   ml_dtypes compute for the same dequantization (cosine, NMSE, max |a-b| recomputed here); the
   BF16 ones (norms, router, embeddings, lm_head) identical.
2. A synthetic HF BF16 checkpoint against GGUF files of the same weights written here with
   gguf-py (names from gguf-py's own TensorNameMap, experts stacked as convert_hf_to_gguf does):
   F32 - every unit matched across naming families and stacked experts, and bit-identical, which
   also proves orientation; Q8_0 - every unit matched, errors as numpy computes them.
3. gpt-oss's fused, interleaved [E, H, 2I] experts against the same weights split per expert
   here with numpy: every unit, biases included, bit-identical.
4. tiny-qwen3moe-kquants.gguf against ggml's own dequantized output: zero error everywhere.
1b. The same pair with --numerics kt: the FP8 side as the KTransformers loader computes it
   (bf16(bf16(code) x bf16(scale)), numpy + ml_dtypes here), the BF16 side unchanged.

usage: diff_reference.py WEIGHTSCOPE FIXTURES
"""
import json
import os
import re
import subprocess
import sys
import tempfile

import gguf
import ml_dtypes
import numpy as np

WS, FX = sys.argv[1], sys.argv[2]
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)


def diff(a, b):
    r = subprocess.run([WS, "diff", a, b, "--json"], capture_output=True, text=True)
    if r.returncode not in (0, 1):
        raise SystemExit(f"diff {a} {b}: exit {r.returncode}: {r.stderr}")
    return r.returncode, json.loads(r.stdout)


def metrics(a, b):
    a, b = a.astype(np.float64).ravel(), b.astype(np.float64).ravel()
    d = a - b
    return {"cosine": float(a @ b / np.sqrt((a @ a) * (b @ b))), "nmse": float(d @ d / (a @ a)), "max_abs": float(np.abs(d).max())}


def close(ours, ref, what):
    for k, v in ref.items():
        check(abs(ours[k] - v) <= 1e-9 * max(1.0, abs(v)), f"{what}: {k} {ours[k]} but numpy says {v}")


RAW = {"BF16": np.uint16, "F16": np.float16, "F32": np.float32, "F8_E4M3": np.uint8, "I64": np.int64, "I32": np.int32, "U8": np.uint8}


def load_dir(d):
    """Raw arrays by name (BF16 as uint16, FP8 as uint8): numpy's safetensors loader refuses both."""
    out = {}
    for f in sorted(os.listdir(d)):
        if not f.endswith(".safetensors"):
            continue
        raw = open(os.path.join(d, f), "rb").read()
        n = int.from_bytes(raw[:8], "little")
        for name, info in json.loads(raw[8:8 + n]).items():
            if name == "__metadata__":
                continue
            b, e = info["data_offsets"]
            out[name] = np.frombuffer(raw[8 + n + b:8 + n + e], dtype=RAW[info["dtype"]]).reshape(info["shape"])
    return out


def bf16(x):
    return x.view(ml_dtypes.bfloat16).astype(np.float32) if x.dtype == np.uint16 else x.astype(np.float32)


# ---------------------------------------------------------------- 1. BF16 against FP8 block
a_dir, b_dir = os.path.join(FX, "hf/qwen3_moe"), os.path.join(FX, "hf/qwen3_moe_fp8")
rc, j = diff(a_dir, b_dir)
j_fp8 = j
check(rc == 0, f"qwen3_moe vs fp8: exit {rc}")
check(not j["only_a"] and not j["only_b"], f"unmatched: {j['only_a'][:3]} {j['only_b'][:3]}")
A, B = load_dir(a_dir), load_dir(b_dir)
n_fp8 = n_same = 0
for t in j["tensors"]:
    wa, wb = A[t["a"] + ".weight"], B[t["b"] + ".weight"]
    if t["scheme_b"] == "fp8-block":
        n_fp8 += 1
        check(t["status"] == "differs" and t["rel_frobenius"] < 0.08, f"{t['key']}: {t['status']} rel {t.get('rel_frobenius')}")
        s = B[t["b"] + ".weight_scale_inv"].astype(np.float32)
        rows, cols = wb.shape
        grid = s.reshape((rows + 127) // 128, (cols + 127) // 128)  # squeezed grids hold the same scales
        full = np.repeat(np.repeat(grid, 128, 0), 128, 1)[:rows, :cols]
        ref = wb.view(ml_dtypes.float8_e4m3fn).astype(np.float32) * full
        close(t, metrics(bf16(wa), ref), t["key"])
        sat = float(np.mean((wb.view(np.uint8) & 0x7F) == 0x7E))
        check(abs(t["saturated_b"] - sat) < 1e-12, f"{t['key']}: saturated {t['saturated_b']} but numpy says {sat}")
    else:
        n_same += 1
        check(t["status"] == "identical", f"{t['key']} ({t['scheme_a']}): {t['status']}")
check(n_fp8 > 0 and n_same > 0, f"{n_fp8} fp8 and {n_same} bf16 pairs")
kinds = {re.sub(r"^blk\.\d+\.", "", t["key"]) for t in j["tensors"] if t["scheme_b"] != "fp8-block"}
check({"token_embd", "output", "output_norm", "attn_norm", "ffn_norm", "ffn_gate_inp"} <= kinds, f"identical kinds: {sorted(kinds)}")
print(f"1. qwen3_moe vs qwen3_moe_fp8: {len(j['tensors'])} matched, {n_fp8} FP8 checked against numpy, {n_same} identical")


# ---------------------------------------------------------------- 1b. the same with --numerics kt
r = subprocess.run([WS, "diff", a_dir, b_dir, "--json", "--numerics", "kt"], capture_output=True, text=True)
jk = json.loads(r.stdout) if r.returncode in (0, 1) else {"tensors": [], "numerics": None}
check(r.returncode == 0 and jk["numerics"] == "kt" and j["numerics"] == "reference", f"diff --numerics kt: exit {r.returncode}, numerics {jk['numerics']}")
moved = 0
for t in jk["tensors"]:
    wa, wb = A[t["a"] + ".weight"], B[t["b"] + ".weight"]
    if t["scheme_b"] != "fp8-block":
        check(t["status"] == "identical", f"kt {t['key']} ({t['scheme_a']}): {t['status']}")
        continue
    rows, cols = wb.shape
    s = B[t["b"] + ".weight_scale_inv"].astype(np.float32).reshape((rows + 127) // 128, (cols + 127) // 128)
    s = np.repeat(np.repeat(s.astype(ml_dtypes.bfloat16), 128, 0), 128, 1)[:rows, :cols].astype(np.float32)
    kt = (wb.view(ml_dtypes.float8_e4m3fn).astype(np.float32) * s).astype(ml_dtypes.bfloat16).astype(np.float32)
    close(t, metrics(bf16(wa), kt), "kt " + t["key"])
    ref = next(x for x in j["tensors"] if x["key"] == t["key"])
    moved += int(ref["max_abs"] != t["max_abs"])
check(moved == n_fp8, f"kt: {moved} of {n_fp8} FP8 pairs differ from the reference arithmetic's metrics")
print(f"1b. --numerics kt: {len(jk['tensors'])} matched, {n_fp8} FP8 against numpy's transcription of the KTransformers formula")


# ---------------------------------------------------------------- 2. HF BF16 against GGUF of the same weights
def write_gguf(hf_dir, path, qtype):
    cfg = json.load(open(os.path.join(hf_dir, "config.json")))
    layers = cfg["num_hidden_layers"]
    names = gguf.get_tensor_name_map(gguf.MODEL_ARCH.QWEN3MOE, layers)
    w = gguf.GGUFWriter(path, "qwen3moe")
    w.add_block_count(layers)
    w.add_embedding_length(cfg["hidden_size"])
    w.add_feed_forward_length(cfg["intermediate_size"])
    w.add_expert_count(cfg["num_experts"])
    w.add_expert_used_count(cfg["num_experts_per_tok"])
    w.add_expert_feed_forward_length(cfg["moe_intermediate_size"])
    w.add_head_count(cfg["num_attention_heads"])
    w.add_head_count_kv(cfg["num_key_value_heads"])
    tensors = {k: bf16(v) for k, v in load_dir(hf_dir).items()}
    stacked = {}
    for k in sorted(tensors):
        m = re.match(r"(model\.layers\.\d+\.mlp\.experts)\.(\d+)\.(\w+)\.weight$", k)
        if m:
            stacked.setdefault(f"{m[1]}.{m[3]}.weight", {})[int(m[2])] = tensors.pop(k)
    for k, d in stacked.items():
        tensors[k] = np.stack([d[e] for e in sorted(d)])
    for k, v in tensors.items():
        name = names.get_name(k, try_suffixes=(".weight", ".bias"))
        if name is None:
            raise SystemExit(f"gguf-py has no name for {k}")
        if qtype == gguf.GGMLQuantizationType.Q8_0 and v.ndim >= 2 and v.shape[-1] % 32 == 0:
            w.add_tensor(name, gguf.quants.quantize(v, qtype), raw_dtype=qtype)
        else:
            w.add_tensor(name, v.astype(np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return tensors, names


with tempfile.TemporaryDirectory() as tmp:
    hf = os.path.join(tmp, "hf")
    subprocess.run([WS, "synth", "--like", "qwen3-moe", "--scheme", "bf16", hf], check=True, capture_output=True)
    for label, qtype in (("F32", gguf.GGMLQuantizationType.F32), ("Q8_0", gguf.GGMLQuantizationType.Q8_0)):
        path = os.path.join(tmp, f"model-{label}.gguf")
        tensors, _ = write_gguf(hf, path, qtype)
        rc, j = diff(hf, path)
        check(rc == 0, f"{label}: exit {rc}")
        check(not j["only_a"] and not j["only_b"], f"{label}: unmatched {j['only_a'][:3]} {j['only_b'][:3]}")
        experts = sum(1 for t in j["tensors"] if t["expert"] >= 0)
        cfg = json.load(open(os.path.join(hf, "config.json")))
        check(experts == cfg["num_hidden_layers"] * cfg["num_experts"] * 3, f"{label}: {experts} expert units")
        check(j["summary"]["matched"] == len(j["tensors"]) and j["summary"]["errors"] == 0, f"{label}: summary {j['summary']}")
        if label == "F32":
            bad = [t["key"] for t in j["tensors"] if t["status"] != "identical"]
            check(not bad, f"F32: not identical: {bad[:5]}")
        else:
            reader = gguf.GGUFReader(path)
            ggml = {t.name: t for t in reader.tensors}
            hfw = {k: bf16(v) for k, v in load_dir(hf).items()}
            checked = 0
            for t in j["tensors"]:
                g = ggml[re.sub(r"\.(\d+)$", "", t["key"]) + ".weight"]
                if g.tensor_type != gguf.GGMLQuantizationType.Q8_0:
                    check(t["status"] == "identical", f"Q8_0 file, {t['key']} ({g.tensor_type.name}): {t['status']}")
                    continue
                deq = gguf.quants.dequantize(g.data, g.tensor_type)
                if t["expert"] >= 0:
                    deq = deq[t["expert"]]
                ref = hfw[t["a"] + ".weight"]
                close(t, metrics(ref, deq.reshape(ref.shape)), f"Q8_0 {t['key']}")
                checked += 1
            check(checked > 0, "Q8_0: no quantized tensor compared")
        print(f"2. synth HF BF16 vs GGUF {label}: {len(j['tensors'])} units matched across names, {experts} from stacked experts")

# ---------------------------------------------------------------- 3. fused against per-expert
def write_safetensors(path, arrays):
    """BF16 arrays as uint16 bits, the header written by hand like the format's spec says."""
    header, blobs, at = {}, [], 0
    for name in sorted(arrays):
        a = np.ascontiguousarray(arrays[name])
        dtype = "BF16" if a.dtype == np.uint16 else {np.dtype(np.float32): "F32", np.dtype(np.uint8): "U8"}[a.dtype]
        header[name] = {"dtype": dtype, "shape": list(a.shape), "data_offsets": [at, at + a.nbytes]}
        blobs.append(a.tobytes())
        at += a.nbytes
    text = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(len(text).to_bytes(8, "little") + text + b"".join(blobs))


with tempfile.TemporaryDirectory() as tmp:
    fused = os.path.join(tmp, "fused")
    subprocess.run([WS, "synth", "--like", "gpt-oss", "--scheme", "bf16", "--shards", "1", fused], check=True, capture_output=True)
    t = load_dir(fused)
    per = os.path.join(tmp, "per-expert")
    os.makedirs(per)
    out = {}
    for k, v in t.items():
        m = re.match(r"(model\.layers\.\d+\.mlp\.experts)\.(gate_up_proj|down_proj)(_bias)?$", k)
        if not m:
            out[k] = v
            continue
        base, proj, bias = m[1], m[2], m[3]
        for e in range(v.shape[0]):
            if proj == "gate_up_proj":  # gpt-oss: [E, H, 2I] with gate and up interleaved along 2I
                gate, up = v[e][..., 0::2], v[e][..., 1::2]
                for name, x in (("gate_proj", gate), ("up_proj", up)):
                    out[f"{base}.{e}.{name}.{'bias' if bias else 'weight'}"] = x if bias else x.T
            else:  # down: [E, I, H], stored in -> out
                out[f"{base}.{e}.down_proj.{'bias' if bias else 'weight'}"] = v[e] if bias else v[e].T
    write_safetensors(os.path.join(per, "model.safetensors"), out)
    cfg = json.load(open(os.path.join(fused, "config.json")))
    json.dump(cfg, open(os.path.join(per, "config.json"), "w"))
    rc, j = diff(fused, per)
    check(rc == 0 and not j["only_a"] and not j["only_b"], f"fused vs per-expert: exit {rc}, only A {j['only_a'][:4]}, only B {j['only_b'][:4]}")
    bad = [x["key"] for x in j["tensors"] if x["status"] != "identical"]
    check(not bad, f"fused vs per-expert: not identical: {bad[:5]}")
    nb = sum(1 for x in j["tensors"] if x["key"].endswith(".bias") and x["expert"] >= 0)
    check(nb == cfg["num_hidden_layers"] * cfg["num_local_experts"] * 3, f"fused vs per-expert: {nb} expert bias units")
    # MXFP4 blocks ([E, rows, in/32, 16]) are stacked experts too: one unit per expert
    mx = os.path.join(tmp, "mxfp4")
    subprocess.run([WS, "synth", "--like", "gpt-oss", "--scheme", "mxfp4", "--shards", "1", mx], check=True, capture_output=True)
    # ... against the BF16 checkpoint transformers would make of it, decoded here by numpy:
    # e2m1 codes (element 2k in the low nibble) times 2^(e - 127), [E, out, in] transposed to
    # gpt-oss's BF16 [E, in, out]. Every value is exact in BF16, so every unit must be identical.
    fp4 = np.array([0, .5, 1, 1.5, 2, 3, 4, 6, -0., -.5, -1, -1.5, -2, -3, -4, -6], dtype=np.float32)
    src, dec = load_dir(mx), {}
    for name, arr in src.items():
        if name.endswith("_scales"):
            continue
        if name.endswith("_blocks"):
            base = name[:-len("_blocks")]
            codes = np.stack([arr & 0x0F, arr >> 4], axis=-1).reshape(arr.shape[:-2] + (-1,))
            scales = np.exp2(src[base + "_scales"].astype(np.float32) - 127)
            values = fp4[codes] * np.repeat(scales, 32, axis=-1)
            as_bf16 = values.astype(ml_dtypes.bfloat16)
            check(np.array_equal(as_bf16.astype(np.float32), values), f"{name}: MXFP4 value not exact in BF16")
            dec[base] = np.ascontiguousarray(as_bf16.view(np.uint16).transpose(0, 2, 1))
        else:
            dec[name] = arr
    decoded = os.path.join(tmp, "mxfp4-decoded")
    os.makedirs(decoded)
    write_safetensors(os.path.join(decoded, "model.safetensors"), dec)
    mcfg = json.load(open(os.path.join(mx, "config.json")))
    mcfg.pop("quantization_config", None)
    json.dump(mcfg, open(os.path.join(decoded, "config.json"), "w"))
    rc, jm = diff(mx, decoded)
    keys = [x["key"] for x in jm["tensors"] if "_exps." in x["key"] and not x["key"].endswith(".bias")]
    want = cfg["num_hidden_layers"] * cfg["num_local_experts"] * 3
    bad = [x["key"] for x in jm["tensors"] if x["status"] != "identical"]
    check(rc == 0 and not jm["only_a"] and not jm["only_b"], f"mxfp4 vs decoded: exit {rc}, only A {jm['only_a'][:3]}, only B {jm['only_b'][:3]}")
    check(len(keys) == want and not bad and not any(k.endswith(".-1") for k in keys),
          f"mxfp4 vs numpy-decoded BF16: {len(keys)} expert units (want {want}), not identical: {bad[:4]}")
    # dequant of a bias decodes the bias itself, not its weight
    npy = os.path.join(tmp, "bias.npy")
    subprocess.run([WS, "dequant", fused, "model.layers.1.mlp.experts.down_proj_bias", "--out", npy], check=True, capture_output=True)
    check(np.array_equal(np.load(npy), bf16(t["model.layers.1.mlp.experts.down_proj_bias"])), "dequant of a bias does not return the bias")
    print(f"3. gpt-oss fused [E, H, 2I] interleaved vs per-expert: {len(j['tensors'])} units identical, {nb} expert biases; dequant of a bias is the bias")

# ---------------------------------------------------------------- 4. ggml's own output
rc, j = diff(os.path.join(FX, "gguf/tiny-qwen3moe-kquants.gguf"), os.path.join(FX, "gguf/tiny-qwen3moe-kquants.expected.gguf"))
check(rc == 0 and j["summary"]["identical"] == len(j["tensors"]) > 0, f"kquants vs expected: {j['summary']}")
check(all(t["nmse"] == 0 and t["max_abs"] == 0 for t in j["tensors"]), "kquants vs expected: some error is not zero")
print(f"4. kquants vs ggml's expected output: {len(j['tensors'])} units, every one with zero error")

# ---------------------------------------------------------------- exit codes and reports
with tempfile.TemporaryDirectory() as tmp:
    html = os.path.join(tmp, "diff.html")
    fp8 = [WS, "diff", a_dir, b_dir]
    r = subprocess.run(fp8 + ["--max-rel-error", "0.08", "--report", html], capture_output=True, text=True)
    check(r.returncode == 0, f"--max-rel-error 0.08: exit {r.returncode}")
    check(os.path.exists(html) and "blk.1.ffn_down_exps.4" in open(html).read(), "HTML report missing or without the tensors")
    r = subprocess.run(fp8 + ["--max-rel-error", "0.01"], capture_output=True, text=True)
    check(r.returncode == 1 and "moved more than" in r.stderr, f"--max-rel-error 0.01: exit {r.returncode} {r.stderr}")
    rc, j = diff(a_dir, os.path.join(FX, "hf/mixtral"))
    check(rc == 1 and j["only_a"] and (j["summary"]["shape_mismatches"] or j["only_b"]), f"qwen3_moe vs mixtral: exit {rc}")
    r = subprocess.run([WS, "diff", a_dir, os.path.join(tmp, "missing")], capture_output=True, text=True)
    check(r.returncode == 2, f"missing B: exit {r.returncode}")
    # validate --against: the same comparison as findings
    report = os.path.join(tmp, "v.json")
    r = subprocess.run([WS, "validate", b_dir, "--against", a_dir, "--max-rel-error", "0.01", "--report", report], capture_output=True, text=True)
    v = json.load(open(report))
    moved = {f["tensor"] for f in v["findings"] if f["code"] == "WS-D001"}
    fp8 = {t["b"] for t in j_fp8["tensors"] if t["scheme_b"] == "fp8-block"}
    check(r.returncode == 1 and moved == fp8, f"validate --against, 1%: exit {r.returncode}, {len(moved)} WS-D001 for {len(fp8)} FP8 tensors")
    r = subprocess.run([WS, "validate", b_dir, "--against", a_dir, "--max-rel-error", "0.08", "--report", report], capture_output=True, text=True)
    v = json.load(open(report))
    check(r.returncode == 0 and [f["code"] for f in v["findings"] if f["code"].startswith("WS-D")] == ["WS-D005"], f"validate --against, 8%: exit {r.returncode}")
print("5. exit codes: 0 within --max-rel-error, 1 beyond it or with unmatched tensors, 2 when a side cannot be opened; "
      "validate --against reports WS-D001 on exactly the FP8 tensors at 1% and nothing at 8%")

for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
