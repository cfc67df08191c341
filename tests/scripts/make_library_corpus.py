#!/usr/bin/env python3
"""Makes tests/data/library_quant/: GPTQ, AWQ and bitsandbytes weights packed by the libraries
themselves, with each library's own dequantization of them as the truth.

Not run by the suite (the writers need torch, GBs from PyPI: the only Linux torch on PyPI pulls
CUDA's wheels); run by hand when the corpus changes, in a throwaway venv:

  python3 -m venv /tmp/wv && /tmp/wv/bin/pip install torch==2.15.0 bitsandbytes==0.50.2 \\
      transformers accelerate datasets requests protobuf pypcre logbar tokenicer device-smi \\
      threadpoolctl defuser torchao dill pillow zstandard
  /tmp/wv/bin/pip install --no-deps autoawq==0.2.7.post3
  /tmp/wv/bin/pip download --no-deps --no-binary :all: gptqmodel==7.7.0 -d /tmp/gptqsrc
  tar xzf /tmp/gptqsrc/gptqmodel-7.7.0.tar.gz -C /tmp/gptqsrc
  PYTHONPATH=/tmp/gptqsrc/gptqmodel-7.7.0 /tmp/wv/bin/python tests/scripts/make_library_corpus.py tests/data/library_quant

or one folder (awq-gemv needs AutoAWQ, torch, transformers, accelerate, datasets, zstandard only):

  /tmp/wv/bin/python tests/scripts/make_library_corpus.py tests/data/library_quant awq-gemv

(made with torch 2.15.0, bitsandbytes 0.50.2, GPTQModel 7.7.0 from its sdist - imported, not built:
its pure-torch packing and dequantization need no extension - AutoAWQ 0.2.7.post3, transformers 5.)

Every folder is one layer of a Qwen3-MoE shape (hidden 64, 2 routed experts of intermediate 64),
each expert projection quantized by one library, with config.json's quantization_config as that
library writes it:
- gptq-<bits>bit[-v2][-actorder]: GPTQModel's TorchLinear.pack_block (its pure-torch path), saved
  in the v1 format (convert_gptq_v2_to_v1_format_module: each zero one below) unless -v2; act-order
  folders get a permuted g_idx, as GPTQ's desc_act makes;
- awq-gemm: AutoAWQ's WQLinear_GEMM.from_linear;
- awq-gemv: AutoAWQ's WQLinear_GEMV.from_linear (AutoAWQ has no dequantization for it: the truth is its
  kernels' formula on the codes, zeros and scales handed to from_linear - see awq_gemv);
- bnb-nf4[-nested], bnb-fp4: bitsandbytes' Linear4bit state dict (QuantState.as_dict(packed=True));
- bnb-int8: bitsandbytes' Linear8bitLt state dict (weight, SCB, weight_format).
truth.json: for every quantized module, its PyTorch shape and the SHA-256 of the float32 bytes of
the library's own dequantization (GPTQModel dequantize_weight, AutoAWQ dequantize_gemm,
bitsandbytes dequantize_4bit / int8_vectorwise_dequant), which `weightscope dequant` must equal
bit for bit (tests/scripts/reference_library_quant.py).
"""
import hashlib
import json
import os
import shutil
import sys

import numpy as np
import torch
from safetensors.torch import save_file

HIDDEN, INTER, EXPERTS = 64, 64, 2
PROJ = {"gate_proj": (INTER, HIDDEN), "up_proj": (INTER, HIDDEN), "down_proj": (HIDDEN, INTER)}


def modules():
    for e in range(EXPERTS):
        for p, (out_f, in_f) in PROJ.items():
            yield f"model.layers.0.mlp.experts.{e}.{p}", out_f, in_f


def base_config(quant):
    return {
        "architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe", "hidden_size": HIDDEN,
        "moe_intermediate_size": INTER, "num_experts": EXPERTS, "num_experts_per_tok": 1, "num_hidden_layers": 1,
        "intermediate_size": INTER, "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 32,
        "vocab_size": 128, "torch_dtype": "bfloat16", "quantization_config": quant,
    }


def truth_entry(values):
    v = values.detach().to(torch.float32).contiguous().numpy()
    return {"shape": list(v.shape), "sha256": hashlib.sha256(v.astype("<f4").tobytes()).hexdigest()}


