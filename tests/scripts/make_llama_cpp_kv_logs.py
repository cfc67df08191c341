#!/usr/bin/env python3
"""Writes tests/data/llama_cpp/kv_logs.json: the KV-cache lines llama.cpp itself logs when it creates
a context for each real conversion in tests/data/llama_cpp, at several -c / -np / --kv-unified /
--swa-full / -ctk settings. tst_kv_cache holds core/plan/llama_cpp_cache's predicted lines to them.
For the conversions in FULL_LOGS it also writes llama.cpp's whole log of each setting to
tests/data/llama_cpp/logs/ (plan --engine-log reads them: tests/scripts/cli_engine_log.py).

Run by hand (the suite never builds llama.cpp): LLAMA_DIR is the llama.cpp tree that llama-cpp-python
0.3.36's sdist vendors (ggml-org/llama.cpp 0c1e57098, the converter that wrote the GGUFs), built with
  cmake -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=ON -DLLAMA_CURL=OFF \\
        -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF \\
        -DLLAMA_BUILD_COMMON=OFF -DGGML_OPENMP=OFF && cmake --build build --target llama

usage: make_llama_cpp_kv_logs.py LLAMA_DIR
"""
import glob
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "data", "llama_cpp")
CASES = [  # n_ctx, n_seq, unified, swa_full, cache type
    (4096, 1, 0, 0, "f16"),
    (1000, 1, 0, 0, "f16"),
    (4096, 4, 1, 0, "f16"),
    (4096, 4, 0, 0, "f16"),
    (4096, 4, 1, 1, "f16"),
    (4096, 1, 0, 0, "q8_0"),
]
FULL_LOGS = ("gpt-oss-bf16.gguf", "glm-4.5-bf16.gguf", "deepseek-v4-bf16.gguf")


def full_log_name(gguf, n_ctx, n_seq, unified, swa_full, typ):
    return (f"{gguf[:-len('.gguf')]}-c{n_ctx}-np{n_seq}{'-kvu' if unified else ''}{'-swafull' if swa_full else ''}-{typ}.log")


def main():
    llama = os.path.abspath(sys.argv[1])
    libs = sorted({os.path.dirname(p) for p in glob.glob(os.path.join(llama, "build", "**", "libllama.so"), recursive=True)
                   + glob.glob(os.path.join(llama, "build", "**", "libggml*.so"), recursive=True)})
    with tempfile.TemporaryDirectory() as tmp:
        probe = os.path.join(tmp, "probe")
        subprocess.run(["g++", "-std=c++17", "-O1", os.path.join(HERE, "llama_cpp_kv_probe.cpp"), "-I", os.path.join(llama, "include"),
                        "-I", os.path.join(llama, "ggml", "include"), *[f"-L{d}" for d in libs], *[f"-Wl,-rpath,{d}" for d in libs],
                        "-lllama", "-lggml", "-lggml-base", "-o", probe], check=True)
        out, refused = [], {}
        for gguf in sorted(glob.glob(os.path.join(DATA, "*-bf16.gguf"))):
            for n_ctx, n_seq, unified, swa_full, typ in CASES:
                full = []
                if os.path.basename(gguf) in FULL_LOGS:
                    os.makedirs(os.path.join(DATA, "logs"), exist_ok=True)
                    full = [os.path.join(DATA, "logs", full_log_name(os.path.basename(gguf), n_ctx, n_seq, unified, swa_full, typ))]
                r = subprocess.run([probe, gguf, str(n_ctx), str(n_seq), str(unified), str(swa_full), typ, *full], capture_output=True, text=True)
                case = {"file": os.path.basename(gguf), "n_ctx": n_ctx, "n_seq": n_seq, "unified": bool(unified), "swa_full": bool(swa_full), "type": typ}
                if r.returncode != 0:
                    why = next((l for l in r.stderr.splitlines() if "GGML_ASSERT" in l or "error" in l), r.stderr.strip()[-300:]).strip()
                    if not out or out[-1]["file"] != case["file"]:  # llama.cpp refuses the file (the tiny DeepSeek: its expert groups)
                        refused[case["file"]] = why
                        break
                    out.append({**case, "refused": why})  # refuses this setting alone (a cache type the heads do not fit)
                    continue
                out.append({**case, "lines": [l.rstrip("\n") for l in r.stdout.splitlines() if l.strip()]})
    doc = {"made_by": "tests/scripts/make_llama_cpp_kv_logs.py with llama.cpp 0c1e57098 (llama-cpp-python 0.3.36's vendored tree)",
           "refused": refused, "cases": out}
    with open(os.path.join(DATA, "kv_logs.json"), "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
