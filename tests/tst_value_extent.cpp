// RowDecoder::extent - what the value rules read of every weight - tells a tensor's extremes from
// its codes' where the scheme allows (FP8 E4M3 times a scale, integer codes minus a zero point
// times a scale) and decodes the rest. Whichever way it goes, it must equal decode() followed by
// Extent::add over the same rows, on every field: checked on every tensor of the fixtures and of a
// checkpoint per synth scheme, over whole tensors, chunks that straddle scale blocks, a middle
// range and the last row; and on checkpoints whose scales and codes were overwritten with the
// cases the extremes cannot tell (NaN codes; NaN, infinite and overflowing scales) next to the
// ones they can (zero, negative and subnormal scales).
#include <QtTest>

#include <bit>
#include <cmath>
#include <cstring>
#include <random>
#include <array>
#include <fstream>

#include "core/numerics/code_extremes.h"
#include "core/numerics/dequant.h"
#include "core/numerics/float_formats.h"
#include "core/synth/synth.h"
#include "test_support.h"

using namespace ws;

namespace {

struct Told {
  uint64_t fromCodes = 0, values = 0;
};

std::string describe(const num::Extent& e) {
  return "count " + std::to_string(e.count) + " nan " + std::to_string(e.nan) + " inf " + std::to_string(e.inf) + " finite " + std::to_string(e.finite) + " min " +
         std::to_string(e.min()) + " max " + std::to_string(e.max()) + " absmax " + std::to_string(e.absmax());
}

bool same(const num::Extent& a, const num::Extent& b) {
  return a.count == b.count && a.nan == b.nan && a.inf == b.inf && a.finite == b.finite && a.min() == b.min() && a.max() == b.max() && a.absmax() == b.absmax();
}

// extent() against decode + Extent::add over rows [first, first + rows), `chunk` rows a call,
// its codes read through the mapping or with pread. Throws naming the tensor and range on a
// difference; returns what extent() told from codes.
Told compareRange(const num::RowDecoder& d, const std::string& name, uint64_t first, uint64_t rows, uint64_t chunk, bool pread) {
  num::Extent want, got;
  std::vector<float> values(rows * d.cols());
  num::ExtentScratch scratch;
  scratch.pread = pread;
  d.decode(first, rows, values.data());
  want.add(values.data(), values.size());
  Told t;
  for (uint64_t r = first; r < first + rows; r += chunk) t.fromCodes += d.extent(r, std::min(chunk, first + rows - r), got, scratch);
  t.values = rows * d.cols();
  if (!same(want, got))
    throw std::runtime_error(name + ", rows " + std::to_string(first) + "+" + std::to_string(rows) + " by " + std::to_string(chunk) + (pread ? " (pread)" : "") +
                             ": extent says " + describe(got) +
                             ", decoding says " + describe(want));
  return t;
}

// Every logical tensor of c over several ranges; the sums of what was told from codes.
Told compareAll(const Checkpoint& c) {
  Told all;
  for (uint32_t li = 0; li < c.logical.size(); ++li) {
    auto dec = num::makeDecoder(c, li);
    if (!dec || !dec.value()->rows()) continue;
    const auto& d = *dec.value();
    const uint64_t rows = d.rows();
    const std::tuple<uint64_t, uint64_t, uint64_t> ranges[] = {{0, rows, rows}, {0, rows, 7}, {rows / 3, std::max<uint64_t>(1, rows / 3), 5}, {rows - 1, 1, 1}};
    for (const auto& [first, n, chunk] : ranges)
      for (bool pread : {false, true}) {
        const Told t = compareRange(d, c.logical[li].name + " (" + c.logical[li].schemeName + ")", first, n, chunk, pread);
        all.fromCodes += t.fromCodes, all.values += t.values;
      }
  }
  return all;
}

const TensorRecord& tensorNamed(const Checkpoint& c, const std::string& name) {
  for (const auto& t : c.tensors)
    if (t.name == name) return t;
  throw std::runtime_error("no tensor " + name);
}

// Overwrites bytes [at, at + n) of a stored tensor's data.
void patchBytes(const Checkpoint& c, const std::string& tensor, uint64_t at, const std::vector<uint8_t>& bytes) {
  const TensorRecord& t = tensorNamed(c, tensor);
  std::fstream f(c.files[t.file].path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(std::streamoff(t.offset + at));
  f.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  if (!f) throw std::runtime_error("could not patch " + tensor);
}

// Overwrites element i of a stored F32 / BF16 tensor, or byte i of any other.
void patch(const Checkpoint& c, const std::string& tensor, uint64_t i, float value) {
  const TensorRecord& t = tensorNamed(c, tensor);
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  if (t.dtype->name == "F32") patchBytes(c, tensor, i * 4, {uint8_t(bits), uint8_t(bits >> 8), uint8_t(bits >> 16), uint8_t(bits >> 24)});
  else if (t.dtype->name == "BF16") patchBytes(c, tensor, i * 2, {uint8_t(bits >> 16), uint8_t(bits >> 24)});  // truncated; both sides read the same bytes
  else patchBytes(c, tensor, i, {uint8_t(value)});
}

// The folder of a synth checkpoint written under d.
std::string synthesized(const wstest::TempDir& d, const std::string& like, const std::string& scheme) {
  synth::Options o;
  o.like = like;
  o.scheme = scheme;
  o.out = d.file(scheme);
  if (!synth::write(o).ok()) throw std::runtime_error("synth " + scheme);
  return o.out;
}

// Rows [first, first + rows) of a logical tensor (all of them by default), in one call each way:
// its runs are then whole block rows.
Told compareTensor(const Checkpoint& c, const std::string& logicalName, uint64_t first = 0, uint64_t rows = UINT64_MAX) {
  auto li = num::findLogical(c, logicalName);
  if (!li) throw std::runtime_error(li.error().message);
  auto dec = num::makeDecoder(c, li.value());
  if (!dec) throw std::runtime_error(dec.error().message);
  rows = std::min(rows, dec.value()->rows() - first);
  const Told mapped = compareRange(*dec.value(), logicalName, first, rows, rows, false), read = compareRange(*dec.value(), logicalName, first, rows, rows, true);
  if (mapped.fromCodes != read.fromCodes) throw std::runtime_error(logicalName + ": pread changed what was told from codes");
  return read;
}

}  // namespace

class TstValueExtent : public QObject {
  Q_OBJECT
 private slots:
  void fixtures_data() {
    QTest::addColumn<QString>("rel");
    for (const char* p : {"hf/qwen3_moe_fp8", "hf/deepseek_v3", "hf/mixtral", "hf/qwen3_vl_moe", "gguf/tiny-qwen3moe-kquants.gguf"}) QTest::newRow(p) << QString(p);
  }
  void fixtures() {
    QFETCH(QString, rel);
    auto c = wstest::openOrFail(wstest::fixture(rel.toStdString()));
    try {
      const Told t = compareAll(*c);
      QVERIFY(t.values > 0);
      if (rel == "hf/qwen3_moe_fp8") QVERIFY2(t.fromCodes > 0, "the FP8 fixture's weights are told from their codes");
    } catch (const std::exception& e) {
      QFAIL(e.what());
    }
  }

