#!/usr/bin/env python3
"""Each command-line option does what its help says: one check per option that no other test
exercised, each asserting the option's effect against something worked out here from the files
(the raw safetensors header, fnmatch, the formula the help names) - never only an exit status.

Last, a guard: every option any command's --help lists must appear in some test (this script, the
other scripts, or the C++ suites), so an option added without a test fails here. That guard
proves a test names the option; the checks above are what prove effects.

usage: cli_options.py WEIGHTSCOPE FIXTURES
"""
import fnmatch
import hashlib
import json
import math
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish  # noqa: E402

WS, FX = sys.argv[1], sys.argv[2]
QWEN, FP8 = os.path.join(FX, "hf/qwen3_moe"), os.path.join(FX, "hf/qwen3_moe_fp8")
GGUF = os.path.join(FX, "gguf/tiny-qwen3moe-kquants.gguf")


def ws(*args):
    r = subprocess.run([WS, *args], capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr


def js(*args):
    rc, out, err = ws(*args)
    if rc not in (0, 1):
        raise RuntimeError(f"{' '.join(args)}: exit {rc}: {err.strip()[:300]}")
    return json.loads(out)


def header(folder):
    """name -> (dtype, shape, bytes) from the raw safetensors headers of a folder."""
    out = {}
    for f in sorted(os.listdir(folder)):
        if f.endswith(".safetensors"):
            with open(os.path.join(folder, f), "rb") as fh:
                h = json.loads(fh.read(struct.unpack("<Q", fh.read(8))[0]))
            for k, v in h.items():
                if k != "__metadata__":
                    out[k] = (v["dtype"], v["shape"], v["data_offsets"][1] - v["data_offsets"][0])
    return out


def read_npy_f32(path):
    raw = open(path, "rb").read()
    n = struct.unpack("<H", raw[8:10])[0]
    data = raw[10 + n:]
    return struct.unpack(f"<{len(data) // 4}f", data)


def digest(folder):
    return hashlib.sha256(b"".join(open(os.path.join(folder, f), "rb").read() for f in sorted(os.listdir(folder)))).hexdigest()


def add_tensor(folder, name, dtype, shape, nbytes):
    """Appends a zero tensor to a one-file safetensors checkpoint, the header rewritten by hand."""
    path = os.path.join(folder, "model.safetensors")
    raw = open(path, "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    h, data = json.loads(raw[8:8 + n]), raw[8 + n:]
    h[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + nbytes]}
    text = json.dumps(h).encode()
    text += b" " * (-len(text) % 8)
    open(path, "wb").write(struct.pack("<Q", len(text)) + text + data + bytes(nbytes))


def plan(*args):
    return js("plan", *args, "--json")


TMP = tempfile.mkdtemp()

# ---------------------------------------------------------------- inspect --health
# The experts grid carries the cells of validate's own expert_health (the same value pass), column
# -1 first; without --health the keys are absent.
with tempfile.TemporaryDirectory() as tmp:
    rep_path = os.path.join(tmp, "r.json")
    ws("validate", QWEN, "--rules", "WS-V015,WS-V016", "--report", rep_path)
    cells = {(c["layer"], c["expert"]): c for c in json.load(open(rep_path))["expert_health"]}
grid = js("inspect", "--json", "--health", QWEN)["experts"]
shown = {(r["layer"], e): (r["nearest"][e + 1], r["norm_octaves"][e + 1], r["nearest_cosine"][e + 1])
         for r in grid["rows"] for e in range(grid["experts"]) if r["nearest"][e + 1] is not None}
check(len(cells) > 0 and shown == {k: (c["nearest"], c["norm_octaves"], c["nearest_cosine"]) for k, c in cells.items()},
      f"inspect --health: {len(shown)} grid cells against validate's {len(cells)} expert_health cells")
check("nearest" not in js("inspect", "--json", QWEN)["experts"]["rows"][0], "inspect without --health: no health keys")

# ---------------------------------------------------------------- inspect --filter
glob = "*experts.1.*"
names = {t["name"] for t in js("inspect", "--json", "--filter", glob, QWEN)["tensors"]}
want = {n for n in header(QWEN) if fnmatch.fnmatchcase(n, glob)}
check(names == want and len(want) > 0, f"inspect --filter: {len(names)} tensors, fnmatch finds {len(want)}")

# ---------------------------------------------------------------- synth --seed and the size options
seeds = {}
for tag, seed in (("a", "1"), ("b", "1"), ("c", "2")):
    d = os.path.join(TMP, f"seed-{tag}")
    ws("synth", "--like", "qwen3-moe", "--scheme", "bf16", "--seed", seed, d)
    seeds[tag] = digest(d)
check(seeds["a"] == seeds["b"] and seeds["a"] != seeds["c"], "synth --seed: the same seed must give the same bytes, another seed other bytes")

ds = os.path.join(TMP, "ds")
ws("synth", "--like", "deepseek-v3", "--scheme", "bf16", "--layers", "3", "--dense-layers", "1", "--dense-intermediate", "96",
   "--experts", "4", "--shared", "1", "--intermediate", "32", "--hidden", "64", "--vocab", "300", "--mtp", "1", ds)
h = header(ds)
cfg = json.load(open(os.path.join(ds, "config.json")))
check(h["model.embed_tokens.weight"][1] == [300, 64], "synth --vocab/--hidden: embed_tokens shape")
check(h["model.layers.0.mlp.gate_proj.weight"][1] == [96, 64], "synth --dense-layers/--dense-intermediate: layer 0 is dense, 96 wide")
check("model.layers.1.mlp.experts.3.up_proj.weight" in h and "model.layers.1.mlp.experts.4.up_proj.weight" not in h, "synth --experts 4")
check(h["model.layers.1.mlp.experts.3.up_proj.weight"][1] == [32, 64], "synth --intermediate 32")
check(h["model.layers.1.mlp.shared_experts.gate_proj.weight"][1] == [32, 64], "synth --shared 1: one shared expert of the expert width")
check(cfg["num_hidden_layers"] == 3 and cfg["num_nextn_predict_layers"] == 1 and any(n.startswith("model.layers.3.") for n in h),
      "synth --layers 3 --mtp 1: an MTP layer after the last")

# ---------------------------------------------------------------- dequant --stats
npy = os.path.join(TMP, "v.npy")
rc, out, _ = ws("dequant", QWEN, "model.layers.1.mlp.experts.3.up_proj", "--stats", "--out", npy)
vals = read_npy_f32(npy)
m = re.search(r"min (\S+)\s+max (\S+)\s+mean (\S+)", out)
close = lambda printed, exact: abs(float(printed) - exact) <= 1e-8 * abs(exact)  # printed to 9 significant digits
check(m is not None and close(m.group(1), min(vals)) and close(m.group(2), max(vals)) and close(m.group(3), sum(vals) / len(vals)),
      f"dequant --stats: {m.groups() if m else out[:200]} vs {min(vals)}, {max(vals)}")
check(re.search(rf"count {len(vals)}\b", out) is not None, "dequant --stats: count")

# ---------------------------------------------------------------- stats / scales --bins, scales --by
tensor = "model.layers.1.mlp.experts.3.up_proj"
for bins in (4, 32):
    hist = js("stats", FP8, tensor, "--bins", str(bins), "--json")["tensors"][0]["histogram"]
    check(0 < len(hist["counts"]) <= bins and len(hist["edges"]) == len(hist["counts"]) + 1, f"stats --bins {bins}: {len(hist['counts'])} bins")
    check(sum(hist["counts"]) + hist["below"] + hist["above"] == 128 * 256, f"stats --bins {bins}: every value counted")
    sc = js("scales", FP8, "--by", "checkpoint", "--bins", str(bins), "--json")["groups"]["checkpoint"]["scale"]["histogram"]
    check(0 < len(sc["counts"]) <= bins, f"scales --bins {bins}: {len(sc['counts'])} bins")
fp8_scales = {n: v for n, v in header(FP8).items() if n.endswith("_scale_inv")}
by = {k: js("scales", FP8, "--by", k, "--json")["groups"] for k in ("tensor", "projection", "expert", "checkpoint")}
check(set(by["tensor"]) == {n[:-len(".weight_scale_inv")] for n in fp8_scales}, "scales --by tensor: one group per scaled weight")
check({"gate", "up", "down"} <= set(by["projection"]), f"scales --by projection: {sorted(by['projection'])}")
check({f"expert {e}" for e in range(8)} <= set(by["expert"]), f"scales --by expert: {sorted(by['expert'])[:10]}")
check(list(by["checkpoint"]) == ["checkpoint"] and by["checkpoint"]["checkpoint"]["scale"]["stats"]["count"] == sum(math.prod(v[1]) for v in fp8_scales.values()),
      "scales --by checkpoint: one group holding every scale")

# ---------------------------------------------------------------- plan: placement, budget, residency options
check(plan(QWEN, "--ep", "2", "--placement", "round-robin")["ranks"][0]["experts"] == [0, 2, 4, 6], "plan --placement round-robin")
check(plan(QWEN, "--ep", "2", "--placement", "trivial:10")["ranks"][1]["experts"] == [0, 1, 5, 6, 7], "plan --placement trivial:10: replicas of 0 and 1 on rank 1")
mp = os.path.join(TMP, "map.json")
json.dump({"physical_to_logical": [7, 6, 5, 4, 3, 2, 1, 0]}, open(mp, "w"))
check(plan(QWEN, "--ep", "2", "--placement", mp)["ranks"][0]["experts"] == [4, 5, 6, 7], "plan --placement MAP.json")
base = plan(QWEN, "--ep", "2", "--gpu-mem", "1GiB")
b = plan(QWEN, "--ep", "2", "--gpu-mem", "1GiB", "--gpu-memory-utilization", "0.5")["budget"]
check(b["usable"] == 512 << 20, f"plan --gpu-memory-utilization 0.5 of 1 GiB: usable {b['usable']}")
b = plan(QWEN, "--ep", "2", "--gpu-mem", "1GiB", "--context-reserve", "100MiB")["budget"]
check(b["usable"] == (1 << 30) - (100 << 20), f"plan --context-reserve 100MiB: usable {b['usable']}")
r = plan(QWEN, "--ep", "2", "--gpu-mem", "1GiB", "--reserve", "10MiB")
check(r["reserved"] == 10 << 20 and r["ranks"][0]["headroom"] == base["ranks"][0]["headroom"] - (10 << 20), "plan --reserve 10MiB: headroom")
r = plan(QWEN, "--ep", "2", "--peak-multiplier", "2")["ranks"][0]
check(r["peak"] == 2 * r["bytes"]["total"], f"plan --peak-multiplier 2: peak {r['peak']} of {r['bytes']['total']} resident")
nv = os.path.join(TMP, "nv")
ws("synth", "--like", "qwen3-moe", "--scheme", "nvfp4", nv)
inputs = {n for n in header(nv) if n.endswith(".input_scale")}
skipped = {t["name"] for t in plan(nv, "--ep", "1", "--skip-activation-scales")["not_uploaded"]}
check(skipped == inputs and inputs, f"plan --skip-activation-scales: {len(skipped)} not uploaded, {len(inputs)} input scales")
check(not plan(nv, "--ep", "1")["not_uploaded"], "plan without --skip-activation-scales uploads them")
mtp = {n for n in h if n.startswith("model.layers.3.")}
skipped = {t["name"] for t in plan(ds, "--ep", "1", "--skip-mtp")["not_uploaded"]}
check(skipped == mtp and mtp, f"plan --skip-mtp: {len(skipped)} not uploaded, {len(mtp)} MTP tensors")
# --runtime seed skips as its should_skip_tensor spells them (issue 50 item 6): a leading "mtp." only
# (the layer-index MTP of DeepSeek / GLM stays) and a trailing ".input_scale" only (NVFP4's
# input_global_scale stays), and the defer hook sees only what the skips kept.
sk = os.path.join(TMP, "seed-skips")
ws("synth", "--like", "deepseek-v3", "--scheme", "bf16", "--layers", "3", "--dense-layers", "1", "--dense-intermediate", "96",
   "--experts", "4", "--shared", "1", "--intermediate", "32", "--hidden", "64", "--vocab", "300", "--mtp", "1", "--shards", "1", sk)
add_tensor(sk, "mtp.0.eh_proj.weight", "BF16", [64, 128], 64 * 128 * 2)
add_tensor(sk, "model.layers.1.mlp.experts.0.gate_proj.input_scale", "F32", [], 4)
add_tensor(sk, "model.layers.1.mlp.experts.0.up_proj.input_global_scale", "F32", [], 4)
def not_uploaded(*args):
    return {t["name"]: t["reason"] for t in plan(sk, "--ep", "1", *args)["not_uploaded"]}
layer_mtp = {n for n in header(sk) if n.startswith("model.layers.3.")}
check(layer_mtp and set(not_uploaded("--skip-mtp")) == layer_mtp | {"mtp.0.eh_proj.weight"}, "plan --skip-mtp: every MTP layer")
check(not_uploaded("--skip-mtp", "--runtime", "seed") == {"mtp.0.eh_proj.weight": "mtp"}, f"plan --runtime seed --skip-mtp: only mtp.*, got {sorted(not_uploaded('--skip-mtp', '--runtime', 'seed'))[:4]}")
both = {"model.layers.1.mlp.experts.0.gate_proj.input_scale", "model.layers.1.mlp.experts.0.up_proj.input_global_scale"}
check(set(not_uploaded("--skip-activation-scales")) == both, "plan --skip-activation-scales: input_scale and input_global_scale")
check(not_uploaded("--skip-activation-scales", "--runtime", "seed") == {"model.layers.1.mlp.experts.0.gate_proj.input_scale": "activation scale"},
      f"plan --runtime seed --skip-activation-scales: *.input_scale only, got {not_uploaded('--skip-activation-scales', '--runtime', 'seed')}")
got = not_uploaded("--skip-mtp", "--defer", "mtp.*", "--runtime", "seed")
check(got == {"mtp.0.eh_proj.weight": "mtp"}, f"plan --runtime seed: a skipped tensor is not deferred too: {got}")
glob = "*.experts.0.*"
r = plan(QWEN, "--ep", "2", "--defer", glob)
check(r["ranks"][0]["bytes"]["deferred"] == sum(v[2] for n, v in header(QWEN).items() if fnmatch.fnmatchcase(n, glob)), "plan --defer: deferred bytes")
ng = os.path.join(TMP, "ngram")
ws("synth", "--like", "qwen3-moe", "--scheme", "bf16", "--shards", "1", ng)
add_tensor(ng, "model.ngram_embeddings.embedders.2.weight", "BF16", [64, 32], 64 * 32 * 2)
with_flag = {t["name"] for t in plan(ng, "--ep", "1", "--defer-ngram")["not_uploaded"]}
check(with_flag == {"model.ngram_embeddings.embedders.2.weight"} and not plan(ng, "--ep", "1")["not_uploaded"], f"plan --defer-ngram: {with_flag}")

# ---------------------------------------------------------------- plan: KV cache options
def kv(*args):
    return plan(QWEN, "--gpu-mem", "1GiB", "--max-model-len", "512", *args)["ranks"][0]


for bs in (16, 32):
    k = kv("--ep", "1", "--block-size", str(bs))["kv_cache"]
    want = k["free_bytes"] // (bs * k["bytes_per_token"]) * bs
    check(k["tokens_fit"] == want, f"plan --block-size {bs}: tokens {k['tokens_fit']}, whole blocks give {want}")
vocab = json.load(open(os.path.join(QWEN, "config.json")))["vocab_size"]
# vLLM's profile run, its largest moment by hand (core/plan/vllm_profile.h): the dummy sampler's
# min(batched tokens, max_num_seqs) rows of 16-bit logits and their float32 copy, or the fused MoE's
# min(tokens, 32768) x top-k x (max(2 x moe_intermediate, hidden) + moe_intermediate) x 2 B of caches;
# on this 1 GiB device vLLM 0.11.0 defaults to 2048 tokens and 256 sequences (arg_utils.py).
cfg = json.load(open(os.path.join(QWEN, "config.json")))
def profile_by_hand(tokens, seqs):
    i, h, k = cfg["moe_intermediate_size"], cfg["hidden_size"], cfg["num_experts_per_tok"]
    return max(min(tokens, seqs) * vocab * 6, min(tokens, 32768) * k * (max(2 * i, h) + i) * 2)
for flags, tokens, seqs, peak in ((("--max-num-batched-tokens", "100"), 100, 256, "sampler"), ((), 2048, 256, "fused MoE"), (("--max-num-seqs", "8"), 2048, 8, "fused MoE")):
    line = kv("--ep", "1", *flags)["reserves"]["profile_run"]
    check(line["bytes"] == profile_by_hand(tokens, seqs), f"plan {' '.join(flags)}: profile_run {line['bytes']}, by hand {profile_by_hand(tokens, seqs)}")
    # each moment decides one case: the line names the one it charged
    check(f"profile run (gpu_model_runner.py profile_run), {peak}:" in line["formula"], f"plan {' '.join(flags)}: the largest moment named, by hand {peak}: {line['formula'][:160]}")
tp_heads = kv("--ep", "1", "--tp", "2")["kv_cache"]["bytes_per_token"]
dp_heads = kv("--ep", "1", "--tp", "2", "--attention", "dp")["kv_cache"]["bytes_per_token"]
check(dp_heads == 2 * tp_heads, f"plan --attention dp keeps the KV heads whole: {dp_heads} vs {tp_heads} per token")
layers = json.load(open(os.path.join(QWEN, "config.json")))["num_hidden_layers"]
plain, spec = kv("--ep", "1")["kv_cache"], kv("--ep", "1", "--speculative", "1")["kv_cache"]
check(spec["bytes_per_token"] * layers == plain["bytes_per_token"] * (layers + 1), f"plan --speculative 1: a draft layer's cache: {spec['bytes_per_token']} vs {plain['bytes_per_token']}")
g = kv("--ep", "1", "--reserve-cuda-graphs", "1MiB")
check(g["reserves"]["cuda_graphs"]["bytes"] == 1 << 20 and g["kv_cache"]["free_bytes"] == plain["free_bytes"] - (1 << 20), "plan --reserve-cuda-graphs 1MiB")

# ---------------------------------------------------------------- load options
rep = os.path.join(TMP, "load.json")
ws("load", QWEN, "--device", "host:H200-141GB", "--readers", "3", "--staging", "64KiB", "--evict-page-cache", "--report", rep)
j = json.load(open(rep))
calls = sum(-(-t["bytes"] // 65536) for t in j["tensors"] if t["bytes"])
check(j["reads"] == {"readers": 3, "staging_bytes": 65536, "calls": calls}, f"load --readers 3 --staging 64KiB: {j['reads']}, {calls} calls expected")
check(j["memory"]["total"] == 150108897280, "load --device host:H200-141GB: the H200's capacity as its driver reports it")
check(j["page_cache"] is not None and j["page_cache"]["loaded_bytes"] >= j["resident"]["bytes"], "load --evict-page-cache: page_cache reported")
# --peak-multiplier on load (issue 50 item 10): the seed's override of the pre-flight guard. A device of
# 1.5x the resident bytes takes the load at the default multiplier (1 for BF16) and refuses it at 2.
resident = plan(QWEN, "--ep", "1")["ranks"][0]["bytes"]["total"]
room = f"host:{resident * 3 // 2}"
rc, _, err = ws("load", QWEN, "--device", room, "--report", rep)
check(rc == 0, f"load on {room} at the default multiplier: exit {rc}: {err.strip()[:200]}")
rc, _, err = ws("load", QWEN, "--device", room, "--peak-multiplier", "2", "--report", rep)
check(rc != 0 and "predicted load peak" in err, f"load on {room} --peak-multiplier 2: exit {rc}: {err.strip()[:200]}")
for bad in ("0.5", "abc", "inf"):
    rc, _, err = ws("load", QWEN, "--device", "host", "--peak-multiplier", bad)
    check(rc == 2 and "--peak-multiplier" in err, f"load --peak-multiplier {bad}: exit {rc}, {err.strip()[:120]}")
ws("load", GGUF, "--device", "host", "--defer", "blk.1.*", "--skip-activation-scales", "--report", rep)
deferred = {d["name"] for d in json.load(open(rep))["deferred"]}
check(deferred and all(n.startswith("blk.1.") for n in deferred), f"load --defer: {sorted(deferred)[:3]}")
ws("load", QWEN, "--device", "host", "--ep-size", "2", "--ep-rank", "1", "--placement", "round-robin", "--report", rep)
held = {int(m.group(1)) for t in json.load(open(rep))["tensors"] for m in [re.search(r"experts\.(\d+)\.", t["name"])] if m}
check(held == {1, 3, 5, 7}, f"load --placement round-robin, rank 1: experts {sorted(held)}")
ws("load", ds, "--device", "host", "--ep-size", "3", "--ep-rank", "2", "--remainder", "last", "--report", rep)
held = {int(m.group(1)) for t in json.load(open(rep))["tensors"] for m in [re.search(r"layers\.[12]\.mlp\.experts\.(\d+)\.", t["name"])] if m}
check(held == {2, 3}, f"load --remainder last, rank 2 of 3 with 4 experts: {sorted(held)}")
ws("load", ds, "--device", "host", "--skip-mtp", "--report", rep)
check(not any(t["name"].startswith("model.layers.3.") for t in json.load(open(rep))["tensors"]), "load --skip-mtp: the layer-index MTP layer not loaded")
ws("load", ds, "--device", "host", "--skip-mtp", "--runtime", "seed", "--report", rep)
j = json.load(open(rep))
check(j["runtime"] == "seed" and {t["name"] for t in j["tensors"] if t["name"].startswith("model.layers.3.")} == {n for n in h if n.startswith("model.layers.3.")},
      "load --runtime seed --skip-mtp: the seed skips mtp.* only and keeps a layer-index MTP layer")

# ---------------------------------------------------------------- diff options
glob = "blk.1.ffn_up_exps.*"
d = js("diff", QWEN, FP8, "--json", "--tensors", glob, "--cpu")
check(d["device"] == "cpu" and len(d["tensors"]) == 8 and all(fnmatch.fnmatchcase(t["key"], glob) for t in d["tensors"]), "diff --tensors --cpu")
def table_rows(*extra):
    out = ws("diff", QWEN, FP8, *extra)[1]
    tensors = out.split("\ntensors", 1)[1].split("\nmetadata (", 1)[0]  # the metadata section follows
    return [line for line in tensors.splitlines()[1:] if line.startswith("  ")]


every = js("diff", QWEN, FP8, "--json")["tensors"]
identical = sum(1 for t in every if t["status"] == "identical")
check(identical > 0 and len(table_rows()) == len(every) - identical and len(table_rows("--all")) == len(every),
      f"diff --all lists identical tensors: {len(table_rows())} / {len(table_rows('--all'))} rows of {len(every)}")
rj = os.path.join(TMP, "diff.json")
ws("diff", QWEN, FP8, "--report", rj)
check(json.load(open(rj))["summary"] == js("diff", QWEN, FP8, "--json")["summary"], "diff --report FILE.json: the document")

# ---------------------------------------------------------------- every option a help lists is named by some test
_, top, _ = ws("--help")
commands = re.findall(r"^  (\S+)", top.split("commands:", 1)[1].split("\n\n", 1)[0], re.M)
tests_dir = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
corpus = ""
for root, _, files in os.walk(tests_dir):
    for f in files:
        if f.endswith((".py", ".cpp", ".sh")):
            corpus += open(os.path.join(root, f), encoding="utf-8", errors="replace").read()
for c in commands:
    _, usage, _ = ws(c, "--help")
    for opt in sorted(set(re.findall(r"(?<![\w-])--([a-z][a-z0-9-]*)", usage))):
        named = f'"--{opt}"' in corpus or f"'--{opt}'" in corpus or f"--{opt} " in corpus
        check(named, f"{c} --{opt}: no test names it")

shutil.rmtree(TMP)
finish()
