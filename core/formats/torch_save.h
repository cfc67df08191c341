// A tensor from a file torch.save wrote (the zip format of torch 1.6 and later): the object is
// unpickled (protocol 2, as torch.save writes it) as far as a tensor, or a dict holding tensors,
// needs - dicts, tuples, lists, strings, numbers, None, booleans, _rebuild_tensor_v2 and its
// storages - and anything else is refused naming the opcode and its offset. Written for the
// expert-distribution recorder's files that SGLang (and KTransformers' fork) read as
// --init-expert-location: dict(rank=..., logical_count=<int32 [buffer, layers, experts]>, ...)
// (sglang/srt/eplb/expert_distribution.py dump / _dump_to_file). No code in the file is run: a
// GLOBAL is kept as a name, and only torch's tensor rebuild and OrderedDict are understood.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/util/error.h"

namespace ws {

struct TorchTensor {
  std::string storageType;        // "IntStorage", "LongStorage" ...
  std::vector<int64_t> shape, stride;
  int64_t storageOffset = 0;      // in elements
  std::vector<uint8_t> storage;   // the storage's bytes, little-endian
  // Element i (row-major over shape) as an integer: Int and Long storages.
  int64_t integerAt(const std::vector<int64_t>& index) const;
};

// The tensor under `key` of the saved dict, or the saved object itself where `key` is empty.
// Fails naming the file and what is wrong (not a zip, a compressed or zip64 entry, a pickle opcode
// not read, no such key, a storage type other than Int / Long, a storage shorter than the view).
Result<TorchTensor> readTorchSavedTensor(const std::string& path, const std::string& key);
// The same from the file's bytes; `path` only names it in errors.
Result<TorchTensor> parseTorchSavedTensor(const std::vector<uint8_t>& bytes, const std::string& key, const std::string& path);

}  // namespace ws
