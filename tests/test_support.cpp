#include "test_support.h"

#include <cstdlib>
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <cstring>
#include <stdexcept>

#include "core/io/mapped_file.h"
#include "core/model/dtype.h"
#include "core/util/checked.h"

namespace wstest {

namespace fs = std::filesystem;

std::string fixtures() {
  if (const char* env = std::getenv("WEIGHTSCOPE_FIXTURES")) return env;
  return configuredFixtures();
}

std::string fixture(const std::string& rel) { return fixtures() + "/" + rel; }

std::vector<std::string> fixtureCheckpoints() {
  return {"hf/qwen3_moe", "hf/qwen3_moe_fp8", "hf/deepseek_v3", "hf/mixtral", "hf/qwen3_vl_moe", "gguf/tiny-qwen3moe-kquants.gguf",
          "gguf/tiny-qwen3moe-kquants.expected.gguf", "gguf/tiny-qwen3moe-kquants-00001-of-00002.gguf"};
}

TempDir::TempDir() {
  std::random_device rd;
  for (int i = 0; i < 100; ++i) {
    fs::path p = fs::temp_directory_path() / ("wstest-" + std::to_string(rd()));
    if (fs::create_directory(p)) {
      path_ = p.string();
      return;
    }
  }
  throw std::runtime_error("cannot create a temporary folder");
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

void writeFile(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
}

void writeFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

uint64_t fileSize(const std::string& path) { return fs::file_size(path); }

std::vector<uint8_t> safetensorsBytes(const std::string& header, uint64_t dataBytes) {
  std::vector<uint8_t> b(8);
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) b[size_t(i)] = uint8_t(n >> (8 * i));
  b.insert(b.end(), header.begin(), header.end());
  b.resize(b.size() + dataBytes, 0);
  return b;
}

SafetensorsBuilder& SafetensorsBuilder::add(const std::string& name, const std::string& dtype, const std::vector<uint64_t>& shape,
                                            std::vector<uint8_t> data) {
  const ws::DType* d = ws::dtypeFromSafetensors(dtype);
  if (!d) throw std::runtime_error("unknown dtype " + dtype);
  uint64_t bytes = *d->bytesFor(*ws::checkedProduct(shape));
  data.resize(bytes, 0);
  entries_.push_back({name, dtype, shape, std::move(data)});
  return *this;
}

void SafetensorsBuilder::write(const std::string& path) const {
  std::string h = "{";
  uint64_t off = 0;
  for (const auto& e : entries_) {
    if (h.size() > 1) h += ",";
    h += "\"" + e.name + "\":{\"dtype\":\"" + e.dtype + "\",\"shape\":[";
    for (size_t i = 0; i < e.shape.size(); ++i) h += (i ? "," : "") + std::to_string(e.shape[i]);
    h += "],\"data_offsets\":[" + std::to_string(off) + "," + std::to_string(off + e.data.size()) + "]}";
    off += e.data.size();
  }
  h += "}";
  std::vector<uint8_t> out = safetensorsBytes(h, 0);
  for (const auto& e : entries_) out.insert(out.end(), e.data.begin(), e.data.end());
  writeFile(path, out);
}

std::vector<uint8_t> int64Bytes(const std::vector<int64_t>& v) {
  std::vector<uint8_t> b(v.size() * 8);
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

uint64_t safetensorsDataBytes(const ws::Checkpoint& c) {
  uint64_t total = 0;
  for (const auto& f : c.files) {
    std::ifstream in(f.path, std::ios::binary);
    uint64_t n = 0;
    in.read(reinterpret_cast<char*>(&n), 8);
    total += fs::file_size(f.path) - 8 - n;
  }
  return total;
}

std::shared_ptr<const ws::Checkpoint> openOrFail(const std::string& path) {
  auto r = ws::openCheckpoint(path);
  if (!r) throw std::runtime_error("cannot open " + path + ": " + r.error().describe());
  return r.value();
}

namespace {

struct IoCounts {
  uint64_t bytes = 0, calls = 0;  // rchar, syscr
};

// This process's read counts from /proc/self/io, less what earlier calls of this function read.
// One read(2) of the whole file: its content shows the counts before this read, and the read then
// adds one call and exactly the bytes it returned. Inferring those lengths from two readings in a
// row was off by one whenever a count in the file gained a digit between them (a sanitized
// tst_stats).
IoCounts selfIo() {
  static IoCounts mine;  // what this function has read from /proc/self/io
  char buf[4096];
  const int fd = ::open("/proc/self/io", O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error("cannot open /proc/self/io");
  const ssize_t n = ::read(fd, buf, sizeof buf);
  ::close(fd);
  if (n <= 0 || size_t(n) == sizeof buf) throw std::runtime_error("cannot read /proc/self/io in one read");
  const std::string text(buf, size_t(n));
  auto field = [&](const char* key) {
    const size_t at = text.find(key);
    if (at == std::string::npos) throw std::runtime_error(std::string("/proc/self/io has no ") + key + " line");
    return std::strtoull(text.c_str() + at + std::strlen(key), nullptr, 10);
  };
  const IoCounts out{field("rchar:") - mine.bytes, field("syscr:") - mine.calls};
  mine.bytes += uint64_t(n), mine.calls += 1;
  return out;
}

}  // namespace

uint64_t bytesReadBySyscalls() { return selfIo().bytes; }

bool dropFromPageCache(const std::string& path) {
  struct statfs fs {};
  if (::statfs(path.c_str(), &fs) != 0 || fs.f_type == TMPFS_MAGIC) return false;
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return false;
  ::fdatasync(fd);
  const bool advised = ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) == 0;
  ::close(fd);
  return advised;
}

uint64_t cachedPages(const ws::MappedFile& f, uint64_t offset, uint64_t bytes) {
  static const uint64_t page = uint64_t(::sysconf(_SC_PAGESIZE));
  const uint64_t end = std::min(f.size(), bytes == UINT64_MAX ? f.size() : offset + bytes);
  uint64_t n = 0;
  for (uint64_t at = offset / page * page; at < end; at += page) n += f.cached(at);
  return n;
}

uint64_t readAheadWindow(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return 0;
  const std::string dev = "/sys/dev/block/" + std::to_string(major(st.st_dev)) + ":" + std::to_string(minor(st.st_dev));
  for (const char* queue : {"/queue/read_ahead_kb", "/../queue/read_ahead_kb"}) {  // a disk, or a partition of one
    std::ifstream in(dev + queue);
    uint64_t kb = 0;
    if (in >> kb) return kb * 1024;
  }
  return 0;
}

uint64_t readCallsBySyscalls() { return selfIo().calls; }

}  // namespace wstest
