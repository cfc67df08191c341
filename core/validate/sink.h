// Where the rules write their findings: filtered by the selected rules, with a runtime rule's
// severity set by the runtime the run targets (validate --runtime).
#pragma once

#include <mutex>
#include <string>
#include <vector>

#include "core/validate/rules.h"
#include "core/validate/validator.h"

namespace ws::val {

struct Sink {
  const ValidateOptions& opt;
  std::vector<Finding>& out;
  std::mutex* mu = nullptr;
  void add(Finding f) {
    if (!ruleEnabled(opt, f.code)) return;
    // A runtime's refusal is an error when the checkpoint is meant for that runtime; otherwise
    // the rule's own severity says which runtime would refuse what.
    const RuleInfo& r = rule(f.code);
    if (r.runtime && opt.runtime == r.runtime) f.severity = Severity::Error;
    if (mu) {
      std::lock_guard lock(*mu);
      out.push_back(std::move(f));
    } else {
      out.push_back(std::move(f));
    }
  }
  void add(const std::string& code, std::string message, std::string tensor = {}, std::string file = {}) {
    add(makeFinding(code, std::move(message), std::move(tensor), std::move(file)));
  }
};

// One problem found on many tensors: reported once, on the first, with the count and the first
// three names (as the KTransformers loader previews missing keys).
class FindingGroup {
 public:
  void add(const std::string& tensor) {
    if (names_.size() < 3) names_.push_back(tensor);
    ++count_;
  }
  void report(Sink& sink, const char* code, const std::string& what) const {
    if (!count_) return;
    std::string list;
    for (const auto& n : names_) list += (list.empty() ? "" : ", ") + n;
    sink.add(code, std::to_string(count_) + " " + what + ": " + list + (count_ > names_.size() ? " ..." : ""), names_.front());
  }

 private:
  std::vector<std::string> names_;
  size_t count_ = 0;
};

}  // namespace ws::val
