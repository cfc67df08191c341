#!/usr/bin/env python3
"""Writes an engine's architecture registry as a C++ table (core/validate/engines/*_architectures.cpp).

Run by hand against the engine's own source at the release the table names, never at build or test
time (the engines are not dependencies):

  python3 scripts/extract_engine_architectures.py vllm 0.11.0 /path/to/site-packages > core/validate/engines/vllm_architectures.cpp
  python3 scripts/extract_engine_architectures.py sglang VERSION /path/to/unpacked/sglang-wheel > core/validate/engines/sglang_architectures.cpp
  python3 scripts/extract_engine_architectures.py llama.cpp COMMIT /path/to/llama.cpp > core/validate/engines/llama_cpp_models.cpp

vLLM: the keys of the *_MODELS dicts in vllm/model_executor/models/registry.py (what
ModelRegistry.get_supported_archs returns) and _PREVIOUSLY_SUPPORTED_MODELS. SGLang: the class
names every sglang/srt/models/*.py file's EntryClass names (registry.py import_model_classes).
llama.cpp: the GGUF architecture names of src/llama-arch.cpp LLM_ARCH_NAMES, and for each the keys
its model class's load_arch_hparams (src/models/*.cpp, the class llama_model_mapping creates)
requires unconditionally: a get_key / get_key_or_arr / get_arr / get_arr_n statement at the
function's top level without required = false. A call inside an if, a switch or an expression is
conditional and left out; an architecture whose class defines no load_arch_hparams of its own gets
no key list (unknown, not "none").
"""
import ast
import pathlib
import re
import sys


def vllm_tables(root):
    src = root / "vllm/model_executor/models/registry.py"
    tree = ast.parse(src.read_text())
    supported, previous = set(), {}
    for node in tree.body:
        target = node.targets[0] if isinstance(node, ast.Assign) else getattr(node, "target", None)
        if not isinstance(target, ast.Name) or not isinstance(getattr(node, "value", None), ast.Dict):
            continue
        keys = [k.value for k in node.value.keys if isinstance(k, ast.Constant)]
        if target.id == "_PREVIOUSLY_SUPPORTED_MODELS":
            previous = {k.value: v.value for k, v in zip(node.value.keys, node.value.values)}
        elif target.id.endswith("_MODELS"):
            supported.update(keys)
    return sorted(supported), previous, "vllm/model_executor/models/registry.py (the *_MODELS tables)"


def sglang_tables(root):
    supported = set()
    for f in sorted((root / "sglang/srt/models").glob("*.py")):
        tree = ast.parse(f.read_text())
        for node in tree.body:
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "EntryClass" for t in node.targets):
                values = node.value.elts if isinstance(node.value, (ast.List, ast.Tuple)) else [node.value]
                supported.update(v.id for v in values if isinstance(v, ast.Name))
    return sorted(supported), {}, "sglang/srt/models/*.py (each file's EntryClass)"


def llama_cpp_keys(root):
    """{LLM_KV_X: "%s.key"} of LLM_KV_NAMES, {LLM_ARCH_X: "name"} of LLM_ARCH_NAMES."""
    arch_src = (root / "src/llama-arch.cpp").read_text()
    kv = dict(re.findall(r'\{\s*(LLM_KV_\w+)\s*,\s*"([^"]*)"\s*\}', arch_src))
    names_block = arch_src[arch_src.index("LLM_ARCH_NAMES"):]
    names_block = names_block[:names_block.index("};")]
    archs = dict(re.findall(r'\{\s*(LLM_ARCH_\w+)\s*,\s*"([^"]*)"\s*\}', names_block))
    return kv, archs


def function_body(text, start):
    """The text between the braces of the function whose signature ends before `start`."""
    open_at = text.index("{", start)
    depth, i = 0, open_at
    while True:
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return text[open_at + 1:i]
        i += 1


def top_level_statements(body):
    """The statements at the body's own level (none inside a nested brace or parenthesis)."""
    out, depth, cur = [], 0, ""
    for ch in body:
        if ch == "{":
            depth += 1
        if depth == 0:
            cur += ch
            if ch == ";":
                out.append(cur.strip())
                cur = ""
        if ch == "}":
            depth -= 1
            if depth == 0:
                cur = ""  # the block's own statement (if / switch / for) ends with it: conditional
    return out


REQUIRED_AT = {"get_key": 2, "get_key_or_arr": 3, "get_arr": 2, "get_arr_n": 2}  # index of `required`


