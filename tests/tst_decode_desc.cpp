// The element formulas the CUDA kernels run (decode_element.h), evaluated on the CPU, equal the
// CPU decoders bit for bit on every tensor of every fixture and of a checkpoint per scheme, so
// the GPU can differ from the CPU reference only in IEEE arithmetic, which it does not.
// GGUF blocks are the exception to "independent": the CPU decoder and the block kernel call the
// same block formulas (gguf_block_formulas.h), so against the CPU decoder a GGUF check proves the
// grid's indexing only; the formulas themselves are checked against ggml's own output
// (ggufGridEqualsGgmlsOutput) and gguf-py's (tests/scripts/reference_dequant.py).
#include <QtTest>

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <random>
#include <set>
#include <tuple>

#include "core/numerics/decode_element.h"
#include "core/numerics/dequant.h"
#include "core/numerics/float_formats.h"
#include "core/numerics/gguf_blocks.h"
#include "core/numerics/kernel_threads.h"
#include "core/numerics/row_footprint.h"
#include "core/synth/synth.h"
#include "corpus_support.h"
#include "device_corpus.h"
#include "test_paths.h"
#include "test_support.h"

using namespace ws;
namespace fs = std::filesystem;

namespace {

// Returns the number of elements compared; fails the test on the first difference.
uint64_t compareAll(const Checkpoint& c) {
  uint64_t n = 0;
  for (uint32_t li = 0; li < c.logical.size(); ++li) {
    auto dec = num::makeDecoder(c, li);
    if (!dec) continue;
    const auto& d = *dec.value();
    std::vector<float> want(d.rows() * d.cols());
    d.decode(0, d.rows(), want.data());
    const num::DecodeDesc desc = d.describe();
    if (desc.kind == num::DescKind::GgufBlocks) {
      std::vector<float> block(desc.blockElems);
      for (uint64_t b = 0; b < want.size() / desc.blockElems; ++b) {
        num::decodeGgufBlock(desc, b, block.data());
        for (uint32_t k = 0; k < desc.blockElems; ++k)
          if (!num::sameBitsOrNan(block[k], want[b * desc.blockElems + k])) throw std::runtime_error(c.logical[li].name + ": block " + std::to_string(b) + " differs");
      }
    } else {
      for (uint64_t r = 0; r < d.rows(); ++r)
        for (uint64_t j = 0; j < d.cols(); ++j)
          if (!num::sameBitsOrNan(num::decodeElement(desc, r, j), want[r * d.cols() + j]))
            throw std::runtime_error(c.logical[li].name + " (" + c.logical[li].schemeName + "): element (" + std::to_string(r) + ", " + std::to_string(j) + ") differs");
    }
    n += want.size();
  }
  return n;
}


// The kernels' per-thread bodies (kernel_threads.h) run over their whole launch grid - the real
// one and a tiny one whose threads stride over many elements - for the whole tensor, a row range
// starting mid-tensor and the last row, F32 and BF16, equal the CPU decoders bit for bit.
// Returns the number of elements compared; throws on the first difference.
std::map<num::Body, uint64_t> bodiesChecked;  // tensors each 16-a-thread body was checked on

uint64_t compareGrids(const Checkpoint& c) {
  uint64_t n = 0;
  for (uint32_t li = 0; li < c.logical.size(); ++li) {
    auto dec = num::makeDecoder(c, li);
    if (!dec) continue;
    const auto& d = *dec.value();
    if (!d.rows() || !d.cols()) continue;
    std::vector<float> want(d.rows() * d.cols());
    d.decode(0, d.rows(), want.data());
    const num::DecodeDesc desc = d.describe();
    const bool blocks = desc.kind == num::DescKind::GgufBlocks;
    const uint64_t perRow = blocks ? d.cols() / desc.blockElems : d.cols();  // work items per row
    auto where = [&](const char* what, uint64_t first, uint64_t i) {
      return c.logical[li].name + " (" + c.logical[li].schemeName + "), " + what + " from row " + std::to_string(first) + ": element " + std::to_string(i) + " differs";
    };
    const std::pair<uint64_t, uint64_t> ranges[] = {{0, d.rows()}, {d.rows() / 2, std::max<uint64_t>(1, d.rows() / 4)}, {d.rows() - 1, 1}};
    for (const auto& range : ranges) {
      const uint64_t first = range.first, rows = range.second;  // named copies: lambdas below capture them
      for (num::LaunchGrid g : {num::launchGrid(rows * perRow), num::LaunchGrid{3, 32}}) {
        std::vector<float> got(rows * d.cols(), -12345.0f);
        if (blocks) num::emulateGrid(g, [&](num::ThreadIndex t) { num::blocksThread(desc, first * perRow, rows * perRow, got.data(), t); });
        else num::emulateGrid(g, [&](num::ThreadIndex t) { num::elementsThread(desc, first, rows, got.data(), t); });
        for (uint64_t i = 0; i < got.size(); ++i)
          if (!num::sameBitsOrNan(got[i], want[first * d.cols() + i])) throw std::runtime_error(where("F32", first, i));
        n += got.size();
      }
    }
    // The bandwidth body the device launches for this tensor (num::bodyFor: FP8 block, FP4, 4-bit
    // integers, Q4_K - 16 values a thread), F32 and BF16, any row range, its own grid and a tiny one.
    const num::Body body = num::bodyFor(desc);
    if (body != num::Body::Elements && body != num::Body::Blocks) {
      for (const auto& range : ranges) {
        const uint64_t first = range.first, rows = range.second;
        for (num::LaunchGrid g : {num::launchGrid(num::workItems(body, desc, rows)), num::LaunchGrid{3, 32}}) {
          std::vector<float> got(rows * d.cols(), -12345.0f);
          std::vector<uint16_t> gotBf(rows * d.cols(), 0xDEAD);
          num::emulateDecode(body, desc, first, rows, got.data(), g);
          num::emulateDecode(body, desc, first, rows, gotBf.data(), g);
          for (uint64_t i = 0; i < got.size(); ++i) {
            if (!num::sameBitsOrNan(got[i], want[first * d.cols() + i])) throw std::runtime_error(where("F32 (16 a thread)", first, i));
            if (gotBf[i] != num::toBf16Rne(want[first * d.cols() + i])) throw std::runtime_error(where("BF16 (16 a thread)", first, i));
          }
          n += got.size();
        }
      }
      bodiesChecked[body]++;
    }
    // The generic BF16 body too (the one-thread-per-element or per-block kernel), whatever bodyFor picks.
    std::vector<uint16_t> bf(want.size(), 0xDEAD);
    const num::Body generic = blocks ? num::Body::Blocks : num::Body::Elements;
    num::emulateDecode(generic, desc, 0, d.rows(), bf.data(), num::launchGrid(num::workItems(generic, desc, d.rows())));
    for (uint64_t i = 0; i < bf.size(); ++i)
      if (bf[i] != num::toBf16Rne(want[i])) throw std::runtime_error(where("BF16", 0, i));
    // What the device copies for a row range is all its body reads: every region cut to its
    // num::regionRowSpan (as kernels/device_numerics.cu stages them) with the rest of it
    // poisoned, the body bodyFor picks over the range decodes the same bits, F32 and BF16 - over
    // an interleaved GGUF type's group boundary too (rows 1 .. rows-2).
    std::vector<std::pair<uint64_t, uint64_t>> staged(std::begin(ranges), std::end(ranges));
    if (d.rows() >= 3) staged.push_back({1, d.rows() - 2});
    for (const auto& range : staged) {
      const uint64_t first = range.first, rows = range.second;  // named copies: the lambda below captures them
      std::vector<std::vector<uint8_t>> copies;
      copies.reserve(8);  // the regions below point into these: no reallocation
      num::DecodeDesc cut = desc;
      auto restrictTo = [&](num::Region& r) {
        if (!r.data || !r.bytes) return;
        const num::ByteSpan span = num::regionRowSpan(desc, r, first, rows);
        copies.emplace_back(r.bytes, uint8_t(0xA5));
        std::memcpy(copies.back().data() + span.from, r.data + span.from, span.bytes);
        r.data = copies.back().data();
      };
      if (desc.kind != num::DescKind::Kt) restrictTo(cut.w);
      for (num::Region* r : {&cut.s, &cut.g, &cut.zp, &cut.gidx, &cut.nestedMap}) restrictTo(*r);
      std::vector<float> got(rows * d.cols(), -12345.0f);
      std::vector<uint16_t> gotBf(rows * d.cols(), 0xDEAD);
      num::emulateDecode(cut, first, rows, got.data());
      num::emulateDecode(cut, first, rows, gotBf.data());
      for (uint64_t i = 0; i < got.size(); ++i) {
        if (!num::sameBitsOrNan(got[i], want[first * d.cols() + i])) throw std::runtime_error(where("F32 from the staged spans", first, i));
        if (gotBf[i] != num::toBf16Rne(want[first * d.cols() + i])) throw std::runtime_error(where("BF16 from the staged spans", first, i));
      }
      n += got.size();
    }
  }
  return n;
}

std::vector<uint8_t> randomBytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> b(n);
  for (auto& x : b) x = uint8_t(rng());
  return b;
}

