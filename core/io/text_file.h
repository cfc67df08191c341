// Whole small text files (config.json, index.json, expert maps) read safely: a FIFO, device or
// folder under a checkpoint's name is refused instead of blocking, and a size cap keeps a hostile
// "config" from being slurped into memory.
#pragma once

#include <cstdint>
#include <string>

namespace ws {

// Kimi-K2's index.json is 20 MB; nothing legitimate comes near this.
constexpr uint64_t kMaxTextFile = 256ull << 20;

// Throws CoreError(Io) naming the path when it is not a readable regular file or is larger than
// maxBytes.
std::string readTextFile(const std::string& path, uint64_t maxBytes = kMaxTextFile);

}  // namespace ws
