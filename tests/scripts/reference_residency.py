#!/usr/bin/env python3
"""Residency proven against real names: for each checkpoint and EP configuration, the tensors
`weightscope plan` puts on each rank must be exactly those a rank-filtering loader keeps when it
is run over every tensor name. The loader here is written independently of the C++ code, the
way the seed runtime and vLLM filter: the expert index comes from the name (`.experts.E.`), MTP
layers (`mtp.` or a layer index >= num_hidden_layers) and every other tensor stay on every rank,
and expert ranges follow vLLM's linear placement (remainder to the first ranks) or the seed
runtime's (remainder to the last rank). Tensor names and sizes are read from the safetensors
headers here, not from weightscope. `weightscope load` on a GPU-sized host stand-in must put the
same sets on each rank, in one arena, and give it all back with --free '*'.

Checkpoints: every HF fixture, and sparse synth checkpoints of full size shaped like DeepSeek-V3
(256 experts; EP 6, 7, 8, 16, 32), Kimi-K2 (384 experts; EP 8, 48) and Qwen3-235B (128 experts;
EP 3, 8). Usage: reference_residency.py PATH/TO/weightscope FIXTURES_DIR"""
import json
import os
import re
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, fail, finish  # noqa: E402

WS, FX = sys.argv[1], sys.argv[2]
EXPERT = re.compile(r"\.experts\.(\d+)\.")
LAYER = re.compile(r"(?:^|\.)layers\.(\d+)\.")
FUSED = re.compile(r"\.experts\.(gate_up_proj|down_proj)")  # every expert in one tensor: each rank keeps its slice



def headers(path):
    out = {}
    for f in sorted(os.listdir(path)):
        if f.endswith(".safetensors"):
            with open(os.path.join(path, f), "rb") as h:
                n = struct.unpack("<Q", h.read(8))[0]
                for k, v in json.loads(h.read(n)).items():
                    if k != "__metadata__":
                        out[k] = v["data_offsets"][1] - v["data_offsets"][0]
    return out


def config(path):
    c = json.load(open(os.path.join(path, "config.json")))
    t = c.get("text_config", c)
    experts = next(t[k] for k in ("num_experts", "num_local_experts", "n_routed_experts") if k in t)
    return t["num_hidden_layers"], experts


def expert_range(rank, ep, experts, remainder):
    base, rem = divmod(experts, ep)
    if remainder == "last":
        start = rank * base
        return range(start, experts if rank == ep - 1 else start + base)
    start = rank * base + min(rank, rem)
    return range(start, start + base + (1 if rank < rem else 0))


def expected_sets(names, layers, experts, ep, remainder):
    ranks = [set() for _ in range(ep)]
    for n in names:
        m, l = EXPERT.search(n), LAYER.search(n)
        mtp = n.startswith("mtp.") or (l is not None and int(l.group(1)) >= layers)
        for r in range(ep):
            if m and not mtp and int(m.group(1)) not in expert_range(r, ep, experts, remainder):
                continue
            ranks[r].add(n)
    return ranks


