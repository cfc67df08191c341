#include "core/formats/safetensors.h"

#include <algorithm>
#include <cstring>
#include <unordered_set>

#include <nlohmann/json.hpp>
#if WEIGHTSCOPE_HAVE_SIMDJSON
#include <simdjson.h>
#endif

#include "core/formats/gguf.h"
#include "core/formats/utf8.h"
#include "core/util/checked.h"
#include "core/util/error.h"

namespace ws {

namespace {

// A SAX handler that builds tensor entries straight from the token stream: no DOM, duplicate
// names detected (the spec forbids them; a DOM would silently keep the last one), structure
// depth bounded by construction.
class HeaderSax {
 public:
  explicit HeaderSax(SafetensorsHeader& out) : out_(out) {}

  std::string problem;  // set when the handler stopped the parse

  bool null() {
    // "__metadata__": null (MLX writes it) is no metadata, as the reference reader's
    // Option<HashMap> reads it.
    if (!skip_ && state_ == State::ExpectMetadata) {
      state_ = State::Top;
      return true;
    }
    return scalar("null");
  }
  bool boolean(bool) { return scalar("a boolean"); }
  bool number_integer(int64_t v) {
    if (skip_) return true;
    if (state_ == State::InTensor && !knownField()) return true;  // an unknown field: ignored, like serde does
    if (v < 0) return stop("negative number in '" + field_ + "'");
    return number_unsigned(static_cast<uint64_t>(v));
  }
  bool number_unsigned(uint64_t v) {
    if (skip_) return true;
    if (state_ == State::InShape) { cur_.shape.push_back(v); return true; }
    if (state_ == State::InOffsets) {
      if (offsetCount_ == 0) cur_.begin = v;
      else if (offsetCount_ == 1) cur_.end = v;
      ++offsetCount_;
      return true;
    }
    return scalar("a number");
  }
  bool number_float(double, const std::string&) {
    if (skip_) return true;
    if (state_ == State::InTensor && !knownField()) return true;  // an unknown field: ignored
    return stop("non-integer number in '" + field_ + "'");
  }
  bool string(std::string& s) {
    if (skip_) return true;
    if (state_ == State::InMetadata) {
      out_.metadata[metaKey_] = s;
      return true;
    }
    if (state_ == State::InTensor && field_ == "dtype") {
      cur_.dtype = dtypeFromSafetensors(s);
      if (!cur_.dtype) {
        unknownDtype_ = s;
        return stop("unknown dtype '" + s + "'");
      }
      haveDtype_ = true;
      return true;
    }
    return scalar("a string");
  }
  bool binary(nlohmann::json::binary_t&) { return stop("binary value"); }

