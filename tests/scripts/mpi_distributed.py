#!/usr/bin/env python3
"""weightscope under Open MPI on this machine (mpirun --oversubscribe, the host backend), against
the same commands run in one process.

1. load --distributed at -np 3 and -np 4 on every HF fixture: rank r of the gathered
   weightscope.load-distributed/1 report holds what `load --ep-size N --ep-rank r` holds in one
   process (resident and predicted bytes by category, residency, derived buffers, deferred
   tensors), its experts are those `plan` gives rank r, and the coverage is ok.
2. The coverage fires: one rank given a --defer of its own (an MPMD launch) lacks that expert; one
   rank given another placement lacks some experts and holds others twice.
3. A rank that fails (a device too small; a path that is not there) answers with its error: every
   process exits promptly and non-zero, the report names that rank's error, the others loaded.
4. validate --distributed and stats --all --distributed at -np 3 and -np 4 on every fixture (HF
   and GGUF) equal the single-process results exactly (timings aside); the bytes each rank read
   add up to the single-process total, and for safetensors are what the kernel counted the rank
   reading (rchar of its workers, bytes_read_by_rank_measured).
5. The full-size sparse DeepSeek-V3 (163 shards) at -np 4: the scale rules' pass shared evenly by
   bytes (each rank within one tensor of a quarter, each share printed and measured by the kernel)
   and merged to the single-process findings.

usage: mpi_distributed.py WEIGHTSCOPE FIXTURES"""
import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, fail, finish  # noqa: E402
import mpi_launch  # noqa: E402

WS, FX = sys.argv[1], sys.argv[2]
HF = ["qwen3_moe", "qwen3_moe_fp8", "deepseek_v3", "mixtral", "qwen3_vl_moe"]
GGUF = ["tiny-qwen3moe-kquants.gguf", "tiny-qwen3moe-kquants-00001-of-00002.gguf"]
LIMIT = 300  # a hang is a failure, not a stuck CI job


def run(*args):
    return subprocess.run([WS, *args], capture_output=True, text=True, timeout=LIMIT)


def mpirun(*apps):
    return mpi_launch.mpirun(WS, *apps, limit=LIMIT)


def without(doc, *keys):
    return {k: v for k, v in doc.items() if k not in keys}


tmp = tempfile.mkdtemp(prefix="ws-mpi-")
atexit.register(shutil.rmtree, tmp, True)  # a test leaves no folders behind

# 1. the gathered report is the union of the single-process ranks
for name in HF:
    path = os.path.join(FX, "hf", name)
    for n in (3, 4):
        report = os.path.join(tmp, f"{name}-{n}.json")
        r = mpirun((n, ["load", path, "--distributed", "--device", "host", "--report", report]))
        if r is None:
            continue
        if r.returncode != 0 or not os.path.exists(report):
            fail(f"{name} -np {n}: exit {r.returncode}: {r.stderr.strip()[-400:]}")
            continue
        rep = json.load(open(report))
        check(rep["schema"] == "weightscope.load-distributed/1" and rep["ep_size"] == n and len(rep["ranks"]) == n, f"{name} -np {n}: schema, ep_size, ranks")
        check(rep["coverage"] is not None and rep["coverage"]["ok"], f"{name} -np {n}: coverage {json.dumps(rep['coverage'])[:300]}")
        plan = json.loads(run("plan", path, "--ep", str(n), "--json").stdout)
        resident = 0
        for k in range(n):
            one = json.loads(run("load", path, "--ep-size", str(n), "--ep-rank", str(k), "--device", "host", "--json").stdout)
            got = rep["ranks"][k]
            check(got["rank"] == k and got["error"] is None, f"{name} -np {n} rank {k}: {got.get('error')}")
            for key in ("resident", "predicted", "residency", "derived_bytes"):
                check(got.get(key) == one[key], f"{name} -np {n} rank {k}: {key} {got.get(key)} against one process's {one[key]}")
            check(got["deferred"] == len(one["deferred"]), f"{name} -np {n} rank {k}: deferred")
            check(got["experts"] == plan["ranks"][k]["experts"], f"{name} -np {n} rank {k}: experts {got['experts']} against the plan's {plan['ranks'][k]['experts']}")
            resident += one["resident"]["bytes"]
        check(rep["summary"]["resident_bytes"] == resident and rep["summary"]["ok"], f"{name} -np {n}: summary {rep['summary']}")

# 2. the coverage check fires on a rank that loaded by other options
path = os.path.join(FX, "hf", "qwen3_moe")
rep_file = os.path.join(tmp, "skip.json")
common = ["load", path, "--distributed", "--device", "host", "--report", rep_file]
r = mpirun((1, common), (1, common + ["--defer", "model.layers.1.mlp.experts.4.*"]), (1, common))
if r is not None:
    rep = json.load(open(rep_file))
    cov = rep["coverage"]
    check(r.returncode != 0 and not cov["ok"], f"a rank skipping expert 4: exit {r.returncode}, coverage ok {cov['ok']}")
    check([(g["rank"], g["layer"], g["expert"]) for g in cov["missing"]] == [(1, 1, 4)] and not cov["duplicated"],
          f"a rank skipping expert 4 of layer 1: missing {cov['missing']}, duplicated {cov['duplicated']}")
    check("rank 1 lacks expert 4 of layer 1" in r.stdout, f"the text names the gap: {r.stdout[-300:]}")
r = mpirun((2, common), (1, common + ["--placement", "round-robin"]))
if r is not None:
    cov = json.load(open(rep_file))["coverage"]
    check(r.returncode != 0 and cov["missing"] and cov["duplicated"] and all(g["rank"] == 2 for g in cov["missing"] + cov["duplicated"]),
          f"a rank placed round-robin among linear ones: {json.dumps(cov)[:400]}")