def write(folder, tensors, quant, truth):
    os.makedirs(folder, exist_ok=True)
    tensors["model.layers.0.mlp.gate.weight"] = torch.randn(EXPERTS, HIDDEN, dtype=torch.bfloat16)
    save_file({k: v.contiguous() for k, v in tensors.items()}, os.path.join(folder, "model.safetensors"))
    json.dump(base_config(quant), open(os.path.join(folder, "config.json"), "w"), indent=2)
    json.dump(truth, open(os.path.join(folder, "truth.json"), "w"), indent=1, sort_keys=True)


def gptq(folder, bits, v2=False, actorder=False, group=32):
    from gptqmodel.nn_modules.qlinear.torch import TorchLinear
    from gptqmodel.utils.model import convert_gptq_v2_to_v1_format_module
    from gptqmodel.quantization.config import QuantizeConfig
    tensors, truth = {}, {}
    maxq = 2 ** bits - 1
    for name, out_f, in_f in modules():
        lin = torch.nn.Linear(in_f, out_f, bias=False)
        groups = in_f // group
        g_idx = torch.arange(in_f, dtype=torch.int32) // group
        if actorder:  # desc_act: the groups follow a permutation of the inputs
            g_idx = g_idx[torch.randperm(in_f)]
        scales = (torch.rand(out_f, groups) * 0.02 + 0.001).to(torch.float16).to(torch.float32)
        zeros = torch.randint(0, maxq + 1, (out_f, groups)).to(torch.float32)
        if name.endswith("down_proj"):
            zeros[:] = 2 ** (bits - 1)  # a symmetric module: the zero in the middle
        ql = TorchLinear(bits=bits, group_size=group, sym=False, desc_act=actorder, in_features=in_f, out_features=out_f, bias=False)
        ql.pack_block(lin, scales, zeros, g_idx)
        ql.post_init()
        truth[name] = truth_entry(ql.dequantize_weight().T)
        if not v2:
            convert_gptq_v2_to_v1_format_module(ql, QuantizeConfig(bits=bits, group_size=group))
        for k in ("qweight", "qzeros", "scales", "g_idx"):
            tensors[f"{name}.{k}"] = getattr(ql, k).detach().clone()
    quant = QuantizeConfig(bits=bits, group_size=group, desc_act=actorder, sym=False, format="gptq_v2" if v2 else "gptq").to_dict()
    quant.get("meta", {}).pop("offload_to_disk_path", None)  # this run's temporary folder
    write(folder, tensors, quant, truth)


def awq(folder, group=32):
    from awq.modules.linear.gemm import WQLinear_GEMM
    from awq.utils.packing_utils import dequantize_gemm
    tensors, truth = {}, {}
    for name, out_f, in_f in modules():
        groups = in_f // group
        # from_linear takes [groups, out] (AutoAWQ's quantizer transposes them for GEMM) and does not
        # clamp: weights made from codes 1..14 keep every rounded code inside 0..15, as real ones are.
        scales = (torch.rand(groups, out_f) * 0.02 + 0.001).half()
        zeros = torch.randint(0, 16, (groups, out_f)).half()
        codes = torch.randint(1, 15, (in_f, out_f)).half()
        g = torch.arange(in_f) // group
        lin = torch.nn.Linear(in_f, out_f, bias=False).half()
        lin.weight.data = ((codes - zeros[g]) * scales[g]).T.contiguous()
        q = WQLinear_GEMM.from_linear(lin, w_bit=4, group_size=group, init_only=False, scales=scales, zeros=zeros)
        truth[name] = truth_entry(dequantize_gemm(q.qweight, q.qzeros, q.scales, 4, group).T)
        for k in ("qweight", "qzeros", "scales"):
            tensors[f"{name}.{k}"] = getattr(q, k).detach().clone()
    write(folder, tensors, {"quant_method": "awq", "bits": 4, "group_size": group, "zero_point": True, "version": "gemm", "modules_to_not_convert": None}, truth)


