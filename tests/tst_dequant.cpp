// CPU reference dequantization against ggml's own output (the expected-value GGUF), and the
// selection rules (expert, rows, BF16 output) on real fixtures.
#include <QtTest>

#include <cstring>

#include "core/numerics/dequant.h"
#include "core/numerics/float_formats.h"
#include "core/numerics/hd.h"
#include "test_support.h"

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

}  // namespace

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
    std::vector<float> got = dequantAll(*quant_, n, &read);
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
    auto out = num::dequantize(*quant_, req);
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
    QVERIFY((num::toBf16Rne(std::nanf("")) & 0x7F80) == 0x7F80 && (num::toBf16Rne(std::nanf("")) & 0x7F));
  }

  // The conversions shared with the CUDA kernels equal the reference ones on every input.
  void sharedConversionsEqualReference() {
    auto same = [](float a, float b) { return (std::isnan(a) && std::isnan(b)) || num::floatToBits(a) == num::floatToBits(b); };
    for (uint32_t h = 0; h < 65536; ++h) QVERIFY(same(num::hdHalfToFloat(uint16_t(h)), num::halfToFloat(uint16_t(h))));
    for (uint32_t x = 0; x < 256; ++x) {
      QVERIFY(same(num::hdE4m3ToFloat(uint8_t(x)), num::e4m3ToFloat(uint8_t(x))));
      QVERIFY(same(num::hdE5m2ToFloat(uint8_t(x)), num::e5m2ToFloat(uint8_t(x))));
      QVERIFY(same(num::hdE8m0ToFloat(uint8_t(x)), num::e8m0ToFloat(uint8_t(x))));
      QVERIFY(same(num::hdGgmlUe4m3Half(uint8_t(x)), num::ggmlUe4m3ToFloatHalf(uint8_t(x))));
      QVERIFY(same(num::hdGgmlE8m0Half(uint8_t(x)), num::ggmlE8m0ToFloatHalf(uint8_t(x))));
    }
    for (uint32_t c = 0; c < 16; ++c) {
      QVERIFY(same(num::hdE2m1(c), num::kE2m1[c]));
      QCOMPARE(num::hdMxfp4Doubled(c), int(num::kMxfp4Doubled[c]));
      QCOMPARE(num::hdIq4nl(c), int(num::kIq4nl[c]));
    }
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
