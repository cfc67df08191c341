#!/usr/bin/env python3
"""Writes the LoRA adapter corpus in tests/data/adapters with the libraries users train them with,
on the transformers-written fixture hf/qwen3_moe as the base model. Run by hand (the libraries
are large and not needed at test time); the files and their provenance.json are committed.

  peft: PEFT's get_peft_model + save_pretrained (adapter_model.safetensors, adapter_config.json):
        r 4, lora_alpha 8, attention and the dense MLP's projections, o_proj at rank 8 through
        rank_pattern; init_lora_weights=False so lora_B is not all zero.
  mlx:  mlx-lm's own calls, as `mlx_lm.lora` makes them: linear_to_lora_layers on the model
        mlx_lm.utils.load_model builds from the fixture, save_config for adapter_config.json, and
        mx.save_safetensors of the trainable parameters for adapters.safetensors: rank 4, scale
        2.0, attention, the router and the experts' SwitchLinear gate projections of the last two
        layers; lora_b made nonzero as training would (mlx-lm initialises it to zero). mlx_lm's
        Qwen3-MoE arguments predate transformers 5's names, so its copy of the config also says
        num_experts and rope_theta.

usage: make_adapters.py peft|mlx FIXTURES OUT_DIR   (peft in a venv with torch, transformers and
       peft; mlx in one with mlx[cpu] and mlx-lm)"""
import json
import os
import shutil
import sys
import tempfile

which, fixtures, out = sys.argv[1], sys.argv[2], os.path.abspath(sys.argv[3])
base_src = os.path.join(fixtures, "hf", "qwen3_moe")
work = tempfile.mkdtemp(prefix="ws-adapters-")
base = os.path.join(work, "qwen3_moe")  # the name adapter_config.json records as the base
shutil.copytree(base_src, base)
os.makedirs(out, exist_ok=True)

if which == "peft":
    import peft
    import torch
    import transformers
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    torch.manual_seed(0)
    os.chdir(work)
    model = AutoModelForCausalLM.from_pretrained("qwen3_moe", dtype=torch.bfloat16)
    config = LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"],
                        rank_pattern={"o_proj": 8}, init_lora_weights=False)
    get_peft_model(model, config).save_pretrained(out)
    versions = {"peft": peft.__version__, "transformers": transformers.__version__, "torch": torch.__version__}
elif which == "mlx":
    from pathlib import Path

    import mlx.core as mx
    import mlx_lm
    from mlx.utils import tree_flatten, tree_map
    from mlx_lm.lora import CONFIG_DEFAULTS
    from mlx_lm.tuner.utils import linear_to_lora_layers
    from mlx_lm.utils import load_model, save_config

    cfg = json.load(open(os.path.join(base, "config.json")))
    cfg.setdefault("num_experts", cfg["num_local_experts"])
    cfg.setdefault("rope_theta", cfg["rope_parameters"]["rope_theta"])
    json.dump(cfg, open(os.path.join(base, "config.json"), "w"), indent=2)
    mx.random.seed(0)
    model, _ = load_model(Path(base))
    model.freeze()
    args = dict(CONFIG_DEFAULTS, model="qwen3_moe", train=True, num_layers=2, adapter_path=os.path.relpath(out),
                lora_parameters={"rank": 4, "dropout": 0.0, "scale": 2.0,
                                 "keys": ["self_attn.q_proj", "self_attn.v_proj", "mlp.gate", "mlp.switch_mlp.gate_proj"]})
    linear_to_lora_layers(model, args["num_layers"], args["lora_parameters"])
    trained = tree_map(lambda p: p + 0.01 * mx.random.normal(p.shape), model.trainable_parameters())
    model.update(trained)
    save_config(args, Path(out) / "adapter_config.json")
    mx.save_safetensors(str(Path(out) / "adapters.safetensors"), dict(tree_flatten(model.trainable_parameters())))
    versions = {"mlx": mx.__version__, "mlx-lm": mlx_lm.__version__}
else:
    raise SystemExit(__doc__)

json.dump({"written_by": "tests/scripts/make_adapters.py " + which, "libraries": versions, "base": "shared/fixtures/hf/qwen3_moe (as 'qwen3_moe')"},
          open(os.path.join(out, "provenance.json"), "w"), indent=1)
shutil.rmtree(work)
print("wrote", out, versions)
