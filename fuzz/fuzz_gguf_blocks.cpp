// Every GGUF block decoder over arbitrary block bytes (the first input byte picks the ggml type):
// no read outside the blocks and no undefined behaviour on any bytes at all, not only on the ones
// a quantizer writes. The CPU path and the kernels' per-block path must also agree - but both call
// the same block formulas, so that proves the descriptor and the block indexing, not the
// arithmetic (which ggml's and gguf-py's outputs check: tst_dequant, tst_decode_desc,
// reference_dequant.py).
#include <vector>

#include "core/model/dtype.h"
#include "core/numerics/decode_element.h"
#include "core/numerics/float_formats.h"
#include "core/numerics/gguf_blocks.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const ws::DType* t = ws::dtypeFromGgml(data[0] % 48);
  if (!t || !t->isBlockQuant() || !ws::num::ggufBlockTypeSupported(*t)) return 0;
  const uint64_t nblocks = (size - 1) / t->blockBytes;
  if (nblocks == 0) return 0;
  // A copy of exactly the blocks, so reading one byte past them is an ASan report.
  std::vector<uint8_t> blocks(data + 1, data + 1 + nblocks * t->blockBytes);
  std::vector<float> cpu(nblocks * t->blockElems);
  ws::num::dequantizeGgufBlocks(*t, blocks.data(), nblocks, cpu.data());

  ws::num::DecodeDesc d;
  d.kind = ws::num::DescKind::GgufBlocks;
  d.ggmlId = t->ggmlId;
  d.blockElems = t->blockElems;
  d.blockBytes = t->blockBytes;
  d.w.data = blocks.data();
  d.w.bytes = blocks.size();
  std::vector<float> y(t->blockElems);
  for (uint64_t b = 0; b < nblocks; ++b) {
    ws::num::decodeGgufBlock(d, b, y.data());
    for (uint32_t k = 0; k < t->blockElems; ++k)
      wsfuzz::require(ws::num::sameBitsOrNan(y[k], cpu[b * t->blockElems + k]), "kernel formula equals the CPU decoder");
  }
  return 0;
}