  void everySynthScheme_data() {
    QTest::addColumn<QString>("scheme");
    for (const auto& s : synth::schemes()) QTest::newRow(s.c_str()) << QString::fromStdString(s);
  }
  void everySynthScheme() {
    QFETCH(QString, scheme);
    wstest::TempDir d;
    try {
      auto c = wstest::openOrFail(synthesized(d, "deepseek-v3", scheme.toStdString()));
      const Told t = compareAll(*c);
      QVERIFY(t.values > 0);
      if (scheme == "fp8-block" || scheme == "int4-ct") QVERIFY2(t.fromCodes > t.values / 2, "most values are told from codes");
    } catch (const std::exception& e) {
      QFAIL(e.what());
    }
  }

  // FP8 block: down_proj [256, 512] has 2 x 4 block scales. Block row 0 gets a positive, a
  // negative, a zero and a subnormal scale (all told from codes); block row 1 an infinite, a NaN and
  // an overflowing (1e38 x 448) one, so it is decoded. gate_proj's last code is +NaN, up_proj's
  // -NaN: their last block row is decoded. o_proj's first block holds only negative codes and
  // q_b_proj's only positive ones, so each takes its other end from the same sign.
  void fp8EdgeCases() {
    wstest::TempDir d;
    try {
      const std::string dir = synthesized(d, "deepseek-v3", "fp8-block");
      auto c = wstest::openOrFail(dir);
      const std::string p = "model.layers.0.mlp.";
      const float scales[] = {1.5f, -2.0f, 0.0f, 1e-40f, INFINITY, NAN, 1e38f, 3.0f};
      for (uint64_t i = 0; i < 8; ++i) patch(*c, p + "down_proj.weight_scale_inv", i, scales[i]);
      patch(*c, p + "gate_proj.weight", 512 * 256 - 1, 0x7F);
      patch(*c, p + "up_proj.weight", 512 * 256 - 1, 0xFF);
      const std::string a = "model.layers.0.self_attn.";
      const uint64_t oCols = tensorNamed(*c, a + "o_proj.weight").shape[1], qCols = tensorNamed(*c, a + "q_b_proj.weight").shape[1];
      for (uint64_t r = 0; r < 128; ++r) {
        std::vector<uint8_t> negative(std::min<uint64_t>(128, oCols)), positive(std::min<uint64_t>(128, qCols));
        for (size_t j = 0; j < negative.size(); ++j) negative[j] = uint8_t(0x80 | ((r * 7 + j * 3) % 0x7F));  // no 0xFF (NaN)
        for (size_t j = 0; j < positive.size(); ++j) positive[j] = uint8_t(1 + (r * 5 + j * 11) % 0x7E);   // no 0x7F (NaN)
        patchBytes(*c, a + "o_proj.weight", r * oCols, negative);
        patchBytes(*c, a + "q_b_proj.weight", r * qCols, positive);
      }
      c = wstest::openOrFail(dir);
      for (const char* w : {"o_proj.weight", "q_b_proj.weight"}) {
        const Told t = compareTensor(*c, a + w, 0, 128);  // the one-signed block alone: no other block's ends mask its own
        QCOMPARE(t.fromCodes, t.values);
      }
      const Told down = compareTensor(*c, p + "down_proj.weight");
      QCOMPARE(down.fromCodes, uint64_t(128 * 512));
      for (const char* w : {"gate_proj.weight", "up_proj.weight"}) {
        const Told t = compareTensor(*c, p + w);
        QCOMPARE(t.fromCodes, uint64_t(384 * 256));
      }
    } catch (const std::exception& e) {
      QFAIL(e.what());
    }
  }