def awq_gemv(folder, group=32):
    """GEMV keeps qweight [out, in / 8] with input 8c + i in nibble i of word c, qzeros [out, W]
    packing group 8c + i in nibble i, scales [out, 8 W], W = calculate_zeros_width (padding).
    AutoAWQ ships no dequantization for it; its kernels (AutoAWQ_kernels c7b0e88) form each weight
    as scale * (code - zero) in float32 - gemv_cuda.cu keeps that, gemmv2 (gemm_cuda_gen.cu:614)
    rounds it to half. The truth is the half one, made from the inputs from_linear is handed, after
    checking from_linear's own rounding gives those codes back."""
    from awq.modules.linear.gemv import WQLinear_GEMV
    torch.manual_seed(1)  # the last folder: the others keep the sequence they were made with
    tensors, truth = {}, {}
    for name, out_f, in_f in modules():
        groups = in_f // group
        scales = (torch.rand(out_f, groups) * 0.02 + 0.001).half()
        zeros = torch.randint(0, 16, (out_f, groups)).half()
        codes = torch.randint(1, 15, (out_f, in_f)).half()
        g = torch.arange(in_f) // group
        lin = torch.nn.Linear(in_f, out_f, bias=False).half()
        lin.weight.data = ((codes - zeros[:, g]) * scales[:, g]).contiguous()
        rounded = torch.round((lin.weight.data + (zeros * scales)[:, g]) / scales[:, g])  # from_linear's intweight
        assert torch.equal(rounded, codes), f"{name}: from_linear would pack other codes"
        q = WQLinear_GEMV.from_linear(lin, w_bit=4, group_size=group, init_only=False, scales=scales, zeros=zeros)
        truth[name] = truth_entry((scales.float()[:, g] * (codes.float() - zeros.float()[:, g])).half())
        for k in ("qweight", "qzeros", "scales"):
            tensors[f"{name}.{k}"] = getattr(q, k).detach().clone()
    write(folder, tensors, {"quant_method": "awq", "bits": 4, "group_size": group, "zero_point": True, "version": "gemv", "modules_to_not_convert": None}, truth)


def bnb4(folder, quant_type, nested, dtype):
    import bitsandbytes.functional as F
    from transformers import BitsAndBytesConfig
    tensors, truth = {}, {}
    for name, out_f, in_f in modules():
        w = torch.randn(out_f, in_f, dtype=dtype)
        if name.endswith("up_proj"):
            w[0, :5] = 0  # a block partly zero
        q, state = F.quantize_4bit(w, quant_type=quant_type, compress_statistics=nested, blocksize=64)
        truth[name] = truth_entry(F.dequantize_4bit(q, state))
        tensors[f"{name}.weight"] = q
        for k, v in state.as_dict(packed=True).items():
            tensors[f"{name}.weight.{k}"] = v
    cfg = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type=quant_type, bnb_4bit_use_double_quant=nested, bnb_4bit_compute_dtype=dtype)
    write(folder, tensors, cfg.to_dict(), truth)


def bnb8(folder):
    import bitsandbytes.functional as F
    from transformers import BitsAndBytesConfig
    tensors, truth = {}, {}
    for name, out_f, in_f in modules():
        w = torch.randn(out_f, in_f, dtype=torch.float16)
        cb, scb, _ = F.int8_vectorwise_quant(w)
        truth[name] = truth_entry(F.int8_vectorwise_dequant(cb, scb))
        tensors[f"{name}.weight"] = cb
        tensors[f"{name}.SCB"] = scb
        tensors[f"{name}.weight_format"] = torch.tensor(0, dtype=torch.uint8)
    write(folder, tensors, BitsAndBytesConfig(load_in_8bit=True).to_dict(), truth)


def main(out, only):
    """Every folder, or only those named. A folder made alone matches a full run only if it seeds its
    own draws, as awq-gemv does (its writer needs AutoAWQ alone, so it can be remade without the others)."""
    torch.manual_seed(0)
    if not only:
        shutil.rmtree(out, ignore_errors=True)
    for name, make in folders():
        if not only or name in only:
            shutil.rmtree(os.path.join(out, name), ignore_errors=True)
            make(os.path.join(out, name))


def folders():
    made = [(f"gptq-{bits}bit", lambda f, b=bits: gptq(f, b)) for bits in (2, 3, 4, 8)]
    return made + [
        ("gptq-4bit-actorder", lambda f: gptq(f, 4, actorder=True)),
        ("gptq-4bit-v2", lambda f: gptq(f, 4, v2=True)),
        ("awq-gemm", awq),
        ("bnb-nf4", lambda f: bnb4(f, "nf4", False, torch.bfloat16)),
        ("bnb-nf4-nested", lambda f: bnb4(f, "nf4", True, torch.bfloat16)),
        ("bnb-fp4-nested-f16", lambda f: bnb4(f, "fp4", True, torch.float16)),
        ("bnb-int8", bnb8),
        ("awq-gemv", awq_gemv),
    ]


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
