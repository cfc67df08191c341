// adapter_config.json beside a LoRA adapter's tensors, as PEFT (`save_pretrained`) and mlx-lm
// (`mlx_lm.lora`) write it -> AdapterInfo (docs/adapters.md).
#pragma once

#include <optional>
#include <string>

#include "core/model/adapter_info.h"

namespace ws {


// Reads `dir`/adapter_config.json; none when there is none, or when it describes no LoRA (another
// PEFT method). Throws CoreError(InvalidHeaderJson) naming the file when it is not valid JSON.
std::optional<AdapterInfo> readAdapterConfig(const std::string& dir);

// Parses the text (exposed for tests).
std::optional<AdapterInfo> parseAdapterConfigText(const std::string& text, const std::string& path);

}  // namespace ws
