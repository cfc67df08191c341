// The open checkpoint: its files, every stored tensor, the logical tensors they form, and the
// model description. Built once by openCheckpoint() and then read-only; share it by shared_ptr.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/io/mapped_file.h"
#include "core/io/remote_source.h"
#include "core/model/adapter_info.h"
#include "core/model/metadata.h"
#include "core/model/model_description.h"
#include "core/model/scheme_table.h"
#include "core/model/tensor_record.h"
#include "core/util/error.h"

namespace ws {

struct SourceFile {
  std::string path;
  std::string format;        // "safetensors" or "gguf"
  uint64_t size = 0;
  uint64_t dataStart = 0;    // absolute offset of the data section
  std::shared_ptr<const MappedFile> map;
};

// A weight with its companions (scales, global scale, zero points, packed shape, bias).
struct LogicalTensor {
  std::string name;
  Scheme scheme = Scheme::Plain;   // its row in the scheme table (core/model/scheme_table.h)
  std::string schemeName;          // as reports show it: "bf16", "fp8-block", "nvfp4", "gguf-q4_k", ...
  int32_t weight = -1;             // index of the Weight member in Checkpoint::tensors, -1 if none
  std::vector<uint32_t> members;   // every stored tensor of this logical tensor
  uint64_t parameters = 0;         // logical elements of weight and bias (packed codes unpacked)
  uint64_t bytes = 0;              // bytes of all members
  uint64_t scaleBytes = 0;         // bytes of the scale-like members
};

// A checkpoint saved already split per rank (vLLM's sharded state, the seed runtime's
// prepartitioned_tp): each rank loads only its own files. The catalog holds rank 0's tensors.
struct RankShard {
  int rank = 0;
  std::vector<std::string> files;
  uint64_t tensors = 0, bytes = 0;  // that rank's tensor count and tensor bytes
};
struct Prepartitioned {
  std::string layout;  // "vllm-sharded-state": NAME-rank-R-part-P.safetensors
  std::vector<RankShard> ranks;  // by rank
};

struct Checkpoint {
  std::string root;                // the path the user opened
  std::string format;              // "safetensors", "gguf", "ktransformers"
  std::vector<SourceFile> files;
  std::vector<TensorRecord> tensors;   // natural name order
  std::vector<LogicalTensor> logical;
  ModelDescription model;
  std::map<std::string, std::string> metadata;  // safetensors __metadata__ / selected GGUF KV
  std::vector<MetaEntry> meta;                  // every metadata entry of every file, typed, in file order
  std::vector<std::string> notes;               // things worth knowing that are not errors
  // Problems found while opening that did not stop it: index/shard disagreements always, and in
  // tolerant mode (for validation) also files that could not be read, each with file, offset and
  // tensor. A file in error contributes no tensors.
  std::vector<Error> issues;
  // Valid files that a major runtime refuses (GGUF offsets that are not canonical), each naming
  // the file, offset and tensor; validation reports them as compatibility warnings.
  std::vector<Error> runtimeConcerns;
  // Tensors the index maps to shards that are missing or could not be read: they exist in the
  // checkpoint, the catalog just cannot show them (validation must not call them missing).
  std::vector<std::string> unreadable;
  bool incomplete = false;  // some file could not be read
  std::optional<Prepartitioned> prepartitioned;
  std::optional<AdapterInfo> adapter;  // a LoRA adapter: its adapter_config.json (docs/adapters.md)
  // Set when the checkpoint was opened from a URL: `files` are then its local mirror's, holding
  // what was fetched; tensor bytes must be fetched (remote->ensure) before they are read.
  std::shared_ptr<RemoteSource> remote;
  // compressed-tensors weight_shape values by tensor index, read once at open on all cores (one
  // pread each: Kimi-K2 has 69k of them), for the scheme, the decoders and the validator.
  std::unordered_map<uint32_t, std::vector<int64_t>> weightShapes;

  // True when a member's bytes are not all in its file (TensorRecord::cut).
  bool isCut(const LogicalTensor& l) const;

  uint64_t totalBytes() const;
  uint64_t totalParameters() const;
  const TensorRecord* find(const std::string& name) const;
  // The metadata entry (GGUF key) named `key`, or nullptr.
  const MetaEntry* findMeta(const std::string& key) const;
};

}  // namespace ws
