// CPU reference dequantization against ggml's own output (the expected-value GGUF), and the
// selection rules (expert, rows, BF16 output) on real fixtures.
#include <QtTest>

#include <bit>
#include <cmath>

#include <cstring>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "core/model/dtype.h"
#include "core/model/scheme_table.h"
#include "core/numerics/dequant.h"
#include "core/numerics/gguf_blocks.h"
#include "core/numerics/float_formats.h"
#include "core/numerics/hd.h"
#include "page_watch.h"
#include "test_paths.h"
#include "test_support.h"

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

using namespace ws;

namespace {

std::vector<float> dequantAll(const Checkpoint& c, const std::string& name, uint64_t* bytesRead = nullptr) {
  auto li = num::findLogical(c, name);
  if (!li) throw std::runtime_error(li.error().describe());
  num::DequantRequest req;
  req.logical = li.value();
  auto out = num::dequantize(c, req);
  if (!out) throw std::runtime_error(out.error().describe());
  if (bytesRead) *bytesRead = out.value().bytesRead;
  return out.value().values;
}

const float* expectedData(const Checkpoint& e, const std::string& name) {
  const TensorRecord* t = e.find(name);
  if (!t || t->dtype->name != "F32") throw std::runtime_error("expected tensor missing or not F32: " + name);
  return reinterpret_cast<const float*>(e.files[t->file].map->bytes().data() + t->offset);
}

// The backquoted names of the README bullet that starts with `head` (continuation lines included).
std::set<std::string> readmeList(const std::string& head) {
  std::ifstream in(wstest::sourceDir() + "/README.md");
  std::string line, bullet;
  bool inside = false;
  while (std::getline(in, line)) {
    if (line.rfind(head, 0) == 0) inside = true;
    else if (inside && (line.empty() || line.find("- ") <= 2)) break;
    if (inside) bullet += line + "\n";
  }
  std::set<std::string> names;
  const std::regex quoted("`([^`]+)`");
  for (std::sregex_iterator m(bullet.begin(), bullet.end(), quoted), end; m != end; ++m) names.insert((*m)[1]);
  return names;
}

std::string joined(const std::set<std::string>& s) {
  std::ostringstream o;
  for (const auto& n : s) o << n << ' ';
  return o.str();
}

}  // namespace

// The processor's own float -> half conversion, round to nearest even: x86's F16C instruction
// (clang 14 has no _Float16 on x86), the compiler's _Float16 elsewhere.
#if defined(__x86_64__)
__attribute__((target("f16c"))) static uint16_t referenceHalf(float f) {
  return uint16_t(_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}
static bool haveReferenceHalf() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  return __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C);
}
#else
static uint16_t referenceHalf(float f) { return std::bit_cast<uint16_t>(static_cast<_Float16>(f)); }
static bool haveReferenceHalf() { return true; }
#endif

class TstDequant : public QObject {
  Q_OBJECT
  std::shared_ptr<const Checkpoint> quant_, expected_;

 private slots:
  void initTestCase() {
    quant_ = wstest::openOrFail(wstest::fixture("gguf/tiny-qwen3moe-kquants.gguf"));
    expected_ = wstest::openOrFail(wstest::fixture("gguf/tiny-qwen3moe-kquants.expected.gguf"));
  }

  // One row per tensor of the fixture, tagged with its type: Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, Q8_0,
  // Q4_0, Q4_1, Q5_0, Q5_1, MXFP4, F16, BF16, F32 all appear.
  void ggufMatchesGgmlBitForBit_data() {
    QTest::addColumn<QString>("name");
    auto c = wstest::openOrFail(wstest::fixture("gguf/tiny-qwen3moe-kquants.gguf"));
    for (const auto& t : c->tensors) QTest::newRow((std::string(t.dtype->name) + " " + t.name).c_str()) << QString::fromStdString(t.name);
  }

