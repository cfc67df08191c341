#!/usr/bin/env python3
"""Makes tests/data/llama_cpp/iquants/: a small MoE model quantized by llama.cpp's own
`llama-quantize` to each I-quant type, with an importance matrix made by llama.cpp's own
`llama-imatrix`, and what ggml's own `to_float` makes of every quantized tensor.

Not run by the suite (it builds llama.cpp, minutes on two cores); run by hand when the corpus
changes, with the test venv's python (numpy, gguf) and llama.cpp's sources:

  pip download --no-deps --no-binary :all: llama-cpp-python==0.3.36      # the sources
  .venv/bin/python tests/scripts/make_iquant_reference.py llama_cpp_python-0.3.36.tar.gz \\
      /tmp/llama-build tests/data/llama_cpp/iquants

The source model is written here with gguf-py: llama.cpp's Mixtral layout (architecture `llama`
with 4 experts, 2 used), the tokenizer of tests/data/llama_cpp/mixtral-bf16.gguf (a real
conversion), and random F32 weights 256 wide, so that every weight row holds whole 256-value
I-quant super-blocks (llama-quantize falls back to another type for narrower rows). llama-imatrix
runs that model over this repository's docs (lower-cased, letters and plain punctuation); llama-quantize --pure --imatrix then writes one file
per type (token_embd and output, which have no importance data, as Q2_K). expected.json holds, per file and tensor, the type llama-quantize chose and the SHA-256
of the float32 values ggml's `ggml_get_type_traits(type)->to_float` decodes from the stored bytes
(libggml-base of the same build, called through ctypes), and its first values for a readable diff.
tests/scripts/reference_dequant.py (part G) checks `weightscope dequant` against them bit for bit.
"""
import glob
import hashlib
import json
import os
import re
import subprocess
import sys

import gguf
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from llama_cpp_build import build, ggml_to_float  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(HERE))
TOKENIZER_FROM = os.path.join(ROOT, "tests", "data", "llama_cpp", "mixtral-bf16.gguf")
TYPES = ["IQ1_S", "IQ1_M", "IQ2_XXS", "IQ2_XS", "IQ2_S", "IQ3_XXS", "IQ3_S"]
# The llama-quantize file type whose default tensor type each is: the same name, except that file
# type IQ2_S stores IQ2_XS and IQ2_M stores IQ2_S (src/llama-quant.cpp:912-913 in 0.3.36's llama.cpp).
FTYPE = {"IQ2_S": "IQ2_M"}
HIDDEN, FFN, EXPERTS, USED, HEADS, KV_HEADS, LAYERS = 256, 256, 4, 2, 4, 2, 1
HEAD_DIM = HIDDEN // HEADS


