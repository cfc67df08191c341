// The damaged-checkpoint corpus: each case copies a real fixture (or a synth checkpoint), damages
// one thing, and must get exactly the expected rule on exactly the damaged tensor (or file) and
// no other error or warning. The undamaged fixtures must validate clean.
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <sstream>

#include "core/formats/gguf.h"
#include "core/numerics/hd.h"
#include "core/report/inspect_report.h"
#include "core/report/validate_report.h"
#include "core/synth/synth.h"
#include "core/validate/rules.h"
#include "core/validate/sink.h"
#include "core/validate/validator.h"
#include "corpus_support.h"
#include "test_support.h"

using namespace ws;
namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

namespace {

struct Case {
  const char* name;
  const char* code;
  std::string where;  // the damaged tensor, or a file name fragment for file-level findings
  std::function<std::string(const wstest::TempDir&)> build;  // returns the path to validate
  // A runtime's refusal: validated with --runtime this, where the finding must be an error
  // (and without it, where it keeps the rule's own severity).
  const char* runtime = nullptr;
  // A rule that raises its own severity in this case, as docs/rules.md's example column says;
  // otherwise the finding carries the rule's severity.
  std::optional<val::Severity> raised = std::nullopt;
  // A second rule the same damage rightly raises (another loader refusing it too), allowed beside.
  const char* also = nullptr;
};

std::string fixtureCopy(const wstest::TempDir& d, const std::string& rel) {
  std::string dst = d.file("ckpt");
  wstest::copyCheckpoint(wstest::fixture(rel), dst);
  return dst;
}

std::string shardOf(const std::string& dir, const std::string& tensor) {
  std::ifstream in(dir + "/model.safetensors.index.json");
  auto j = nlohmann::json::parse(in);
  return dir + "/" + j["weight_map"][tensor].get<std::string>();
}

// A GGUF file with one more key-value pair (raw bytes, as GGUF v3 lays a pair out) after its own:
// the KV count raised, the tensor infos kept, the data section re-aligned where it now starts.
std::string withGgufKv(const std::string& path, const std::string& kv) {
  std::ifstream in(path, std::ios::binary);
  const std::string b((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const GgufFile g = parseGguf(std::span(reinterpret_cast<const uint8_t*>(b.data()), b.size()), path);
  const uint64_t kvEnd = g.tensors.front().infoOffset;
  const GgufTensorInfo& last = g.tensors.back();
  const uint64_t infoEnd = last.infoOffset + 8 + last.name.size() + 4 + 8 * last.ne.size() + 4 + 8;
  std::string out = b.substr(0, 16);
  uint64_t nKv = 0;
  std::memcpy(&nKv, b.data() + 16, 8);
  ++nKv;
  out.append(reinterpret_cast<const char*>(&nKv), 8);
  out += b.substr(24, kvEnd - 24) + kv + b.substr(kvEnd, infoEnd - kvEnd);
  out.append((g.alignment - out.size() % g.alignment) % g.alignment, '\0');
  return out + b.substr(g.dataStart);
}

// One GGUF v3 key-value pair of type UINT32, as withGgufKv takes it.
std::string ggufU32(const std::string& key, uint32_t value) {
  std::string kv;
  const uint64_t n = key.size();
  kv.append(reinterpret_cast<const char*>(&n), 8);
  kv += key;
  const int32_t type = 4;  // UINT32
  kv.append(reinterpret_cast<const char*>(&type), 4);
  kv.append(reinterpret_cast<const char*>(&value), 4);
  return kv;
}

// One GGUF v3 key-value pair of type STRING, as withGgufKv takes it.
std::string ggufString(const std::string& key, const std::string& value) {
  std::string kv;
  const uint64_t n = key.size(), m = value.size();
  kv.append(reinterpret_cast<const char*>(&n), 8);
  kv += key;
  const int32_t type = 8;  // STRING
  kv.append(reinterpret_cast<const char*>(&type), 4);
  kv.append(reinterpret_cast<const char*>(&m), 8);
  return kv + value;
}

// The mixtral conversion with `ggufTemplate` as its tokenizer.chat_template (none when empty) and
// `sideFiles` beside it (name -> text): WS-M008's cases and twins.
std::string ggufWithTemplate(const wstest::TempDir& d, const std::string& ggufTemplate, const std::map<std::string, std::string>& sideFiles) {
  const std::string in = wstest::sourceDir() + "/tests/data/llama_cpp/mixtral-bf16.gguf", out = d.file("mixtral-bf16.gguf");
  if (ggufTemplate.empty()) fs::copy_file(in, out);
  else wstest::writeFile(out, withGgufKv(in, ggufString("tokenizer.chat_template", ggufTemplate)));
  for (const auto& [name, text] : sideFiles) wstest::writeFile(d.file(name), text);
  return out;
}

const std::string kTemplate = "{% for m in messages %}\n<|{{ m.role }}|>{{ m.content }}\n{% endfor %}";

// A GGUF file with one key's bytes overwritten in place: its name (same length: the key is then
// absent under its own name) or its UINT32 value. Offsets stay as they were.
std::string withGgufKeyPatched(const std::string& path, const std::string& key, const std::string& newName, std::optional<uint32_t> newValue) {
  std::ifstream in(path, std::ios::binary);
  std::string b((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const GgufFile g = parseGguf(std::span(reinterpret_cast<const uint8_t*>(b.data()), b.size()), path);
  const GgufKv* kv = g.find(key);
  if (!kv) qFatal("no key %s in %s", key.c_str(), path.c_str());
  const uint64_t name = kv->offset + 8, value = name + key.size() + 4;
  if (!newName.empty()) {
    if (newName.size() != key.size()) qFatal("a new name must keep the length");
    b.replace(name, key.size(), newName);
  }
  if (newValue) std::memcpy(b.data() + value, &*newValue, 4);
  return b;
}

// A GGUF file with its tensors renamed or dropped (`edit` renames in place, returns false to
// drop): the tensor count, every info and the data section laid out again as ggml writes them
// (each tensor at the running sum of aligned sizes), so nothing but the names differs.
std::string withGgufTensorsEdited(const std::string& path, const std::function<bool(std::string&)>& edit) {
  std::ifstream in(path, std::ios::binary);
  const std::string b((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const GgufFile g = parseGguf(std::span(reinterpret_cast<const uint8_t*>(b.data()), b.size()), path);
  auto u64 = [](std::string& out, uint64_t x) { out.append(reinterpret_cast<const char*>(&x), 8); };
  auto aligned = [&](uint64_t n) { return (n + g.alignment - 1) / g.alignment * g.alignment; };
  std::string infos, data;
  uint64_t count = 0;
  for (const GgufTensorInfo& t : g.tensors) {
    std::string name = t.name;
    if (!edit(name)) continue;
    ++count;
    u64(infos, name.size());
    infos += name;
    const uint64_t at = t.infoOffset + 8 + t.name.size();  // n_dims, ne, type as they were
    const uint32_t nDims = uint32_t(t.ne.size());
    infos += b.substr(at, 4 + 8 * nDims + 4);
    u64(infos, data.size());
    data += b.substr(g.dataStart + t.relOffset, t.bytes);
    data.append(aligned(data.size()) - data.size(), '\0');
  }
  std::string out = b.substr(0, 8);
  u64(out, count);
  out += b.substr(16, g.tensors.front().infoOffset - 16) + infos;
  out.append(aligned(out.size()) - out.size(), '\0');
  return out + data;
}

// Keeps metadata.total_size true after a damage that changes bytes on purpose elsewhere, so
// that each case damages one thing only.
void fixIndexTotal(const std::string& dir) {
  if (!fs::exists(dir + "/model.safetensors.index.json")) return;
  uint64_t total = 0;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".safetensors") {
      std::ifstream in(e.path(), std::ios::binary);
      uint64_t n = 0;
      in.read(reinterpret_cast<char*>(&n), 8);
      total += fs::file_size(e.path()) - 8 - n;
    }
  wstest::editJson(dir + "/model.safetensors.index.json", [&](Json& j) { j["metadata"]["total_size"] = total; });
}

// Edits the tensor in whichever shard holds it.
std::string editTensor(const wstest::TempDir& d, const std::string& rel, const std::string& tensor,
                       const std::function<void(wstest::StFile&, wstest::StEntry&)>& edit) {
  std::string dir = fixtureCopy(d, rel);
  std::string file = fs::exists(dir + "/model.safetensors.index.json") ? shardOf(dir, tensor) : dir + "/model.safetensors";
  auto f = wstest::readSt(file);
  edit(f, *f.find(tensor));
  wstest::writeSt(file, f);
  fixIndexTotal(dir);
  return dir;
}

std::string synth(const wstest::TempDir& d, const std::string& like, const std::string& scheme) {
  synth::Options o;
  o.like = like;
  o.scheme = scheme;
  o.out = d.file("ckpt");
  auto r = synth::write(o);
  if (!r) throw std::runtime_error(r.error().describe());
  return o.out;
}
// synth() for the test class, where ws::synth (the namespace) hides it.
std::string synthesized(const wstest::TempDir& d, const std::string& like, const std::string& scheme) { return synth(d, like, scheme); }

void dropFromIndex(const std::string& dir, const std::string& tensor) {
  wstest::editJson(dir + "/model.safetensors.index.json", [&](Json& j) { j["weight_map"].erase(tensor); });
}

// Removes tensors from their shards and from the index.
std::string removeTensors(const wstest::TempDir& d, const std::string& rel, const std::vector<std::string>& names) {
  std::string dir = fixtureCopy(d, rel);
  for (const auto& n : names) {
    std::string file = shardOf(dir, n);
    auto f = wstest::readSt(file);
    f.remove(n);
    wstest::writeSt(file, f);
    dropFromIndex(dir, n);
  }
  fixIndexTotal(dir);
  return dir;
}

void patchAt(const std::string& file, uint64_t at, const std::vector<uint8_t>& bytes) {
  std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(std::streamoff(at));
  f.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
}

// Position of the tensor info of `name` in a GGUF file (just past its name string).
uint64_t ggufInfoAfterName(const std::string& file, const std::string& name) {
  std::ifstream in(file, std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string key(8, '\0');
  uint64_t n = name.size();
  std::memcpy(key.data(), &n, 8);
  key += name;
  size_t at = all.find(key + std::string("\x02\0\0\0", 4));  // followed by n_dims (2 or 3)
  if (at == std::string::npos) at = all.find(key + std::string("\x03\0\0\0", 4));
  if (at == std::string::npos) at = all.find(key + std::string("\x01\0\0\0", 4));
  if (at == std::string::npos) throw std::runtime_error("tensor info not found: " + name);
  return at + key.size();
}

synth::Options synthOptions(const wstest::TempDir& d, const std::string& like, const std::string& scheme) {
  synth::Options o;
  o.like = like;
  o.scheme = scheme;
  o.out = d.file("ckpt");
  return o;
}

std::string written(const synth::Options& o) {
  auto r = synth::write(o);
  if (!r) throw std::runtime_error(r.error().describe());
  return o.out;
}

// Rewrites the file holding `tensor` after `edit` (which may add or remove entries).
std::string editFile(const std::string& dir, const std::string& anyTensorInIt, const std::function<void(wstest::StFile&)>& edit) {
  std::string file = fs::exists(dir + "/model.safetensors.index.json") ? shardOf(dir, anyTensorInIt) : dir + "/model.safetensors";
  auto f = wstest::readSt(file);
  edit(f);
  wstest::writeSt(file, f);
  return dir;
}

// llm-compressor's FP8 W8A8 checkpoint of the test data (dynamic activations, channel scales).
const std::string L1CT = "model.layers.1.mlp.experts.";
std::string ctCopy(const wstest::TempDir& d) {
  std::string dst = d.file("ckpt");
  wstest::copyCheckpoint(wstest::sourceDir() + "/tests/data/compressed_tensors/fp8-dynamic", dst);
  return dst;
}

wstest::StEntry f32Scalar(const std::string& name, float v) {
  wstest::StEntry e{name, "F32", {1}, std::vector<uint8_t>(4)};
  std::memcpy(e.data.data(), &v, 4);
  return e;
}

// The same checkpoint as a static calibration writes it: input_activations dynamic false, and an
// input_scale beside every quantized weight (0.024 times 1.0..1.3, spread as calibration spreads
// them), then `edit`.
std::string staticActivations(const wstest::TempDir& d, const std::function<void(wstest::StFile&)>& edit) {
  const std::string dir = editFile(ctCopy(d), "", [&](wstest::StFile& f) {
    std::vector<wstest::StEntry> scales;
    for (const auto& t : f.tensors)
      if (t.name.ends_with(".weight_scale"))
        scales.push_back(f32Scalar(t.name.substr(0, t.name.size() - 13) + ".input_scale", 0.024f * (1.0f + 0.1f * float(scales.size() % 4))));
    f.tensors.insert(f.tensors.end(), scales.begin(), scales.end());
    edit(f);
  });
  wstest::editJson(dir + "/config.json", [](Json& j) {
    j["quantization_config"]["config_groups"]["group_0"]["input_activations"]["dynamic"] = false;
    j["quantization_config"]["config_groups"]["group_0"]["input_activations"]["strategy"] = "tensor";
  });
  return dir;
}

// llm-compressor's NVFP4 weight-only checkpoint of the test data turned W4A4 as its NVFP4 preset
// writes it: input_activations 4-bit float, tensor_group 16, dynamic "local", and an
// input_global_scale beside every weight_global_scale (spread as calibration spreads them), then
// `edit`.
std::string nvfp4W4A4(const wstest::TempDir& d, const std::function<void(wstest::StFile&)>& edit) {
  const std::string dir = d.file("ckpt");
  wstest::copyCheckpoint(wstest::sourceDir() + "/tests/data/compressed_tensors/nvfp4a16", dir);
  editFile(dir, "", [&](wstest::StFile& f) {
    std::vector<wstest::StEntry> scales;
    for (const auto& t : f.tensors)
      if (t.name.ends_with(".weight_global_scale"))
        scales.push_back(f32Scalar(t.name.substr(0, t.name.size() - 20) + ".input_global_scale", 2600.0f * (1.0f + 0.1f * float(scales.size() % 4))));
    f.tensors.insert(f.tensors.end(), scales.begin(), scales.end());
    edit(f);
  });
  wstest::editJson(dir + "/config.json", [](Json& j) {
    j["quantization_config"]["config_groups"]["group_0"]["input_activations"] = {
        {"num_bits", 4}, {"type", "float"}, {"strategy", "tensor_group"}, {"group_size", 16}, {"dynamic", "local"}, {"symmetric", true}, {"observer", "minmax"}};
  });
  return dir;
}

const std::string Q = "hf/qwen3_moe", F8 = "hf/qwen3_moe_fp8";
const std::string L1 = "model.layers.1.mlp.experts.", L2 = "model.layers.2.mlp.experts.";

// Multiplies every BF16 value of `bytes` by `factor`, rounding to nearest even as torch does.
void scaleBf16(std::vector<uint8_t>& bytes, float factor) {
  for (size_t i = 0; i + 1 < bytes.size(); i += 2) {
    uint32_t u = uint32_t(bytes[i] | bytes[i + 1] << 8) << 16;
    float x;
    std::memcpy(&x, &u, 4);
    x *= factor;
    std::memcpy(&u, &x, 4);
    u += 0x7FFF + (u >> 16 & 1);
    bytes[i] = uint8_t(u >> 16), bytes[i + 1] = uint8_t(u >> 24);
  }
}

std::vector<Case> cases() {
  std::vector<Case> v;
  // ---- integrity: files, index
  // Truncated: the finding names the last tensor of the shard, whose bytes are cut off.
  v.push_back({"truncated shard", "WS-I011", "model.layers.1.self_attn.k_proj.weight", [](auto& d) {
                 std::string dir = fixtureCopy(d, Q);
                 fs::resize_file(dir + "/model-00002-of-00004.safetensors", fs::file_size(dir + "/model-00002-of-00004.safetensors") - 100);
                 return dir;
               }});
  v.push_back({"trailing bytes", "WS-I011", "model-00004-of-00004.safetensors", [](auto& d) {
                 std::string dir = fixtureCopy(d, Q);
                 std::ofstream(dir + "/model-00004-of-00004.safetensors", std::ios::app | std::ios::binary) << std::string(16, 'x');
                 return dir;
               }});
  v.push_back({"missing shard", "WS-I013", "model.safetensors.index.json", [](auto& d) {
                 std::string dir = fixtureCopy(d, Q);
                 fs::remove(dir + "/model-00003-of-00004.safetensors");
                 return dir;
               }});
  v.push_back({"index names a missing tensor", "WS-I014", "model.layers.9.mlp.gate.weight", [](auto& d) {
                 std::string dir = fixtureCopy(d, Q);
                 wstest::editJson(dir + "/model.safetensors.index.json", [](Json& j) { j["weight_map"]["model.layers.9.mlp.gate.weight"] = "model-00001-of-00004.safetensors"; });
                 return dir;
               }});
  v.push_back({"tensor in two shards", "WS-I012", "lm_head.weight", [](auto& d) {
                 std::string dir = fixtureCopy(d, Q);
                 auto one = wstest::readSt(dir + "/model-00001-of-00004.safetensors");
                 auto four = wstest::readSt(dir + "/model-00004-of-00004.safetensors");
                 four.tensors.push_back(*one.find("lm_head.weight"));
                 wstest::writeSt(dir + "/model-00004-of-00004.safetensors", four);
                 return dir;
               }});
  v.push_back({"tensor not in weight_map", "WS-I015", "model.norm.weight", [](auto& d) {
                 std::string dir = fixtureCopy(d, Q);
                 dropFromIndex(dir, "model.norm.weight");
                 return dir;
               }});
  v.push_back({"weight_map points at the wrong shard", "WS-I016", "model.norm.weight", [](auto& d) {
                 std::string dir = fixtureCopy(d, Q);
                 wstest::editJson(dir + "/model.safetensors.index.json", [](Json& j) { j["weight_map"]["model.norm.weight"] = "model-00001-of-00004.safetensors"; });
                 return dir;
               }});
  v.push_back({"total_size wrong", "WS-I017", "model.safetensors.index.json", [](auto& d) {
                 std::string dir = fixtureCopy(d, Q);
                 wstest::editJson(dir + "/model.safetensors.index.json", [](Json& j) { j["metadata"]["total_size"] = j["metadata"]["total_size"].get<uint64_t>() + 2; });
                 return dir;
               }});
  v.push_back({"wrong dtype", "WS-I010", "model.layers.0.self_attn.o_proj.weight", [](auto& d) {
                 return editTensor(d, Q, "model.layers.0.self_attn.o_proj.weight", [](auto&, auto& t) { t.dtype = "F32"; });
               }});
  v.push_back({"unknown dtype", "WS-I006", "model.layers.0.self_attn.o_proj.weight", [](auto& d) {
                 return editTensor(d, Q, "model.layers.0.self_attn.o_proj.weight", [](auto&, auto& t) { t.dtype = "F9"; });
               }});
  auto offsetsLie = [](const char* name, const char* code, std::function<void(std::string&)> tweak) {
    return Case{name, code, "model.norm.weight", [tweak](auto& d) {
                  std::string dir = fixtureCopy(d, Q);
                  std::string file = dir + "/model-00004-of-00004.safetensors";
                  wstest::writeSt(file, wstest::readSt(file), tweak);
                  return dir;
                }};
  };
  // model.norm.weight is the last tensor of shard 4: 512 bytes at [B, B+512)
  auto shiftNorm = [](std::string& h, int64_t db, int64_t de) {
    size_t at = h.find("\"model.norm.weight\"");
    size_t o = h.find("\"data_offsets\":[", at) + 16;
    size_t comma = h.find(',', o), close = h.find(']', comma);
    int64_t b = std::stoll(h.substr(o, comma - o)), e = std::stoll(h.substr(comma + 1, close - comma - 1));
    h.replace(o, close - o, std::to_string(b + db) + "," + std::to_string(e + de));
  };
  v.push_back(offsetsLie("offsets with a gap", "WS-I007", [=](std::string& h) { shiftNorm(h, 2, 2); }));
  v.push_back(offsetsLie("offsets that overlap", "WS-I007", [=](std::string& h) { shiftNorm(h, -2, -2); }));
  v.push_back(offsetsLie("end before begin", "WS-I007", [=](std::string& h) { shiftNorm(h, 0, -513); }));
  v.push_back(offsetsLie("shape overflow", "WS-I008", [](std::string& h) {
    size_t at = h.find("\"model.norm.weight\"");
    size_t s = h.find("\"shape\":[", at) + 9;
    h.replace(s, h.find(']', s) - s, "4294967296,4294967296,4");
  }));
  v.push_back(offsetsLie("duplicate name in a header", "WS-I012", [](std::string& h) {
    size_t at = h.find("\"model.norm.weight\"");
    std::string entry = h.substr(at, h.find('}', at) + 1 - at);
    h.insert(h.size() - 1, "," + entry);
  }));
  // The metadata family. The tiny Qwen3-MoE fixture's tables have 1024 rows.
  auto withSideFiles = [](std::map<std::string, std::string> files, std::function<void(Json&)> config = {}) {
    return [files, config](auto& d) {
      std::string dir = fixtureCopy(d, Q);
      for (const auto& [name, text] : files) wstest::writeFile(dir + "/" + name, text);
      if (config) wstest::editJson(dir + "/config.json", config);
      return dir;
    };
  };
  auto vocab = [](int n) {
    Json v = Json::object();
    for (int i = 0; i < n; ++i) v["t" + std::to_string(i)] = i;
    return Json{{"model", {{"type", "BPE"}, {"vocab", v}, {"merges", Json::array()}}}, {"added_tokens", Json::array()}}.dump();
  };
  v.push_back({"tokenizer larger than the embedding", "WS-M001", "model.embed_tokens.weight", withSideFiles({{"tokenizer.json", vocab(1100)}})});
  v.push_back({"eos id past the embedding", "WS-M002", "model.embed_tokens.weight", withSideFiles({}, [](Json& j) { j["eos_token_id"] = 5000; })});
  // Ids run 0 to rows - 1: an id equal to the row count is already one past the table.
  v.push_back({"eos id equal to the embedding's rows", "WS-M002", "model.embed_tokens.weight", withSideFiles({}, [](Json& j) { j["eos_token_id"] = 1024; })});
  v.push_back({"instruct model without a chat template", "WS-M003", "tokenizer_config.json",
               withSideFiles({{"tokenizer_config.json", R"({"eos_token": "t2", "bos_token": null})"}}, [](Json& j) { j["_name_or_path"] = "Qwen/Qwen3-30B-A3B-Instruct-2507"; })});
  // WS-M007: files giving a special token ids with none in common (vllm PR #30434). The tokenizer
  // of 1000 tokens t0..t999, its eos t2.
  const std::string tokEos = R"({"eos_token": "t2", "bos_token": null})";
  v.push_back({"generation_config's eos none of the tokenizer's", "WS-M007", "tokenizer_config.json",
               withSideFiles({{"tokenizer.json", vocab(1000)}, {"tokenizer_config.json", tokEos}, {"generation_config.json", R"({"eos_token_id": [3]})"}})});
  v.push_back({"config.json's eos none of generation_config's", "WS-M007", "generation_config.json",
               withSideFiles({{"tokenizer.json", vocab(1000)}, {"tokenizer_config.json", tokEos}, {"generation_config.json", R"({"eos_token_id": [2, 3]})"}},
                             [](Json& j) { j["eos_token_id"] = 7; })});
  v.push_back({"a GGUF's eos none of its HF source's", "WS-M007", "mixtral-bf16.gguf", [](auto& d) {
                 const std::string out = d.file("mixtral-bf16.gguf");
                 wstest::writeFile(out, withGgufKv(wstest::sourceDir() + "/tests/data/llama_cpp/mixtral-bf16.gguf", ggufU32("tokenizer.ggml.eos_token_id", 2)));
                 wstest::writeFile(d.file("generation_config.json"), R"({"eos_token_id": 5})");
                 return out;
               }});
  // WS-M008: the mixtral conversion's chat template against its HF tokenizer_config.json's: one
  // line edited after the conversion, and a GGUF converted without the template the HF files give.
  // The twins (equal, and equal through chat_template.jinja) are chatTemplatesThatAgreeAreClean.
  v.push_back({"a GGUF's chat template not its HF source's", "WS-M008", "mixtral-bf16.gguf", [](auto& d) {
                 std::string edited = kTemplate;
                 edited.replace(edited.find("<|"), 1, "[");  // same length: compared by content, not size
                 return ggufWithTemplate(d, edited, {{"tokenizer_config.json", Json{{"chat_template", kTemplate}}.dump()}});
               }});
  v.push_back({"a GGUF without the chat template its HF source gives", "WS-M008", "mixtral-bf16.gguf", [](auto& d) {
                 return ggufWithTemplate(d, "", {{"chat_template.jinja", kTemplate}});
               }});
  v.push_back({"GGUF string that is not UTF-8", "WS-M004", "tiny-qwen3moe-kquants.gguf", [](auto& d) {
                 std::string kv;
                 auto u64 = [&](uint64_t x) { kv.append(reinterpret_cast<const char*>(&x), 8); };
                 const std::string key = "general.description", value = "caf\xe9 latin-1";
                 u64(key.size()), kv += key;
                 const int32_t type = 8;  // STRING
                 kv.append(reinterpret_cast<const char*>(&type), 4);
                 u64(value.size()), kv += value;
                 const std::string out = d.file("tiny-qwen3moe-kquants.gguf");
                 wstest::writeFile(out, withGgufKv(wstest::fixture("gguf/tiny-qwen3moe-kquants.gguf"), kv));
                 return out;
               }});
  // WS-M005, WS-M006: the keys llama.cpp builds the model from. The fixture has 8 experts, 2 used, 2 blocks.
  auto patchedGguf = [](std::string key, std::string newName, std::optional<uint32_t> value) {
    return [=](const wstest::TempDir& d) {
      const std::string out = d.file("tiny-qwen3moe-kquants.gguf");
      wstest::writeFile(out, withGgufKeyPatched(wstest::fixture("gguf/tiny-qwen3moe-kquants.gguf"), key, newName, value));
      return out;
    };
  };
  v.push_back({"GGUF without context_length", "WS-M006", "tiny-qwen3moe-kquants.gguf", patchedGguf("qwen3moe.context_length", "qwen3moe.context_lengtX", {})});
  v.push_back({"GGUF using more experts than it has", "WS-M005", "blk.0.ffn_down_exps.weight", patchedGguf("qwen3moe.expert_used_count", "", 9)});
  v.push_back({"GGUF router picking no expert", "WS-M005", "blk.0.ffn_down_exps.weight", patchedGguf("qwen3moe.expert_used_count", "", 0)});
  // WS-R007: what llama.cpp's model builder needs beyond M006's keys - a key the qwen3moe class's
  // load_arch_hparams requires, and an architecture llama.cpp does not name (every "qwen3moe" of
  // the file renamed, keys too, so only the architecture is unknown).
  v.push_back({"GGUF without a key its architecture requires", "WS-R007", "tiny-qwen3moe-kquants.gguf",
               patchedGguf("qwen3moe.attention.layer_norm_rms_epsilon", "qwen3moe.attention.layer_norm_rms_epsiloX", {}), "llama.cpp"});
  v.push_back({"GGUF of an architecture llama.cpp does not know", "WS-R007", "tiny-qwen3moe-kquants.gguf",
               [](const wstest::TempDir& d) {
                 std::ifstream in(wstest::fixture("gguf/tiny-qwen3moe-kquants.gguf"), std::ios::binary);
                 std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
                 for (size_t at = bytes.find("qwen3moe"); at != std::string::npos; at = bytes.find("qwen3moe", at)) bytes.replace(at, 8, "qwen9moe");
                 const std::string out = d.file("tiny-qwen3moe-kquants.gguf");
                 wstest::writeFile(out, bytes);
                 return out;
               },
               "llama.cpp"});
  // WS-R008: the tensors llama.cpp's qwen3moe class creates (src/models/qwen3moe.cpp at
  // 0c1e57098). A file without one it requires (blk.1.ffn_norm.weight dropped) is refused at
  // "missing tensor"; one with a tensor it never creates (a shared expert's, which qwen3moe has
  // not: Qwen2-MoE's converter names it so) at "wrong number of tensors". The fixture as written
  // is the clean twin (clean fixtures below), as are the real llama.cpp conversions.
  auto ggufEdited = [](std::function<bool(std::string&)> edit) {
    return [edit](const wstest::TempDir& d) {
      const std::string out = d.file("tiny-qwen3moe-kquants.gguf");
      wstest::writeFile(out, withGgufTensorsEdited(wstest::fixture("gguf/tiny-qwen3moe-kquants.gguf"), edit));
      return out;
    };
  };
  v.push_back({"GGUF without a tensor its architecture requires", "WS-R008", "blk.1.ffn_norm.weight",
               ggufEdited([](std::string& n) { return n != "blk.1.ffn_norm.weight"; }), "llama.cpp"});
  v.push_back({"GGUF with a tensor its architecture never creates", "WS-R008", "blk.1.ffn_gate_inp_shexp.weight",
               ggufEdited([](std::string& n) {
                 if (n == "output.weight") n = "blk.1.ffn_gate_inp_shexp.weight";
                 return true;
               }),
               "llama.cpp"});
  auto rawFile = [](const char* name, const char* code, std::function<std::vector<uint8_t>()> bytes) {
    return Case{name, code, "model.safetensors", [bytes](auto& d) {
                  std::string dir = d.file("ckpt");
                  fs::create_directories(dir);
                  wstest::writeFile(dir + "/model.safetensors", bytes());
                  return dir;
                }};
  };
  v.push_back(rawFile("file shorter than 8 bytes", "WS-I001", [] { return std::vector<uint8_t>{1, 2, 3, 4, 5}; }));
  v.push_back(rawFile("header length past the end", "WS-I003", [] {
    auto b = wstest::safetensorsBytes("{}", 0);
    b[0] = 200;
    return b;
  }));
  v.push_back(rawFile("header length over 100 MB", "WS-I002", [] {
    auto b = wstest::safetensorsBytes("{}", 0);
    b[3] = 0x10;
    return b;
  }));
  v.push_back(rawFile("header not UTF-8", "WS-I004", [] { return wstest::safetensorsBytes("{\"a\xc3\x28\":1}", 0); }));
  v.push_back({"header not JSON", "WS-I005", "a", [](auto& d) {  // the entry that breaks off is named
                 std::string dir = d.file("ckpt");
                 fs::create_directories(dir);
                 wstest::writeFile(dir + "/model.safetensors", wstest::safetensorsBytes("{\"a\":{\"dtype\":", 0));
                 return dir;
               }});
  v.push_back({"config.json not JSON", "WS-I025", "config.json", [](auto& d) {
                 std::string dir = fixtureCopy(d, Q);
                 wstest::writeFile(dir + "/config.json", std::string("{\"model_type\": "));
                 return dir;
               }});
  // ---- GGUF
  const std::string G = "gguf/tiny-qwen3moe-kquants.gguf";
  v.push_back({"GGUF bad magic", "WS-I018", "model.gguf", [=](auto& d) {
                 fs::create_directories(d.file("g"));
                 wstest::copyCheckpoint(wstest::fixture(G), d.file("g/model.gguf"));
                 patchAt(d.file("g/model.gguf"), 0, {'G', 'G', 'U', 'X'});
                 return d.file("g/model.gguf");
               }});
  v.push_back({"GGUF version 4", "WS-I018", "model.gguf", [=](auto& d) {
                 fs::create_directories(d.file("g"));
                 wstest::copyCheckpoint(wstest::fixture(G), d.file("g/model.gguf"));
                 patchAt(d.file("g/model.gguf"), 4, {4, 0, 0, 0});
                 return d.file("g/model.gguf");
               }});
  v.push_back({"GGUF truncated data", "WS-I019", "blk.1.ffn_down_exps.weight", [=](auto& d) {
                 fs::create_directories(d.file("g"));
                 wstest::copyCheckpoint(wstest::fixture(G), d.file("g/model.gguf"));
                 fs::resize_file(d.file("g/model.gguf"), fs::file_size(d.file("g/model.gguf")) - 1000);
                 return d.file("g/model.gguf");
               }});
  v.push_back({"GGUF type id out of range", "WS-I006", "blk.0.attn_v.weight", [=](auto& d) {
                 fs::create_directories(d.file("g"));
                 std::string f = d.file("g/model.gguf");
                 wstest::copyCheckpoint(wstest::fixture(G), f);
                 patchAt(f, ggufInfoAfterName(f, "blk.0.attn_v.weight") + 4 + 2 * 8, {77, 0, 0, 0});
                 return f;
               }});
  v.push_back({"GGUF misaligned offset", "WS-I022", "blk.0.attn_v.weight", [=](auto& d) {
                 fs::create_directories(d.file("g"));
                 std::string f = d.file("g/model.gguf");
                 wstest::copyCheckpoint(wstest::fixture(G), f);
                 const uint64_t at = ggufInfoAfterName(f, "blk.0.attn_v.weight") + 4 + 2 * 8 + 4;
                 std::ifstream in(f, std::ios::binary);
                 in.seekg(std::streamoff(at));
                 uint64_t off = 0;
                 in.read(reinterpret_cast<char*>(&off), 8);
                 off += 4;
                 std::vector<uint8_t> b(8);
                 std::memcpy(b.data(), &off, 8);
                 patchAt(f, at, b);
                 return f;
               }});
  v.push_back({"GGUF split missing", "WS-I013", "00002-of-00002", [](auto& d) {
                 fs::create_directories(d.file("g"));
                 wstest::copyCheckpoint(wstest::fixture("gguf/tiny-qwen3moe-kquants-00001-of-00002.gguf"), d.file("g/m-00001-of-00002.gguf"));
                 return d.file("g/m-00001-of-00002.gguf");
               }});
  // ---- completeness
  v.push_back({"expert removed", "WS-C001", L2 + "3.gate_proj.weight", [](auto& d) {
                 return removeTensors(d, Q, {L2 + "3.gate_proj.weight", L2 + "3.up_proj.weight", L2 + "3.down_proj.weight"});
               }});
  // Every routed expert of layer 2 gone, its router kept: each seed loader fails on the layer.
  v.push_back({"all experts of a layer removed", "WS-C001", L2 + "0.down_proj.weight", [](auto& d) {
                 std::vector<std::string> drop;
                 for (int e = 0; e < 8; ++e)
                   for (const char* p : {"gate_proj", "up_proj", "down_proj"}) drop.push_back(L2 + std::to_string(e) + "." + p + ".weight");
                 return removeTensors(d, Q, drop);
               }});
  v.push_back({"projection removed", "WS-C002", L1 + "5.up_proj.weight", [](auto& d) { return removeTensors(d, Q, {L1 + "5.up_proj.weight"}); }});
  v.push_back({"dense projection removed", "WS-C002", "model.layers.0.mlp.up_proj.weight", [](auto& d) { return removeTensors(d, Q, {"model.layers.0.mlp.up_proj.weight"}); }});
  v.push_back({"router removed", "WS-C008", "model.layers.1.mlp.gate.weight", [](auto& d) { return removeTensors(d, Q, {"model.layers.1.mlp.gate.weight"}); }});
  v.push_back({"extra expert", "WS-C004", L1 + "8.gate_proj.weight", [](auto& d) {
                 std::string dir = fixtureCopy(d, Q);
                 std::string file = shardOf(dir, L1 + "7.gate_proj.weight");
                 auto f = wstest::readSt(file);
                 auto e = *f.find(L1 + "7.gate_proj.weight");
                 e.name = L1 + "8.gate_proj.weight";
                 f.tensors.push_back(e);
                 wstest::writeSt(file, f);
                 wstest::editJson(dir + "/model.safetensors.index.json", [&](Json& j) { j["weight_map"][e.name] = fs::path(file).filename().string(); });
                 fixIndexTotal(dir);
                 return dir;
               }});
  v.push_back({"layer pattern disagrees", "WS-C005", "model.layers.0.mlp.gate_proj.weight", [](auto& d) {
                 std::string dir = fixtureCopy(d, Q);
                 wstest::editJson(dir + "/config.json", [](Json& j) { j["mlp_only_layers"] = Json::array(); });
                 return dir;
               }});
  v.push_back({"mixed fused and per-expert", "WS-C007", "model.language_model.layers.1.mlp.experts.0.gate_proj.weight", [](auto& d) {
                 return editTensor(d, "hf/qwen3_vl_moe", "model.language_model.layers.1.mlp.gate.weight", [](auto& f, auto&) {
                   wstest::StEntry e{"model.language_model.layers.1.mlp.experts.0.gate_proj.weight", "BF16", {128, 256}, std::vector<uint8_t>(128 * 256 * 2)};
                   for (size_t i = 0; i < e.data.size(); i += 2) e.data[i] = uint8_t(i / 2), e.data[i + 1] = 0x3C;  // 1.0 .. 2.0, varying
                   f.tensors.push_back(e);
                 });
               }});
  v.push_back({"scale removed", "WS-C003", L1 + "3.up_proj.weight", [](auto& d) {
                 return editTensor(d, F8, L1 + "3.up_proj.weight_scale_inv", [](auto& f, auto&) { f.remove(L1 + "3.up_proj.weight_scale_inv"); });
               }});
  v.push_back({"undeclared MTP layer", "WS-C006", "", [](auto& d) {
                 std::string dir = synth(d, "deepseek-v3", "bf16");
                 wstest::editJson(dir + "/config.json", [](Json& j) { j["num_nextn_predict_layers"] = 0; });
                 return dir;
               },
               nullptr, val::Severity::Warning});  // an MTP layer nobody declared is a warning, a missing declared one info
  // ---- shapes
  v.push_back({"scale of the wrong shape", "WS-S004", "model.layers.1.mlp.experts.2.down_proj.weight_scale_inv", [](auto& d) {
                 std::string dir = synth(d, "deepseek-v3", "fp8-block");
                 auto f = wstest::readSt(dir + "/model.safetensors");
                 auto* s = f.find("model.layers.1.mlp.experts.2.down_proj.weight_scale_inv");
                 s->shape = {3, 1};
                 s->data.resize(12, 0);
                 wstest::fill32(s->data, 0.001f);
                 wstest::writeSt(dir + "/model.safetensors", f);
                 return dir;
               }});
  v.push_back({"router of the wrong shape", "WS-S002", "model.layers.1.mlp.gate.weight", [](auto& d) {
                 return editTensor(d, Q, "model.layers.1.mlp.gate.weight", [](auto&, auto& t) {
                   t.shape = {7, 256};
                   t.data.resize(7 * 256 * 2);
                 });
               }});
  v.push_back({"expert of the wrong shape", "WS-S001", L2 + "2.gate_proj.weight", [](auto& d) {
                 return editTensor(d, Q, L2 + "2.gate_proj.weight", [](auto&, auto& t) {
                   t.shape = {64, 256};
                   t.data.resize(64 * 256 * 2);
                 });
               }});
  v.push_back({"fused tensor of the wrong shape", "WS-S003", "model.language_model.layers.0.mlp.experts.down_proj", [](auto& d) {
                 return editTensor(d, "hf/qwen3_vl_moe", "model.language_model.layers.0.mlp.experts.down_proj", [](auto&, auto& t) {
                   t.shape = {8, 256, 64};
                   t.data.resize(8 * 256 * 64 * 2);
                 });
               }});
  v.push_back({"config whose kv heads the attention does not hold", "WS-S008", "model.layers.0.self_attn.k_proj.weight",
               withSideFiles({}, [](Json& j) { j["num_key_value_heads"] = 4; })});
  v.push_back({"weight_shape that lies", "WS-S006", "model.layers.1.mlp.experts.4.up_proj.weight_shape", [](auto& d) {
                 std::string dir = synth(d, "deepseek-v3", "int4-ct");
                 auto f = wstest::readSt(dir + "/model.safetensors");
                 auto* s = f.find("model.layers.1.mlp.experts.4.up_proj.weight_shape");
                 int64_t v2[2] = {128, 512};
                 std::memcpy(s->data.data(), v2, 16);
                 wstest::writeSt(dir + "/model.safetensors", f);
                 return dir;
               }});
  // ---- scales and values
  auto scaleCase = [](const char* name, const char* code, float value) {
    return Case{name, code, L2 + "6.down_proj.weight_scale_inv", [value](auto& d) {
                  return editTensor(d, F8, L2 + "6.down_proj.weight_scale_inv", [value](auto&, auto& t) { wstest::fill32(t.data, value); });
                }};
  };
  v.push_back(scaleCase("scales set to NaN", "WS-V001", NAN));
  v.push_back(scaleCase("scales set to Inf", "WS-V002", INFINITY));
  v.push_back(scaleCase("scales set negative", "WS-V003", -0.001f));
  // One negative scale among the tensor's positive ones is as wrong as all of them.
  v.push_back({"one scale negative", "WS-V003", L2 + "6.down_proj.weight_scale_inv", [](auto& d) {
                 return editTensor(d, F8, L2 + "6.down_proj.weight_scale_inv", [](auto&, auto& t) {
                   float first;
                   std::memcpy(&first, t.data.data(), 4);
                   first = -first;
                   std::memcpy(t.data.data(), &first, 4);
                 });
               }});
  v.push_back(scaleCase("scales set to zero", "WS-V004", 0.0f));
  v.push_back(scaleCase("scales set to 1e-38", "WS-V005", 1e-38f));
  // The fixture's scales sit at 2^-12.4 (0.00018): 16x more is a plausible outlier, 2^11x more a
  // far one whose weights still stay under 1e3.
  v.push_back(scaleCase("scales 16x their peers'", "WS-V007", 0.003f));
  v.push_back(scaleCase("scales 2^11x their peers'", "WS-V011", 0.37f));
  // What transformers' FP8 export was seen writing for MLA attention projections: uninitialised
  // memory, positive, so no sign or NaN rule sees it.
  const std::string attn = "model.layers.1.self_attn.";
  v.push_back({"uninitialised scale 1e-37 among good ones", "WS-V010", attn + "k_proj.weight_scale_inv", [attn](auto& d) {
                 return editTensor(d, F8, attn + "k_proj.weight_scale_inv", [](auto&, auto& t) {
                   const float garbage = 1e-37f;
                   std::memcpy(t.data.data(), &garbage, 4);
                 });
               }});
  v.push_back({"uninitialised scales 5734.4", "WS-V010", attn + "o_proj.weight_scale_inv", [attn](auto& d) {
                 return editTensor(d, F8, attn + "o_proj.weight_scale_inv", [](auto&, auto& t) { wstest::fill32(t.data, 5734.4f); });
               }});
  v.push_back({"FP8 codes that decode to ~0", "WS-V012", attn + "q_proj.weight", [attn](auto& d) {
                 // 0x01 and 0x81: the smallest E4M3 subnormals (+-2^-9), times a 0.00018 scale.
                 return editTensor(d, F8, attn + "q_proj.weight", [](auto&, auto& t) {
                   for (size_t i = 0; i < t.data.size(); ++i) t.data[i] = i % 3 ? 0x01 : 0x81;
                 });
               }});
  v.push_back({"E8M0 NaN code", "WS-V006", "model.layers.1.mlp.experts.gate_up_proj_scales", [](auto& d) {
                 std::string dir = synth(d, "gpt-oss", "mxfp4");
                 auto f = wstest::readSt(dir + "/model.safetensors");
                 auto* s = f.find("model.layers.1.mlp.experts.gate_up_proj_scales");
                 std::fill(s->data.begin(), s->data.begin() + 7, 0xFF);
                 wstest::writeSt(dir + "/model.safetensors", f);
                 return dir;
               }});
  v.push_back({"expert zeroed", "WS-V009", L1 + "4.down_proj.weight", [](auto& d) {
                 return editTensor(d, Q, L1 + "4.down_proj.weight", [](auto&, auto& t) { std::fill(t.data.begin(), t.data.end(), 0); });
               }});
  v.push_back({"expert constant", "WS-V009", L2 + "0.gate_proj.weight", [](auto& d) {
                 return editTensor(d, Q, L2 + "0.gate_proj.weight", [](auto&, auto& t) { wstest::fill16(t.data, 0x3F80); });
               }});
  // WS-V013: an expert copied into another (every projection), as an upcycling or merge script
  // leaves it - per-expert safetensors, and a GGUF's stacked experts (expert 1's slice of each
  // ffn_*_exps written over expert 3's). The fixtures as written are the clean twins.
  v.push_back({"expert copied into another", "WS-V013", L1 + "5.down_proj.weight", [](auto& d) {
                 return editFile(fixtureCopy(d, Q), L1 + "2.down_proj.weight", [](wstest::StFile& f) {
                   for (const char* p : {"down_proj.weight", "gate_proj.weight", "up_proj.weight"}) f.find(L1 + "5." + p)->data = f.find(L1 + "2." + p)->data;
                 });
               }});
  v.push_back({"stacked GGUF expert copied into another", "WS-V013", "blk.1.ffn_down_exps.weight", [](auto& d) {
                 const std::string in = wstest::fixture("gguf/tiny-qwen3moe-kquants.gguf");
                 std::ifstream is(in, std::ios::binary);
                 std::string b((std::istreambuf_iterator<char>(is)), std::istreambuf_iterator<char>());
                 const GgufFile g = parseGguf(std::span(reinterpret_cast<const uint8_t*>(b.data()), b.size()), in);
                 for (const GgufTensorInfo& t : g.tensors) {
                   if (t.name.rfind("blk.1.ffn_", 0) != 0 || t.name.find("_exps.") == std::string::npos) continue;
                   const uint64_t n = t.bytes / uint64_t(t.ne[2]), at = g.dataStart + t.relOffset;
                   std::memmove(b.data() + at + 3 * n, b.data() + at + 1 * n, n);
                 }
                 const std::string out = d.file("tiny-qwen3moe-kquants.gguf");
                 wstest::writeFile(out, b);
                 return out;
               }});
  // WS-V015: expert 2 copied over expert 5 with noise - every third BF16 value's lowest mantissa
  // bit flipped, a relative change of up to 2^-7 - as a merge that perturbs a copy leaves it.
  // WS-V016: expert 6's down_proj scaled 10x (each BF16 value times 10, rounded to nearest even).
  // The fixtures as written are the clean twins; nearDuplicateAndNormTwins holds the near ones.
  v.push_back({"expert copied with noise", "WS-V015", L1 + "5.down_proj.weight", [](auto& d) {
                 return editFile(fixtureCopy(d, Q), L1 + "2.down_proj.weight", [](wstest::StFile& f) {
                   for (const char* p : {"down_proj.weight", "gate_proj.weight", "up_proj.weight"}) {
                     auto& copy = f.find(L1 + "5." + p)->data;
                     copy = f.find(L1 + "2." + p)->data;
                     for (size_t i = 0; i < copy.size(); i += 6) copy[i] ^= 0x01;
                   }
                 });
               }});
  v.push_back({"expert scaled 10x", "WS-V016", L2 + "6.down_proj.weight", [](auto& d) {
                 return editFile(fixtureCopy(d, Q), L2 + "6.down_proj.weight", [](wstest::StFile& f) { scaleBf16(f.find(L2 + "6.down_proj.weight")->data, 10.0f); });
               }});
  // WS-V014: a correction bias no score can make up (vLLM 0.11.0 grouped_topk: score in [0, 1] +
  // bias). One expert 5 below its 15 rivals, 4 chosen per token; and, with n_group 2 and
  // topk_group 1, a group whose biases sit 5 below the other's. The twins within reach are clean
  // (routerBiasWithinReachIsClean).
  auto biased = [](std::function<void(std::vector<float>&)> set, std::function<void(Json&)> config) {
    return [set, config](const wstest::TempDir& d) {
      std::string dir = synth(d, "deepseek-v3", "bf16");
      wstest::editJson(dir + "/config.json", config);
      auto f = wstest::readSt(dir + "/model.safetensors");
      auto* t = f.find("model.layers.1.mlp.gate.e_score_correction_bias");
      std::vector<float> b(t->data.size() / 4, 0.0f);
      set(b);
      std::memcpy(t->data.data(), b.data(), t->data.size());
      wstest::writeSt(dir + "/model.safetensors", f);
      return dir;
    };
  };
  v.push_back({"expert the router's bias never lets through", "WS-V014", "model.layers.1.mlp.gate.e_score_correction_bias",
               biased([](auto& b) { b[3] = -5.0f; }, [](Json&) {})});
  v.push_back({"expert group the router's bias never keeps", "WS-V014", "model.layers.1.mlp.gate.e_score_correction_bias",
               biased([](auto& b) { std::fill(b.begin() + 8, b.end(), 5.0f); }, [](Json& j) { j["n_group"] = 2, j["topk_group"] = 1; })});
  v.push_back({"NaN weights", "WS-V008", "model.layers.0.self_attn.q_proj.weight", [](auto& d) {
                 return editTensor(d, Q, "model.layers.0.self_attn.q_proj.weight", [](auto&, auto& t) {
                   t.data[100] = 0xC0;
                   t.data[101] = 0x7F;
                 });
               }});
  // The config declares FP8 blocks (weight_block_size); one expert carries a per-tensor scale.
  v.push_back({"a scheme the config does not declare", "WS-S007", L2 + "6.down_proj.weight", [](auto& d) {
                 return editFile(fixtureCopy(d, F8), "lm_head.weight", [](wstest::StFile& f) {
                   wstest::StEntry* s = f.find(L2 + "6.down_proj.weight_scale_inv");
                   s->name = L2 + "6.down_proj.weight_scale";
                   s->shape = {};
                   s->data.resize(4);  // the first block's scale, for the whole tensor
                 });
               }});
  // ---- activation and KV-cache scales, on llm-compressor's own FP8 checkpoint (channel weight
  // scales, input_activations dynamic, kv_cache_scheme null: tests/data/compressed_tensors)
  v.push_back({"input scale stored, activations declared dynamic", "WS-C012", L1CT + "2.up_proj.input_scale", [](auto& d) {
                 return editFile(ctCopy(d), "", [](wstest::StFile& f) { f.tensors.push_back(f32Scalar(L1CT + "2.up_proj.input_scale", 0.02f)); });
               }});
  v.push_back({"input scale missing, activations declared static", "WS-C011", L1CT + "2.up_proj.weight", [](auto& d) {
                 return staticActivations(d, [](wstest::StFile& f) { f.remove(L1CT + "2.up_proj.input_scale"); });
               }});
  // NVFP4 W4A4 MoE: vLLM 0.11.0 allocates w13_input_global_scale [experts, 2] and
  // w2_input_global_scale [experts] with torch.empty and uses each expert's own
  // (compressed_tensors_moe.py CompressedTensorsW4A4MoeMethod.create_weights and
  // process_weights_after_loading: g1_alphas, g2_alphas per expert); one never stored stays garbage.
  v.push_back({"NVFP4 W4A4: an expert without input_global_scale", "WS-C011", L1CT + "3.gate_proj.weight_packed", [](auto& d) {
                 return nvfp4W4A4(d, [](wstest::StFile& f) { f.remove(L1CT + "3.gate_proj.input_global_scale"); });
               }});
  // What a calibration that routed no token to an expert leaves (llm-compressor PR #2826).
  v.push_back({"an expert's input scale NaN", "WS-V001", L1CT + "3.down_proj.input_scale", [](auto& d) {
                 return staticActivations(d, [](wstest::StFile& f) { wstest::fill32(f.find(L1CT + "3.down_proj.input_scale")->data, NAN); });
               }});
  v.push_back({"an expert's input scale zero", "WS-V004", L1CT + "3.down_proj.input_scale", [](auto& d) {
                 return staticActivations(d, [](wstest::StFile& f) { wstest::fill32(f.find(L1CT + "3.down_proj.input_scale")->data, 0.0f); });
               }});
  // The other experts' down_proj input scales sit at 2^-5.4..2^-5.0: 2^12 times theirs is far.
  v.push_back({"an expert's input scale 2^12x its peers'", "WS-V011", L1CT + "0.down_proj.input_scale", [](auto& d) {
                 return staticActivations(d, [](wstest::StFile& f) { wstest::fill32(f.find(L1CT + "0.down_proj.input_scale")->data, 0.024f * 4096); });
               }});
  v.push_back({"KV cache declared quantized, a layer without k_scale", "WS-C013", "model.layers.1.self_attn.k_proj.weight", [](auto& d) {
                 const std::string dir = editFile(ctCopy(d), "", [](wstest::StFile& f) {
                   f.tensors.push_back(f32Scalar("model.layers.0.self_attn.k_scale", 0.05f));
                   f.tensors.push_back(f32Scalar("model.layers.0.self_attn.v_scale", 0.04f));
                   f.tensors.push_back(f32Scalar("model.layers.1.self_attn.v_scale", 0.04f));
                 });
                 wstest::editJson(dir + "/config.json", [](Json& j) {
                   j["quantization_config"]["kv_cache_scheme"] = {{"num_bits", 8}, {"type", "float"}, {"strategy", "tensor"}, {"dynamic", false}, {"symmetric", true}};
                 });
                 return dir;
               }});
  // ---- the compressed-tensors config's targets and ignore list against the stored tensors
  auto ctConfig = [](const wstest::TempDir& d, const std::function<void(Json&)>& edit) {
    const std::string dir = ctCopy(d);
    wstest::editJson(dir + "/config.json", [&](Json& j) { edit(j["quantization_config"]); });
    return dir;
  };
  v.push_back({"a quantized module under ignore", "WS-S009", "model.layers.1.self_attn.o_proj.weight", [ctConfig](auto& d) {
                 return ctConfig(d, [](Json& q) { q["ignore"].push_back("re:.*layers\\.1\\.self_attn\\.o_proj$"); });
               }});
  v.push_back({"an unquantized router the targets name", "WS-S009", "model.layers.1.mlp.gate.weight", [ctConfig](auto& d) {
                 return ctConfig(d, [](Json& q) {
                   q["ignore"] = Json::array({"model.layers.0.mlp.gate", "lm_head"});
                   q["config_groups"]["group_0"]["targets"].push_back("re:.*mlp\\.gate$");
                 });
               }});
  v.push_back({"an ignore entry in vLLM's fused naming", "WS-S010", "config.json", [ctConfig](auto& d) {
                 return ctConfig(d, [](Json& q) { q["ignore"].push_back("model.layers.0.self_attn.qkv_proj"); });
               }});
  // re.match anchors at the start of the name: without a leading .* this pattern matches nothing.
  v.push_back({"an ignore pattern that does not match from the start", "WS-S010", "config.json", [ctConfig](auto& d) {
                 return ctConfig(d, [](Json& q) { q["ignore"] = Json::array({"model.layers.0.mlp.gate", "re:layers\\.1\\.mlp\\.gate$", "lm_head"}); });
               }});
  // ---- the other writers' lists, matched as vLLM 0.11.0 matches each
  auto listConfig = [](const wstest::TempDir&, const std::string& dir, const std::function<void(Json&)>& edit) {
    wstest::editJson(dir + "/config.json", [&](Json& j) { edit(j["quantization_config"]); });
    return dir;
  };
  auto libraryCopy = [](const wstest::TempDir& d, const std::string& folder) {
    const std::string dir = d.file("ckpt");
    std::filesystem::copy(wstest::sourceDir() + "/tests/data/library_quant/" + folder, dir, std::filesystem::copy_options::recursive);
    return dir;
  };
  v.push_back({"FP8 ignored_layers names a quantized module", "WS-S009", "model.layers.0.self_attn.o_proj.weight", [listConfig](auto& d) {
                 return listConfig(d, fixtureCopy(d, "hf/qwen3_moe_fp8"), [](Json& q) { q["ignored_layers"] = Json::array({"model.layers.0.self_attn.o_proj"}); });
               }});
  v.push_back({"FP8 ignored_layers leaves one shard of qkv_proj out", "WS-S009", "model.layers.0.self_attn.qkv_proj", [listConfig](auto& d) {
                 return listConfig(d, fixtureCopy(d, "hf/qwen3_moe_fp8"), [](Json& q) { q["ignored_layers"] = Json::array({"model.layers.0.self_attn.q_proj"}); });
               }});
  v.push_back({"FP8 ignored_layers in vLLM's fused naming", "WS-S010", "config.json", [listConfig](auto& d) {
                 return listConfig(d, fixtureCopy(d, "hf/qwen3_moe_fp8"), [](Json& q) { q["modules_to_not_convert"] = Json::array({"lm_head", "model.layers.0.self_attn.qkv_proj"}); });
               }});
  v.push_back({"AWQ modules_to_not_convert covers quantized experts", "WS-S009", "model.layers.0.mlp.experts.0.down_proj.qweight", [listConfig, libraryCopy](auto& d) {
                 return listConfig(d, libraryCopy(d, "awq-gemm"), [](Json& q) { q["modules_to_not_convert"] = Json::array({"mlp.experts"}); });
               }});
  // vLLM's bitsandbytes never leaves a FusedMoE unquantized: an entry naming experts excludes nothing.
  v.push_back({"bitsandbytes skip entry naming experts", "WS-S010", "config.json", [listConfig, libraryCopy](auto& d) {
                 return listConfig(d, libraryCopy(d, "bnb-nf4"), [](Json& q) { q["llm_int8_skip_modules"] = Json::array({"experts"}); });
               }});
  v.push_back({"GPTQ dynamic -: skips a quantized MoE layer", "WS-S009", "model.layers.0.mlp.experts.0.down_proj.qweight", [listConfig, libraryCopy](auto& d) {
                 return listConfig(d, libraryCopy(d, "gptq-4bit"), [](Json& q) { q["dynamic"] = {{"-:.*mlp\\.experts$", Json::object()}}; });
               }});
  // ---- completeness the seed loader checks
  v.push_back({"a layer the config declares is absent", "WS-C009", "model.layers.1.block_sparse_moe.experts.0.w1.weight", [](auto& d) {
                 return editFile(fixtureCopy(d, "hf/mixtral"), "lm_head.weight", [](wstest::StFile& f) {
                   std::vector<std::string> drop;
                   for (const auto& t : f.tensors)
                     if (t.name.rfind("model.layers.1.", 0) == 0) drop.push_back(t.name);
                   for (const auto& n : drop) f.remove(n);
                 });
               }});
  v.push_back({"empty(0) placeholder for an expert", "WS-C010", "model.layers.0.block_sparse_moe.experts.3.w1.weight", [](auto& d) {
                 return editTensor(d, "hf/mixtral", "model.layers.0.block_sparse_moe.experts.3.w1.weight", [](auto&, auto& t) {
                   t.shape = {0};
                   t.data.clear();
                 });
               }});
  // ---- what a named runtime refuses (info without --runtime, error with it)
  v.push_back({"hidden not a multiple of 128 for KTransformers native FP8", "WS-R001", "", [](auto& d) {
                 auto o = synthOptions(d, "deepseek-v3", "fp8-block");
                 o.hidden = 192;
                 return written(o);
               }, "kt"});
  // transformers 5's own FP8 export squeezes per-expert scale grids to 1-D: KTransformers refuses them.
  v.push_back({"squeezed FP8 scale grids (transformers export) for KTransformers", "WS-R004", L1 + "0.down_proj.weight_scale_inv",
               [](auto& d) { return fixtureCopy(d, F8); }, "kt"});
  v.push_back({"expert without weight_shape for KTransformers RAWINT4", "WS-R002", "model.layers.1.mlp.experts.2.up_proj.weight_packed", [](auto& d) {
                 return editFile(written(synthOptions(d, "kimi-k2", "int4-ct")), "model.layers.1.mlp.experts.2.up_proj.weight_packed",
                                 [](wstest::StFile& f) { f.remove("model.layers.1.mlp.experts.2.up_proj.weight_shape"); });
               }, "kt"});
  // A KTransformers INT8 expert folder without layer 1's blk.1.* experts (issue 50 item 2): the
  // seed's load_experts_from_kt_weight_path fails on it ("No weights found for layer 1").
  v.push_back({"a KTransformers folder without a layer's experts", "WS-C001", "blk.1.ffn_down_exps.0.numa.0.weight", [](auto& d) {
                 auto o = synthOptions(d, "qwen3-moe", "kt-int8");
                 o.numaNodes = 2;
                 return editFile(written(o), "", [](wstest::StFile& f) {
                   std::vector<std::string> drop;
                   for (const auto& t : f.tensors)
                     if (t.name.starts_with("blk.1.")) drop.push_back(t.name);
                   for (const auto& n : drop) f.remove(n);
                 });
               }, "kt"});
  // A KTransformers INT8 part whose scale was written to another file (issue 50 item 10): the seed's
  // load_experts_from_kt_weight_path reads the scale from the weight's file and fails there.
  v.push_back({"a KTransformers INT8 scale in another file than its weight", "WS-R006", "blk.1.ffn_gate_exps.0.numa.1.scale", [](auto& d) {
                 auto o = synthOptions(d, "qwen3-moe", "kt-int8");
                 o.numaNodes = 2;
                 const std::string dir = written(o);
                 wstest::StFile moved;
                 editFile(dir, "", [&](wstest::StFile& f) {
                   moved.tensors.push_back(*f.find("blk.1.ffn_gate_exps.0.numa.1.scale"));
                   f.remove("blk.1.ffn_gate_exps.0.numa.1.scale");
                 });
                 wstest::writeSt(dir + "/model-scales.safetensors", moved);
                 return dir;
               }, "kt"});
  // A BF16 expert left among FP8 ones (its scale gone with it): KTransformers' native FP8 loader
  // looks up every expert's weight_scale_inv and refuses the layer, whatever the scheme says.
  v.push_back({"a BF16 expert in an FP8 checkpoint for KTransformers", "WS-R004", "model.layers.1.mlp.experts.3.gate_proj.weight", [](auto& d) {
                 return editFile(written(synthOptions(d, "qwen3-moe", "fp8-block")), "model.layers.1.mlp.experts.3.gate_proj.weight", [](wstest::StFile& f) {
                   wstest::StEntry* w = f.find("model.layers.1.mlp.experts.3.gate_proj.weight");
                   w->dtype = "BF16";
                   w->data.resize(w->data.size() * 2);
                   for (size_t i = 0; i < w->data.size() / 2; ++i) {
                     const uint16_t v = uint16_t(0x3C00 + i % 251);  // small, varied BF16 values
                     std::memcpy(w->data.data() + 2 * i, &v, 2);
                   }
                   f.remove("model.layers.1.mlp.experts.3.gate_proj.weight_scale_inv");
                 });
               }, "kt", std::nullopt, "WS-S009"});  // vLLM's FP8 MoE quantizes every expert of the layer too
  // The other refusal branches of the KT loaders (issue 50 item 7), each on one expert of a synth
  // checkpoint, its values kept: KTransformers' loaders check names and dtypes
  // (load_block_fp8_experts_from_checkpoint_files, load_rawint4_experts_from_checkpoint_files).
  auto toF16 = [](wstest::StEntry* t, bool fromBf16) {
    const size_t n = t->data.size() / (fromBf16 ? 2 : 4);
    std::vector<uint8_t> out(n * 2);
    for (size_t i = 0; i < n; ++i) {
      float f;
      if (fromBf16) {
        uint16_t b;
        std::memcpy(&b, t->data.data() + 2 * i, 2);
        const uint32_t u = uint32_t(b) << 16;
        std::memcpy(&f, &u, 4);
      } else {
        std::memcpy(&f, t->data.data() + 4 * i, 4);
      }
      const uint16_t h = num::hdToF16Rne(f);
      std::memcpy(out.data() + 2 * i, &h, 2);
    }
    t->dtype = "F16";
    t->data = std::move(out);
  };
  v.push_back({"an F16 block scale for KTransformers native FP8", "WS-R004", L1 + "2.up_proj.weight_scale_inv", [toF16](auto& d) {
                 return editFile(written(synthOptions(d, "qwen3-moe", "fp8-block")), L1 + "2.up_proj.weight_scale_inv",
                                 [toF16](wstest::StFile& f) { toF16(f.find(L1 + "2.up_proj.weight_scale_inv"), false); });
               }, "kt"});
  v.push_back({"an FP8 expert without its weight_scale_inv for KTransformers", "WS-R004", L1 + "2.up_proj.weight", [](auto& d) {
                 return editFile(written(synthOptions(d, "qwen3-moe", "fp8-block")), L1 + "2.up_proj.weight",
                                 [](wstest::StFile& f) { f.remove(L1 + "2.up_proj.weight_scale_inv"); });
               }, "kt", std::nullopt, "WS-C003"});  // the weight cannot be dequantized either
  // WS-R004's remaining branches, each alone (issue 50 item 7): an expert stored as E5M2 with its
  // scale kept, a block size other than [128, 128] (the loader's first check: its grids are not
  // listed again), and fused FP8 experts.
  v.push_back({"an E5M2 expert (its scale kept) for KTransformers native FP8", "WS-R004", L1 + "2.up_proj.weight", [](auto& d) {
                 return editFile(written(synthOptions(d, "qwen3-moe", "fp8-block")), L1 + "2.up_proj.weight", [](wstest::StFile& f) {
                   wstest::StEntry* w = f.find(L1 + "2.up_proj.weight");
                   w->dtype = "F8_E5M2";
                   for (auto& b : w->data) b = uint8_t(num::hdToF16Rne(num::hdE4m3ToFloat(b)) >> 8);  // each value as E5M2 (a half's top byte)
                 });
               }, "kt"});
  // The same checkpoint in blocks of [128, 64]: every scale grid doubled along its columns (each
  // 128 x 128 block's scale now for its two halves), so nothing else about it changes.
  v.push_back({"FP8 blocks of [128, 64] for KTransformers native FP8", "WS-R004", "config.json", [](auto& d) {
                 auto o = synthOptions(d, "qwen3-moe", "fp8-block");
                 o.shards = 1;
                 const std::string dir = editFile(written(o), "", [](wstest::StFile& f) {
                   for (auto& t : f.tensors) {
                     if (!t.name.ends_with("weight_scale_inv") || t.shape.size() != 2) continue;
                     const size_t rows = t.shape[0], cols = t.shape[1], size = t.data.size() / (rows * cols);
                     std::vector<uint8_t> doubled(t.data.size() * 2);
                     for (size_t i = 0; i < rows * cols; ++i)
                       for (size_t half = 0; half < 2; ++half) std::memcpy(doubled.data() + (2 * i + half) * size, t.data.data() + i * size, size);
                     t.shape[1] = cols * 2;
                     t.data = std::move(doubled);
                   }
                 });
                 wstest::editJson(dir + "/config.json", [](Json& j) { j["quantization_config"]["weight_block_size"] = Json::array({128, 64}); });
                 return dir;
               }, "kt"});
  v.push_back({"fused FP8 experts for KTransformers native FP8", "WS-R004", "model.language_model.layers.0.mlp.experts.down_proj", [](auto& d) {
                 return written(synthOptions(d, "qwen3-vl-moe", "fp8-block"));
               }, "kt"});
  v.push_back({"an F16 group scale for KTransformers RAWINT4", "WS-R002", L1 + "2.up_proj.weight_scale", [toF16](auto& d) {
                 return editFile(written(synthOptions(d, "kimi-k2", "int4-ct")), L1 + "2.up_proj.weight_scale",
                                 [toF16](wstest::StFile& f) { toF16(f.find(L1 + "2.up_proj.weight_scale"), true); });
               }, "kt"});
  // A zero point beside an expert's int4 codes, in both spellings KTransformers checks
  // (weight_zero_point, compressed-tensors' packed [rows/8, groups] I32, and a bare zero_point).
  for (const char* suffix : {"weight_zero_point", "zero_point"}) {
    const std::string zp = L1 + "2.up_proj." + suffix;
    v.push_back({suffix[0] == 'w' ? "a weight_zero_point for KTransformers RAWINT4" : "a bare zero_point for KTransformers RAWINT4", "WS-R002", zp, [zp](auto& d) {
                   return editFile(written(synthOptions(d, "kimi-k2", "int4-ct")), L1 + "2.up_proj.weight_packed", [zp](wstest::StFile& f) {
                     const wstest::StEntry* w = f.find(L1 + "2.up_proj.weight_packed");
                     const uint64_t rows = w->shape[0], cols = w->shape[1] * 8;
                     std::vector<uint8_t> words(rows / 8 * (cols / 32) * 4);
                     for (size_t i = 0; i < words.size(); i += 4) words[i] = 0x88, words[i + 1] = 0x88, words[i + 2] = 0x88, words[i + 3] = 0x88;  // zero 8 everywhere
                     f.tensors.push_back({zp, "I32", {rows / 8, cols / 32}, words});
                   });
                 }, "kt"});
  }
  // Codes of another shape than I32 [rows, cols/8] or U8 [rows, cols/2] (the same bytes as I32
  // [rows/2, cols/4]), which KTransformers RAWINT4 refuses: their ratio to weight_shape reads as
  // 8-bit codes, another scheme than the config declares, so WS-S007 says it (beside WS-S006) and
  // the RAWINT4 rule, which looks at int4 experts, is not reached.
  v.push_back({"int4 codes of another shape for KTransformers RAWINT4", "WS-S007", L1 + "2.up_proj.weight_packed", [](auto& d) {
                 return editFile(written(synthOptions(d, "kimi-k2", "int4-ct")), L1 + "2.up_proj.weight_packed", [](wstest::StFile& f) {
                   wstest::StEntry* w = f.find(L1 + "2.up_proj.weight_packed");
                   w->shape = {w->shape[0] / 2, w->shape[1] * 2};
                 });
               }, "kt", std::nullopt, "WS-S006"});
  // One expert's scales of group 64 (every other column of its group-32 grid kept).
  v.push_back({"an expert's scales of group 64 for KTransformers RAWINT4", "WS-R002", L1 + "2.up_proj.weight_scale", [](auto& d) {
                 return editFile(written(synthOptions(d, "kimi-k2", "int4-ct")), L1 + "2.up_proj.weight_scale", [](wstest::StFile& f) {
                   wstest::StEntry* s = f.find(L1 + "2.up_proj.weight_scale");
                   const uint64_t rows = s->shape[0], cols = s->shape[1];
                   std::vector<uint8_t> half;
                   for (uint64_t r = 0; r < rows; ++r)
                     for (uint64_t c = 0; c < cols; c += 2) half.insert(half.end(), s->data.begin() + (r * cols + c) * 2, s->data.begin() + (r * cols + c) * 2 + 2);
                   s->shape[1] = cols / 2;
                   s->data = std::move(half);
                 });
               }, "kt"});
  // One expert's scales for half its rows: group 32 along the columns, the wrong shape still.
  v.push_back({"an expert's scales for half its rows for KTransformers RAWINT4", "WS-R002", L1 + "2.up_proj.weight_scale", [](auto& d) {
                 return editFile(written(synthOptions(d, "kimi-k2", "int4-ct")), L1 + "2.up_proj.weight_scale", [](wstest::StFile& f) {
                   wstest::StEntry* s = f.find(L1 + "2.up_proj.weight_scale");
                   s->shape[0] /= 2;
                   s->data.resize(s->data.size() / 2);
                 });
               }, "kt", std::nullopt, "WS-S004"});  // too few scales for the rows
  // The config's group size (64) where KTransformers RAWINT4 requires 32; the scales still say 32.
  v.push_back({"a config group size of 64 for KTransformers RAWINT4", "WS-R002", "", [](auto& d) {
                 const std::string dir = written(synthOptions(d, "kimi-k2", "int4-ct"));
                 wstest::editJson(dir + "/config.json", [](nlohmann::ordered_json& j) {
                   for (auto& [name, group] : j["quantization_config"]["config_groups"].items()) group["weights"]["group_size"] = 64;
                 });
                 return dir;
               }, "kt"});
  v.push_back({"an I16 tensor for the seed runtime", "WS-R005", "model.layers.0.self_attn.o_proj.weight", [](auto& d) {
                 return editTensor(d, "hf/mixtral", "model.layers.0.self_attn.o_proj.weight", [](auto&, auto& t) { t.dtype = "I16"; });
               }, "seed"});
  return v;
}

}  // namespace

class TstValidateCorpus : public QObject {
  Q_OBJECT
 private slots:
  void fixturesValidateClean_data() {
    QTest::addColumn<QString>("rel");
    QTest::addColumn<QStringList>("infos");  // the info codes expected
    QTest::newRow("qwen3_moe") << "hf/qwen3_moe" << QStringList{};
    QTest::newRow("qwen3_moe_fp8") << "hf/qwen3_moe_fp8" << QStringList{"WS-S005", "WS-R004"};  // squeezed grids: transformers reads them, KTransformers does not
    QTest::newRow("deepseek_v3") << "hf/deepseek_v3" << QStringList{"WS-C006"};
    QTest::newRow("mixtral") << "hf/mixtral" << QStringList{};
    QTest::newRow("qwen3_vl_moe") << "hf/qwen3_vl_moe" << QStringList{};
    QTest::newRow("gguf") << "gguf/tiny-qwen3moe-kquants.gguf" << QStringList{};
    QTest::newRow("gguf split") << "gguf/tiny-qwen3moe-kquants-00001-of-00002.gguf" << QStringList{};
    QTest::newRow("gguf expected") << "gguf/tiny-qwen3moe-kquants.expected.gguf" << QStringList{};
    // Gemma 4 MoE as transformers 5.25.0 writes it and llama.cpp's converter converts it: wider
    // full-attention heads and per-layer KV heads (WS-S008), a router with scale vectors beside
    // its matrix (WS-S002).
    QTest::newRow("gemma4") << "data:gemma4" << QStringList{};
    QTest::newRow("gemma4 gguf") << "data:llama_cpp/gemma4-bf16.gguf" << QStringList{};
    // DeepSeek-V3.2 with its indexer, transformers-written and llama.cpp-converted.
    QTest::newRow("deepseek_v32") << "data:deepseek_v32" << QStringList{};
    QTest::newRow("deepseek_v32 gguf") << "data:llama_cpp/deepseek-v32-bf16.gguf" << QStringList{};
  }

  void fixturesValidateClean() {
    QFETCH(QString, rel);
    QFETCH(QStringList, infos);
    const std::string path = rel.startsWith("data:") ? wstest::trackedData(rel.mid(5).toStdString()) : wstest::fixture(rel.toStdString());
    auto r = val::validatePath(path, {});
    QVERIFY(r.ok());
    QSet<QString> got;
    for (const auto& f : r.value().findings) {
      QVERIFY2(f.severity == val::Severity::Info, qPrintable(QString::fromStdString(f.code + " " + f.tensor + ": " + f.message)));
      got.insert(QString::fromStdString(f.code));
    }
    QCOMPARE(got, QSet<QString>(infos.begin(), infos.end()));
  }

  // The seed runtime converts F16 to BF16 at load (seeds/spark_runtime_weights.rs f16_to_bf16_bytes,
  // used by both disk loaders): an F16 tensor is not refused, where an I16 one is (corpus).
  void seedRuntimeTakesF16() {
    wstest::TempDir d;
    const std::string path = editTensor(d, "hf/mixtral", "model.layers.0.self_attn.o_proj.weight", [](auto&, auto& t) { t.dtype = "F16"; });
    val::ValidateOptions opt;
    opt.runtime = "seed";
    auto r = val::validatePath(path, opt);
    QVERIFY(r.ok());
    for (const auto& f : r.value().findings) QVERIFY2(f.severity != val::Severity::Error, qPrintable(QString::fromStdString(f.code + " " + f.tensor + ": " + f.message)));
  }

  void squeezedScalesAreReportedAsInfo() {
    auto r = val::validatePath(wstest::fixture(F8), {});
    size_t n = 0;
    for (const auto& f : r.value().findings) n += f.code == "WS-S005";
    QCOMPARE(n, size_t(48));  // every per-expert scale of layers 1 and 2
  }

  void corpus_data() {
    QTest::addColumn<int>("index");
    auto cs = cases();
    QVERIFY(cs.size() >= 40);
    for (size_t i = 0; i < cs.size(); ++i) QTest::newRow(cs[i].name) << int(i);
  }

  void corpus() {
    QFETCH(int, index);
    const Case c = cases()[size_t(index)];
    wstest::TempDir d;
    const std::string path = c.build(d);
    for (const char* runtime : {static_cast<const char*>(nullptr), c.runtime}) {
      val::ValidateOptions opt;
      if (runtime) opt.runtime = runtime;
      auto r = val::validatePath(path, opt);
      QVERIFY2(r.ok(), r.ok() ? "" : r.error().describe().c_str());
      int hits = 0;
      QStringList others;
      for (const auto& f : r.value().findings) {
        const bool match = f.code == c.code && (c.where.empty() || f.tensor == c.where || (f.tensor.empty() && f.file.find(c.where) != std::string::npos));
        if (match) {
          ++hits;
          // The runtime the checkpoint is meant for makes its refusal an error; any other run
          // keeps the rule's own severity.
          if (runtime) QCOMPARE(f.severity, val::Severity::Error);
          else QCOMPARE(f.severity, c.raised.value_or(val::rule(c.code).severity));
        } else if (f.severity != val::Severity::Info && !(c.also && f.code == c.also)) {
          others << QString::fromStdString(f.code + " " + f.tensor + " " + f.file + ": " + f.message);
        }
      }
      QVERIFY2(hits == 1, qPrintable(QString("expected one %1 on %2, got %3; others: %4").arg(c.code).arg(QString::fromStdString(c.where)).arg(hits).arg(others.join(" | "))));
      QVERIFY2(others.isEmpty(), qPrintable(others.join(" | ")));
      if (!c.runtime) break;
    }
  }

  // WS-V013's clean twin: expert 2 copied over expert 5, then one byte of expert 5's down_proj
  // changed where the pass's sample does not look (byte 5000 of 64 KiB; the windows start at 0,
  // 20, 40 and 60 KiB). The samples agree, the whole bytes do not: no finding. The exact copy is
  // found (the corpus case "expert copied into another").
  void nearCopyOfAnExpertIsNotADuplicate() {
    wstest::TempDir d;
    const std::string dir = editFile(fixtureCopy(d, Q), L1 + "2.down_proj.weight", [](wstest::StFile& f) {
      for (const char* p : {"down_proj.weight", "gate_proj.weight", "up_proj.weight"}) f.find(L1 + "5." + p)->data = f.find(L1 + "2." + p)->data;
      auto& down = f.find(L1 + "5.down_proj.weight")->data;
      QCOMPARE(down.size(), size_t(256 * 128 * 2));
      down[5000] ^= 0x01;
    });
    val::ValidateOptions opt;
    opt.only = {"values"};
    auto r = val::validatePath(dir, opt);
    QVERIFY(r.ok());
    for (const auto& f : r.value().findings) QVERIFY2(f.code != "WS-V013", f.message.c_str());
    // a near-duplicate, all the same: cosine 1 to four places, not byte-identical (WS-V015)
    const auto near = std::find_if(r.value().findings.begin(), r.value().findings.end(), [](const val::Finding& f) { return f.code == "WS-V015"; });
    QVERIFY(near != r.value().findings.end());
    QVERIFY2(near->message.find("1 pair of experts of layer 1 are near-duplicates, cosine at least 0.99 in every projection: experts 2 and 5 (cosine 1.0000 down, 1.0000 gate, 1.0000 up)") != std::string::npos,
             near->message.c_str());
  }

  // The report's expert health grid, from the same samples: expert 2 copied over expert 5 of layer
  // 1 with noise (as WS-V015's case), expert 6's down_proj of layer 2 scaled 10x (as WS-V016's).
  // The copy and its source name each other as nearest, at a cosine above 0.99; the scaled expert
  // sits log2(10) = 3.32 octaves above its layer's median, within its sample's error; the
  // untouched experts of the transformers fixture sit within an octave of the median and at a
  // cosine under 0.5 from any sibling (random weights: near 0).
  void expertHealthGrid() {
    wstest::TempDir d;
    const std::string dir = editFile(fixtureCopy(d, Q), L1 + "2.down_proj.weight", [](wstest::StFile& f) {
      for (const char* p : {"down_proj.weight", "gate_proj.weight", "up_proj.weight"}) {
        auto& copy = f.find(L1 + "5." + p)->data;
        copy = f.find(L1 + "2." + p)->data;
        for (size_t i = 0; i < copy.size(); i += 6) copy[i] ^= 0x01;
      }
    });
    editFile(dir, L2 + "6.down_proj.weight", [](wstest::StFile& f) { scaleBf16(f.find(L2 + "6.down_proj.weight")->data, 10.0f); });  // another shard
    val::ValidateOptions opt;
    opt.only = {"values"};
    auto r = val::validatePath(dir, opt);
    QVERIFY(r.ok());
    const auto& cells = r.value().expertHealth;
    std::map<std::pair<int32_t, int64_t>, val::ExpertHealthCell> at;
    for (const auto& h : cells) at[std::make_pair(h.layer, h.expert)] = h;
    auto cell = [&](int32_t layer, int64_t expert) { return at[std::make_pair(layer, expert)]; };
    QCOMPARE(at.size(), size_t(2 * 8));  // layers 1 and 2, 8 experts each (layer 0 is dense)
    QCOMPARE(cell(1, 5).nearest, int64_t(2));
    QCOMPARE(cell(1, 2).nearest, int64_t(5));
    QVERIFY2(cell(1, 5).nearestCosine > 0.99, std::to_string(cell(1, 5).nearestCosine).c_str());
    QVERIFY2(std::abs(cell(2, 6).normOctaves - std::log2(10.0)) < 0.25, std::to_string(cell(2, 6).normOctaves).c_str());
    for (const auto& [key, h] : at) {
      if (key == std::make_pair(1, int64_t(5)) || key == std::make_pair(1, int64_t(2)) || key == std::make_pair(2, int64_t(6))) continue;
      QVERIFY2(std::abs(h.normOctaves) < 1 && h.nearestCosine < 0.5, (std::to_string(h.layer) + "/" + std::to_string(h.expert) + ": " + std::to_string(h.normOctaves) + " " + std::to_string(h.nearestCosine)).c_str());
    }
    // The JSON report carries the same cells.
    const nlohmann::json j = validateJson(r.value(), val::Severity::Info);
    QCOMPARE(j["expert_health"].size(), cells.size());
    const auto copy = std::find_if(j["expert_health"].begin(), j["expert_health"].end(), [](const nlohmann::json& c) { return c["layer"] == 1 && c["expert"] == 5; });
    QVERIFY(copy != j["expert_health"].end() && (*copy)["nearest"] == 2);
    // inspect --health puts the same cells in its experts grid (column -1 first, so expert e at e + 1).
    InspectOptions io;
    io.health = cells;
    auto opened = wstest::openOrFail(dir);
    const nlohmann::json grid = inspectJson(*opened, io)["experts"];
    for (const auto& row : grid["rows"]) {
      const int32_t layer = row["layer"].get<int32_t>();
      QVERIFY(row["norm_octaves"][0].is_null());
      for (int64_t e = 0; e < grid["experts"].get<int64_t>(); ++e) {
        const auto it = at.find(std::make_pair(layer, e));
        if (it == at.end()) {
          QVERIFY(row["nearest"][size_t(e + 1)].is_null());
          continue;
        }
        QCOMPARE(row["nearest"][size_t(e + 1)].get<int64_t>(), it->second.nearest);
        QCOMPARE(row["norm_octaves"][size_t(e + 1)].get<double>(), it->second.normOctaves);
        QCOMPARE(row["nearest_cosine"][size_t(e + 1)].get<double>(), it->second.nearestCosine);
      }
    }
    QVERIFY(!inspectJson(*opened, InspectOptions{})["experts"]["rows"][0].contains("nearest"));  // not computed, not shown
  }

  // WS-V015 / WS-V016's twins just inside their thresholds: expert 5 made of expert 2 and expert
  // 3 half and half (cosine near 0.5), expert 6's down_proj scaled 7x (2.8 octaves, not 3: a candidate by its sample, cleared by its exact norm).
  void nearDuplicateAndNormTwins() {
    wstest::TempDir d;
    const std::string dir = editFile(fixtureCopy(d, Q), L1 + "2.down_proj.weight", [](wstest::StFile& f) {
      for (const char* p : {"down_proj.weight", "gate_proj.weight", "up_proj.weight"}) {
        auto& mixed = f.find(L1 + "5." + p)->data;
        const auto& a = f.find(L1 + "2." + p)->data;
        const auto& b = f.find(L1 + "3." + p)->data;
        for (size_t i = 0; i + 1 < mixed.size(); i += 2) {
          const bool first = (i / 2) % 2 == 0;
          mixed[i] = first ? a[i] : b[i], mixed[i + 1] = first ? a[i + 1] : b[i + 1];
        }
      }
      scaleBf16(f.find(L1 + "6.down_proj.weight")->data, 7.0f);
    });
    val::ValidateOptions opt;
    opt.only = {"values"};
    auto r = val::validatePath(dir, opt);
    QVERIFY(r.ok());
    for (const auto& f : r.value().findings) QVERIFY2(f.code != "WS-V015" && f.code != "WS-V016", f.message.c_str());
  }

  // WS-V014's clean twins: a bias 0.9 below its rivals (a score in [0, 1] can make it up) and a
  // group 1.9 below the other (its two best scores can make it up): routed rarely, not never.
  void routerBiasWithinReachIsClean() {
    for (const bool grouped : {false, true}) {
      wstest::TempDir d;
      std::string dir = synthesized(d, "deepseek-v3", "bf16");
      if (grouped) wstest::editJson(dir + "/config.json", [](Json& j) { j["n_group"] = 2, j["topk_group"] = 1; });
      auto f = wstest::readSt(dir + "/model.safetensors");
      auto* t = f.find("model.layers.1.mlp.gate.e_score_correction_bias");
      std::vector<float> b(t->data.size() / 4, 0.0f);
      if (grouped) std::fill(b.begin() + 8, b.end(), 0.95f);  // group 1's top two sum 1.9 above group 0's
      else b[3] = -0.9f;
      std::memcpy(t->data.data(), b.data(), t->data.size());
      wstest::writeSt(dir + "/model.safetensors", f);
      val::ValidateOptions opt;
      opt.only = {"values"};
      auto r = val::validatePath(dir, opt);
      QVERIFY(r.ok());
      for (const auto& x : r.value().findings) QVERIFY2(x.code != "WS-V014", x.message.c_str());
    }
  }

  // WS-M008's clean twins: the GGUF's template equal to tokenizer_config.json's, and to
  // chat_template.jinja's where tokenizer_config.json has none (the converter's order). And
  // tokenizer_config.json's wins over chat_template.jinja's, as the converter takes it.
  void chatTemplatesThatAgreeAreClean() {
    const std::vector<std::map<std::string, std::string>> sides = {
        {{"tokenizer_config.json", Json{{"chat_template", kTemplate}}.dump()}},
        {{"tokenizer_config.json", "{}"}, {"chat_template.jinja", kTemplate}},
        {{"tokenizer_config.json", Json{{"chat_template", kTemplate}}.dump()}, {"chat_template.jinja", "another"}}};
    for (const auto& side : sides) {
      wstest::TempDir d;
      auto r = val::validatePath(ggufWithTemplate(d, kTemplate, side), {});
      QVERIFY(r.ok());
      for (const auto& f : r.value().findings) QVERIFY2(f.code != "WS-M008", f.message.c_str());
    }
  }

  // WS-M007's clean twins: Qwen2.5-Instruct's shape (config.json keeps the base model's eos, the
  // tokenizer's is another, generation_config.json lists both) and a GGUF whose eos its HF
  // source's generation_config.json lists - no finding; the rule's text names both ids' tokens.
  void specialTokensThatAgreeAreClean() {
    wstest::TempDir d;
    const std::string dir = fixtureCopy(d, Q);
    Json v = Json::object();
    for (int i = 0; i < 1000; ++i) v["t" + std::to_string(i)] = i;
    wstest::writeFile(dir + "/tokenizer.json", Json{{"model", {{"type", "BPE"}, {"vocab", v}, {"merges", Json::array()}}}, {"added_tokens", Json::array()}}.dump());
    wstest::writeFile(dir + "/tokenizer_config.json", R"({"eos_token": "t2", "bos_token": null})");
    wstest::writeFile(dir + "/generation_config.json", R"({"eos_token_id": [2, 3]})");
    wstest::editJson(dir + "/config.json", [](Json& j) { j["eos_token_id"] = 3; });
    const std::string ggufDir = d.file("gguf");
    fs::create_directories(ggufDir);
    wstest::writeFile(ggufDir + "/mixtral-bf16.gguf", withGgufKv(wstest::sourceDir() + "/tests/data/llama_cpp/mixtral-bf16.gguf", ggufU32("tokenizer.ggml.eos_token_id", 2)));
    wstest::writeFile(ggufDir + "/generation_config.json", R"({"eos_token_id": [5, 2]})");
    for (const std::string& path : {dir, ggufDir + "/mixtral-bf16.gguf"}) {
      auto r = val::validatePath(path, {});
      QVERIFY(r.ok());
      for (const auto& f : r.value().findings) QVERIFY2(f.code != "WS-M007", f.message.c_str());
    }
    // Disagreeing, the message names both files and both ids with their tokens.
    wstest::writeFile(dir + "/generation_config.json", R"({"eos_token_id": [3]})");
    auto r = val::validatePath(dir, {});
    QVERIFY(r.ok());
    bool named = false;
    for (const auto& f : r.value().findings)
      named |= f.code == "WS-M007" && f.message == "eos: tokenizer_config.json gives 2 't2', generation_config.json gives 3 't3' - none in common";
    QVERIFY(named);
  }

  // KTransformers RAWINT4 with an expert intermediate size (48) that its group 32 does not divide:
  // the dimension finding names both sizes. Not a corpus case: the down_proj scales of 2 groups
  // for 48 columns are rightly WS-R002's group finding as well.
  void rawInt4DimensionsNotWholeGroups() {
    wstest::TempDir d;
    auto o = synthOptions(d, "kimi-k2", "int4-ct");
    o.expertIntermediate = 48;
    val::ValidateOptions opt;
    opt.runtime = "kt";
    auto r = val::validatePath(written(o), opt);
    QVERIFY(r.ok());
    QStringList dims, others;
    for (const auto& f : r.value().findings) {
      if (f.code == "WS-R002" && f.tensor.empty()) dims << QString::fromStdString(f.message);
      else if (f.severity == val::Severity::Error && !(f.code == "WS-R002" && f.tensor.ends_with("down_proj.weight_scale"))) others << QString::fromStdString(f.code + " " + f.tensor);
    }
    QCOMPARE(dims.size(), 1);
    QVERIFY2(dims[0].contains("hidden 256 and expert intermediate 48") && dims[0].contains("32"), qPrintable(dims[0]));
    QVERIFY2(others.isEmpty(), qPrintable(others.join(" | ")));
  }

  // A GGUF declaring fewer blocks than it holds: llama.cpp never loads the last block. Not a corpus
  // case: the classifier then also takes the extra block for an undeclared MTP layer (WS-C006).
  void blockPastBlockCount() {
    wstest::TempDir d;
    const std::string out = d.file("tiny-qwen3moe-kquants.gguf");
    wstest::writeFile(out, withGgufKeyPatched(wstest::fixture("gguf/tiny-qwen3moe-kquants.gguf"), "qwen3moe.block_count", "", 1));
    auto r = val::validatePath(out, {});
    QVERIFY(r.ok());
    QStringList m005;
    for (const auto& f : r.value().findings)
      if (f.code == "WS-M005") m005 << QString::fromStdString(f.tensor + ": " + f.message);
    QCOMPARE(m005.size(), 1);
    QVERIFY2(m005[0].startsWith("blk.1.") && m005[0].contains("past the 1 blocks 'qwen3moe.block_count' declares"), qPrintable(m005[0]));
  }

  void everyRuleIsDocumented() {
    std::ifstream in(wstest::sourceDir() + "/docs/rules.md");
    std::string doc((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    for (const auto& r : val::rules()) {
      // The rule's row in its family's table: | `CODE` | name | severity | ...; the severity the
      // document states is the one the validator gives.
      const size_t at = doc.find(std::string("| `") + r.code + "` | " + r.name + " | ");
      QVERIFY2(at != std::string::npos, r.code);
      // The severity column of that row, found by the table's own header (the runtime family's
      // table has a runtime column before it).
      auto cells = [&](size_t from) {
        std::vector<std::string> out;
        std::stringstream line(doc.substr(from, doc.find('\n', from) - from));
        for (std::string cell; std::getline(line, cell, '|');) out.push_back(QString::fromStdString(cell).trimmed().toStdString());
        return out;
      };
      const auto header = cells(doc.rfind("| code |", at)), row = cells(at);
      const auto column = std::find(header.begin(), header.end(), "severity");
      QVERIFY2(column != header.end() && size_t(column - header.begin()) < row.size(), r.code);
      const std::string stated = row[size_t(column - header.begin())];
      QVERIFY2(stated == val::severityName(r.severity), qPrintable(QString("%1: docs/rules.md says %2, the validator gives %3").arg(r.code, stated.c_str(), val::severityName(r.severity))));
    }
  }

  // The load family: a full load that works is summarised (WS-L003), one that cannot run is an
  // error naming why (WS-L001).
  void fullLoadFindings() {
    val::ValidateOptions opt;
    opt.fullLoad = true;
    opt.device = "host";
    auto ok = val::validatePath(wstest::fixture(Q), opt);
    QVERIFY(ok);
    QStringList codes;
    for (const auto& f : ok.value().findings) codes << QString::fromStdString(f.code);
    QCOMPARE(codes, QStringList{"WS-L003"});
    opt.device = "cuda:99";  // no machine has a hundredth GPU
    auto bad = val::validatePath(wstest::fixture(Q), opt);
    QVERIFY(bad);
    QCOMPARE(bad.value().findings.size(), size_t(1));
    QCOMPARE(bad.value().findings[0].code, std::string("WS-L001"));
    QCOMPARE(bad.value().findings[0].severity, val::Severity::Error);
    // A device whose allocator takes 2 MiB per allocation while it declares 256 bytes: the free
    // memory falls by more than the prediction, and the load's residency is an error.
    struct Padding : load::HostBackend {
      Padding() : HostBackend(UINT64_MAX / 2, 4, uint64_t(2) << 20) {}
      uint64_t granularity() const override { return 256; }
    };
    opt.device = "host";
    opt.makeBackend = [](const std::string&) -> Result<std::unique_ptr<load::DeviceBackend>> { return std::unique_ptr<load::DeviceBackend>(std::make_unique<Padding>()); };
    auto padded = val::validatePath(wstest::fixture(Q), opt);
    QVERIFY(padded);
    codes.clear();
    for (const auto& f : padded.value().findings) codes << QString::fromStdString(f.code);
    QCOMPARE(codes, (QStringList{"WS-L002", "WS-L003"}));
    qInfo("%s", padded.value().findings[0].message.c_str());
    QVERIFY(QString::fromStdString(padded.value().findings[0].message).contains("free memory on the device fell by"));
  }

  // The diff family against the checkpoint before the damage: a tensor dropped (WS-D002),
  // reshaped (WS-D003) and added (WS-D004), each named, and the summary (WS-D005).
  void againstReferenceFindings() {
    wstest::TempDir d;
    const std::string dir = fixtureCopy(d, "hf/mixtral");
    const std::string L0 = "model.layers.0.self_attn.";
    editFile(dir, "lm_head.weight", [&](wstest::StFile& f) {
      f.remove(L0 + "k_proj.weight");
      f.find(L0 + "v_proj.weight")->shape = {64, 512};  // [128, 256] read as [64, 512]: same bytes
      wstest::StEntry extra = *f.find("model.norm.weight");
      extra.name = "model.extra_norm.weight";
      f.tensors.push_back(extra);
    });
    val::ValidateOptions opt;
    opt.against = wstest::fixture("hf/mixtral");
    opt.only = {"diff"};
    auto r = val::validatePath(dir, opt);
    QVERIFY2(r, r ? "" : r.error().describe().c_str());
    std::map<std::string, std::string> byCode;
    for (const auto& f : r.value().findings) byCode[f.code] += (byCode[f.code].empty() ? "" : "|") + f.tensor + " " + f.message;
    QCOMPARE(byCode.size(), size_t(4));
    QVERIFY2(byCode["WS-D002"].find("k_proj") != std::string::npos, byCode["WS-D002"].c_str());
    QVERIFY2(byCode["WS-D003"].find("v_proj") != std::string::npos, byCode["WS-D003"].c_str());
    QVERIFY2(byCode["WS-D004"].find("extra_norm") != std::string::npos, byCode["WS-D004"].c_str());
    QVERIFY(byCode.count("WS-D005"));
  }

  // A split set whose parts disagree with their names (WS-I023), and a part that cannot be read
  // at all (WS-I024: here a folder where the file should be).
  void splitAndUnreadableFiles() {
    wstest::TempDir d;
    fs::copy_file(wstest::fixture("gguf/tiny-qwen3moe-kquants-00001-of-00002.gguf"), d.file("m-00002-of-00002.gguf"));
    fs::copy_file(wstest::fixture("gguf/tiny-qwen3moe-kquants-00002-of-00002.gguf"), d.file("m-00001-of-00002.gguf"));
    auto swapped = val::validatePath(d.file("m-00001-of-00002.gguf"), {});
    QVERIFY(swapped);
    size_t splitFindings = 0;
    for (const auto& f : swapped.value().findings) splitFindings += f.code == "WS-I023";
    QCOMPARE(splitFindings, size_t(2));  // each part says it is the other

    const std::string dir = fixtureCopy(d, Q);
    fs::remove(dir + "/model-00003-of-00004.safetensors");
    fs::create_directory(dir + "/model-00003-of-00004.safetensors");
    auto r = val::validatePath(dir, {});
    QVERIFY(r);
    QCOMPARE(r.value().findings.size(), size_t(1));
    QCOMPARE(r.value().findings[0].code, std::string("WS-I024"));
    QVERIFY(r.value().findings[0].file.find("model-00003-of-00004.safetensors") != std::string::npos);
  }

  // docs/rules.md says each rule is proven by a test: some test must name it (a corpus case here,
  // a malformed-corpus manifest entry, or a test of its own).
  void everyRuleIsProvenByATest() {
    std::string sources;
    for (const char* dir : {"/tests", "/tests/ui", "/tests/scripts", "/tests/data/malformed"})
      for (const auto& e : fs::directory_iterator(wstest::sourceDir() + dir)) {
        const auto ext = e.path().extension();
        if (ext != ".cpp" && ext != ".py" && ext != ".json") continue;
        std::ifstream in(e.path());
        sources.append((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      }
    QStringList unproven;
    for (const auto& r : val::rules())
      if (sources.find(std::string("\"") + r.code + "\"") == std::string::npos) unproven << r.code;
    QVERIFY2(unproven.isEmpty(), qPrintable("no test names " + unproven.join(", ")));
  }

  // The README's count is what a plain `validate` runs, and the total with the optional families.
  void readmeCountsTheRules() {
    std::ifstream in(wstest::sourceDir() + "/README.md");
    std::string readme((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto r = val::validatePath(wstest::fixture(Q), {});
    QVERIFY(r.ok());
    const std::string plain = "`validate` runs " + std::to_string(r.value().rulesRun.size()) + " rules";
    const std::string all = std::to_string(val::rules().size()) + " with `--against`, `--base`, `--full-load` and the serving-engine rules";
    QVERIFY2(readme.find(plain) != std::string::npos, plain.c_str());
    QVERIFY2(readme.find(all) != std::string::npos, all.c_str());
  }

  // One problem on many tensors is one finding on the first, with the count and the first three
  // names (the KTransformers loader's preview of missing keys); three or fewer, no ellipsis.
  void groupedFindingsPreviewThreeNames() {
    const val::ValidateOptions all;
    std::vector<val::Finding> out;
    val::Sink sink{all, out};
    val::FindingGroup many, few;
    for (const char* n : {"a.weight", "b.weight", "c.weight", "d.weight", "e.weight"}) many.add(n);
    for (const char* n : {"x.weight", "y.weight"}) few.add(n);
    many.report(sink, "WS-C001", "expert weights missing");
    few.report(sink, "WS-C001", "expert weights missing");
    val::FindingGroup().report(sink, "WS-C001", "nothing");  // an empty group says nothing
    QCOMPARE(out.size(), size_t(2));
    QCOMPARE(out[0].message, std::string("5 expert weights missing: a.weight, b.weight, c.weight ..."));
    QCOMPARE(out[0].tensor, std::string("a.weight"));
    QCOMPARE(out[1].message, std::string("2 expert weights missing: x.weight, y.weight"));
  }

  void unknownRuleIsAUsageError() {
    val::ValidateOptions opt;
    opt.only = {"WS-X999"};
    auto r = val::validatePath(wstest::fixture(Q), opt);
    QVERIFY(!r.ok());
    QCOMPARE(r.error().code, ErrorCode::Usage);
  }

  void familiesCanBeSkipped() {
    wstest::TempDir d;
    val::ValidateOptions opt;
    opt.skip = {"values"};
    const auto cs = cases();
    auto it = std::find_if(cs.begin(), cs.end(), [](const Case& c) { return std::string(c.name) == "expert zeroed"; });
    auto dir = it->build(d);
    auto r = val::validatePath(dir, opt);
    QCOMPARE(r.value().findings.size(), size_t(0));
    QCOMPARE(r.value().bytesReadByFamily.count("values (weights)"), size_t(0));
  }

  // The value pass reads an int4 weight's group scales once: for the scale rules, then from that
  // copy for the weights' extremes. Its two byte counts add up to the weights and scales in the
  // files, not 10% more (docs/benchmarks.md: they used to be read twice). The findings are those
  // of reading the scales again.
  // An activation scale whose file is cut short after the open: WS-I024 on that scale, naming the
  // file, and the validation goes on (it used to end the run with an exception).
  void anActivationScaleCutAfterTheOpenIsReported() {
    wstest::TempDir d;
    const std::string dir = staticActivations(d, [](wstest::StFile&) {});
    auto c = wstest::openOrFail(dir);
    const auto lastInFile = std::max_element(c->tensors.begin(), c->tensors.end(), [](const auto& a, const auto& b) { return a.offset < b.offset; });
    const std::string file = dir + "/model.safetensors", last = lastInFile->name;
    QVERIFY(last.ends_with(".input_scale"));
    fs::resize_file(file, fs::file_size(file) - 2);
    val::ValidateOptions opt;
    opt.only = {"values", "integrity"};
    const auto rep = val::validateCheckpoint(c, opt);
    bool named = false;
    for (const auto& f : rep.findings) named |= f.code == "WS-I024" && f.tensor == last && f.file.find("model.safetensors") != std::string::npos;
    QVERIFY(named);
  }

  // FP8 blocks too: their decoder reads the block scales the scale rules kept, and counted them
  // again (the kernel's count, and validate --distributed's, showed the difference).
  void valuesReadEachByteOnce_data() {
    QTest::addColumn<QString>("scheme");
    QTest::newRow("int4-ct") << "int4-ct";
    QTest::newRow("fp8-block") << "fp8-block";
  }
  void valuesReadEachByteOnce() {
    QFETCH(QString, scheme);
    wstest::TempDir d;
    synth::Options o;
    o.like = "deepseek-v3", o.scheme = scheme.toStdString(), o.out = d.file("ckpt");
    QVERIFY(synth::write(o));
    auto c = wstest::openOrFail(o.out);
    uint64_t want = 0, scales = 0, router = 0;
    for (const auto& t : c->tensors) {  // the weights and their scales; of the biases, the router's correction (WS-V014)
      if (t.component == Component::Weight || t.component == Component::Scale) want += t.bytes;
      if (t.component == Component::Scale) scales += t.bytes;
      if (t.name.ends_with("e_score_correction_bias")) router += t.bytes;
    }
    QVERIFY(router > 0);
    QVERIFY(scales > 0);
    val::ValidateOptions opt;
    opt.only = {"values"};
    const uint64_t before = wstest::bytesReadBySyscalls();
    const auto rep = val::validateCheckpoint(c, opt);
    const uint64_t kernel = wstest::bytesReadBySyscalls() - before;
    QCOMPARE(rep.bytesReadByFamily.at("values (scales)"), scales);
    QCOMPARE(rep.bytesReadByFamily.at("values (scales)") + rep.bytesReadByFamily.at("values (weights)"), want);
    // Measured, not counted by the code that claims it: the codes and scales are read with
    // pread, so the kernel's own count of what this process read (rchar) is the claim exactly -
    // plus config.json, which the metadata rules read again (they run whatever the rule filter
    // says; only their findings are filtered).
    const uint64_t config = wstest::fileSize(o.out + "/config.json");
    qInfo("values pass: %llu bytes claimed, %llu read by the kernel's count (config.json %llu)", (unsigned long long)want, (unsigned long long)kernel,
          (unsigned long long)config);
    QCOMPARE(rep.bytesReadByFamily.at("values (router)"), router);
    // WS-V013 reads windows of each routed expert again, with pread, and says so in a family of
    // its own: 4 KiB windows of the larger members, small members whole.
    const uint64_t windows = rep.bytesReadByFamily.at("values (expert fingerprints)");
    QVERIFY(windows > 0 && windows < want);
    QCOMPARE(kernel, want + router + config + windows);
  }

  // A file cut short after it was opened (the value pass reads it later): the read that fails is
  // WS-I024 naming the file, an offset past the cut and the tensor, and the other tensors are
  // still judged - before, a failed scale read silenced every scale rule, and a failed weight
  // read was skipped without a word. Symmetric int4 (compressed-tensors), read with pread only.
  // The int4 codes and scales are read with pread; a BF16 weight through the mapping, where the
  // pages past the new end raise SIGBUS (MappedReadGuard).
  void aFileCutDuringTheScanIsReported_data() {
    QTest::addColumn<QString>("last");
    QTest::addColumn<uint64_t>("cutBytes");
    QTest::newRow("cut in the last weight") << "weight" << uint64_t(40);
    QTest::newRow("cut in the last scale") << "scale" << uint64_t(40);
    QTest::newRow("cut in a bf16 weight, within its last page") << "bf16" << uint64_t(40);
    QTest::newRow("cut in a bf16 weight, pages before its end") << "bf16" << uint64_t(20000);
  }
  void aFileCutDuringTheScanIsReported() {
    QFETCH(QString, last);
    QFETCH(uint64_t, cutBytes);
    const bool scaleLast = last == "scale", bf16Last = last == "bf16";
    wstest::TempDir d;
    std::vector<uint8_t> packed(16 * 8 * 4), scales(16 * 2 * 4);
    for (size_t i = 0; i < packed.size(); ++i) packed[i] = uint8_t(i * 37);
    for (size_t i = 0; i < scales.size() / 4; ++i) {
      const float v = 0.01f * float(1 + i % 7);
      std::memcpy(&scales[i * 4], &v, 4);
    }
    const std::string e0 = "model.layers.0.mlp.experts.0.down_proj.", e1 = "model.layers.0.mlp.experts.1.down_proj.";
    wstest::SafetensorsBuilder b;
    for (const auto& e : {e0, e1}) b.add(e + "weight_shape", "I64", {2}, wstest::int64Bytes({16, 64}));
    b.add(e0 + "weight_packed", "I32", {16, 8}, packed).add(e0 + "weight_scale", "F32", {16, 2}, scales);
    if (scaleLast) b.add(e1 + "weight_packed", "I32", {16, 8}, packed).add(e1 + "weight_scale", "F32", {16, 2}, scales);
    else b.add(e1 + "weight_scale", "F32", {16, 2}, scales).add(e1 + "weight_packed", "I32", {16, 8}, packed);
    const std::string dense = "model.layers.0.self_attn.o_proj.weight";
    std::vector<uint8_t> bf16(128 * 128 * 2);
    for (size_t i = 0; i < bf16.size(); i += 2) bf16[i] = 0, bf16[i + 1] = uint8_t(0x3C + i % 3);  // 2^-7 .. 2^-5: plausible weights
    if (bf16Last) b.add(dense, "BF16", {128, 128}, bf16);
    const std::string path = d.file("model.safetensors");
    b.write(path);
    wstest::writeFile(d.file("config.json"), std::string(R"({"model_type":"deepseek_v3","hidden_size":64,"moe_intermediate_size":16,
      "n_routed_experts":2,"num_hidden_layers":1,"quantization_config":{"quant_method":"compressed-tensors",
      "config_groups":{"g":{"weights":{"num_bits":4,"symmetric":true,"strategy":"group","group_size":32}}}}})"));
    auto c = wstest::openOrFail(d.path());
    const uint64_t size = std::filesystem::file_size(path), cut = size - cutBytes;  // inside the last tensor
    std::filesystem::resize_file(path, cut);
    val::ValidateOptions opt;
    opt.only = {"values", "WS-I024"};
    const auto rep = val::validateCheckpoint(c, opt);
    int failures = 0;
    for (const auto& f : rep.findings) {
      if (f.code != "WS-I024") continue;
      ++failures;
      QCOMPARE(QString::fromStdString(f.tensor), QString::fromStdString(bf16Last ? dense : e1 + "weight_packed"));
      QCOMPARE(QString::fromStdString(f.file), QString::fromStdString(path));
      QVERIFY2(f.offset && *f.offset >= cut - 16 * 2 * 4 && *f.offset <= cut, f.message.c_str());
      QVERIFY2(QString::fromStdString(f.message).startsWith(scaleLast ? "scales could not be read" : "weights could not be read"), f.message.c_str());
    }
    QCOMPARE(failures, 1);
    // Expert 0's scales were read and judged (expert 1's too when only its weights were cut).
    QCOMPARE(rep.bytesReadByFamily.at("values (scales)"), uint64_t(scaleLast ? 128 : 256));
  }
};

QTEST_GUILESS_MAIN(TstValidateCorpus)
#include "tst_validate_corpus.moc"