std::vector<uint8_t> floats(std::vector<float> v) {
  std::vector<uint8_t> b(v.size() * 4);
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

// The device corpus's rows (tests/device_corpus.h) by the writer that made them: each group has
// checks of its own below, and restOfTheDeviceCorpus takes the rows of none.
constexpr std::string_view kIquants = "llama_cpp/iquants/", kLlmCompressor = "compressed_tensors/", kIkLlama = "ik_llama/", kLibraryQuant = "library_quant/";

bool inAGroup(std::string_view path) {
  for (std::string_view g : {kIquants, kLlmCompressor, kIkLlama, kLibraryQuant})
    if (path.substr(0, g.size()) == g) return true;
  return false;
}

// The tracked rows whose path starts with the group's, as a "path" column.
void deviceCorpusRows(std::string_view group) {
  QTest::addColumn<QString>("path");
  for (const auto& row : wstest::kDeviceCorpus)
    if (!row.carried && row.path.substr(0, group.size()) == group) QTest::newRow(std::string(row.path).c_str()) << QString::fromUtf8(row.path.data(), qsizetype(row.path.size()));
}

std::string trackedData(const QString& path) { return wstest::trackedData(path.toStdString()); }

}  // namespace

class TstDecodeDesc : public QObject {
  Q_OBJECT
 private slots:
  // The launch geometry the kernels use: a thread per work item up to 65535 blocks of 256, none
  // for nothing (an empty grid is an invalid launch).
  // Past 2^32 elements: a [131072, 40960] FP8 block tensor (5.4e9 elements) written sparse, its
  // last rows and every scale real bytes. The CPU decoder, the per-element body and the 16-a-thread
  // body over their grids decode those rows to what the bytes written say (code x its block's
  // scale, worked out here), so no index wraps at 31 or 32 bits.
  void rowsPastTwoToThe32() {
    constexpr uint64_t M = 131072, N = 40960, gm = M / 128, gn = N / 128, first = M - 8, rows = 8;
    static_assert((M - 8) * N > (uint64_t(1) << 32));
    wstest::TempDir dir;
    const std::string path = dir.file("model.safetensors");
    const uint64_t wBytes = M * N, sBytes = gm * gn * 4;
    std::string header = "{\"model.layers.0.mlp.experts.0.down_proj.weight\":{\"dtype\":\"F8_E4M3\",\"shape\":[" + std::to_string(M) + "," + std::to_string(N) +
                         "],\"data_offsets\":[0," + std::to_string(wBytes) + "]},\"model.layers.0.mlp.experts.0.down_proj.weight_scale_inv\":{\"dtype\":\"F32\",\"shape\":[" +
                         std::to_string(gm) + "," + std::to_string(gn) + "],\"data_offsets\":[" + std::to_string(wBytes) + "," + std::to_string(wBytes + sBytes) + "]}}";
    header.append((8 - header.size() % 8) % 8, ' ');
    const uint64_t dataStart = 8 + header.size();
    std::vector<uint8_t> codes = randomBytes(rows * N, 31);
    for (auto& b : codes)
      if ((b & 0x7F) == 0x7F) b = 0x3C;  // no NaN codes: every value is checked against its formula
    std::vector<float> scales(gm * gn);
    std::mt19937 rng(7);
    for (auto& v : scales) v = std::ldexp(1.0f + float(rng() % 1000) / 1000.0f, -int(rng() % 12));
    {
      std::FILE* f = std::fopen(path.c_str(), "wb");
      QVERIFY(f);
      const uint64_t n = header.size();
      std::fwrite(&n, 8, 1, f);
      std::fwrite(header.data(), 1, header.size(), f);
      QCOMPARE(::ftruncate(fileno(f), off_t(dataStart + wBytes + sBytes)), 0);  // sparse: holes cost nothing
      QCOMPARE(::fseeko(f, off_t(dataStart + first * N), SEEK_SET), 0);
      std::fwrite(codes.data(), 1, codes.size(), f);
      QCOMPARE(::fseeko(f, off_t(dataStart + wBytes), SEEK_SET), 0);
      std::fwrite(scales.data(), 4, scales.size(), f);
      std::fclose(f);
    }
    auto c = wstest::openOrFail(path);
    QCOMPARE(c->logical[c->tensors[0].logical].schemeName, std::string("fp8-block"));
    auto dec = num::makeDecoder(*c, c->tensors[0].logical);
    QVERIFY(dec);
    std::vector<float> want(rows * N), cpu(rows * N);
    for (uint64_t r = 0; r < rows; ++r)
      for (uint64_t j = 0; j < N; ++j) want[r * N + j] = num::e4m3ToFloat(codes[r * N + j]) * scales[((first + r) / 128) * gn + j / 128];
    dec.value()->decode(first, rows, cpu.data());
    const num::DecodeDesc desc = dec.value()->describe();
    QVERIFY(num::fp8BlockVectorizable(desc));
    std::vector<float> perElement(rows * N, -1.0f), vec(rows * N, -1.0f);
    num::emulateGrid(num::launchGrid(rows * N), [&](num::ThreadIndex t) { num::elementsThread(desc, first, rows, perElement.data(), t); });
    num::emulateGrid(num::launchGrid(rows * N / 16), [&](num::ThreadIndex t) { num::fp8BlockVecThread(desc, first, rows, vec.data(), t); });
    for (uint64_t i = 0; i < want.size(); ++i) {
      if (!num::sameBitsOrNan(cpu[i], want[i]) || !num::sameBitsOrNan(perElement[i], want[i]) || !num::sameBitsOrNan(vec[i], want[i]))
        QFAIL(qPrintable(QString("element %1 of row %2: cpu %3, element body %4, vector body %5, want %6")
                             .arg(i % N).arg(first + i / N).arg(cpu[i]).arg(perElement[i]).arg(vec[i]).arg(want[i])));
    }
  }

