#!/usr/bin/env python3
"""Makes tests/data/llama_cpp/: tiny MoE checkpoints converted to GGUF by llama.cpp's own converter.

Not run by the suite (the converter needs torch); run by hand when the corpus changes, in a venv
with torch, numpy, sentencepiece, safetensors and transformers from PyPI:

  python3 -m venv /tmp/convenv && /tmp/convenv/bin/pip install torch numpy sentencepiece safetensors transformers
  pip download --no-deps --no-binary :all: llama-cpp-python==0.3.36 sentencepiece==0.2.3   # the sources
  /tmp/convenv/bin/python tests/scripts/make_llama_cpp_conversions.py build/app/weightscope \\
      llama_cpp_python-0.3.36.tar.gz sentencepiece-0.2.3.tar.gz tests/data/llama_cpp

Each HF source is `weightscope synth` output (deterministic: the suite makes it again with the same
arguments, listed in SOURCES and in the folder's README), plus sentencepiece's own test model
(test/botchan_en_bpe_1000.model from its source distribution) as tokenizer.model. The tensors go
through convert_hf_to_gguf.py unchanged; only the vocabulary step of architectures that want a
known Hugging Face BPE tokenizer (which cannot be had offline) is pointed at the SentencePiece
step instead - the vocabulary is not what these files test.
"""
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile

# name -> weightscope synth arguments; output types the converter writes for each
SOURCES = {
    "mixtral": ["--like", "mixtral", "--layers", "2", "--experts", "4", "--hidden", "64", "--intermediate", "32", "--vocab", "1000"],
    "deepseek-v3": ["--like", "deepseek-v3", "--layers", "2", "--dense-layers", "1", "--experts", "4", "--hidden", "64", "--intermediate", "32",
                    "--dense-intermediate", "64", "--vocab", "1000", "--mtp", "0"],
    "glm-4.5": ["--like", "glm-4.5", "--layers", "2", "--dense-layers", "1", "--experts", "4", "--hidden", "64", "--intermediate", "32",
                "--dense-intermediate", "64", "--vocab", "1000", "--mtp", "0"],
    "gpt-oss": ["--like", "gpt-oss", "--layers", "2", "--experts", "4", "--hidden", "64", "--intermediate", "64", "--vocab", "1000"],
}
OUTTYPES = ["bf16", "f16", "q8_0"]


def main():
    ws, llama_sdist, sp_sdist, out = sys.argv[1:5]
    os.makedirs(out, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        with tarfile.open(llama_sdist) as t:
            t.extractall(tmp, members=[m for m in t.getmembers() if "/vendor/llama.cpp/" in m.name and
                                       ("convert_hf_to_gguf.py" in m.name or "/conversion/" in m.name or "/gguf-py/" in m.name)])
        with tarfile.open(sp_sdist) as t:
            spm = next(m for m in t.getmembers() if m.name.endswith("test/botchan_en_bpe_1000.model"))
            t.extract(spm, tmp)
        llama = next(os.path.join(r, "") for r, d, f in os.walk(tmp) if "convert_hf_to_gguf.py" in f)
        spm_path = os.path.join(tmp, spm.name)
        for name, args in SOURCES.items():
            src = os.path.join(tmp, "src-" + name)
            subprocess.run([ws, "synth", "--scheme", "bf16", "--shards", "1", *args, src], check=True, capture_output=True)
            shutil.copy(spm_path, os.path.join(src, "tokenizer.model"))
            for outtype in OUTTYPES:
                dst = os.path.join(out, f"{name}-{outtype}.gguf")
                driver = (
                    "import sys; sys.argv = ['convert_hf_to_gguf.py'] + sys.argv[1:]; sys.path.insert(0, %r)\n"
                    "import convert_hf_to_gguf as c\n"
                    "from conversion.base import TextModel\n"
                    "find = c.get_model_class\n"
                    "def patched(*a, **k):\n"
                    "    cls = find(*a, **k)\n"
                    "    if cls.__name__ != 'LlamaModel': cls.set_vocab = TextModel._set_vocab_sentencepiece\n"
                    "    return cls\n"
                    "c.get_model_class = patched\n"
                    "c.main()\n") % llama
                r = subprocess.run([sys.executable, "-c", driver, src, "--outfile", dst, "--outtype", outtype], capture_output=True, text=True)
                if r.returncode != 0:
                    sys.exit(f"{name} {outtype}: {r.stderr[-3000:]}")
                print(f"{dst}: {os.path.getsize(dst)} bytes")
    with open(os.path.join(out, "README.md"), "w") as f:
        f.write("# Real llama.cpp conversions\n\nMade by `tests/scripts/make_llama_cpp_conversions.py` (llama-cpp-python 0.3.36's vendored\n"
                "convert_hf_to_gguf.py, sentencepiece 0.2.3's test model as tokenizer.model). The HF sources are\n"
                "`weightscope synth --scheme bf16 --shards 1 ARGS` with these ARGS (the suite makes them again):\n\n")
        for name, args in SOURCES.items():
            f.write(f"- `{name}`: `{' '.join(args)}` -> {', '.join(f'{name}-{t}.gguf' for t in OUTTYPES)}\n")


if __name__ == "__main__":
    main()
