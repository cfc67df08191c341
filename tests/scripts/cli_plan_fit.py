#!/usr/bin/env python3
"""plan --fit: the fewest GPUs on which N requests fit, worked out here from plan --json's own
per-rank figures (free bytes and KV bytes per token at each EP and TP), not from the solver; and on a
sliding-window model, with each request's capped window worked out here too.

usage: cli_plan_fit.py WEIGHTSCOPE FIXTURES
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish  # noqa: E402

WS, FX = sys.argv[1], sys.argv[2]
PATH = os.path.join(FX, "hf/qwen3_moe")
L, BUDGET = 4096, "200MiB"


def concurrency(ep, tp):
    """Deployment concurrency by hand: every TP group serves its own requests, each as many as its
    worst rank's free bytes hold requests of L tokens."""
    r = subprocess.run([WS, "plan", PATH, "--ep", str(ep), "--tp", str(tp), "--gpu-mem", BUDGET, "--max-model-len", str(L), "--json"],
                       capture_output=True, text=True)
    doc = json.loads(r.stdout)
    worst = min(rk["kv_cache"]["free_bytes"] / (L * rk["kv_cache"]["bytes_per_token"]) for rk in doc["ranks"])
    return worst * (ep // tp)


layouts = [(ep, tp) for ep in (1, 2, 4, 8) for tp in (1, 2, 4, 8) if tp <= ep and ep % tp == 0]
by_hand = {lt: concurrency(*lt) for lt in layouts}
target = (by_hand[(2, 2)] + by_hand[(4, 1)]) / 2  # more than EP 2 gives, less than EP 4 TP 1
want = next(lt for lt in layouts if by_hand[lt] >= target)
r = subprocess.run([WS, "plan", PATH, "--fit", str(target), "--gpu-mem", BUDGET, "--max-model-len", str(L), "--json"], capture_output=True, text=True)
check(r.returncode == 0, f"--fit {target:.2f}: exit {r.returncode}: {r.stderr}")
doc = json.loads(r.stdout) if r.returncode == 0 else {}
got = doc.get("answer") or {}
check((got.get("ep"), got.get("tp")) == want, f"--fit {target:.2f}: answer {got}, by hand EP {want[0]} TP {want[1]}")
for row in doc.get("tried", []):
    check(abs(row["concurrency"] - by_hand[(row["ep"], row["tp"])]) <= 1e-9 * by_hand[(row["ep"], row["tp"])],
          f"EP {row['ep']} TP {row['tp']}: {row['concurrency']} against {by_hand[(row['ep'], row['tp'])]} by hand")

# --gpu-mem A,B,C and --runtime vllm,sglang: each pair's answer is what --fit finds with that device
# and runtime alone, with the engine's verdict on that layout, and the pair needing the fewest GPUs
# that its engine takes is named (the first listed between equals). Three budgets here: 200 MiB
# (EP 4 TP 1 by hand above), 1 MiB and 1 GiB, the smallest of them fitting nothing.
def fit_json(gpu_mem, *flags):
    r = subprocess.run([WS, "plan", PATH, "--fit", str(target), "--gpu-mem", gpu_mem, "--max-model-len", str(L), "--json", *flags], capture_output=True, text=True)
    return r.returncode, json.loads(r.stdout) if r.stdout.strip().startswith("{") else {}
singles = {(d, rt): fit_json(d, "--runtime", rt) for d in ("1MiB", BUDGET, "1GiB") for rt in ("vllm", "sglang")}
rc, doc = fit_json(f"1MiB,{BUDGET},1GiB", "--runtime", "vllm,sglang")
cells = doc.get("cells", [])
check(rc == 0 and doc.get("schema") == "weightscope.plan-fit-matrix/1" and [(x["gpu_mem"], x["runtime"]) for x in cells] == list(singles),
      f"--fit over three devices and two runtimes: exit {rc}, {doc.get('schema')}, {[(x['gpu_mem'], x['runtime']) for x in cells]}")
for x in cells:
    rc1, one = singles[(x["gpu_mem"], x["runtime"])]
    if rc1 == 2:  # the pair cannot be budgeted alone (SGLang's reserve on a 1 MiB GPU): said in its cell
        check("error" in x and x["answer"] is None and "mem_fraction_static" in x["error"], f"{x['gpu_mem']} {x['runtime']}: {x}")
        continue
    check(x["answer"] == one.get("answer") and x["tried"] == one.get("tried") and x["budget"] == one.get("budget"),
          f"{x['gpu_mem']} {x['runtime']} among six: {x['answer']}, alone: {one.get('answer')} (exit {rc1})")
    check((x["engine"] is None) == (x["answer"] is None) and (x["engine"] is None or x["engine"]["verdict"].startswith(("vLLM", "SGLang"))),
          f"{x['gpu_mem']} {x['runtime']}: the engine's verdict {x['engine']}")
check(singles[("1MiB", "vllm")][0] == 1 and singles[("1MiB", "vllm")][1]["answer"] is None, "1 MiB alone fits nothing (exit 1)")
taken = [x for x in cells if x["answer"] and not x["engine"]["refuses"]]
fewest = min(taken, key=lambda x: x["answer"]["ep"], default=None)
check(fewest is not None and doc.get("fewest") == {"gpu_mem": fewest["gpu_mem"], "runtime": fewest["runtime"]} and fewest["gpu_mem"] == "1GiB"
      and (singles[(BUDGET, "vllm")][1]["answer"]["ep"], singles[(BUDGET, "vllm")][1]["answer"]["tp"]) == want,
      f"the fewest GPUs: {doc.get('fewest')}, by hand {fewest and (fewest['gpu_mem'], fewest['runtime'])}")
# With SGLang's share given, its cells are searched too: each its own --fit --runtime sglang, and a
# pair whose engine refuses (or loads broken) its layout is never the one named.
rc, doc = fit_json(f"1GiB,{BUDGET}", "--runtime", "sglang,vllm", "--mem-fraction-static", "0.8")
for x in doc.get("cells", []):
    rc1, one = fit_json(x["gpu_mem"], "--runtime", x["runtime"], "--mem-fraction-static", "0.8")
    check(x["answer"] == one.get("answer") and x["answer"] is not None and x["engine"]["verdict"].startswith("SGLang" if x["runtime"] == "sglang" else "vLLM"),
          f"{x['gpu_mem']} {x['runtime']} at mem_fraction_static 0.8: {x['answer']}, alone {one.get('answer')}")
named = [x for x in doc.get("cells", []) if doc.get("fewest") == {"gpu_mem": x["gpu_mem"], "runtime": x["runtime"]}]
check(rc == 0 and len(doc.get("cells", [])) == 4 and len(named) == 1 and not named[0]["engine"]["refuses"]
      and named[0]["answer"]["ep"] == min(x["answer"]["ep"] for x in doc["cells"] if not x["engine"]["refuses"]), f"the pair named: {named}")
rc, doc = fit_json("1MiB,2MiB")
check(rc == 1 and doc.get("fewest") is None and all(x["answer"] is None and x["runtime"] == "vllm" for x in doc.get("cells", [])), f"no device fits: exit {rc}")
for flags, says in ((("--gpu-mem", f"{BUDGET},,1GiB"), "empty entry"), (("--gpu-mem", f"{BUDGET},H300-999GB"), "H300-999GB"),
                    (("--gpu-mem", BUDGET, "--runtime", "vllm,tensorrt"), "tensorrt")):
    r = subprocess.run([WS, "plan", PATH, "--fit", "1", "--max-model-len", str(L), *flags], capture_output=True, text=True)
    check(r.returncode == 2 and says in r.stderr, f"{' '.join(flags)}: exit {r.returncode}, {r.stderr.strip()[:200]}")
r = subprocess.run([WS, "plan", PATH, "--fit", str(target), "--gpu-mem", f"{BUDGET},1GiB", "--max-model-len", str(L)], capture_output=True, text=True)
check(r.returncode == 0 and "<- the fewest GPUs" in r.stdout and r.stdout.count("\n") == 4, f"the text table: {r.stdout}")

# --max-num-seqs caps what one engine serves: with 2 a rank, EP 4 TP 1 (four groups) serves at most 8
# however much cache is free, so a target of 8 needs at least four groups (EP 4 TP 1, or more).
capped = {lt: min(by_hand[lt] / (lt[0] // lt[1]), 2) * (lt[0] // lt[1]) for lt in layouts}
want_capped = next(lt for lt in layouts if capped[lt] >= 8)
r = subprocess.run([WS, "plan", PATH, "--fit", "8", "--max-num-seqs", "2", "--gpu-mem", BUDGET, "--max-model-len", str(L), "--json"], capture_output=True, text=True)
got = json.loads(r.stdout).get("answer") or {} if r.returncode in (0, 1) else {}
check((got.get("ep"), got.get("tp")) == want_capped, f"--fit 8 --max-num-seqs 2: answer {got}, by hand EP {want_capped[0]} TP {want_capped[1]}")
r = subprocess.run([WS, "plan", PATH, "--ep", "2", "--max-num-seqs", "1", "--gpu-mem", BUDGET, "--max-model-len", str(L), "--json"], capture_output=True, text=True)
check(r.returncode == 0 and all(rk["kv_cache"]["served_concurrency"] == min(rk["kv_cache"]["max_concurrency"], 1) for rk in json.loads(r.stdout)["ranks"]),
      "served_concurrency is max_concurrency capped at --max-num-seqs")

r = subprocess.run([WS, "plan", PATH, "--fit", "1e9", "--gpu-mem", BUDGET, "--max-model-len", str(L), "--json"], capture_output=True, text=True)
check(r.returncode == 1 and json.loads(r.stdout)["answer"] is None, f"an impossible target: exit {r.returncode}")
r = subprocess.run([WS, "plan", PATH, "--fit", "4", "--gpu-mem", BUDGET], capture_output=True, text=True)
check(r.returncode == 2 and "--max-model-len" in r.stderr, f"--fit without --max-model-len: exit {r.returncode}: {r.stderr[:200]}")

# A sliding-window model (gpt-oss's layout: sliding and full layers alternating, a 128-token window):
# each request keeps, besides L tokens of its full layers, vLLM's capped window on every sliding layer,
# (ceil(min(window - 1 + max-num-batched-tokens, L) / 16) + 1) blocks of 16 - worked out here, at
# the batched tokens vLLM 0.11.0 defaults to on a device under 70 GiB (arg_utils.py): 2048.
with tempfile.TemporaryDirectory() as tmp:
    oss = os.path.join(tmp, "gpt-oss")
    subprocess.run([WS, "synth", "--like", "gpt-oss", "--scheme", "mxfp4", oss], check=True, capture_output=True)
    cfg = json.load(open(os.path.join(oss, "config.json")))
    cfg["sliding_window"] = 128
    cfg["layer_types"] = ["sliding_attention" if i % 2 == 0 else "full_attention" for i in range(cfg["num_hidden_layers"])]
    json.dump(cfg, open(os.path.join(oss, "config.json"), "w"))

    def sliding_concurrency(ep, tp):
        r = subprocess.run([WS, "plan", oss, "--ep", str(ep), "--tp", str(tp), "--gpu-mem", BUDGET, "--max-model-len", str(L), "--json"],
                           capture_output=True, text=True)
        worst = None
        for rk in json.loads(r.stdout)["ranks"]:
            kv = rk["kv_cache"]
            window_blocks = -(-min(128 - 1 + 2048, L) // 16) + 1
            check(kv["sliding"]["bytes_per_seq"] == window_blocks * 16 * kv["sliding"]["bytes_per_token"] > 0,
                  f"EP {ep} TP {tp}: sliding bytes a request {kv['sliding']['bytes_per_seq']}, by hand {window_blocks} blocks")
            c = kv["free_bytes"] / (L * kv["bytes_per_token"] + window_blocks * 16 * kv["sliding"]["bytes_per_token"] + kv["state_bytes_per_seq"])
            worst = c if worst is None else min(worst, c)
        return worst * (ep // tp)

    oss_layouts = [(ep, tp) for ep in (1, 2, 4, 8) for tp in (1, 2) if tp <= ep and ep % tp == 0]
    oss_by_hand = {lt: sliding_concurrency(*lt) for lt in oss_layouts}
    oss_target = (oss_by_hand[(2, 2)] + oss_by_hand[(4, 1)]) / 2
    oss_want = next(lt for lt in oss_layouts if oss_by_hand[lt] >= oss_target)
    r = subprocess.run([WS, "plan", oss, "--fit", str(oss_target), "--gpu-mem", BUDGET, "--max-model-len", str(L), "--json"], capture_output=True, text=True)
    got = (json.loads(r.stdout).get("answer") or {}) if r.returncode == 0 else {}
    check((got.get("ep"), got.get("tp")) == oss_want, f"sliding --fit {oss_target:.2f}: answer {got}, by hand EP {oss_want[0]} TP {oss_want[1]}: {r.stderr[:200]}")
    for row in (json.loads(r.stdout).get("tried", []) if r.returncode == 0 else []):
        if (row["ep"], row["tp"]) in oss_by_hand:
            check(abs(row["concurrency"] - oss_by_hand[(row["ep"], row["tp"])]) <= 1e-9 * oss_by_hand[(row["ep"], row["tp"])],
                  f"sliding EP {row['ep']} TP {row['tp']}: {row['concurrency']} against {oss_by_hand[(row['ep'], row['tp'])]} by hand")
# DeepSeek-V4 under --runtime sglang: SGLang 0.5.23's pools (docs/plan.md), by hand from its sizer's
# formula on the tiny published-naming V4 given the widths its 584-byte layout needs (head_dim 512,
# a 64-wide rope, indexer keys 128): 5 layers, ratios 0, 128, 4, 128, 4.
with tempfile.TemporaryDirectory() as tmp:
    v4 = os.path.join(tmp, "v4")
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "deepseek_v4")
    os.makedirs(v4)
    for name in os.listdir(src):
        with open(os.path.join(src, name), "rb") as f, open(os.path.join(v4, name), "wb") as g:
            g.write(f.read())
    with open(os.path.join(v4, "config.json")) as f:
        cfg = json.load(f)
    cfg.update(head_dim=512, qk_rope_head_dim=64, index_head_dim=128)
    with open(os.path.join(v4, "config.json"), "w") as f:
        json.dump(cfg, f)
    cell = 0.1 * (585 * 5 + 8 / 256 * (2 * 2 * 512 * 4 + 2 * 2 * 128 * 4) * 2) + 2 * (585 / 4 + 132 / 4) + 2 * 864 / 128
    fixed = 2 * ((257 * 128 + 129 + 127) // 128 * 128) * 1024 * 4
    r = subprocess.run([WS, "plan", v4, "--ep", "1", "--runtime", "sglang", "--gpu-mem", "1GiB", "--mem-fraction-static", "0.88", "--max-model-len", "65536", "--json"], capture_output=True, text=True)
    kv = (json.loads(r.stdout)["ranks"][0].get("kv_cache") or {}) if r.stdout else {}
    pool = kv.get("pool") or {}
    tokens = int((kv.get("free_bytes", 0) - fixed) / cell) // 256 * 256
    check(pool.get("bytes_per_full_token") == cell and pool.get("fixed_bytes") == fixed and kv.get("tokens_fit") == tokens and tokens > 0,
          f"SGLang DeepSeek-V4 pools: {pool}, {kv.get('tokens_fit')} tokens; by hand {cell} B a token, {fixed} B once, {tokens} tokens: {r.stderr[:300]}")
    r = subprocess.run([WS, "plan", v4, "--ep", "1", "--gpu-mem", "1GiB", "--max-model-len", "65536"], capture_output=True, text=True)
    check(r.returncode == 2 and "vLLM 0.11.0 registers no DeepseekV4ForCausalLM" in r.stderr, f"DeepSeek-V4 without --runtime sglang: exit {r.returncode}: {r.stderr[:300]}")


# SGLang's headroom instead of vLLM's reserves, by hand from SGLang 0.5.23 memory_hook.py
# handle_gpu_memory_settings: on an H100 (nvidia-smi 81,559 MiB, the < 90 GiB tier) with EP 2 its
# --tp-size is 2 and --attn-dp-size 2 (TP 1): chunked prefill 8192 (or the flag's), decode graphs
# max_bs 256; reserved MiB 512 + chunked x 1.5 + 2 / 8 x 1024 + 256 x 2 + DP attention 2 x 256 x 3
# + 8 MiB a prefill graph (batch sizes up to the chunk); the share is round((gpu - reserved) / gpu, 3)
# and the headroom that share of the free memory before load (81,559 - 512 MiB of CUDA context).
def prefill_graphs(max_bs):
    sizes = (list(range(4, 33, 4)) + list(range(48, 257, 16)) + list(range(288, 513, 32)) + list(range(576, 1025, 64)) +
             list(range(1280, 4097, 256)) + list(range(4608, max_bs + 1, 512)))
    return len([b for b in sizes if b <= max_bs])


for chunk in (None, 2048):
    flags = ["--max-num-batched-tokens", str(chunk)] if chunk else []
    c = chunk or 8192
    reserved = max(512 + max(c, 2048) * 1.5 + 2 / 8 * 1024 + 256 * 2 + 256 * 2 * 3 + prefill_graphs(c) * 8, 10 * 1024)
    share = round((81559 - reserved) / 81559, 3)
    free_before = (81559 - 512) * 2**20
    r = subprocess.run([WS, "plan", PATH, "--ep", "2", "--runtime", "sglang", "--gpu-mem", "H100-80GB", "--max-model-len", str(L), "--json", *flags],
                       capture_output=True, text=True)
    doc = json.loads(r.stdout) if r.returncode in (0, 1) and r.stdout else {}
    rank = (doc.get("ranks") or [{}])[0]
    reserves = rank.get("reserves") or {}
    want = int(free_before * (1 - share))
    check(list(reserves) == ["sglang_headroom"] and reserves["sglang_headroom"]["bytes"] == want and f"{share:.3f}" in reserves["sglang_headroom"]["formula"],
          f"SGLang headroom (chunk {c}): {reserves}, by hand {want} B at mem_fraction_static {share:.3f}: {r.stderr[:300]}")
    kv = rank.get("kv_cache") or {}
    check(kv.get("free_bytes") == free_before - want - rank["bytes"]["total"] - rank["derived"], f"SGLang free for KV: {kv.get('free_bytes')}")
# Qwen3-Next under SGLang (tests/data/qwen3_next: 2 linear layers, 2 full): a state slot of conv
# (2 x 2 x 16 + 4 x 16) x 3 x 2 B and SSM 4 x 16 x 16 x 4 B (FP32) a layer; 0.9 / 1.9 of the free
# memory in whole slots less the padding one, the rest in tokens of 2 x 2 x (16 + 16) x 2 B, and
# at most a fifth of the slots running.
QWEN3_NEXT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "qwen3_next")
r = subprocess.run([WS, "plan", QWEN3_NEXT, "--ep", "1", "--runtime", "sglang", "--gpu-mem", "H100-80GB", "--max-model-len", "4096", "--json"], capture_output=True, text=True)
kv = ((json.loads(r.stdout)["ranks"][0].get("kv_cache") or {}) if r.returncode in (0, 1) and r.stdout else {})
slot = ((2 * 2 * 16 + 4 * 16) * 3 * 2 + 4 * 16 * 16 * 4) * 2
rest = kv.get("free_bytes", 0) / 2**30
slots = int((rest * 0.9 / 1.9 * 2**30 - slot) // slot)
tokens = int((rest - (slots + 1) * slot / 2**30) * 2**30) // 256
running = min(max(min(int(tokens / 4096 * 512), 4096), 2048), tokens // 2, slots // 5)
check(kv.get("state_slots") == slots and kv.get("tokens_fit") == tokens and kv.get("max_running_requests") == running and slots > 0,
      f"SGLang's Qwen3-Next state pool: {kv.get('state_slots')} slots, {kv.get('tokens_fit')} tokens, {kv.get('max_running_requests')} running; by hand {slots}, {tokens}, {running}: {r.stderr[:200]}")
r = subprocess.run([WS, "plan", PATH, "--ep", "2", "--runtime", "sglang", "--gpu-mem", "H100-80GB", "--gpu-memory-utilization", "0.9"], capture_output=True, text=True)
check(r.returncode == 2 and "--mem-fraction-static" in r.stderr, f"vLLM's share under --runtime sglang: exit {r.returncode}: {r.stderr[:200]}")
r = subprocess.run([WS, "plan", PATH, "--ep", "2", "--runtime", "sglang", "--emit", "sglang", "--max-num-batched-tokens", "4096", "--mem-fraction-static", "0.8"],
                   capture_output=True, text=True)
check(r.returncode in (0, 1) and "--chunked-prefill-size 4096 --mem-fraction-static 0.8" in r.stdout, f"--emit sglang with its memory flags: {r.stdout[-300:]}")
finish()