  // int4 (compressed-tensors, 32-code groups, BF16 scales): gate_proj row 0's group scales hold
  // NaN and infinities, row 2's one overflowing scale (3e38 x 8); row 1's are zero, negative and
  // subnormal, which the codes' extremes still tell.
  void int4EdgeCases() {
    wstest::TempDir d;
    try {
      const std::string dir = synthesized(d, "kimi-k2", "int4-ct");
      auto c = wstest::openOrFail(dir);
      const std::string s = "model.layers.1.mlp.experts.0.gate_proj.weight_scale";
      const float row0[] = {0.0f, -0.0125f, INFINITY, NAN, 3e38f, -INFINITY, 2.0f, 0.5f};
      const float row1[] = {0.0f, -0.5f, 0x1p-130f, 0.25f, -0.0f, 1.0f, -3.0f, 0x1p-100f};
      for (uint64_t i = 0; i < 8; ++i) patch(*c, s, i, row0[i]), patch(*c, s, 8 + i, row1[i]);
      patch(*c, s, 16, 0x1.fep127f);  // BF16's largest finite: times 8 it overflows F32
      c = wstest::openOrFail(dir);
      const Told t = compareTensor(*c, "model.layers.1.mlp.experts.0.gate_proj.weight_packed");
      QCOMPARE(t.fromCodes, t.values - 2 * 256);
    } catch (const std::exception& e) {
      QFAIL(e.what());
    }
  }