  void launchGeometry() {
    QCOMPARE(num::launchGrid(0).blocks, 0u);
    QCOMPARE(num::launchGrid(1).blocks, 1u);
    QCOMPARE(num::launchGrid(256).blocks, 1u);
    QCOMPARE(num::launchGrid(257).blocks, 2u);
    QCOMPARE(num::launchGrid(uint64_t(1) << 40).blocks, 65535u);
  }

  // The GGUF block kernel's body over its grid, and the 16-values-a-thread body the device takes
  // for the type (Q4_K's, or the runs of the others), against what ggml itself wrote when it
  // dequantized each tensor of the fixture (tiny-qwen3moe-kquants.expected.gguf, F32).
  void ggufGridEqualsGgmlsOutput() {
    auto quant = wstest::openOrFail(wstest::fixture("gguf/tiny-qwen3moe-kquants.gguf"));
    auto expected = wstest::openOrFail(wstest::fixture("gguf/tiny-qwen3moe-kquants.expected.gguf"));
    int checked = 0;
    std::map<num::Body, int> bodies;  // tensors each body decoded
    for (const TensorRecord& t : quant->tensors) {
      auto dec = num::makeDecoder(*quant, t.logical);
      QVERIFY(dec.ok());
      const num::DecodeDesc desc = dec.value()->describe();
      if (desc.kind != num::DescKind::GgufBlocks) continue;
      const TensorRecord* e = expected->find(t.name);
      QVERIFY2(e && e->dtype->name == std::string("F32"), t.name.c_str());
      const uint64_t blocks = e->bytes / 4 / desc.blockElems;
      std::vector<float> got(blocks * desc.blockElems, -12345.0f);
      num::emulateGrid(num::launchGrid(blocks), [&](num::ThreadIndex th) { num::blocksThread(desc, 0, blocks, got.data(), th); });
      const uint8_t* want = expected->files[e->file].map->bytes().data() + e->offset;
      QVERIFY2(std::memcmp(got.data(), want, e->bytes) == 0, t.name.c_str());
      const num::Body body = num::bodyFor(desc);
      std::vector<float> runs(got.size(), -12345.0f);
      num::emulateDecode(desc, 0, runs.size() / desc.cols, runs.data());
      QVERIFY2(std::memcmp(runs.data(), want, e->bytes) == 0, (t.name + ": the 16-values-a-thread body").c_str());
      ++bodies[body];
      ++checked;
    }
    int quantized = 0;  // Q2_K..Q6_K, Q4_0..Q8_0 and MXFP4 tensors in the catalog
    for (const auto& t : quant->tensors) quantized += t.dtype->name[0] == 'Q' || t.dtype->name == std::string("MXFP4");
    QCOMPARE(checked, quantized);
    QCOMPARE(bodies.size(), size_t(2));  // every type takes a 16-values-a-thread body: Q4_K its own
    QVERIFY(bodies[num::Body::Q4kRuns] > 0 && bodies[num::Body::GgufRuns] > 0);
  }

