#!/usr/bin/env python3
"""`validate --runtime vllm|sglang` and `plan --runtime vllm|sglang` at the same layout give the same
engine findings (one rule, one place), and both exit 1 on a refusal; plan's EP N is vLLM's TP x DP.
`plan --emit` prints the engines' launch flags for the layout.

usage: cli_engine.py WEIGHTSCOPE FIXTURES
"""
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish  # noqa: E402

WS, FX = sys.argv[1], sys.argv[2]
FP8 = os.path.join(FX, "hf/qwen3_moe_fp8")


def engine_findings(doc):
    return sorted((f["code"], f["message"]) for f in doc if f["code"].startswith("WS-E"))


for engine, tp, ep, gpu, refuses in (("vllm", 2, 2, "H200-141GB", True), ("vllm", 1, 1, "H200-141GB", False), ("vllm", 1, 1, "A100-80GB", False),
                                     ("sglang", 2, 2, "H200-141GB", True), ("sglang", 2, 1, "sm_75", True)):
    layout = f"{engine} TP {tp} EP {ep} on {gpu}"
    v = subprocess.run([WS, "validate", FP8, "--runtime", engine, "--tp", str(tp), "--ep", str(ep), "--gpu", gpu, "--format", "json"], capture_output=True, text=True)
    p = subprocess.run([WS, "plan", FP8, "--runtime", engine, "--tp", str(tp), "--ep", str(ep), "--gpu", gpu, "--json"], capture_output=True, text=True)
    check(p.returncode == (1 if refuses else 0), f"plan {layout}: exit {p.returncode}: {p.stderr[:300]}")
    vdoc, pdoc = json.loads(v.stdout), json.loads(p.stdout)
    vf, pf = engine_findings(vdoc["findings"]), engine_findings(pdoc["engine"]["findings"])
    check(vf == pf, f"{layout}: validate {vf} against plan {pf}")
    check(any(f[0] in ("WS-E003", "WS-E004", "WS-E005", "WS-E006", "WS-E007") for f in vf) == refuses, f"{layout}: refusals {vf}")
    check(vdoc["verdict"] == pdoc["engine"]["verdict"], f"{layout}: verdicts {vdoc['verdict']!r} and {pdoc['engine']['verdict']!r}")

# vLLM's DP: experts over TP x DP = 2 ranks, whole; attention unsplit - loads.
v = subprocess.run([WS, "validate", FP8, "--runtime", "vllm", "--tp", "1", "--dp", "2", "--ep", "2", "--gpu", "H200-141GB", "--format", "json"], capture_output=True, text=True)
check(v.returncode == 0 and json.loads(v.stdout)["verdict"] == "vLLM 0.11.0, TP 1 x DP 2, EP 2 on H200-141GB (SM 9.0): loads", f"--dp 2: exit {v.returncode}: {v.stdout[:300]}")

# The verdict in the JUnit report (the engine suite's property) and the HTML one.
args = [FP8, "--runtime", "vllm", "--tp", "2", "--ep", "2", "--gpu", "H200-141GB"]
want = json.loads(subprocess.run([WS, "validate", *args, "--format", "json"], capture_output=True, text=True).stdout)["verdict"]
junit = ET.fromstring(subprocess.run([WS, "validate", *args, "--format", "junit"], capture_output=True, text=True).stdout)
props = [p.get("value") for ts in junit.iter("testsuite") if ts.get("name") == "engine" for p in ts.iter("property") if p.get("name") == "verdict"]
check(props == [want], f"JUnit verdict {props} against {want!r}")
html = subprocess.run([WS, "validate", *args, "--format", "html"], capture_output=True, text=True).stdout
check(f'<div class="verdict"><b>{want}</b></div>' in html, "HTML verdict")

# --emit: the plan's layout as each engine's launch flags, worked out here from the plan's EP 4 x TP 2:
# vLLM TP 2 x DP 2 with expert parallelism, SGLang a TP group of 4 with EP 4 and attention DP 2.
GGUF = os.path.join(FX, "gguf/tiny-qwen3moe-kquants.gguf")


def launch(path, *args):
    r = subprocess.run([WS, "plan", path, *args, "--json"], capture_output=True, text=True)
    return r.returncode, (json.loads(r.stdout).get("launch") if r.returncode == 0 else r.stderr)


code, got = launch(FP8, "--ep", "4", "--tp", "2", "--emit", "vllm", "--max-model-len", "4096", "--kv-cache-dtype", "fp8", "--gpu-memory-utilization", "0.9",
                   "--placement", "round-robin")
check(code == 0 and got["argv"] == ["vllm", "serve", FP8, "--tensor-parallel-size", "2", "--data-parallel-size", "2", "--enable-expert-parallel",
                                    "--expert-placement-strategy", "round_robin", "--max-model-len", "4096", "--kv-cache-dtype", "fp8",
                                    "--gpu-memory-utilization", "0.9"], f"--emit vllm: {got}")
code, got = launch(FP8, "--ep", "4", "--tp", "2", "--emit", "sglang", "--max-model-len", "4096", "--gpu-memory-utilization", "0.9")
check(code == 0 and got["argv"] == ["python", "-m", "sglang.launch_server", "--model-path", FP8, "--tp-size", "4", "--ep-size", "4", "--attn-dp-size", "2",
                                    "--context-length", "4096"], f"--emit sglang: {got}")
check(code == 0 and any("--mem-fraction-static" in n for n in got["notes"]), f"--emit sglang says why no --mem-fraction-static: {got}")
code, got = launch(GGUF, "--ep", "1", "--emit", "llama.cpp", "--max-model-len", "2048", "--kv-cache-dtype", "q8_0")
check(code == 0 and got["argv"] == ["llama-server", "-m", GGUF, "-ngl", "999", "-c", "2048", "-ctk", "q8_0", "-ctv", "q8_0"], f"--emit llama.cpp: {got}")
code, got = launch(FP8, "--ep", "1", "--emit", "llama.cpp")
check(code == 2 and "llama.cpp reads GGUF" in got, f"--emit llama.cpp on safetensors: {code} {got}")
code, got = launch(FP8, "--ep", "1", "--emit", "trtllm")
check(code == 2 and "--emit takes vllm, sglang, llama.cpp or kt" in got, f"--emit trtllm: {code} {got}")

# Text: the verdict heads the plan; an EP vLLM cannot form from the TP is a usage error.
t = subprocess.run([WS, "plan", FP8, "--runtime", "vllm", "--ep", "2", "--tp", "2", "--gpu-mem", "H200-141GB"], capture_output=True, text=True)
check(t.stdout.startswith("engine: vLLM 0.11.0, TP 2, EP 2 on H200-141GB (SM 9.0): refuses"), f"plan text: {t.stdout[:200]}")
u = subprocess.run([WS, "plan", FP8, "--runtime", "vllm", "--ep", "3", "--tp", "2"], capture_output=True, text=True)
check(u.returncode == 2 and "vLLM cannot form it" in u.stderr, f"plan --ep 3 --tp 2: exit {u.returncode}: {u.stderr}")
finish()
