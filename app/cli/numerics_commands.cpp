// weightscope dequant / stats / scales: the CPU reference numerics from the command line.
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <iostream>
#include <numeric>

#include <nlohmann/json.hpp>

#include "app/cli/command.h"
#include "app/cli/distributed.h"
#include "app/cli/progress.h"
#include "core/formats/open_checkpoint.h"
#include "core/numerics/dequant.h"
#include "core/numerics/mapped_reads.h"
#include "core/numerics/remote_reads.h"
#include "core/numerics/scale_stats.h"
#include "core/numerics/stats.h"
#include "core/util/format_bytes.h"
#include "core/util/glob.h"
#include "core/util/parallel.h"
#include "core/report/npy_writer.h"

namespace ws::cli {

namespace {

// "A:B", "A:" or ":B" -> [A, B)
std::pair<uint64_t, uint64_t> parseRows(const std::string& s) {
  auto colon = s.find(':');
  if (colon == std::string::npos) throw std::invalid_argument("--rows expects A:B, got '" + s + "'");
  auto num = [&](const std::string& x, uint64_t fallback) -> uint64_t {
    if (x.empty()) return fallback;
    size_t used = 0;
    unsigned long long v = std::stoull(x, &used);
    if (used != x.size()) throw std::invalid_argument("--rows expects A:B, got '" + s + "'");
    return v;
  };
  return {num(s.substr(0, colon), 0), num(s.substr(colon + 1), UINT64_MAX)};
}

// What TENSOR names: a logical tensor (decoded as its weight), or a stored companion - a bias, a
// scale, a zero point - decoded as the plain numbers it holds, never silently as its weight.
struct Target {
  std::unique_ptr<num::RowDecoder> decoder;
  std::vector<const TensorRecord*> stored;  // what the decoder reads, for num::checkMappedReads
  std::string name, scheme;
};

// Of a remote checkpoint, the bytes it reads are fetched first: only those of the rows `rows`
// selects (its logical index is filled in here), when it names a logical tensor.
Result<Target> resolveTarget(const Checkpoint& c, const std::string& name, num::DequantRequest rows = {}) {
  if (const TensorRecord* t = c.find(name); t && t->component != Component::Weight) {
    if (auto f = capture([&] { num::fetchTensor(c, *t); return true; }); !f) return f.error();
    auto d = num::makeStoredDecoder(c, *t);
    if (!d) return d.error();
    return Target{std::move(d.value()), {t}, t->name, std::string(componentName(t->component)) + " " + std::string(t->dtype->name)};
  }
  auto li = num::findLogical(c, name);
  if (!li) return li.error();
  rows.logical = li.value();
  if (auto f = capture([&] { num::fetchForDecode(c, rows); return true; }); !f) return f.error();
  auto d = num::makeDecoder(c, li.value());
  if (!d) return d.error();
  const LogicalTensor& l = c.logical[li.value()];
  Target out{std::move(d.value()), {}, l.name, l.schemeName};
  for (uint32_t m : l.members) out.stored.push_back(&c.tensors[m]);
  return out;
}

// Throws CoreError(Io) when what `t` decoded under `guard` were not its files' bytes (a file cut
// short under the read): an error for this tensor where the process would have died of SIGBUS.
void checkReads(const MappedReadGuard& guard, const Checkpoint& c, const Target& t) {
  for (const TensorRecord* r : t.stored) num::checkMappedReads(guard, c, *r);
}

std::string statsText(const num::Stats& s) {
  char line[512];
  std::snprintf(line, sizeof line, "  count %llu  finite %llu  nan %llu  inf %llu  zero %llu  subnormal %llu  negative %llu\n", (unsigned long long)s.count,
                (unsigned long long)s.finite(), (unsigned long long)s.nan, (unsigned long long)s.inf, (unsigned long long)s.zero, (unsigned long long)s.subnormal,
                (unsigned long long)s.negative);
  std::string out = line;
  std::snprintf(line, sizeof line, "  min %.9g  max %.9g  mean %.9g  std %.9g  absmax %.9g\n", s.min(), s.max(), s.mean(), s.stddev(), s.absmax());
  return out + line;
}

// One tensor of stats: its JSON entry and its text, from one streaming pass (throws CoreError).
struct TensorStats {
  nlohmann::json entry;
  std::string text;
  uint64_t bytesRead = 0;
};

TensorStats statsOfTensor(const Checkpoint& c, const std::string& name, int bins) {
  auto target = resolveTarget(c, name);
  if (!target) throw CoreError(target.error());
  num::ByteCounter counter;
  target.value().decoder->setCounter(&counter);
  num::Stats s;
  num::Histogram h = num::Histogram::log2Fine();
  const auto& d = *target.value().decoder;
  MappedReadGuard guard;
  const uint64_t chunkRows = std::max<uint64_t>(1, (1u << 20) / std::max<uint64_t>(1, d.cols()));
  std::vector<float> buf(chunkRows * d.cols());
  for (uint64_t r = 0; r < d.rows(); r += chunkRows) {
    const uint64_t n = std::min(chunkRows, d.rows() - r);
    d.decode(r, n, buf.data());
    s.add(buf.data(), n * d.cols());
    h.add(buf.data(), n * d.cols());
  }
  const Target& l = target.value();
  checkReads(guard, c, l);
  TensorStats out;
  out.bytesRead = counter.bytes.load();
  out.entry = {{"name", l.name}, {"scheme", l.scheme}, {"shape", d.shape()}, {"stats", num::statsJson(s)}, {"histogram", num::histogramJson(h.coarsened(bins))},
               {"bytes_read", out.bytesRead}};
  out.text = l.name + "  " + l.scheme + " " + formatShape(d.shape()) + "\n" + statsText(s);
  return out;
}

class DequantCommand : public Command {
 public:
  std::string name() const override { return "dequant"; }
  std::string summary() const override { return "dequantize a tensor (or one expert, or rows) on the CPU to .npy"; }
  std::string usage() const override {
    return "usage: weightscope dequant PATH TENSOR [--expert E] [--rows A:B] [--dtype f32|bf16] [--numerics reference|kt] [--stats] [--out FILE.npy]\n"
           "  TENSOR      a stored tensor name or a logical name (the weight name without .weight)\n"
           "  --expert E  expert E of a stacked or fused [E, rows, cols] tensor\n"
           "  --rows A:B  rows A..B-1 (of the expert, if given); leading dimensions are flattened\n"
           "  --dtype     f32 (default) or bf16, rounded to nearest even from the f32 value\n"
           "  --numerics  reference (default): the published formula in f32; kt: what the KTransformers\n"
           "              loader trains on - block FP8 as bf16(code x bf16(scale)), everything else .to(bf16)\n"
           "  --stats     print statistics of the values\n"
           "  --out FILE  write a NumPy .npy in PyTorch shape order (f32: '<f4'; bf16: raw bits as '<u2')\n";
  }
  int run(const std::vector<std::string>& argv) override {
    Args a(argv, {"expert", "rows", "dtype", "numerics", "out"}, {"stats"});
    if (a.positional().size() != 2) {
      std::cerr << usage();
      return kExitCannotRun;
    }
    std::string dtype = a.get("dtype", "f32");
    if (dtype != "f32" && dtype != "bf16") throw std::invalid_argument("--dtype must be f32 or bf16");
    const auto numerics = num::parseNumerics(a.get("numerics", "reference"));
    if (!numerics) throw std::invalid_argument("--numerics must be reference or kt");
    auto c = openOrReport(a.positional()[0], Partial::Open);  // a tensor whose bytes are there can be read
    if (!c) return kExitCannotRun;
    num::DequantRequest req;
    req.expert = a.getInt("expert", -1);
    if (a.has("rows")) std::tie(req.rowBegin, req.rowEnd) = parseRows(a.get("rows"));
    auto target = resolveTarget(*c, a.positional()[1], req);
    if (!target) {
      std::cerr << "weightscope: " << target.error().describe() << "\n";
      return kExitCannotRun;
    }
    // Stream: decode a chunk of rows, feed the statistics and the .npy, repeat. Memory stays
    // bounded by the chunk whatever the tensor's size.
    num::RowDecoder& d = *target.value().decoder;
    num::ByteCounter counter;
    d.setCounter(&counter);
    MappedReadGuard guard;
    try {
      const num::Selection sel = num::selectRows(d, req, target.value().name);
      std::unique_ptr<NpyStream> npy;
      if (a.has("out")) npy = std::make_unique<NpyStream>(a.get("out"), sel.shape, dtype == "bf16");
      num::Stats stats;
      const uint64_t chunkRows = std::max<uint64_t>(1, (uint64_t(4) << 20) / std::max<uint64_t>(1, d.cols()));
      std::vector<float> buf(std::min(chunkRows, std::max<uint64_t>(sel.rows, 1)) * d.cols());
      for (uint64_t r = 0; r < sel.rows; r += chunkRows) {
        const uint64_t n = std::min(chunkRows, sel.rows - r);
        d.decode(sel.firstRow + r, n, buf.data());
        num::applyNumerics(*numerics, d, sel.firstRow + r, n, buf.data());
        if (a.has("stats")) stats.add(buf.data(), n * d.cols());
        if (npy) npy->append(buf.data(), n * d.cols());
      }
      checkReads(guard, *c, target.value());  // before the .npy is committed
      std::cout << target.value().name << "  scheme " << target.value().scheme << (*numerics == num::Numerics::Kt ? "  numerics kt" : "") << "  shape " << formatShape(sel.shape)
                << "  read " << formatBytes(counter.bytes.load()) << "\n";
      if (c->remote)  // from the server, headers included when they were not cached
        std::cout << "fetched " << c->remote->bytesFetched() << " bytes in " << c->remote->requests() << " requests from " << c->remote->location() << "\n";
      if (a.has("stats")) std::cout << statsText(stats);
      if (npy) {
        npy->commit();
        std::cout << "wrote " << a.get("out") << "\n";
      }
    } catch (const CoreError& e) {
      std::cerr << "weightscope: " << e.error().describe() << "\n";
      return kExitCannotRun;
    }
    return kExitOk;
  }
};

class StatsCommand : public Command {
 public:
  std::string name() const override { return "stats"; }
  std::string summary() const override { return "value statistics of one tensor or of every tensor"; }
  std::string usage() const override {
    return "usage: weightscope stats PATH (TENSOR | --all) [--bins N] [--json] [--distributed]\n"
           "  min, max, mean, std, absmax, NaN/Inf/zero/subnormal counts and a log2 histogram of the\n"
           "  dequantized values, in one streaming pass (memory stays bounded for any tensor size)\n"
           "  --distributed  under mpirun or srun: the tensors shared out by bytes over the MPI ranks,\n"
           "                 each reading only its share; rank 0 prints the same result as one process\n";
  }
  int run(const std::vector<std::string>& argv) override {
    Args a(argv, {"bins"}, {"all", "json", "distributed"});
    if (a.positional().size() != (a.has("all") ? 1u : 2u)) {
      std::cerr << usage();
      return kExitCannotRun;
    }
    // --distributed: each MPI rank takes an equal share of the bytes (whole tensors, in catalog
    // order); rank 0 prints every rank's entries in that order, so the output is the same as one
    // process's, value for value. Joined before the open (distributed.h).
    std::unique_ptr<dist::Communicator> comm;
    if (a.has("distributed") && !(comm = joinOrReport("stats"))) return kExitCannotRun;
    auto c = openOrReport(a.positional()[0], Partial::Open);
    if (!c && comm) comm->abort(kExitCannotRun);  // the others must not wait for this rank's share
    if (!c) return kExitCannotRun;
    std::vector<std::string> which;
    std::vector<uint64_t> bytes;  // of each tensor: what a rank's share and the progress count
    if (a.has("all")) {
      // Taken from the catalog: looking each name up again costs a scan of the logical tensors
      // for every name that is not also a stored tensor's (a fused or stacked one).
      for (const auto& l : c->logical) which.push_back(l.name), bytes.push_back(l.bytes);
    } else {
      which.push_back(a.positional()[1]);
      auto li = num::findLogical(*c, which.back());
      bytes.push_back(li ? c->logical[li.value()].bytes : 0);
    }
    const int bins = int(a.getInt("bins", 32));
    auto [begin, end] = std::pair<size_t, size_t>{0, which.size()};
    if (comm) std::tie(begin, end) = dist::shareByBytes(bytes, comm->rank(), comm->size());
    // The tensors on all cores, each on one, then taken in catalog order up to the first that
    // failed: the same output as one at a time. A remote checkpoint's go one at a time, since
    // each fetches its bytes first and --max-fetch is spent in catalog order.
    std::vector<TensorStats> done(end - begin);
    std::vector<std::string> failed(end - begin);
    const size_t first = begin;  // a structured binding, which clang's lambdas cannot capture
    // Progress over every tensor (--all) in bytes of this rank's share; rank 0 speaks for the job.
    Progress progress;
    const bool speaks = a.has("all") && (!comm || comm->rank() == 0);
    const uint64_t shareBytes = std::accumulate(bytes.begin() + std::ptrdiff_t(begin), bytes.begin() + std::ptrdiff_t(end), uint64_t(0));
    std::atomic<uint64_t> bytesDone{0};
    auto one = [&](size_t k) {
      try {
        done[k] = statsOfTensor(*c, which[first + k], bins);
      } catch (const CoreError& e) {
        failed[k] = e.error().describe();
      }
      if (speaks) progress.update("stats", bytesDone += bytes[first + k], shareBytes);
    };
    if (c->remote) {
      for (size_t k = 0; k < done.size() && (k == 0 || failed[k - 1].empty()); ++k) one(k);
    } else {
      parallelFor(done.size(), one);
    }
    progress.finish();
    nlohmann::json entries = nlohmann::json::array(), error = nullptr;
    std::string text;  // appended in place: 200k tensors' lines are not copied once per tensor
    uint64_t bytesRead = 0;
    for (size_t k = 0; k < done.size(); ++k) {
      if (!failed[k].empty()) {
        error = failed[k];
        break;
      }
      entries.push_back(std::move(done[k].entry));
      text += done[k].text;
      bytesRead += done[k].bytesRead;
    }
    nlohmann::json mine = {{"tensors", std::move(entries)}, {"text", std::move(text)}, {"bytes_read", bytesRead}, {"error", std::move(error)}};
    std::vector<nlohmann::json> parts;
    if (comm) {
      for (const std::string& p : comm->allGather(mine.dump())) parts.push_back(nlohmann::json::parse(p));
      if (comm->rank() != 0)  // rank 0 speaks for the job; every rank exits as it does
        return std::all_of(parts.begin(), parts.end(), [](const nlohmann::json& p) { return p["error"].is_null(); }) ? kExitOk : kExitCannotRun;
    } else {
      parts.push_back(std::move(mine));
    }
    nlohmann::json doc = {{"schema", "weightscope.stats/1"}, {"path", c->root}, {"tensors", nlohmann::json::array()}};
    uint64_t totalRead = 0;
    int code = kExitOk;
    for (const auto& p : parts) {
      for (const auto& t : p["tensors"]) doc["tensors"].push_back(t);
      totalRead += p["bytes_read"].get<uint64_t>();
      if (!a.has("json")) std::cout << p["text"].get<std::string>();
      if (!p["error"].is_null()) {
        std::cerr << "weightscope: " << p["error"].get<std::string>() << "\n";
        code = kExitCannotRun;
      }
    }
    if (code != kExitOk) return code;
    if (a.has("json")) {
      doc["bytes_read"] = totalRead;
      std::cout << doc.dump(1) << "\n";
    }
    return kExitOk;
  }
};

class ScalesCommand : public Command {
 public:
  std::string name() const override { return "scales"; }
  std::string summary() const override { return "histograms of quantization scales, per layer, projection, expert or checkpoint"; }
  std::string usage() const override {
    return "usage: weightscope scales PATH [--by tensor|layer|projection|expert|checkpoint] [--bins N] [--json]\n"
           "  reads only scale bytes (separate scale tensors, or the scale fields inside GGUF blocks)\n";
  }
  int run(const std::vector<std::string>& argv) override {
    Args a(argv, {"by", "bins"}, {"json"});
    if (a.positional().size() != 1) {
      std::cerr << usage();
      return kExitCannotRun;
    }
    const std::string by = a.get("by", "checkpoint");
    num::ScaleGrouping g;
    if (by == "tensor") g = num::ScaleGrouping::Tensor;
    else if (by == "layer") g = num::ScaleGrouping::Layer;
    else if (by == "projection") g = num::ScaleGrouping::Projection;
    else if (by == "expert") g = num::ScaleGrouping::Expert;
    else if (by == "checkpoint") g = num::ScaleGrouping::Checkpoint;
    else throw std::invalid_argument("--by must be tensor, layer, projection, expert or checkpoint");
    auto c = openOrReport(a.positional()[0]);
    if (!c) return kExitCannotRun;
    Progress progress;
    auto rep = num::scaleStatistics(*c, g, [&](uint64_t done, uint64_t total) {
      progress.update("scales", done, total);
      return true;
    });
    progress.finish();
    if (!rep) {
      std::cerr << "weightscope: " << rep.error().describe() << "\n";
      return kExitCannotRun;
    }
    const int bins = int(a.getInt("bins", 24));
    const auto& r = rep.value();
    if (a.has("json")) {
      nlohmann::json doc = {{"schema", "weightscope.scales/1"}, {"path", c->root}, {"by", by}, {"bytes_read", r.bytesRead},
                            {"logical_tensors", r.logicalTensors}, {"groups", nlohmann::json::object()}};
      for (const auto& [key, kinds] : r.groups)
        for (const auto& [kind, sg] : kinds)
          doc["groups"][key][kind] = {{"tensors", sg.tensors}, {"stats", num::statsJson(sg.stats)}, {"histogram", num::histogramJson(sg.hist.coarsened(bins))}};
      std::cout << doc.dump(1) << "\n";
      return kExitOk;
    }
    std::cout << "scales of " << r.logicalTensors << " logical tensors, " << formatBytes(r.bytesRead) << " read\n";
    for (const auto& [key, kinds] : r.groups)
      for (const auto& [kind, sg] : kinds) {
        std::cout << key << "  " << kind << "  (" << sg.tensors << " tensors)\n";
        std::cout << statsText(sg.stats);
      }
    return kExitOk;
  }
};

}  // namespace

void registerNumerics(CommandRegistry& r) {
  r.add(std::make_unique<DequantCommand>());
  r.add(std::make_unique<StatsCommand>());
  r.add(std::make_unique<ScalesCommand>());
}

}  // namespace ws::cli
