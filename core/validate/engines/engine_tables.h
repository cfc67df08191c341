// The serving engines' load-time rules as data (validate --runtime vllm|sglang, plan --runtime):
// one table per concept, each row naming the engine release and the source function it mirrors.
//   - architecture registries (what config.json's `architectures` must name);
//   - quantization kernels by GPU compute capability (refused below a minimum, a named fallback
//     between it and the native kernel's);
//   - what a TP / EP split requires (core/validate/engines/layout_rules.cpp).
// Where an engine's source does not settle a case the row says "unknown", never a guess.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ws::val::engines {

// An engine's model registry at one release. `previously`: architectures it dropped, with the last
// release that had them (vLLM's _PREVIOUSLY_SUPPORTED_MODELS).
struct ArchitectureRegistry {
  std::vector<std::string_view> supported;
  std::vector<std::pair<std::string_view, std::string_view>> previously;
};
const ArchitectureRegistry& vllmArchitectures();    // vllm_architectures.cpp (generated)
const ArchitectureRegistry& sglangArchitectures();  // sglang_architectures.cpp (generated)

// llama.cpp's GGUF architectures at one commit: `general.architecture` names one of them, or
// llama.cpp refuses ("unknown model architecture"); one it names but builds no model for is refused
// too ("unsupported model architecture"). `requiredKeys`: the keys (with "%s" for the architecture)
// its model class requires unconditionally; keysKnown false where the source gave no list.
struct LlamaCppModelRow {
  std::string_view architecture;
  std::string_view source;  // the model class's load_arch_hparams
  bool builds;
  bool keysKnown;
  std::vector<std::string_view> requiredKeys;
};
inline constexpr std::string_view kLlamaCppCommit = "0c1e57098";
const std::vector<LlamaCppModelRow>& llamaCppModels();  // llama_cpp_models.cpp (generated)
const LlamaCppModelRow* findLlamaCppModel(std::string_view architecture);

// The tensors llama.cpp's model class for one GGUF architecture creates, as space-separated GGUF
// names ("blk.%d." for each layer): `required` and `requiredPerLayer` (every layer below n_layer,
// block_count less the nextn layers) with flags 0 and no condition, so a file without one is
// refused ("missing tensor"); `consumed` every name its load_arch_tensors can create, a superset:
// a file tensor outside it and kLlamaCppGenericTensors is never created, and llama.cpp counts that
// against the file ("wrong number of tensors").
struct LlamaCppTensorRow {
  std::string_view architecture;
  std::string_view source;  // the model class's load_arch_tensors
  std::string_view required;
  std::string_view requiredPerLayer;
  std::string_view consumed;
};
extern const std::string_view kLlamaCppGenericTensors;  // every class: the per-tensor scale pass
const std::vector<LlamaCppTensorRow>& llamaCppTensors();  // llama_cpp_tensors.cpp (generated)

// How one engine's model class loads checkpoint tensor names into its parameters (its
// load_weights): the substring renames it applies, in order, what it skips, and where a name it
// cannot place raises or is dropped. The parameter set each family's class builds from its config
// is code (weight_name_rules.cpp), each line cited.
enum class LoaderFamily { Qwen3Moe, Qwen2Moe, Mixtral, DeepseekV2, Glm4Moe, GptOss, Qwen3Next, Qwen3VlMoe, Llama4, DeepseekV4 };
struct StackedRenameRow {
  std::string_view parameter;  // the fused parameter, e.g. "qkv_proj"
  std::string_view shardName;  // the checkpoint's name for one shard, e.g. "q_proj"
  std::string_view shardId;    // the shard id its weight_loader takes
};
// What a loader does with a name it cannot place.
enum class Unplaced { KeyError, Warns, Silent };
// One of a loader's caches of half tensors: a name holding `first` or `second` (and not `skipIf`)
// is that half of the parameter named with `into` in its place; both in, they load together.
struct PairRule {
  std::string_view first, second, into;
  std::string_view firstShard, secondShard;
  std::string_view requiresKey = {};  // a config key that must be present for the cache to be on ("" always on)
  std::string_view skipIf = {};
  // The suffixes the cache takes; a half with another one raises otherSuffixRaises or, where that
  // is empty, goes on down the loader ({} takes any).
  std::vector<std::string_view> suffixes = {};
  std::string_view otherSuffixRaises = {};
  bool onlyWhereFused = false;  // a half whose fused parameter ("<into>.weight") the class lacks goes on down the loader
  Unplaced fusedMissing = Unplaced::Warns;  // a pair whose fused name is no parameter
  // A lone half at the end: "" waits in the cache without a word; else the exception that stops the load.
  std::string_view orphanRaises = {};
};

