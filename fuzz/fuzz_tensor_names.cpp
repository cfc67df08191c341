// Tensor-name classification (HF, GGUF and KTransformers families, NUMA shards) over arbitrary
// names, one per line, and natural ordering: parsing never fails or reads out of bounds, indices
// are never negative except "none", and naturalLess is a strict weak order on what it sees.
#include <string>
#include <vector>

#include "core/model/naming.h"
#include "fuzz_support.h"

namespace {

ws::ModelDescription model(uint8_t pick) {
  ws::ModelDescription m;
  if (pick & 1) {  // DeepSeek-V3-like: MTP layer after the last decoder layer
    m.architecture = "deepseek_v3";
    m.numLayers = 61;
    m.numExperts = 256;
    m.mtpLayers = {61};
  }
  return m;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const ws::ModelDescription m = model(data[0]);
  std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::vector<std::string_view> names;
  for (size_t at = 0; at <= rest.size();) {
    size_t nl = rest.find('\n', at);
    if (nl == std::string_view::npos) nl = rest.size();
    names.push_back(rest.substr(at, nl - at));
    at = nl + 1;
  }
  for (auto n : names) {
    ws::NameParts p = ws::parseTensorName(n, m);
    wsfuzz::require(p.layer >= -1 && p.expert >= -1 && p.numaNode >= -1, "indices are -1 or natural numbers");
    wsfuzz::require(p.logical.size() <= n.size(), "the logical name is never longer than the name");
    wsfuzz::require(!ws::naturalLess(n, n), "naturalLess is irreflexive");
  }
  for (size_t i = 0; i + 1 < names.size(); ++i) {
    auto a = names[i], b = names[i + 1];
    wsfuzz::require(!(ws::naturalLess(a, b) && ws::naturalLess(b, a)), "naturalLess is asymmetric");
    if (i + 2 < names.size()) {
      auto c = names[i + 2];
      if (ws::naturalLess(a, b) && ws::naturalLess(b, c)) wsfuzz::require(ws::naturalLess(a, c), "naturalLess is transitive");
    }
  }
  return 0;
}