  bool start_object(std::size_t) {
    if (skip_) { ++skip_; return true; }
    switch (state_) {
      case State::Start: state_ = State::Top; return true;
      case State::ExpectTensor:
        cur_ = SafetensorsTensor{};
        cur_.name = name_;
        haveDtype_ = haveShape_ = haveOffsets_ = false;
        fieldsSeen_.clear();
        state_ = State::InTensor;
        return true;
      case State::ExpectMetadata: state_ = State::InMetadata; return true;
      case State::InTensor:  // an unknown field whose value is an object: ignored, like serde does
        if (!knownField()) { skip_ = 1; return true; }
        return stop("'" + field_ + "' must not be an object");
      default: return stop("unexpected object");
    }
  }
  bool end_object() {
    if (skip_) { --skip_; return true; }
    switch (state_) {
      case State::InTensor:
        if (!haveDtype_ || !haveShape_ || !haveOffsets_)
          return stop(std::string("missing field '") + (!haveDtype_ ? "dtype" : !haveShape_ ? "shape" : "data_offsets") + "'");
        out_.tensors.push_back(std::move(cur_));
        state_ = State::Top;
        return true;
      case State::InMetadata: state_ = State::Top; return true;
      case State::Top: state_ = State::Done; return true;
      default: return stop("unexpected end of object");
    }
  }
  bool key(std::string& k) {
    if (skip_) return true;
    if (state_ == State::Top) {
      if (k == "__metadata__") {
        if (sawMetadata_) return stop("duplicate '__metadata__'");
        sawMetadata_ = true;
        state_ = State::ExpectMetadata;
        return true;
      }
      if (!names_.insert(k).second) {
        duplicate_ = k;
        return stop("tensor name appears twice");
      }
      name_ = k;
      state_ = State::ExpectTensor;
      return true;
    }
    if (state_ == State::InTensor) {
      // serde refuses a known field given twice and ignores unknown ones, repeated or not.
      field_ = k;
      if (knownField() && !fieldsSeen_.insert(k).second) return stop("field '" + k + "' appears twice");
      return true;
    }
    if (state_ == State::InMetadata) {
      // __metadata__ is a HashMap<String, String> to the reference reader: a repeated key is
      // inserted again, and the last value stands.
      metaKey_ = k;
      return true;
    }
    return stop("unexpected key");
  }
  bool start_array(std::size_t) {
    if (skip_) { ++skip_; return true; }
    if (state_ == State::InTensor && field_ == "shape") { state_ = State::InShape; return true; }
    if (state_ == State::InTensor && field_ == "data_offsets") {
      offsetCount_ = 0;
      state_ = State::InOffsets;
      return true;
    }
    if (state_ == State::InTensor && !knownField()) { skip_ = 1; return true; }
    return stop("unexpected array");
  }
  bool end_array() {
    if (skip_) { --skip_; return true; }
    if (state_ == State::InShape) { haveShape_ = true; state_ = State::InTensor; return true; }
    if (state_ == State::InOffsets) {
      if (offsetCount_ != 2) return stop("data_offsets must hold exactly two numbers");
      haveOffsets_ = true;
      state_ = State::InTensor;
      return true;
    }
    return stop("unexpected end of array");
  }
  bool parse_error(std::size_t pos, const std::string&, const nlohmann::detail::exception& ex) {
    if (problem.empty()) problem = ex.what();
    errorPos_ = pos;
    return false;
  }

  const std::string& culprit() const { return cur_.name; }
  // Byte index within the header of a syntax error (nlohmann counts characters read, the bad one
  // included); 0 when the handler stopped on a semantic problem.
  std::size_t errorIndex() const { return errorPos_ > 0 ? errorPos_ - 1 : 0; }
  bool inTensor() const { return state_ == State::InTensor || state_ == State::InShape || state_ == State::InOffsets || state_ == State::ExpectTensor; }
  const std::string& duplicate() const { return duplicate_; }
  const std::string& unknownDtype() const { return unknownDtype_; }
  const std::string& pendingName() const { return name_; }

 private:
  enum class State { Start, Top, ExpectTensor, InTensor, InShape, InOffsets, ExpectMetadata, InMetadata, Done };

  bool knownField() const { return field_ == "dtype" || field_ == "shape" || field_ == "data_offsets"; }
  bool scalar(const char* what) {
    if (skip_) return true;
    if (state_ == State::InTensor && !knownField()) return true;  // unknown scalar field: ignored
    if (state_ == State::InMetadata) return stop("__metadata__ value for '" + metaKey_ + "' is not a string");
    return stop(std::string("unexpected ") + what + (field_.empty() ? "" : " in '" + field_ + "'"));
  }
  bool stop(std::string why) {
    problem = std::move(why);
    return false;
  }

