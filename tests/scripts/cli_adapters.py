#!/usr/bin/env python3
"""LoRA adapters as PEFT and mlx-lm wrote them (tests/data/adapters, made by make_adapters.py with
the libraries named in each provenance.json), against what this script reads from the same files
with safetensors and json:

1. inspect --json: the adapter's config (library, base, rank, rank_pattern, alpha, scale, targets)
   as adapter_config.json says, and every module with its A and B factors, rank and features as
   the factors' shapes give them in that library's layout (PEFT lora_A [r, in], lora_B [out, r];
   its expert parameters [r*E, in], [out, r*E]; mlx-lm lora_a [in, r], lora_b [r, out]; its
   SwitchLinear [E, r, in], [E, out, r]).
2. validate is clean on both (WS-A004 says what they are), and with --base hf/qwen3_moe (the
   model they were trained on) too.
3. Broken copies: a lora_B taken out is WS-A001 on that module; a config rank that is not the
   tensors' is WS-A002 on every module of that rank; factors that do not share a rank dimension
   are WS-A002; another base model (hf/mixtral) is WS-A003, and so is a lora_B one output feature
   wider than the base's projection.
4. dequant of a factor gives the file's values bit for bit.
5. A state dict saved from a PEFT-wrapped model (issue 50 item 5): the fixture's linear weights as
   `X.base_layer.weight` beside `X.lora_A.default.weight` / `X.lora_B.default.weight` (lora_B zero, as
   PEFT initialises it) validate clean - the seed reads the base weight through the wrapper - each
   base weight keeps the fixture's role, layer, expert and projection, and a cut expert is still named.

usage: cli_adapters.py WEIGHTSCOPE FIXTURES ADAPTERS_DIR"""
import atexit
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np
from safetensors.numpy import load_file, save_file

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, fail, finish  # noqa: E402
from refpack import f32_bytes, read_st_folder, write_st  # noqa: E402

WS, FX, DATA = sys.argv[1], sys.argv[2], sys.argv[3]
BASE = os.path.join(FX, "hf", "qwen3_moe")
ADAPTERS = {"peft_qwen3_moe": "adapter_model.safetensors", "mlx_qwen3_moe": "adapters.safetensors"}


def run(*args):
    return subprocess.run([WS, *args], capture_output=True, text=True, timeout=120)


def findings(path, *extra):
    r = run("validate", path, "--format", "json", *extra)
    if r.returncode not in (0, 1):
        fail(f"validate {path} {extra}: exit {r.returncode}: {r.stderr.strip()[:300]}")
        return r.returncode, []
    return r.returncode, json.loads(r.stdout)["findings"]


def expected_modules(folder, file):
    """What the factors' shapes say, module by module, in the library's own layout."""
    tensors = load_file(os.path.join(folder, file))
    cfg = json.load(open(os.path.join(folder, "adapter_config.json")))
    peft = "peft_type" in cfg
    out = {}
    for name, a in tensors.items():
        m = re.match(r"(.*)\.lora_(A\.weight|a)$", name)
        if not m:
            continue
        b = tensors[m.group(1) + (".lora_B.weight" if peft else ".lora_b")]
        module = m.group(1)[len("base_model.model."):] if peft else m.group(1)
        if peft:
            depth = module.count(".base_layer")
            module = module.replace(".base_layer", "")
            params = cfg.get("target_parameters") or []
            if params and module.endswith(".experts"):
                module += "." + params[len(params) - 1 - depth]  # the first parameter wrapped innermost
            out[module] = {"rank": a.shape[0], "in_features": a.shape[1], "out_features": b.shape[0], "experts": 0}
        elif a.ndim == 3:
            out[module] = {"rank": a.shape[1], "in_features": a.shape[2], "out_features": b.shape[1], "experts": a.shape[0]}
        else:
            out[module] = {"rank": a.shape[1], "in_features": a.shape[0], "out_features": b.shape[1], "experts": 0}
    return out, cfg, tensors


