#include "core/plan/placement.h"

#include <nlohmann/json.hpp>

#include "core/io/text_file.h"

namespace ws::plan {

int64_t Placement::physicalExperts() const { return physicalToLogical.empty() ? logicalExperts : int64_t(physicalToLogical[0].size()); }

std::vector<int64_t> Placement::slotsOf(int rank) const {
  const int64_t P = physicalExperts(), N = epSize;
  std::vector<int64_t> s;
  if (kind == PlacementKind::RoundRobin) {
    for (int64_t e = rank; e < P; e += N) s.push_back(e);
    return s;
  }
  // Linear (also for maps): contiguous blocks; the remainder goes to the first or last ranks.
  const int64_t base = P / N, rem = P % N;
  int64_t start, count;
  if (remainder == Remainder::Last) {
    start = rank * base;
    count = rank == N - 1 ? P - start : base;
  } else {
    count = base + (rank < rem ? 1 : 0);
    start = rank * base + std::min<int64_t>(rank, rem);
  }
  for (int64_t e = start; e < start + count; ++e) s.push_back(e);
  return s;
}

std::vector<int64_t> Placement::logicalOf(int rank, size_t layerRow) const {
  std::vector<int64_t> out;
  for (int64_t slot : slotsOf(rank)) out.push_back(physicalToLogical.empty() ? slot : physicalToLogical[std::min(layerRow, layerRows() - 1)][size_t(slot)]);
  return out;
}

namespace {

Error usage(const std::string& m) { return Error{ErrorCode::Usage, m, {}, std::nullopt, {}}; }

std::optional<Error> checkDivides(Remainder rem, int64_t P, int epSize) {
  if (epSize < 1) return usage("--ep must be at least 1");
  if (rem == Remainder::Strict && P % epSize != 0)
    return usage(std::to_string(P) + " experts do not divide over " + std::to_string(epSize) + " ranks (--remainder strict, as SGLang requires)");
  return std::nullopt;
}

}  // namespace

Result<Placement> makePlacement(PlacementKind kind, Remainder rem, int epSize, int64_t logicalExperts) {
  if (auto e = checkDivides(rem, logicalExperts, epSize)) return *e;
  Placement p;
  p.kind = kind;
  p.remainder = rem;
  p.epSize = epSize;
  p.logicalExperts = logicalExperts;
  p.source = kind == PlacementKind::RoundRobin ? "round-robin" : "linear";
  return p;
}

Result<Placement> trivialMap(int64_t physical, Remainder rem, int epSize, int64_t logicalExperts) {
  if (physical < logicalExperts) return usage("a trivial map needs at least as many physical slots as experts");
  if (auto e = checkDivides(rem, physical, epSize)) return *e;
  Placement p;
  p.kind = PlacementKind::Map;
  p.remainder = rem;
  p.epSize = epSize;
  p.logicalExperts = logicalExperts;
  p.source = "trivial:" + std::to_string(physical);
  p.physicalToLogical.emplace_back();
  for (int64_t i = 0; i < physical; ++i) p.physicalToLogical[0].push_back(logicalExperts ? i % logicalExperts : 0);
  return p;
}

Result<Placement> loadMap(const std::string& path, Remainder rem, int epSize, int64_t logicalExperts) {
  // The same guarded reader as config.json and index.json: no blocking on a FIFO, a size cap.
  auto text = capture([&] { return readTextFile(path); });
  if (!text) return Error{ErrorCode::Io, "cannot read the expert map: " + text.error().message, path, std::nullopt, {}};
  nlohmann::json j = nlohmann::json::parse(text.value(), nullptr, false);
  if (j.is_discarded()) return Error{ErrorCode::InvalidHeaderJson, "expert map is not JSON", path, std::nullopt, {}};
  const nlohmann::json& m = j.is_object() && j.contains("physical_to_logical") ? j["physical_to_logical"] : j;
  if (!m.is_array() || m.empty()) return Error{ErrorCode::InvalidHeaderJson, "expected a list of logical expert ids (or one list per layer)", path, std::nullopt, {}};
  Placement p;
  p.kind = PlacementKind::Map;
  p.remainder = rem;
  p.epSize = epSize;
  p.logicalExperts = logicalExperts;
  p.source = path;
  auto readRow = [&](const nlohmann::json& row) -> std::optional<Error> {
    std::vector<int64_t> r;
    for (const auto& v : row) {
      if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() >= logicalExperts)
        return Error{ErrorCode::InvalidHeaderJson, "entry " + v.dump() + " is not a logical expert id in [0, " + std::to_string(logicalExperts) + ")", path, std::nullopt, {}};
      r.push_back(v.get<int64_t>());
    }
    if (!p.physicalToLogical.empty() && r.size() != p.physicalToLogical[0].size())
      return Error{ErrorCode::InvalidHeaderJson, "every layer of the map must have the same number of physical slots", path, std::nullopt, {}};
    p.physicalToLogical.push_back(std::move(r));
    return std::nullopt;
  };
  if (m[0].is_array()) {
    for (const auto& row : m)
      if (auto e = readRow(row)) return *e;
  } else if (auto e = readRow(m)) {
    return *e;
  }
  if (auto e = checkDivides(rem, p.physicalExperts(), epSize)) return *e;
  // Every logical expert must have a home.
  for (const auto& row : p.physicalToLogical) {
    std::vector<bool> seen(size_t(logicalExperts), false);
    for (auto l : row) seen[size_t(l)] = true;
    for (int64_t l = 0; l < logicalExperts; ++l)
      if (!seen[size_t(l)]) return Error{ErrorCode::InvalidHeaderJson, "logical expert " + std::to_string(l) + " has no physical slot", path, std::nullopt, {}};
  }
  return p;
}

const char* remainderName(Remainder r) {
  switch (r) {
    case Remainder::First: return "first";
    case Remainder::Last: return "last";
    case Remainder::Strict: return "strict";
  }
  return "first";
}

Result<Remainder> parseRemainder(const std::string& s) {
  for (Remainder r : {Remainder::First, Remainder::Last, Remainder::Strict})
    if (s == remainderName(r)) return r;
  return usage("--remainder must be first, last or strict, not '" + s + "'");
}

Result<PlacementSpec> PlacementSpec::parse(const std::string& placement, const std::string& remainder) {
  auto rem = parseRemainder(remainder);
  if (!rem) return rem.error();
  PlacementSpec s;
  s.remainder = rem.value();
  if (placement.empty() || placement == "linear") return s;
  if (placement == "round-robin") {
    s.kind = PlacementKind::RoundRobin;
    return s;
  }
  if (placement.rfind("trivial:", 0) == 0) {
    const std::string n = placement.substr(8);
    size_t used = 0;
    try {
      s.trivialSlots = std::stoll(n, &used);
    } catch (...) {
      used = 0;
    }
    if (used == 0 || used != n.size() || s.trivialSlots < 1) return usage("--placement trivial:P needs a positive slot count, not '" + n + "'");
    s.kind = PlacementKind::Map;
    return s;
  }
  s.kind = PlacementKind::Map;
  s.mapFile = placement;
  return s;
}

Result<Placement> PlacementSpec::build(int epSize, int64_t logicalExperts) const {
  if (kind != PlacementKind::Map) return makePlacement(kind, remainder, epSize, logicalExperts);
  if (trivialSlots > 0) return trivialMap(trivialSlots, remainder, epSize, logicalExperts);
  return loadMap(mapFile, remainder, epSize, logicalExperts);
}

}  // namespace ws::plan
