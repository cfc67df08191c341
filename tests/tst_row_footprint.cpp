// The stored bytes rowFootprint names for a decode of some rows are all that decode reads: with
// every other byte of the tensor's members overwritten, the rows decode to the same bits as
// before. What a remote preview tile or `dequant --rows` fetches rests on it (remote_reads.h).
#include <QtTest>

#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>

#include "core/model/scheme_table.h"
#include "core/numerics/row_footprint.h"
#include "core/synth/synth.h"
#include "test_support.h"

using namespace ws;
namespace fs = std::filesystem;

namespace {

// Rows of a decoder of `shape`: across the middle, across an FP8 128-row block boundary, across
// the last row of expert 0 into expert 1, and expert 1 whole.
std::vector<num::DequantRequest> requestsFor(uint32_t logical, const std::vector<uint64_t>& shape) {
  uint64_t rows = 1;
  for (size_t i = 0; i + 1 < shape.size(); ++i) rows *= shape[i];
  std::vector<num::DequantRequest> out;
  auto add = [&](int64_t expert, uint64_t a, uint64_t b) { out.push_back({logical, expert, a, b, num::Numerics::Reference}); };
  if (rows >= 2) add(-1, rows / 2 - 1, std::min(rows, rows / 2 + 2));
  if (rows > 130) add(-1, 127, 130);
  if (shape.size() >= 3 && shape[0] >= 2) {
    const uint64_t perExpert = rows / shape[0];
    add(-1, perExpert - 1, perExpert + 1);
    add(1, 0, UINT64_MAX);
  }
  return out;
}

void writeAt(const std::string& path, uint64_t offset, const std::vector<uint8_t>& bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error("cannot open " + path + " for writing");
  const ssize_t w = ::pwrite(fd, bytes.data(), bytes.size(), off_t(offset));
  ::close(fd);
  if (w != ssize_t(bytes.size())) throw std::runtime_error("cannot write " + path);
}

}  // namespace

class TstRowFootprint : public QObject {
  Q_OBJECT

 private slots:
  // Real writers' files (transformers, llmcompressor / compressed-tensors, ggml) and synth schemes
  // the fixtures lack (KTransformers NUMA parts, ModelOpt NVFP4, gpt-oss MXFP4, MLX-less int4-ct).
  void everyByteARowDecodeReadsIsNamed_data() {
    QTest::addColumn<QString>("source");  // fixture:REL, ct:NAME or synth:LIKE:SCHEME
    for (const char* f : {"hf/qwen3_moe", "hf/qwen3_moe_fp8", "hf/deepseek_v3", "hf/qwen3_vl_moe", "gguf/tiny-qwen3moe-kquants.gguf"})
      QTest::newRow(f) << QString("fixture:") + f;
    for (const char* n : {"w4a16", "w4a16-asym", "w8a16", "fp8-block", "fp8-dynamic", "nvfp4a16", "mxfp4a16", "w4a16-g32-experts"})
      QTest::newRow((std::string("compressed-tensors ") + n).c_str()) << QString("ct:") + n;
    for (const char* s : {"qwen3-moe:kt-int8", "qwen3-moe:nvfp4", "gpt-oss:mxfp4", "qwen3-moe:int4-ct"})
      QTest::newRow((std::string("synth ") + s).c_str()) << QString("synth:") + s;
    // ik_llama.cpp's own types: row scales before the blocks, and rows interleaved in groups of 4 or 8.
    QTest::newRow("ik_llama.cpp types") << QString("ik:ik-types.gguf");
  }

