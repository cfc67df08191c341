// CPU reference dequantization of any logical tensor, any row range, any single expert of a
// stacked or fused tensor, without decoding the rest. Output F32 (or BF16 rounded to nearest
// even from the F32 value). Every scheme of the catalog (docs/dequantization.md).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/model/checkpoint.h"
#include "core/numerics/decode_desc.h"
#include "core/numerics/numerics_mode.h"
#include "core/numerics/stats.h"
#include "core/util/error.h"

namespace ws::num {

// Counts the checkpoint bytes a reader touched, so tests can prove what was (not) read.
struct ByteCounter {
  std::atomic<uint64_t> bytes{0};
  void add(uint64_t n) { bytes.fetch_add(n, std::memory_order_relaxed); }
};

// What RowDecoder::extent keeps between calls, one per thread.
struct ExtentScratch {
  // Read the codes (and group scales) with pread instead of through the mapping: a scan of files
  // in the page cache then costs one copy, not the mapping of every 4 KiB page, whose page-table
  // work was most of a warm scan's time (docs/benchmarks.md). The decoders that tell extremes
  // from codes honour it; the others decode through the mapping.
  bool pread = false;
  // One stored tensor's bytes, already read in this pass: validate --values reads a weight's
  // scales for the scale rules just before the weight (scalesOfTensor). A pread inside them is
  // served from here, not read again, and not counted again.
  struct Kept {
    const MappedFile* file = nullptr;
    uint64_t offset = 0;  // in the file
    std::vector<uint8_t> bytes;
  } kept;
  std::vector<float> values;
  std::vector<uint8_t> codes, scales;
  // A chunk's group scales as floats, kept rather than allocated again for every chunk.
  std::vector<float> groupScales;
  // Room for n decoded values, for a run extent() decodes instead.
  float* valuesFor(uint64_t n) {
    if (values.size() < n) values.resize(n);
    return values.data();
  }
};

// Decodes rows of one logical tensor. A row is the last (unpacked) dimension; rows run over all
// leading dimensions, so expert e of an [E, M, N] tensor is rows [e*M, (e+1)*M).
class RowDecoder {
 public:
  virtual ~RowDecoder() = default;
  const std::vector<uint64_t>& shape() const { return shape_; }  // logical, PyTorch order
  // rows() x cols() elements; a tensor with none is 0 x 0 whatever its dimensions.
  uint64_t rows() const { return rows_; }
  uint64_t cols() const { return cols_; }
  // Writes count*cols() floats. Throws CoreError naming the tensor on inconsistent companions.
  virtual void decode(uint64_t firstRow, uint64_t count, float* out) const = 0;
  // Adds to `e` what decode() of the same rows then Extent::add would: counts, NaN and Inf counts,
  // finite extremes - all the value rules ask. This default decodes into scratch.values (grown to
  // count*cols() floats). Schemes whose value is a monotone function of a code under one scale
  // (FP8 E4M3 times its scale, integer codes minus a zero point times theirs) take the extremes of
  // the codes instead and decode only what that cannot tell (a NaN code, a scale whose products
  // are not all finite): the value scan's per-float pass was most of its time (docs/benchmarks.md).
  // Returns how many of the values were told from their codes' extremes.
  virtual uint64_t extent(uint64_t firstRow, uint64_t count, Extent& e, ExtentScratch& scratch) const;
  void setCounter(ByteCounter* c) { counter_ = c; }
  // The same decoding as plain data for the GPU kernels (host pointers into the mapping).
  virtual DecodeDesc describe() const = 0;

 protected:
  void setShape(std::vector<uint64_t> s);
  void count(uint64_t n) const {
    if (counter_) counter_->add(n);
  }
  std::vector<uint64_t> shape_;
  uint64_t rows_ = 1, cols_ = 1;
  ByteCounter* counter_ = nullptr;
};

// Builds the decoder for logical tensor `logical` of the checkpoint (which must outlive it).
Result<std::unique_ptr<RowDecoder>> makeDecoder(const Checkpoint& c, uint32_t logical);

// The decoder of `logical` built from the headers alone: its shape and describe() are right, but
// its bytes may not be there yet (a remote checkpoint before its fetch), so it is for layout
// questions (row_footprint.h), never for decode().
Result<std::unique_ptr<RowDecoder>> makeLayoutDecoder(const Checkpoint& c, uint32_t logical);

// The logical shape a decoder of `logical` would have (its companions checked), without reading
// any of its bytes: what the shape rules need, remote checkpoints included.
Result<std::vector<uint64_t>> decodedShape(const Checkpoint& c, uint32_t logical);

// A stored companion tensor (bias, scale, zero point, weight_shape) read as the plain numbers it
// holds, for when a user names it rather than its weight. Fails, naming it, for block types.
Result<std::unique_ptr<RowDecoder>> makeStoredDecoder(const Checkpoint& c, const TensorRecord& t);

// Finds the logical tensor by a stored tensor name or a logical name.
Result<uint32_t> findLogical(const Checkpoint& c, const std::string& name);

struct DequantRequest {
  uint32_t logical = 0;
  int64_t expert = -1;         // select expert e of a stacked/fused tensor (dim 0)
  uint64_t rowBegin = 0;       // rows within the selection (after the expert)
  uint64_t rowEnd = UINT64_MAX;
  Numerics numerics = Numerics::Reference;  // whose arithmetic (numerics_mode.h)
};

// The rows a request selects: decoder rows [firstRow, firstRow + rows) and the output shape.
struct Selection {
  uint64_t firstRow = 0, rows = 0;
  std::vector<uint64_t> shape;
};
// Throws CoreError(Usage) naming the tensor when the expert or rows are out of range.
Selection selectRows(const RowDecoder& d, const DequantRequest& req, const std::string& name);

struct DequantOutput {
  std::vector<uint64_t> shape;  // of the selection
  std::vector<float> values;
  uint64_t bytesRead = 0;
};

Result<DequantOutput> dequantize(const Checkpoint& c, const DequantRequest& req);

}  // namespace ws::num
