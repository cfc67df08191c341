#!/usr/bin/env python3
"""Makes tests/data/deepseek_v32/: a tiny DeepSeek-V3.2 checkpoint as transformers itself writes one
(DeepseekV32ForCausalLM.save_pretrained) - MLA, a sparse-attention indexer in every layer (wq_b, wk,
k_norm's weight and bias, weights_proj), MoE layers after a dense one - with the tiny byte-fallback
BPE tokenizer (tiny_tokenizer.py). llama.cpp's converter turns it into
tests/data/llama_cpp/deepseek-v32-bf16.gguf, whose cache llama.cpp keeps as the MLA latent plus an
indexer-key cache (src/llama-kv-cache-dsa.cpp).

Not run by the suite; run by hand (transformers 5.25.0, tokenizers 0.23.3 and torch 2.15.0 were used),
then convert with the converter of llama-cpp-python 0.3.36 (ggml-org/llama.cpp 0c1e57098). Its BPE
vocabulary step wants a known pre-tokenizer, which a made-up tokenizer cannot be, so the driver takes
the byte-fallback BPE through gguf-py's LlamaHfVocab step instead (as Gemma 4's converter does); the
vocabulary is not what the file tests:

  python3 tests/scripts/make_deepseek_v32.py tests/data/deepseek_v32
  python3 tests/scripts/make_deepseek_v32.py tests/data/deepseek_v32 --convert LLAMA_DIR tests/data/llama_cpp/deepseek-v32-bf16.gguf
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from llama_convert import convert_bf16  # noqa: E402
from tiny_tokenizer import save_tokenizer  # noqa: E402


def make(out):
    import torch
    from transformers import DeepseekV32Config, DeepseekV32ForCausalLM
    os.makedirs(out, exist_ok=True)
    vocab = save_tokenizer(out)
    torch.manual_seed(0)
    # n_group 2 of 4 experts: llama.cpp asserts n_expert_groups < n_expert (llama-model.cpp); an
    # indexer head of 64, the smallest Hadamard rotation llama.cpp applies to indexer keys
    # (llama-kv-cache.cpp build_input_k_rot).
    config = DeepseekV32Config(vocab_size=vocab, hidden_size=64, intermediate_size=96, moe_intermediate_size=32, num_hidden_layers=3,
                               num_attention_heads=4, num_key_value_heads=4, n_shared_experts=1, n_routed_experts=4, num_experts_per_tok=2,
                               n_group=2, topk_group=1, kv_lora_rank=32, q_lora_rank=48, qk_rope_head_dim=16, qk_nope_head_dim=32, v_head_dim=32,
                               head_dim=16, first_k_dense_replace=1, index_topk=8, index_head_dim=64, index_n_heads=4,
                               max_position_embeddings=4096, pad_token_id=0, bos_token_id=2, eos_token_id=1,
                               # keys the published V3.2 config.json states and transformers' class does not
                               # know: llama.cpp needs scoring_func (its expert_gating_func), SGLang reads
                               # topk_method and moe_layer_freq
                               scoring_func="sigmoid", topk_method="noaux_tc", moe_layer_freq=1)
    DeepseekV32ForCausalLM(config).to(torch.bfloat16).save_pretrained(out)


def convert(src, llama, dst):
    convert_bf16(src, llama, dst, "deepseek", "DeepseekV32Model")


if __name__ == "__main__":
    make(sys.argv[1])
    if len(sys.argv) == 5 and sys.argv[2] == "--convert":
        convert(sys.argv[1], sys.argv[3], sys.argv[4])
