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

vLLM's --cpu-offload-gb on the transformers-written qwen3_moe fixture (3 layers, 1.0-1.9 MiB each),
worked out from the shards' own headers: the cap is vLLM's int(G * 1024**3) per rank
(gpu_model_runner.py at 0.11.0) and the decoder layers go first to last (make_layers):
- a cap inside layer 0 moves exactly the cap, nothing of layers 1 and 2;
- a cap of layers 0 and 1 leaves layer 2's experts and no dense MLP (layer 0's) on the device;
- a cap past every layer moves the layers and nothing else (embeddings, final norm, lm_head stay);
- --host-mem searches whole GiB: a device of what is left without the layers needs 1, the device
  of the whole model 0; --emit vllm passes the flag; a negative G, a fraction of a GB for SGLang
  and another engine's plan (--runtime seed) are usage errors.
SGLang's --cpu-offload-gb (0.5.23) takes the same layers here (it keeps only MLA's kv_b_proj, which
this model lacks) and --emit sglang passes it.

KTransformers (SGLang + kt-kernel, ktransformers 95009ea) on the same fixture (8 experts a MoE
layer), from the headers: --kt-num-gpu-experts N keeps experts 0..N-1 of each layer on the GPU
(the uniform placement) and every routed expert in host memory - as stored for BF16, converted for
AMXINT8 / AMXINT4 (each expert matrix [n, k]: n*k int8 or n*k/2 int4 bytes and n FP32 row scales,
kt-kernel's BufferB; over T NUMA nodes gate / up keep n/T rows, down k/T columns and all its n
scales). --host-mem finds the largest N the device holds; --emit kt passes it; an unknown method,
LLAMAFILE on safetensors, --kt-method alone and EP 2 are usage errors. --kt-gpu-experts-ratio and
the front-loading, random and frequency placements are worked out from the fork's mask functions
(random's torch.randperm through numpy's MT19937, frequency's counts read with Python's pickle); a
tie across the last place kept, and a file that is no recorder's, are refused.

