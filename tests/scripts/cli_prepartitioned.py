#!/usr/bin/env python3
"""Pre-partitioned checkpoints: vLLM's sharded state (model-rank-R-part-P.safetensors, each rank's
shard of every tensor under the same names), the seed runtime's prepartitioned_tp.

The fixture hf/qwen3_moe cut here into a 2-rank folder as vLLM lays one out: every tensor of two
or more dimensions halved along its first (rank r keeps half r, the bytes of the file), 1-D ones
whole on both, each rank's tensors spread over two parts. Then:
- inspect --json lists both ranks with their files, tensor counts and bytes (summed here from the
  headers written), the catalog is rank 0's tensors with rank 0's shapes, nothing is a finding;
- validate finds no error (the rules comparing shapes with the config are left out, and a note
  says so);
- plan takes it only at its layout (--ep 1 --tp 2, or --ep 1 alone: each rank holds its own files
  whole, summed here from the headers written), any other layout is a usage error naming that one;
- damaged: rank 1 lacking a tensor, holding an extra one, holding one with another shape, and a
  folder of ranks 0 and 2 - each exactly one WS-I026 naming the tensor (or the missing rank).

usage: cli_prepartitioned.py WEIGHTSCOPE FIXTURES"""
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, fail, finish  # noqa: E402
from refpack import write_st  # noqa: E402

WS, FX = sys.argv[1], sys.argv[2]
SRC = os.path.join(FX, "hf/qwen3_moe")
ITEM = {"BF16": 2, "F32": 4, "F16": 2}


def read_dir(d):
    out = {}
    for f in sorted(os.listdir(d)):
        if f.endswith(".safetensors"):
            raw = open(os.path.join(d, f), "rb").read()
            n = struct.unpack("<Q", raw[:8])[0]
            for name, info in json.loads(raw[8:8 + n]).items():
                if name != "__metadata__":
                    b, e = info["data_offsets"]
                    out[name] = (info["dtype"], info["shape"], raw[8 + n + b:8 + n + e])
    return out


def shard(tensors, rank, ranks):
    out = []
    for name in sorted(tensors):
        dt, shape, blob = tensors[name]
        if len(shape) >= 2 and shape[0] % ranks == 0:
            rows = shape[0] // ranks
            row_bytes = len(blob) // shape[0]
            out.append((name, dt, [rows] + shape[1:], blob[rank * rows * row_bytes:(rank + 1) * rows * row_bytes]))
        else:
            out.append((name, dt, shape, blob))
    return out


def write_ranks(d, per_rank):
    """per_rank: {rank: [(name, dtype, shape, bytes)]}, written as two parts a rank."""
    os.makedirs(d)
    shutil.copy(os.path.join(SRC, "config.json"), d)
    for rank, ts in per_rank.items():
        for part in range(2):
            write_st(os.path.join(d, f"model-rank-{rank}-part-{part}.safetensors"), ts[part::2])


def run(*args):
    return subprocess.run([WS, *args], capture_output=True, text=True)


def validate(d, tmp):
    report = os.path.join(tmp, "v.json")
    r = run("validate", d, "--report", report)
    return r.returncode, json.load(open(report))["findings"] if os.path.exists(report) else []


