#include "core/load/loader.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <fcntl.h>
#include <mutex>
#include <thread>
#include <unistd.h>

#include "core/model/quant_scheme.h"
#include "core/numerics/dequant.h"
#include "core/numerics/float_formats.h"

namespace ws::load {

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// One contiguous range of a file going to one place in one buffer.
struct Chunk {
  size_t tensor;  // index into the store's tensors
  uint32_t file;
  uint64_t fileOffset, bufferOffset, bytes;
};

class Files {
 public:
  explicit Files(const Checkpoint& c) {
    for (const auto& f : c.files) {
      int fd = ::open(f.path.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) fail(ErrorCode::Io, "cannot open for reading", f.path);
      fds_.push_back(fd);
    }
  }
  ~Files() {
    for (int fd : fds_) ::close(fd);
  }
  void read(uint32_t file, uint64_t offset, void* dst, uint64_t bytes, const std::string& path, bool evict) const {
    uint8_t* p = static_cast<uint8_t*>(dst);
    uint64_t done = 0;
    while (done < bytes) {
      ssize_t n = ::pread(fds_[file], p + done, bytes - done, off_t(offset + done));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) fail(ErrorCode::Io, n == 0 ? "file ended early" : std::string("read failed: ") + std::strerror(errno), path, offset + done);
      done += uint64_t(n);
    }
    if (evict) ::posix_fadvise(fds_[file], off_t(offset), off_t(bytes), POSIX_FADV_DONTNEED);
  }

 private:
  std::vector<int> fds_;
};

// Byte ranges of tensor t that rank r holds: the whole tensor, once per replica, or the slices of
// its experts in a fused/stacked tensor.
std::vector<std::pair<uint64_t, uint64_t>> rangesOf(const Checkpoint& c, const TensorRecord& t, const plan::HeldTensor& h,
                                                    const std::vector<int64_t>& rankExperts) {
  const uint64_t E = uint64_t(std::max<int64_t>(0, c.model.numExperts));
  const bool sliced = t.role == Role::RoutedExpert && t.expert < 0 && t.layout != Layout::None && !t.shape.empty() && t.shape[0] == E && E > 0;
  std::vector<std::pair<uint64_t, uint64_t>> r;
  if (sliced) {
    const uint64_t per = t.bytes / E;
    for (int64_t e : rankExperts) r.push_back({uint64_t(e) * per, per});
  } else {
    for (uint64_t done = 0; done < h.bytes; done += t.bytes) r.push_back({0, t.bytes});  // replicas repeat
  }
  return r;
}

}  // namespace

unsigned defaultReaders() { return std::clamp(std::thread::hardware_concurrency() / 2, 2u, 8u); }

