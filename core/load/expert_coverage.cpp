#include "core/load/expert_coverage.h"

#include <algorithm>
#include <set>

#include <nlohmann/json.hpp>

namespace ws::load {

std::vector<int64_t> expertsOfParts(const Checkpoint& c, const TensorRecord& t, const std::vector<std::pair<uint64_t, uint64_t>>& parts) {
  const int64_t E = c.model.numExperts;
  if (t.role != Role::RoutedExpert || E <= 0) return {};
  std::vector<int64_t> out;
  if (t.expert >= 0) return std::vector<int64_t>(parts.size(), t.expert);  // once per replica
  if (!plan::slicedByExpert(c, t)) return {};
  const uint64_t per = t.bytes / uint64_t(E);
  for (auto [off, len] : parts) {
    if (len == t.bytes && E > 1) {  // held whole (the seed's rule): every expert's slice
      for (int64_t e = 0; e < E; ++e) out.push_back(e);
    } else if (per) {
      out.push_back(int64_t(off / per));
    }
  }
  return out;
}

namespace {

void count(Holdings& h, const TensorRecord& t, const std::vector<int64_t>& experts) {
  if (t.role == Role::RoutedExpert && (t.expert >= 0 || !experts.empty())) {
    for (int64_t e : experts) h.expertParts[{t.layer, e}]++;
  } else {
    h.tensors[t.name]++;
  }
}

// Calls gap(key, expected, held) for each key whose counts differ (absent: 0).
template <class Key, class Gap>
void differences(const std::map<Key, uint64_t>& expected, const std::map<Key, uint64_t>& held, Gap&& gap) {
  std::set<Key> keys;
  for (const auto& [k, n] : expected) keys.insert(k);
  for (const auto& [k, n] : held) keys.insert(k);
  for (const Key& k : keys) {
    auto e = expected.find(k), h = held.find(k);
    const uint64_t want = e == expected.end() ? 0 : e->second, got = h == held.end() ? 0 : h->second;
    if (want != got) gap(k, want, got);
  }
}

}  // namespace

Holdings heldBy(const Checkpoint& c, const WeightStore& store) {
  Holdings h;
  for (const ResidentTensor& r : store.tensors()) {
    if (const TensorRecord* t = c.find(r.name)) count(h, *t, r.experts);
    else h.tensors[r.name]++;
  }
  return h;
}

Holdings expectedOf(const Checkpoint& c, const plan::PlanOptions& opt, const plan::RankPlan& rp) {
  Holdings h;
  std::map<int, std::vector<int64_t>> byLayer;
  for (const plan::HeldTensor& held : rp.held) {
    const TensorRecord& t = c.tensors[held.tensor];
    auto it = byLayer.find(t.layer);
    if (it == byLayer.end()) it = byLayer.emplace(t.layer, plan::expertsOnRank(c.model, opt.placement, rp.rank, t.layer)).first;
    count(h, t, expertsOfParts(c, t, plan::residentParts(c, opt, t, held, it->second)));
  }
  return h;
}

nlohmann::json holdingsJson(const Holdings& h) {
  nlohmann::json experts = nlohmann::json::array(), tensors = nlohmann::json::object();
  for (const auto& [key, n] : h.expertParts) experts.push_back({key.first, key.second, n});
  for (const auto& [name, n] : h.tensors) tensors[name] = n;
  return {{"expert_parts", experts}, {"tensors", tensors}};
}

Holdings holdingsFromJson(const nlohmann::json& j) {
  Holdings h;
  for (const auto& e : j.at("expert_parts")) h.expertParts[{e.at(0).get<int>(), e.at(1).get<int64_t>()}] = e.at(2).get<uint64_t>();
  for (const auto& [name, n] : j.at("tensors").items()) h.tensors[name] = n.get<uint64_t>();
  return h;
}

std::vector<int64_t> expertIdsOf(const Holdings& h) {
  std::set<int64_t> ids;
  for (const auto& [key, n] : h.expertParts)
    if (n) ids.insert(key.second);
  return {ids.begin(), ids.end()};
}

Coverage checkCoverage(const Checkpoint& c, const plan::Placement& placement, const std::vector<Holdings>& expected,
                       const std::vector<std::optional<Holdings>>& heldOrNone) {
  Coverage v;
  for (size_t r = 0; r < expected.size() && r < heldOrNone.size(); ++r) {
    const int rank = int(r);
    if (!heldOrNone[r]) {
      v.unchecked.push_back(rank);
      continue;
    }
    const Holdings& held = *heldOrNone[r];
    differences(expected[r].expertParts, held.expertParts, [&](const std::pair<int, int64_t>& k, uint64_t want, uint64_t got) {
      (got < want ? v.missing : v.duplicated).push_back({rank, k.first, k.second, want, got});
    });
    differences(expected[r].tensors, held.tensors, [&](const std::string& name, uint64_t want, uint64_t got) {
      (got < want ? v.tensorsMissing : v.tensorsDuplicated).push_back({rank, name, want, got});
    });
  }
  // Experts the placement gives to no rank, in each MoE layer whose routed tensors exist.
  std::set<int> layers;
  for (const TensorRecord& t : c.tensors)
    if (t.role == Role::RoutedExpert) layers.insert(t.layer);
  for (int layer : layers) {
    if (std::find(c.model.moeLayers.begin(), c.model.moeLayers.end(), layer) == c.model.moeLayers.end()) continue;
    std::vector<bool> placed(size_t(std::max<int64_t>(0, c.model.numExperts)), false);
    for (int r = 0; r < placement.epSize; ++r)
      for (int64_t e : plan::expertsOnRank(c.model, placement, r, layer))
        if (e >= 0 && size_t(e) < placed.size()) placed[size_t(e)] = true;
    for (size_t e = 0; e < placed.size(); ++e)
      if (!placed[e]) v.unplaced.push_back({layer, int64_t(e)});
  }
  return v;
}

nlohmann::json coverageJson(const Coverage& v) {
  auto experts = [](const std::vector<ExpertGap>& gaps) {
    nlohmann::json a = nlohmann::json::array();
    for (const auto& g : gaps) a.push_back({{"rank", g.rank}, {"layer", g.layer}, {"expert", g.expert}, {"expected_parts", g.expected}, {"held_parts", g.held}});
    return a;
  };
  auto tensors = [](const std::vector<TensorGap>& gaps) {
    nlohmann::json a = nlohmann::json::array();
    for (const auto& g : gaps) a.push_back({{"rank", g.rank}, {"tensor", g.tensor}, {"expected", g.expected}, {"held", g.held}});
    return a;
  };
  nlohmann::json unplaced = nlohmann::json::array();
  for (const auto& [layer, e] : v.unplaced) unplaced.push_back({{"layer", layer}, {"expert", e}});
  return {{"ok", v.ok()},
          {"missing", experts(v.missing)},
          {"duplicated", experts(v.duplicated)},
          {"tensors_missing", tensors(v.tensorsMissing)},
          {"tensors_duplicated", tensors(v.tensorsDuplicated)},
          {"unplaced", unplaced},
          {"unchecked_ranks", v.unchecked}};
}

}  // namespace ws::load
