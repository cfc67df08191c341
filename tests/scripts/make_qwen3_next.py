#!/usr/bin/env python3
"""Makes tests/data/qwen3_next/: a Qwen3-Next checkpoint as transformers itself writes one
(Qwen3NextForCausalLM.save_pretrained), at a few hundred KiB - the names and config.json the
engines' Qwen3-Next loaders read (tst_engine_rules, WS-E009).

Four layers: layer_types alternate linear (GatedDeltaNet: linear_attn.in_proj_qkvz, in_proj_ba,
conv1d, A_log, dt_bias, norm, out_proj) and full attention (self_attn.q/k/v/o_proj, q_norm,
k_norm); every layer sparse (no mlp_only_layers: Qwen3-Next-80B-A3B's model card has every layer MoE),
8 experts, a shared expert and its gate. transformers 5.x writes layer_types and no
full_attention_interval.

Not run by the suite; run by hand (transformers 5.25.0 and torch 2.15.0 were used):

  python3 tests/scripts/make_qwen3_next.py tests/data/qwen3_next
"""
import sys

import torch
from transformers import Qwen3NextConfig, Qwen3NextForCausalLM

torch.manual_seed(0)
cfg = Qwen3NextConfig(vocab_size=256, hidden_size=64, intermediate_size=128, num_hidden_layers=4, num_attention_heads=4,
                      num_key_value_heads=2, head_dim=16, linear_num_key_heads=2, linear_num_value_heads=4, linear_key_head_dim=16,
                      linear_value_head_dim=16, linear_conv_kernel_dim=4, num_experts=8, num_experts_per_tok=2, moe_intermediate_size=32,
                      shared_expert_intermediate_size=32, decoder_sparse_step=1, full_attention_interval=2,
                      max_position_embeddings=4096, tie_word_embeddings=False)
Qwen3NextForCausalLM(cfg).to(torch.bfloat16).save_pretrained(sys.argv[1])