def prove(label, path, eps, remainders=("first", "last")):
    sizes = headers(path)
    layers, experts = config(path)
    expert_bytes = sum(b for n, b in sizes.items() if EXPERT.search(n) and not (LAYER.search(n) and int(LAYER.search(n).group(1)) >= layers))
    for ep in eps:
        for rem in remainders:
            r = subprocess.run([WS, "plan", path, "--ep", str(ep), "--remainder", rem, "--json", "--list-tensors"], capture_output=True, text=True)
            if r.returncode != 0:
                fail(f"{label} EP{ep} {rem}: plan failed: {r.stderr.strip()}")
                continue
            doc = json.loads(r.stdout)
            want = expected_sets(sizes.keys(), layers, experts, ep, rem)
            held_expert_bytes = 0
            for rank in doc["ranks"]:
                got = {h["name"] for h in rank["held"]}
                w = want[rank["rank"]]
                check(got == w, f"{label} EP{ep} {rem} rank {rank['rank']}: {len(got - w)} extra ({sorted(got - w)[:2]}), {len(w - got)} missing ({sorted(w - got)[:2]})")
                want_experts = sorted(expert_range(rank["rank"], ep, experts, rem))
                check(rank["experts"] == want_experts, f"{label} EP{ep} {rem} rank {rank['rank']}: experts {rank['experts'][:4]}...")
                held_expert_bytes += sum(h["bytes"] for h in rank["held"] if EXPERT.search(h["name"]) and h["name"] in w and
                                         not (LAYER.search(h["name"]) and int(LAYER.search(h["name"]).group(1)) >= layers))
                replicated = sum(b for n, b in sizes.items() if n in w and not EXPERT.search(n) and not FUSED.search(n))
                local = len(list(expert_range(rank["rank"], ep, experts, rem)))
                for h in rank["held"]:
                    if FUSED.search(h["name"]):
                        check(h["bytes"] == sizes[h["name"]] // experts * local, f"{label} EP{ep} rank {rank['rank']}: {h['name']} slice")
                check(all(h["bytes"] == sizes[h["name"]] for h in rank["held"] if "experts." in h["name"] and EXPERT.search(h["name"])),
                      f"{label} EP{ep} rank {rank['rank']}: per-expert tensors held whole")
                check(rank["bytes"]["total"] >= replicated, f"{label} EP{ep} rank {rank['rank']}: total below replicated bytes")
            # every routed expert on exactly one rank: the ranks' expert bytes add up to the checkpoint's
            check(held_expert_bytes == expert_bytes, f"{label} EP{ep} {rem}: ranks hold {held_expert_bytes} expert bytes, checkpoint has {expert_bytes}")


def prove_load(label, path, ep):
    """What `weightscope load` puts on each rank of a GPU-sized host stand-in is the same set, each
    tensor's bytes the header's (or its experts' slice), in a couple of arenas; freeing everything
    afterwards (--free '*') hands every arena back and the stand-in's free memory returns to its total."""
    sizes = headers(path)
    layers, experts = config(path)
    want = expected_sets(sizes.keys(), layers, experts, ep, "first")
    for rank in range(ep):
        r = subprocess.run([WS, "load", path, "--device", "host:H200-141GB", "--ep-size", str(ep), "--ep-rank", str(rank), "--json", "--free", "*"],
                           capture_output=True, text=True)
        if r.returncode != 0:
            fail(f"{label} load EP{ep} rank {rank}: {r.stderr.strip()}")
            continue
        doc = json.loads(r.stdout)
        got = {t["name"]: t["bytes"] for t in doc["tensors"]}
        check(set(got) == want[rank], f"{label} load EP{ep} rank {rank}: {len(set(got) - want[rank])} extra, {len(want[rank] - set(got))} missing")
        local = len(expert_range(rank, ep, experts, "first"))
        for n, b in got.items():
            check(b == (sizes[n] // experts * local if FUSED.search(n) else sizes[n]), f"{label} load EP{ep} rank {rank}: {n} has {b} bytes")
        check(doc["resident"]["bytes"] == sum(got.values()), f"{label} load EP{ep} rank {rank}: resident bytes")
        res, freed = doc["residency"], doc["freed"]
        check(not res["measured"] and not res["mismatch"] and res["allocations"] == 1, f"{label} load EP{ep} rank {rank}: residency {res}")
        check(freed["arenas"] == res["allocations"] and freed["views"] == len(got), f"{label} load EP{ep} rank {rank}: freed {freed}")
        check(freed["free_after"] == doc["memory"]["total"], f"{label} load EP{ep} rank {rank}: free memory {freed['free_after']} after freeing all")


for rel, ep in [("hf/qwen3_moe", 3), ("hf/deepseek_v3", 5), ("hf/qwen3_vl_moe", 3)]:
    prove_load(rel, os.path.join(FX, rel), ep)

for rel, eps in [("hf/qwen3_moe", [2, 3, 8]), ("hf/qwen3_moe_fp8", [3]), ("hf/deepseek_v3", [3, 5, 16]), ("hf/mixtral", [3]), ("hf/qwen3_vl_moe", [3])]:
    prove(rel, os.path.join(FX, rel), eps)

with tempfile.TemporaryDirectory() as tmp:
    for like, scheme, eps in [("deepseek-v3", "fp8-block", [6, 7, 8, 16, 32]), ("kimi-k2", "bf16", [8, 48]), ("qwen3-moe", "bf16", [3, 8])]:
        out = os.path.join(tmp, like)
        r = subprocess.run([WS, "synth", "--like", like, "--scheme", scheme, "--size", "full", "--sparse", out], capture_output=True, text=True)
        if r.returncode != 0:
            fail(f"synth {like}: {r.stderr.strip()}")
            continue
        prove(f"{like} (full, sparse)", out, eps)
        subprocess.run(["rm", "-rf", out])

finish()