tmp = tempfile.mkdtemp(prefix="ws-adapters-")
atexit.register(shutil.rmtree, tmp, True)  # a test leaves no folders behind
for name, file in ADAPTERS.items():
    folder = os.path.join(DATA, name)
    want, cfg, tensors = expected_modules(folder, file)
    r = run("inspect", folder, "--json")
    if r.returncode != 0:
        fail(f"{name}: inspect exit {r.returncode}: {r.stderr.strip()[:300]}")
        continue
    got = json.loads(r.stdout)["adapter"]
    conf = got["config"]
    if "peft_type" in cfg:
        check(conf["library"] == "peft" and conf["rank"] == cfg["r"] and conf["alpha"] == cfg["lora_alpha"] and conf["scale"] == cfg["lora_alpha"] / cfg["r"]
              and conf["rank_pattern"] == cfg["rank_pattern"] and conf["base_model"] == cfg["base_model_name_or_path"]
              and conf["target_modules"] == cfg["target_modules"] and conf["target_parameters"] == cfg["target_parameters"], f"{name}: config {conf}")
    else:
        lp = cfg["lora_parameters"]
        check(conf["library"] == "mlx-lm" and conf["rank"] == lp["rank"] and conf["scale"] == lp["scale"] and conf["target_modules"] == lp["keys"]
              and conf["num_layers"] == cfg["num_layers"] and conf["base_model"] == cfg["model"], f"{name}: config {conf}")
    mods = {m["module"]: {k: m[k] for k in ("rank", "in_features", "out_features", "experts")} for m in got["modules"]}
    check(mods == want, f"{name}: modules differ: {[k for k in sorted(set(mods) | set(want)) if mods.get(k) != want.get(k)][:5]}")
    print(f"{name}: {len(mods)} modules, {got['summary']}")

    # 2. clean, alone and against its base
    for extra in ((), ("--base", BASE)):
        code, fs = findings(folder, *extra)
        check(code == 0 and [f["code"] for f in fs] == ["WS-A004"], f"{name} {extra}: exit {code}, findings {[(f['code'], f['message'][:80]) for f in fs]}")

    # 3. broken copies
    broken = os.path.join(tmp, name + "-no-b")
    shutil.copytree(folder, broken)
    victim = sorted(k for k in tensors if re.search(r"\.lora_(B\.weight|b)$", k))[0]
    save_file({k: v for k, v in tensors.items() if k != victim}, os.path.join(broken, file))
    code, fs = findings(broken)
    a001 = [f for f in fs if f["code"] == "WS-A001"]
    check(code == 1 and len(a001) == 1 and a001[0]["tensor"] == re.sub(r"lora_(B\.weight|b)$", lambda m: "lora_A.weight" if m.group(1) != "b" else "lora_a", victim),
          f"{name}: without {victim}: {[(f['code'], f['tensor']) for f in fs]}")

    rank_off = os.path.join(tmp, name + "-rank")
    shutil.copytree(folder, rank_off)
    c = json.load(open(os.path.join(folder, "adapter_config.json")))
    if "peft_type" in c:
        c["r"] = 5
        plain = [m for m in want if not re.search(r"experts\.", m) and not any(re.fullmatch(rf"(.*\.)?({k})", m) for k in c["rank_pattern"])]
        params = [m for m in want if m.endswith(("gate_up_proj", "down_proj")) and ".experts." in m and not any(re.fullmatch(rf"(.*\.)?({k})", m) for k in c["rank_pattern"])]
        expected_a002 = len(plain) + sum(1 for m in params if want[m]["rank"] % 5)
    else:
        c["lora_parameters"]["rank"] = 5
        expected_a002 = len(want)
    json.dump(c, open(os.path.join(rank_off, "adapter_config.json"), "w"))
    code, fs = findings(rank_off)
    a002 = [f for f in fs if f["code"] == "WS-A002"]
    check(code == 1 and len(a002) == expected_a002 and all("gives 5" in f["message"] for f in a002), f"{name}: rank 5 in the config: {len(a002)} WS-A002, expected {expected_a002}")

    unshared = os.path.join(tmp, name + "-unshared")
    shutil.copytree(folder, unshared)
    victim_a = sorted(k for k in tensors if re.search(r"self_attn\.q_proj\.lora_(A\.weight|a)$", k))[0]
    a = tensors[victim_a]
    cut = dict(tensors, **{victim_a: np.ascontiguousarray(a[:-1] if "peft_type" in c else a[:, :-1])})
    save_file(cut, os.path.join(unshared, file))
    code, fs = findings(unshared)
    check(code == 1 and [(f["code"], f["tensor"]) for f in fs if f["code"] == "WS-A002"] == [("WS-A002", victim_a)] and "do not share" in str(fs),
          f"{name}: {victim_a} cut to a smaller rank: {[(f['code'], f['tensor'], f['message'][:60]) for f in fs]}")

    code, fs = findings(folder, "--base", os.path.join(FX, "hf", "mixtral"))
    check(code == 1 and any(f["code"] == "WS-A003" for f in fs), f"{name} against mixtral: exit {code}, {[f['code'] for f in fs]}")

    # One more output feature than the base's q_proj, its input features and rank untouched: WS-A003
    # on that module alone (PEFT's lora_B is [out, r], mlx-lm's lora_b [r, out]).
    wider = os.path.join(tmp, name + "-wider")
    shutil.copytree(folder, wider)
    victim_b = sorted(k for k in tensors if re.search(r"self_attn\.q_proj\.lora_(B\.weight|b)$", k))[0]
    b = tensors[victim_b]
    grown = np.concatenate([b, b[:1]], 0) if "peft_type" in c else np.concatenate([b, b[:, :1]], 1)
    save_file(dict(tensors, **{victim_b: np.ascontiguousarray(grown)}), os.path.join(wider, file))
    code, fs = findings(wider, "--base", BASE)
    a003 = [f for f in fs if f["code"] == "WS-A003"]
    out_features = b.shape[0] if "peft_type" in c else b.shape[1]
    check(code == 1 and len(a003) == 1 and f"-> {out_features + 1} features" in a003[0]["message"],
          f"{name}: {victim_b} one output wider: {[(f['code'], f['tensor'], f['message'][:90]) for f in fs]}")

    # 4. a factor's values, bit for bit
    out = os.path.join(tmp, name + ".npy")
    r = run("dequant", folder, victim_a, "--out", out)
    check(r.returncode == 0 and np.array_equal(np.load(out).view(np.uint32), tensors[victim_a].astype(np.float32).reshape(np.load(out).shape).view(np.uint32)),
          f"{name}: dequant {victim_a}: exit {r.returncode} {r.stderr.strip()[:200]}")