  void fixtures_data() {
    QTest::addColumn<QString>("rel");
    for (const char* p : {"hf/qwen3_moe_fp8", "hf/mixtral", "hf/qwen3_vl_moe", "gguf/tiny-qwen3moe-kquants.gguf"}) QTest::newRow(p) << QString(p);
  }
  void fixtures() {
    QFETCH(QString, rel);
    auto c = wstest::openOrFail(wstest::fixture(rel.toStdString()));
    QVERIFY(compareAll(*c) > 0);
    bodiesChecked.clear();
    QVERIFY(compareGrids(*c) > 0);
    // Each 16-a-thread body meets a fixture written by its real writer.
    if (rel == "hf/qwen3_moe_fp8") QVERIFY(bodiesChecked[num::Body::Fp8Runs] > 0);
    if (rel == "gguf/tiny-qwen3moe-kquants.gguf") QVERIFY(bodiesChecked[num::Body::Q4kRuns] > 0 && bodiesChecked[num::Body::GgufRuns] > 0);
  }

  // The I-quants llama.cpp's llama-quantize wrote (tests/data/llama_cpp/iquants, one file per type):
  // the block kernel's body over its grid equals the CPU decoder, which reference_dequant.py part G
  // holds to ggml's own to_float.
  void llamaQuantizeIquants_data() { deviceCorpusRows(kIquants); }
  void llamaQuantizeIquants() {
    QFETCH(QString, path);
    auto c = wstest::openOrFail(trackedData(path));
    QVERIFY(compareAll(*c) > 0);
    QVERIFY(compareGrids(*c) > 0);
  }

