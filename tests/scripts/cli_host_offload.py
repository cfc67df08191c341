#!/usr/bin/env python3
"""plan --n-cpu-moe / --host-mem on the real llama.cpp-written GGUF fixture (2 blocks of 8
experts): the bytes llama.cpp's --n-cpu-moe keeps in host memory, worked out here from gguf-py's
own reading of the file (every blk.i.ffn_*_exps tensor of the first N blocks), not from plan.

- --n-cpu-moe 1 and 2: the rank's host bytes are those tensors' bytes, its device total drops by
  as much, and they are the "host" entries of not_uploaded, no others;
- --host-mem with a device budget of exactly the bytes left once block 0's experts are on the
  host: the search answers --n-cpu-moe 1 (0 does not fit), fits when the host holds them, and
  exits 1 naming the shortfall when the host is one byte short; --emit llama.cpp passes the flag;
- bad input: a negative count, a safetensors checkpoint, --host-mem without --gpu-mem are usage
  errors (exit 2).

usage: cli_host_offload.py WEIGHTSCOPE FIXTURES"""
import json
import os
import re
import subprocess
import sys

from gguf import GGUFReader

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish  # noqa: E402

WS, FX = sys.argv[1], sys.argv[2]
GGUF = os.path.join(FX, "gguf/tiny-qwen3moe-kquants.gguf")
EXPS = re.compile(r"^blk\.(\d+)\.ffn_(up|down|gate|gate_up)_(ch|)exps")


def plan(*args):
    return subprocess.run([WS, "plan", GGUF, "--ep", "1", *args], capture_output=True, text=True)


def plan_json(*args):
    r = plan(*args, "--json")
    check(r.returncode in (0, 1), f"plan {args}: exit {r.returncode}: {r.stderr}")
    return json.loads(r.stdout) if r.stdout else {}


sizes = {t.name: int(t.n_bytes) for t in GGUFReader(GGUF).tensors}
experts_of = {n: sum(b for name, b in sizes.items() if (m := EXPS.match(name)) and int(m.group(1)) < n) for n in (1, 2)}
check(0 < experts_of[1] < experts_of[2], f"the fixture's expert bytes by block: {experts_of}")

base = plan_json()
total = base["ranks"][0]["bytes"]["total"]
for n in (1, 2):
    doc = plan_json("--n-cpu-moe", str(n))
    rank = doc.get("ranks", [{}])[0]
    check(rank.get("host") == experts_of[n], f"--n-cpu-moe {n}: host {rank.get('host')}, by gguf-py {experts_of[n]}")
    check(rank.get("bytes", {}).get("total") == total - experts_of[n], f"--n-cpu-moe {n}: device {rank.get('bytes', {}).get('total')}, expected {total - experts_of[n]}")
    on_host = sorted(t["name"] for t in doc.get("not_uploaded", []) if t["reason"] == "host")
    want = sorted(name for name in sizes if (m := EXPS.match(name)) and int(m.group(1)) < n)
    check(on_host == want, f"--n-cpu-moe {n}: host tensors {on_host}, expected {want}")
    check(doc.get("n_cpu_moe") == n, f"--n-cpu-moe {n}: the document says {doc.get('n_cpu_moe')}")

# A device of exactly what is left with block 0's experts on the host (a size: no context reserve).
device = f"{total - experts_of[1]}B"
doc = plan_json("--gpu-mem", device, "--host-mem", f"{experts_of[1]}B")
fit = doc.get("host_fit", {})
check(fit.get("n_cpu_moe") == 1 and fit.get("fits") is True, f"--host-mem: {fit}")
check(doc.get("ranks", [{}])[0].get("host") == experts_of[1], "--host-mem: the plan shown is the one at the answer")
r = plan("--gpu-mem", device, "--host-mem", f"{experts_of[1] - 1}B")
check(r.returncode == 1 and "does not fit with --n-cpu-moe 1" in r.stdout, f"a host one byte short: exit {r.returncode}: {r.stdout[-400:]}")
r = plan("--gpu-mem", f"{total - experts_of[2] - 1}B", "--host-mem", "1GiB")
check(r.returncode == 1 and "does not fit even with --n-cpu-moe 2" in r.stdout, f"a device too small for the rest: exit {r.returncode}: {r.stdout[-400:]}")
r = plan("--gpu-mem", device, "--host-mem", "1GiB", "--emit", "llama.cpp")
check(r.returncode == 0 and "--n-cpu-moe 1" in r.stdout.split("launch:")[-1], f"--emit llama.cpp: {r.stdout[-300:]}")

for args, why in ((["--n-cpu-moe", "-1"], "a negative count"), (["--host-mem", "1GiB"], "--host-mem without --gpu-mem")):
    r = plan(*args)
    check(r.returncode == 2, f"{why}: exit {r.returncode}: {r.stderr}")
r = subprocess.run([WS, "plan", os.path.join(FX, "hf/qwen3_moe"), "--ep", "1", "--n-cpu-moe", "1"], capture_output=True, text=True)
check(r.returncode == 2 and "GGUF" in r.stderr, f"--n-cpu-moe on safetensors: exit {r.returncode}: {r.stderr}")
finish()
