#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <stdexcept>

#include <iostream>

#include "app/cli/command.h"
#include "core/formats/open_checkpoint.h"

namespace ws::cli {

Args::Args(const std::vector<std::string>& args, const std::vector<std::string>& valued, const std::vector<std::string>& flags) {
  auto known = [](const std::vector<std::string>& v, const std::string& k) { return std::find(v.begin(), v.end(), k) != v.end(); };
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a.size() > 2 && a.rfind("--", 0) == 0) {
      std::string key = a.substr(2), value;
      bool inlineValue = false;
      if (auto eq = key.find('='); eq != std::string::npos) {
        value = key.substr(eq + 1);
        key = key.substr(0, eq);
        inlineValue = true;
      }
      if (known(valued, key)) {
        if (!inlineValue) {
          if (i + 1 >= args.size()) throw std::invalid_argument("option --" + key + " needs a value");
          value = args[++i];
        }
        values_[key] = value;
      } else if (known(flags, key) && !inlineValue) {
        values_[key] = "1";
      } else {
        throw std::invalid_argument("unknown option --" + key);
      }
    } else {
      positional_.push_back(a);
    }
  }
}

long long Args::getInt(const std::string& key, long long fallback) const {
  auto it = values_.find(key);
  if (it == values_.end()) return fallback;
  size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(it->second, &used);
  } catch (...) {
    used = 0;
  }
  if (used != it->second.size() || it->second.empty()) throw std::invalid_argument("--" + key + " expects an integer, got '" + it->second + "'");
  return v;
}

std::shared_ptr<const Checkpoint> openOrReport(const std::string& path, Partial partial) {
  auto r = partial == Partial::Open ? openCheckpointPartial(path) : openCheckpoint(path);
  if (!r) {
    std::cerr << "weightscope: " << r.error().describe() << "\n";
    return nullptr;
  }
  const auto& issues = r.value()->issues;
  if (partial == Partial::Open && !issues.empty()) {
    constexpr size_t kShown = 5;
    std::cerr << "weightscope: warning: " << issues.size() << (issues.size() == 1 ? " problem" : " problems") << " opening " << path
              << "; showing what can be read\n";
    for (size_t i = 0; i < std::min(kShown, issues.size()); ++i) std::cerr << "  " << issues[i].describe() << "\n";
    if (issues.size() > kShown) std::cerr << "  ... and " << issues.size() - kShown << " more (weightscope validate lists them all)\n";
  }
  return r.value();
}

const plan::ResidencyRules& residencyRulesOf(const Args& a) { return a.has("runtime") ? plan::residencyRules(a.get("runtime")) : plan::defaultResidencyRules(); }

double peakMultiplierOf(const Args& a) {
  if (!a.has("peak-multiplier")) return 0;
  const std::string text = a.get("peak-multiplier");
  char* end = nullptr;
  const double f = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !std::isfinite(f) || f < 1)
    throw std::invalid_argument("--peak-multiplier '" + text + "' is not a number of at least 1");
  return f;
}

plan::PlacementSpec placementSpecOf(const Args& a, const plan::ResidencyRules& rules) {
  // The runtime's own remainder rule unless --remainder says otherwise.
  auto spec = plan::PlacementSpec::parse(a.get("placement", "linear"), a.get("remainder", plan::remainderName(rules.remainder)));
  if (!spec) throw std::invalid_argument(spec.error().message);
  return spec.value();
}

}  // namespace ws::cli
