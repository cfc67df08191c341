#!/usr/bin/env python3
"""Makes tests/data/gemma4/: a tiny Gemma 4 MoE checkpoint as transformers itself writes one
(Gemma4ForCausalLM.save_pretrained), with its own byte-fallback BPE tokenizer, which llama.cpp's
converter turns into tests/data/llama_cpp/gemma4-bf16.gguf: the KV-cache layout no other file in the
corpus has.

  - eight layers, three sliding then one full, twice (layer_types);
  - the sliding layers' keys 2 heads of 16, the full layers' 1 head of 32 (num_global_key_value_heads,
    global_head_dim): llama.cpp reads per-layer head_count_kv arrays and key_length_swa;
  - the last four layers reuse earlier layers' keys and values (num_kv_shared_layers 4): llama.cpp
    gives them no cache of their own (n_layer_kv_from_start). Its reuse map takes the last full
    layer before them and the sliding one before that (llama-model.cpp: n_layer_kv_from_start - 1
    or - 2), as the published Gemma 4 configs have them;
  - a MoE block (4 experts, top 2) beside each dense MLP, as in gemma-4-26B-A4B.

Not run by the suite; run by hand (transformers 5.25.0, tokenizers 0.23.3 and torch 2.15.0 were used),
then convert with the converter of llama-cpp-python 0.3.36 (ggml-org/llama.cpp 0c1e57098):

  python3 tests/scripts/make_gemma4.py tests/data/gemma4
  PYTHONPATH=LLAMA_DIR/gguf-py python3 LLAMA_DIR/convert_hf_to_gguf.py tests/data/gemma4 --outtype bf16 \
      --outfile tests/data/llama_cpp/gemma4-bf16.gguf
"""
import json
import os
import sys

import torch
from transformers import Gemma4ForCausalLM, Gemma4TextConfig

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tiny_tokenizer import save_tokenizer  # noqa: E402


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    vocab = save_tokenizer(out)  # a byte-fallback BPE: what gguf-py's LlamaHfVocab (Gemma 4's vocabulary step) accepts
    torch.manual_seed(0)
    config = Gemma4TextConfig(vocab_size=vocab, vocab_size_per_layer_input=vocab, hidden_size=64, intermediate_size=64, num_hidden_layers=8,
                              num_attention_heads=4, num_key_value_heads=2, head_dim=16, global_head_dim=32, num_global_key_value_heads=1,
                              attention_k_eq_v=True, layer_types=["sliding_attention"] * 3 + ["full_attention"] + ["sliding_attention"] * 3 + ["full_attention"],
                              sliding_window=64, num_kv_shared_layers=4, hidden_size_per_layer_input=0, enable_moe_block=True, num_experts=4,
                              top_k_experts=2, moe_intermediate_size=32, max_position_embeddings=4096, pad_token_id=0, eos_token_id=1,
                              bos_token_id=2)
    Gemma4ForCausalLM(config).to(torch.bfloat16).save_pretrained(out)
    with open(os.path.join(out, "config.json")) as f:
        print(json.dumps({k: v for k, v in json.load(f).items() if "head" in k or "layer" in k}, indent=None))


if __name__ == "__main__":
    main()
