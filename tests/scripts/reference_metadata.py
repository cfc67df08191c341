#!/usr/bin/env python3
"""Metadata against llama.cpp's own GGUF library (gguf-py): the GGUFs llama.cpp's own converter
wrote (tests/data/llama_cpp: BF16, F16, Q8_0), and files written the way its converters write
them - a vocab-only file of 256,000 tokens with 253,333 merges, token types, scores, special
token ids and three chat templates (llama.cpp's `convert_hf_to_gguf.py --vocab-only` path), and every
scalar and array type GGUF has - plus the k-quant fixture. `inspect --json`'s "metadata" must equal
gguf-py's GGUFReader key for key: type, scalar value, array element type, length and first
elements; `meta KEY --json` must give whole arrays equal to the reader's, and `meta KEY` (text)
a chat template byte for byte; the tokenizer summary must name the special tokens' texts.
Usage: reference_metadata.py PATH/TO/weightscope FIXTURES"""
import json
import math
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
from gguf import GGUFReader, GGUFValueType, GGUFWriter

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, fail, finish  # noqa: E402

WS, FX = sys.argv[1], sys.argv[2]
V = GGUFValueType
TEMPLATE = ("{%- for message in messages %}\n{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}"
            "{%- endfor %}\n{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}\n")


def write_vocab(path):
    w = GGUFWriter(path, "llama")
    w.add_name("vocab-only, written as llama.cpp's converter writes it")
    w.add_context_length(131072)
    w.add_block_count(32)
    rng = np.random.default_rng(7)
    tokens = [f"tok{i}" for i in range(256000)]
    tokens[:6] = ["<unk>", "<s>", "</s>", "<pad>", "\u0120the", "\u00e9t\u00e9 \U0001F600"]
    tokens[300] = "line\nbreak\ttab"
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("qwen2")
    w.add_token_list(tokens)
    w.add_token_types([int(x) for x in rng.integers(1, 6, size=len(tokens))])
    w.add_token_scores([float(x) for x in rng.standard_normal(len(tokens)).astype(np.float32)])
    w.add_token_merges([f"a{i} b{i}" for i in range(253333)])
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_pad_token_id(3)
    w.add_add_bos_token(True)
    w.add_chat_template([{"name": "default", "template": TEMPLATE}, {"name": "tool_use", "template": TEMPLATE + "{# tools #}"},
                         {"name": "rag", "template": TEMPLATE + "{# documents #}"}])
    # Every scalar type, and arrays of every numeric type, short and past the parser's kept 4,096.
    for name, vtype, value in [("u8", V.UINT8, 255), ("i8", V.INT8, -128), ("u16", V.UINT16, 65535), ("i16", V.INT16, -32768),
                               ("u32", V.UINT32, 4294967295), ("i32", V.INT32, -2147483648), ("f32", V.FLOAT32, 0.1),
                               ("b", V.BOOL, False), ("u64", V.UINT64, 18446744073709551615), ("i64", V.INT64, -9223372036854775808),
                               ("f64", V.FLOAT64, math.pi), ("s", V.STRING, "plain ascii")]:
        w.add_key_value(f"test.scalar.{name}", value, vtype)
    for name, vtype, gen in [("u8", V.UINT8, lambda n: [i % 256 for i in range(n)]), ("i16", V.INT16, lambda n: [-(i % 30000) for i in range(n)]),
                             ("u32", V.UINT32, lambda n: [i * 7919 for i in range(n)]), ("f32", V.FLOAT32, lambda n: [i / 3 for i in range(n)]),
                             ("u64", V.UINT64, lambda n: [2**63 + i for i in range(n)]), ("i64", V.INT64, lambda n: [-(2**62) - i for i in range(n)]),
                             ("f64", V.FLOAT64, lambda n: [i * 1e-300 for i in range(n)]), ("b", V.BOOL, lambda n: [i % 3 == 0 for i in range(n)])]:
        for n in (5, 5000):
            w.add_key_value(f"test.array.{name}.{n}", gen(n), V.ARRAY, sub_type=vtype)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def reader_values(field):
    """The reader's values: a scalar, or the whole array as Python values."""
    if field.types[0] == V.ARRAY:
        return field.contents()
    return field.contents()


def same(a, b):
    if isinstance(a, float) or isinstance(b, float):
        return a == b or (isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b))
    return a == b


