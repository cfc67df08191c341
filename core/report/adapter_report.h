// A LoRA adapter in inspect's report: its configuration and every module it changes (JSON key
// "adapter", null for any other checkpoint; the text report's "adapter" line).
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

#include "core/model/checkpoint.h"

namespace ws {

nlohmann::json adapterJson(const Checkpoint& c);
std::string adapterText(const Checkpoint& c);  // "" when it is no adapter

}  // namespace ws