  // Plain BF16 and F16 tensors, told from the bounds of their codes. Rows of 37 random codes:
  // 0 positive only, 1 negative only (each with its zero and subnormals), 2 both signs, 3 zeros
  // of both signs, 4 only -0, 5 the largest finite magnitudes, then 6 +Inf, 7 -Inf, 8 a positive
  // NaN and 9 a negative one among finite codes of the other sign and their own, which are
  // decoded. Each row alone, and the whole tensor in runs of rows.
  void sixteenBitFloatEdgeCases_data() {
    QTest::addColumn<QString>("dtype");
    QTest::addColumn<int>("inf");  // the code of +Inf; NaN codes lie above it
    QTest::addColumn<int>("largest");
    QTest::newRow("BF16") << "BF16" << 0x7F80 << 0x7F7F;
    QTest::newRow("F16") << "F16" << 0x7C00 << 0x7BFF;
  }
  void sixteenBitFloatEdgeCases() {
    QFETCH(QString, dtype);
    QFETCH(int, inf);
    QFETCH(int, largest);
    const uint64_t rows = 10, cols = 37;
    std::mt19937 rng(16);
    auto finite = [&](bool negative) { return uint16_t((rng() % uint32_t(inf)) | (negative ? 0x8000 : 0)); };
    std::vector<uint16_t> codes(rows * cols);
    for (uint64_t r = 0; r < rows; ++r) {
      uint16_t* row = codes.data() + r * cols;
      for (uint64_t j = 0; j < cols; ++j) row[j] = finite(r == 1 || (r != 0 && rng() % 2));
      if (r <= 1) row[3] = uint16_t(r ? 0x8000 : 0), row[9] = uint16_t(1 | (r ? 0x8000 : 0));  // a zero and the least subnormal
      if (r == 3)
        for (uint64_t j = 0; j < cols; ++j) row[j] = uint16_t(rng() % 2 ? 0x8000 : 0);
      if (r == 4) std::fill(row, row + cols, uint16_t(0x8000));
      if (r == 5) row[0] = uint16_t(largest), row[cols - 1] = uint16_t(largest | 0x8000);
      if (r == 6) row[rng() % cols] = uint16_t(inf);
      if (r == 7) row[rng() % cols] = uint16_t(inf | 0x8000);
      if (r == 8) row[rng() % cols] = uint16_t(inf + 1 + rng() % 0x3F);
      if (r == 9) row[rng() % cols] = uint16_t(inf | 0x8000 | (1 + rng() % 0x3F));
    }
    std::vector<uint8_t> bytes(codes.size() * 2);
    for (size_t i = 0; i < codes.size(); ++i) bytes[2 * i] = uint8_t(codes[i]), bytes[2 * i + 1] = uint8_t(codes[i] >> 8);
    wstest::TempDir d;
    const std::string name = "model.layers.0.mlp.down_proj.weight";
    wstest::SafetensorsBuilder().add(name, dtype.toStdString(), {rows, cols}, bytes).write(d.file("model.safetensors"));
    auto c = wstest::openOrFail(d.path());
    try {
      auto made = num::makeDecoder(*c, num::findLogical(*c, name).value());
      const auto& dec = *made.value();
      for (uint64_t r = 0; r < rows; ++r)
        for (bool pread : {false, true}) QCOMPARE(compareRange(dec, name, r, 1, 1, pread).fromCodes, r < 6 ? cols : 0);
      for (uint64_t chunk : {uint64_t(1), uint64_t(3), rows}) {
        const Told t = compareRange(dec, name, 0, rows, chunk, true);
        QCOMPARE(t.fromCodes, chunk == rows ? 0 : 6 * cols);  // runs of 3: rows 0-2 and 3-5 told, 6-8 and 9 decoded
      }
    } catch (const std::exception& e) {
      QFAIL(e.what());
    }
  }

