// A torch.save file's bytes (the expert-distribution recorder's .pt, --init-expert-location) into
// its logical_count tensor: an error, or a view whose every element lies inside its storage.
#include <vector>

#include "core/formats/torch_save.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::vector<uint8_t> bytes(data, data + size);
  auto t = ws::parseTorchSavedTensor(bytes, "logical_count", "fuzz.pt");
  if (!t) return 0;
  const ws::TorchTensor& tensor = t.value();
  wsfuzz::require(tensor.shape.size() == tensor.stride.size(), "size and stride of one rank");
  bool empty = false;
  std::vector<int64_t> first(tensor.shape.size(), 0), last(tensor.shape.size(), 0);
  for (size_t k = 0; k < tensor.shape.size(); ++k) {
    empty = empty || tensor.shape[k] == 0;
    last[k] = tensor.shape[k] - 1;
  }
  if (!empty) {  // both corners read inside the storage (ASan reports a read past it)
    (void)tensor.integerAt(first);
    (void)tensor.integerAt(last);
  }
  return 0;
}