Result<LoadResult> loadCheckpoint(const Checkpoint& c, DeviceBackend& dev, const LoadOptions& opt) {
  LoadResult res;
  res.store = std::make_unique<WeightStore>(dev);
  LoadReport& rep = res.report;
  auto out = capture([&]() -> bool {
    const auto tPlan = Clock::now();
    auto planned = plan::planCheckpoint(c, opt.plan);
    if (!planned) throw CoreError(planned.error());
    const int ranks = int(planned.value().ranks.size());
    if (opt.epRank < 0 || opt.epRank >= ranks) fail(ErrorCode::Usage, "--ep-rank " + std::to_string(opt.epRank) + " is not in [0, " + std::to_string(ranks) + ")");
    const plan::RankPlan& rp = planned.value().ranks[size_t(opt.epRank)];
    rep.predicted = rp;
    rep.device = dev.name();
    rep.epRank = opt.epRank;
    rep.epSize = ranks;
    rep.before = dev.memory();
    rep.phases.push_back({"plan", since(tPlan), 0});

    // OOM guard: refuse before allocating anything when the peak cannot fit.
    if (opt.preflight && rp.peak + opt.plan.reserved > rep.before.free)
      fail(ErrorCode::Io, "predicted load peak " + std::to_string(rp.peak) + " bytes (+" + std::to_string(opt.plan.reserved) + " reserved) exceeds the " +
                              std::to_string(rep.before.free) + " bytes free on " + dev.name() + "; use more EP ranks, --skip / --defer, or a larger device");

    for (const auto& s : rp.skipped) {
      const auto& t = c.tensors[s.tensor];
      res.store->defer({t.name, c.files[t.file].path, s.reason, t.offset, t.bytes});
    }

    // This rank's experts per layer, worked out once per layer (not once per held tensor: Kimi-K2
    // holds 200k of them).
    std::map<int, std::vector<int64_t>> expertsByLayer;
    auto rankExperts = [&](int layer) -> const std::vector<int64_t>& {
      auto it = expertsByLayer.find(layer);
      if (it == expertsByLayer.end()) it = expertsByLayer.emplace(layer, plan::expertsOnRank(c.model, opt.plan.placement, opt.epRank, layer)).first;
      return it->second;
    };

    // Allocate one buffer per held tensor and cut the reads into chunks.
    const auto tAlloc = Clock::now();
    std::vector<Chunk> chunks;
    uint64_t total = 0;
    for (const auto& h : rp.held) {
      if (opt.cancel && *opt.cancel) fail(ErrorCode::Usage, "cancelled");
      const TensorRecord& t = c.tensors[h.tensor];
      if (t.cut) fail(ErrorCode::Io, "cannot load: its data runs past the end of the file (cut)", c.files[t.file].path, t.offset, t.name);
      auto buf = dev.allocate(h.bytes, t.name);
      if (!buf) fail(ErrorCode::Io, "allocation failed: " + buf.error().message, c.files[t.file].path, t.offset, t.name);
      const size_t idx = res.store->tensors().size();
      res.store->add({t.name, plan::categoryOf(t), buf.value()});
      uint64_t at = 0;
      // A fused or stacked tensor is sliced by this rank's experts in its own layer (a per-layer
      // EPLB map gives each MoE layer a row of its own).
      for (auto [off, len] : rangesOf(c, t, h, rankExperts(t.layer))) {
        for (uint64_t done = 0; done < len; done += opt.stagingBytes) {
          const uint64_t n = std::min(opt.stagingBytes, len - done);
          chunks.push_back({idx, t.file, t.offset + off + done, at + done, n});
        }
        at += len;
      }
      total += h.bytes;
    }
    rep.phases.push_back({"allocate", since(tAlloc), total});

    // Readers pread into their staging ring and upload; a buffer is reused only after its
    // stream has finished with it, so reading overlaps the copies.
    const auto tRead = Clock::now();
    const Files files(c);
    std::atomic<size_t> next{0};
    std::atomic<uint64_t> done{0};
    std::mutex errMu;
    std::optional<Error> firstError;  // under errMu
    std::atomic<bool> failed{false};  // read by the other readers between chunks
    const unsigned readers = std::max(1u, std::min<unsigned>(opt.readers, unsigned(std::max<size_t>(1, chunks.size()))));
    uint64_t largestChunk = 1;
    for (const Chunk& ch : chunks) largestChunk = std::max(largestChunk, ch.bytes);
    const uint64_t stagingBytes = std::min(opt.stagingBytes, largestChunk);
    auto reader = [&](unsigned r) {
      const unsigned depth = std::max(1u, opt.buffersPerReader);
      std::vector<void*> staging(depth, nullptr);
      std::vector<bool> inFlight(depth, false);
      auto streamOf = [&](unsigned j) { return int((r * depth + j) % unsigned(std::max(1, dev.streams()))); };
      unsigned k = 0;
      try {
        for (auto& s : staging)
          if (!(s = dev.allocateStaging(stagingBytes)))
            fail(ErrorCode::Io, "cannot allocate " + std::to_string(stagingBytes) + " bytes of staging memory on " + dev.name());
        for (size_t i; (i = next.fetch_add(1)) < chunks.size();) {
          if ((opt.cancel && *opt.cancel) || failed) break;
          const Chunk& ch = chunks[i];
          const int stream = streamOf(k);
          if (inFlight[k]) {
            auto s = dev.synchronize(stream);
            if (!s) throw CoreError(s.error());
          }
          files.read(ch.file, ch.fileOffset, staging[k], ch.bytes, c.files[ch.file].path, opt.evictPageCache);
          auto u = dev.upload(res.store->tensors()[ch.tensor].buffer, ch.bufferOffset, staging[k], ch.bytes, stream);
          if (!u) fail(ErrorCode::Io, "upload failed: " + u.error().message, {}, std::nullopt, res.store->tensors()[ch.tensor].name);
          inFlight[k] = true;
          k = (k + 1) % depth;
          done += ch.bytes;
          if (opt.progress) opt.progress("upload", done.load(), total);
        }
      } catch (const CoreError& e) {
        std::lock_guard lock(errMu);
        if (!firstError) firstError = e.error();
        failed = true;
      }
      // Every copy from this reader's staging is finished (or failed) before the staging is freed,
      // on the error path too; a copy that failed late is an error of the load.
      for (unsigned j = 0; j < depth; ++j)
        if (inFlight[j])
          if (auto s = dev.synchronize(streamOf(j)); !s) {
            std::lock_guard lock(errMu);
            if (!firstError) firstError = s.error();
            failed = true;
          }
      for (auto* s : staging)
        if (s) dev.freeStaging(s);
    };
    std::vector<std::thread> threads;
    for (unsigned r = 0; r < readers; ++r) threads.emplace_back(reader, r);
    for (auto& t : threads) t.join();
    if (firstError) throw CoreError(*firstError);
    if (opt.cancel && *opt.cancel) fail(ErrorCode::Usage, "cancelled");
    rep.phases.push_back({"read+upload", since(tRead), total});

    // --verify: every uploaded range read back from the device and compared with the file.
    if (opt.verify) {
      const auto tVerify = Clock::now();
      std::vector<uint8_t> fromFile, fromDevice;
      for (const Chunk& ch : chunks) {
        if (opt.cancel && *opt.cancel) fail(ErrorCode::Usage, "cancelled");
        const ResidentTensor& rt = res.store->tensors()[ch.tensor];
        fromFile.resize(ch.bytes);
        fromDevice.resize(ch.bytes);
        files.read(ch.file, ch.fileOffset, fromFile.data(), ch.bytes, c.files[ch.file].path, false);
        if (auto d = dev.download(rt.buffer, ch.bufferOffset, fromDevice.data(), ch.bytes); !d)
          fail(ErrorCode::Io, "reading back failed: " + d.error().message, c.files[ch.file].path, ch.fileOffset, rt.name);
        if (std::memcmp(fromFile.data(), fromDevice.data(), ch.bytes) != 0) {
          uint64_t at = 0;
          while (fromFile[at] == fromDevice[at]) ++at;
          fail(ErrorCode::Io, "the bytes on " + dev.name() + " differ from the file", c.files[ch.file].path, ch.fileOffset + at, rt.name);
        }
        rep.verifiedBytes += ch.bytes;
      }
      rep.phases.push_back({"verify", since(tVerify), rep.verifiedBytes});
    }

    // Derived buffers owned by the store.
    const auto tDerive = Clock::now();
    uint64_t derivedTotal = 0;
    std::map<std::string, size_t> byName;
    for (size_t i = 0; i < res.store->tensors().size(); ++i) byName[res.store->tensors()[i].name] = i;
    for (const auto& h : rp.held) {
      if (opt.cancel && *opt.cancel) fail(ErrorCode::Usage, "cancelled");
      const TensorRecord& t = c.tensors[h.tensor];
      const LogicalTensor& l = c.logical[t.logical];
      if (t.role != Role::RoutedExpert || t.component != Component::Weight) continue;
      const DeviceBuffer& src = res.store->tensors()[byName[t.name]].buffer;
      auto alloc = [&](uint64_t bytes, const std::string& name) {
        auto b = dev.allocate(bytes, name);
        if (!b) fail(ErrorCode::Io, "allocation failed: " + b.error().message, {}, std::nullopt, name);
        derivedTotal += bytes;
        return b.value();
      };
      if (opt.plan.deriveFusedGateUp && t.projection == Projection::Gate && t.expert >= 0) {
        // the matching up projection of the same expert
        for (const auto& h2 : rp.held) {
          const TensorRecord& u = c.tensors[h2.tensor];
          if (u.layer != t.layer || u.expert != t.expert || u.projection != Projection::Up || u.component != Component::Weight) continue;
          const DeviceBuffer& ub = res.store->tensors()[byName[u.name]].buffer;
          const std::string name = l.name.substr(0, l.name.rfind('.')) + ".gate_up (derived)";
          DeviceBuffer b = alloc(src.bytes + ub.bytes, name);
          res.store->addDerived({name, "fused-gate-up", {t.name, u.name}, b});
          if (auto r = dev.copy(b, 0, src, 0, src.bytes); !r) throw CoreError(r.error());
          if (auto r = dev.copy(b, src.bytes, ub, 0, ub.bytes); !r) throw CoreError(r.error());
        }
      }
      if (opt.plan.deriveTranspose && plan::buildsTransposedTwin(c, t)) {
        const std::string name = t.name + " (transposed)";
        DeviceBuffer b = alloc(src.bytes, name);
        res.store->addDerived({name, "transpose", {t.name}, b});
        if (dev.isHost()) {  // [.., R, C] -> [.., C, R] per matrix; the CUDA backend does it on device
          const uint64_t esz = t.dtype->blockBytes, R = t.shape[t.shape.size() - 2], C = t.shape.back();
          const uint64_t mats = src.bytes / (R * C * esz);
          for (uint64_t m = 0; m < mats; ++m)
            for (uint64_t i = 0; i < R; ++i)
              for (uint64_t j = 0; j < C; ++j)
                std::memcpy(static_cast<uint8_t*>(b.ptr) + (m * R * C + j * R + i) * esz, static_cast<const uint8_t*>(src.ptr) + (m * R * C + i * C + j) * esz, esz);
        } else if (auto r = dev.copy(b, 0, src, 0, src.bytes); !r) {
          throw CoreError(r.error());
        }
      }
      if (opt.plan.deriveBf16 && plan::buildsBf16Twin(c, t)) {
        // BF16 copy of the rank's part of this quantized expert weight, dequantized by the CPU
        // reference and uploaded (the same bytes the GPU kernels produce).
        auto dec = num::makeDecoder(c, t.logical);
        if (!dec) continue;
        const auto& d = *dec.value();
        const uint64_t E = uint64_t(std::max<int64_t>(1, c.model.numExperts));
        const bool sliced = t.expert < 0 && d.shape().size() == 3 && d.shape()[0] == E;
        std::vector<std::pair<uint64_t, uint64_t>> rows;  // (first row, count)
        if (sliced)
          for (int64_t e : rankExperts(t.layer)) rows.push_back({uint64_t(e) * (d.rows() / E), d.rows() / E});
        else
          rows.push_back({0, d.rows()});
        uint64_t n = 0;
        for (auto [f, k] : rows) n += k * d.cols();
        const std::string name = l.name + " (bf16)";
        DeviceBuffer b = alloc(n * 2, name);
        res.store->addDerived({name, "bf16", {t.name}, b});
        std::vector<float> fbuf;
        std::vector<uint16_t> hbuf;
        uint64_t at = 0;
        for (auto [f, k] : rows) {
          fbuf.resize(k * d.cols());
          hbuf.resize(k * d.cols());
          d.decode(f, k, fbuf.data());
          for (size_t i = 0; i < fbuf.size(); ++i) hbuf[i] = num::toBf16Rne(fbuf[i]);
          if (auto r = dev.upload(b, at, hbuf.data(), hbuf.size() * 2, 0); !r) throw CoreError(r.error());
          if (auto r = dev.synchronize(0); !r) throw CoreError(r.error());
          at += hbuf.size() * 2;
        }
      }
    }
    rep.phases.push_back({"derive", since(tDerive), derivedTotal});

    for (const auto& t : res.store->tensors()) rep.bytes[size_t(t.category)] += t.buffer.bytes;
    for (const auto& d : res.store->deferred())
      if (d.reason == "deferred") rep.bytes[plan::Deferred] += d.bytes;
    for (int k = 0; k < plan::kCategories; ++k)
      if (k != plan::Deferred) rep.resident += rep.bytes[size_t(k)];
    rep.derivedBytes = derivedTotal;
    for (const auto& h : rp.held)
      if (isScaleComponent(c.tensors[h.tensor].component)) rep.scaleBytes += h.bytes;
    rep.residentDifference = int64_t(rep.resident) - int64_t(rp.resident);
    rep.derivedDifference = int64_t(rep.derivedBytes) - int64_t(rp.derived);
    if (opt.plan.deriveTranspose) rep.notes.push_back("transposed twins are built for BF16/F16/F32 expert weights only");
    if (opt.evictPageCache) rep.notes.push_back("page-cache eviction is ignored by the kernel for ranges the catalog still maps");
    rep.after = dev.memory();
    return true;
  });
  if (!out) {
    res.store->release();  // a failed or cancelled load leaves nothing allocated
    return out.error();
  }
  return res;
}

}  // namespace ws::load