  // Symmetric int4 rows of 8 groups and more (int4ProductRange's vector path takes 8 groups at a
  // time, the rest one by one), for 32-, 64- and 128-code groups. Codes are 6..9 but for a 0 and a
  // 15 at random places in some groups, so each end is one code wherever it sits. Row 0 holds a
  // NaN scale among the first 8 groups, row 1 an infinite one in the last group, row 2 one that
  // overflows (times 7); row 3 is zero and negative scales, row 4 subnormal ones.
  void symmetricInt4VectorRows_data() {
    QTest::addColumn<int>("group");
    QTest::addColumn<int>("groups");
    QTest::newRow("32-code groups, 11 a row") << 32 << 11;
    QTest::newRow("64-code groups, 9 a row") << 64 << 9;
    QTest::newRow("128-code groups, 16 a row") << 128 << 16;
    QTest::newRow("32-code groups, 3 a row") << 32 << 3;
  }
  void symmetricInt4VectorRows() {
    QFETCH(int, group);
    QFETCH(int, groups);
    const uint64_t rows = 8, cols = uint64_t(group) * uint64_t(groups);
    wstest::TempDir d;
    std::vector<uint8_t> packed(rows * cols / 2), scales(rows * uint64_t(groups) * 4);
    uint32_t x = 777;
    auto next = [&] { return uint8_t((x = x * 1103515245u + 12345u) >> 16); };
    std::vector<uint8_t> codes(rows * cols);
    for (auto& q : codes) q = uint8_t(6 + next() % 4);
    for (uint64_t g = 0; g < rows * uint64_t(groups); ++g) {
      if (next() % 2) codes[g * uint64_t(group) + next() % uint64_t(group)] = 15;
      if (next() % 2) codes[g * uint64_t(group) + next() % uint64_t(group)] = 0;
    }
    for (uint64_t i = 0; i < packed.size(); ++i) packed[i] = uint8_t(codes[2 * i] | codes[2 * i + 1] << 4);
    auto setScale = [&](uint64_t r, uint64_t g, float v) { std::memcpy(&scales[(r * uint64_t(groups) + g) * 4], &v, 4); };
    for (uint64_t r = 0; r < rows; ++r)
      for (uint64_t g = 0; g < uint64_t(groups); ++g) setScale(r, g, 0.001f * float(1 + next() % 50));
    setScale(0, 2, NAN);
    setScale(1, uint64_t(groups) - 1, INFINITY);
    setScale(2, 1, 3e38f);
    setScale(3, 0, 0.0f), setScale(3, 1, -0.5f), setScale(3, uint64_t(groups) - 1, -0.0f);
    setScale(4, 0, 0x1p-140f), setScale(4, uint64_t(groups) - 1, 0x1p-130f);
    const std::string p = "model.layers.0.mlp.experts.0.gate_proj.";
    wstest::SafetensorsBuilder()
        .add(p + "weight_packed", "I32", {rows, cols / 8}, packed)
        .add(p + "weight_scale", "F32", {rows, uint64_t(groups)}, scales)
        .add(p + "weight_shape", "I64", {2}, wstest::int64Bytes({int64_t(rows), int64_t(cols)}))
        .write(d.file("model.safetensors"));
    wstest::writeFile(d.file("config.json"), R"({"model_type":"deepseek_v3","hidden_size":)" + std::to_string(cols) + R"(,"moe_intermediate_size":8,
      "n_routed_experts":1,"num_hidden_layers":1,"quantization_config":{"quant_method":"compressed-tensors",
      "config_groups":{"g":{"weights":{"num_bits":4,"symmetric":true,"strategy":"group","group_size":)" + std::to_string(group) + "}}}}}");
    auto c = wstest::openOrFail(d.path());
    try {
      auto made = num::makeDecoder(*c, num::findLogical(*c, p + "weight_packed").value());
      const auto& dec = made.value();
      // Row by row: over the whole tensor, row 3's large negative scale would hide the others.
      for (uint64_t r = 0; r < rows; ++r)
        for (bool pread : {false, true}) {
          const Told t = compareRange(*dec, p + "weight_packed", r, 1, 1, pread);
          QCOMPARE(t.fromCodes, r < 3 ? 0 : cols);  // rows 0-2 decoded
        }
      // And across rows, where each row starts from the ends of the rows before (the groups that
      // cannot widen them are passed over): a row at a time and all at once, from row 3 (all
      // finite: one run of groups) and from row 0 (not: row by row, rows 0-2 decoded).
      for (uint64_t first : {uint64_t(0), uint64_t(3)})
        for (uint64_t chunk : {uint64_t(1), rows})
          QCOMPARE(compareRange(*dec, p + "weight_packed", first, rows - first, chunk, true).fromCodes, (rows - 3) * cols);
    } catch (const std::exception& e) {
      QFAIL(e.what());
    }
  }

