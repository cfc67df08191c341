#include "core/validate/router_rules.h"

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "core/numerics/element_reader.h"
#include "core/numerics/remote_reads.h"

namespace ws::val {

namespace {

// Float rounding of score + bias in the engine's float32: a margin must exceed it to be certain.
constexpr double kRounding = 1e-3;

bool isCorrectionBias(const TensorRecord& t) {
  const std::string& n = t.name;
  auto ends = [&](std::string_view s) { return n.size() >= s.size() && n.compare(n.size() - s.size(), s.size(), s) == 0; };
  return t.layer >= 0 && (ends("e_score_correction_bias") || ends("exp_probs_b.bias"));
}

// "0-7, 11": the experts, runs joined.
std::string expertList(const std::vector<int64_t>& ids) {
  std::string out;
  for (size_t i = 0; i < ids.size();) {
    size_t j = i;
    while (j + 1 < ids.size() && ids[j + 1] == ids[j] + 1) ++j;
    out += (out.empty() ? "" : ", ") + std::to_string(ids[i]) + (j > i ? "-" + std::to_string(ids[j]) : "");
    i = j + 1;
  }
  return out;
}

// The sum of the two largest of [first, first + n): a group's least possible score.
double topTwo(const std::vector<float>& b, size_t first, size_t n) {
  std::vector<float> g(b.begin() + long(first), b.begin() + long(first + n));
  std::partial_sort(g.begin(), g.begin() + 2, g.end(), std::greater<float>());
  return double(g[0]) + double(g[1]);
}

}  // namespace

// As vLLM 0.11.0's grouped_topk (model_executor/layers/fused_moe/fused_moe.py) routes: scores =
// sigmoid (or softmax) of the logits, each in [0, 1], plus the bias; the experts fall into
// n_group contiguous groups, each group scored by the sum of its two best biased scores, the
// topk_group best groups kept, and the top-k biased scores among them chosen. So, for certain:
// a group whose best possible score (its two largest biases + 2) is below the least possible
// score of topk_group other groups is never kept; and an expert with k experts of its own group
// whose bias exceeds its own by more than 1 is never chosen, wherever its group is kept. Other
// experts may be rare but not impossible: not reported.
uint64_t routerValueRules(const Checkpoint& c, Sink& sink) {
  const int64_t k = c.model.expertsPerToken;
  if (k <= 0) return 0;
  uint64_t read = 0;
  std::vector<const TensorRecord*> wanted;
  for (const auto& t : c.tensors)
    if (isCorrectionBias(t) && !t.cut && t.bytes && t.elements() >= 2) wanted.push_back(&t);
  num::fetchTensors(c, wanted);
  std::vector<uint8_t> raw;
  for (const TensorRecord* t : wanted) {
    num::ElementReader r;
    if (!r.init(t->dtype)) continue;
    const size_t experts = size_t(t->elements());
    const int64_t groups = c.model.expertGroups;
    if (experts % size_t(groups) != 0 || experts / size_t(groups) < 2) continue;  // the engine's view() would refuse it
    raw.resize(t->bytes);
    try {
      c.files[t->file].map->readAt(t->offset, raw.data(), t->bytes);
      read += t->bytes;
    } catch (const CoreError&) {
      continue;  // the value pass names the read that failed (WS-I024)
    }
    std::vector<float> b(experts);
    r.run(raw.data(), 0, experts, b.data());
    const size_t per = experts / size_t(groups);
    const int64_t keptGroups = std::min(c.model.expertGroupsUsed, groups);
    std::vector<int64_t> neverKept, neverChosen;
    for (size_t g = 0; g < size_t(groups); ++g) {
      int64_t better = 0;
      for (size_t h = 0; h < size_t(groups); ++h) better += h != g && topTwo(b, h * per, per) > topTwo(b, g * per, per) + 2 + kRounding;
      if (groups > 1 && better >= keptGroups) {
        for (size_t e = g * per; e < (g + 1) * per; ++e) neverKept.push_back(int64_t(e));
        continue;
      }
      for (size_t e = g * per; e < (g + 1) * per; ++e) {
        int64_t above = 0;
        for (size_t j = g * per; j < (g + 1) * per; ++j) above += j != e && double(b[j]) > double(b[e]) + 1 + kRounding;
        if (above >= k) neverChosen.push_back(int64_t(e));
      }
    }
    const std::string layer = " of layer " + std::to_string(t->layer);
    if (!neverKept.empty())
      sink.add("WS-V014", "experts " + expertList(neverKept) + layer + " are never routed to: their group's two largest biases sum to more than 2 below those of " +
                              std::to_string(keptGroups) + " other group(s), and " + std::to_string(keptGroups) + " of " + std::to_string(groups) +
                              " groups are kept per token (vLLM 0.11.0 grouped_topk: groups scored by their two best sigmoid scores + bias)",
               t->name);
    if (!neverChosen.empty())
      sink.add("WS-V014", "experts " + expertList(neverChosen) + layer + " are never routed to: " + std::to_string(k) +
                              " or more experts of their group have a bias more than 1 above theirs, more than a score in [0, 1] makes up, and " + std::to_string(k) +
                              " are chosen per token (vLLM 0.11.0 grouped_topk selects by score + bias)",
               t->name);
  }
  return read;
}

}  // namespace ws::val
