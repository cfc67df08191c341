// Helpers shared by the core test suites: where the fixtures are, temporary folders, and
// small builders of hand-made checkpoint bytes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/formats/open_checkpoint.h"
#include "core/io/mapped_file.h"
#include "tests/test_paths.h"

namespace wstest {

// How long a test waits for background work (a signal, a state) before calling it hung: a hang
// guard far above any real duration, not a timing assertion - the waits return the moment what
// they wait for happens, so a loaded machine (sanitizers, two cores) makes them slower, not red.
constexpr int kPatienceMs = 120000;

// $WEIGHTSCOPE_FIXTURES, else the folder configured (configuredFixtures(): ../shared/fixtures).
std::string fixtures();
std::string fixture(const std::string& rel);
// Every checkpoint among the fixtures (paths relative to fixtures(); a split GGUF by its first file).
std::vector<std::string> fixtureCheckpoints();

// A fresh folder under the system temp dir, removed by the destructor.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

void writeFile(const std::string& path, const std::vector<uint8_t>& bytes);
void writeFile(const std::string& path, const std::string& text);
uint64_t fileSize(const std::string& path);
// The bytes this process has read through read(2), pread(2) and their kin so far, by the kernel's
// own count (/proc/self/io, rchar): what code that reads with pread asked the files for. The
// count includes the reads of /proc/self/io itself, which this takes out.
uint64_t bytesReadBySyscalls();
// The read(2), pread(2) and kin calls this process has made so far (syscr), less this one's own.
uint64_t readCallsBySyscalls();

// Drops a file's pages from the page cache (written back first), as if it had not been read
// since boot. False where that cannot be seen: a tmpfs keeps its pages.
bool dropFromPageCache(const std::string& path);
// The pages of the mapped file that the page cache holds now (MappedFile::cached, page by page).
uint64_t cachedPages(const ws::MappedFile& f, uint64_t offset = 0, uint64_t bytes = UINT64_MAX);
// The device's read-around window under `path` (its queue's read_ahead_kb) in bytes; 0 when sysfs
// does not tell.
uint64_t readAheadWindow(const std::string& path);

// A safetensors file: 8-byte length, header text as given, then `dataBytes` zero bytes.
std::vector<uint8_t> safetensorsBytes(const std::string& header, uint64_t dataBytes);

// Builds a valid safetensors file tensor by tensor (data zero unless given).
class SafetensorsBuilder {
 public:
  SafetensorsBuilder& add(const std::string& name, const std::string& dtype, const std::vector<uint64_t>& shape,
                          std::vector<uint8_t> data = {});
  void write(const std::string& path) const;

 private:
  struct Entry {
    std::string name, dtype;
    std::vector<uint64_t> shape;
    std::vector<uint8_t> data;
  };
  std::vector<Entry> entries_;
};

std::vector<uint8_t> int64Bytes(const std::vector<int64_t>& v);

// Sum over a safetensors checkpoint's files of (file size - 8 - header length), read from the raw
// 8-byte length field, independently of the parser.
uint64_t safetensorsDataBytes(const ws::Checkpoint& c);

// Opens or fails the test with the error text.
std::shared_ptr<const ws::Checkpoint> openOrFail(const std::string& path);

}  // namespace wstest