tensors = read_dir(SRC)
with tempfile.TemporaryDirectory() as tmp:
    good = {r: shard(tensors, r, 2) for r in range(2)}
    d = os.path.join(tmp, "tp2")
    write_ranks(d, good)
    r = run("inspect", d, "--json")
    if r.returncode != 0:
        fail(f"inspect: exit {r.returncode}: {r.stderr.strip()}")
    else:
        j = json.loads(r.stdout)
        p = j["prepartitioned"]
        check(p and p["layout"] == "vllm-sharded-state" and [x["rank"] for x in p["ranks"]] == [0, 1], f"prepartitioned {p}")
        for x in (p or {}).get("ranks", []):
            want = sum(len(t[3]) for t in good[x["rank"]])
            check(x["bytes"] == want and x["tensors"] == len(good[x["rank"]]), f"rank {x['rank']}: {x['bytes']} bytes, {x['tensors']} tensors; written {want}")
            check([os.path.basename(f) for f in x["files"]] == [f"model-rank-{x['rank']}-part-{k}.safetensors" for k in range(2)], f"rank {x['rank']} files {x['files']}")
        cat = {t["name"]: t["shape"] for t in j["tensors"]}
        check(cat == {t[0]: t[2] for t in good[0]}, "the catalog is not rank 0's tensors and shapes")
        check(not j["findings"] and any("pre-partitioned" in n for n in j["notes"]), f"findings {j['findings'][:3]}, notes {j['notes']}")
    r = run("inspect", d)
    check(r.returncode == 0 and "ranks        2 (vllm-sharded-state" in r.stdout, f"inspect text: {r.stdout[:400]}")
    rc, findings = validate(d, tmp)
    bad = [f"{f['code']} {f.get('tensor')}" for f in findings if f["severity"] in ("error", "warning")]
    check(rc == 0 and not bad, f"validate: exit {rc}: {bad[:5]}")

    # plan: only at the layout it was saved for (--ep 1 --tp 2), each rank its own files whole -
    # not rank 0's halves halved again by --tp.
    for args in (["--tp", "2"], []):  # no --tp: the layout it was saved for
        r = run("plan", d, "--ep", "1", *args, "--json")
        if r.returncode != 0:
            fail(f"plan {args}: exit {r.returncode}: {r.stderr.strip()[:300]}")
            continue
        ranks = json.loads(r.stdout)["ranks"]
        want = sum(len(t[3]) for t in good[0])
        check(len(ranks) == 1 and ranks[0]["bytes"]["total"] == want, f"plan {args} holds {[x['bytes']['total'] for x in ranks]}, rank 0's files {want}")
    for args in (["--ep", "2"], ["--ep", "1", "--tp", "4"]):
        r = run("plan", d, *args)
        check(r.returncode == 2 and "--ep 1 --tp 2" in r.stderr, f"plan {args}: exit {r.returncode}: {r.stderr.strip()[:300]}")

    victim = "model.layers.1.mlp.experts.3.up_proj.weight"
    cases = {
        "rank 1 lacks a tensor": ({0: good[0], 1: [t for t in good[1] if t[0] != victim]}, victim),
        "rank 1 holds an extra tensor": ({0: good[0], 1: good[1] + [("model.extra.weight", "F32", [2], b"\0" * 8)]}, "model.extra.weight"),
        "rank 1 holds another shape": ({0: good[0], 1: [(n, dt, ([s[0] // 2] + s[1:]) if n == victim else s, b[:len(b) // 2] if n == victim else b)
                                                         for n, dt, s, b in good[1]]}, victim),
        "rank 1 missing": ({0: good[0], 2: good[1]}, ""),
    }
    for label, (per_rank, tensor) in cases.items():
        d = os.path.join(tmp, label.replace(" ", "-"))
        write_ranks(d, per_rank)
        rc, findings = validate(d, tmp)
        hits = [f for f in findings if f["code"] == "WS-I026"]
        others = [f"{f['code']} {f.get('tensor')}" for f in findings if f["code"] != "WS-I026" and f["severity"] != "info"]
        check(rc == 1 and len(hits) == 1 and (hits[0].get("tensor") or "") == tensor and not others,
              f"{label}: exit {rc}, WS-I026 on {[h.get('tensor') for h in hits]}: {[h['message'] for h in hits]}; others {others[:3]}")
    r = run("plan", os.path.join(tmp, "rank-1-lacks-a-tensor"), "--ep", "2")
    check(r.returncode == 2 and "rank 1 lacks it" in r.stderr, f"plan of inconsistent ranks: exit {r.returncode} {r.stderr.strip()[:200]}")

finish()