  SafetensorsHeader& out_;
  State state_ = State::Start;
  SafetensorsTensor cur_;
  std::string name_, field_, metaKey_, duplicate_, unknownDtype_;
  std::unordered_set<std::string> names_, fieldsSeen_;
  bool haveDtype_ = false, haveShape_ = false, haveOffsets_ = false, sawMetadata_ = false;
  int offsetCount_ = 0;
  int skip_ = 0;
  std::size_t errorPos_ = 0;
};

SafetensorsHeader checkTensors(SafetensorsHeader h, std::span<const uint8_t> file, const std::string& path, DataExtent extent);

// The fast path: simdjson over a header that is valid, which nearly all are. It accepts exactly
// what HeaderSax accepts and returns false at anything else - a syntax error, a missing field, a
// duplicate, an unknown dtype - so the slow path can name the problem with its byte offset.
#if WEIGHTSCOPE_HAVE_SIMDJSON
bool parseHeaderFast(const char* json, uint64_t n, SafetensorsHeader& h) {
  thread_local simdjson::dom::parser parser;  // one per header-parsing thread, reused across shards
  simdjson::dom::object top;
  if (parser.parse(json, size_t(n), true).get_object().get(top)) return false;
  std::unordered_set<std::string_view> names;
  names.reserve(top.size());
  for (auto field : top) {
    if (!names.insert(field.key).second) return false;
    if (field.key == "__metadata__") {
      if (field.value.is_null()) continue;  // no metadata, as the SAX path reads it
      simdjson::dom::object md;
      if (field.value.get_object().get(md)) return false;
      for (auto kv : md) {
        std::string_view v;
        if (kv.value.get_string().get(v)) return false;
        h.metadata[std::string(kv.key)] = std::string(v);
      }
      continue;
    }
    simdjson::dom::object info;
    if (field.value.get_object().get(info)) return false;
    SafetensorsTensor t;
    bool dtype = false, shape = false, offsets = false;
    for (auto f : info) {
      if (f.key == "dtype") {
        std::string_view d;
        if (dtype || f.value.get_string().get(d) || !(t.dtype = dtypeFromSafetensors(d))) return false;
        dtype = true;
      } else if (f.key == "shape") {
        simdjson::dom::array a;
        if (shape || f.value.get_array().get(a)) return false;
        for (auto e : a) {
          uint64_t v;
          if (e.get_uint64().get(v)) return false;
          t.shape.push_back(v);
        }
        shape = true;
      } else if (f.key == "data_offsets") {
        simdjson::dom::array a;
        if (offsets || f.value.get_array().get(a) || a.size() != 2) return false;
        if (a.at(0).get_uint64().get(t.begin) || a.at(1).get_uint64().get(t.end)) return false;
        offsets = true;
      }  // other fields are ignored, as the reference reader ignores them
    }
    if (!dtype || !shape || !offsets) return false;
    t.name = std::string(field.key);
    h.tensors.push_back(std::move(t));
  }
  return true;
}
#else
// Built without simdjson: every header takes the reference-order parser.
bool parseHeaderFast(const char*, uint64_t, SafetensorsHeader&) { return false; }
#endif

}  // namespace

SafetensorsHeader parseSafetensors(std::span<const uint8_t> file, const std::string& path, HeaderParser parser, DataExtent extent) {
  SafetensorsHeader h;
  if (file.size() < 8)
    fail(ErrorCode::HeaderTooSmall, "file is " + std::to_string(file.size()) + " bytes, shorter than the 8-byte header length",
         path, 0);
  // A GGUF file under a .safetensors name would otherwise read as a "header length" of 3.6 EB.
  if (looksLikeGguf(file)) fail(ErrorCode::FormatMismatch, "starts with the GGUF magic: this is a GGUF file, not safetensors", path, 0);
  uint64_t n;
  std::memcpy(&n, file.data(), 8);
  if (n > kSafetensorsMaxHeader)
    fail(ErrorCode::HeaderTooLarge, "header length " + std::to_string(n) + " exceeds the 100 MB limit", path, 0);
  if (n + 8 > file.size())
    fail(ErrorCode::InvalidHeaderLength,
         "header length " + std::to_string(n) + " runs past the end of the " + std::to_string(file.size()) + "-byte file", path, 0);
  h.headerLength = n;
  h.dataStart = 8 + n;

  const char* json = reinterpret_cast<const char*>(file.data() + 8);
  if (parser == HeaderParser::Auto && parseHeaderFast(json, n, h)) return checkTensors(std::move(h), file, path, extent);
  h.tensors.clear();
  h.metadata.clear();
  if (!isValidUtf8(std::string_view(json, n)))
    fail(ErrorCode::InvalidHeaderUtf8, "header is not valid UTF-8", path, 8 + firstInvalidUtf8(std::string_view(json, n)));

  HeaderSax sax(h);
  bool ok = nlohmann::json::sax_parse(json, json + n, &sax, nlohmann::json::input_format_t::json, true);
  if (!ok) {
    if (!sax.duplicate().empty())
      fail(ErrorCode::DuplicateTensor, "tensor name appears twice in the header", path, std::nullopt, sax.duplicate());
    if (!sax.unknownDtype().empty())
      fail(ErrorCode::UnknownDtype, "unknown dtype '" + sax.unknownDtype() + "'", path, std::nullopt, sax.pendingName());
    fail(ErrorCode::InvalidHeaderJson, "header is not a valid safetensors header: " + sax.problem, path, 8 + std::min<uint64_t>(sax.errorIndex(), n),
         sax.inTensor() ? sax.pendingName() : std::string{});
  }
  // Valid JSON the fast path refused is rare but possible (an escape it reads differently would
  // be a bug we want to hear about, not to hide): the slow path's result stands.
  return checkTensors(std::move(h), file, path, extent);
}

namespace {

// The reference reader's checks on the parsed tensors, in its order.
SafetensorsHeader checkTensors(SafetensorsHeader h, std::span<const uint8_t> file, const std::string& path, DataExtent extent) {
  // The reference reader validates in offset order, so key order in the JSON does not matter.
  std::stable_sort(h.tensors.begin(), h.tensors.end(), [](const SafetensorsTensor& a, const SafetensorsTensor& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  uint64_t start = 0;
  for (const auto& t : h.tensors) {
    if (t.begin != start || t.end < t.begin)
      fail(ErrorCode::InvalidOffset,
           "data_offsets [" + std::to_string(t.begin) + ", " + std::to_string(t.end) + "] do not start where the previous tensor ends (" +
               std::to_string(start) + ")",
           path, h.dataStart + t.begin, t.name);
    auto elements = checkedProduct(t.shape);
    if (!elements) fail(ErrorCode::ValidationOverflow, "shape product overflows 64 bits", path, std::nullopt, t.name);
    auto bits = checkedMul(*elements, uint64_t(t.dtype->blockBytes) * 8);
    if (!bits) fail(ErrorCode::ValidationOverflow, "bit size overflows 64 bits", path, std::nullopt, t.name);
    auto bytes = t.dtype->bytesFor(*elements);
    if (!bytes)
      fail(ErrorCode::MisalignedSlice,
           std::to_string(*elements) + " elements of " + std::string(t.dtype->name) + " are not a whole number of bytes", path,
           std::nullopt, t.name);
    if (t.end - t.begin != *bytes)
      fail(ErrorCode::TensorInvalidInfo,
           "holds " + std::to_string(t.end - t.begin) + " bytes but " + std::to_string(*elements) + " elements of " +
               std::string(t.dtype->name) + " need " + std::to_string(*bytes),
           path, h.dataStart + t.begin, t.name);
    start = t.end;
  }
  auto expected = checkedAdd(start, h.dataStart);
  if (!expected || *expected != file.size()) {
    const bool truncated = !expected || *expected > file.size();
    // Truncated: name the first tensor whose bytes are not all there.
    std::string cut;
    for (const auto& t : h.tensors)
      if (truncated && h.dataStart + t.end > file.size()) {
        cut = t.name;
        break;
      }
    Error e{ErrorCode::MetadataIncompleteBuffer,
            "tensors end at byte " + std::to_string(start + h.dataStart) + " but the file has " + std::to_string(file.size()) + " bytes" +
                (truncated ? " (truncated)" : " (trailing bytes)"),
            path, truncated ? std::max<uint64_t>(file.size(), h.dataStart) : start + h.dataStart, cut};
    if (extent == DataExtent::Exact) throw CoreError(e);
    h.extentProblem = std::move(e);
  }
  return h;
}

}  // namespace

SafetensorsHeader parseSafetensors(const MappedFile& file, HeaderParser parser, DataExtent extent) {
  uint64_t n = 0;
  if (file.size() >= 8) {
    file.readAt(0, &n, 8);  // pread: the kernel reads ahead a few pages, not the mapping's window
    file.willNeed(0, std::min(n, kSafetensorsMaxHeader) + 8);  // a lying length is refused below
  }
  return parseSafetensors(file.bytes(), file.path(), parser, extent);
}

}  // namespace ws