def required_keys(body, kv):
    keys = []
    for st in top_level_statements(body):
        m = re.fullmatch(r"ml\.(get_key|get_key_or_arr|get_arr|get_arr_n)\((.*)\);", " ".join(st.split()))
        if not m:
            continue
        args = [a.strip() for a in m.group(2).split(",")]
        flag = args[REQUIRED_AT[m.group(1)]] if len(args) > REQUIRED_AT[m.group(1)] else "true"
        if flag == "true" and args[0] in kv:
            keys.append(kv[args[0]])
    return keys


def llama_cpp_tables(root):
    """(architecture, model source, whether llama_model_mapping builds it, required keys or None)."""
    kv, archs = llama_cpp_keys(root)
    model_src = (root / "src/llama-model.cpp").read_text()
    mapping = function_body(model_src, model_src.index("static llama_model * llama_model_mapping("))
    classes, pending = {}, []
    for label, cls in re.findall(r"case (LLM_ARCH_\w+):|return new (llama_model_\w+)\(", mapping):
        if label:
            pending.append(label)
        else:
            classes.update({a: cls for a in pending})
            pending = []
    bases = dict(re.findall(r"struct (llama_model_\w+)\s*:\s*public (llama_model_\w+)", (root / "src/models/models.h").read_text()))
    hparams = {}
    for f in sorted((root / "src/models").glob("*.cpp")):
        text = f.read_text()
        for m in re.finditer(r"void (llama_model_\w+)::load_arch_hparams\(", text):
            hparams[m.group(1)] = (f"src/models/{f.name}", required_keys(function_body(text, m.end()), kv))
    rows = []
    for arch_id, name in sorted(archs.items(), key=lambda x: x[1]):
        if arch_id == "LLM_ARCH_UNKNOWN":
            continue
        cls = classes.get(arch_id)
        while cls and cls not in hparams:  # the load_arch_hparams a class inherits
            cls = bases.get(cls)
        source, keys = hparams[cls] if cls else ("", None)
        rows.append((name, source, arch_id in classes, keys))
    return rows


def llama_cpp_main(version, root):
    rows = llama_cpp_tables(root)
    out = [f"// llama.cpp {version}'s GGUF architectures (src/llama-arch.cpp LLM_ARCH_NAMES), whether",
           "// src/llama-model.cpp llama_model_mapping builds a model for each, and the keys the model class's",
           "// load_arch_hparams (src/models/*.cpp, inherited where the class has none) requires unconditionally.",
           "// Generated by scripts/extract_engine_architectures.py from llama.cpp's own source; do not edit.",
           '#include "core/validate/engines/engine_tables.h"', "", "namespace ws::val::engines {", "",
           "const std::vector<LlamaCppModelRow>& llamaCppModels() {",
           "  static const std::vector<LlamaCppModelRow> r = {"]
    for name, source, builds, keys in rows:
        b = "true" if builds else "false"
        if keys is None:
            out.append(f'      {{"{name}", "{source}", {b}, false, {{}}}},')
        else:
            out.append(f'      {{"{name}", "{source}", {b}, true, {{' + ", ".join(f'"{k}"' for k in keys) + "}},")
    out += ["  };", "  return r;", "}", "",
            "const LlamaCppModelRow* findLlamaCppModel(std::string_view architecture) {",
            "  for (const auto& row : llamaCppModels())",
            "    if (row.architecture == architecture) return &row;",
            "  return nullptr;",
            "}", "", "}  // namespace ws::val::engines", ""]
    print("\n".join(out))


def main():
    engine, version, root = sys.argv[1], sys.argv[2], pathlib.Path(sys.argv[3])
    if engine == "llama.cpp":
        return llama_cpp_main(version, root)
    supported, previous, where = (vllm_tables if engine == "vllm" else sglang_tables)(root)
    out = [f"// {engine} {version}'s architecture registry: {where}.",
           f"// Generated by scripts/extract_engine_architectures.py from the engine's own source; do not edit.",
           '#include "core/validate/engines/engine_tables.h"', "", "namespace ws::val::engines {", "",
           f"const ArchitectureRegistry& {engine}Architectures() {{",
           "  static const ArchitectureRegistry r = {"]
    out.append("      {")
    line = "       "
    for a in supported:
        if len(line) + len(a) + 4 > 120:
            out.append(line.rstrip())
            line = "       "
        line += f' "{a}",'
    out += [line, "      },"]
    out.append("      {" + ", ".join(f'{{"{a}", "{v}"}}' for a, v in sorted(previous.items())) + "},")
    out += ["  };", "  return r;", "}", "", "}  // namespace ws::val::engines", ""]
    print("\n".join(out))


if __name__ == "__main__":
    main()
