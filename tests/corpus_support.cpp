#include "corpus_support.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace wstest {

namespace fs = std::filesystem;

StEntry* StFile::find(const std::string& name) {
  for (auto& t : tensors)
    if (t.name == name) return &t;
  throw std::runtime_error("no tensor " + name);
}

void StFile::remove(const std::string& name) {
  for (auto it = tensors.begin(); it != tensors.end(); ++it)
    if (it->name == name) {
      tensors.erase(it);
      return;
    }
  throw std::runtime_error("no tensor " + name);
}

StFile readSt(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  uint64_t n = 0;
  in.read(reinterpret_cast<char*>(&n), 8);
  std::string header(n, '\0');
  in.read(header.data(), std::streamsize(n));
  std::vector<uint8_t> data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto j = nlohmann::ordered_json::parse(header);
  StFile f;
  for (auto& [k, v] : j.items()) {
    if (k == "__metadata__") {
      f.metadata = v;
      continue;
    }
    StEntry e;
    e.name = k;
    e.dtype = v["dtype"].get<std::string>();
    e.shape = v["shape"].get<std::vector<uint64_t>>();
    uint64_t b = v["data_offsets"][0], end = v["data_offsets"][1];
    e.data.assign(data.begin() + int64_t(b), data.begin() + int64_t(end));
    f.tensors.push_back(std::move(e));
  }
  return f;
}

void writeSt(const std::string& path, const StFile& f, const std::function<void(std::string&)>& tweak) {
  nlohmann::ordered_json j;
  if (!f.metadata.is_null()) j["__metadata__"] = f.metadata;
  uint64_t off = 0;
  for (const auto& t : f.tensors) {
    j[t.name] = {{"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {off, off + t.data.size()}}};
    off += t.data.size();
  }
  std::string header = j.dump();
  if (tweak) tweak(header);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  uint64_t n = header.size();
  out.write(reinterpret_cast<const char*>(&n), 8);
  out.write(header.data(), std::streamsize(n));
  for (const auto& t : f.tensors) out.write(reinterpret_cast<const char*>(t.data.data()), std::streamsize(t.data.size()));
}

void copyCheckpoint(const std::string& src, const std::string& dst) {
  if (fs::is_directory(src)) {
    fs::create_directories(dst);
    for (const auto& e : fs::directory_iterator(src)) fs::copy_file(e.path(), fs::path(dst) / e.path().filename());
  } else {
    fs::copy_file(src, dst);
  }
  for (const auto& e : fs::recursive_directory_iterator(fs::is_directory(dst) ? dst : fs::path(dst).parent_path().string()))
    fs::permissions(e.path(), fs::perms::owner_write, fs::perm_options::add);
  if (!fs::is_directory(dst)) fs::permissions(dst, fs::perms::owner_write, fs::perm_options::add);
}

void editJson(const std::string& path, const std::function<void(nlohmann::ordered_json&)>& edit) {
  nlohmann::ordered_json j;
  {
    std::ifstream in(path);
    j = nlohmann::ordered_json::parse(in);
  }
  edit(j);
  std::ofstream out(path, std::ios::trunc);
  out << j.dump(2);
}

void fill16(std::vector<uint8_t>& d, uint16_t v) {
  for (size_t i = 0; i + 1 < d.size(); i += 2) std::memcpy(&d[i], &v, 2);
}

void fill32(std::vector<uint8_t>& d, float v) {
  for (size_t i = 0; i + 3 < d.size(); i += 4) std::memcpy(&d[i], &v, 4);
}

}  // namespace wstest
