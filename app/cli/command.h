// The CLI is a registry of small commands, each owning its options (the RenderDoc renderdoccmd
// pattern). Exit codes: 0 success, 1 the command ran and found problems, 2 could not run.
#pragma once

#include <map>

#include "core/model/checkpoint.h"
#include "core/plan/placement.h"
#include "core/plan/residency_rules.h"
#include <memory>
#include <string>
#include <vector>

namespace ws::cli {

constexpr int kExitOk = 0;
constexpr int kExitFindings = 1;
constexpr int kExitCannotRun = 2;

class Command {
 public:
  virtual ~Command() = default;
  virtual std::string name() const = 0;
  virtual std::string summary() const = 0;
  virtual std::string usage() const = 0;  // full help text
  virtual int run(const std::vector<std::string>& args) = 0;
};

class CommandRegistry {
 public:
  void add(std::unique_ptr<Command> c) { commands_[c->name()] = std::move(c); }
  Command* find(const std::string& name) const {
    auto it = commands_.find(name);
    return it == commands_.end() ? nullptr : it->second.get();
  }
  const std::map<std::string, std::unique_ptr<Command>>& all() const { return commands_; }

 private:
  std::map<std::string, std::unique_ptr<Command>> commands_;
};

// Parsed arguments: --flag, --key value / --key=value, and positionals.
class Args {
 public:
  // `valued` lists the options that take a value; anything else starting with -- is a flag.
  // Throws std::invalid_argument with a message on an unknown option or a missing value.
  Args(const std::vector<std::string>& args, const std::vector<std::string>& valued, const std::vector<std::string>& flags);
  bool has(const std::string& key) const { return values_.count(key) > 0; }
  std::string get(const std::string& key, const std::string& fallback = {}) const {
    auto it = values_.find(key);
    return it == values_.end() ? fallback : it->second;
  }
  long long getInt(const std::string& key, long long fallback) const;
  const std::vector<std::string>& positional() const { return positional_; }
  // A copy with `key` set to `value` (plan --fit over several --gpu-mem devices, one at a time).
  Args with(const std::string& key, const std::string& value) const {
    Args copy = *this;
    copy.values_[key] = value;
    return copy;
  }

 private:
  std::map<std::string, std::string> values_;
  std::vector<std::string> positional_;
};

// What a command does with a damaged or incomplete checkpoint (a cut file, a missing part).
enum class Partial {
  Refuse,  // plan, load, diff: an answer about part of a checkpoint would pass for the whole
  Open,    // inspect, dequant, stats, scales: show what is there; the problems go to stderr
};

// Opens a checkpoint, or prints the error (file, offset, tensor) and returns null.
std::shared_ptr<const Checkpoint> openOrReport(const std::string& path, Partial partial = Partial::Refuse);
// --placement and --remainder, the same words for plan, load and validate --full-load; throws
// std::invalid_argument (exit 2) naming the bad word.
// --runtime NAME for plan and load: whose residency rules (core/plan/residency_rules.h); vLLM's by default.
const plan::ResidencyRules& residencyRulesOf(const Args& a);
// --peak-multiplier F for plan and load: the load peak over resident bytes (the seed's
// peak_memory_multiplier override); 0 (by scheme) when absent. Throws std::invalid_argument (exit 2)
// unless F is a finite number of at least 1 - a peak below the resident bytes is not a peak.
double peakMultiplierOf(const Args& a);
// --placement and --remainder (the runtime's remainder rule when --remainder is not given).
plan::PlacementSpec placementSpecOf(const Args& a, const plan::ResidencyRules& rules);

void registerInspect(CommandRegistry& r);
void registerMeta(CommandRegistry& r);
void registerSynth(CommandRegistry& r);
void registerNumerics(CommandRegistry& r);
void registerPlan(CommandRegistry& r);
void registerValidate(CommandRegistry& r);
void registerLoad(CommandRegistry& r);
void registerDiff(CommandRegistry& r);

}  // namespace ws::cli
