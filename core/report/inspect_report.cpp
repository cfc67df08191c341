#include "core/report/inspect_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <functional>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/model/expert_grid.h"
#include "core/model/naming.h"
#include "core/model/quant_scheme.h"
#include "core/model/scheme_table.h"
#include "core/model/tensor_tree.h"
#include "core/report/json_text.h"
#include "core/report/metadata_report.h"
#include "core/report/validate_report.h"
#include "core/report/adapter_report.h"
#include "core/util/format_bytes.h"
#include "core/util/glob.h"

namespace ws {

namespace {

using nlohmann::json;

json nullableInt(int64_t v) { return v < 0 ? json(nullptr) : json(v); }

json intList(const std::vector<int>& v) { return json(v); }

std::string ranges(const std::vector<int>& v) {
  if (v.empty()) return "none";
  std::string s;
  for (size_t i = 0; i < v.size();) {
    size_t j = i;
    while (j + 1 < v.size() && v[j + 1] == v[j] + 1) ++j;
    if (!s.empty()) s += ", ";
    s += std::to_string(v[i]);
    if (j > i) s += "-" + std::to_string(v[j]);
    i = j + 1;
  }
  return s;
}

bool selected(const TensorRecord& t, const InspectOptions& opt) { return opt.filter.empty() || globMatch(opt.filter, t.name); }

// The expert grid, one entry per layer that holds anything in it; each array runs over column -1
// (shared experts / dense MLP) and then the routed experts. Whole checkpoint, --filter aside. With
// the sampled health (--health), three more arrays: null where a cell has no sample.
json expertsJson(const ExpertGrid& g, const std::vector<val::ExpertHealthCell>& health) {
  std::map<std::pair<int32_t, int64_t>, const val::ExpertHealthCell*> sampled;
  for (const auto& h : health) sampled[{h.layer, h.expert}] = &h;
  auto number = [](double v) { return std::isfinite(v) ? json(v) : json(nullptr); };
  json rows = json::array();
  for (int l = 0; l < g.layers; ++l) {
    std::vector<uint64_t> bytes, params, tensors, scales;
    bool any = false;
    for (int64_t e = -1; e < g.experts; ++e) {
      const ExpertCell& cell = g.at(l, e);
      bytes.push_back(cell.bytes);
      params.push_back(cell.parameters);
      tensors.push_back(cell.tensors);
      scales.push_back(cell.scaleBytes);
      any |= cell.tensors > 0;
    }
    if (!any) continue;
    json row = {{"layer", l}, {"dense", g.isDense(l)}, {"bytes", bytes}, {"parameters", params}, {"tensors", tensors}, {"scale_bytes", scales}};
    if (!health.empty()) {
      json octaves = json::array(), nearest = json::array(), cosine = json::array();
      for (int64_t e = -1; e < g.experts; ++e) {
        const auto it = sampled.find({l, e});
        const val::ExpertHealthCell* h = it == sampled.end() ? nullptr : it->second;
        octaves.push_back(h ? number(h->normOctaves) : json(nullptr));
        nearest.push_back(h && h->nearest >= 0 ? json(h->nearest) : json(nullptr));
        cosine.push_back(h ? number(h->nearestCosine) : json(nullptr));
      }
      row["norm_octaves"] = std::move(octaves), row["nearest"] = std::move(nearest), row["nearest_cosine"] = std::move(cosine);
    }
    rows.push_back(std::move(row));
  }
  return {{"layers", g.layers}, {"experts", g.experts}, {"rows", std::move(rows)}};
}

// What totals covers: the selected tensors, and each logical tensor once.
struct Totals {
  uint64_t tensors = 0, logicalTensors = 0, bytes = 0, parameters = 0;
  std::map<std::string, uint64_t> byRole, byDtype, byScheme;
};

Totals totalsOf(const Checkpoint& c, const InspectOptions& opt) {
  Totals t;
  std::vector<bool> logicalSeen(c.logical.size(), false);
  for (const auto& r : c.tensors) {
    if (!selected(r, opt)) continue;
    const LogicalTensor& l = c.logical[r.logical];
    t.bytes += r.bytes;
    ++t.tensors;
    if (!logicalSeen[r.logical]) {
      logicalSeen[r.logical] = true;
      ++t.logicalTensors;
      t.parameters += l.parameters;
    }
    t.byRole[std::string(roleName(r.role))] += r.bytes;
    t.byDtype[std::string(r.dtype->name)] += r.bytes;
    // A bias is stored plain whatever its weight's scheme (gpt-oss: F32 biases beside BF16 or
    // MXFP4 weights): its bytes count under its own dtype, so a checkpoint of plain tensors has
    // the same bytes by scheme as by dtype.
    t.byScheme[r.component == Component::Bias ? schemeDisplayName(Scheme::Plain, r.dtype) : l.schemeName] += r.bytes;
  }
  return t;
}

// The model prefixes the names sit under (naming.h namePrefix), with what sits there: the model's
// own layers and top-level tensors, a vision or audio tower, MTP layers. Largest first.
struct PrefixCount {
  std::string prefix, part;
  uint64_t tensors = 0;
};

std::vector<PrefixCount> prefixesOf(const Checkpoint& c) {
  std::map<std::pair<std::string, std::string>, uint64_t> counts;
  for (const auto& t : c.tensors) {
    const char* part = t.role == Role::Vision ? "tower" : t.role == Role::Mtp ? "mtp" : "model";
    ++counts[{namePrefix(t.name), part}];
  }
  std::vector<PrefixCount> out;
  for (const auto& [key, n] : counts) out.push_back({key.first, key.second, n});
  std::stable_sort(out.begin(), out.end(), [](const PrefixCount& a, const PrefixCount& b) { return a.tensors > b.tensors; });
  return out;
}

json modelJson(const ModelDescription& m) {
  json j = {
      {"architecture", m.architecture},
      {"source", m.source},
      {"num_layers", m.numLayers},
      {"hidden_size", nullableInt(m.hiddenSize)},
      {"moe_layers", intList(m.moeLayers)},
      {"dense_layers", intList(m.denseLayers)},
      {"num_experts", m.numExperts},
      {"num_shared_experts", m.numSharedExperts},
      {"experts_per_token", nullableInt(m.expertsPerToken)},
      {"expert_intermediate_size", nullableInt(m.expertIntermediateSize)},
      {"intermediate_size", nullableInt(m.intermediateSize)},
      {"mtp_layers", intList(m.mtpLayers)},
      {"quantization", {{"method", m.quant.method}, {"algo", m.quant.algo}, {"format", m.quant.format},
                        {"block_size", m.quant.blockSize}, {"group_size", nullableInt(m.quant.groupSize)},
                        {"bits", nullableInt(m.quant.bits)},
                        // declared: the config names the schemes and the tensors confirmed them (validate
                        // WS-S007 otherwise); inferred: from names, dtypes and shapes alone.
                        {"schemes", declaredSchemes(m.quant).empty() ? "inferred" : "declared"}}},
  };
  if (m.numaNodes > 0) j["numa_nodes"] = m.numaNodes;
  return j;
}

// One tensor entry, written straight into the text (a document of 208k entries would spend more
// time allocating and freeing than writing).
void appendTensor(std::string& out, const Checkpoint& c, const TensorRecord& t) {
  const LogicalTensor& l = c.logical[t.logical];
  jsontext::Object e(out);
  e.string("name", t.name)
      .uint("file", t.file)
      .uint("offset", t.offset)
      .uint("bytes", t.bytes)
      .string("dtype", t.dtype->name)
      .uints("shape", t.shape.begin(), t.shape.end())
      .string("role", roleName(t.role))
      .indexOrNull("layer", t.layer)
      .indexOrNull("expert", t.expert);
  if (t.projection == Projection::None) e.null("projection");
  else e.string("projection", projectionName(t.projection));
  e.string("component", componentName(t.component)).string("scheme", l.schemeName).string("logical", l.name);
  if (t.layout != Layout::None) e.string("layout", layoutName(t.layout)).boolean("interleaved", t.interleaved);
  if (t.ggmlOrder) e.uints("ggml_ne", t.shape.rbegin(), t.shape.rend());
  if (t.numaNode >= 0) e.uint("numa_node", uint64_t(t.numaNode));
  if (t.cut) e.boolean("cut", true);
}

}  // namespace

std::string inspectJsonText(const Checkpoint& c, const InspectOptions& opt) {
  json files = json::array();
  for (const auto& f : c.files) {
    files.push_back({{"path", f.path}, {"format", f.format}, {"size", f.size}, {"data_offset", f.dataStart}, {"data_bytes", f.size - f.dataStart}});
    if (c.remote)
      if (const RemoteFile* rf = c.remote->fileFor(f.path)) files.back()["url"] = rf->url;
  }
  const Totals t = totalsOf(c, opt);
  const json totals = {{"tensors", t.tensors}, {"logical_tensors", t.logicalTensors}, {"bytes", t.bytes}, {"parameters", t.parameters},
                       {"bytes_by_role", t.byRole}, {"bytes_by_dtype", t.byDtype}, {"bytes_by_scheme", t.byScheme}};
  std::string out;
  out.reserve(64 + size_t(t.tensors) * 320);
  out += "{\"schema\":\"weightscope.inspect/1\",\"path\":";
  jsontext::appendString(out, c.root);
  out += ",\"format\":";
  jsontext::appendString(out, c.format);
  out += ",\n\"model\":" + modelJson(c.model).dump();
  out += ",\n\"files\":" + files.dump();
  out += ",\n\"totals\":" + totals.dump();
  json prefixes = json::array();
  for (const auto& p : prefixesOf(c)) prefixes.push_back({{"prefix", p.prefix}, {"part", p.part}, {"tensors", p.tensors}});
  out += ",\n\"prefixes\":" + prefixes.dump();
  json ranks = nullptr;  // a pre-partitioned checkpoint's ranks; null for any other
  if (c.prepartitioned) {
    ranks = {{"layout", c.prepartitioned->layout}, {"ranks", json::array()}};
    for (const auto& r : c.prepartitioned->ranks)
      ranks["ranks"].push_back({{"rank", r.rank}, {"files", r.files}, {"tensors", r.tensors}, {"bytes", r.bytes}});
  }
  out += ",\n\"prepartitioned\":" + ranks.dump();
  out += ",\n\"adapter\":" + adapterJson(c).dump();
  json remote = nullptr;  // where a remote checkpoint was read from, and how much of it
  if (c.remote)
    remote = {{"location", c.remote->location()}, {"revision", c.remote->revision}, {"mirror", c.remote->mirror()}, {"from_cache", c.remote->fromCache},
              {"bytes_fetched", c.remote->bytesFetched()}, {"requests", c.remote->requests()}, {"bytes", c.totalBytes()}};
  out += ",\n\"remote\":" + remote.dump();
  out += ",\n\"experts\":" + expertsJson(expertGrid(c), opt.health).dump();
  out += ",\n\"notes\":" + json(c.notes).dump();
  // Metadata strings are the file's: invalid UTF-8 in them is shown replaced, not refused.
  constexpr auto replace = json::error_handler_t::replace;
  out += ",\n\"metadata\":" + metadataJson(c).dump(-1, ' ', false, replace);
  out += ",\n\"tokenizer\":" + tokenizerJson(tokenizerInfo(c)).dump(-1, ' ', false, replace);
  out += ",\n\"config\":" + configFilesJson(c).dump(-1, ' ', false, replace);
  json findings = json::array();
  for (const auto& f : opt.problems) findings.push_back(findingJson(f));
  out += ",\n\"findings\":" + findings.dump();
  out += ",\n\"tensors\":[";
  bool first = true;
  for (const auto& r : c.tensors) {
    if (!selected(r, opt)) continue;
    out += first ? "\n" : ",\n";
    first = false;
    appendTensor(out, c, r);
  }
  out += "\n]}\n";
  return out;
}

json inspectJson(const Checkpoint& c, const InspectOptions& opt) { return json::parse(inspectJsonText(c, opt)); }

std::string inspectText(const Checkpoint& c, const InspectOptions& opt) {
  const ModelDescription& m = c.model;
  std::ostringstream o;
  const Totals tot = totalsOf(c, opt);  // one place computes the totals
  o << "checkpoint   " << c.root << "  (" << c.format << ", " << c.files.size() << (c.files.size() == 1 ? " file" : " files") << ")\n";
  if (c.remote)
    o << "remote       " << (c.remote->fromCache ? "headers from the cache " + c.remote->mirror() + " (no request)"
                                                  : "fetched " + formatBytes(c.remote->bytesFetched()) + " in " + std::to_string(c.remote->requests()) + " requests")
      << (c.remote->revision.empty() ? "" : ", revision " + c.remote->revision) << "\n";
  o << "model        " << (m.architecture.empty() ? "unknown" : m.architecture) << "  (from " << m.source << ")\n";
  o << "layers       " << m.numLayers << ": dense " << ranges(m.denseLayers) << "; MoE " << ranges(m.moeLayers);
  if (!m.mtpLayers.empty()) o << "; MTP " << ranges(m.mtpLayers);
  o << "\n";
  auto known = [](int64_t v) { return v < 0 ? std::string("?") : std::to_string(v); };  // -1: the config does not say
  if (m.numExperts > 0)
    o << "experts      " << m.numExperts << " routed (top-" << known(m.expertsPerToken) << "), " << m.numSharedExperts << " shared, expert intermediate "
      << known(m.expertIntermediateSize) << ", hidden " << known(m.hiddenSize) << "\n";
  else
    o << "hidden       " << known(m.hiddenSize) << "\n";
  if (!opt.health.empty()) {
    // The two extremes of the sampled grid; --json holds every cell.
    const val::ExpertHealthCell *far = nullptr, *close = nullptr;
    for (const auto& h : opt.health) {
      if (std::isfinite(h.normOctaves) && (!far || std::abs(h.normOctaves) > std::abs(far->normOctaves))) far = &h;
      if (std::isfinite(h.nearestCosine) && h.nearest >= 0 && (!close || h.nearestCosine > close->nearestCosine)) close = &h;
    }
    char line[256];
    std::snprintf(line, sizeof line, "health       %zu routed experts sampled", opt.health.size());
    o << line;
    if (far) std::snprintf(line, sizeof line, "; furthest norm: layer %d expert %lld, %+.2f octaves from its layer's median", far->layer, (long long)far->expert, far->normOctaves), o << line;
    if (close)
      std::snprintf(line, sizeof line, "; closest pair: layer %d experts %lld and %lld, cosine %.3f", close->layer, (long long)close->expert, (long long)close->nearest, close->nearestCosine), o << line;
    o << " (estimates from each expert's sample)\n";
  }
  if (!m.quant.method.empty() && m.quant.method != "gguf")
    o << "quantization " << m.quant.method << (m.quant.format.empty() ? "" : " " + m.quant.format) << (m.quant.algo.empty() ? "" : " " + m.quant.algo)
      << (declaredSchemes(m.quant).empty() ? "  (schemes inferred from the tensors)" : "  (declared in " + m.quant.source + ")") << "\n";
  else if (std::any_of(c.logical.begin(), c.logical.end(), [](const LogicalTensor& l) { return schemeInfo(l.scheme).quantized && l.scheme != Scheme::GgufBlock; }))
    o << "quantization none declared: schemes inferred from tensor names, dtypes and shapes\n";
  o << "prefixes     ";
  const auto prefixes = prefixesOf(c);
  for (size_t i = 0; i < prefixes.size(); ++i)
    o << (i ? ", " : "") << (prefixes[i].prefix.empty() ? "no prefix" : prefixes[i].prefix) << " (" << (prefixes[i].part == "model" ? "" : prefixes[i].part + ": ")
      << formatCount(prefixes[i].tensors) << (prefixes[i].tensors == 1 ? " tensor)" : " tensors)");
  o << "\n";
  if (c.prepartitioned) {
    o << "ranks        " << c.prepartitioned->ranks.size() << " (" << c.prepartitioned->layout << "; the catalog below is rank "
      << c.prepartitioned->ranks.front().rank << "'s):";
    for (const auto& r : c.prepartitioned->ranks)
      o << (r.rank == c.prepartitioned->ranks.front().rank ? " " : ", ") << "rank " << r.rank << " " << formatBytes(r.bytes) << " in " << r.files.size()
        << (r.files.size() == 1 ? " file" : " files");
    o << "\n";
  }
  o << adapterText(c);
  o << "tensors      " << formatCount(tot.tensors) << " stored, " << formatCount(tot.logicalTensors) << " logical\n";
  o << "bytes        " << formatBytes(tot.bytes) << " (" << formatCount(tot.bytes) << ")\n";
  o << "parameters   " << formatCount(tot.parameters) << "\n";
  auto table = [&](const char* title, const std::map<std::string, uint64_t>& bytes) {
    o << title << "\n";
    for (const auto& [k, v] : bytes) o << "  " << k << std::string(k.size() < 16 ? 16 - k.size() : 1, ' ') << formatBytes(v) << "\n";
  };
  table("bytes by role", tot.byRole);
  table("bytes by dtype", tot.byDtype);
  table("bytes by scheme", tot.byScheme);
  o << metadataText(c, tokenizerInfo(c));
  for (const auto& n : c.notes) o << "note: " << n << "\n";
  for (const auto& f : opt.problems)
    o << val::severityName(f.severity) << " " << f.code << ": " << (f.file.empty() ? "" : f.file + ": ") << f.message
      << (f.offset ? " (offset " + std::to_string(*f.offset) + ")" : "") << (f.tensor.empty() ? "" : " [" + f.tensor + "]") << "\n";
  o << "\n";

  auto line = [&](const TensorRecord& t, const char* indent) {
    o << indent << t.name << "  " << t.dtype->name << " " << formatShape(t.shape) << "  " << formatBytes(t.bytes) << "  "
      << c.logical[t.logical].schemeName;
    if (t.layout != Layout::None) o << "  " << layoutName(t.layout) << (t.interleaved ? " interleaved" : "");
    if (t.cut) o << "  CUT (past the end of its file)";
    o << "\n";
  };
  if (opt.flat) {
    for (const auto& t : c.tensors)
      if (selected(t, opt)) line(t, "");
    return o.str();
  }
  // The tensor tree (core/model/tensor_tree, as the GUI shows it): per layer its modules' tensors,
  // each module's experts summarised on one line.
  const TensorTree tree = tensorTree(c, [&](const TensorRecord& t) { return selected(t, opt); });
  // The tensors under a node (a LoRA module's factors sit one node deeper than other tensors).
  std::function<void(uint32_t, const std::function<void(const TensorRecord&)>&)> tensorsUnder = [&](uint32_t k, const auto& fn) {
    if (tree.nodes[k].kind == TreeNode::Kind::Tensor) return fn(c.tensors[size_t(tree.nodes[k].tensor)]);
    for (uint32_t child : tree.nodes[k].children) tensorsUnder(child, fn);
  };
  for (uint32_t layerNode : tree.nodes[0].children) {
    const TreeNode& ln = tree.nodes[layerNode];
    o << nodeLabel(c, ln) << "  " << formatBytes(ln.bytes) << "\n";
    for (uint32_t moduleNode : ln.children) {
      const TreeNode& mn = tree.nodes[moduleNode];
      uint64_t lo = UINT64_MAX, hi = 0;
      size_t experts = 0, expertTensors = 0;
      int64_t first = -1, last = -1;
      uint64_t cutTensors = 0;
      std::set<std::string> schemes;
      for (uint32_t k : mn.children) {
        const TreeNode& n = tree.nodes[k];
        if (n.kind == TreeNode::Kind::Tensor || n.kind == TreeNode::Kind::Adapted) {
          tensorsUnder(k, [&](const TensorRecord& t) { line(t, "  "); });
          continue;
        }
        ++experts;
        lo = std::min(lo, n.bytes), hi = std::max(hi, n.bytes);
        first = first < 0 ? n.expert : std::min(first, n.expert);
        last = std::max(last, n.expert);
        tensorsUnder(k, [&](const TensorRecord& t) {
          schemes.insert(c.logical[t.logical].schemeName);
          ++expertTensors;
          cutTensors += t.cut;
        });
      }
      if (!experts) continue;
      uint64_t total = 0;
      for (uint32_t k : mn.children)
        if (tree.nodes[k].kind == TreeNode::Kind::Expert) total += tree.nodes[k].bytes;
      o << "  " << nodeLabel(c, mn) << ": " << experts << " experts (" << first << "-" << last << "), " << expertTensors << " tensors, " << formatBytes(total)
        << " (" << formatBytes(lo) << (lo != hi ? " to " + formatBytes(hi) : std::string()) << " each), scheme";
      for (const auto& sch : schemes) o << " " << sch;
      if (cutTensors) o << "; " << cutTensors << " CUT (past the end of their file)";
      o << "\n";
    }
  }
  return o.str();
}

}  // namespace ws