usage: cli_host_offload.py WEIGHTSCOPE FIXTURES"""
import json
import os
import re
import subprocess
import sys

import numpy
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

# ---- vLLM --cpu-offload-gb
HF = os.path.join(FX, "hf/qwen3_moe")
LAYER = re.compile(r"^model\.layers\.(\d+)\.")
hf_sizes = {}
for shard in sorted(f for f in os.listdir(HF) if f.endswith(".safetensors")):
    with open(os.path.join(HF, shard), "rb") as f:
        header = json.loads(f.read(int.from_bytes(f.read(8), "little")))
    hf_sizes.update({k: v["data_offsets"][1] - v["data_offsets"][0] for k, v in header.items() if k != "__metadata__"})
by_layer = {}
for name, b in hf_sizes.items():
    if m := LAYER.match(name):
        by_layer[int(m.group(1))] = by_layer.get(int(m.group(1)), 0) + b
layers = sum(by_layer.values())
check(sorted(by_layer) == [0, 1, 2] and 1 << 20 < by_layer[0] < by_layer[1], f"the fixture's layer bytes: {by_layer}")


def hf_plan(*args):
    return subprocess.run([WS, "plan", HF, "--ep", "1", *args], capture_output=True, text=True)


def hf_json(*args):
    r = hf_plan(*args, "--json")
    check(r.returncode in (0, 1), f"plan {args}: exit {r.returncode}: {r.stderr}")
    return json.loads(r.stdout) if r.stdout else {}


hf_total = hf_json()["ranks"][0]["bytes"]["total"]
check(hf_total == sum(hf_sizes.values()), f"the plan holds {hf_total}, the headers {sum(hf_sizes.values())}")
cases = (("0.001", int(0.001 * 1024**3)), (repr((by_layer[0] + by_layer[1]) / 1024**3), by_layer[0] + by_layer[1]), ("1", layers))
for gb, moved in cases:
    rank = hf_json("--cpu-offload-gb", gb).get("ranks", [{}])[0]
    check(rank.get("host") == moved, f"--cpu-offload-gb {gb}: host {rank.get('host')}, expected {moved}")
    check(rank.get("bytes", {}).get("total") == hf_total - moved, f"--cpu-offload-gb {gb}: device {rank.get('bytes', {}).get('total')}, expected {hf_total - moved}")
rank = hf_json("--cpu-offload-gb", cases[1][0]).get("ranks", [{}])[0]
layer2_experts = sum(b for n, b in hf_sizes.items() if n.startswith("model.layers.2.mlp.experts."))
check(rank.get("bytes", {}).get("routed_experts") == layer2_experts and rank["bytes"].get("dense_mlp") == 0,
      f"layers 0 and 1 moved first: routed {rank.get('bytes', {}).get('routed_experts')} (layer 2's {layer2_experts}), dense {rank.get('bytes', {}).get('dense_mlp')}")

rest = hf_total - layers  # embeddings, the final norm and lm_head: never moved
doc = hf_json("--gpu-mem", f"{rest}B", "--host-mem", f"{layers}B")
fit = doc.get("host_fit", {})
check(fit.get("cpu_offload_gb") == 1 and fit.get("fits") is True and doc.get("ranks", [{}])[0].get("host") == layers, f"--host-mem: {fit}")
check(hf_json("--gpu-mem", f"{hf_total}B", "--host-mem", "1B").get("host_fit", {}).get("cpu_offload_gb") == 0, "the whole model fits: no offload")
r = hf_plan("--gpu-mem", f"{rest}B", "--host-mem", f"{layers - 1}B")
check(r.returncode == 1 and "does not fit with --cpu-offload-gb 1" in r.stdout, f"a host one byte short: exit {r.returncode}: {r.stdout[-400:]}")
r = hf_plan("--gpu-mem", f"{rest - 1}B", "--host-mem", "1GiB")
check(r.returncode == 1 and "does not fit even with --cpu-offload-gb 1" in r.stdout, f"a device too small for what stays: exit {r.returncode}: {r.stdout[-400:]}")
r = hf_plan("--gpu-mem", f"{rest}B", "--host-mem", "1GiB", "--emit", "vllm")
check(r.returncode == 0 and "--cpu-offload-gb 1" in r.stdout.split("launch:")[-1], f"--emit vllm: {r.stdout[-300:]}")
# SGLang's --cpu-offload-gb (0.5.23 OffloaderV1, host_offload.h): the same walk - this model has no
# MLA kv_b_proj to keep - a whole number of GB, passed by --emit sglang.
rank = hf_json("--cpu-offload-gb", "1", "--runtime", "sglang").get("ranks", [{}])[0]
check(rank.get("host") == layers, f"SGLang --cpu-offload-gb 1: host {rank.get('host')}, expected {layers}")
# (exit 1: SGLang builds this fixture's dense layer 0 as MoE and would load it broken, WS-E009)
r = hf_plan("--gpu-mem", f"{rest}B", "--host-mem", "1GiB", "--runtime", "sglang", "--emit", "sglang")
check(r.returncode == 1 and "loads broken: 2 reasons (WS-E009)" in r.stdout and "--cpu-offload-gb 1" in r.stdout.split("launch:")[-1], f"--emit sglang: {r.stdout[-300:]}")
for args, why in ((["--cpu-offload-gb", "-1"], "a negative size"), (["--cpu-offload-gb", "1", "--runtime", "seed"], "another engine's plan"),
                  (["--cpu-offload-gb", "0.5", "--runtime", "sglang"], "a fraction of a GB for SGLang")):
    r = hf_plan(*args)
    check(r.returncode == 2 and "--cpu-offload-gb" in r.stderr, f"{why}: exit {r.returncode}: {r.stderr}")

# ---- KTransformers
EXPERT = re.compile(r"^model\.layers\.(\d+)\.mlp\.experts\.(\d+)\.(gate|up|down)_proj\.weight$")
routed = {n: b for n, b in hf_sizes.items() if EXPERT.match(n)}
shapes = {}
for shard in sorted(f for f in os.listdir(HF) if f.endswith(".safetensors")):
    with open(os.path.join(HF, shard), "rb") as f:
        header = json.loads(f.read(int.from_bytes(f.read(8), "little")))
    shapes.update({k: v["shape"] for k, v in header.items() if k in routed})
on_gpu = lambda n: sum(b for name, b in routed.items() if int(EXPERT.match(name).group(2)) < n)  # noqa: E731


def amx(code_bytes, nodes):
    total = [0] * nodes
    for name, (rows, cols) in shapes.items():
        codes = code_bytes(rows * cols)
        for node in range(nodes):
            total[node] += codes // nodes + (4 * rows if EXPERT.match(name).group(3) == "down" else 4 * rows // nodes)
    return total


for method, nodes, want in (("BF16", 1, [sum(routed.values())]), ("AMXINT8", 2, amx(lambda v: v, 2)), ("AMXINT4", 2, amx(lambda v: v // 2, 2))):
    doc = hf_json("--kt-num-gpu-experts", "3", "--kt-method", method, "--kt-threadpool-count", str(nodes))
    rank = doc.get("ranks", [{}])[0]
    check(rank.get("host") == sum(want) and doc.get("numa_bytes") == want, f"--kt-method {method}: host {rank.get('host')}, per node {doc.get('numa_bytes')}; by hand {want}")
    check(rank.get("bytes", {}).get("routed_experts") == on_gpu(3) and rank["bytes"]["total"] == hf_total - sum(routed.values()) + on_gpu(3),
          f"--kt-method {method}: the GPU holds {rank.get('bytes', {}).get('routed_experts')} of experts, the first 3 a layer {on_gpu(3)}")
device = hf_total - sum(routed.values()) + on_gpu(2)
doc = hf_json("--gpu-mem", f"{device}B", "--host-mem", "1GiB", "--kt-method", "BF16")
check(doc.get("host_fit", {}).get("kt_num_gpu_experts") == 2 and doc["host_fit"].get("fits") is True, f"--host-mem with KTransformers: {doc.get('host_fit')}")
r = hf_plan("--gpu-mem", f"{device}B", "--host-mem", "1GiB", "--kt-method", "BF16", "--emit", "kt")
check(r.returncode == 0 and "--kt-num-gpu-experts 2" in r.stdout.split("launch:")[-1] and "--kt-weight-path " + HF in r.stdout, f"--emit kt: {r.stdout[-400:]}")
for args, why in ((["--kt-num-gpu-experts", "2", "--kt-method", "AMXINT2"], "an unknown method"), (["--kt-num-gpu-experts", "2", "--kt-method", "LLAMAFILE"], "LLAMAFILE on safetensors"),
                  (["--kt-method", "BF16"], "--kt-method alone")):
    r = hf_plan(*args)
    check(r.returncode == 2 and "--kt-" in r.stderr, f"{why}: exit {r.returncode}: {r.stderr}")
# The fork's other placements (kt_ep_wrapper.py _init_kt_gpu_experts_masks at 04653fa). It counts MoE
# layers by first_k_dense_replace and moe_layer_freq alone (defaults 0 and 1), so this fixture's
# dense layer 0 (mlp_only_layers [0]) is one of its 3 MoE rows:
# - --kt-gpu-experts-ratio 0.35: int(3 x 8 x 0.35) = 8 spread evenly, the first two rows one more: 3, 3, 2;
# - --kt-num-gpu-experts 3 front-loading: 9 in all, whole rows from the first: 8 (layer 0, which has
#   no routed experts), then 1 for layer 1 and none for layer 2.
on_gpu_by = lambda per: sum(b for name, b in routed.items() if int(EXPERT.match(name).group(2)) < per[int(EXPERT.match(name).group(1))])  # noqa: E731
for args, per, why in ((["--kt-gpu-experts-ratio", "0.35"], [3, 3, 2], "ratio 0.35, uniform"),
                       (["--kt-num-gpu-experts", "3", "--kt-expert-placement-strategy", "front-loading"], [8, 1, 0], "3 a layer, front-loading")):
    doc = hf_json(*args, "--kt-method", "BF16")
    rank = doc.get("ranks", [{}])[0]
    check(rank.get("bytes", {}).get("routed_experts") == on_gpu_by(per) and rank.get("host") == sum(routed.values()),
          f"KTransformers {why}: the GPU holds {rank.get('bytes', {}).get('routed_experts')} of experts, by hand {on_gpu_by(per)}")
# random (generate_random_masks): the first 9 of torch.randperm(3 rows x 8 experts) from a generator
# seeded 42 - randperm_cpu's Fisher-Yates pass drawing mt19937() % (n - i) - over the positions
# (row, expert) in order. numpy's legacy RandomState(42) draws the same MT19937 stream.
stream = numpy.random.RandomState(42).randint(0, 2**32, size=23, dtype=numpy.uint64).tolist()
order = list(range(24))
for i in range(23):
    z = i + stream[i] % (24 - i)
    order[i], order[z] = order[z], order[i]
picked = set(order[:9])
on_gpu_random = sum(b for name, b in routed.items() if int(EXPERT.match(name).group(1)) * 8 + int(EXPERT.match(name).group(2)) in picked)
doc = hf_json("--kt-num-gpu-experts", "3", "--kt-expert-placement-strategy", "random", "--kt-method", "BF16")
rank = doc.get("ranks", [{}])[0]
host_only = {n for n in routed if int(EXPERT.match(n).group(1)) * 8 + int(EXPERT.match(n).group(2)) not in picked}
planned_host = {t["name"] for t in doc.get("not_uploaded", []) if t.get("reason") == "host"}
check(rank.get("bytes", {}).get("routed_experts") == on_gpu_random and rank.get("host") == sum(routed.values()) and planned_host == host_only,
      f"KTransformers 3 a layer, random: the GPU holds {rank.get('bytes', {}).get('routed_experts')} of experts, by hand {on_gpu_random} (picks {sorted(picked)}); "
      f"host-only tensors differ by {sorted(planned_host ^ host_only)[:4]}")
# frequency (generate_gpu_experts_masks): the 12 most active of the table [3 rows, 8 experts] - 4 a
# row x 3 rows - by the recorder's counts (tests/data/kt, make_expert_distribution.py) summed over
# its steps. The .pt is read here with Python's own zipfile and pickle, its storage bytes as int32.
def recorded_counts(path):
    import pickle
    import zipfile
    with zipfile.ZipFile(path) as z:
        root = next(n for n in z.namelist() if n.endswith("/data.pkl"))[:-len("data.pkl")]

        class Reader(pickle.Unpickler):
            def find_class(self, module, name):
                if (module, name) == ("torch._utils", "_rebuild_tensor_v2"):
                    return lambda storage, offset, size, stride, *rest: (storage, offset, size, stride)
                if (module, name) == ("collections", "OrderedDict"):
                    return dict
                return name  # the storage type's name

            def persistent_load(self, pid):
                return numpy.frombuffer(z.read(root + "data/" + pid[2]), dtype="<i4")

        storage, offset, size, stride = Reader(z.open(root + "data.pkl")).load()["logical_count"]
        return numpy.lib.stride_tricks.as_strided(storage[offset:], shape=size, strides=[s * 4 for s in stride])


KT_DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "kt")
table = recorded_counts(os.path.join(KT_DATA, "expert_distribution.pt")).sum(axis=0).astype(numpy.float32)
flat = sorted(range(24), key=lambda i: -table.flat[i])
check(table.flat[flat[11]] != table.flat[flat[12]], "the distinct counts tie at the 12th place")
picked = set(flat[:12])
host_only = {n for n in routed if int(EXPERT.match(n).group(1)) * 8 + int(EXPERT.match(n).group(2)) not in picked}
pt = os.path.join(KT_DATA, "expert_distribution.pt")
doc = hf_json("--kt-num-gpu-experts", "4", "--kt-expert-placement-strategy", "frequency", "--init-expert-location", pt, "--kt-method", "BF16")
planned_host = {t["name"] for t in doc.get("not_uploaded", []) if t.get("reason") == "host"}
check(planned_host == host_only and doc.get("ranks", [{}])[0].get("host") == sum(routed.values()),
      f"KTransformers frequency: host-only tensors differ by {sorted(planned_host ^ host_only)[:4]} (picks {sorted(picked)})")
r = hf_plan("--kt-num-gpu-experts", "4", "--kt-expert-placement-strategy", "frequency", "--init-expert-location", pt, "--kt-method", "BF16", "--emit", "kt")
check(r.returncode == 0 and f"--kt-expert-placement-strategy frequency --init-expert-location {pt}" in r.stdout.split("launch:")[-1], f"--emit kt with frequency: {r.stdout[-300:]}")
# Not settled, or not a recorder's file: usage errors naming why.
with open(pt, "rb") as f:
    cut = f.read()[:900]
cut_path = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"ws-cut-{os.getpid()}.pt")
with open(cut_path, "wb") as f:
    f.write(cut)
for args, want, why in ((["--init-expert-location", os.path.join(KT_DATA, "expert_distribution_tied.pt")], "tie at 10", "counts tied across the 12th place"),
                        ([], "every MoE expert counts 1.0", "no file: every MoE expert ties"),
                        (["--init-expert-location", cut_path], cut_path, "a file cut short"),
                        (["--init-expert-location", HF + "/config.json"], "not a torch.save zip", "a file that is no zip")):
    r = hf_plan("--kt-num-gpu-experts", "4", "--kt-expert-placement-strategy", "frequency", "--kt-method", "BF16", *args)
    check(r.returncode == 2 and want in r.stderr, f"frequency, {why}: exit {r.returncode}: {r.stderr[:300]}")
os.remove(cut_path)
r = hf_plan("--kt-gpu-experts-ratio", "0.35", "--kt-method", "BF16", "--emit", "kt")
launch = r.stdout.split("launch:")[-1]
check(r.returncode == 0 and "--kt-gpu-experts-ratio 0.35" in launch and "--kt-num-gpu-experts" not in launch, f"--emit kt with a ratio: {launch[-300:]}")
for args, why in ((["--kt-num-gpu-experts", "2", "--init-expert-location", "x.pt", "--kt-method", "BF16"], "a recorder's file without the frequency placement"),
                  (["--kt-num-gpu-experts", "2", "--kt-gpu-experts-ratio", "0.5", "--kt-method", "BF16"], "both a count and a ratio"),
                  (["--kt-gpu-experts-ratio", "1.5", "--kt-method", "BF16"], "a ratio above 1")):
    r = hf_plan(*args)
    check(r.returncode == 2 and "--kt-" in r.stderr, f"{why}: exit {r.returncode}: {r.stderr}")
r = subprocess.run([WS, "plan", HF, "--ep", "2", "--kt-num-gpu-experts", "2", "--kt-method", "BF16"], capture_output=True, text=True)
check(r.returncode == 2 and "expert-parallel" in r.stderr, f"KTransformers at EP 2: exit {r.returncode}: {r.stderr}")
finish()
