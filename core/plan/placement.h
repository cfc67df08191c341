// Expert-parallel placement: which physical expert slots each rank holds, and which logical
// expert each slot carries (formats.md 9: vLLM linear with the remainder first, older vLLM and the
// seed runtime with the remainder last, SGLang strict; round-robin; explicit EPLB maps).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/util/error.h"

namespace ws::plan {

enum class PlacementKind { Linear, RoundRobin, Map };
enum class Remainder { First, Last, Strict };

struct Placement {
  PlacementKind kind = PlacementKind::Linear;
  Remainder remainder = Remainder::First;
  int epSize = 1;
  int64_t logicalExperts = 0;
  // physicalToLogical[layer or 0][slot]; one row applies to every MoE layer.
  std::vector<std::vector<int64_t>> physicalToLogical;
  std::string source;  // "linear", "round-robin", a map file, "trivial:P"

  int64_t physicalExperts() const;
  // Physical slots rank r holds (ascending), for MoE layer `layerRow` of the map.
  std::vector<int64_t> slotsOf(int rank) const;
  // Logical experts rank r holds in `layerRow` (one entry per slot; replicas may repeat).
  std::vector<int64_t> logicalOf(int rank, size_t layerRow = 0) const;
  size_t layerRows() const { return physicalToLogical.size(); }
};

// Builds a placement; Strict refuses counts that do not divide (Usage error saying so).
Result<Placement> makePlacement(PlacementKind kind, Remainder rem, int epSize, int64_t logicalExperts);
// "trivial:P": P physical slots carrying arange(P) % L, placed linearly.
Result<Placement> trivialMap(int64_t physical, Remainder rem, int epSize, int64_t logicalExperts);
// A JSON map file: {"physical_to_logical": [l0, l1, ...]} or [[...layer 0...], [...layer 1...]].
Result<Placement> loadMap(const std::string& path, Remainder rem, int epSize, int64_t logicalExperts);

// What the user asked for, before the expert count is known: parsed once from the words every
// front end uses (`--placement linear|round-robin|trivial:P|MAP.json`, `--remainder
// first|last|strict`, the EP Ranks and Full Load tabs) and built for a checkpoint by build().
struct PlacementSpec {
  PlacementKind kind = PlacementKind::Linear;
  Remainder remainder = Remainder::First;
  std::string mapFile;        // PlacementKind::Map: an EPLB map file
  int64_t trivialSlots = 0;   // "trivial:P": P physical slots carrying arange(P) % L

  // Usage error naming the bad word.
  static Result<PlacementSpec> parse(const std::string& placement, const std::string& remainder = "first");
  Result<Placement> build(int epSize, int64_t logicalExperts) const;
};

// The words of the options, for help texts and combo boxes.
const char* remainderName(Remainder r);
Result<Remainder> parseRemainder(const std::string& s);

}  // namespace ws::plan
