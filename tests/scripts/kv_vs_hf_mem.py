#!/usr/bin/env python3
"""The KV cache of published MoE configs, weightscope against hf-mem (PyPI), with every difference
explained - the table in docs/plan.md, kept true by this test.

For each model: the attention keys of its published config.json (written out below, with the
repository they come from) merged into a full-size sparse synth checkpoint of its family (the
weights' shapes), then `weightscope plan --ep 8 --gpu-mem H200-141GB --max-model-len 32768
--kv-cache-dtype bf16 --json` for rank 0's KV bytes per token and tokens that fit, and hf-mem's own
estimator (`compute_safetensors_kv_cache_size`) on the same config for one sequence of 32,768
tokens. hf-mem knows neither EP, MLA latents, vLLM's sliding-window cap nor linear-attention
layers; where it and weightscope differ, the difference must be exactly the one the table's last
column names, computed here from the config. Usage: kv_vs_hf_mem.py PATH/TO/weightscope PATH/TO/docs/plan.md"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, check_doc_block, fail, finish  # noqa: E402

from hf_mem.safetensors.kv_cache import compute_safetensors_kv_cache_size, resolve_kv_cache_dtype  # noqa: E402

WS, PLAN_MD = sys.argv[1], sys.argv[2]
LEN = 32768

# (label, synth family, synth scheme, synth overrides, published attention keys and their source)
MODELS = [
    ("DeepSeek-V3", "deepseek-v3", "fp8-block", [], "deepseek-ai/DeepSeek-V3",
     {"num_hidden_layers": 61, "num_attention_heads": 128, "num_key_value_heads": 128, "hidden_size": 7168, "kv_lora_rank": 512,
      "q_lora_rank": 1536, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128, "max_position_embeddings": 163840}),
    ("Kimi-K2", "kimi-k2", "int4-ct", [], "moonshotai/Kimi-K2-Instruct",
     {"num_hidden_layers": 61, "num_attention_heads": 64, "num_key_value_heads": 64, "hidden_size": 7168, "kv_lora_rank": 512,
      "q_lora_rank": 1536, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128, "max_position_embeddings": 131072}),
    ("Qwen3-235B-A22B", "qwen3-moe", "bf16", [], "Qwen/Qwen3-235B-A22B",
     {"num_hidden_layers": 94, "num_attention_heads": 64, "num_key_value_heads": 4, "head_dim": 128, "hidden_size": 4096,
      "max_position_embeddings": 40960}),
    ("gpt-oss-120b", "gpt-oss", "mxfp4", [], "openai/gpt-oss-120b",
     {"num_hidden_layers": 36, "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 64, "hidden_size": 2880, "sliding_window": 128,
      "layer_types": ["sliding_attention", "full_attention"] * 18, "max_position_embeddings": 131072}),
    ("GLM-4.5", "glm-4.5", "bf16", [], "zai-org/GLM-4.5",
     {"num_hidden_layers": 92, "num_attention_heads": 96, "num_key_value_heads": 8, "head_dim": 128, "hidden_size": 5120,
      "max_position_embeddings": 131072}),
    # Weights approximated by the Qwen3-MoE family at Qwen3-Next's size (its linear-attention
    # projections differ); its KV cache and state come from the config alone.
    ("Qwen3-Next-80B-A3B (hybrid)", "qwen3-moe", "bf16",
     ["--layers", "48", "--experts", "512", "--hidden", "2048", "--intermediate", "512", "--shared", "1", "--vocab", "151936"], "Qwen/Qwen3-Next-80B-A3B-Instruct",
     {"num_hidden_layers": 48, "num_attention_heads": 16, "num_key_value_heads": 2, "head_dim": 256, "hidden_size": 2048, "full_attention_interval": 4,
      "linear_conv_kernel_dim": 4, "linear_key_head_dim": 128, "linear_num_key_heads": 16, "linear_num_value_heads": 32, "linear_value_head_dim": 128,
      "max_position_embeddings": 262144}),
]


def merged_config(path, keys):
    cfg_path = os.path.join(path, "config.json")
    cfg = json.load(open(cfg_path))
    target = cfg.get("text_config", cfg)
    for k in ("head_dim", "sliding_window", "layer_types", "full_attention_interval"):  # the synth's own, where the published config has none
        if k not in keys:
            target.pop(k, None)
    target.update(keys)
    target["torch_dtype"] = "bfloat16"
    json.dump(cfg, open(cfg_path, "w"), indent=1)
    return target


def fmt(n):
    return f"{n:,}"


rows = []
with tempfile.TemporaryDirectory() as tmp:
    for label, like, scheme, extra, source, keys in MODELS:
        out = os.path.join(tmp, like + str(len(rows)))
        r = subprocess.run([WS, "synth", "--like", like, "--scheme", scheme, "--size", "full", "--sparse", *extra, out], capture_output=True, text=True)
        if r.returncode != 0:
            fail(f"synth {label}: {r.stderr.strip()}")
            continue
        cfg = merged_config(out, keys)
        r = subprocess.run([WS, "plan", out, "--ep", "8", "--gpu-mem", "H200-141GB", "--max-model-len", str(LEN), "--kv-cache-dtype", "bf16", "--json"],
                           capture_output=True, text=True)
        if r.returncode not in (0, 1):
            fail(f"plan {label}: {r.stderr.strip()}")
            continue
        rank = json.loads(r.stdout)["ranks"][0]
        kv = rank["kv_cache"]
        ours = kv["bytes_per_token"]
        theirs_seq = compute_safetensors_kv_cache_size(cfg, "BF16", LEN, 1)
        theirs = theirs_seq // LEN
        L = keys["num_hidden_layers"]
        # The difference, from the config, in the words of the table's last column.
        if "kv_lora_rank" in keys:
            latent = (keys["kv_lora_rank"] + keys["qk_rope_head_dim"]) * 2
            check(ours == L * latent, f"{label}: MLA latent {ours} != {L} x {latent}")
            head_dim = keys.get("head_dim", keys["hidden_size"] // keys["num_attention_heads"])
            check(theirs == L * 2 * keys["num_key_value_heads"] * head_dim * 2, f"{label}: hf-mem's generic formula")
            why = (f"MLA keeps one latent of (kv_lora_rank {keys['kv_lora_rank']} + rope {keys['qk_rope_head_dim']}) x 2 B per layer; hf-mem counts "
                   f"2 x {keys['num_key_value_heads']} heads x {head_dim} (hidden / heads) x 2 B: {theirs / ours:.1f}x")
        elif "sliding_window" in keys:
            full = sum(1 for t in keys["layer_types"] if t == "full_attention")
            per_layer = 2 * keys["num_key_value_heads"] * keys["head_dim"] * 2
            check(ours == full * per_layer, f"{label}: full layers {ours} != {full} x {per_layer}")
            check(theirs == L * per_layer, f"{label}: hf-mem counts every layer at full length in a hybrid")
            check(kv["sliding"]["layers"] == L - full and kv["sliding"]["window"] == keys["sliding_window"], f"{label}: sliding layers")
            why = (f"{L - full} sliding layers (window {keys['sliding_window']}) are capped as vLLM caps them: {fmt(kv['sliding']['bytes_per_seq'])} B a "
                   f"sequence, not per token; hf-mem reserves them at the full length (its 'hybrid' rule)")
        elif "full_attention_interval" in keys:
            full = L // keys["full_attention_interval"]
            per_layer = 2 * keys["num_key_value_heads"] * keys["head_dim"] * 2
            check(ours == full * per_layer, f"{label}: {ours} != {full} full layers x {per_layer}")
            check(theirs == L * per_layer, f"{label}: hf-mem counts all {L} layers as full attention")
            check(kv["state_bytes_per_seq"] > 0, f"{label}: linear-attention state per sequence")
            why = (f"only every {keys['full_attention_interval']}th layer is full attention ({full} of {L}); the {L - full} linear-attention layers keep "
                   f"{fmt(kv['state_bytes_per_seq'])} B of state a sequence; hf-mem reads no full_attention_interval and counts all {L}")
        else:
            check(ours == theirs, f"{label}: GQA bytes per token {ours} != hf-mem's {theirs}")
            why = "none: 2 x KV heads x head_dim x 2 B x layers, both"
        free = kv["free_bytes"]
        tokens_theirs = free // theirs // 16 * 16 if free > 0 and theirs else 0  # whole 16-token blocks, as weightscope counts them
        rows.append(f"| {label} | `{source}` | {fmt(ours)} | {fmt(theirs)} | {fmt(kv['tokens_fit'])} | {fmt(tokens_theirs)} | {why} |")

# What `--kv-cache-dtype auto` means: on an FP8 checkpoint (Qwen3-235B-A22B-FP8's keys,
# quantization_config fp8 / e4m3, torch_dtype bfloat16), vLLM 0.11.0 keeps the cache in the model's
# dtype (v1/worker/gpu_model_runner.py: cache_dtype "auto" -> model_config.dtype), as weightscope
# does; hf-mem 0.5.6 takes the weights' FP8 format (safetensors/kv_cache.py resolve_kv_cache_dtype),
# half the bytes. docs/plan.md says so under the table.
with tempfile.TemporaryDirectory() as tmp:
    out = os.path.join(tmp, "qwen3-fp8")
    r = subprocess.run([WS, "synth", "--like", "qwen3-moe", "--scheme", "fp8-block", out], capture_output=True, text=True)
    check(r.returncode == 0, f"synth qwen3-moe fp8-block: {r.stderr.strip()}")
    keys = MODELS[2][5]  # Qwen3-235B-A22B's attention keys
    cfg = merged_config(out, keys)
    r = subprocess.run([WS, "plan", out, "--ep", "1", "--max-model-len", str(LEN), "--kv-cache-dtype", "auto", "--json"], capture_output=True, text=True)
    kv = json.loads(r.stdout)["ranks"][0]["kv_cache"] if r.returncode in (0, 1) else {}
    their_dtype = resolve_kv_cache_dtype(cfg, "auto", None, "Qwen/Qwen3-235B-A22B-FP8")
    theirs = compute_safetensors_kv_cache_size(cfg, their_dtype, LEN, 1) // LEN
    check(cfg["quantization_config"]["quant_method"] == "fp8" and kv.get("dtype") == "bf16" and their_dtype == "F8_E4M3" and kv.get("bytes_per_token") == 2 * theirs,
          f"auto on an FP8 checkpoint: weightscope {kv.get('dtype')} {kv.get('bytes_per_token')} B a token, hf-mem {their_dtype} {theirs} B")
    print(f"auto on an FP8 checkpoint: weightscope {kv.get('dtype')} ({kv.get('bytes_per_token'):,} B a token), hf-mem {their_dtype} ({theirs:,} B)")

table = "\n".join(["| model | config from | KV B/token/rank (weightscope) | hf-mem B/token | tokens fit, rank 0 (weightscope) | with hf-mem's B/token | the difference |",
                   "|---|---|---|---|---|---|---|", *rows])
print(table)
check_doc_block(PLAN_MD, "kv-vs-hf-mem", table)
finish()