  // What llmcompressor wrote (tests/data/compressed_tensors, one folder a scheme; the CPU decoders
  // are held to compressed-tensors' own decompressor there by reference_compressed_tensors): the
  // device formulas and bodies over their grids equal the CPU decoders - NVFP4 whose global scale
  // divides, int4 with and without zero points, int8, FP8 block and channel, MXFP4.
  void llmCompressorSchemes_data() { deviceCorpusRows(kLlmCompressor); }
  void llmCompressorSchemes() {
    QFETCH(QString, path);
    const QString scheme = path.section('/', -1);
    auto c = wstest::openOrFail(trackedData(path));
    QVERIFY(compareAll(*c) > 0);
    bodiesChecked.clear();
    QVERIFY(compareGrids(*c) > 0);
    if (scheme == "nvfp4a16") QVERIFY2(bodiesChecked[num::Body::Fp4Runs] > 0, "NVFP4 takes the 16-a-thread body");
    if (scheme.startsWith("w4a16")) QVERIFY2(bodiesChecked[num::Body::IntRuns] > 0, "int4 takes the 16-a-thread body");
  }

  // ik_llama.cpp's own types as its own quantizer wrote them (tests/data/ik_llama; the CPU decoders
  // are held to its to_float by reference_ik_llama): Q6_0, IQ2_K .. IQ6_K, and the types whose rows
  // each begin with a float or f16 scale (IQ2_KS, IQ3_KS, IQ4_KS, IQ4_KSS, IQ5_KS, IQ2_KL, IQ1_KT ..
  // IQ4_KT), the ternary IQ1_BN / IQ2_BN, and the row-interleaved _R4 / _R8 / _R16 types - the
  // device formula finds each block's row meta, and each row's group and place in it.
  void ikLlamaTypes_data() { deviceCorpusRows(kIkLlama); }
  void ikLlamaTypes() {
    QFETCH(QString, path);
    auto c = wstest::openOrFail(trackedData(path));
    QCOMPARE(compareAll(*c), uint64_t(26 * 16 * 512 + 22 * 2 * 8 * 512));  // all 48 tensors, every value
    QVERIFY(compareGrids(*c) > 0);
  }

  // What GPTQModel, AutoAWQ and bitsandbytes packed (tests/data/library_quant, one folder a scheme;
  // the CPU decoders are held to each library's own dequantization there by
  // reference_library_quant): the device formulas and bodies over their grids equal the CPU
  // decoders - GPTQ 2/3/4/8-bit, v1 and v2 zeros, act-order; AWQ GEMM and GEMV; NF4 and FP4 with and
  // without nested absmax, rounded to bf16 or f16; int8 rows.
  void libraryQuantSchemes_data() { deviceCorpusRows(kLibraryQuant); }
  void libraryQuantSchemes() {
    QFETCH(QString, path);
    auto c = wstest::openOrFail(trackedData(path));
    uint64_t quantized = 0;
    for (const auto& l : c->logical) quantized += schemeInfo(l.scheme).quantized;
    QCOMPARE(quantized, uint64_t(6));  // every expert projection: the scheme was recognised
    QVERIFY(compareAll(*c) > 0);
    QVERIFY(compareGrids(*c) > 0);
  }

