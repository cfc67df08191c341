// Tools to damage copies of real checkpoints for the validation corpus: read a safetensors file
// into editable entries, write it back (optionally tweaking the header text), edit index.json and
// config.json. Only ever applied to copies in temporary folders.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace wstest {

struct StEntry {
  std::string name, dtype;
  std::vector<uint64_t> shape;
  std::vector<uint8_t> data;
};

struct StFile {
  std::vector<StEntry> tensors;
  nlohmann::ordered_json metadata;
  StEntry* find(const std::string& name);
  void remove(const std::string& name);
};

StFile readSt(const std::string& path);
// Writes entries contiguously in order; `tweak` may edit the header JSON text before writing.
void writeSt(const std::string& path, const StFile& f, const std::function<void(std::string&)>& tweak = {});
// Copies a checkpoint folder (or file) into dst with write permission.
void copyCheckpoint(const std::string& src, const std::string& dst);
void editJson(const std::string& path, const std::function<void(nlohmann::ordered_json&)>& edit);
// Fills data with a repeated 16-bit or 32-bit pattern.
void fill16(std::vector<uint8_t>& d, uint16_t v);
void fill32(std::vector<uint8_t>& d, float v);

}  // namespace wstest
