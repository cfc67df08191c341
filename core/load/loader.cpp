#include "core/load/loader.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <fcntl.h>
#include <map>
#include <sys/mman.h>
#include <sys/stat.h>
#include <mutex>
#include <thread>
#include <unistd.h>

#include "core/model/quant_scheme.h"
#include "core/numerics/dequant.h"
#include "core/numerics/float_formats.h"
#include "core/load/expert_coverage.h"
#include "core/load/resident_regions.h"
#include "core/plan/derived_buffers.h"
#include "core/util/format_bytes.h"
#include "core/util/parallel.h"

namespace ws::load {

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// One contiguous range of a file going to one place in one buffer.
struct Chunk {
  size_t tensor;  // index into the store's tensors
  uint32_t file;
  plan::Category category;
  uint64_t fileOffset, bufferOffset, bytes;
  bool f16ToBf16;  // the runtime converts this F16 tensor to BF16 at load
};

// F16 to BF16 in place, each value through F32 (exact) and rounded to nearest even: the seed
// runtime's conversion (f16_to_bf16_bytes: half's f16::to_f32 then bf16::from_f32), done in the
// staging buffer before the upload. A NaN keeps its sign and the top 7 bits of its payload, quiet
// bit set, as half does (its f32_to_bf16 returns (x >> 16) | 0x40 for a NaN) - not the one
// canonical NaN torch's rounding gives.
void f16ToBf16InPlace(void* p, uint64_t bytes) {
  auto* v = static_cast<uint16_t*>(p);
  for (uint64_t i = 0; i < bytes / 2; ++i) {
    const uint16_t h = v[i];
    const bool nan = (h & 0x7C00) == 0x7C00 && (h & 0x03FF) != 0;
    v[i] = nan ? uint16_t((h & 0x8000) | 0x7FC0 | ((h & 0x03FF) >> 3)) : num::toBf16Rne(num::halfToFloat(h));
  }
}

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
  // Reads exactly `bytes` (or throws, naming the file and offset); returns what pread delivered.
  uint64_t read(uint32_t file, uint64_t offset, void* dst, uint64_t bytes, const std::string& path, bool evict) const {
    uint8_t* p = static_cast<uint8_t*>(dst);
    uint64_t done = 0;
    while (done < bytes) {
      ssize_t n = ::pread(fds_[file], p + done, bytes - done, off_t(offset + done));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) fail(ErrorCode::Io, n == 0 ? "file ended early" : std::string("read failed: ") + std::strerror(errno), path, offset + done);
      done += uint64_t(n);
    }
    if (evict) ::posix_fadvise(fds_[file], off_t(offset), off_t(bytes), POSIX_FADV_DONTNEED);
    return done;
  }
  // The page cache drops only the folios that lie wholly inside an advised range, and with large
  // folios (ext4 on recent kernels) many straddle two tensors' chunks: so after the reads, each
  // file's span from its first to its last loaded byte is advised once more as one range.
  void evictSpans(const std::vector<Chunk>& chunks) const {
    std::map<uint32_t, std::pair<uint64_t, uint64_t>> span;  // file -> [first, end)
    for (const Chunk& ch : chunks) {
      if (!ch.bytes) continue;
      auto [it, fresh] = span.try_emplace(ch.file, ch.fileOffset, ch.fileOffset + ch.bytes);
      if (!fresh) it->second = {std::min(it->second.first, ch.fileOffset), std::max(it->second.second, ch.fileOffset + ch.bytes)};
    }
    for (const auto& [file, range] : span) ::posix_fadvise(fds_[file], off_t(range.first), off_t(range.second - range.first), POSIX_FADV_DONTNEED);
  }

 private:
  std::vector<int> fds_;
};

// The loaded file ranges still in the page cache: mincore over a fresh read-only mapping of each
// file, every page of a loaded range counted once.
PageCacheCheck pageCacheLeft(const Checkpoint& c, const std::vector<Chunk>& chunks) {
  PageCacheCheck out;
  out.checked = true;
  const uint64_t page = uint64_t(::sysconf(_SC_PAGESIZE));
  std::map<uint32_t, std::vector<const Chunk*>> byFile;
  for (const Chunk& ch : chunks)
    if (ch.bytes) byFile[ch.file].push_back(&ch);
  for (const auto& [file, list] : byFile) {
    int fd = ::open(c.files[file].path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    struct stat st{};
    if (::fstat(fd, &st) != 0 || st.st_size <= 0) {
      ::close(fd);
      continue;
    }
    const uint64_t size = uint64_t(st.st_size), pages = (size + page - 1) / page;
    void* m = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
    ::close(fd);
    if (m == MAP_FAILED) continue;
    std::vector<unsigned char> resident(pages, 0), counted(pages, 0);
    if (::mincore(m, size, resident.data()) == 0)
      for (const Chunk* ch : list)
        for (uint64_t p = ch->fileOffset / page; p < std::min(pages, (ch->fileOffset + ch->bytes + page - 1) / page); ++p)
          if (!counted[p]) {
            counted[p] = 1;
            out.bytes += page;
            if (resident[p] & 1) out.cached += page;
          }
    ::munmap(m, size);
  }
  return out;
}

}  // namespace

