#include "core/synth/writers.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

#include "core/io/atomic_file.h"
#include "core/synth/tensor_data.h"
#include "core/util/error.h"

namespace ws::synth {

namespace {

class OutFile {
 public:
  explicit OutFile(const std::string& path) : path_(path) {
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd_ < 0) fail(ErrorCode::Io, std::string("cannot create: ") + std::strerror(errno), path);
  }
  ~OutFile() {
    if (fd_ >= 0) ::close(fd_);
  }
  void write(const void* data, size_t n) {
    writeAll(fd_, data, n, path_);
    pos_ += n;
  }
  void zeros(uint64_t n) {
    static const char z[64] = {};
    while (n > 0) {
      size_t k = n < sizeof z ? size_t(n) : sizeof z;
      write(z, k);
      n -= k;
    }
  }
  // Sparse: extend the file to `size` without writing, leaving a hole; writing goes on there.
  void extendTo(uint64_t size) {
    if (::ftruncate(fd_, off_t(size)) != 0 || ::lseek(fd_, off_t(size), SEEK_SET) < 0)
      fail(ErrorCode::Io, std::string("cannot extend: ") + std::strerror(errno), path_);
    pos_ = size;
  }
  uint64_t pos() const { return pos_; }

 private:
  std::string path_;
  int fd_ = -1;
  uint64_t pos_ = 0;
};

void appendJsonString(std::string& out, const std::string& s) { out += nlohmann::json(s).dump(); }

template <class T>
void put(std::string& buf, T v) {
  buf.append(reinterpret_cast<const char*>(&v), sizeof v);
}

void putString(std::string& buf, const std::string& s) {
  put<uint64_t>(buf, s.size());
  buf += s;
}

}  // namespace

uint64_t writeSafetensorsFile(const std::string& path, const std::vector<const PlannedTensor*>& tensors, bool sparse, uint64_t seed) {
  std::string header = "{\"__metadata__\":{\"format\":\"pt\"}";
  uint64_t offset = 0;
  for (const PlannedTensor* t : tensors) {
    uint64_t n = t->bytes();
    header += ',';
    appendJsonString(header, t->name);
    header += ":{\"dtype\":\"";
    header += t->dtype->name;
    header += "\",\"shape\":[";
    for (size_t i = 0; i < t->shape.size(); ++i) {
      if (i) header += ',';
      header += std::to_string(t->shape[i]);
    }
    header += "],\"data_offsets\":[" + std::to_string(offset) + "," + std::to_string(offset + n) + "]}";
    offset += n;
  }
  header += '}';
  header.append((8 - header.size() % 8) % 8, ' ');  // pad like the reference writer
  OutFile f(path);
  uint64_t len = header.size();
  f.write(&len, 8);
  f.write(header.data(), header.size());
  if (sparse) {
    // Holes, except the few bytes that describe structure rather than weights: weight_shape
    // values (zeros there would make every packed tensor a validation error).
    uint64_t at = 0;
    for (const PlannedTensor* t : tensors) {
      if (t->fill == Fill::ShapeInts) {
        f.extendTo(8 + len + at);
        auto bytes = tensorBytes(*t, seed);
        f.write(bytes.data(), bytes.size());
      }
      at += t->bytes();
    }
    f.extendTo(8 + len + offset);
  } else {
    for (const PlannedTensor* t : tensors) {
      auto bytes = tensorBytes(*t, seed);
      f.write(bytes.data(), bytes.size());
    }
  }
  return offset;
}

uint64_t writeGgufFile(const std::string& path, const Plan& plan, bool sparse, uint64_t seed) {
  constexpr uint32_t kAlign = 32;
  std::string buf = "GGUF";
  put<uint32_t>(buf, 3);
  put<int64_t>(buf, int64_t(plan.tensors.size()));
  put<int64_t>(buf, int64_t(plan.config.size() + 1));
  putString(buf, "general.alignment");
  put<int32_t>(buf, 4);  // UINT32
  put<uint32_t>(buf, kAlign);
  for (const auto& [key, value] : plan.config.items()) {
    putString(buf, key);
    if (value.is_string()) {
      put<int32_t>(buf, 8);
      putString(buf, value.get<std::string>());
    } else {
      put<int32_t>(buf, 4);  // llama.cpp writes these counts as UINT32
      put<uint32_t>(buf, value.get<uint32_t>());
    }
  }
  uint64_t offset = 0;
  std::vector<uint64_t> offsets;
  for (const auto& t : plan.tensors) {
    putString(buf, t.name);
    put<uint32_t>(buf, uint32_t(t.shape.size()));
    for (auto it = t.shape.rbegin(); it != t.shape.rend(); ++it) put<int64_t>(buf, int64_t(*it));  // ggml order
    put<int32_t>(buf, t.dtype->ggmlId);
    put<uint64_t>(buf, offset);
    offsets.push_back(offset);
    offset += (t.bytes() + kAlign - 1) / kAlign * kAlign;
  }
  buf.append((kAlign - buf.size() % kAlign) % kAlign, '\0');
  OutFile f(path);
  f.write(buf.data(), buf.size());
  uint64_t dataStart = f.pos();
  if (sparse) {
    f.extendTo(dataStart + offset);
  } else {
    for (size_t i = 0; i < plan.tensors.size(); ++i) {
      f.zeros(dataStart + offsets[i] - f.pos());
      auto bytes = tensorBytes(plan.tensors[i], seed);
      f.write(bytes.data(), bytes.size());
    }
    f.zeros(dataStart + offset - f.pos());
  }
  return offset;
}

}  // namespace ws::synth