struct WeightLoaderRow {
  std::string_view engine;                     // "vllm", "sglang"
  std::vector<std::string_view> architectures;
  LoaderFamily family;
  std::string_view source;                     // file and function at the engine's release
  bool autoWeightsLoader;                      // vLLM's AutoWeightsLoader routes model.* to the model's loader, lm_head.* to its head
  std::vector<StackedRenameRow> stacked;       // stacked_params_mapping, in order
  std::string_view expertGate, expertUp, expertDown;  // the checkpoint's names under experts.E.
  std::string_view expertGuard;                // a name holding it skips the stacked renames ...
  bool expertGuardOnlyIfNotParameter;          // ... only when it is not a parameter itself
  std::string_view optionalStacked;            // a fused parameter renamed into only where the class has it
  bool stackedMissingContinues;                // a renamed name that is not a parameter tries the next row (else KeyError)
  bool expertPathDrops;                        // the expert renames drop names with droppedSuffixes too
  std::vector<std::string_view> droppedSuffixes;  // such a name that is not a parameter is skipped, not an error
  std::string_view specLayers;                 // how MTP layers past num_hidden_layers are skipped: "prefix" / "substring" (the
                                               // nextn ones), "past" (any model.layers.K past them); "" none
  Unplaced unplaced = Unplaced::KeyError;      // the last lookup of a name that is not a parameter
  Unplaced expertUnplaced = Unplaced::KeyError;  // an expert rename that is not a parameter
  bool layerRange = false;                     // a name whose first "layers.N." is past num_hidden_layers is skipped (get_layer_id)
  bool mtpNames = false;                       // a name holding "mtp" is skipped (the main model's loader)
  bool everyLayerSparse = false;               // the class builds every layer as MoE, whatever the config's dense layers
  bool headTied = true;                        // tie_word_embeddings shares lm_head with the embedding
  std::string_view unplacedWarning = "Parameter %s not found in params_dict";  // Unplaced::Warns's words
  // Two checkpoint tensors a loader caches until both are there, then loads as one parameter
  // (SGLang's DeepSeek q_a / kv_a, DeepSeek-V4's compressor and wq_a / wkv): PairRule's.
  std::vector<PairRule> pairs = {};
  // SGLang's DeepSeek loader: a name under "<attention>.indexer." is skipped where the class built
  // no indexer for that layer, and wk / weights_proj go into a fused wk_weights_proj where it has
  // one (deepseek_common/deepseek_weight_loader.py:294-296, 354-370).
  bool indexerWhereBuilt = false;
  // vLLM's WeightsMapper (models/utils.py:40-62), applied before anything else: each substring
  // row replaces its first occurrence, then each prefix row (mapperPrefixes), then each suffix
  // row its last, in order.
  std::vector<std::pair<std::string_view, std::string_view>> mapperSubstrings = {}, mapperSuffixes = {};
  // The mapper's prefix rows, between the two: each replaces the name's start where it matches.
  std::vector<std::pair<std::string_view, std::string_view>> mapperPrefixes = {};
  // Substrings whose names are looked up as they are, before the stacked renames: the parameter
  // or a KeyError (gpt-oss's fused expert tensors and attention sinks).
  std::vector<std::string_view> directNames = {};
  // AutoWeightsLoader's skip_prefixes: a name starting with one is skipped before anything else.
  std::vector<std::string_view> skipPrefixes = {};
  // The stacked renames keep the name until a renamed one is a parameter (SGLang's replaced_name):
  // a row that does not place it leaves it as it was for the next.
  bool renameOnlyWhenPlaced = false;
  // AutoWeightsLoader's routing: names under modelPrefix go to the language model's load_weights,
  // headName is the head's one parameter (a multimodal class nests them under language_model.).
  std::string_view modelPrefix = "model.", headName = "lm_head.weight";
  // AutoWeightsLoader's skip_prefixes holds the head where the config ties it: the checkpoint's
  // own head tensor is then skipped.
  bool headSkippedWhenTied = false;
  // Fused expert tensors (all experts in one, no expert index) renamed by substring into the
  // FusedMoE parameter they fill whole; a renamed name that is no parameter does fusedUnplaced.
  std::vector<std::pair<std::string_view, std::string_view>> fusedExperts = {};
  Unplaced fusedUnplaced = Unplaced::KeyError;
  // The first fused expert name switches the expert mapping to the fused one for good: per-expert
  // names after it (in load order) no longer match an expert row.
  bool fusedSticky = false;
  // A vision tower loaded beside the language model: a name starting with one of towerMarkers
  // (holding one, where towerMarkerAnywhere) is the tower's - skipped where towerSkipped (a
  // text-only default), else renamed by towerRenames, then the towerStacked rows or looked up as
  // it is; a miss does towerUnplaced.
  std::vector<std::string_view> towerMarkers = {};
  bool towerMarkerAnywhere = false, towerSkipped = false;
  std::vector<std::pair<std::string_view, std::string_view>> towerRenames = {};
  std::vector<StackedRenameRow> towerStacked = {};
  Unplaced towerUnplaced = Unplaced::KeyError;
  // What the engine says after loading about parameters no tensor filled ("": nothing).
  std::string_view unfilledWarning = {};
};
inline constexpr std::string_view kVllmRelease = "0.11.0";
inline constexpr std::string_view kSglangRelease = "0.5.23";
const std::vector<WeightLoaderRow>& weightLoaderTable();  // weight_loaders.cpp

