#!/usr/bin/env python3
"""Makes tests/data/deepseek_v4/: a tiny DeepSeek-V4 checkpoint in the naming and expert format the
published V4 checkpoints ship in - what llama.cpp's converter (conversion/deepseek.py
DeepseekV4Model) and SGLang's loader (models/deepseek_v4.py) read: `embed.weight`, `layers.N.attn.*`,
`hc_head_fn`, routed experts as packed FP4 (I8, two E2M1 codes a byte, element 2i in the low nibble)
with one E8M0 scale per 32 inputs (`.scale`), and the config keys the converter reads
(`compress_ratios`, `num_hash_layers`). All five layer kinds: a sliding-only layer (ratio 0), heavily
compressed (128) and compressed sparse (4, with the lightning indexer), three hash-routed MoE layers
then top-k ones.

The weights are transformers' own DeepseekV4ForCausalLM (5.25.0) at random init; transformers'
save_pretrained writes them under its half-reverted names (`model.` prefix, `attn.norm`), so they are
renamed to the published ones here, and the BF16 experts rounded to FP4 (the values do not matter to
the files' uses: the tensor tree, the schemes and llama.cpp's cache). llama.cpp's converter then
turns it into tests/data/llama_cpp/deepseek-v4-bf16.gguf (experts repacked to MXFP4, the rest BF16),
whose cache llama.cpp keeps as a sliding raw cache plus compressed ones (src/llama-kv-cache-dsv4.cpp).

Not run by the suite; run by hand with transformers 5.25.0, tokenizers 0.23.3 and torch 2.15.0, then
the converter of llama-cpp-python 0.3.36 (ggml-org/llama.cpp 0c1e57098), its vocabulary step taken
through gguf-py's LlamaHfVocab as for make_deepseek_v32.py:

  python3 tests/scripts/make_deepseek_v4.py tests/data/deepseek_v4
  python3 tests/scripts/make_deepseek_v4.py tests/data/deepseek_v4 --convert LLAMA_DIR tests/data/llama_cpp/deepseek-v4-bf16.gguf
"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from llama_convert import convert_bf16  # noqa: E402
from tiny_tokenizer import save_tokenizer  # noqa: E402

LAYER_TYPE_RATIO = {"sliding_attention": 0, "compressed_sparse_attention": 4, "heavily_compressed_attention": 128}
LAYER_TYPES = ["sliding_attention", "heavily_compressed_attention", "compressed_sparse_attention",
               "heavily_compressed_attention", "compressed_sparse_attention"]
NUM_HASH_LAYERS = 3


def published_name(name):
    """transformers 5.25.0's saved name -> the published checkpoint's (llama.cpp's converter map)."""
    name = name.removeprefix("model.")
    name = {"embed_tokens.weight": "embed.weight", "hc_head.hc_fn": "hc_head_fn", "hc_head.hc_base": "hc_head_base",
            "hc_head.hc_scale": "hc_head_scale"}.get(name, name)
    return re.sub(r"^(layers\.\d+\.attn)\.norm\.weight$", r"\1.kv_norm.weight", name)


def fp4(weight):
    """A BF16 [rows, cols] weight as packed E2M1 codes (int8 [rows, cols/2]) and E8M0 scales
    (uint8 [rows, cols/32]): each group of 32 scaled by a power of two to at most 6, rounded to the
    nearest E2M1 value."""
    import torch
    grid = torch.tensor([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0])
    w = weight.float().reshape(weight.shape[0], -1, 32)
    exp = torch.ceil(torch.log2(w.abs().amax(-1, keepdim=True).clamp(min=2 ** -100) / 6.0))
    q = w / torch.exp2(exp)
    code = (q.abs().unsqueeze(-1) - grid).abs().argmin(-1) | ((q < 0).to(torch.int64) << 3)
    code = code.reshape(weight.shape[0], -1).to(torch.uint8)
    packed = (code[:, 0::2] | (code[:, 1::2] << 4)).view(torch.int8)
    return packed, (exp.squeeze(-1) + 127).to(torch.uint8).view(torch.float8_e8m0fnu)


def make(out):
    import torch
    from safetensors.torch import load_file, save_file
    from transformers import DeepseekV4Config, DeepseekV4ForCausalLM
    os.makedirs(out, exist_ok=True)
    vocab = save_tokenizer(out)
    torch.manual_seed(0)
    # head_dim 64 and index_head_dim 128, unequal so that a cache taking one for the other shows;
    # llama.cpp rotates keys by a Hadamard matrix of at least 64 (as for V3.2). Inputs a multiple of
    # 32, FP4's group; hc_mult 4, the one llama.cpp builds (deepseek4.cpp build_hc_pre asserts it).
    config = DeepseekV4Config(vocab_size=vocab, hidden_size=64, moe_intermediate_size=32, num_hidden_layers=len(LAYER_TYPES),
                              num_attention_heads=4, num_key_value_heads=1, head_dim=64, q_lora_rank=48, num_experts_per_tok=2,
                              n_routed_experts=4, n_shared_experts=1, sliding_window=16, o_groups=2, o_lora_rank=32,
                              index_n_heads=4, index_head_dim=128, index_topk=8, layer_types=LAYER_TYPES,
                              mlp_layer_types=["hash_moe"] * NUM_HASH_LAYERS + ["moe"] * (len(LAYER_TYPES) - NUM_HASH_LAYERS),
                              num_nextn_predict_layers=0, hc_mult=4, max_position_embeddings=4096,
                              pad_token_id=0, bos_token_id=2, eos_token_id=1)
    DeepseekV4ForCausalLM(config).to(torch.bfloat16).save_pretrained(out)
    saved = load_file(os.path.join(out, "model.safetensors"))
    tensors = {}
    for name, t in saved.items():
        name = published_name(name)
        if re.search(r"\.ffn\.experts\.\d+\.w[123]\.weight$", name):
            tensors[name], tensors[name[:-len("weight")] + "scale"] = fp4(t)
        else:
            tensors[name] = t.contiguous()
    save_file(dict(sorted(tensors.items())), os.path.join(out, "model.safetensors"), metadata={"format": "pt"})
    # the published config's keys that transformers folds away on load (its __post_init__ reads
    # them as legacy kwargs) and llama.cpp's converter requires; the expert dtype the published
    # config states for its FP4 experts
    with open(os.path.join(out, "config.json")) as f:
        cfg = json.load(f)
    cfg["compress_ratios"] = [LAYER_TYPE_RATIO[t] for t in LAYER_TYPES]
    cfg["num_hash_layers"] = NUM_HASH_LAYERS
    cfg["expert_dtype"] = "fp4"
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2, sort_keys=True)
        f.write("\n")


def convert(src, llama, dst):
    convert_bf16(src, llama, dst, "deepseek", "DeepseekV4Model")


if __name__ == "__main__":
    make(sys.argv[1])
    if len(sys.argv) == 5 and sys.argv[2] == "--convert":
        convert(sys.argv[1], sys.argv[3], sys.argv[4])