  void ggufMatchesGgmlBitForBit() {
    QFETCH(QString, name);
    const std::string n = name.toStdString();
    uint64_t read = 0;
    const TensorRecord& t = *quant_->find(n);
    const auto mapping = quant_->files[t.file].map->bytes();
    std::vector<float> got;
    {
      // Every page of the tensor read, none outside it (recorded by faulting on the mapping).
      wstest::PageWatch watch(mapping.data(), mapping.size());
      got = dequantAll(*quant_, n, &read);
      QVERIFY2(watch.touchedOutside({{t.offset, t.bytes}}).empty(), "a page outside the tensor was read");
      QVERIFY2(watch.touchedAll(t.offset, t.bytes), "a page of the tensor was not read");
    }
    const TensorRecord* e = expected_->find(n);
    QVERIFY(e);
    QCOMPARE(e->shape, quant_->find(n)->shape);
    QCOMPARE(uint64_t(got.size()) * 4, e->bytes);
    QVERIFY2(std::memcmp(got.data(), expectedData(*expected_, n), e->bytes) == 0, n.c_str());
    QCOMPARE(read, quant_->find(n)->bytes);  // the whole tensor, once
  }

  void expertAndRowsDecodeOnlyTheirPart() {
    const std::string n = "blk.0.ffn_down_exps.weight";  // Q6_K [8, 256, 256]
    std::vector<float> all = dequantAll(*quant_, n);
    num::DequantRequest req;
    req.logical = quant_->find(n)->logical;
    req.expert = 5;
    req.rowBegin = 10;
    req.rowEnd = 13;
    // The pages touched while decoding, recorded by faulting on the mapping: only those of the
    // three rows' blocks, and all of them.
    const TensorRecord& t = *quant_->find(n);
    const uint64_t rowsAt = t.offset + (5 * 256 + 10) * 210, rowsBytes = 3 * 210;
    const auto mapping = quant_->files[t.file].map->bytes();
    auto out = [&] {
      wstest::PageWatch watch(mapping.data(), mapping.size());
      auto r = num::dequantize(*quant_, req);
      const auto outside = watch.touchedOutside({{rowsAt, rowsBytes}});
      if (!outside.empty()) QTest::qFail(qPrintable(QString("page at %1 read, outside rows 10..12 of expert 5").arg(outside.front())), __FILE__, __LINE__);
      if (!watch.touchedAll(rowsAt, rowsBytes)) QTest::qFail("the rows' blocks were not all read", __FILE__, __LINE__);
      return r;
    }();
    QVERIFY(out.ok());
    QCOMPARE(out.value().shape, (std::vector<uint64_t>{3, 256}));
    QVERIFY(std::memcmp(out.value().values.data(), all.data() + (5 * 256 + 10) * 256, 3 * 256 * 4) == 0);
    QCOMPARE(out.value().bytesRead, uint64_t(3 * 210));  // 3 rows of one Q6_K block each

    req.rowBegin = 0;
    req.rowEnd = UINT64_MAX;
    auto whole = num::dequantize(*quant_, req);
    QCOMPARE(whole.value().shape, (std::vector<uint64_t>{256, 256}));
    QVERIFY(std::memcmp(whole.value().values.data(), all.data() + 5 * 256 * 256, 256 * 256 * 4) == 0);

    req.expert = 8;
    auto bad = num::dequantize(*quant_, req);
    QVERIFY(!bad.ok());
    QVERIFY(QString::fromStdString(bad.error().describe()).contains("out of range"));
  }

  void bf16FixtureIsExact() {
    // BF16 -> F32 is exact: the value's bits are the stored 16 bits shifted up.
    auto c = wstest::openOrFail(wstest::fixture("hf/mixtral"));
    const std::string n = "model.layers.1.block_sparse_moe.experts.5.w2.weight";
    std::vector<float> v = dequantAll(*c, n);
    const TensorRecord* t = c->find(n);
    const uint8_t* raw = c->files[t->file].map->bytes().data() + t->offset;
    for (size_t i = 0; i < v.size(); ++i) {
      uint16_t b;
      std::memcpy(&b, raw + 2 * i, 2);
      QCOMPARE(num::floatToBits(v[i]), uint32_t(b) << 16);
    }
  }