  // int4ProductRange against every product computed one by one, from ends known before: empty,
  // those of the row itself, of its first groups, and ends that hold some groups' bounds but not
  // others'. Groups whose bounds lie inside the known ends are passed over, so a wrong bound or
  // comparison misses a group that widens them. Codes 6..9 with a 0 and a 15 in some groups:
  // how far a group reaches depends on its codes, not only its scale. Scales of both signs over
  // a wide span, with zeros, subnormals and some that overflow.
  // Scales as floats, and as BF16 codes taken as stored (the tested scales rounded to BF16 first).
  void int4ProductRangeFromKnownEnds_data() {
    QTest::addColumn<int>("groupBytes");
    QTest::addColumn<bool>("bf16");
    for (bool bf16 : {false, true}) {
      const char* as = bf16 ? ", BF16 scales" : ", float scales";
      QTest::newRow((std::string("32-code groups") + as).c_str()) << 16 << bf16;
      QTest::newRow((std::string("64-code groups") + as).c_str()) << 32 << bf16;
      QTest::newRow((std::string("128-code groups") + as).c_str()) << 64 << bf16;
    }
  }
  void int4ProductRangeFromKnownEnds() {
    QFETCH(int, groupBytes);
    QFETCH(bool, bf16);
    const uint64_t gb = uint64_t(groupBytes);
    uint32_t x = 4242;
    auto next = [&] { return (x = x * 1103515245u + 12345u) >> 8; };
    const int zero = 8;
    for (int trial = 0; trial < 400; ++trial) {
      // Mostly short rows; some over one or more of the function's 1024-group blocks, exactly so
      // or with a tail.
      const uint64_t groups = trial == 1 ? 1024 : trial == 2 ? 2048 + 8 : trial == 3 ? 1024 + 7 : trial % 10 == 0 ? 1000 + next() % 2200 : 1 + next() % 48;
      std::vector<uint8_t> codes(groups * gb * 2), packed(groups * gb);
      for (auto& c : codes) c = uint8_t(6 + next() % 4);
      for (uint64_t g = 0; g < groups; ++g) {
        if (next() % 3 == 0) codes[g * gb * 2 + next() % (gb * 2)] = 15;
        if (next() % 3 == 0) codes[g * gb * 2 + next() % (gb * 2)] = 0;
      }
      for (uint64_t i = 0; i < packed.size(); ++i) packed[i] = uint8_t(codes[2 * i] | codes[2 * i + 1] << 4);
      std::vector<float> scales(groups);
      for (auto& s : scales) {
        const uint32_t kind = next() % 40;
        s = kind == 0 ? 0.0f : kind == 1 ? -0.0f : kind == 2 ? 0x1p-140f : kind == 3 && trial % 4 == 0 ? 3e38f : std::ldexp(float(1 + next() % 255), -int(next() % 12) - 8);
        if (next() % 4 == 0) s = -s;
      }
      // In a long row, one group reaches past all the others: at a block's last groups, a
      // block's first, or the row's last. Skipping any group there changes the answer.
      if (groups > 48) {
        const uint64_t at[] = {1016 + next() % 8, 1024, groups - 1 - next() % 8};
        const uint64_t g = std::min(groups - 1, at[next() % 3]);
        scales[g] = next() % 2 ? -1.0f : 1.0f;
        codes[g * gb * 2] = 15, codes[g * gb * 2 + 1] = 0;
        packed[g * gb] = uint8_t(15 | 0 << 4);
      }
      // BF16: each scale rounded to its nearest BF16 code (3e38 stays finite and overflows times
      // 7), stored little-endian one byte past an aligned start.
      std::vector<uint8_t> stored(1 + 2 * groups);
      for (uint64_t g = 0; bf16 && g < groups; ++g) {
        const uint16_t code = num::hdToBf16Rne(scales[g]);
        stored[1 + 2 * g] = uint8_t(code), stored[2 + 2 * g] = uint8_t(code >> 8);
        scales[g] = std::bit_cast<float>(uint32_t(code) << 16);
      }
      const num::GroupScales given = bf16 ? num::GroupScales::storedBf16(stored.data() + 1) : num::GroupScales(scales.data());
      // Each group's ends, the row's, and whether every product is finite.
      std::vector<float> groupLo(groups, INFINITY), groupHi(groups, -INFINITY);
      bool finite = true;
      for (uint64_t g = 0; g < groups; ++g)
        for (uint64_t j = 0; j < gb * 2; ++j) {
          const float v = float(int(codes[g * gb * 2 + j]) - zero) * scales[g];
          finite = finite && std::isfinite(v);
          groupLo[g] = std::min(groupLo[g], v), groupHi[g] = std::max(groupHi[g], v);
        }
      auto endsOf = [&](uint64_t from, uint64_t to) {
        num::ProductRange r;
        for (uint64_t g = from; g < to; ++g) r.lo = std::min(r.lo, groupLo[g]), r.hi = std::max(r.hi, groupHi[g]);
        return r;
      };
      const num::ProductRange all = endsOf(0, groups), firstFew = endsOf(0, std::min<uint64_t>(groups, 1 + next() % 9));
      const float shrink = float(1 + next() % 4) / 4;
      const num::ProductRange knowns[] = {{}, all, firstFew, {all.lo * shrink, all.hi * shrink}, {all.lo / 2, all.hi * 2}};
      for (const num::ProductRange& known : knowns) {
        if (known.lo <= known.hi && !(std::isfinite(known.lo) && std::isfinite(known.hi))) continue;  // Extent's ends are finite
        const num::ProductRange got = num::int4ProductRange(packed.data(), groups, gb, zero, given, known);
        const std::string at = "trial " + std::to_string(trial) + ", " + std::to_string(groups) + " groups, known " + std::to_string(known.lo) + ".." + std::to_string(known.hi);
        QVERIFY2(got.finite == finite, at.c_str());
        if (!finite) continue;
        const float lo = std::min(all.lo, known.lo), hi = std::max(all.hi, known.hi);
        QVERIFY2(got.lo == lo && got.hi == hi, (at + ": got " + std::to_string(got.lo) + ".." + std::to_string(got.hi) + ", want " + std::to_string(lo) + ".." + std::to_string(hi)).c_str());
      }
    }
  }