  // The tiled transpose (32 x 32 tiles through shared memory, load and store phases) over its own
  // grid and over grids of 1 and 3 blocks that stride over many tiles, for every element size and
  // for shapes with partial edge tiles, equals the plain definition dst[m][c][r] = src[m][r][c].
  void tiledTransposeEqualsTheDefinition() {
    for (auto [mats, rows, cols] : {std::tuple{3, 37, 70}, std::tuple{1, 1, 1}, std::tuple{2, 32, 64}, std::tuple{1, 100, 33}, std::tuple{5, 7, 129}})
      for (uint32_t esz : {1u, 2u, 4u, 8u}) {
        const num::TransposeShape shape{uint64_t(mats), uint64_t(rows), uint64_t(cols)};
        const auto src = randomBytes(size_t(mats) * rows * cols * esz, uint32_t(rows * 131 + cols + esz));
        std::vector<uint8_t> want(src.size());
        for (int m = 0; m < mats; ++m)
          for (int r = 0; r < rows; ++r)
            for (int c = 0; c < cols; ++c)
              std::memcpy(&want[((size_t(m) * cols + c) * rows + r) * esz], &src[((size_t(m) * rows + r) * cols + c) * esz], esz);
        for (num::LaunchGrid g : {num::transposeGrid(shape), num::LaunchGrid{1, num::kTransposeThreads}, num::LaunchGrid{3, num::kTransposeThreads}}) {
          std::vector<uint8_t> got(src.size(), 0xCD);
          QVERIFY(num::emulateTranspose(src.data(), got.data(), shape, esz, g));
          QVERIFY2(got == want, (std::to_string(mats) + " x " + std::to_string(rows) + " x " + std::to_string(cols) + ", " + std::to_string(esz) + "-byte elements, " +
                                 std::to_string(g.blocks) + " blocks")
                                    .c_str());
        }
      }
    std::vector<uint8_t> three(3 * 4 * 4), out(three.size());
    QVERIFY(!num::emulateTranspose(three.data(), out.data(), num::TransposeShape{1, 4, 4}, 3, num::LaunchGrid{1, num::kTransposeThreads}));
  }

  // The device corpus's other rows - transformers' BF16 and FP8 block, ggml's K-quants and Q8_0,
  // MXFP4 experts in a GGUF, DeepSeek-V4's FP4 experts: the device formulas and bodies over their
  // grids equal the CPU decoders there too.
  void restOfTheDeviceCorpus_data() {
    QTest::addColumn<QString>("path");
    for (const auto& row : wstest::kDeviceCorpus)
      if (!inAGroup(row.path))
        QTest::newRow(std::string(row.path).c_str()) << (row.carried ? QString::fromStdString(wstest::fixture(std::string(row.path)))
                                                                     : QString::fromStdString(wstest::trackedData(row.path)));
  }
  void restOfTheDeviceCorpus() {
    QFETCH(QString, path);
    auto c = wstest::openOrFail(path.toStdString());
    QVERIFY(compareAll(*c) > 0);
    QVERIFY(compareGrids(*c) > 0);
  }

  // Stacked NVFP4 experts [E, M, N] with one global scale per expert (weight_global_scale [E], as
  // compressed-tensors writes fused experts): each expert's rows divide by their own global scale
  // in the device formulas and bodies too, not expert 0's.
  void stackedNvfp4GlobalScalePerExpert() {
    wstest::TempDir d;
    const uint64_t E = 3, M = 32, N = 64;
    std::mt19937 rng(7);
    wstest::StFile f;
    const std::string p = "model.layers.0.mlp.experts.gate_up_proj.";
    std::vector<uint8_t> codes(E * M * N / 2), scales(E * M * N / 16);
    for (auto& b : codes) b = uint8_t(rng());
    for (auto& b : scales) b = uint8_t(0x20 + rng() % 0x40);  // positive E4M3 scales, no NaN
    const float globals[3] = {2301.7f, 517.3f, 96.1f};
    std::vector<uint8_t> g(sizeof globals);
    std::memcpy(g.data(), globals, sizeof globals);
    f.tensors = {{p + "weight_packed", "U8", {E, M, N / 2}, codes}, {p + "weight_scale", "F8_E4M3", {E, M, N / 16}, scales}, {p + "weight_global_scale", "F32", {E}, g}};
    fs::create_directories(d.file("c"));
    wstest::writeSt(d.file("c/model.safetensors"), f);
    wstest::writeFile(d.file("c/config.json"), std::string(R"({"model_type":"qwen3_moe","num_hidden_layers":1,"num_experts":3,"quantization_config":{"quant_method":"compressed-tensors","format":"nvfp4-pack-quantized","config_groups":{"g":{"weights":{"num_bits":4,"type":"float","strategy":"tensor_group","group_size":16}}}}})"));
    auto c = wstest::openOrFail(d.file("c"));
    QCOMPARE(compareAll(*c), E * M * N);
    bodiesChecked.clear();
    QVERIFY(compareGrids(*c) > 0);
    QVERIFY2(bodiesChecked[num::Body::Fp4Runs] > 0, "NVFP4 takes the 16-a-thread body");
  }

