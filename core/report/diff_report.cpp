#include "core/report/diff_report.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/diff/diff_cells.h"
#include "core/report/markup_escape.h"

namespace ws {

namespace {

using diff::PairResult;

// JSON has no infinity: an infinite NMSE (A all zero, B not) is written as null.
nlohmann::json number(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

struct Summary {
  uint64_t tensors = 0, identical = 0;
  double worstNmse = 0, minCosine = 1, maxAbs = 0;
  std::string worstKey;
  void add(const PairResult& p) {
    if (!p.error.empty() || !p.metrics.shapesAgree) return;
    ++tensors;
    identical += p.metrics.identical;
    if (p.metrics.nmse > worstNmse || worstKey.empty()) worstNmse = p.metrics.nmse, worstKey = p.pair.key;
    minCosine = std::min(minCosine, p.metrics.cosine);
    maxAbs = std::max(maxAbs, p.metrics.maxAbs);
  }
  nlohmann::json json() const {
    return {{"tensors", tensors}, {"identical", identical}, {"worst_nmse", number(worstNmse)}, {"worst", worstKey},
            {"min_cosine", number(minCosine)}, {"max_abs", number(maxAbs)}};
  }
};

std::map<int32_t, Summary> byLayer(const diff::DiffReport& r) {
  std::map<int32_t, Summary> m;
  for (const auto& p : r.pairs) m[p.pair.layer].add(p);
  return m;
}

std::map<std::pair<int32_t, int32_t>, Summary> byExpert(const diff::DiffReport& r) {
  std::map<std::pair<int32_t, int32_t>, Summary> m;
  for (const auto& p : r.pairs)
    if (p.pair.expert >= 0) m[{p.pair.layer, p.pair.expert}].add(p);
  return m;
}

std::string shapeText(const std::vector<uint64_t>& s) {
  std::string o = "[";
  for (size_t i = 0; i < s.size(); ++i) o += (i ? ", " : "") + std::to_string(s[i]);
  return o + "]";
}

std::string status(const PairResult& p) {
  if (!p.error.empty()) return "error";
  if (!p.metrics.shapesAgree) return "shape mismatch";
  return p.metrics.identical ? "identical" : "differs";
}

}  // namespace

nlohmann::json diffJson(const diff::DiffReport& r) {
  using nlohmann::json;
  Summary all;
  json tensors = json::array();
  for (const auto& p : r.pairs) {
    all.add(p);
    const auto& m = p.metrics;
    json t = {{"key", p.pair.key}, {"a", p.nameA}, {"b", p.nameB}, {"scheme_a", p.schemeA}, {"scheme_b", p.schemeB},
              {"layer", p.pair.layer}, {"expert", p.pair.expert}, {"projection", p.pair.projection}, {"status", status(p)},
              {"shape_a", p.shapeA}, {"shape_b", p.shapeB}, {"undone", p.undone}};
    if (p.error.empty() && m.shapesAgree) {
      t["elements"] = m.count;
      t["differing"] = m.differing;
      t["nan_mismatch"] = m.nanMismatch;
      t["cosine"] = number(m.cosine);
      t["nmse"] = number(m.nmse);
      t["rel_frobenius"] = number(m.relFrobenius);
      t["max_abs"] = number(m.maxAbs);
    }
    t["saturated_a"] = p.saturatedA < 0 ? json(nullptr) : json(p.saturatedA);
    t["saturated_b"] = p.saturatedB < 0 ? json(nullptr) : json(p.saturatedB);
    if (!p.error.empty()) t["error"] = p.error;
    tensors.push_back(std::move(t));
  }
  json layers = json::array();
  for (const auto& [l, s] : byLayer(r)) {
    json j = s.json();
    j["layer"] = l;
    layers.push_back(std::move(j));
  }
  json experts = json::array();
  for (const auto& [le, s] : byExpert(r)) {
    json j = s.json();
    j["layer"] = le.first;
    j["expert"] = le.second;
    experts.push_back(std::move(j));
  }
  // The comparison window's cells: worst first by one metric (core/diff/diff_cells).
  const diff::DiffCells grid = diff::diffCells(r);
  json cells = json::array();
  auto cellJson = [&](const diff::DiffCell& c) {
    return json{{"layer", c.layer}, {"expert", c.expert}, {"tensors", c.pairs.size()}, {"worst", r.pairs[c.pairs.front()].pair.key},
                {diff::kRankMetric, number(c.worst)}};
  };
  for (const auto& c : grid.cells) cells.push_back(cellJson(c));
  json summary = all.json();
  summary["rank_metric"] = diff::kRankMetric;
  summary["worst_cell"] = grid.worstCell < 0 ? json(nullptr) : cellJson(grid.cells[size_t(grid.worstCell)]);
  summary["matched"] = r.pairs.size();
  summary["only_a"] = r.onlyA.size();
  summary["only_b"] = r.onlyB.size();
  summary["shape_mismatches"] = r.shapeMismatches;
  summary["errors"] = r.errors;
  summary["metadata_differences"] = r.metadata.size();
  json metadata = json::array();
  for (const auto& d : r.metadata)
    metadata.push_back({{"source", d.source}, {"key", d.key}, {"a", d.a ? json(*d.a) : json(nullptr)}, {"b", d.b ? json(*d.b) : json(nullptr)}});
  return {{"schema", "weightscope.diff/1"}, {"a", r.pathA}, {"b", r.pathB}, {"device", r.device}, {"numerics", r.numerics}, {"summary", summary}, {"tensors", tensors},
          {"layers", layers}, {"experts", experts}, {"cells", cells}, {"only_a", r.onlyA}, {"only_b", r.onlyB}, {"metadata", metadata}};
}

std::string diffText(const diff::DiffReport& r, bool allRows) {
  std::ostringstream o;
  Summary all;
  for (const auto& p : r.pairs) all.add(p);
  char line[512];
  o << "A: " << r.pathA << "\nB: " << r.pathB << "\ndequantized on: " << r.device << (r.numerics == "reference" ? "" : ", numerics " + r.numerics) << "\n";
  std::snprintf(line, sizeof line, "%zu matched (%llu identical), %zu only in A, %zu only in B, %llu shape mismatches, %llu errors\n",
                r.pairs.size(), (unsigned long long)all.identical, r.onlyA.size(), r.onlyB.size(), (unsigned long long)r.shapeMismatches,
                (unsigned long long)r.errors);
  o << line;
  if (all.tensors) {
    std::snprintf(line, sizeof line, "worst NMSE %.3g (%s), lowest cosine %.6f, max |a-b| %.4g\n", all.worstNmse, all.worstKey.c_str(),
                  all.minCosine, all.maxAbs);
    o << line;
  }
  if (const diff::DiffCells grid = diff::diffCells(r); grid.worstCell >= 0) {
    const diff::DiffCell& c = grid.cells[size_t(grid.worstCell)];
    std::snprintf(line, sizeof line, "worst cell: layer %d, %s: %s, relative error %.4g\n", c.layer,
                  c.expert < 0 ? "non-expert tensors" : ("expert " + std::to_string(c.expert)).c_str(), r.pairs[c.pairs.front()].pair.key.c_str(), c.worst);
    o << line;
  }
  o << "\nper layer:\n";
  for (const auto& [l, s] : byLayer(r)) {
    std::snprintf(line, sizeof line, "  %-8s %5llu tensors  %5llu identical  worst NMSE %-10.3g lowest cosine %.6f  (%s)\n",
                  l < 0 ? "-" : std::to_string(l).c_str(), (unsigned long long)s.tensors, (unsigned long long)s.identical, s.worstNmse, s.minCosine,
                  s.worstKey.c_str());
    o << line;
  }
  o << "\ntensors" << (allRows ? "" : " (that differ; --all lists every one)") << ":\n";
  for (const auto& p : r.pairs) {
    if (!allRows && p.error.empty() && p.metrics.shapesAgree && p.metrics.identical) continue;
    const auto& m = p.metrics;
    if (!p.error.empty()) {
      o << "  " << p.pair.key << "  error: " << p.error << "\n";
    } else if (!m.shapesAgree) {
      o << "  " << p.pair.key << "  shape " << shapeText(p.shapeA) << " vs " << shapeText(p.shapeB) << "\n";
    } else {
      std::snprintf(line, sizeof line, "  %-40s %-11s %-11s cos %.6f  nmse %-10.3g max|d| %-10.4g", p.pair.key.c_str(), p.schemeA.c_str(),
                    p.schemeB.c_str(), m.cosine, m.nmse, m.maxAbs);
      o << line;
      if (p.saturatedB >= 0 || p.saturatedA >= 0) {
        std::snprintf(line, sizeof line, "  saturated %s/%s", p.saturatedA < 0 ? "-" : (std::to_string(p.saturatedA * 100).substr(0, 5) + "%").c_str(),
                      p.saturatedB < 0 ? "-" : (std::to_string(p.saturatedB * 100).substr(0, 5) + "%").c_str());
        o << line;
      }
      o << "\n";
    }
  }
  for (const auto& k : r.onlyA) o << "  only in A: " << k << "\n";
  for (const auto& k : r.onlyB) o << "  only in B: " << k << "\n";
  if (!r.metadata.empty()) {
    o << "\nmetadata (" << r.metadata.size() << " differences):\n";
    for (const auto& d : r.metadata) o << "  " << d.source << " " << d.key << ": " << d.a.value_or("(absent)") << " -> " << d.b.value_or("(absent)") << "\n";
  }
  return o.str();
}

std::string diffHtml(const diff::DiffReport& r) {
  const nlohmann::json j = diffJson(r);
  std::ostringstream o;
  o << "<!doctype html><html><head><meta charset=\"utf-8\"><title>weightscope diff</title><style>"
       "body{font:14px system-ui,sans-serif;margin:24px}table{border-collapse:collapse}td,th{padding:2px 8px;border-bottom:1px solid #ddd;text-align:right}"
       "td:first-child,th:first-child{text-align:left}.id{color:#888}.bad{background:#fdd}</style></head><body>";
  o << "<h1>weightscope diff</h1><p>A: <code>" << markupEscape(r.pathA) << "</code><br>B: <code>" << markupEscape(r.pathB) << "</code></p>";
  const auto& s = j["summary"];
  o << "<p>" << s["matched"] << " matched, " << s["identical"] << " identical, " << s["only_a"] << " only in A, " << s["only_b"]
    << " only in B, " << s["shape_mismatches"] << " shape mismatches, " << s["errors"] << " errors.</p>";
  o << "<h2>Per layer</h2><table><tr><th>layer</th><th>tensors</th><th>identical</th><th>worst NMSE</th><th>lowest cosine</th><th>worst tensor</th></tr>";
  for (const auto& l : j["layers"])
    o << "<tr><td>" << l["layer"] << "</td><td>" << l["tensors"] << "</td><td>" << l["identical"] << "</td><td>" << l["worst_nmse"].dump()
      << "</td><td>" << l["min_cosine"].dump() << "</td><td>" << markupEscape(l["worst"].get<std::string>()) << "</td></tr>";
  o << "</table><h2>Tensors</h2><table><tr><th>key</th><th>scheme A</th><th>scheme B</th><th>status</th><th>cosine</th><th>NMSE</th><th>max |a-b|</th><th>saturated B</th></tr>";
  for (const auto& t : j["tensors"]) {
    const std::string st = t["status"].get<std::string>();
    o << "<tr class=\"" << (st == "identical" ? "id" : st == "differs" ? "" : "bad") << "\"><td>" << markupEscape(t["key"].get<std::string>()) << "</td><td>"
      << markupEscape(t["scheme_a"].get<std::string>()) << "</td><td>" << markupEscape(t["scheme_b"].get<std::string>()) << "</td><td>" << st
      << "</td><td>" << t.value("cosine", nlohmann::json()).dump() << "</td><td>" << t.value("nmse", nlohmann::json()).dump() << "</td><td>"
      << t.value("max_abs", nlohmann::json()).dump() << "</td><td>" << t["saturated_b"].dump() << "</td></tr>";
  }
  o << "</table>";
  for (const char* side : {"only_a", "only_b"})
    if (!j[side].empty()) {
      o << "<h2>Only in " << (side[5] == 'a' ? "A" : "B") << "</h2><ul>";
      for (const auto& k : j[side]) o << "<li><code>" << markupEscape(k.get<std::string>()) << "</code></li>";
      o << "</ul>";
    }
  if (!j["metadata"].empty()) {
    o << "<h2>Metadata</h2><table><tr><th>file</th><th>key</th><th>A</th><th>B</th></tr>";
    for (const auto& d : j["metadata"])
      o << "<tr><td>" << markupEscape(d["source"].get<std::string>()) << "</td><td><code>" << markupEscape(d["key"].get<std::string>()) << "</code></td><td><code>"
        << markupEscape(d["a"].is_null() ? "(absent)" : d["a"].get<std::string>()) << "</code></td><td><code>"
        << markupEscape(d["b"].is_null() ? "(absent)" : d["b"].get<std::string>()) << "</code></td></tr>";
    o << "</table>";
  }
  o << "</body></html>\n";
  return o.str();
}

}  // namespace ws
