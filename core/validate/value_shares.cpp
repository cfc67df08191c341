#include "core/validate/value_shares.h"

#include <nlohmann/json.hpp>

#include "core/numerics/stats_wire.h"

namespace ws::val {

namespace {

using nlohmann::json;

json findingWire(const Finding& f) {
  return {int(f.severity), f.code, f.rule, f.tensor, f.file, f.offset ? json(*f.offset) : json(nullptr), f.message, f.hint};
}

Finding findingFromWire(const json& j) {
  Finding f;
  f.severity = Severity(j.at(0).get<int>());
  f.code = j.at(1), f.rule = j.at(2), f.tensor = j.at(3), f.file = j.at(4);
  if (!j.at(5).is_null()) f.offset = j.at(5).get<uint64_t>();
  f.message = j.at(6), f.hint = j.at(7);
  return f;
}

}  // namespace

std::pair<size_t, size_t> shareOf(const ValidateOptions& opt, const std::vector<uint64_t>& bytes) {
  if (!opt.comm) return {0, bytes.size()};
  return dist::shareByBytes(bytes, opt.comm->rank(), opt.comm->size());
}

Result<num::ScaleReport> gatherScaleShares(dist::Communicator& comm, const Result<num::ScaleReport>& mine, std::vector<uint64_t>& byRank) {
  const json m = mine ? json{{"report", num::scaleReportWire(mine.value())}} : json{{"error", mine.error().message}, {"code", int(mine.error().code)}};
  num::ScaleReport all;
  std::optional<Error> first;
  for (const std::string& s : comm.allGather(m.dump())) {
    const json j = json::parse(s);
    if (j.contains("error")) {
      if (!first) first = Error{ErrorCode(j["code"].get<int>()), j["error"].get<std::string>(), {}, std::nullopt, {}};
      continue;
    }
    const uint64_t before = all.bytesRead;
    num::addScaleReportWire(all, j["report"]);
    byRank.push_back(all.bytesRead - before);
  }
  if (first) return *first;
  return all;
}

ValueShare gatherValueShares(dist::Communicator& comm, const ValueShare& mine) {
  json findings = json::array();
  for (const Finding& f : mine.findings) findings.push_back(findingWire(f));
  json prints = json::array();
  for (const ExpertPrint& p : mine.prints) prints.push_back({p.layer, p.expert, p.projection, p.tensor, p.logical, p.slice, p.slices, p.hash, p.sketch, p.sampleSquares, p.sampleCount, p.valueCount});
  const json m = {{"findings", findings}, {"prints", prints}, {"bytes_read", mine.bytesRead}, {"fingerprint_bytes", mine.fingerprintBytes}, {"kernel_bytes", mine.kernelBytes},
                  {"cancelled", mine.cancelled}};
  ValueShare all;
  for (const std::string& s : comm.allGather(m.dump())) {
    const json j = json::parse(s);
    for (const auto& f : j["findings"]) all.findings.push_back(findingFromWire(f));
    for (const auto& p : j["prints"])
      all.prints.push_back({p[0].get<int32_t>(), p[1].get<int64_t>(), p[2].get<std::string>(), p[3].get<std::string>(), p[4].get<uint32_t>(), p[5].get<uint64_t>(), p[6].get<uint64_t>(),
                            p[7].get<uint64_t>(), p[8].get<std::vector<float>>(), p[9].get<double>(), p[10].get<uint64_t>(), p[11].get<uint64_t>()});
    all.bytesRead += j["bytes_read"].get<uint64_t>();
    all.bytesByRank.push_back(j["bytes_read"].get<uint64_t>());
    all.fingerprintBytes += j["fingerprint_bytes"].get<uint64_t>();
    all.fingerprintBytesByRank.push_back(j["fingerprint_bytes"].get<uint64_t>());
    all.kernelBytesByRank.push_back(j["kernel_bytes"].get<int64_t>());
    all.cancelled = all.cancelled || j["cancelled"].get<bool>();
  }
  return all;
}

}  // namespace ws::val
