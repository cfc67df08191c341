#!/usr/bin/env python3
"""Writes an engine's architecture registry as a C++ table (core/validate/engines/*_architectures.cpp).

Run by hand against the engine's own source at the release the table names, never at build or test
time (the engines are not dependencies):

  python3 scripts/extract_engine_architectures.py vllm 0.11.0 /path/to/site-packages > core/validate/engines/vllm_architectures.cpp
  python3 scripts/extract_engine_architectures.py sglang VERSION /path/to/unpacked/sglang-wheel > core/validate/engines/sglang_architectures.cpp
  python3 scripts/extract_engine_architectures.py llama.cpp COMMIT /path/to/llama.cpp > core/validate/engines/llama_cpp_models.cpp
  python3 scripts/extract_engine_architectures.py llama.cpp-tensors COMMIT /path/to/llama.cpp > core/validate/engines/llama_cpp_tensors.cpp

vLLM: the keys of the *_MODELS dicts in vllm/model_executor/models/registry.py (what
ModelRegistry.get_supported_archs returns) and _PREVIOUSLY_SUPPORTED_MODELS. SGLang: the class
names every sglang/srt/models/*.py file's EntryClass names (registry.py import_model_classes).
llama.cpp: the GGUF architecture names of src/llama-arch.cpp LLM_ARCH_NAMES, and for each the keys
its model class's load_arch_hparams (src/models/*.cpp, the class llama_model_mapping creates)
requires unconditionally: a get_key / get_key_or_arr / get_arr / get_arr_n statement at the
function's top level without required = false. A call inside an if, a switch or an expression is
conditional and left out; an architecture whose class defines no load_arch_hparams of its own gets
no key list (unknown, not "none").
llama.cpp-tensors: for each architecture the GGUF tensor names (src/llama-arch.cpp LLM_TENSOR_NAMES,
"blk.%d." per layer) its class's load_arch_tensors creates. Required: a create_tensor(tn(...), {...},
0) statement at the function's top level, or at the top level of its `for (int i = 0; i < n_layer;
++i)` loop before any continue / break / return - anything under a condition, in a lambda or a helper
(create_tensor_qkv's fused-or-split choice), or with flags other than a literal 0 is left out.
Consumed: every name any tn() in the function (or the create_tensor_* helpers it calls, or the
generic scale pass of llama_model_base::load_tensors) names - a superset of what it creates, so a file
tensor outside it is one llama.cpp never creates ("wrong number of tensors").
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


def uncommented(text):
    return re.sub(r"//[^\n]*|/\*.*?\*/", " ", text, flags=re.S)


def block_end(text, i):
    """The index of the brace that closes the one at i."""
    depth = 0
    while True:
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        if depth == 0:
            return i
        i += 1


def statements(body):
    """(statement, block body or None) at the body's own level: a control statement (if, for,
    while, switch, else, do, a bare block) with the body of its braces; any other statement (a
    lambda or an initializer among them) up to its semicolon."""
    out, cur, paren, i = [], "", 0, 0
    while i < len(body):
        ch = body[i]
        paren += {"(": 1, ")": -1}.get(ch, 0)
        if ch == "{" and paren == 0:
            j = block_end(body, i)
            if not cur.strip() or re.match(r"(if|for|while|switch|else|do)\b", cur.strip()):
                out.append((cur.strip(), body[i + 1:j]))
                cur = ""
            else:
                cur += body[i:j + 1]
            i = j + 1
            continue
        cur += ch
        if ch == ";" and paren == 0:
            out.append((cur.strip(), None))
            cur = ""
        i += 1
    return out


TN = re.compile(r'\btn\(\s*(LLM_TENSOR_\w+)\s*(?:,\s*"(\w*)")?\s*(?:,\s*\w+){0,2}\s*\)')
CREATE = re.compile(r'(?:[\w.\[\]>-]+\s*=\s*)?create_tensor\(\s*tn\(\s*(LLM_TENSOR_\w+)\s*,\s*"(\w*)"\s*(?:,\s*(\w+))?\s*\)\s*,\s*\{.*\}\s*,\s*0\s*\)\s*;', re.S)
ESCAPE = re.compile(r"\b(continue|break|return|goto)\b")


def required_tensors(body, names):
    """(global names, per-layer names) created unconditionally with flags 0."""
    glob, per = [], []

    def created(statement, layer_var):
        c = CREATE.fullmatch(" ".join(statement.split()))
        if c and c.group(1) in names and c.group(3) == layer_var:
            return names[c.group(1)] + ("." + c.group(2) if c.group(2) else "")
        return None

    for st, inner in statements(uncommented(body)):
        if inner is None:
            if ESCAPE.search(st):
                break
            if not re.match(r"(if|else|for|while|switch)\b", st) and (n := created(st, None)):
                glob.append(n)
            continue
        loop = re.fullmatch(r"for \(int (\w+) = 0; \1 < n_layer; \+\+\1\)", " ".join(st.split()))
        if not loop:
            if ESCAPE.search(inner):
                break
            continue
        for st2, inner2 in statements(inner):
            if ESCAPE.search(st2) or (inner2 is not None and ESCAPE.search(inner2)):
                break
            if inner2 is None and not re.match(r"(if|else|for|while|switch)\b", st2) and (n := created(st2, loop.group(1))):
                per.append(n)
    return glob, per


def llama_cpp_tensor_tables(root):
    """(generic scale-pass names, [(architecture, source, required global, required per layer, consumed)])."""
    arch_src = (root / "src/llama-arch.cpp").read_text()
    block = arch_src[arch_src.index("LLM_TENSOR_NAMES"):]
    names = dict(re.findall(r'\{\s*(LLM_TENSOR_\w+)\s*,\s*"([^"]*)"\s*\}', block[:block.index("};")]))

    def mentioned(text):
        return {names[k] + ("." + s if s else "") for k, s in TN.findall(uncommented(text)) if k in names}

    _, archs = llama_cpp_keys(root)
    model_src = (root / "src/llama-model.cpp").read_text()
    mapping = function_body(model_src, model_src.index("static llama_model * llama_model_mapping("))
    classes, pending = {}, []
    for label, cls in re.findall(r"case (LLM_ARCH_\w+):|return new (llama_model_\w+)\(", mapping):
        if label:
            pending.append(label)
        else:
            classes.update({a: cls for a in pending})
            pending = []
    helpers = {m.group(1): mentioned(function_body(model_src, m.end()))
               for m in re.finditer(r"void llama_model_base::(create_tensor_\w+)\(", model_src)}
    load = function_body(model_src, model_src.index("bool llama_model_base::load_tensors("))
    generic = mentioned(load[load.index("load_arch_tensors(ml);"):load.index("ml.done_getting_tensors();")])
    bases = dict(re.findall(r"struct (llama_model_\w+)\s*:\s*public (llama_model_\w+)", (root / "src/models/models.h").read_text()))
    tensors = {}
    for f in sorted((root / "src/models").glob("*.cpp")):
        text = f.read_text()
        for m in re.finditer(r"void (llama_model_\w+)::load_arch_tensors\(", text):
            body = function_body(text, m.end())
            if "GGML_ABORT" in body:  # a stub (clip: mmproj files are read by tools/mtmd, not this loader)
                continue
            consumed = mentioned(body)
            for helper, made in helpers.items():
                if re.search(rf"\b{helper}\(", body):
                    consumed |= made
            tensors[m.group(1)] = (f"src/models/{f.name}", *required_tensors(body, names), consumed)
    rows = []
    for arch_id, name in sorted(archs.items(), key=lambda x: x[1]):
        cls = classes.get(arch_id)
        while cls and cls not in tensors:
            cls = bases.get(cls)
        if cls:
            rows.append((name, *tensors[cls]))
    return sorted(generic), rows


def llama_cpp_tensors_main(version, root):
    generic, rows = llama_cpp_tensor_tables(root)
    out = [f"// llama.cpp {version}'s tensors by GGUF architecture: what each model class's load_arch_tensors",
           "// (src/models/*.cpp, inherited where the class has none) requires unconditionally and every name it",
           "// may create, with the generic scale pass of llama_model_base::load_tensors (src/llama-model.cpp).",
           "// Generated by scripts/extract_engine_architectures.py from llama.cpp's own source; do not edit.",
           '#include "core/validate/engines/engine_tables.h"', "", "namespace ws::val::engines {", "",
           'const std::string_view kLlamaCppGenericTensors = "' + " ".join(generic) + '";', "",
           "const std::vector<LlamaCppTensorRow>& llamaCppTensors() {",
           "  static const std::vector<LlamaCppTensorRow> r = {"]
    for name, source, glob, per, consumed in rows:
        out.append(f'      {{"{name}", "{source}", "{" ".join(glob)}", "{" ".join(per)}",')
        out.append(f'       "{" ".join(sorted(consumed))}"}},')
    out += ["  };", "  return r;", "}", "", "}  // namespace ws::val::engines", ""]
    print("\n".join(out))


def main():
    engine, version, root = sys.argv[1], sys.argv[2], pathlib.Path(sys.argv[3])
    if engine == "llama.cpp":
        return llama_cpp_main(version, root)
    if engine == "llama.cpp-tensors":
        return llama_cpp_tensors_main(version, root)
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