def compare(path, label):
    t = time.monotonic()
    r = subprocess.run([WS, "inspect", path, "--json"], capture_output=True)
    took = time.monotonic() - t
    if r.returncode != 0:
        fail(f"{label}: inspect exit {r.returncode}: {r.stderr[:300]}")
        return None
    doc = json.loads(r.stdout)
    # A split set's parts each carry their own keys (split.no ...): this file's only.
    ours = {e["key"]: e for e in doc["metadata"] if e.get("file", path) == path}
    reader = GGUFReader(path)
    fields = {k: f for k, f in reader.fields.items() if not k.startswith("GGUF.")}
    check(list(ours) == list(fields), f"{label}: keys differ: {set(ours) ^ set(fields)}")
    for key, f in fields.items():
        e = ours.get(key)
        if e is None:
            continue
        check(e["type"] == f.types[0].name, f"{label} {key}: type {e['type']} != {f.types[0].name}")
        if f.types[0] == V.ARRAY:
            values = reader_values(f)
            check(e["element_type"] == f.types[1].name and e["length"] == len(values), f"{label} {key}: {e['element_type']} x {e['length']}")
            first = values[:len(e["value"])]
            check(len(e["value"]) == min(16, len(values)) and all(same(x, y) for x, y in zip(e["value"], first)), f"{label} {key}: first elements")
        else:
            v = reader_values(f)
            check(same(e["value"], v), f"{label} {key}: {e['value']!r} != {v!r}")
    return doc, took


with tempfile.TemporaryDirectory() as tmp:
    vocab = os.path.join(tmp, "vocab.gguf")
    write_vocab(vocab)
    got = compare(vocab, "vocab")
    if got:
        doc, took = got
        print(f"inspect --json of a 256,000-token vocab GGUF ({os.path.getsize(vocab):,} bytes): {took:.3f} s as a process")
        tok = doc["tokenizer"]
        check(tok and tok["model"] == "gpt2" and tok["vocab_size"] == 256000 and tok["merges"] == 253333, f"tokenizer summary {tok}")
        special = {s["role"]: (s["id"], s["text"]) for s in tok["special"]}
        check(special == {"bos": (1, "<s>"), "eos": (2, "</s>"), "pad": (3, "<pad>")}, f"special tokens {special}")
        check(tok["chat_templates"] == ["default", "tool_use", "rag"], f"chat templates {tok['chat_templates']}")
    reader = GGUFReader(vocab)
    # Whole arrays through `meta --json`: every token (unicode, newlines), every merge, the long numeric arrays.
    for key in ("tokenizer.ggml.tokens", "tokenizer.ggml.merges", "tokenizer.ggml.scores", "test.array.u64.5000", "test.array.f64.5000", "test.array.b.5000"):
        r = subprocess.run([WS, "meta", vocab, key, "--json"], capture_output=True)
        entries = json.loads(r.stdout) if r.returncode == 0 else []
        want = reader.fields[key].contents()
        check(len(entries) == 1 and len(entries[0]["value"]) == len(want) and all(same(x, y) for x, y in zip(entries[0]["value"], want)),
              f"meta {key} --json: not the reader's {len(want)} elements")
    r = subprocess.run([WS, "meta", vocab, "tokenizer.chat_template"], capture_output=True)
    check(r.returncode == 0 and r.stdout.decode() == TEMPLATE + "\n", "meta tokenizer.chat_template: the template byte for byte")
    compare(os.path.join(FX, "gguf/tiny-qwen3moe-kquants.gguf"), "k-quant fixture")
    for part in ("00001", "00002"):
        compare(os.path.join(FX, f"gguf/tiny-qwen3moe-kquants-{part}-of-00002.gguf"), f"split part {part}")
    # GGUFs llama.cpp's own converter wrote (tests/data/llama_cpp: BF16, F16 and Q8_0, with
    # SentencePiece vocabularies, token scores and types; Gemma 4's BPE vocabulary with merges and
    # its per-layer head_count_kv array; DeepSeek-V3.2's indexer keys; DeepSeek-V4's compress_ratios
    # array and MXFP4 experts; GLM-5.2's indexer types)
    real = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "llama_cpp")
    made = sorted(f for f in os.listdir(real) if f.endswith(".gguf"))
    check(len(made) == 16, f"{len(made)} llama.cpp conversions")
    for f in made:
        compare(os.path.join(real, f), f"llama.cpp conversion {f}")
finish()
