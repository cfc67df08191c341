#include "core/report/validate_report.h"

#include <stdexcept>
#include <string_view>

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/model/expert_grid.h"
#include "core/util/format_bytes.h"
#include "core/report/markup_escape.h"
#include "core/validate/rules.h"

namespace ws {

namespace {

using val::Finding;
using val::Severity;

std::string escape(const std::string& s) { return markupEscape(s); }

std::vector<const Finding*> shown(const val::ValidationReport& r, Severity min) {
  std::vector<const Finding*> v;
  for (const auto& f : r.findings)
    if (f.severity >= min) v.push_back(&f);
  return v;
}

std::string summaryLine(const val::ValidationReport& r) {
  return std::to_string(r.count(Severity::Error)) + " errors, " + std::to_string(r.count(Severity::Warning)) + " warnings, " +
         std::to_string(r.count(Severity::Info)) + " infos";
}

uint64_t bytesRead(const val::ValidationReport& r) {
  uint64_t n = 0;
  for (const auto& [k, v] : r.bytesReadByFamily) n += v;
  return n;
}

}  // namespace

nlohmann::json findingJson(const Finding& f) {
  return {{"severity", val::severityName(f.severity)},
          {"code", f.code},
          {"rule", f.rule},
          {"tensor", f.tensor.empty() ? nlohmann::json(nullptr) : nlohmann::json(f.tensor)},
          {"file", f.file.empty() ? nlohmann::json(nullptr) : nlohmann::json(f.file)},
          {"offset", f.offset ? nlohmann::json(*f.offset) : nlohmann::json(nullptr)},
          {"message", f.message},
          {"hint", f.hint}};
}

nlohmann::json validateJson(const val::ValidationReport& r, Severity min) {
  const Checkpoint* c = r.checkpoint.get();
  nlohmann::json findings = nlohmann::json::array();
  for (const Finding* f : shown(r, min)) findings.push_back(findingJson(*f));
  nlohmann::json doc = {
      {"schema", "weightscope.validate/1"},
      {"path", r.path},
      {"summary", {{"errors", r.count(Severity::Error)}, {"warnings", r.count(Severity::Warning)}, {"infos", r.count(Severity::Info)},
                   {"bytes_read", bytesRead(r)}, {"seconds", r.seconds}, {"rules_run", r.rulesRun.size()}}},
      {"bytes_read_by_family", r.bytesReadByFamily},
      {"rules_run", r.rulesRun},
      {"findings", std::move(findings)},
  };
  if (!r.verdict.empty()) doc["verdict"] = r.verdict;  // --runtime vllm|sglang
  if (!r.bytesReadByRank.empty()) doc["bytes_read_by_rank"] = r.bytesReadByRank;  // --distributed
  if (!r.kernelBytesReadByRank.empty()) {  // --distributed: measured by the kernel, null where it could not say
    nlohmann::json measured = nlohmann::json::array();
    for (int64_t b : r.kernelBytesReadByRank) measured.push_back(b < 0 ? nlohmann::json(nullptr) : nlohmann::json(b));
    doc["bytes_read_by_rank_measured"] = std::move(measured);
  }
  if (!r.expertHealth.empty()) {  // the value pass's sampled expert statistics (expert_health.h)
    auto number = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); };
    nlohmann::json cells = nlohmann::json::array();
    for (const auto& h : r.expertHealth)
      cells.push_back({{"layer", h.layer}, {"expert", h.expert}, {"norm_octaves", number(h.normOctaves)}, {"nearest_cosine", number(h.nearestCosine)},
                       {"nearest", h.nearest < 0 ? nlohmann::json(nullptr) : nlohmann::json(h.nearest)}});
    doc["expert_health"] = std::move(cells);
  }
  if (c)
    doc["model"] = {{"architecture", c->model.architecture}, {"format", c->format}, {"num_layers", c->model.numLayers}, {"num_experts", c->model.numExperts},
                    {"tensors", c->tensors.size()}, {"bytes", c->totalBytes()}};
  return doc;
}

