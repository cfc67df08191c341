#include "core/numerics/stats_wire.h"

#include <bit>

#include <nlohmann/json.hpp>

namespace ws::num {

namespace {

uint64_t bits(double d) { return std::bit_cast<uint64_t>(d); }
double fromBits(const nlohmann::json& j) { return std::bit_cast<double>(j.get<uint64_t>()); }

}  // namespace

nlohmann::json statsWire(const Stats& s) {
  return {s.count, s.nan, s.inf, s.zero, s.subnormal, s.negative, s.finite(), bits(s.min()), bits(s.max()), bits(s.absmax()), bits(s.mean()), bits(s.m2())};
}

Stats statsFromWire(const nlohmann::json& j) {
  Stats counts;
  counts.count = j.at(0), counts.nan = j.at(1), counts.inf = j.at(2), counts.zero = j.at(3), counts.subnormal = j.at(4), counts.negative = j.at(5);
  return Stats::fromMoments(counts, j.at(6).get<uint64_t>(), fromBits(j.at(7)), fromBits(j.at(8)), fromBits(j.at(9)), fromBits(j.at(10)), fromBits(j.at(11)));
}

nlohmann::json histogramWire(const Histogram& h) {
  return {{"log", h.log}, {"lo", bits(h.lo)}, {"hi", bits(h.hi)}, {"counts", h.counts}, {"fine", h.fine}, {"below", h.below}, {"above", h.above}};
}

Histogram histogramFromWire(const nlohmann::json& j) {
  Histogram h;
  h.log = j.at("log"), h.lo = fromBits(j.at("lo")), h.hi = fromBits(j.at("hi")), h.fine = j.at("fine");
  h.counts = j.at("counts").get<std::vector<uint64_t>>();
  h.below = j.at("below"), h.above = j.at("above");
  return h;
}

nlohmann::json scaleReportWire(const ScaleReport& r) {
  nlohmann::json groups = nlohmann::json::array();
  for (const auto& [key, kinds] : r.groups) {
    nlohmann::json k = nlohmann::json::array();
    for (const auto& [kind, g] : kinds) k.push_back({kind, statsWire(g.stats), histogramWire(g.hist), g.tensors});
    groups.push_back({key, k});
  }
  return {{"groups", groups}, {"bytes_read", r.bytesRead}, {"logical_tensors", r.logicalTensors}};
}

void addScaleReportWire(ScaleReport& into, const nlohmann::json& j) {
  for (const auto& g : j.at("groups")) {
    auto& kinds = into.groups[g.at(0).get<std::string>()];  // a key with no scales is kept, as one pass keeps it
    for (const auto& k : g.at(1)) kinds[k.at(0).get<std::string>()] = {statsFromWire(k.at(1)), histogramFromWire(k.at(2)), k.at(3).get<uint64_t>()};
  }
  into.bytesRead += j.at("bytes_read").get<uint64_t>();
  into.logicalTensors += j.at("logical_tensors").get<uint64_t>();
}

}  // namespace ws::num
