// The whole pipeline on a one-file checkpoint made of arbitrary bytes: open (tolerantly), every
// validation rule, scale statistics, and every dequantizer on every logical tensor, whose output
// must equal the element formulas the CUDA kernels run, bit for bit.
//
// Input: byte 0 picks the format (bit 0: GGUF, else safetensors); the rest is config.json text,
// a NUL, then the file's bytes. No NUL, or an empty config: no config.json is written.
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/formats/open_checkpoint.h"
#include "core/numerics/decode_element.h"
#include "core/numerics/dequant.h"
#include "core/numerics/float_formats.h"
#include "core/numerics/scale_stats.h"
#include "core/validate/validator.h"
#include "fuzz_support.h"

namespace {

namespace fs = std::filesystem;

const std::string& workDir() {
  static const std::string dir = [] {
    std::string tmpl = (fs::exists("/dev/shm") ? std::string("/dev/shm") : fs::temp_directory_path().string()) + "/wsfuzz-XXXXXX";
    if (!mkdtemp(tmpl.data())) std::abort();
    return tmpl;
  }();
  return dir;
}

void writeOrRemove(const std::string& path, std::string_view bytes, bool present) {
  if (!present) {
    ::unlink(path.c_str());
    return;
  }
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(bytes.data(), std::streamsize(bytes.size()));
}

// Decodes at most ~1M elements of the tensor and checks them against the kernel formulas.
void decodeAndCompare(const ws::Checkpoint& c, uint32_t li) {
  auto dec = ws::num::makeDecoder(c, li);
  if (!dec) return;
  const auto& d = *dec.value();
  if (d.cols() == 0 || d.rows() == 0 || d.cols() > (1u << 16)) return;
  const uint64_t rows = std::min<uint64_t>(d.rows(), (1u << 20) / d.cols());
  if (rows == 0) return;
  std::vector<float> cpu(rows * d.cols());
  try {
    d.decode(0, rows, cpu.data());
  } catch (const ws::CoreError&) {
    return;  // inconsistent companions: reported, not decoded
  }
  const ws::num::DecodeDesc desc = d.describe();
  if (desc.kind == ws::num::DescKind::GgufBlocks) {
    std::vector<float> block(desc.blockElems);
    for (uint64_t b = 0; b < cpu.size() / desc.blockElems; ++b) {
      ws::num::decodeGgufBlock(desc, b, block.data());
      for (uint32_t k = 0; k < desc.blockElems; ++k)
        // Shared block formulas on both sides: this checks the descriptor and indexing only.
        wsfuzz::require(ws::num::sameBitsOrNan(block[k], cpu[b * desc.blockElems + k]), "GGUF block descriptor decodes as the CPU decoder");
    }
    return;
  }
  for (uint64_t r = 0; r < rows; ++r)
    for (uint64_t j = 0; j < d.cols(); ++j)
      wsfuzz::require(ws::num::sameBitsOrNan(ws::num::decodeElement(desc, r, j), cpu[r * d.cols() + j]), "element formula equals the CPU decoder");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const bool gguf = data[0] & 1;
  auto [config, file] = wsfuzz::splitAtNul(std::string_view(reinterpret_cast<const char*>(data) + 1, size - 1));
  if (file.data() == nullptr) std::swap(config, file);  // no NUL: all of it is the file
  const std::string dir = workDir();
  writeOrRemove(dir + "/config.json", config, !config.empty() && !gguf);
  writeOrRemove(dir + "/model.gguf", file, gguf);
  writeOrRemove(dir + "/model.safetensors", file, !gguf);

  auto opened = ws::openCheckpointTolerant(dir);
  if (!opened) return 0;
  std::shared_ptr<const ws::Checkpoint> c = opened.value();
  ws::val::ValidateOptions opt;
  opt.threads = 1;
  ws::val::ValidationReport report = ws::val::validateCheckpoint(c, opt);
  (void)report;
  (void)ws::num::scaleStatistics(*c, ws::num::ScaleGrouping::Tensor);
  for (uint32_t li = 0; li < c->logical.size(); ++li) decodeAndCompare(*c, li);
  return 0;
}