  void everySynthScheme_data() {
    QTest::addColumn<QString>("like");
    QTest::addColumn<QString>("scheme");
    for (const auto& s : synth::schemes()) QTest::newRow(s.c_str()) << QString("deepseek-v3") << QString::fromStdString(s);
    QTest::newRow("gpt-oss mxfp4") << "gpt-oss" << "mxfp4";
    QTest::newRow("qwen3-vl-moe nvfp4") << "qwen3-vl-moe" << "nvfp4";
  }
  void everySynthScheme() {
    QFETCH(QString, like);
    QFETCH(QString, scheme);
    wstest::TempDir d;
    synth::Options o;
    o.like = like.toStdString();
    o.scheme = scheme.toStdString();
    o.out = d.file("c");
    QVERIFY(synth::write(o).ok());
    auto c = wstest::openOrFail(o.out);
    QVERIFY(compareAll(*c) > 0);
    bodiesChecked.clear();
    QVERIFY(compareGrids(*c) > 0);
    const std::map<QString, num::Body> fast = {{"fp8-block", num::Body::Fp8Runs}, {"nvfp4", num::Body::Fp4Runs}, {"mxfp4", num::Body::Fp4Runs},
                                               {"int4-ct", num::Body::IntRuns}, {"gguf-q4_k", num::Body::Q4kRuns}};
    if (fast.count(scheme)) QVERIFY2(bodiesChecked[fast.at(scheme)] > 0, "the scheme's 16-a-thread body was not taken");
  }

  // Every type written as runs of 16 (gguf_run_formulas.h) on random blocks - every scale byte,
  // fp16 field and code, NaN and infinity among them, and the types no GGUF fixture here holds
  // (Q8_1, Q8_K, IQ4_NL, IQ4_XS, TQ1_0, TQ2_0, Q1_0, Q2_0, GGUF NVFP4; reference_dequant.py part C
  // holds their CPU decoders to gguf-py), and ik_llama.cpp's types whose rows begin with a scale
  // (random row scales too): the device's 16-values-a-thread body over its grid and a
  // tiny one, any row range, F32 and BF16, and the block kernel that builds blocks from the runs,
  // equal the CPU reference's block formulas (ggml's loops) bit for bit, NaN payloads aside.
  void everyRunTypeOnRandomBlocks() {
    struct Row {
      int id;
      uint32_t elems, bytes, meta;
    };
#define WS_TYPE_ROW(id, fn, elems, bytes) Row{id, elems, bytes, 0},
#define WS_ROW_TYPE_ROW(id, fn, elems, bytes, meta) Row{id, elems, bytes, meta},
    for (const Row& row : {WS_GGUF_RUN_TYPES(WS_TYPE_ROW) WS_GGUF_ROW_RUN_TYPES(WS_ROW_TYPE_ROW)}) {
#undef WS_TYPE_ROW
#undef WS_ROW_TYPE_ROW
      // The tables' geometry is the type registry's (dtype.cpp, from ggml's block_* sizes and
      // ik_llama.cpp's row meta sizes).
      const int id = row.id;
      const DType* t = dtypeFromGgml(id);
      QVERIFY2(t && t->blockElems == row.elems && t->blockBytes == row.bytes && t->rowMetaBytes == row.meta, std::to_string(id).c_str());
      const uint64_t rows = 5, perRow = 3, nblocks = rows * perRow, cols = perRow * t->blockElems;
      const std::vector<uint8_t> bytes = randomBytes(rows * (row.meta + perRow * t->blockBytes), uint32_t(id));
      std::vector<float> want(nblocks * t->blockElems);
      if (row.meta) num::dequantizeGgufRows(*t, bytes.data(), rows, cols, want.data());
      else num::dequantizeGgufBlocks(*t, bytes.data(), nblocks, want.data());
      num::DecodeDesc d;
      d.kind = num::DescKind::GgufBlocks;
      d.rows = rows;
      d.cols = cols;
      d.w.data = bytes.data();
      d.w.bytes = bytes.size();
      d.ggmlId = id;
      d.blockElems = t->blockElems;
      d.blockBytes = t->blockBytes;
      d.rowMeta = row.meta;
      const num::Body fast = num::bodyFor(d);  // Q4_K has a body of its own
      QVERIFY2(fast == (id == 12 ? num::Body::Q4kRuns : num::Body::GgufRuns), std::string(t->name).c_str());
      const std::pair<uint64_t, uint64_t> ranges[] = {{0, rows}, {2, 2}, {rows - 1, 1}};
      for (const auto& [first, n] : ranges) {
        for (num::Body body : {fast, num::Body::GgufRuns, num::Body::Blocks}) {
          for (num::LaunchGrid g : {num::launchGrid(num::workItems(body, d, n)), num::LaunchGrid{3, 32}}) {
            std::vector<float> got(n * d.cols, -12345.0f);
            std::vector<uint16_t> gotBf(n * d.cols, 0xDEAD);
            num::emulateDecode(body, d, first, n, got.data(), g);
            num::emulateDecode(body, d, first, n, gotBf.data(), g);
            for (uint64_t i = 0; i < got.size(); ++i) {
              const float w = want[first * d.cols + i];
              const std::string where = std::string(t->name) + ", body " + std::to_string(int(body)) + ", rows from " + std::to_string(first) + ", element " + std::to_string(i);
              QVERIFY2(num::sameBitsOrNan(got[i], w), where.c_str());
              QVERIFY2(gotBf[i] == num::toBf16Rne(w), (where + " (BF16)").c_str());
            }
          }
        }
      }
    }
  }

