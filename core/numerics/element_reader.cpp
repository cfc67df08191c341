#include "core/numerics/element_reader.h"

#include <array>
#include <cstring>

#include "core/numerics/float_formats.h"

namespace ws::num {

namespace {

template <class T>
T load(const uint8_t* p, uint64_t i) {
  T v;
  std::memcpy(&v, p + i * sizeof(T), sizeof(T));
  return v;
}

// 256-entry tables: the 8-bit formats are decoded once, then looked up.
struct Tables {
  std::array<float, 256> e4m3, e5m2, e4m3fnuz, e5m2fnuz, e8m0;
  Tables() {
    for (int i = 0; i < 256; ++i) {
      e4m3[size_t(i)] = e4m3ToFloat(uint8_t(i));
      e5m2[size_t(i)] = e5m2ToFloat(uint8_t(i));
      e4m3fnuz[size_t(i)] = e4m3fnuzToFloat(uint8_t(i));
      e5m2fnuz[size_t(i)] = e5m2fnuzToFloat(uint8_t(i));
      e8m0[size_t(i)] = e8m0ToFloat(uint8_t(i));
    }
  }
};
const Tables& tables() {
  static const Tables t;
  return t;
}

}  // namespace

const float* byteFloatTable(const DType* d) {
  const Tables& t = tables();
  if (d->name == "F8_E4M3") return t.e4m3.data();
  if (d->name == "F8_E5M2") return t.e5m2.data();
  if (d->name == "F8_E4M3FNUZ") return t.e4m3fnuz.data();
  if (d->name == "F8_E5M2FNUZ") return t.e5m2fnuz.data();
  if (d->name == "F8_E8M0") return t.e8m0.data();
  return nullptr;
}

bool ElementReader::init(const DType* d) {
  static const std::pair<const char*, Kind> kinds[] = {
      {"F32", Kind::F32}, {"F16", Kind::F16}, {"BF16", Kind::BF16}, {"F64", Kind::F64}, {"F8_E4M3", Kind::E4M3},
      {"F8_E5M2", Kind::E5M2}, {"F8_E4M3FNUZ", Kind::E4M3Fnuz}, {"F8_E5M2FNUZ", Kind::E5M2Fnuz}, {"F8_E8M0", Kind::E8M0},
      {"F4", Kind::F4}, {"I8", Kind::I8}, {"U8", Kind::U8}, {"I16", Kind::I16}, {"U16", Kind::U16}, {"I32", Kind::I32},
      {"U32", Kind::U32}, {"I64", Kind::I64}, {"U64", Kind::U64}, {"BOOL", Kind::Bool}};
  kind_ = Kind::None;
  dtype_ = d;
  if (!d) return false;
  for (auto [n, k] : kinds)
    if (d->name == n) kind_ = k;
  return kind_ != Kind::None;
}

float ElementReader::at(const uint8_t* p, uint64_t i) const {
  const Tables& t = tables();
  switch (kind_) {
    case Kind::F32: return load<float>(p, i);
    case Kind::F16: return halfToFloat(load<uint16_t>(p, i));
    case Kind::BF16: return bf16ToFloat(load<uint16_t>(p, i));
    case Kind::F64: return float(load<double>(p, i));
    case Kind::E4M3: return t.e4m3[p[i]];
    case Kind::E5M2: return t.e5m2[p[i]];
    case Kind::E4M3Fnuz: return t.e4m3fnuz[p[i]];
    case Kind::E5M2Fnuz: return t.e5m2fnuz[p[i]];
    case Kind::E8M0: return t.e8m0[p[i]];
    case Kind::F4: return kE2m1[(p[i / 2] >> (4 * (i & 1))) & 0xF];  // element 2k in the low nibble
    case Kind::I8: return float(int8_t(p[i]));
    case Kind::U8: return float(p[i]);
    case Kind::I16: return float(load<int16_t>(p, i));
    case Kind::U16: return float(load<uint16_t>(p, i));
    case Kind::I32: return float(load<int32_t>(p, i));
    case Kind::U32: return float(load<uint32_t>(p, i));
    case Kind::I64: return float(load<int64_t>(p, i));
    case Kind::U64: return float(load<uint64_t>(p, i));
    case Kind::Bool: return p[i] ? 1.0f : 0.0f;
    case Kind::None: break;
  }
  return 0.0f;
}

void ElementReader::run(const uint8_t* p, uint64_t first, uint64_t n, float* out) const {
  switch (kind_) {  // the hot plain types get tight loops
    case Kind::F32: std::memcpy(out, p + first * 4, n * 4); return;
    case Kind::BF16:
      for (uint64_t i = 0; i < n; ++i) out[i] = bf16ToFloat(load<uint16_t>(p, first + i));
      return;
    case Kind::F16:
      for (uint64_t i = 0; i < n; ++i) out[i] = halfToFloat(load<uint16_t>(p, first + i));
      return;
    default:
      for (uint64_t i = 0; i < n; ++i) out[i] = at(p, first + i);
  }
}

}  // namespace ws::num