def source_model(path):
    """A Mixtral-layout GGUF (F32 weights, normal(0, 0.02), fixed seed) with a real tokenizer."""
    tok = gguf.GGUFReader(TOKENIZER_FROM)
    w = gguf.GGUFWriter(path, "llama")
    w.add_name("iquant reference")
    w.add_block_count(LAYERS)
    w.add_context_length(2048)
    w.add_embedding_length(HIDDEN)
    w.add_feed_forward_length(FFN)
    w.add_head_count(HEADS)
    w.add_head_count_kv(KV_HEADS)
    w.add_rope_dimension_count(HEAD_DIM)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_expert_count(EXPERTS)
    w.add_expert_used_count(USED)
    w.add_file_type(gguf.LlamaFileType.ALL_F32)
    w.add_tokenizer_model("llama")
    w.add_tokenizer_pre("default")
    w.add_token_list(tok.fields["tokenizer.ggml.tokens"].contents())
    w.add_token_scores(tok.fields["tokenizer.ggml.scores"].contents())
    w.add_token_types(tok.fields["tokenizer.ggml.token_type"].contents())
    vocab = len(tok.fields["tokenizer.ggml.tokens"].data)
    rng = np.random.default_rng(46)

    def weight(name, *shape):  # numpy order: rows last-dim first, as gguf-py stores them
        w.add_tensor(name, rng.normal(0, 0.02, shape).astype(np.float32))

    weight("token_embd.weight", vocab, HIDDEN)
    for i in range(LAYERS):
        p = f"blk.{i}."
        w.add_tensor(p + "attn_norm.weight", np.ones(HIDDEN, np.float32))
        w.add_tensor(p + "ffn_norm.weight", np.ones(HIDDEN, np.float32))
        weight(p + "attn_q.weight", HEADS * HEAD_DIM, HIDDEN)
        weight(p + "attn_k.weight", KV_HEADS * HEAD_DIM, HIDDEN)
        weight(p + "attn_v.weight", KV_HEADS * HEAD_DIM, HIDDEN)
        weight(p + "attn_output.weight", HIDDEN, HEADS * HEAD_DIM)
        weight(p + "ffn_gate_inp.weight", EXPERTS, HIDDEN)
        weight(p + "ffn_gate_exps.weight", EXPERTS, FFN, HIDDEN)
        weight(p + "ffn_up_exps.weight", EXPERTS, FFN, HIDDEN)
        weight(p + "ffn_down_exps.weight", EXPERTS, HIDDEN, FFN)
    w.add_tensor("output_norm.weight", np.ones(HIDDEN, np.float32))
    weight("output.weight", vocab, HIDDEN)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def main():
    sdist, work, out = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    os.makedirs(out, exist_ok=True)
    build_dir = build(os.path.abspath(sdist), os.path.abspath(work))
    bin_dir = os.path.join(build_dir, "bin")
    decode = ggml_to_float(os.path.join(bin_dir, "libggml-base.so"))
    base = os.path.join(work, "source-f32.gguf")
    source_model(base)
    text = os.path.join(work, "calibration.txt")
    with open(text, "w") as f:  # lower-case letters, full stops and commas: the test tokenizer has no byte fallback
        for doc in sorted(glob.glob(os.path.join(ROOT, "docs", "*.md"))):
            f.write(re.sub(r"[^a-z., ]+", " ", open(doc).read().lower()))
    imatrix = os.path.join(work, "imatrix.gguf")
    subprocess.run([os.path.join(bin_dir, "llama-imatrix"), "-m", base, "-f", text, "-o", imatrix, "-c", "128", "--chunks", "16",
                    "-t", "2"], check=True, capture_output=True)
    expected = {}
    for t in TYPES:
        name = f"mixtral-{t.lower()}.gguf"
        dst = os.path.join(out, name)
        # token_embd is a lookup and output is not seen by llama-imatrix, so neither has importance
        # data, which ggml's IQ1/IQ2 quantizers require (ggml.c asserts it): both go to Q2_K.
        r = subprocess.run([os.path.join(bin_dir, "llama-quantize"), "--pure", "--imatrix", imatrix, "--token-embedding-type", "q2_k",
                            "--output-tensor-type", "q2_k", base, dst, FTYPE.get(t, t), "2"],
                           capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"{t}: {r.stdout[-2000:]}{r.stderr[-2000:]}")
        tensors = {}
        for ti in gguf.GGUFReader(dst).tensors:
            if ti.tensor_type in (gguf.GGMLQuantizationType.F32, gguf.GGMLQuantizationType.F16):
                continue
            values = decode(int(ti.tensor_type), bytes(ti.data.tobytes()), int(ti.n_elements))
            tensors[ti.name] = {"type": ti.tensor_type.name, "sha256": hashlib.sha256(values.tobytes()).hexdigest(),
                                "first": [float(v) for v in values[:4]]}
        expected[name] = tensors
        print(f"{dst}: {os.path.getsize(dst)} bytes, {len(tensors)} quantized tensors")
    with open(os.path.join(out, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1, sort_keys=True)
        f.write("\n")
    with open(os.path.join(out, "README.md"), "w") as f:
        f.write("# I-quants written by llama.cpp\n\nMade by `tests/scripts/make_iquant_reference.py` with llama-cpp-python 0.3.36's vendored\n"
                "llama.cpp: `llama-imatrix` over this repository's docs, then `llama-quantize --pure --imatrix` to\n"
                f"{', '.join(TYPES)} (token_embd and output to Q2_K: they have no importance data). `expected.json`: per tensor the type and the SHA-256 of the float32 values\n"
                "that ggml's own `to_float` (libggml-base of the same build) decodes.\n")


if __name__ == "__main__":
    main()
