#include "core/validate/runtime_rules.h"

#include <map>
#include <string>
#include <vector>

#include "core/model/weight_shape.h"
#include "core/util/format_bytes.h"
#include "core/validate/engines/engine_tables.h"
#include "core/validate/llama_cpp_tensor_rules.h"

namespace ws::val {

namespace {

// Calls fn(logical, weight) for every routed expert weight whose scheme `wanted` accepts - what
// KTransformers' SFT loaders read; true when there is any.
template <class Wanted, class Fn>
bool forRoutedExperts(const Checkpoint& c, Wanted wanted, Fn fn) {
  bool any = false;
  for (const auto& l : c.logical) {
    if (l.weight < 0 || !wanted(l.scheme)) continue;
    const TensorRecord& w = c.tensors[uint32_t(l.weight)];
    if (w.role != Role::RoutedExpert) continue;
    any = true;
    fn(l, w);
  }
  return any;
}

// The loaders' first refusal: hidden and expert intermediate sizes must both divide by `n`.
void dimsDivisibleBy(const ModelDescription& m, int64_t n, const char* code, const std::string& why, Sink& sink) {
  const int64_t H = m.hiddenSize, I = m.expertIntermediateSize;
  if (H > 0 && I > 0 && (H % n || I % n))
    sink.add(code, "hidden " + std::to_string(H) + " and expert intermediate " + std::to_string(I) + " are not both multiples of " + std::to_string(n) + " (" + why + ")", {});
}

bool isFp8Scheme(Scheme s) { return s == Scheme::Fp8Block || s == Scheme::Fp8Tensor || s == Scheme::Fp8Channel || s == Scheme::Fp8Unscaled; }

bool bf16OrF32(const TensorRecord& t) { return t.dtype->name == "BF16" || t.dtype->name == "F32"; }

const TensorRecord* member(const Checkpoint& c, const LogicalTensor& l, Component k) {
  for (uint32_t m : l.members)
    if (c.tensors[m].component == k) return &c.tensors[m];
  return nullptr;
}

// KTransformers' native FP8 SFT (load_block_fp8_experts_from_checkpoint_files): hidden and
// intermediate divisible by 128, [128, 128] blocks, per-expert E4M3 weights, each with a BF16 or
// F32 weight_scale_inv of exactly [rows/128, cols/128]. Once a checkpoint has FP8 experts, every
// routed expert is held to that: the loader checks names and dtypes, not a scheme, so a BF16
// expert left among them ("must be CPU torch.float8_e4m3fn", or its scale "missing") and a fused
// tensor of any dtype ("requires non-fused per-expert checkpoint weights") are refused alike.
void ktNativeFp8(const Checkpoint& c, Sink& sink) {
  const ModelDescription& m = c.model;
  // An FP8 model: FP8 experts, or a config that declares FP8 (its experts may all be fused BF16).
  if (m.quant.method != "fp8" && !forRoutedExperts(c, isFp8Scheme, [](const LogicalTensor&, const TensorRecord&) {})) return;
  FindingGroup fused, dtype, noScale, scaleDtype, scaleShape;
  const bool any = forRoutedExperts(c, [](Scheme) { return true; }, [&](const LogicalTensor& l, const TensorRecord& w) {
    if (w.layout != Layout::None) {
      fused.add(w.name);
      return;
    }
    // The loader looks every weight_scale_inv up before it reads a weight: a missing one is its
    // first refusal, the weight's dtype the next.
    const TensorRecord* s = member(c, l, Component::Scale);
    if (!s || s->name.size() < 10 || s->name.compare(s->name.size() - 10, 10, "_scale_inv") != 0) {
      noScale.add(w.name);
      return;
    }
    if (w.dtype->name != "F8_E4M3") dtype.add(w.name);
    if (!bf16OrF32(*s)) scaleDtype.add(s->name);
    // Dimensions that are not whole blocks are WS-R001's refusal, which the loader makes first.
    if (w.shape.size() == 2 && w.shape[0] % 128 == 0 && w.shape[1] % 128 == 0 && s->shape != std::vector<uint64_t>{w.shape[0] / 128, w.shape[1] / 128})
      scaleShape.add(s->name);
  });
  if (!any) return;
  dimsDivisibleBy(m, 128, "WS-R001", "KTransformers native FP8 SFT", sink);
  // The block size is the loader's first check (before it opens a file): other blocks are refused
  // there, and the scale grids they make are not listed again.
  const bool otherBlocks = !m.quant.blockSize.empty() && m.quant.blockSize != std::vector<int64_t>{128, 128};
  if (otherBlocks)
    sink.add("WS-R004", "weight_block_size is " + formatShape(std::vector<uint64_t>(m.quant.blockSize.begin(), m.quant.blockSize.end())) +
                            "; KTransformers native FP8 SFT requires [128, 128]",
             {}, "config.json");
  fused.report(sink, "WS-R004", "fused expert tensors where KTransformers native FP8 SFT loads per-expert weights");
  dtype.report(sink, "WS-R004", "expert weights that are not F8_E4M3 (KTransformers native FP8 SFT reads E4M3 only)");
  noScale.report(sink, "WS-R004", "expert weights without a weight_scale_inv (KTransformers native FP8 SFT needs one per expert projection)");
  scaleDtype.report(sink, "WS-R004", "scale tensors that are neither BF16 nor F32 (KTransformers native FP8 SFT)");
  if (!otherBlocks) scaleShape.report(sink, "WS-R004", "scale grids that are not exactly [rows/128, cols/128] (KTransformers native FP8 SFT refuses squeezed or other block grids)");
}

// KTransformers RAWINT4 SFT (load_rawint4_experts_from_checkpoint_files): group size 32, hidden and
// intermediate divisible by it, weight_packed + weight_scale + weight_shape for every expert
// projection, no zero points, I32 [rows, cols/8] or U8 [rows, cols/2] codes, BF16 or F32 scales of
// [rows, cols/32], weight_shape I32 or I64.
void ktRawInt4(const Checkpoint& c, Sink& sink) {
  constexpr uint64_t kGroup = 32;  // RAWINT4_GROUP_SIZE
  const ModelDescription& m = c.model;
  FindingGroup noShape, zeroPoint, scaleDtype, scaleShape, packed, group;
  auto int4 = [](Scheme s) { return s == Scheme::Int4Ct || s == Scheme::RawInt4; };
  const bool any = forRoutedExperts(c, int4, [&](const LogicalTensor& l, const TensorRecord& w) {
    if (const TensorRecord* z = member(c, l, Component::ZeroPoint)) zeroPoint.add(z->name);
    const TensorRecord* s = member(c, l, Component::Scale);
    const TensorRecord* shapeTensor = member(c, l, Component::Shape);
    if (s && !bf16OrF32(*s)) scaleDtype.add(s->name);
    if (!shapeTensor) {
      noShape.add(w.name);
      return;
    }
    const auto declared = readWeightShape(c, *shapeTensor);
    if (!declared || declared->size() != 2 || (*declared)[0] <= 0 || (*declared)[1] <= 0) return;  // WS-S006 reports it
    const uint64_t rows = uint64_t((*declared)[0]), cols = uint64_t((*declared)[1]);
    const bool i32 = w.dtype->name == "I32" && w.shape == std::vector<uint64_t>{rows, cols / 8};
    const bool u8 = w.dtype->name == "U8" && w.shape == std::vector<uint64_t>{rows, cols / 2};
    if (cols % 8 || (!i32 && !u8)) packed.add(w.name);
    if (s && s->shape.size() == 2 && s->shape[1] && cols / s->shape[1] != kGroup) group.add(s->name);
    else if (s && s->shape != std::vector<uint64_t>{rows, cols / kGroup}) scaleShape.add(s->name);
  });
  if (!any) return;
  if (m.quant.groupSize > 0 && uint64_t(m.quant.groupSize) != kGroup)
    sink.add("WS-R002", "the config's group size is " + std::to_string(m.quant.groupSize) + "; KTransformers RAWINT4 requires 32", {});
  dimsDivisibleBy(m, int64_t(kGroup), "WS-R002", "the KTransformers RAWINT4 group size", sink);
  group.report(sink, "WS-R002", "scale tensors whose shape implies a group size other than 32 (KTransformers RAWINT4)");
  zeroPoint.report(sink, "WS-R002", "zero-point tensors (KTransformers RAWINT4 accepts symmetric weights only)");
  noShape.report(sink, "WS-R002", "expert weights without weight_shape (KTransformers RAWINT4 requires weight_packed, weight_scale and weight_shape)");
  scaleDtype.report(sink, "WS-R002", "scale tensors that are neither BF16 nor F32 (KTransformers RAWINT4)");
  scaleShape.report(sink, "WS-R002", "scale tensors not of shape [rows, cols/32] (KTransformers RAWINT4)");
  packed.report(sink, "WS-R002", "packed weights neither I32 [rows, cols/8] nor U8 [rows, cols/2] (KTransformers RAWINT4)");
}

// KTransformers' INT8 expert folders (load_experts_from_kt_weight_path): each part's weight key is
// looked up in the folder's index and its file opened; the scale is read from that same file
// (f.get_tensor(s_key) inside the weight's safe_open), so a scale written to another file fails
// the load even though the folder's index knows it.
void ktInt8ScaleFiles(const Checkpoint& c, Sink& sink) {
  if (c.format != "ktransformers") return;
  struct Part {
    int64_t weightFile = -1, scaleFile = -1;
    const std::string* scale = nullptr;
  };
  std::map<std::pair<uint32_t, int32_t>, Part> parts;  // (logical tensor, NUMA node)
  for (const auto& t : c.tensors) {
    if (t.numaNode < 0 || (t.component != Component::Weight && t.component != Component::Scale)) continue;
    Part& p = parts[{t.logical, t.numaNode}];
    if (t.component == Component::Weight) p.weightFile = int64_t(t.file);
    else p.scaleFile = int64_t(t.file), p.scale = &t.name;
  }
  FindingGroup apart;
  for (const auto& [key, p] : parts)
    if (p.weightFile >= 0 && p.scaleFile >= 0 && p.weightFile != p.scaleFile) apart.add(*p.scale);
  apart.report(sink, "WS-R006", "KTransformers INT8 parts with their scale in another file than its weight (its loader reads both from the weight's file)");
}

// The seed runtime's weight store maps safetensors dtypes onto its own and refuses the rest
// (seeds/spark_runtime_weights.rs WeightDtype::from_safetensors: "Unsupported safetensors dtype").
// F16 is not refused: both its disk loaders convert it to BF16 first (f16_to_bf16_bytes, "so F16
// checkpoints land in the store as BF16"), as `load --runtime seed` does.
void seedDtypes(const Checkpoint& c, Sink& sink) {
  static constexpr std::string_view kKnown[] = {"BF16", "F32", "U8", "I8", "F8_E4M3", "F8_E8M0", "I64", "F16"};
  std::map<std::string, FindingGroup> refused;
  for (const auto& t : c.tensors) {
    if (t.ggmlOrder) continue;  // its GGUF path has a type set of its own
    bool known = false;
    for (auto k : kKnown) known |= t.dtype->name == k;
    if (!known) refused[std::string(t.dtype->name)].add(t.name);
  }
  for (const auto& [dtype, r] : refused) r.report(sink, "WS-R005", "tensors of dtype " + dtype + " (the seed runtime refuses it: 'Unsupported safetensors dtype')");
}

// llama.cpp builds a model from a GGUF only for an architecture it names and maps
// (src/llama-model.cpp llama_model_create: "unknown model architecture"; llama_model_mapping:
// "unsupported model architecture") and with the keys that model's load_arch_hparams requires
// (llama_model_loader::get_key: "key not found in model"), at the commit the generated table was
// read from. Files of blocks only, as WS-M006; a LoRA adapter GGUF (general.type "adapter") is read
// by llama_adapter_lora_init, which builds no model.
void llamaCppModel(const Checkpoint& c, Sink& sink) {
  if (c.format != "gguf" || c.files.empty()) return;
  bool blocks = false;
  for (const auto& t : c.tensors) blocks |= t.layer >= 0;
  const MetaEntry* type = c.findMeta("general.type");
  const bool adapter = type && type->value == MetaScalar(std::string("adapter"));
  if (!blocks || adapter) return;
  const std::string& arch = c.model.architecture;
  const std::string& file = c.files.front().path;
  const std::string llama = "llama.cpp " + std::string(engines::kLlamaCppCommit);
  const engines::LlamaCppModelRow* row = engines::findLlamaCppModel(arch);
  if (!row || !row->builds) {
    sink.add("WS-R007", llama + " refuses the file: '" + (row ? "unsupported" : "unknown") + " model architecture: '" + arch + "''", {}, file);
    return;
  }
  std::vector<std::string> missing;
  for (std::string_view pattern : row->requiredKeys) {
    std::string key(pattern);
    if (const size_t at = key.find("%s"); at != std::string::npos) key.replace(at, 2, arch);
    if (!c.findMeta(key)) missing.push_back(key);
  }
  if (missing.empty()) return;
  std::string list;
  for (const auto& k : missing) list += (list.empty() ? "'" : ", '") + k + "'";
  sink.add("WS-R007", llama + " requires " + list + " to build a " + arch + " model (" + std::string(row->source) + " load_arch_hparams): 'key not found in model: " +
                          missing.front() + "'",
           {}, file);
}

}  // namespace

void runtimeRules(const Checkpoint& c, Sink& sink) {
  for (const Error& e : c.runtimeConcerns) {
    Finding f = makeFinding("WS-R003", e.message, e.tensor, e.file);
    f.offset = e.offset;
    sink.add(std::move(f));
  }
  ktNativeFp8(c, sink);
  ktRawInt4(c, sink);
  ktInt8ScaleFiles(c, sink);
  seedDtypes(c, sink);
  llamaCppModel(c, sink);
  llamaCppTensorRules(c, sink);
}

}  // namespace ws::val