# 3. a failing rank: every process ends promptly, with that rank's error
rep_file = os.path.join(tmp, "fail.json")
good = ["load", path, "--distributed", "--device", "host", "--report", rep_file]
for what, bad, says in (("a device too small", ["load", path, "--distributed", "--device", "host:1MiB"], "exceeds"),
                        ("a checkpoint that is not there", ["load", os.path.join(tmp, "no-such-checkpoint"), "--distributed", "--device", "host"], "no-such-checkpoint")):
    if os.path.exists(rep_file):
        os.remove(rep_file)
    r = mpirun((1, good), (1, bad), (2, good))
    if r is None:
        continue
    rep = json.load(open(rep_file))
    errors = [g["error"] for g in rep["ranks"]]
    check(r.returncode != 0 and not rep["summary"]["ok"] and rep["summary"]["failed_ranks"] == 1, f"{what}: exit {r.returncode}, {rep['summary']}")
    check(errors[1] and says in errors[1] and errors[0] is None and errors[2] is None and errors[3] is None, f"{what}: the ranks' errors {errors}")
    check(rep["coverage"] is not None and rep["coverage"]["unchecked_ranks"] == [1], f"{what}: the failed rank is left unchecked: {rep['coverage']}")

# 4. distributed validate and stats equal one process's
for rel in [os.path.join("hf", n) for n in HF] + [os.path.join("gguf", g) for g in GGUF]:
    path = os.path.join(FX, rel)
    one = run("validate", path, "--format", "json")
    stats = run("stats", path, "--all", "--json")
    ref = json.loads(one.stdout)
    for n in (3, 4):
        r = mpirun((n, ["validate", path, "--distributed", "--format", "json"]))
        if r is None:
            continue
        if r.returncode != one.returncode:
            fail(f"validate {rel} -np {n}: exit {r.returncode}, one process {one.returncode}: {r.stderr.strip()[-300:]}")
            continue
        got = json.loads(r.stdout)
        shares = got.get("bytes_read_by_rank", {})
        # the scales, the weights, and WS-V013's windows of the routed experts read again
        check(sorted(shares) == ["values (expert fingerprints)", "values (scales)", "values (weights)"] and all(len(v) == n for v in shares.values()),
              f"validate {rel} -np {n}: each rank's share {shares}")
        check(all(sum(v) == ref["bytes_read_by_family"][k] for k, v in shares.items()), f"validate {rel} -np {n}: shares {shares} against {ref['bytes_read_by_family']}")
        # The shares measured: the kernel's count of what each rank's workers read in its pass
        # (rchar per thread). Safetensors: the claimed bytes of both passes exactly - every byte
        # read once, with pread. GGUF's block decoders read through the mapping, which the count
        # does not see: there it can only be less.
        claimed = [sum(v[k] for v in shares.values()) for k in range(n)]
        measured = got.get("bytes_read_by_rank_measured") or []
        exact = rel.startswith("hf")
        check(len(measured) == n and all(m == c if exact else 0 <= m <= c for m, c in zip(measured, claimed)),
              f"validate {rel} -np {n}: the kernel counted {measured}, the ranks claim {claimed}")
        check(without(got, "summary", "bytes_read_by_rank", "bytes_read_by_rank_measured") == without(ref, "summary") and without(got["summary"], "seconds") == without(ref["summary"], "seconds"),
              f"validate {rel} -np {n}: the report differs from one process's")
        s = mpirun((n, ["stats", path, "--all", "--json", "--distributed"]))
        if s is not None:
            check(s.returncode == 0 and s.stdout == stats.stdout, f"stats --all {rel} -np {n}: exit {s.returncode}, output differs from one process's")

# 5. the full-size sparse DeepSeek-V3: the scale pass shared by bytes
big = os.path.join(tmp, "deepseek-full")
r = run("synth", "--like", "deepseek-v3", "--scheme", "fp8-block", "--size", "full", "--sparse", big)
check(r.returncode == 0, f"synth full DeepSeek-V3: {r.stderr.strip()}")
scale_rules = "WS-V001,WS-V002,WS-V003,WS-V004,WS-V005,WS-V006,WS-V007,WS-V010,WS-V011"
one = run("validate", big, "--rules", scale_rules, "--format", "json")
r = mpirun((4, ["validate", big, "--rules", scale_rules, "--distributed", "--format", "json"]))
if r is not None and one.returncode in (0, 1):
    ref, got = json.loads(one.stdout), json.loads(r.stdout)
    shares = got["bytes_read_by_rank"]["values (scales)"]
    total = ref["bytes_read_by_family"]["values (scales)"]
    # the largest scale tensor bounds how unevenly whole tensors can be shared
    largest = max(t["bytes"] for t in json.loads(run("inspect", big, "--json").stdout)["tensors"] if t["name"].endswith("_scale_inv"))
    print(f"deepseek-full: {total:,} scale bytes over 4 ranks: " + ", ".join(f"rank {k} {b:,} ({100 * b / total:.2f}%)" for k, b in enumerate(shares)))
    check(sum(shares) == total and all(abs(b - total / 4) <= largest for b in shares), f"deepseek-full: shares {shares} of {total} (largest tensor {largest})")
    check(got.get("bytes_read_by_rank_measured") == shares, f"deepseek-full: the kernel counted {got.get('bytes_read_by_rank_measured')}, the ranks claim {shares}")
    check(without(got, "summary", "bytes_read_by_rank", "bytes_read_by_rank_measured") == without(ref, "summary") and without(got["summary"], "seconds") == without(ref["summary"], "seconds"),
          f"deepseek-full: the distributed findings differ from one process's ({got['summary']} against {ref['summary']})")

finish()