unsigned defaultReaders() { return std::clamp(workerCount() / 2, 2u, 8u); }

std::string residencyMismatch(const LoadReport& r) {
  std::string why;
  if (r.residentDifference != 0)
    why = "the readers uploaded " + std::to_string(r.resident) + " bytes, predicted " + std::to_string(r.predicted.resident);
  const Residency& m = r.residency;
  if (uint64_t(m.difference < 0 ? -m.difference : m.difference) > m.tolerance)
    why += std::string(why.empty() ? "" : "; ") + "free memory on the device fell by " + std::to_string(m.used) + " bytes, predicted " +
           std::to_string(m.predictedFootprint) + " (" + std::to_string(m.arenas) + " allocations rounded to " + std::to_string(m.granularity) +
           " bytes; tolerance " + std::to_string(m.tolerance) + ")";
  return why;
}

Result<LoadResult> loadCheckpoint(const Checkpoint& c, DeviceBackend& dev, const LoadOptions& opt) {
  LoadResult res;
  res.store = std::make_unique<WeightStore>(dev);
  LoadReport& rep = res.report;
  auto out = capture([&]() -> bool {
    // The readers pread the files: of a remote checkpoint's mirror that would be its holes.
    if (c.remote) fail(ErrorCode::Remote, "a full load reads every byte it places: download the checkpoint, then load it", c.root);
    auto cancelled = [&] { return opt.cancel && *opt.cancel; };
    const auto tPlan = Clock::now();
    auto planned = plan::planCheckpoint(c, opt.plan);
    if (!planned) throw CoreError(planned.error());
    const int ranks = int(planned.value().ranks.size());
    if (opt.epRank < 0 || opt.epRank >= ranks) fail(ErrorCode::Usage, "--ep-rank " + std::to_string(opt.epRank) + " is not in [0, " + std::to_string(ranks) + ")");
    const plan::RankPlan& rp = planned.value().ranks[size_t(opt.epRank)];
    rep.predicted = rp;
    rep.device = dev.name();
    rep.runtime = opt.plan.rules->name;
    rep.epRank = opt.epRank;
    rep.epSize = ranks;

    // Where everything goes: the held tensors in one set of arenas, the derived buffers (the
    // planner's own list of them) in another, so freeing the derived ones can give memory back.
    const plan::DerivedPlan derived = plan::derivedBuffers(c, opt.plan, rp);
    std::vector<uint64_t> sizes, derivedSizes;
    for (const auto& h : rp.held) sizes.push_back(h.bytes);
    for (const auto& d : derived.buffers) derivedSizes.push_back(d.bytes);
    const ArenaLayout layout = layoutArenas(sizes, kArenaAlignment, opt.arenaBytes);
    const ArenaLayout derivedLayout = layoutArenas(derivedSizes, kArenaAlignment, opt.arenaBytes);
    Residency& rs = rep.residency;
    rs.measured = !dev.isHost();
    rs.source = dev.isHost() ? "host stand-in bookkeeping" : "free memory reported by " + dev.name();
    rs.arenas = layout.arenaBytes.size() + derivedLayout.arenaBytes.size();
    rs.reserved = layout.reserved() + derivedLayout.reserved();
    rs.slack = layout.slack() + derivedLayout.slack();
    rs.granularity = dev.granularity();
    rs.tolerance = dev.residencyTolerance();
    rs.predictedFootprint = layout.footprint(rs.granularity) + derivedLayout.footprint(rs.granularity);
    rep.before = dev.memory();
    rep.phases.push_back({"plan", since(tPlan), 0});

    // OOM guard: refuse before allocating anything when the peak cannot fit.
    const uint64_t peak = rs.predictedFootprint + rp.transient;
    if (opt.preflight && peak + opt.plan.reserved > rep.before.free)
      fail(ErrorCode::Io, "predicted load peak " + std::to_string(peak) + " bytes (+" + std::to_string(opt.plan.reserved) + " reserved) exceeds the " +
                              std::to_string(rep.before.free) + " bytes free on " + dev.name() + "; use more EP ranks, --skip / --defer, or a larger device");

    for (const auto& s : rp.skipped) {
      const auto& t = c.tensors[s.tensor];
      res.store->defer({t.name, c.files[t.file].path, s.reason, t.offset, s.bytes});
    }

    // This rank's experts per layer, worked out once per layer (not once per held tensor: Kimi-K2
    // holds 200k of them).
    std::map<int, std::vector<int64_t>> expertsByLayer;
    auto rankExperts = [&](int layer) -> const std::vector<int64_t>& {
      auto it = expertsByLayer.find(layer);
      if (it == expertsByLayer.end()) it = expertsByLayer.emplace(layer, plan::expertsOnRank(c.model, opt.plan.placement, opt.epRank, layer)).first;
      return it->second;
    };

    // The arenas, each tensor a view into one, and the reads cut into chunks.
    const auto tAlloc = Clock::now();
    for (const auto& h : rp.held) {
      const TensorRecord& t = c.tensors[h.tensor];
      if (t.cut) fail(ErrorCode::Io, "cannot load: its data runs past the end of the file (cut)", c.files[t.file].path, t.offset, t.name);
    }
    auto firstIn = [](const ArenaLayout& l, uint32_t arena) {
      for (size_t i = 0; i < l.places.size(); ++i)
        if (l.places[i].arena == arena) return i;
      return size_t(0);
    };
    auto views = res.store->allocate(layout, [&](uint32_t k) { return c.tensors[rp.held[firstIn(layout, k)].tensor].name; });
    if (!views) throw CoreError(views.error());
    std::vector<Chunk> chunks;
    uint64_t total = 0;
    for (size_t i = 0; i < rp.held.size(); ++i) {
      const plan::HeldTensor& h = rp.held[i];
      const TensorRecord& t = c.tensors[h.tensor];
      const View& v = views.value()[i];
      const bool convert = opt.plan.rules->f16ToBf16 && t.dtype->name == "F16";
      if (convert) rep.convertedBytes += h.bytes;
      uint64_t at = 0;
      // A fused or stacked tensor is sliced by this rank's experts in its own layer (a per-layer
      // EPLB map gives each MoE layer a row of its own).
      const auto parts = plan::residentParts(c, opt.plan, t, h, rankExperts(t.layer));
      res.store->add({t.name, plan::categoryOf(t), v.buffer, v.arena, expertsOfParts(c, t, parts)});
      for (auto [off, len] : parts) {
        for (uint64_t done = 0; done < len; done += opt.stagingBytes) {
          const uint64_t n = std::min(opt.stagingBytes, len - done);
          chunks.push_back({i, t.file, plan::categoryOf(t), t.offset + off + done, at + done, n, convert});
        }
        at += len;
      }
      total += h.bytes;
    }
    rep.phases.push_back({"allocate", since(tAlloc), rs.reserved});

    // Readers pread into their staging ring and upload; a buffer is reused only after its
    // stream has finished with it, so reading overlaps the copies. What they read is counted
    // from pread's own returns, by category: the resident bytes the report gives.
    const Files files(c);
    std::atomic<size_t> next{0};
    std::atomic<uint64_t> done{0};
    std::array<std::atomic<uint64_t>, plan::kCategories> readBytes{};
    std::mutex errMu;
    std::optional<Error> firstError;  // under errMu
    std::atomic<bool> failed{false};  // read by the other readers between chunks
    const unsigned readers = std::max(1u, std::min<unsigned>(opt.readers, unsigned(std::max<size_t>(1, chunks.size()))));
    uint64_t largestChunk = 1;
    for (const Chunk& ch : chunks) largestChunk = std::max(largestChunk, ch.bytes);
    const uint64_t stagingBytes = std::min(opt.stagingBytes, largestChunk);
    rep.readers = readers;
    rep.stagingBytes = stagingBytes;
    for (const Chunk& ch : chunks) rep.reads += ch.bytes > 0;
    // Every reader's ring, allocated (pinned, on CUDA: page-locking is slow, comparable to the
    // copies) before the reads start, as a phase of its own, so read+upload times only the reads
    // and copies; freed when the readers have finished (ringRelease: on an error before that).
    const unsigned depth = std::max(1u, opt.buffersPerReader);
    const auto tStage = Clock::now();
    std::vector<void*> ring(size_t(readers) * depth, nullptr);
    struct RingRelease {
      DeviceBackend& dev;
      std::vector<void*>& ring;
      ~RingRelease() {
        for (void* s : ring)
          if (s) dev.freeStaging(s);
      }
    } ringRelease{dev, ring};
    for (auto& s : ring)
      if (!(s = dev.allocateStaging(stagingBytes))) fail(ErrorCode::Io, "cannot allocate " + std::to_string(stagingBytes) + " bytes of staging memory on " + dev.name());
    rep.phases.push_back({"stage", since(tStage), uint64_t(ring.size()) * stagingBytes});
    const auto tRead = Clock::now();
    auto reader = [&](unsigned r) {
      void* const* staging = ring.data() + size_t(r) * depth;
      std::vector<bool> inFlight(depth, false);
      auto streamOf = [&](unsigned j) { return int((r * depth + j) % unsigned(std::max(1, dev.streams()))); };
      unsigned k = 0;
      try {
        for (size_t i; (i = next.fetch_add(1)) < chunks.size();) {
          if (cancelled() || failed) break;
          const Chunk& ch = chunks[i];
          const int stream = streamOf(k);
          if (inFlight[k]) {
            auto s = dev.synchronize(stream);
            if (!s) throw CoreError(s.error());
          }
          readBytes[size_t(ch.category)] += files.read(ch.file, ch.fileOffset, staging[k], ch.bytes, c.files[ch.file].path, opt.evictPageCache);
          if (ch.f16ToBf16) f16ToBf16InPlace(staging[k], ch.bytes);
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
      // Every copy from this reader's staging is finished (or failed) before the ring is freed,
      // on the error path too; a copy that failed late is an error of the load.
      for (unsigned j = 0; j < depth; ++j)
        if (inFlight[j])
          if (auto s = dev.synchronize(streamOf(j)); !s) {
            std::lock_guard lock(errMu);
            if (!firstError) firstError = s.error();
            failed = true;
          }
    };
    std::vector<std::thread> threads;
    for (unsigned r = 0; r < readers; ++r) threads.emplace_back(reader, r);
    for (auto& t : threads) t.join();
    for (void*& s : ring) {  // every copy from it has finished: the pinned memory goes back now, not after the derive
      dev.freeStaging(s);
      s = nullptr;
    }
    if (firstError) throw CoreError(*firstError);
    if (cancelled()) fail(ErrorCode::Usage, "cancelled");
    rep.phases.push_back({"read+upload", since(tRead), total});
    if (opt.evictPageCache) {
      files.evictSpans(chunks);
      rep.pageCache = pageCacheLeft(c, chunks);
    }

    // --verify: every uploaded range read back from the device and compared with the file.
    if (opt.verify) {
      const auto tVerify = Clock::now();
      std::vector<uint8_t> fromFile, fromDevice;
      for (const Chunk& ch : chunks) {
        if (cancelled()) fail(ErrorCode::Usage, "cancelled");
        const ResidentTensor& rt = res.store->tensors()[ch.tensor];
        fromFile.resize(ch.bytes);
        fromDevice.resize(ch.bytes);
        files.read(ch.file, ch.fileOffset, fromFile.data(), ch.bytes, c.files[ch.file].path, false);
        if (ch.f16ToBf16) f16ToBf16InPlace(fromFile.data(), ch.bytes);  // what should be there
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

    // Derived buffers, built on the device by its kernels from the planner's list.
    const auto tDerive = Clock::now();
    // What landed unchanged, for the BF16 twins (only a load that builds them looks).
    std::optional<UploadedRanges> uploaded;
    auto uploadedRanges = [&]() -> const UploadedRanges& {
      if (!uploaded) {
        std::vector<UploadedRanges::Piece> pieces;
        for (const Chunk& ch : chunks)
          if (!ch.f16ToBf16) pieces.push_back({ch.file, ch.fileOffset, ch.bytes, static_cast<const uint8_t*>(res.store->tensors()[ch.tensor].buffer.ptr) + ch.bufferOffset});
        uploaded.emplace(std::move(pieces));
      }
      return *uploaded;
    };
    auto dviews = res.store->allocate(derivedLayout, [&](uint32_t k) { return derived.buffers[firstIn(derivedLayout, k)].name; });
    if (!dviews) throw CoreError(dviews.error());
    std::map<uint32_t, size_t> residentOf;  // tensor index -> its place in the store
    for (size_t i = 0; i < rp.held.size(); ++i) residentOf[rp.held[i].tensor] = i;
    auto check = [&](const Result<bool>& r, const std::string& name) {
      if (!r) fail(ErrorCode::Io, "building " + name + ": " + r.error().message, {}, std::nullopt, name);
    };
    for (size_t i = 0; i < derived.buffers.size(); ++i) {
      if (cancelled()) fail(ErrorCode::Usage, "cancelled");
      const plan::DerivedSpec& spec = derived.buffers[i];
      const View& v = dviews.value()[i];
      DerivedBuffer d{spec.name, plan::derivedKindName(spec.kind), {}, v.buffer, v.arena};
      for (const auto& src : spec.sources) d.sources.push_back(c.tensors[src.tensor].name);
      res.store->addDerived(d);
      auto sourceBuffer = [&](const plan::DerivedSource& src) { return res.store->tensors()[residentOf.at(src.tensor)].buffer; };
      switch (spec.kind) {
        case plan::DerivedKind::FusedGateUp: {  // gate then up, device to device
          uint64_t at = 0;
          for (const auto& src : spec.sources) {
            check(dev.copy(v.buffer, at, sourceBuffer(src), src.offset, src.bytes), spec.name);
            at += src.bytes;
          }
          break;
        }
        case plan::DerivedKind::Transpose:
          check(dev.transpose(v.buffer, sourceBuffer(spec.sources[0]), spec.mats, spec.rows, spec.cols, spec.elemBytes), spec.name);
          break;
        case plan::DerivedKind::Bf16: {  // the preview's kernels, rows of the rank's experts only
          auto dec = num::makeDecoder(c, spec.logical);
          if (!dec) throw CoreError(dec.error());
          const num::DecodeDesc desc = dec.value()->describe();
          uint64_t at = 0;
          for (auto [first, rows] : spec.rowRanges) {
            // From the bytes this load uploaded where it holds every span the rows read as it is
            // in the file; staged from the file again otherwise.
            if (const auto onDevice = onUploadedBytes(c, spec.logical, desc, first, rows, uploadedRanges())) {
              check(dev.decodeBf16(*onDevice, first, rows, v.buffer, at, true), spec.name);
              ++rep.bf16FromUploaded;
            } else {
              check(dev.decodeBf16(desc, first, rows, v.buffer, at, false), spec.name);
              ++rep.bf16Staged;
            }
            at += rows * spec.cols * 2;
          }
          break;
        }
      }
      rep.derivedBytes += spec.bytes;
    }
    rep.phases.push_back({"derive", since(tDerive), rep.derivedBytes});
    rep.notes.insert(rep.notes.end(), derived.notes.begin(), derived.notes.end());

    for (int k = 0; k < plan::kCategories; ++k)
      if (k != plan::Deferred) {
        rep.bytes[size_t(k)] = readBytes[size_t(k)].load();
        rep.resident += rep.bytes[size_t(k)];
      }
    for (const auto& d : res.store->deferred())
      if (d.reason == "deferred") rep.bytes[plan::Deferred] += d.bytes;
    for (const auto& h : rp.held) {
      const TensorRecord& t = c.tensors[h.tensor];
      if (isScaleComponent(t.component)) rep.scaleBytes += h.bytes;
      // FP8 KV-cache scales the checkpoint carries, counted as the seed counts them: one *.k_scale
      // a layer (seeds/spark_runtime_weights.rs fp8_kv_scale_count; the v_scale twins are not counted).
      if (t.name.ends_with(".k_scale")) rep.kvCacheScales++;
    }
    // The seed's guidance at serve time, for a checkpoint with FP8 weights: calibrated KV scales, or
    // scales that default to 1.0 (which clips BF16 into E4M3's range).
    const bool fp8Weights = std::any_of(c.tensors.begin(), c.tensors.end(), [](const TensorRecord& t) { return t.dtype->name == "F8_E4M3"; });
    if (fp8Weights)
      rep.notes.push_back(rep.kvCacheScales ? std::to_string(rep.kvCacheScales) + " calibrated FP8 KV-cache scales (k_scale): an FP8 KV cache needs no online calibration"
                                            : "no FP8 KV-cache scales (k_scale): an FP8 KV cache would use 1.0, which clips BF16 into E4M3's range; calibrate online or keep a BF16 KV cache");
    if (rep.convertedBytes)
      rep.notes.push_back(formatBytes(rep.convertedBytes) + " of F16 tensors converted to BF16 at load (" + std::string(opt.plan.rules->name) + "'s rule)");
    rep.residentDifference = int64_t(rep.resident) - int64_t(rp.resident);
    if (opt.plan.deriveTranspose) rep.notes.push_back("transposed twins are built for BF16/F16/F32 expert weights only");
    rep.after = dev.memory();
    rs.used = int64_t(rep.before.free) - int64_t(rep.after.free);
    rs.difference = rs.used - int64_t(rs.predictedFootprint);
    rs.mismatch = !residencyMismatch(rep).empty();
    return true;
  });
  if (!out) {
    res.store->release();  // a failed or cancelled load leaves nothing allocated
    return out.error();
  }
  return res;
}

}  // namespace ws::load