// One quantization path of one engine: what it needs of the GPU. `method` is the key
// quantMethodOf() gives a checkpoint (the engine's resolved method, e.g. "awq" that vLLM turns
// into awq_marlin where Marlin can run it).
struct QuantKernelRow {
  std::string_view engine;        // "vllm", "sglang"
  std::string_view method;        // quantMethodOf()'s key
  int minCapability;              // below it the engine refuses the checkpoint (0: no minimum known)
  int nativeCapability;           // at or above it the native kernel; between: `fallback` (0: none)
  std::string_view fallback;      // what the engine runs between the two, in its words
  std::string_view refusal;       // the engine's message below the minimum
  std::string_view source;        // file and function at the engine's release
};
// A minimumCapability no GPU reaches: the engine refuses the method on every GPU.
inline constexpr int kRefusedOnEveryGpu = 10000;
const std::vector<QuantKernelRow>& quantKernelTable();
const QuantKernelRow* findQuantKernel(std::string_view engine, std::string_view method);

// The table docs/rules.md shows - which engine runs which path on which GPU generation (refused,
// a fallback, native) - generated from quantKernelTable(); a test keeps the document equal to it.
std::string quantKernelMarkdown();

// A quantization path an engine does not run for MoE (FusedMoE) layers at all.
struct MoeRefusalRow {
  std::string_view engine;
  std::string_view method;
  std::string_view refusal;       // what the engine raises
  std::string_view source;
};
const std::vector<MoeRefusalRow>& moeRefusalTable();

}  // namespace ws::val::engines
