#!/usr/bin/env python3
"""`weightscope validate` from the command line: exit codes, every report format, atomic report
writing, and that checkpoints are left byte-for-byte and mtime unchanged.
Usage: cli_validate.py PATH/TO/weightscope FIXTURES_DIR"""
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, fail, finish  # noqa: E402

WS, FX = sys.argv[1], sys.argv[2]



def run(*args):
    return subprocess.run([WS, "validate", *args], capture_output=True, text=True)


def fingerprint(path):
    out = {}
    for root, _, files in os.walk(path):
        for f in files:
            p = os.path.join(root, f)
            out[p] = (hashlib.sha256(open(p, "rb").read()).hexdigest(), os.stat(p).st_mtime_ns)
    return out


with tempfile.TemporaryDirectory() as tmp:
    fp8 = os.path.join(FX, "hf/qwen3_moe_fp8")
    before = fingerprint(fp8)
    r = run(fp8, "--report", os.path.join(tmp, "ok.json"))
    check(r.returncode == 0, f"clean fixture: exit {r.returncode}: {r.stderr}")
    j = json.load(open(os.path.join(tmp, "ok.json")))
    check(j["schema"] == "weightscope.validate/1", "schema")
    check(all(k in j["summary"] for k in ("errors", "warnings", "infos")), "summary fields")
    # 48 squeezed scale grids (WS-S005, one per expert projection) and the one KTransformers
    # refusal they add up to (WS-R004), all infos.
    check(j["summary"]["errors"] == 0 and j["summary"]["infos"] == 49, f"summary {j['summary']}")
    # Meant for KTransformers, the same file fails: its native FP8 loader refuses squeezed grids.
    r = run(fp8, "--runtime", "kt", "--report", os.path.join(tmp, "kt.json"))
    kt = json.load(open(os.path.join(tmp, "kt.json")))
    check(r.returncode == 1 and [f["code"] for f in kt["findings"] if f["severity"] == "error"] == ["WS-R004"], f"--runtime kt: exit {r.returncode}, {kt['summary']}")
    r = run(fp8, "--runtime", "trtllm")
    check(r.returncode == 2 and "unknown runtime 'trtllm'" in r.stderr and "vllm, sglang" in r.stderr, f"--runtime trtllm: exit {r.returncode}, {r.stderr}")
    # Meant for vLLM at TP 2 x EP 2 on an H200: k_proj's 64-row shards are half a 128-row block
    # (WS-E005); the report opens with the verdict, in every format.
    r = run(fp8, "--runtime", "vllm", "--tp", "2", "--ep", "2", "--gpu", "H200-141GB", "--report", os.path.join(tmp, "vllm.json"))
    v = json.load(open(os.path.join(tmp, "vllm.json")))
    check(r.returncode == 1 and v["verdict"].startswith("vLLM 0.11.0, TP 2, EP 2 on H200-141GB (SM 9.0): refuses: 1 reason (WS-E005)"), f"--runtime vllm: exit {r.returncode}, {v.get('verdict')}")
    md = run(fp8, "--runtime", "vllm", "--tp", "2", "--ep", "2", "--gpu", "H200-141GB").stdout
    check(md.split("\n")[2].startswith("**vLLM 0.11.0, TP 2, EP 2"), f"Markdown verdict line: {md[:300]}")
    r = run(fp8, "--runtime", "vllm", "--tp", "1", "--gpu", "H200-141GB", "--report", os.path.join(tmp, "vllm1.json"))
    check(r.returncode == 0 and json.load(open(os.path.join(tmp, "vllm1.json")))["verdict"].endswith(": loads"), f"--runtime vllm --tp 1: exit {r.returncode}")
    for bad, why in ((["--tp", "2"], "give --runtime vllm"), (["--runtime", "vllm", "--tp", "0"], "at least 1"), (["--runtime", "sglang", "--tp", "4", "--ep", "3"], "must divide"),
                     (["--runtime", "vllm", "--gpu", "V100"], "unknown GPU 'V100'")):
        r = run(fp8, *bad)
        check(r.returncode == 2 and why in r.stderr, f"{bad}: exit {r.returncode}, {r.stderr}")
    for f in j["findings"]:
        check(set(f) >= {"severity", "code", "rule", "tensor", "file", "message", "hint"}, "finding fields")
        break
    check(fingerprint(fp8) == before, "validate changed a checkpoint file or its mtime")
    subprocess.run([WS, "inspect", "--json", fp8], capture_output=True)
    subprocess.run([WS, "scales", fp8], capture_output=True)
    check(fingerprint(fp8) == before, "inspect/scales changed a checkpoint file or its mtime")

    # a damaged copy: one scale tensor NaN
    bad = os.path.join(tmp, "bad")
    shutil.copytree(fp8, bad)
    for root, _, files in os.walk(bad):
        for f in files:
            os.chmod(os.path.join(root, f), 0o644)
    p = os.path.join(bad, "model.safetensors")
    b = bytearray(open(p, "rb").read())
    n = int.from_bytes(b[:8], "little")
    h = json.loads(b[8:8 + n])
    s, e = h["model.layers.1.mlp.experts.0.up_proj.weight_scale_inv"]["data_offsets"]
    b[8 + n + s:8 + n + e] = b"\x00\x00\xc0\x7f" * ((e - s) // 4)
    open(p, "wb").write(b)
    for fmt, ext in (("json", ".json"), ("md", ".md"), ("html", ".html"), ("junit", ".xml")):
        out = os.path.join(tmp, "report" + ext)
        r = run(bad, "--report", out)
        check(r.returncode == 1, f"{fmt}: exit {r.returncode}, expected 1: {r.stderr}")
        text = open(out).read()
        check("WS-V001" in text and "model.layers.1.mlp.experts.0.up_proj.weight_scale_inv" in text, f"{fmt}: finding missing")
        if fmt == "json":
            j = json.loads(text)
            check(j["summary"]["errors"] == 1, f"json errors {j['summary']}")
        if fmt == "html":
            check("http://" not in text and "https://" not in text and "<script src" not in text, "html is not self-contained")
            check("<table" in text and "filter" in text, "html has the findings table and filter")
        if fmt == "junit":
            root = ET.fromstring(text)
            check(root.tag == "testsuites" and int(root.get("failures")) == 1, f"junit failures {root.get('failures')}")
            names = [tc.get("name") for tc in root.iter("testcase")]
            check(any(n.startswith("WS-V001") for n in names), "junit test case per rule")
            check({ts.get("name") for ts in root.iter("testsuite")} >= {"integrity", "completeness", "shapes", "values"}, "junit suite per family")
        if fmt == "md":
            check("| severity | code |" in text, "markdown table")
    check(sorted(os.listdir(tmp)) == sorted(["ok.json", "kt.json", "vllm.json", "vllm1.json", "bad", "report.json", "report.md", "report.html", "report.xml"]), f"leftover files: {os.listdir(tmp)}")
    r = run(bad, "--min-severity", "error", "--format", "json")
    j = json.loads(r.stdout)
    check(all(f["severity"] == "error" for f in j["findings"]) and r.returncode == 1, "min-severity filters, exit still counts errors")
    r = run(bad, "--skip-rules", "values", "--format", "json")
    check(r.returncode == 0 and "values (scales)" not in json.loads(r.stdout)["bytes_read_by_family"], "skip-rules values")
    r = run(os.path.join(tmp, "nothing-here"))
    check(r.returncode == 2 and "nothing-here" in r.stderr, f"missing path: exit {r.returncode}")
    r = run(fp8, "--rules", "WS-NOPE")
    check(r.returncode == 2 and "WS-NOPE" in r.stderr, f"unknown rule: exit {r.returncode}")
    r = run(fp8, "--format", "pdf")
    check(r.returncode == 2, f"bad format: exit {r.returncode}")

finish()