# 5. A PEFT-wrapped state dict of the base (raw bytes copied, so BF16 stays BF16).
def peft_wrapped(dst, rank=4, cut_rows_of=None):
    """Writes the base's tensors under PEFT's names; returns {wrapped base weight name: fixture name}."""
    os.makedirs(dst, exist_ok=True)
    shutil.copy(os.path.join(BASE, "config.json"), dst)
    rng = np.random.default_rng(5)
    out, bases = [], {}
    for k, (dtype, shape, blob) in read_st_folder(BASE).items():
        m = re.fullmatch(r"(.*\.(?:q|k|v|o|gate|up|down)_proj)\.weight", k)
        if not m:
            out.append(("base_model.model." + k, dtype, shape, blob))
            continue
        module = "base_model.model." + m.group(1)
        if k == cut_rows_of:
            shape = [shape[0] // 2, shape[1]]
            blob = blob[:len(blob) // 2]
        bases[module + ".base_layer.weight"] = k
        out.append((module + ".base_layer.weight", dtype, shape, blob))
        out.append((module + ".lora_A.default.weight", "F32", [rank, shape[1]], f32_bytes(rng.standard_normal((rank, shape[1])) * 0.01)))
        out.append((module + ".lora_B.default.weight", "F32", [shape[0], rank], f32_bytes(np.zeros((shape[0], rank)))))
    write_st(os.path.join(dst, "model.safetensors"), out)
    return bases


wrapped = os.path.join(tmp, "peft-wrapped")
bases = peft_wrapped(wrapped)
for extra in ((), ("--runtime", "seed"), ("--runtime", "kt")):
    code, fs = findings(wrapped, *extra)
    check(code == 0 and [f["code"] for f in fs] == ["WS-A004"], f"PEFT-wrapped state dict {extra}: exit {code}, {[(f['code'], f['tensor'], f['message'][:60]) for f in fs[:4]]}")
fixture = {t["name"]: t for t in json.loads(run("inspect", BASE, "--json").stdout)["tensors"]}
r = run("inspect", wrapped, "--json")
listed = {t["name"]: t for t in json.loads(r.stdout)["tensors"]} if r.returncode == 0 else {}
check(len(listed) == len(fixture) + 2 * len(bases), f"PEFT-wrapped: inspect lists {len(listed)} tensors, expected {len(fixture) + 2 * len(bases)}")
for name, k in bases.items():
    t, want = listed.get(name, {}), fixture[k]
    module = name[:-len(".base_layer.weight")]
    check(all(t.get(f) == want[f] for f in ("role", "layer", "expert", "projection", "component")) and t.get("logical") == module,
          f"PEFT-wrapped: {name} is {[t.get(f) for f in ('role', 'layer', 'expert', 'projection', 'logical')]}, its base {k} {[want[f] for f in ('role', 'layer', 'expert', 'projection')]}")
    for factor in ("lora_A", "lora_B"):
        lt = listed.get(f"{module}.{factor}.default.weight", {})
        check(lt.get("component") == factor and lt.get("logical") == module, f"PEFT-wrapped: {module}.{factor}.default.weight is {lt.get('component')} of {lt.get('logical')}")
for top in ("lm_head.weight", "model.embed_tokens.weight", "model.norm.weight"):
    check(listed.get("base_model.model." + top, {}).get("role") == fixture[top]["role"], f"PEFT-wrapped: base_model.model.{top} keeps the role {fixture[top]['role']}")
# Unwrapping hides no damage: an expert's base weight cut to half its rows is still WS-S001 on it.
victim = "model.layers.1.mlp.experts.2.gate_proj.weight"
peft_wrapped(os.path.join(tmp, "peft-cut"), cut_rows_of=victim)
code, fs = findings(os.path.join(tmp, "peft-cut"))
check(code == 1 and [(f["code"], f["tensor"]) for f in fs if f["severity"] == "error"] == [("WS-S001", "base_model.model.model.layers.1.mlp.experts.2.gate_proj.base_layer.weight")],
      f"PEFT-wrapped with a cut expert: exit {code}, {[(f['code'], f['tensor']) for f in fs]}")
print(f"PEFT-wrapped state dict: {len(bases)} wrapped modules")

finish()