  void bf16RoundingIsNearestEven() {
    QCOMPARE(num::toBf16Rne(1.0f), uint16_t(0x3F80));
    QCOMPARE(num::toBf16Rne(num::bitsToFloat(0x3F808000)), uint16_t(0x3F80));  // tie -> even
    QCOMPARE(num::toBf16Rne(num::bitsToFloat(0x3F818000)), uint16_t(0x3F82));  // tie -> even (up)
    QCOMPARE(num::toBf16Rne(num::bitsToFloat(0x3F808001)), uint16_t(0x3F81));  // above the tie
    // every NaN - x86's default 0xFFC00000, CUDA's 0x7FFFFFFF, a signalling one - is the quiet 0x7FC0
    for (uint32_t nan : {0xFFC00000u, 0x7FFFFFFFu, 0x7F800001u, 0xFFFFFFFFu, 0x7FC00000u})
      QCOMPARE(num::toBf16Rne(num::bitsToFloat(nan)), uint16_t(0x7FC0));
    QCOMPARE(num::toBf16Rne(num::bitsToFloat(0xFF800000u)), uint16_t(0xFF80));  // -inf stays -inf
  }

  // The bit-manipulating conversions (one set, shared by the CPU decoders and the CUDA kernels)
  // equal each format's definition - sign * 2^(e - bias) * (1 + m / 2^M), subnormals
  // 2^(1 - bias) * m / 2^M - evaluated with ldexp here, on every input.
  void conversionsEqualTheirDefinition() {
    auto same = [](float a, float b) { return (std::isnan(a) && std::isnan(b)) || num::floatToBits(a) == num::floatToBits(b); };
    // expBits/mantBits/bias describe the format; `special` maps a code to NaN/inf or returns false.
    auto defined = [](uint32_t code, int expBits, int mantBits, int bias) {
      const float sign = (code >> (expBits + mantBits)) & 1 ? -1.0f : 1.0f;
      const int e = int((code >> mantBits) & ((1u << expBits) - 1));
      const float m = float(code & ((1u << mantBits) - 1));
      if (e == 0) return sign * std::ldexp(m, 1 - bias - mantBits);
      return sign * std::ldexp(1.0f + std::ldexp(m, -mantBits), e - bias);
    };
    for (uint32_t h = 0; h < 65536; ++h) {
      const bool top = ((h >> 10) & 0x1F) == 0x1F;
      const float want = !top ? defined(h, 5, 10, 15) : (h & 0x3FF) ? std::nanf("") : ((h & 0x8000) ? -INFINITY : INFINITY);
      QVERIFY2(same(num::halfToFloat(uint16_t(h)), want), qPrintable(QString::number(h, 16)));
    }
    for (uint32_t x = 0; x < 256; ++x) {
      const uint8_t b = uint8_t(x);
      QVERIFY(same(num::e4m3ToFloat(b), (x & 0x7F) == 0x7F ? std::nanf("") : defined(x, 4, 3, 7)));
      QVERIFY(same(num::e5m2ToFloat(b), num::halfToFloat(uint16_t(x << 8))));
      QVERIFY(same(num::e4m3fnuzToFloat(b), x == 0x80 ? std::nanf("") : defined(x, 4, 3, 8)));
      QVERIFY(same(num::e5m2fnuzToFloat(b), x == 0x80 ? std::nanf("") : defined(x, 5, 2, 16)));
      QVERIFY(same(num::e8m0ToFloat(b), x == 0xFF ? std::nanf("") : std::ldexp(1.0f, int(x) - 127)));
      QVERIFY(same(num::ggmlE8m0ToFloatHalf(b), std::ldexp(1.0f, int(x) - 128)));
      QVERIFY(same(num::ggmlUe4m3ToFloatHalf(b), (x == 0 || x == 0x7F) ? 0.0f : 0.5f * defined(x & 0x7F, 4, 3, 7)));
    }
    for (uint32_t c = 0; c < 16; ++c) {
      QVERIFY(same(num::hdE2m1(c), num::kE2m1[c]));
      QCOMPARE(num::hdMxfp4Doubled(c), int(num::kMxfp4Doubled[c]));
      QCOMPARE(num::hdIq4nl(c), int(num::kIq4nl[c]));
    }
  }

