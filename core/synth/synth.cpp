#include "core/synth/synth.h"

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "core/synth/family.h"
#include "core/synth/plan.h"
#include "core/synth/writers.h"

namespace ws::synth {

namespace fs = std::filesystem;

namespace {

constexpr uint64_t kMaxDenseBytes = 64ull << 30;  // larger non-sparse writes are surely a mistake

Family familyFor(const Options& o) {
  Family f = presetFamily(o.like, o.size);
  auto over = [](int64_t& field, int64_t v) {
    if (v >= 0) field = v;
  };
  over(f.layers, o.layers);
  over(f.experts, o.experts);
  over(f.hidden, o.hidden);
  over(f.expertIntermediate, o.expertIntermediate);
  over(f.denseIntermediate, o.denseIntermediate);
  over(f.shared, o.sharedExperts);
  over(f.denseLayers, o.denseLayers);
  over(f.vocab, o.vocab);
  over(f.mtp, o.mtpLayers);
  over(f.shards, o.shards);
  if (f.layers < 1 || f.experts < 1 || f.hidden < 32 || f.expertIntermediate < 32 || f.shards < 1)
    throw std::invalid_argument("layers, experts and shards must be at least 1; hidden and intermediate sizes at least 32");
  if (f.denseLayers > f.layers) throw std::invalid_argument("--dense-layers exceeds --layers");
  return f;
}

std::string shardName(int64_t i, int64_t n) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "model-%05lld-of-%05lld.safetensors", static_cast<long long>(i + 1), static_cast<long long>(n));
  return buf;
}

// Splits tensors (in order) into exactly min(n, count) non-empty shards of similar byte size.
std::vector<int64_t> assignShards(const std::vector<PlannedTensor>& ts, int64_t n) {
  n = std::min<int64_t>(n, int64_t(ts.size()));
  uint64_t total = 0;
  for (const auto& t : ts) total += t.bytes();
  std::vector<int64_t> shard(ts.size());
  uint64_t before = 0;
  int64_t prev = 0;
  for (size_t i = 0; i < ts.size(); ++i) {
    int64_t s = total ? int64_t((__int128)before * n / total) : 0;
    s = std::min(s, prev + (i == 0 ? 0 : 1));                     // no empty shard in between
    s = std::max<int64_t>(s, n - int64_t(ts.size() - i));         // leave a tensor for each shard after
    s = std::min<int64_t>(s, n - 1);
    shard[i] = s;
    prev = s;
    before += ts[i].bytes();
  }
  return shard;
}

void writeText(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary);
  out << text;
  if (!out) fail(ErrorCode::Io, "cannot write", p.string());
}

// What synth writes, by the scheme table's row and the weights' storage type; the --scheme word is
// the name the catalog gives what it wrote (a test opens each and compares).
struct Writable {
  Scheme scheme;
  const char* weightDtype;
};
const std::vector<Writable>& writable() {
  static const std::vector<Writable> v = {{Scheme::Plain, "BF16"}, {Scheme::Fp8Block, "F8_E4M3"}, {Scheme::Nvfp4, "U8"}, {Scheme::Mxfp4, "U8"},
                                          {Scheme::Int4Ct, "I32"},  {Scheme::KtInt8, "I8"},        {Scheme::GgufBlock, "Q4_K"}};
  return v;
}

Summary writeImpl(const Options& o) {
  const auto& fam = families();
  if (std::find(fam.begin(), fam.end(), o.like) == fam.end()) throw std::invalid_argument("unknown --like '" + o.like + "'");
  const auto& sch = schemes();
  const auto known = std::find(sch.begin(), sch.end(), o.scheme);
  if (known == sch.end()) throw std::invalid_argument("unknown --scheme '" + o.scheme + "'");
  const Scheme scheme = writable()[size_t(known - sch.begin())].scheme;
  if (o.out.empty()) throw std::invalid_argument("no output folder given");
  Family f = familyFor(o);
  fs::path out(o.out);
  if (fs::exists(out) && !(fs::is_directory(out) && fs::is_empty(out)))
    fail(ErrorCode::Io, "output folder exists and is not empty; synth writes only into a new or empty folder", o.out);
  fs::create_directories(out);

  Summary s;
  if (scheme == Scheme::GgufBlock) {
    Plan plan = planGguf(f);
    std::string name = "model-q4_k.gguf";
    s.dataBytes = writeGgufFile((out / name).string(), plan, o.sparse, o.seed);
    s.files.push_back(name);
    s.tensors = plan.tensors.size();
    return s;
  }
  Plan plan = planSafetensors(f, scheme, o.numaNodes > 0 ? o.numaNodes : 2);
  uint64_t total = 0;
  for (const auto& t : plan.tensors) total += t.bytes();
  if (!o.sparse && total > kMaxDenseBytes)
    throw std::invalid_argument("this checkpoint would write " + std::to_string(total >> 30) + " GiB of data; use --sparse");
  writeText(out / "config.json", plan.config.dump(2) + "\n");
  auto shard = assignShards(plan.tensors, f.shards);
  int64_t nShards = shard.empty() ? 1 : shard.back() + 1;
  std::vector<std::vector<const PlannedTensor*>> byShard(static_cast<size_t>(nShards));
  for (size_t i = 0; i < plan.tensors.size(); ++i) byShard[size_t(shard[i])].push_back(&plan.tensors[i]);
  nlohmann::json weightMap = nlohmann::json::object();
  for (int64_t k = 0; k < nShards; ++k) {
    std::string name = nShards == 1 ? "model.safetensors" : shardName(k, nShards);
    s.dataBytes += writeSafetensorsFile((out / name).string(), byShard[size_t(k)], o.sparse, o.seed);
    s.files.push_back(name);
    for (auto* t : byShard[size_t(k)]) weightMap[t->name] = name;
  }
  if (nShards > 1) {
    nlohmann::json index = {{"metadata", {{"total_size", s.dataBytes}}}, {"weight_map", weightMap}};
    writeText(out / "model.safetensors.index.json", index.dump(2) + "\n");
    s.files.push_back("model.safetensors.index.json");
  }
  s.files.insert(s.files.begin(), "config.json");
  s.tensors = plan.tensors.size();
  return s;
}

}  // namespace

const std::vector<std::string>& families() {
  static const std::vector<std::string> v = {"qwen3-moe", "deepseek-v3", "kimi-k2", "mixtral", "gpt-oss", "qwen3-vl-moe", "glm-4.5"};
  return v;
}

const std::vector<std::string>& schemes() {
  static const std::vector<std::string> v = [] {
    std::vector<std::string> names;
    for (const Writable& w : writable()) names.push_back(schemeDisplayName(w.scheme, dtypeByName(w.weightDtype)));
    return names;
  }();
  return v;
}

Result<Summary> write(const Options& opt) {
  try {
    return writeImpl(opt);
  } catch (const CoreError& e) {
    return e.error();
  } catch (const std::invalid_argument& e) {
    return Error{ErrorCode::Usage, e.what(), {}, std::nullopt, {}};
  } catch (const std::exception& e) {
    return Error{ErrorCode::Io, e.what(), opt.out, std::nullopt, {}};
  }
}

}  // namespace ws::synth