std::string validateMarkdown(const val::ValidationReport& r, Severity min) {
  std::ostringstream o;
  const Checkpoint* c = r.checkpoint.get();
  const char* badge = r.count(Severity::Error) ? "FAILED" : "passed";
  o << "### Weightscope validation " << badge << ": `" << r.path << "`\n\n";
  if (!r.verdict.empty()) o << "**" << r.verdict << "**\n\n";
  o << "**" << summaryLine(r) << "**";
  if (c)
    o << " - " << (c->model.architecture.empty() ? "unknown model" : c->model.architecture) << ", " << c->model.numLayers << " layers, " << c->model.numExperts
      << " experts, " << formatCount(c->tensors.size()) << " tensors, " << formatBytes(c->totalBytes());
  o << "; " << r.rulesRun.size() << " rules, " << formatBytes(bytesRead(r)) << " of data read.\n\n";
  for (const auto& [pass, ranks] : r.bytesReadByRank) {  // --distributed: each rank's share
    o << "Distributed " << pass << " over " << ranks.size() << " ranks:";
    for (size_t k = 0; k < ranks.size(); ++k) o << (k ? ", " : " ") << "rank " << k << " " << formatBytes(ranks[k]);
    o << ".\n\n";
  }
  auto list = shown(r, min);
  if (list.empty()) {
    o << "No findings at this severity.\n";
    return o.str();
  }
  o << "| severity | code | rule | tensor | message |\n|---|---|---|---|---|\n";
  const size_t limit = 100;
  for (size_t i = 0; i < list.size() && i < limit; ++i) {
    const Finding& f = *list[i];
    auto cell = [](std::string s) {
      for (size_t p = 0; (p = s.find('|', p)) != std::string::npos; p += 2) s.replace(p, 1, "\\|");
      return s;
    };
    o << "| " << val::severityName(f.severity) << " | " << f.code << " | " << f.rule << " | " << (f.tensor.empty() ? "" : "`" + f.tensor + "`") << " | "
      << cell(f.message) << " |\n";
  }
  if (list.size() > limit) o << "\n... and " << (list.size() - limit) << " more findings (see the full report).\n";
  return o.str();
}

std::string validateJunit(const val::ValidationReport& r, Severity min) {
  // One test case per rule run, grouped in a suite per family; a rule with errors fails.
  std::map<std::string, std::vector<const val::RuleInfo*>> families;
  for (const auto& code : r.rulesRun) {
    const auto& ri = val::rule(code);
    families[ri.family].push_back(&ri);
  }
  std::map<std::string, std::vector<const Finding*>> byCode;
  for (const auto& f : r.findings)
    if (f.severity >= min) byCode[f.code].push_back(&f);
  std::ostringstream o;
  size_t tests = 0, failures = 0;
  for (const auto& [fam, rs] : families)
    for (const auto* ri : rs) {
      ++tests;
      for (const Finding* f : byCode[ri->code])
        if (f->severity == Severity::Error) {
          ++failures;
          break;
        }
    }
  o << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  o << "<testsuites name=\"weightscope validate\" tests=\"" << tests << "\" failures=\"" << failures << "\" time=\"" << r.seconds << "\">\n";
  for (const auto& [fam, rs] : families) {
    size_t famFail = 0;
    for (const auto* ri : rs)
      for (const Finding* f : byCode[ri->code])
        if (f->severity == Severity::Error) {
          ++famFail;
          break;
        }
    o << "  <testsuite name=\"" << escape(fam) << "\" tests=\"" << rs.size() << "\" failures=\"" << famFail << "\">\n";
    // The engine's verdict where JUnit keeps a suite's facts (properties come first).
    if (fam == "engine" && !r.verdict.empty()) o << "    <properties><property name=\"verdict\" value=\"" << escape(r.verdict) << "\"/></properties>\n";
    for (const auto* ri : rs) {
      const auto& fs = byCode[ri->code];
      o << "    <testcase classname=\"weightscope." << escape(fam) << "\" name=\"" << ri->code << " " << escape(ri->name) << "\"";
      if (fs.empty()) {
        o << "/>\n";
        continue;
      }
      o << ">\n";
      std::string detail;
      size_t errors = 0;
      for (const Finding* f : fs) {
        errors += f->severity == Severity::Error;
        detail += std::string(val::severityName(f->severity)) + ": " + (f->tensor.empty() ? "" : f->tensor + ": ") + f->message + "\n";
      }
      if (errors)
        o << "      <failure message=\"" << errors << " error(s): " << escape(fs.front()->message) << "\" type=\"" << ri->code << "\">" << escape(detail) << "</failure>\n";
      else
        o << "      <system-out>" << escape(detail) << "</system-out>\n";
      o << "    </testcase>\n";
    }
    o << "  </testsuite>\n";
  }
  o << "</testsuites>\n";
  return o.str();
}

