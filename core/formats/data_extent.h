// How a parser treats a file whose data section does not end where its header says it does.
#pragma once

namespace ws {

enum class DataExtent {
  // The reference readers' rule: refuse the file. Strict opening (plan, load, diff) uses it.
  Exact,
  // Keep the catalog and report the mismatch: a partial download or a header-only copy still
  // shows what it holds, and the tensors whose bytes are present can still be read. Tensors that
  // run past the end are cut (TensorRecord::cut). Tolerant opening uses it.
  Partial,
};

}  // namespace ws