  // The README's lists of what `dequant` decodes are the decoders' own: a type added to one
  // without the other fails here.
  void readmeListsWhatDequantDecodes() {
    std::set<std::string> gguf, schemes;
    for (int id = 0; id < 1024; ++id)
      if (const DType* t = dtypeFromGgml(id); t && num::ggufBlockTypeSupported(*t)) gguf.insert(std::string(t->name));
    for (int s = 0; s < int(Scheme::kCount); ++s) {
      const SchemeInfo& info = schemeInfo(Scheme(s));
      if (!info.name.empty() && info.decoder != DecoderKind::Unsupported) schemes.insert(std::string(info.name));
    }
    QVERIFY(gguf.count("IQ1_S") && schemes.count("fp8-block"));
    const auto readmeGguf = readmeList("  - GGUF block types:"), readmeSchemes = readmeList("  - safetensors schemes:");
    QVERIFY2(readmeGguf == gguf, ("README: " + joined(readmeGguf) + "\ndecoders: " + joined(gguf)).c_str());
    QVERIFY2(readmeSchemes == schemes, ("README: " + joined(readmeSchemes) + "\ndecoders: " + joined(schemes)).c_str());
  }

  // The float -> half rounding the GPTQ and AWQ writers' half products go through, against the
  // processor's own conversion (round to nearest even): every half, its neighbours one float ulp
  // away, the midpoints between halves and their neighbours, and a stride through all floats.
  void roundToHalfIsTheProcessorsConversion() {
    if (!haveReferenceHalf()) QSKIP("this x86 processor has no F16C conversion to compare against");
    auto check = [](uint32_t u) {
      const float f = std::bit_cast<float>(u);
      const uint16_t want = referenceHalf(f);
      const uint16_t got = num::hdToF16Rne(f);
      if (std::isnan(f)) return (got & 0x7C00) == 0x7C00 && (got & 0x3FF);
      return got == want;
    };
    uint64_t checked = 0;
    for (uint32_t h = 0; h < 0x10000; ++h) {
      const float v = num::halfToFloat(uint16_t(h));
      // Past the largest half (65504) the next step is 65536: the tie 65520 rounds to infinity.
      const double next = (h & 0x7FFF) == 0x7BFF ? std::copysign(65536.0, double(v)) : double(num::halfToFloat(uint16_t(h + 1)));
      const uint32_t at = std::bit_cast<uint32_t>(v);
      for (uint32_t u : {at - 1, at, at + 1}) QVERIFY2(check(u), std::to_string(u).c_str());
      if ((h & 0x7C00) != 0x7C00) {
        const uint32_t mid = std::bit_cast<uint32_t>(float((double(v) + next) / 2));
        for (uint32_t u : {mid - 1, mid, mid + 1}) QVERIFY2(check(u), std::to_string(u).c_str());
      }
      checked += 6;
    }
    for (uint64_t u = 0; u < (uint64_t(1) << 32); u += 4093, ++checked) QVERIFY2(check(uint32_t(u)), std::to_string(u).c_str());
    QVERIFY(checked > 1000000);
  }

  void smallFloatFormats() {
    QCOMPARE(num::e4m3ToFloat(0x7E), 448.0f);
    QCOMPARE(num::e4m3ToFloat(0x01), 0x1p-9f);
    QVERIFY(std::isnan(num::e4m3ToFloat(0x7F)));
    QVERIFY(std::isnan(num::e4m3ToFloat(0xFF)));
    QCOMPARE(num::e5m2ToFloat(0x7B), 57344.0f);
    QVERIFY(std::isinf(num::e5m2ToFloat(0x7C)));
    QCOMPARE(num::e8m0ToFloat(127), 1.0f);
    QCOMPARE(num::e8m0ToFloat(0), 0x1p-127f);
    QVERIFY(std::isnan(num::e8m0ToFloat(0xFF)));
    QCOMPARE(num::halfToFloat(0x0001), 0x1p-24f);
    QCOMPARE(num::halfToFloat(0x7BFF), 65504.0f);
    QCOMPARE(num::e4m3fnuzToFloat(0x7F), 240.0f);
    QVERIFY(std::isnan(num::e4m3fnuzToFloat(0x80)));
    QCOMPARE(num::e5m2fnuzToFloat(0x7F), 57344.0f);
  }
};

QTEST_GUILESS_MAIN(TstDequant)
#include "tst_dequant.moc"