std::string validateHtml(const val::ValidationReport& r, Severity min) {
  const Checkpoint* c = r.checkpoint.get();
  std::ostringstream o;
  o << R"(<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Weightscope validation</title><style>
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px;color:#1d232b;background:#fafbfc}
h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:28px 0 8px}.sub{color:#5b6470}
.badges span{display:inline-block;padding:3px 10px;border-radius:12px;margin:8px 6px 0 0;font-weight:600}
.e{background:#fde2e1;color:#a4161a}.w{background:#fff1cc;color:#8a5a00}.i{background:#e0ecff;color:#1c4aa3}.ok{background:#dcf5e3;color:#17693a}
.bar{display:flex;align-items:center;margin:3px 0}.bar .l{width:140px}.bar .b{height:14px;background:#4c7bd9;border-radius:2px;margin-right:8px}
table{border-collapse:collapse;background:#fff}td,th{border:1px solid #e1e4e8;padding:4px 8px;text-align:left;vertical-align:top}th{background:#f3f5f7}
.map td{padding:0;width:14px;height:14px;border:1px solid #fff}.map th{font-weight:400;font-size:11px;padding:0 6px}
.legend{font-size:12px;color:#5b6470}.hist{display:inline-block;margin:0 18px 12px 0;vertical-align:top;font-size:12px}
tr.sev-error td:first-child{color:#a4161a;font-weight:600}tr.sev-warning td:first-child{color:#8a5a00;font-weight:600}
code{font-size:12px}#filter{width:320px;padding:4px}</style></head><body>)";
  o << "<h1>Weightscope validation</h1>";
  if (!r.verdict.empty()) o << "<div class=\"verdict\"><b>" << escape(r.verdict) << "</b></div>";
  o << "<div class=\"sub\">" << escape(r.path);
  if (c) o << " &middot; " << escape(c->model.architecture) << " &middot; " << escape(c->format) << " &middot; " << c->files.size() << " files";
  o << "</div><div class=\"badges\">";
  if (!r.count(Severity::Error)) o << "<span class=\"ok\">passed</span>";
  o << "<span class=\"e\">" << r.count(Severity::Error) << " errors</span><span class=\"w\">" << r.count(Severity::Warning) << " warnings</span><span class=\"i\">"
    << r.count(Severity::Info) << " infos</span></div>";
  o << "<div class=\"sub\">" << r.rulesRun.size() << " rules; " << formatBytes(bytesRead(r)) << " of tensor data read";
  if (c) o << " of " << formatBytes(c->totalBytes());
  o << "</div>";

  if (c) {
    // Bytes by role
    std::map<std::string, uint64_t> byRole;
    for (const auto& t : c->tensors) byRole[std::string(roleName(t.role))] += t.bytes;
    uint64_t mx = 1;
    for (const auto& [k, v] : byRole) mx = std::max(mx, v);
    o << "<h2>Bytes by role</h2>";
    for (const auto& [k, v] : byRole)
      o << "<div class=\"bar\"><span class=\"l\">" << escape(k) << "</span><span class=\"b\" style=\"width:" << std::max<uint64_t>(1, v * 420 / mx) << "px\"></span>"
        << formatBytes(v) << "</div>";

    // Per-layer expert map (core/model/expert_grid, as the Experts tab draws it): bytes per
    // (layer, routed expert), findings marked
    const ExpertGrid grid = expertGrid(*c);
    const int64_t E = grid.experts;
    if (E > 0 && !c->model.moeLayers.empty() && E <= 512) {
      std::map<int, std::vector<uint64_t>> bytes;  // layers with routed experts
      std::map<std::pair<int, int>, Severity> marks;
      std::map<std::string, const TensorRecord*> byName;
      for (const auto& t : c->tensors) byName[t.name] = &t;
      for (int l = 0; l < grid.layers; ++l) {
        std::vector<uint64_t> row(size_t(E), 0);
        bool any = false;
        for (int64_t e = 0; e < E; ++e) {
          row[size_t(e)] = grid.at(l, e).bytes;
          any |= grid.at(l, e).tensors > 0;
        }
        if (any) bytes[l] = std::move(row);
      }
      for (const auto& f : r.findings) {
        auto it = byName.find(f.tensor);
        if (it != byName.end() && it->second->expert >= 0) {
          auto& s = marks[{it->second->layer, it->second->expert}];
          s = std::max(s, f.severity);
        }
      }
      uint64_t bmax = 1;
      for (const auto& [l, row] : bytes)
        for (auto b : row) bmax = std::max(bmax, b);
      o << "<h2>Expert map</h2><div class=\"legend\">bytes per routed expert (darker is larger); red: error, amber: warning on that expert; empty: missing</div><table class=\"map\">";
      std::vector<int> rows = c->model.moeLayers;
      for (const auto& [l, row] : bytes)
        if (std::find(rows.begin(), rows.end(), l) == rows.end()) rows.push_back(l);  // MTP layers with experts
      for (int l : rows) {
        const bool mtp = std::find(c->model.mtpLayers.begin(), c->model.mtpLayers.end(), l) != c->model.mtpLayers.end();
        o << "<tr><th>layer " << l << (mtp ? " (MTP)" : "") << "</th>";
        auto it = bytes.find(l);
        for (int64_t e = 0; e < E; ++e) {
          const uint64_t b = it != bytes.end() ? it->second[size_t(e)] : 0;
          auto mk = marks.find({l, int(e)});
          std::string color;
          if (mk != marks.end() && mk->second == Severity::Error) color = "#d62828";
          else if (mk != marks.end() && mk->second == Severity::Warning) color = "#f4a261";
          else if (!b) color = "#f1f1f1";
          else {
            const int shade = int(235 - 150 * double(b) / double(bmax));
            color = "rgb(" + std::to_string(shade - 40) + "," + std::to_string(shade) + ",255)";
          }
          o << "<td style=\"background:" << color << "\" title=\"layer " << l << ", expert " << e << ": " << formatBytes(b) << "\"></td>";
        }
        o << "</tr>";
      }
      o << "</table>";
    }

    // Scale histograms per layer (log2 of |scale|)
    if (!r.scalesByLayer.groups.empty()) {
      o << "<h2>Scale histograms</h2><div class=\"legend\">log<sub>2</sub> |scale| per layer; bars are counts</div>";
      for (const auto& [layer, kinds] : r.scalesByLayer.groups)
        for (const auto& [kind, g] : kinds) {
          const num::Histogram h = g.hist.coarsened(24);
          uint64_t top = 1;
          for (auto n : h.counts) top = std::max(top, n);
          const int W = 220, Hh = 70;
          const double bw = double(W) / double(h.counts.size());
          o << "<div class=\"hist\"><div>" << escape(layer) << " &middot; " << escape(kind) << " &middot; " << g.stats.count << " values</div><svg width=\"" << W
            << "\" height=\"" << Hh + 14 << "\">";
          for (size_t i = 0; i < h.counts.size(); ++i) {
            const double bh = double(Hh) * double(h.counts[i]) / double(top);
            o << "<rect x=\"" << bw * double(i) << "\" y=\"" << Hh - bh << "\" width=\"" << std::max(1.0, bw - 1) << "\" height=\"" << bh << "\" fill=\"#4c7bd9\"><title>2^"
              << h.edge(i) << " .. 2^" << h.edge(i + 1) << ": " << h.counts[i] << "</title></rect>";
          }
          char lo[32], hi[32];
          std::snprintf(lo, sizeof lo, "2^%.1f", h.lo);
          std::snprintf(hi, sizeof hi, "2^%.1f", h.hi);
          o << "<text x=\"0\" y=\"" << Hh + 12 << "\" font-size=\"10\">" << lo << "</text><text x=\"" << W << "\" y=\"" << Hh + 12
            << "\" font-size=\"10\" text-anchor=\"end\">" << hi << "</text></svg></div>";
        }
    }
  }

  // Findings with filtering
  auto list = shown(r, min);
  o << "<h2>Findings</h2><div><input id=\"filter\" placeholder=\"filter by text, code or tensor\"> ";
  for (const char* s : {"error", "warning", "info"}) o << "<label><input type=\"checkbox\" class=\"sev\" value=\"" << s << "\" checked> " << s << "</label> ";
  o << "</div><table id=\"findings\"><tr><th>severity</th><th>code</th><th>rule</th><th>tensor / file</th><th>message</th><th>hint</th></tr>";
  for (const Finding* f : list) {
    o << "<tr class=\"sev-" << val::severityName(f->severity) << "\" data-sev=\"" << val::severityName(f->severity) << "\"><td>" << val::severityName(f->severity) << "</td><td>"
      << f->code << "</td><td>" << escape(f->rule) << "</td><td><code>" << escape(f->tensor.empty() ? f->file : f->tensor) << "</code>";
    if (f->offset) o << "<br><span class=\"sub\">offset " << *f->offset << "</span>";
    o << "</td><td>" << escape(f->message) << "</td><td class=\"sub\">" << escape(f->hint) << "</td></tr>";
  }
  if (list.empty()) o << "<tr><td colspan=\"6\">No findings.</td></tr>";
  o << R"(</table><script>
(function(){var q=document.getElementById('filter'),boxes=document.querySelectorAll('.sev');
function apply(){var t=q.value.toLowerCase(),on={};boxes.forEach(function(b){on[b.value]=b.checked;});
document.querySelectorAll('#findings tr[data-sev]').forEach(function(r){r.style.display=(on[r.dataset.sev]&&r.textContent.toLowerCase().indexOf(t)>=0)?'':'none';});}
q.addEventListener('input',apply);boxes.forEach(function(b){b.addEventListener('change',apply);});})();
</script></body></html>
)";
  return o.str();
}

std::string validateFormatFor(const std::string& file) {
  auto ends = [&](std::string_view e) { return file.size() >= e.size() && file.compare(file.size() - e.size(), e.size(), e) == 0; };
  if (ends(".json")) return "json";
  if (ends(".md")) return "md";
  if (ends(".html") || ends(".htm")) return "html";
  if (ends(".xml")) return "junit";
  return {};
}

std::string validateReportText(const val::ValidationReport& r, val::Severity minSeverity, const std::string& format) {
  if (format == "json") return validateJson(r, minSeverity).dump(1) + "\n";
  if (format == "md") return validateMarkdown(r, minSeverity);
  if (format == "html") return validateHtml(r, minSeverity);
  if (format == "junit") return validateJunit(r, minSeverity);
  throw std::invalid_argument("report format '" + format + "': use json, md, html or junit");
}

}  // namespace ws
