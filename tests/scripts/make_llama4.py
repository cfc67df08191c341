#!/usr/bin/env python3
"""Makes tests/data/llama4/: a Llama 4 checkpoint as transformers itself writes one
(Llama4ForConditionalGeneration.save_pretrained), at a few hundred KiB - the fused expert layout
the engines' Llama 4 loaders take (tst_engine_rules, WS-E010).

Four text layers, every second one MoE (interleave_moe_layer_step 2) with 4 experts stored fused,
feed_forward.experts.gate_up_proj [E, H, 2I] and down_proj [E, I, H] (transformers has no
conversion rule for llama4: its module's own layout); hidden 64 and expert intermediate 48, so no
axis is ambiguous; a small vision tower and projector.

Not run by the suite; run by hand (transformers 5.25.0 and torch 2.15.0 were used):

  python3 tests/scripts/make_llama4.py tests/data/llama4
"""
import sys

import torch
from transformers import Llama4Config, Llama4ForConditionalGeneration, Llama4TextConfig, Llama4VisionConfig

torch.manual_seed(0)
text = Llama4TextConfig(vocab_size=128, hidden_size=64, intermediate_size=48, intermediate_size_mlp=96, num_hidden_layers=4,
                        num_attention_heads=4, num_key_value_heads=2, head_dim=16, num_local_experts=4, num_experts_per_tok=1,
                        interleave_moe_layer_step=2, max_position_embeddings=256, attention_chunk_size=32, tie_word_embeddings=False,
                        pad_token_id=0, bos_token_id=1, eos_token_id=2)
vision = Llama4VisionConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=128, image_size=56, patch_size=14,
                            vision_output_dim=64, projector_input_dim=64, projector_output_dim=64, pixel_shuffle_ratio=0.5)
config = Llama4Config(text_config=text, vision_config=vision, image_token_index=100, boi_token_index=101, eoi_token_index=102)
Llama4ForConditionalGeneration(config).to(torch.bfloat16).save_pretrained(sys.argv[1])