  void everyByteARowDecodeReadsIsNamed() {
    QFETCH(QString, source);
    const QStringList part = source.split(':');
    wstest::TempDir dir;
    std::string path = dir.file("ckpt");
    if (part[0] == "synth") {
      synth::Options o;
      o.like = part[1].toStdString();
      o.scheme = part[2].toStdString();
      o.out = path;
      auto w = synth::write(o);
      QVERIFY2(w.ok(), w.ok() ? "" : w.error().describe().c_str());
    } else {
      const std::string from = part[0] == "fixture" ? wstest::fixture(part[1].toStdString())
                               : part[0] == "ik"    ? wstest::sourceDir() + "/tests/data/ik_llama/" + part[1].toStdString()
                                                    : wstest::sourceDir() + "/tests/data/compressed_tensors/" + part[1].toStdString();
      if (fs::is_directory(from)) {
        fs::copy(from, path, fs::copy_options::recursive);
      } else {
        path += ".gguf";
        fs::copy_file(from, path);
      }
    }
    // The copy is written while it is open: the decoders read its mapping, which sees the writes.
    auto c = wstest::openOrFail(path);
    int cases = 0, sliced = 0, ktCases = 0;
    for (uint32_t li = 0; li < c->logical.size(); ++li) {
      if (c->logical[li].weight < 0) continue;
      auto layout = num::makeLayoutDecoder(*c, li);
      if (!layout) continue;  // no decoder reads it (an integer buffer): nothing is fetched for one either
      const TensorRecord& w = c->tensors[uint32_t(c->logical[li].weight)];
      const bool kt = schemeInfo(c->logical[li].scheme).decoder == DecoderKind::Kt;
      for (const num::DequantRequest& req : requestsFor(li, layout.value()->shape())) {
        const std::string what = c->logical[li].name + " expert " + std::to_string(req.expert) + " rows " + std::to_string(req.rowBegin) + ":" +
                                 std::to_string(req.rowEnd);
        auto before = num::dequantize(*c, req);
        QVERIFY2(before.ok(), (what + ": " + (before.ok() ? "" : before.error().describe())).c_str());
        const auto spans = num::rowFootprint(*c, req);
        // Every byte of every member outside the spans overwritten, the decode repeated, then
        // the bytes put back.
        std::vector<std::pair<const TensorRecord*, std::vector<uint8_t>>> saved;
        uint64_t weightSpan = 0;
        for (uint32_t m : c->logical[li].members) {
          const TensorRecord& t = c->tensors[m];
          if (!t.bytes) continue;
          const uint8_t* at = c->files[t.file].map->bytes().data() + t.offset;
          std::vector<uint8_t> original(at, at + t.bytes), poisoned(t.bytes, 0xA5);
          for (const auto& s : spans) {
            if (s.tensor != m) continue;
            QVERIFY2(s.offset >= t.offset && s.offset + s.bytes <= t.offset + t.bytes, (what + ": a span outside its member " + t.name).c_str());
            std::memcpy(poisoned.data() + (s.offset - t.offset), original.data() + (s.offset - t.offset), s.bytes);
            if (&t == &w) weightSpan += s.bytes;
          }
          writeAt(c->files[t.file].path, t.offset, poisoned);
          saved.emplace_back(&t, std::move(original));
        }
        auto after = num::dequantize(*c, req);
        for (const auto& [t, bytes] : saved) writeAt(c->files[t->file].path, t->offset, bytes);
        QVERIFY2(after.ok(), (what + ": " + (after.ok() ? "" : after.error().describe())).c_str());
        QCOMPARE(after.value().values.size(), before.value().values.size());
        QVERIFY2(std::memcmp(after.value().values.data(), before.value().values.data(), before.value().values.size() * 4) == 0,
                 (what + ": decodes differently with only the footprint's bytes").c_str());
        // The weight's span is exactly the selected rows' bytes (KTransformers' parts are named
        // whole; an interleaved type's rows come in whole groups).
        const num::Selection sel = num::selectRows(*layout.value(), req, c->logical[li].name);
        const uint64_t rows = layout.value()->rows(), R = w.dtype->rowInterleave;
        const uint64_t spanRows = (sel.firstRow + sel.rows + R - 1) / R * R - sel.firstRow / R * R;
        if (!kt && rows && w.bytes % rows == 0) QCOMPARE(weightSpan, spanRows * (w.bytes / rows));
        ++cases;
        if (kt) {
          ++ktCases;
          QCOMPARE(weightSpan, w.bytes);
        } else if (weightSpan < w.bytes) {
          ++sliced;
        }
      }
    }
    QVERIFY2(cases > 0, "no tensor was tried");
    QVERIFY2(sliced > 0, "no footprint was smaller than its tensor");
    if (source.contains("kt-")) QVERIFY2(ktCases > 0, "no KTransformers expert was tried");
  }
};

QTEST_GUILESS_MAIN(TstRowFootprint)
#include "tst_row_footprint.moc"
