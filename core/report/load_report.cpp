#include "core/report/load_report.h"

#include <sstream>

#include <nlohmann/json.hpp>

#include "core/util/format_bytes.h"

namespace ws {

namespace {

nlohmann::json categories(const std::array<uint64_t, plan::kCategories>& b) {
  nlohmann::json j = nlohmann::json::object();
  for (int k = 0; k < plan::kCategories; ++k) j[plan::categoryName(k)] = b[size_t(k)];
  return j;
}

}  // namespace

nlohmann::json loadJson(const Checkpoint& c, const load::LoadResult& r) {
  const auto& rep = r.report;
  nlohmann::json tensors = nlohmann::json::array(), derived = nlohmann::json::array(), deferred = nlohmann::json::array(), phases = nlohmann::json::array();
  for (const auto& t : r.store->tensors())
    tensors.push_back({{"name", t.name}, {"device", rep.device}, {"bytes", t.buffer.bytes}, {"alignment", t.buffer.alignment}, {"arena", t.arena}, {"category", plan::categoryName(t.category)}});
  for (const auto& d : r.store->derived()) derived.push_back({{"name", d.name}, {"kind", d.kind}, {"sources", d.sources}, {"bytes", d.buffer.bytes}, {"arena", d.arena}});
  const load::Residency& m = rep.residency;
  nlohmann::json residency = {{"measured", m.measured},         {"source", m.source},
                              {"allocations", m.arenas},        {"reserved", m.reserved},
                              {"slack", m.slack},               {"granularity", m.granularity},
                              {"predicted_footprint", m.predictedFootprint}, {"used", m.used},
                              {"difference", m.difference},     {"tolerance", m.tolerance},
                              {"mismatch", m.mismatch}};
  nlohmann::json pageCache = nullptr;
  if (rep.pageCache.checked) pageCache = {{"loaded_bytes", rep.pageCache.bytes}, {"cached_bytes", rep.pageCache.cached}};
  for (const auto& d : r.store->deferred())
    deferred.push_back({{"name", d.name}, {"reason", d.reason}, {"file", d.file}, {"offset", d.offset}, {"bytes", d.bytes}});
  for (const auto& p : rep.phases)
    phases.push_back({{"phase", p.phase}, {"seconds", p.seconds}, {"bytes", p.bytes}, {"gb_per_s", p.seconds > 0 ? double(p.bytes) / p.seconds / 1e9 : 0.0}});
  return {
      {"schema", "weightscope.load/2"},
      {"path", c.root},
      {"device", rep.device},
      {"ep_size", rep.epSize},
      {"ep_rank", rep.epRank},
      {"memory", {{"total", rep.before.total}, {"free_before", rep.before.free}, {"free_after", rep.after.free}, {"used_by_load", m.used}}},
      {"residency", residency},
      {"page_cache", pageCache},
      {"reads", {{"readers", rep.readers}, {"staging_bytes", rep.stagingBytes}, {"calls", rep.reads}}},
      {"resident", {{"bytes", rep.resident}, {"by_category", categories(rep.bytes)}, {"scales", rep.scaleBytes}, {"tensors", r.store->tensors().size()}}},
      {"derived_bytes", rep.derivedBytes},
      {"bf16_row_ranges", {{"from_uploaded", rep.bf16FromUploaded}, {"staged", rep.bf16Staged}}},
      {"verified_bytes", rep.verifiedBytes},
      {"runtime", rep.runtime},
      {"converted_f16_bytes", rep.convertedBytes},
      {"kv_cache_scales", rep.kvCacheScales},
      {"predicted", {{"resident", rep.predicted.resident}, {"derived", rep.predicted.derived}, {"peak", rep.predicted.peak}, {"by_category", categories(rep.predicted.bytes)}}},
      {"difference", {{"resident", rep.residentDifference}}},
      {"phases", phases},
      {"tensors", tensors},
      {"derived", derived},
      {"deferred", deferred},
      {"notes", rep.notes},
  };
}

std::string loadText(const Checkpoint& c, const load::LoadResult& r) {
  const auto& rep = r.report;
  std::ostringstream o;
  o << "loaded " << c.root << " onto " << rep.device << " (EP rank " << rep.epRank << " of " << rep.epSize << ")\n";
  const load::Residency& m = rep.residency;
  o << "resident  " << formatBytes(rep.resident) << " read into " << r.store->tensors().size() << " tensors  (predicted " << formatBytes(rep.predicted.resident)
    << ", difference " << rep.residentDifference << " B)\n";
  o << "derived   " << formatBytes(rep.derivedBytes) << " in " << r.store->derived().size() << " buffers, built on " << rep.device << "\n";
  o << "deferred  " << r.store->deferred().size() << " tensors left on disk\n";
  o << "arenas    " << m.arenas << " allocations, " << formatBytes(m.reserved) << " (" << formatBytes(m.slack) << " alignment slack), rounded to "
    << formatBytes(m.granularity) << ": " << formatBytes(m.predictedFootprint) << " predicted\n";
  o << "memory    free " << formatBytes(rep.before.free) << " -> " << formatBytes(rep.after.free) << " of " << formatBytes(rep.before.total) << ": "
    << (m.used < 0 ? "-" : "") << formatBytes(uint64_t(m.used < 0 ? -m.used : m.used)) << (m.measured ? " used, measured by the device" : " used (host stand-in bookkeeping, not a measurement)")
    << ", difference " << m.difference << " B (tolerance " << formatBytes(m.tolerance) << ")" << (m.mismatch ? "  MISMATCH" : "") << "\n";
  if (rep.pageCache.checked)
    o << "pages     " << formatBytes(rep.pageCache.cached) << " of the " << formatBytes(rep.pageCache.bytes) << " read still in the page cache (mincore)\n";
  for (int k = 0; k < plan::kCategories; ++k)
    if (rep.bytes[size_t(k)]) o << "  " << plan::categoryName(k) << std::string(16 - std::string(plan::categoryName(k)).size(), ' ') << formatBytes(rep.bytes[size_t(k)]) << "\n";
  o << "reads     " << rep.reads << " preads by " << rep.readers << " reader" << (rep.readers == 1 ? "" : "s") << ", " << formatBytes(rep.stagingBytes) << " staging buffers\n";
  for (const auto& p : rep.phases) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "phase %-12s %8.3f s  %s  %.2f GB/s\n", p.phase.c_str(), p.seconds, formatBytes(p.bytes).c_str(),
                  p.seconds > 0 ? double(p.bytes) / p.seconds / 1e9 : 0.0);
    o << buf;
  }
  for (const auto& n : rep.notes) o << "note: " << n << "\n";
  return o.str();
}

}  // namespace ws
