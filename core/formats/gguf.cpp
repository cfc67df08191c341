#include "core/formats/gguf.h"

#include <unordered_set>

#include "core/io/bounded_reader.h"
#include "core/util/checked.h"
#include "core/util/error.h"

namespace ws {

namespace {

constexpr uint64_t kMaxString = 1ull << 30;  // ggml's GGUF_MAX_STRING_LENGTH
constexpr uint64_t kMaxArray = 1ull << 30;   // ggml's GGUF_MAX_ARRAY_ELEMENTS
constexpr int kMaxDims = 4;

int scalarSize(GgufType t) {
  switch (t) {
    case GgufType::U8: case GgufType::I8: case GgufType::Bool: return 1;
    case GgufType::U16: case GgufType::I16: return 2;
    case GgufType::U32: case GgufType::I32: case GgufType::F32: return 4;
    case GgufType::U64: case GgufType::I64: case GgufType::F64: return 8;
    default: return 0;
  }
}

bool validType(int32_t t) { return t >= 0 && t <= 12; }

std::string readString(BoundedReader& r, const char* what) {
  uint64_t at = r.position();
  uint64_t len = r.read<uint64_t>(what);
  if (len > kMaxString)
    fail(ErrorCode::GgufBadValue, std::string(what) + " length " + std::to_string(len) + " exceeds the 1 GiB limit", r.file(), at);
  return std::string(r.readBytes(len, what));
}

// Reads one scalar of type t into kv.value (numbers normalised to u64 / i64 / double).
void readScalar(BoundedReader& r, GgufType t, GgufKv& kv) {
  switch (t) {
    case GgufType::U8: kv.value = uint64_t(r.read<uint8_t>("u8 value")); break;
    case GgufType::I8: kv.value = int64_t(r.read<int8_t>("i8 value")); break;
    case GgufType::U16: kv.value = uint64_t(r.read<uint16_t>("u16 value")); break;
    case GgufType::I16: kv.value = int64_t(r.read<int16_t>("i16 value")); break;
    case GgufType::U32: kv.value = uint64_t(r.read<uint32_t>("u32 value")); break;
    case GgufType::I32: kv.value = int64_t(r.read<int32_t>("i32 value")); break;
    case GgufType::F32: kv.value = double(r.read<float>("f32 value")); break;
    case GgufType::Bool: kv.value = r.read<uint8_t>("bool value") != 0; break;
    case GgufType::U64: kv.value = r.read<uint64_t>("u64 value"); break;
    case GgufType::I64: kv.value = r.read<int64_t>("i64 value"); break;
    case GgufType::F64: kv.value = r.read<double>("f64 value"); break;
    case GgufType::String: kv.value = readString(r, "string value"); break;
    case GgufType::Array: break;
  }
}

double numberOf(const GgufKv& kv) {
  if (auto* u = std::get_if<uint64_t>(&kv.value)) return double(*u);
  if (auto* i = std::get_if<int64_t>(&kv.value)) return double(*i);
  if (auto* d = std::get_if<double>(&kv.value)) return *d;
  if (auto* b = std::get_if<bool>(&kv.value)) return *b ? 1 : 0;
  return 0;
}

void readArray(BoundedReader& r, GgufKv& kv) {
  uint64_t at = r.position();
  int32_t et = r.read<int32_t>("array element type");
  if (et == int32_t(GgufType::Array))
    fail(ErrorCode::GgufBadValue, "nested arrays are not allowed (key '" + kv.key + "')", r.file(), at);
  if (!validType(et))
    fail(ErrorCode::GgufBadValue, "unknown array element type " + std::to_string(et) + " (key '" + kv.key + "')", r.file(), at);
  kv.arrayType = GgufType(et);
  uint64_t countAt = r.position();
  kv.dataOffset = countAt + 8;
  kv.arrayCount = r.read<uint64_t>("array count");
  if (kv.arrayCount > kMaxArray)
    fail(ErrorCode::GgufBadValue, "array count " + std::to_string(kv.arrayCount) + " exceeds the limit (key '" + kv.key + "')",
         r.file(), countAt);
  if (kv.arrayType == GgufType::String) {
    // Each string is at least its 8-byte length: reject impossible counts before looping.
    if (kv.arrayCount > r.remaining() / 8)
      fail(ErrorCode::GgufTruncated, "array of " + std::to_string(kv.arrayCount) + " strings cannot fit in the remaining " +
                                         std::to_string(r.remaining()) + " bytes (key '" + kv.key + "')",
           r.file(), countAt);
    for (uint64_t i = 0; i < kv.arrayCount; ++i) {
      uint64_t sAt = r.position();
      uint64_t len = r.read<uint64_t>("array string length");
      if (len > kMaxString) fail(ErrorCode::GgufBadValue, "string length exceeds the 1 GiB limit (key '" + kv.key + "')", r.file(), sAt);
      if (i < kMetaPreview) kv.first.emplace_back(std::string(r.readBytes(len, "array string")));
      else r.skip(len, "array string");
    }
    return;
  }
  uint64_t elem = scalarSize(kv.arrayType);
  auto total = checkedMul(elem, kv.arrayCount);
  if (!total || *total > r.remaining())
    fail(ErrorCode::GgufTruncated, "array of " + std::to_string(kv.arrayCount) + " x " + std::to_string(elem) +
                                       " bytes runs past the end of file (key '" + kv.key + "')",
         r.file(), countAt);
  if (kv.arrayCount <= kMaxKeptArray) {
    kv.arrayNumbers.reserve(kv.arrayCount);
    GgufKv tmp;
    for (uint64_t i = 0; i < kv.arrayCount; ++i) {
      readScalar(r, kv.arrayType, tmp);
      kv.arrayNumbers.push_back(numberOf(tmp));
      if (i < kMetaPreview) kv.first.push_back(tmp.value);
    }
  } else {
    const uint64_t start = r.position();
    GgufKv tmp;
    for (uint64_t i = 0; i < kMetaPreview; ++i) {
      readScalar(r, kv.arrayType, tmp);
      kv.first.push_back(tmp.value);
    }
    r.skip(*total - (r.position() - start), "array data");
  }
}

}  // namespace

const char* ggufTypeName(GgufType t) {
  static const char* names[] = {"UINT8", "INT8", "UINT16", "INT16", "UINT32", "INT32", "FLOAT32",
                                "BOOL", "STRING", "ARRAY", "UINT64", "INT64", "FLOAT64"};
  int i = int(t);
  return i >= 0 && i <= 12 ? names[i] : "?";
}

std::optional<int64_t> GgufKv::asInt() const {
  if (auto* u = std::get_if<uint64_t>(&value)) return int64_t(*u);
  if (auto* i = std::get_if<int64_t>(&value)) return *i;
  return std::nullopt;
}

std::optional<std::string> GgufKv::asString() const {
  if (auto* s = std::get_if<std::string>(&value)) return *s;
  return std::nullopt;
}

GgufType ggufTypeFromName(std::string_view name) {
  for (int i = 0; i <= 12; ++i)
    if (name == ggufTypeName(GgufType(i))) return GgufType(i);
  return GgufType::U8;
}

Result<GgufArray> GgufArray::open(std::span<const uint8_t> file, const std::string& path, const MetaEntry& e) {
  return capture([&]() -> GgufArray {
    if (e.type != "ARRAY") fail(ErrorCode::Usage, "'" + e.key + "' is not an array");
    GgufArray a;
    a.file_ = file;
    a.type_ = ggufTypeFromName(e.elementType);
    a.start_ = e.dataOffset;
    a.count_ = e.length;
    if (a.start_ > file.size()) fail(ErrorCode::GgufTruncated, "array '" + e.key + "' starts past the end of the file", path, a.start_);
    if (a.type_ == GgufType::String) {
      BoundedReader r(file, path);
      r.skip(a.start_, "array start");
      a.strings_.reserve(size_t(std::min<uint64_t>(a.count_, r.remaining() / 8)));
      for (uint64_t i = 0; i < a.count_; ++i) {
        a.strings_.push_back(r.position());
        const uint64_t at = r.position();
        const uint64_t len = r.read<uint64_t>("array string length");
        if (len > kMaxString) fail(ErrorCode::GgufBadValue, "string length exceeds the 1 GiB limit (key '" + e.key + "')", path, at);
        r.skip(len, "array string");
      }
    } else {
      const auto bytes = checkedMul(uint64_t(scalarSize(a.type_)), a.count_);
      if (!bytes || *bytes > file.size() - a.start_) fail(ErrorCode::GgufTruncated, "array '" + e.key + "' runs past the end of the file", path, a.start_);
    }
    return a;
  });
}

MetaScalar GgufArray::at(uint64_t i) const {
  if (i >= count_) return {};
  BoundedReader r(file_, {});
  GgufKv tmp;
  if (type_ == GgufType::String) {
    r.skip(strings_[i], "element");
    readScalar(r, GgufType::String, tmp);
  } else {
    r.skip(start_ + i * uint64_t(scalarSize(type_)), "element");
    readScalar(r, type_, tmp);
  }
  return tmp.value;
}

const GgufKv* GgufFile::find(std::string_view key) const {
  for (const auto& k : kv)
    if (k.key == key) return &k;
  return nullptr;
}

bool looksLikeGguf(std::span<const uint8_t> file) {
  return file.size() >= 4 && file[0] == 'G' && file[1] == 'G' && file[2] == 'U' && file[3] == 'F';
}

GgufFile parseGguf(std::span<const uint8_t> file, const std::string& path, DataExtent extent) {
  BoundedReader r(file, path);
  GgufFile g;
  if (!looksLikeGguf(file)) {
    // A safetensors file under a .gguf name: 8-byte little-endian header length, then '{'.
    const bool safetensors = file.size() > 8 && file[8] == '{' && file[6] == 0 && file[7] == 0;
    if (safetensors) fail(ErrorCode::FormatMismatch, "starts like a safetensors file (a header length, then '{'), not with the GGUF magic", path, 0);
    fail(ErrorCode::GgufBadMagic, "file does not start with the GGUF magic", path, 0);
  }
  r.skip(4, "magic");
  g.version = r.read<uint32_t>("version");
  if (g.version == 0 || (g.version & 0xFFFF) == 0)
    fail(ErrorCode::GgufBadVersion, "version " + std::to_string(g.version) + " is invalid (or the file has the other byte order)", path, 4);
  if (g.version == 1) fail(ErrorCode::GgufBadVersion, "GGUF v1 is no longer supported", path, 4);
  if (g.version > 3) fail(ErrorCode::GgufBadVersion, "GGUF version " + std::to_string(g.version) + " is newer than 3", path, 4);
  int64_t nTensors = r.read<int64_t>("tensor count");
  int64_t nKv = r.read<int64_t>("KV count");
  // A KV pair takes at least 8 (key length) + 4 (type) + 1 bytes, a tensor info at least 8 + 4 + 4 + 8.
  if (nTensors < 0 || uint64_t(nTensors) > r.remaining() / 24)
    fail(ErrorCode::GgufBadValue, "tensor count " + std::to_string(nTensors) + " is impossible for a file of this size", path, 8);
  if (nKv < 0 || uint64_t(nKv) > r.remaining() / 13)
    fail(ErrorCode::GgufBadValue, "KV count " + std::to_string(nKv) + " is impossible for a file of this size", path, 16);

  g.kv.reserve(size_t(nKv));
  std::unordered_set<std::string> keys;
  for (int64_t i = 0; i < nKv; ++i) {
    GgufKv kv;
    kv.offset = r.position();
    kv.key = readString(r, "key");
    if (kv.key.empty()) fail(ErrorCode::GgufBadValue, "empty key", path, kv.offset);
    if (!keys.insert(kv.key).second) fail(ErrorCode::DuplicateKey, "key '" + kv.key + "' appears twice", path, kv.offset);
    uint64_t typeAt = r.position();
    int32_t t = r.read<int32_t>("value type");
    if (!validType(t)) fail(ErrorCode::GgufBadValue, "unknown value type " + std::to_string(t) + " for key '" + kv.key + "'", path, typeAt);
    kv.type = GgufType(t);
    if (kv.type == GgufType::Array) readArray(r, kv);
    else readScalar(r, kv.type, kv);
    g.kv.push_back(std::move(kv));
  }

  if (const GgufKv* a = g.find("general.alignment")) {
    if (a->type != GgufType::U32)
      fail(ErrorCode::GgufBadValue, std::string("general.alignment must be UINT32, not ") + ggufTypeName(a->type), path, a->offset);
    uint64_t v = std::get<uint64_t>(a->value);
    if (v == 0 || (v & (v - 1)) != 0)
      fail(ErrorCode::GgufBadValue, "general.alignment " + std::to_string(v) + " is not a power of two", path, a->offset);
    g.alignment = uint32_t(v);
  }

  g.tensors.reserve(size_t(nTensors));
  std::unordered_set<std::string> names;
  for (int64_t i = 0; i < nTensors; ++i) {
    GgufTensorInfo ti;
    ti.infoOffset = r.position();
    ti.name = readString(r, "tensor name");
    if (ti.name.size() >= 64)
      g.notes.push_back("tensor '" + ti.name + "' has a name of 64 characters or more (ggml's default GGML_MAX_NAME is 64)");
    if (!names.insert(ti.name).second)
      fail(ErrorCode::DuplicateTensor, "tensor name appears twice", path, ti.infoOffset, ti.name);
    uint64_t dimsAt = r.position();
    uint32_t nDims = r.read<uint32_t>("n_dims");
    if (nDims > kMaxDims)
      fail(ErrorCode::GgufBadTensorInfo, "n_dims " + std::to_string(nDims) + " exceeds 4", path, dimsAt, ti.name);
    uint64_t elements = 1;
    for (uint32_t d = 0; d < nDims; ++d) {
      uint64_t neAt = r.position();
      int64_t ne = r.read<int64_t>("ne");
      if (ne < 0) fail(ErrorCode::GgufBadTensorInfo, "negative dimension " + std::to_string(ne), path, neAt, ti.name);
      auto m = checkedMul(elements, uint64_t(ne));
      if (!m || *m > uint64_t(INT64_MAX)) fail(ErrorCode::ValidationOverflow, "element count overflows", path, neAt, ti.name);
      elements = *m;
      ti.ne.push_back(ne);
    }
    uint64_t typeAt = r.position();
    int32_t type = r.read<int32_t>("tensor type");
    ti.dtype = dtypeFromGgml(type);
    if (!ti.dtype) fail(ErrorCode::UnknownDtype, ggmlIdProblem(type), path, typeAt, ti.name);
    if (!ti.ne.empty() && ti.ne[0] % ti.dtype->blockElems != 0)
      fail(ErrorCode::GgufBadTensorInfo,
           "row length ne[0]=" + std::to_string(ti.ne[0]) + " is not a multiple of the " + std::string(ti.dtype->name) +
               " block size " + std::to_string(ti.dtype->blockElems),
           path, dimsAt, ti.name);
    auto bytes = ti.dtype->bytesForRows(elements, ti.ne.empty() ? 1 : uint64_t(ti.ne[0]));
    if (!bytes) fail(ErrorCode::ValidationOverflow, "byte size overflows", path, typeAt, ti.name);
    ti.bytes = *bytes;
    ti.relOffset = r.read<uint64_t>("tensor offset");
    g.tensors.push_back(std::move(ti));
  }

  uint64_t pos = r.position();
  auto padded = checkedAdd(pos, g.alignment - 1);
  g.dataStart = padded ? (*padded / g.alignment) * g.alignment : pos;
  if (nTensors > 0 && g.dataStart > file.size()) {
    Error e{ErrorCode::GgufTruncated, "data section would start at " + std::to_string(g.dataStart) + ", past the end of file", path, pos, {}};
    if (extent == DataExtent::Exact) throw CoreError(e);
    g.extentProblem = std::move(e);  // a header-only copy: every tensor is cut
  }

  uint64_t expected = 0;
  bool canonical = true;
  for (const auto& t : g.tensors) {
    if (t.relOffset % g.alignment != 0)
      fail(ErrorCode::GgufBadTensorInfo,
           "offset " + std::to_string(t.relOffset) + " is not a multiple of the alignment " + std::to_string(g.alignment), path,
           t.infoOffset, t.name);
    auto end = checkedAdd(g.dataStart, t.relOffset);
    auto end2 = end ? checkedAdd(*end, t.bytes) : std::nullopt;
    if (!end2 || *end2 > file.size()) {
      Error e{ErrorCode::GgufTruncated,
              "data [" + std::to_string(g.dataStart + t.relOffset) + ", +" + std::to_string(t.bytes) + ") runs past the end of the " +
                  std::to_string(file.size()) + "-byte file",
              path, t.infoOffset, t.name};
      // An offset beyond 64 bits is a lie, not a cut; a cut file keeps its catalog when asked.
      if (extent == DataExtent::Exact || !end2) throw CoreError(e);
      if (!g.extentProblem) g.extentProblem = std::move(e);
    }
    if (t.relOffset != expected && canonical) {
      canonical = false;
      g.nonCanonical = Error{ErrorCode::GgufBadTensorInfo,
                             "offset " + std::to_string(t.relOffset) + " where ggml's reader expects " + std::to_string(expected) +
                                 " (the padded sizes of the tensors before it); current llama.cpp refuses the file",
                             path, t.infoOffset, t.name};
    }
    expected = t.relOffset + (t.bytes + g.alignment - 1) / g.alignment * g.alignment;
  }
  if (!canonical) g.notes.push_back("tensor offsets are aligned and in bounds but not in canonical (declaration) order");
  return g;
}

}  // namespace ws