  // The two runs of 16-bit codes a tally visits (widenCode16Bounds): on random runs of every
  // length up to past two vectors (the scalar tail), of positive codes only, negative only and
  // both, with the four codes at the ends of the halves (+0, 0x7FFF, -0, 0xFFFF) among them,
  // widened over two calls, each bound against the codes themselves.
  void code16BoundsOfRandomRuns() {
    std::mt19937 rng(23);
    for (int trial = 0; trial < 3000; ++trial) {
      const int signs = trial % 3;  // 0 positive, 1 negative, 2 both
      auto draw = [&] {
        uint16_t c = uint16_t(rng() % 5 == 0 ? std::array<uint16_t, 4>{0x0000, 0x7FFF, 0x8000, 0xFFFF}[rng() % 4] : rng());
        if (signs == 0) c &= 0x7FFF;
        if (signs == 1) c |= 0x8000;
        return c;
      };
      num::Code16Bounds b;
      std::vector<uint16_t> all;
      for (int call = 0; call < 2; ++call) {
        std::vector<uint16_t> codes(rng() % 40);
        for (auto& c : codes) c = draw();
        std::vector<uint8_t> raw(2 * codes.size());
        for (size_t i = 0; i < codes.size(); ++i) raw[2 * i] = uint8_t(codes[i]), raw[2 * i + 1] = uint8_t(codes[i] >> 8);
        num::widenCode16Bounds(raw.data(), codes.size(), b);
        all.insert(all.end(), codes.begin(), codes.end());
      }
      uint16_t posLo = 0xFFFF, posHi = 0, negLo = 0xFFFF, negHi = 0;
      bool pos = false, neg = false;
      for (uint16_t c : all) {
        if (c < 0x8000) pos = true, posLo = std::min(posLo, c), posHi = std::max(posHi, c);
        else neg = true, negLo = std::min(negLo, c), negHi = std::max(negHi, c);
      }
      const std::string at = "trial " + std::to_string(trial) + ", " + std::to_string(all.size()) + " codes";
      QVERIFY2(b.anyPositive() == pos && b.anyNegative() == neg, at.c_str());
      if (pos) QVERIFY2(b.umin == posLo && uint16_t(b.smax) == posHi, at.c_str());
      if (neg) QVERIFY2(uint16_t(b.smin) == negLo && b.umax == negHi, at.c_str());
    }
  }