  void handBuiltSchemes() {
    // The schemes synth does not write, over random codes: FP8 channel/tensor, E5M2, CT int8
    // with packed zero points and g_idx, RAWINT4, MLX 4-bit, KT INT4.
    wstest::TempDir d;
    const std::string p = "model.layers.0.mlp.experts.0.";
    std::vector<float> pos(64);
    for (size_t i = 0; i < pos.size(); ++i) pos[i] = 0.001f * float(i + 1);
    std::vector<uint8_t> gidx(64 * 4);
    for (int j = 0; j < 64; ++j) {
      int32_t g = (j * 7) % 4;
      std::memcpy(&gidx[size_t(j) * 4], &g, 4);
    }
    std::vector<uint8_t> shape = wstest::int64Bytes({16, 64});
    wstest::SafetensorsBuilder()
        .add(p + "gate_proj.weight", "F8_E4M3", {16, 64}, randomBytes(16 * 64, 1))
        .add(p + "gate_proj.weight_scale", "F32", {16, 1}, floats(std::vector<float>(pos.begin(), pos.begin() + 16)))
        .add(p + "up_proj.weight", "F8_E5M2", {16, 64}, randomBytes(16 * 64, 2))
        .add(p + "up_proj.weight_scale", "F32", {}, floats({0.5f}))
        .add(p + "down_proj.weight_packed", "I32", {16, 16}, randomBytes(16 * 16 * 4, 3))
        .add(p + "down_proj.weight_scale", "F32", {16, 4}, floats(pos))
        .add(p + "down_proj.weight_zero_point", "I32", {4, 4}, randomBytes(16 * 4, 4))
        .add(p + "down_proj.weight_g_idx", "I32", {64}, gidx)
        .add(p + "down_proj.weight_shape", "I64", {2}, shape)
        .add("model.layers.0.mlp.experts.1.gate_proj.weight_packed", "U8", {16, 32}, randomBytes(16 * 32, 5))
        .add("model.layers.0.mlp.experts.1.gate_proj.weight_scale", "F32", {16, 2}, floats(std::vector<float>(pos.begin(), pos.begin() + 32)))
        .add("model.layers.0.mlp.switch_mlp.up_proj.weight", "U32", {2, 16, 8}, randomBytes(2 * 16 * 8 * 4, 6))
        .add("model.layers.0.mlp.switch_mlp.up_proj.scales", "F32", {2, 16, 1}, floats(std::vector<float>(pos.begin(), pos.begin() + 32)))
        .add("model.layers.0.mlp.switch_mlp.up_proj.biases", "F32", {2, 16, 1}, floats(std::vector<float>(pos.begin(), pos.begin() + 32)))
        .add("blk.0.ffn_up_exps.0.numa.0.weight", "U8", {8 * 64 / 2}, randomBytes(8 * 32, 7))
        .add("blk.0.ffn_up_exps.0.numa.0.scale", "F32", {8}, floats(std::vector<float>(pos.begin(), pos.begin() + 8)))
        .add("blk.0.ffn_up_exps.0.numa.1.weight", "U8", {8 * 64 / 2}, randomBytes(8 * 32, 8))
        .add("blk.0.ffn_up_exps.0.numa.1.scale", "F32", {8}, floats(std::vector<float>(pos.begin() + 8, pos.begin() + 16)))
        .write(d.file("model.safetensors"));
    wstest::writeFile(d.file("config.json"), std::string(R"({"model_type":"deepseek_v3","hidden_size":64,"moe_intermediate_size":16,
      "n_routed_experts":2,"num_hidden_layers":1,"quantization_config":{"quant_method":"compressed-tensors",
      "config_groups":{"g":{"weights":{"num_bits":8,"symmetric":false,"strategy":"group","group_size":64}}}}})"));
    auto c = wstest::openOrFail(d.path());
    std::set<std::string> schemes;
    for (const auto& l : c->logical) schemes.insert(l.schemeName);
    for (const char* s : {"fp8-channel", "fp8-tensor", "int8-ct", "rawint4", "mlx-affine4", "kt-int4"}) QVERIFY2(schemes.count(s), s);
    QVERIFY(compareAll(*c) > 0);
    QVERIFY(compareGrids(*c) > 0);
  }
};

QTEST_GUILESS_MAIN(TstDecodeDesc)
#include "tst_decode_desc.moc"
