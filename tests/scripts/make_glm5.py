#!/usr/bin/env python3
"""Makes tests/data/llama_cpp/glm-5.2-bf16.gguf: a tiny GLM-5-class checkpoint (GlmMoeDsaForCausalLM:
MLA with the DSA lightning indexer) as transformers itself writes one, converted by llama.cpp's
converter. Its indexer_types (full, shared, shared, full, shared) become the GGUF's
glm-dsa.attention.indexer.types, and llama.cpp keeps indexer keys only on the "full" layers
(src/models/glm-dsa.cpp; llama-model.cpp create_memory's filter_lid).

A config without indexer_types (GLM-5 and 5.1 as shipped) reaches the converter with transformers'
default filled in (GlmMoeDsaConfig.__post_init__: every layer full, index_topk_freq 1), so the
converter always writes the array; llama.cpp's own fallback for a GGUF without it is tested on a
copy of this file with the key renamed (tst_kv_cache).

Not run by the suite; run by hand (transformers 5.25.0, tokenizers 0.23.3, torch 2.15.0; the converter
of llama-cpp-python 0.3.36, ggml-org/llama.cpp 0c1e57098, its vocabulary step through gguf-py's
LlamaHfVocab as for make_deepseek_v32.py):

  python3 tests/scripts/make_glm5.py LLAMA_DIR tests/data/llama_cpp/glm-5.2-bf16.gguf tests/data/glm5

The third argument keeps the transformers-written folder the GGUF was converted from (the engine
weight-name rules read it: SGLang's GlmMoeDsaForCausalLM builds indexers only on the "full" layers).
"""
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from llama_convert import convert_bf16  # noqa: E402
from tiny_tokenizer import save_tokenizer  # noqa: E402

def make(out):
    import torch
    from transformers import GlmMoeDsaConfig, GlmMoeDsaForCausalLM
    os.makedirs(out, exist_ok=True)
    vocab = save_tokenizer(out)
    torch.manual_seed(0)
    # n_group 2 of 4 experts as for V3.2 (llama.cpp asserts n_expert_groups < n_expert); indexer
    # keys of 64, the smallest Hadamard rotation llama.cpp applies to them.
    config = GlmMoeDsaConfig(vocab_size=vocab, hidden_size=64, intermediate_size=96, moe_intermediate_size=32, num_hidden_layers=5,
                             num_attention_heads=4, num_key_value_heads=4, n_shared_experts=1, n_routed_experts=4, num_experts_per_tok=2,
                             n_group=2, topk_group=1, kv_lora_rank=32, q_lora_rank=48, qk_rope_head_dim=16, qk_nope_head_dim=32,
                             v_head_dim=32, first_k_dense_replace=1, index_topk=8, index_head_dim=64, index_n_heads=4,
                             indexer_types=["full", "shared", "shared", "full", "shared"], max_position_embeddings=4096,
                             pad_token_id=0, bos_token_id=2, eos_token_id=1)
    GlmMoeDsaForCausalLM(config).to(torch.bfloat16).save_pretrained(out)


def convert(src, llama, dst):
    convert_bf16(src, llama, dst, "glm", "GlmMoeDsaModel")


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "glm-5.2-tiny")  # the converter names the model after its folder
        make(src)
        convert(src, sys.argv[1], sys.argv[2])
        if len(sys.argv) > 3:
            shutil.rmtree(sys.argv[3], ignore_errors=True)
            shutil.copytree(src, sys.argv[3])