  // Asymmetric int4 (compressed-tensors zero points packed eight to an I32 along the rows, 32-code
  // groups) and RAWINT4 bytes, over random codes: the zero point moves both ends.
  void zeroPointsAndRawInt4() {
    wstest::TempDir d;
    std::vector<uint8_t> scales(16 * 2 * 4), zeros(2 * 2 * 4), packed(16 * 8 * 4), raw(16 * 32);
    uint32_t x = 12345;
    auto next = [&] { return uint8_t((x = x * 1103515245u + 12345u) >> 16); };
    for (auto& b : packed) b = next();
    for (auto& b : zeros) b = next();
    for (auto& b : raw) b = next();
    for (size_t i = 0; i < scales.size() / 4; ++i) {
      const float v = (i % 3 == 0 ? -0.01f : 0.02f) * float(i + 1);
      std::memcpy(&scales[i * 4], &v, 4);
    }
    const std::string p = "model.layers.0.mlp.experts.0.";
    wstest::SafetensorsBuilder()
        .add(p + "down_proj.weight_packed", "I32", {16, 8}, packed)
        .add(p + "down_proj.weight_scale", "F32", {16, 2}, scales)
        .add(p + "down_proj.weight_zero_point", "I32", {2, 2}, zeros)
        .add(p + "down_proj.weight_shape", "I64", {2}, wstest::int64Bytes({16, 64}))
        .add("model.layers.0.mlp.experts.1.gate_proj.weight_packed", "U8", {16, 32}, raw)
        .add("model.layers.0.mlp.experts.1.gate_proj.weight_scale", "F32", {16, 2}, scales)
        .write(d.file("model.safetensors"));
    wstest::writeFile(d.file("config.json"), std::string(R"({"model_type":"deepseek_v3","hidden_size":64,"moe_intermediate_size":16,
      "n_routed_experts":2,"num_hidden_layers":1,"quantization_config":{"quant_method":"compressed-tensors",
      "config_groups":{"g":{"weights":{"num_bits":4,"symmetric":false,"strategy":"group","group_size":32}}}}})"));
    auto c = wstest::openOrFail(d.path());
    try {
      for (const char* w : {"model.layers.0.mlp.experts.0.down_proj.weight_packed", "model.layers.0.mlp.experts.1.gate_proj.weight_packed"}) {
        const Told t = compareTensor(*c, w);
        QCOMPARE(t.fromCodes, t.values);
      }
    } catch (const std::exception& e) {
      QFAIL(e.what());
    }
  }
};

QTEST_GUILESS_MAIN(TstValueExtent)
#include "tst_value_extent.moc"
