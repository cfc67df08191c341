#!/usr/bin/env python3
"""Makes tests/data/compressed_tensors/: a tiny Qwen3-MoE quantized by llmcompressor, as it writes it.

Not run by the suite (llmcompressor needs torch, GBs from PyPI); run by hand when the corpus
changes, in a throwaway venv:

  python3 -m venv /tmp/ctvenv && /tmp/ctvenv/bin/pip install llmcompressor==0.14.0.1
  /tmp/ctvenv/bin/python tests/scripts/make_ct_corpus.py tests/data/compressed_tensors

(made with llmcompressor 0.14.0.1, compressed-tensors 0.19.0, transformers 5.17.0, torch 2.14.0).

source/: a Qwen3MoeForCausalLM with random weights (torch seed 0), hidden 256, 4 experts of
  intermediate 128, written by transformers' save_pretrained in BF16. 128 wide down_proj weights
  make FP8_BLOCK's scale grid [2, 1], which looks like one scale per channel.
<scheme>/: llmcompressor's oneshot with a data-free QuantizationModifier (no calibration data:
  every preset below is weight-only or dynamic), saved with save_compressed=True; recipe.yaml is
  the recipe llmcompressor wrote beside it. The router (mlp.gate) and lm_head stay BF16.
<scheme>/truth.json: for each quantized module, the SHA-256 of the BF16 weight (little-endian, the
  PyTorch shape) that compressed-tensors' own decompressor for the checkpoint's format
  (BaseCompressor registry, `decompress` of the module's tensors with its scheme) returns: the
  library's answer, which `weightscope dequant --dtype bf16` must equal bit for bit
  (tests/scripts/reference_compressed_tensors.py).
"""
import hashlib
import json
import os
import shutil
import sys

import torch
from compressed_tensors.compressors import BaseCompressor
from compressed_tensors.quantization import QuantizationConfig
from llmcompressor import oneshot
from llmcompressor.modifiers.quantization import QuantizationModifier
from safetensors.torch import load_file
from transformers import AutoModelForCausalLM, Qwen3MoeConfig, Qwen3MoeForCausalLM

IGNORE = ["lm_head", "re:.*mlp.gate$"]
# folder -> QuantizationModifier arguments
SCHEMES = {
    # The Kimi-K2 layout: symmetric int4 in groups of 32 on the routed experts only.
    "w4a16-g32-experts": {"config_groups": {"group_0": {"targets": ["re:.*mlp.experts.*"], "weights": {
        "num_bits": 4, "type": "int", "symmetric": True, "strategy": "group", "group_size": 32}}}},
    "w4a16": {"scheme": "W4A16"},
    "w4a16-asym": {"scheme": "W4A16_ASYM"},
    "w8a16": {"scheme": "W8A16"},
    "fp8-block": {"scheme": "FP8_BLOCK"},
    "fp8-dynamic": {"scheme": "FP8_DYNAMIC"},
    "nvfp4a16": {"scheme": "NVFP4A16"},
    "mxfp4a16": {"scheme": "MXFP4A16"},
}


def make_source(path):
    torch.manual_seed(0)
    cfg = Qwen3MoeConfig(vocab_size=128, hidden_size=256, intermediate_size=512, moe_intermediate_size=128, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, head_dim=64, num_experts=4, num_experts_per_tok=2,
                         max_position_embeddings=512, tie_word_embeddings=False, dtype="bfloat16")
    Qwen3MoeForCausalLM(cfg).to(torch.bfloat16).save_pretrained(path)


def truth(path):
    """The library's decompression of every quantized module, as SHA-256 of its BF16 bytes."""
    qc = QuantizationConfig.model_validate(json.load(open(os.path.join(path, "config.json")))["quantization_config"])
    compressor = BaseCompressor.get_value_from_registry(qc.format)
    tensors = load_file(os.path.join(path, "model.safetensors"))
    modules = {}
    for name, t in tensors.items():
        module, _, local = name.rpartition(".")
        modules.setdefault(module, {})[local] = t
    scheme = next(iter(qc.config_groups.values()))  # one group per corpus checkpoint
    out = {}
    for module, sd in sorted(modules.items()):
        if "weight_scale" not in sd:
            continue  # left in BF16 (ignored)
        w = compressor.decompress(sd, scheme)["weight"]
        assert w.dtype == torch.bfloat16, (module, w.dtype)
        out[module] = {"shape": list(w.shape), "sha256": hashlib.sha256(w.contiguous().view(torch.int16).numpy().tobytes()).hexdigest()}
    return out


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    src = os.path.join(out, "source")
    shutil.rmtree(src, ignore_errors=True)
    make_source(src)
    for folder, args in SCHEMES.items():
        dst = os.path.join(out, folder)
        shutil.rmtree(dst, ignore_errors=True)
        model = AutoModelForCausalLM.from_pretrained(src, dtype=torch.bfloat16)
        oneshot(model=model, recipe=QuantizationModifier(targets="Linear", ignore=IGNORE, **args))
        model.save_pretrained(dst, save_compressed=True)
        with open(os.path.join(dst, "truth.json"), "w") as f:
            json.dump(truth(dst), f, indent=1)
        print(folder, "done")


if __name__ == "__main__":
    main()
