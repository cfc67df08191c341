#include "core/plan/host_offload.h"

#include <regex>

namespace ws::plan {

bool keptOnHostByNCpuMoe(const std::string& name, int n) {
  if (n <= 0) return false;
  // One search for every block at once: the block number captured whole (its pattern needs the
  // "." after it, so blk.15 is block 15, never block 1), then held to i < n. A number with a
  // leading zero matches none of llama.cpp's per-block patterns, which print i with %d.
  static const std::regex exps(R"(blk\.(\d+)\.ffn_(up|down|gate|gate_up)_(ch|)exps)");
  std::smatch m;
  for (auto from = name.cbegin(); std::regex_search(from, name.cend(), m, exps); from = m[0].second) {
    const std::string block = m[1].str();
    if (block.size() > 9 || (block.size() > 1 && block[0] == '0')) continue;
    if (std::stoi(block) < n) return true;
  }
  return false;
}

}  // namespace ws::plan

namespace ws::plan {

uint64_t cpuOffloadCap(double gib) { return uint64_t(gib * 1024.0 * 1024.0 * 1024.0); }

bool offloadableByCpuOffload(const TensorRecord& t, const std::string& engine) {
  if (engine == "sglang" && t.name.find(".self_attn.kv_b_proj.") != std::string::npos) return false;
  return t.layer >= 0 && t.role != Role::Mtp && t.role != Role::Embedding && t.role != Role::LmHead;
}

}  // namespace ws::plan
