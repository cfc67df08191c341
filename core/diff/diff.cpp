#include "core/diff/diff.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>

#include "core/diff/unit_matrix.h"
#include "core/util/glob.h"
#include "core/util/parallel.h"

namespace ws::diff {

namespace {

double saturatedShare(const Matrix& m) {
  if (m.saturated.empty() || m.values.empty()) return -1;
  uint64_t n = 0;
  for (uint8_t s : m.saturated) n += s;
  return double(n) / double(m.saturated.size());
}

PairResult comparePair(const Checkpoint& a, const Checkpoint& b, const Pair& p, const num::DeviceDequantFn* device, num::Numerics numerics) {
  PairResult r;
  r.pair = p;
  r.nameA = a.logical[p.a.logical].name;
  r.nameB = b.logical[p.b.logical].name;
  r.schemeA = a.logical[p.a.logical].schemeName;
  r.schemeB = b.logical[p.b.logical].schemeName;
  if (!p.a.undone.empty()) r.undone.push_back("A: " + p.a.undone);
  if (!p.b.undone.empty()) r.undone.push_back("B: " + p.b.undone);
  auto ma = decodeUnit(a, p.a, device, numerics);
  auto mb = decodeUnit(b, p.b, device, numerics);
  if (!ma || !mb) {
    r.error = (!ma ? "A: " + ma.error().describe() : std::string()) + (!ma && !mb ? "; " : "") + (!mb ? "B: " + mb.error().describe() : std::string());
    return r;
  }
  r.shapeA = {ma.value().rows, ma.value().cols};
  r.shapeB = {mb.value().rows, mb.value().cols};
  r.metrics = compareMatrices(ma.value(), mb.value());
  r.saturatedA = saturatedShare(ma.value());
  r.saturatedB = saturatedShare(mb.value());
  return r;
}

}  // namespace

Result<DiffReport> diffCheckpoints(const Checkpoint& a, const Checkpoint& b, const DiffOptions& opt) {
  Matching m = matchCheckpoints(a, b);
  DiffReport rep;
  rep.pathA = a.root;
  rep.pathB = b.root;
  rep.metadata = diffMetadata(a, b);
  std::vector<Pair> todo;
  for (const auto& p : m.pairs)
    if (opt.tensors.empty() || globMatch(opt.tensors, p.key) || globMatch(opt.tensors, a.logical[p.a.logical].name) ||
        globMatch(opt.tensors, b.logical[p.b.logical].name))
      todo.push_back(p);
  // One side only: "key (logical name)", filtered like the pairs.
  auto keep = [&](const Checkpoint& c, const std::vector<UnitKey>& units, std::vector<std::string>& out) {
    for (const auto& u : units) {
      const std::string& name = c.logical[u.unit.logical].name;
      if (opt.tensors.empty() || globMatch(opt.tensors, u.key) || globMatch(opt.tensors, name)) out.push_back(u.key + " (" + name + ")");
    }
  };
  keep(a, m.onlyA, rep.onlyA);
  keep(b, m.onlyB, rep.onlyB);

  auto [deviceFn, deviceName] = num::deviceDequant();
  const num::DeviceDequantFn* device = opt.useDevice ? deviceFn.get() : nullptr;  // deviceFn keeps it alive
  rep.device = device ? deviceName : "cpu";
  rep.numerics = std::string(num::numericsName(opt.numerics));
  rep.pairs.resize(todo.size());
  std::atomic<size_t> next{0}, done{0};
  std::atomic<bool> cancelled{false};
  const unsigned workers = std::max(1u, std::min<unsigned>(opt.threads ? opt.threads : workerCount(), unsigned(todo.size())));
  std::mutex progressMutex;
  auto work = [&] {
    for (size_t i; !cancelled && (i = next.fetch_add(1)) < todo.size();) {
      rep.pairs[i] = comparePair(a, b, todo[i], device, opt.numerics);
      const uint64_t d = done.fetch_add(1) + 1;
      if (opt.progress) {
        std::lock_guard lock(progressMutex);
        if (!opt.progress(d, todo.size())) cancelled = true;
      }
    }
  };
  std::vector<std::thread> pool;
  for (unsigned w = 1; w < workers; ++w) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  if (cancelled) return Error{ErrorCode::Usage, "cancelled", {}, std::nullopt, {}};
  for (const auto& r : rep.pairs) {
    rep.errors += !r.error.empty();
    rep.shapeMismatches += r.error.empty() && !r.metrics.shapesAgree;
  }
  return rep;
}

}  // namespace ws::diff
