// Partial checkpoints as users meet them - a cut download, a header-only copy, one part of a
// split set - open for viewing with everything their headers describe, the tensors whose bytes
// are there readable and equal to the whole checkpoint's, and each problem named; strict opening
// (plan, load, diff) still refuses them.
#include <QtTest>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/formats/open_checkpoint.h"
#include "core/numerics/dequant.h"
#include "core/validate/validator.h"
#include "test_support.h"

using namespace ws;
namespace fs = std::filesystem;

namespace {

// The first `bytes` bytes of `from`, as a partial download leaves them.
void copyPrefix(const std::string& from, const std::string& to, uint64_t bytes) {
  std::ifstream in(from, std::ios::binary);
  std::vector<char> buf(bytes);
  in.read(buf.data(), std::streamsize(bytes));
  QVERIFY(uint64_t(in.gcount()) == bytes);
  std::ofstream(to, std::ios::binary).write(buf.data(), std::streamsize(bytes));
}

// A weight decodes with its companions (block-quantized GGUF has no other way), a companion
// on its own.
Result<std::unique_ptr<num::RowDecoder>> decoderOf(const Checkpoint& c, const TensorRecord& t) {
  return t.component == Component::Weight ? num::makeDecoder(c, t.logical) : num::makeStoredDecoder(c, t);
}

std::vector<float> decodeAll(num::RowDecoder& d) {
  std::vector<float> out(d.rows() * d.cols());
  d.decode(0, d.rows(), out.data());
  return out;
}

// `part` holds exactly `whole`'s tensors named `names` (all of them when empty) at the same
// offsets, marked cut exactly when their bytes end past `cutAt`. Whatever is all there decodes
// to the same bits as in `whole`; whatever needs a cut tensor refuses, naming it.
void compareWithWhole(const Checkpoint& part, const Checkpoint& whole, uint64_t cutAt, const std::set<std::string>& names = {}) {
  size_t expected = 0;
  for (const auto& w : whole.tensors) {
    if (!names.empty() && !names.count(w.name)) continue;
    ++expected;
    const TensorRecord* p = part.find(w.name);
    QVERIFY2(p, w.name.c_str());
    QCOMPARE(p->offset, w.offset);
    QCOMPARE(p->bytes, w.bytes);
    QCOMPARE(p->shape, w.shape);
    QCOMPARE(std::string(p->dtype->name), std::string(w.dtype->name));
    QCOMPARE(p->cut, w.offset + w.bytes > cutAt);
    const bool readable = p->component == Component::Weight ? !part.isCut(part.logical[p->logical]) : !p->cut;
    auto a = decoderOf(part, *p);
    if (!readable) {
      QVERIFY2(!a, w.name.c_str());
      QVERIFY2(a.error().message.find("past the end") != std::string::npos, a.error().message.c_str());
      QVERIFY2(part.find(a.error().tensor) && part.find(a.error().tensor)->cut, a.error().tensor.c_str());
      continue;
    }
    auto b = decoderOf(whole, w);
    if (!b) {  // a companion no decoder reads on its own (a GGUF one): nothing to compare
      QVERIFY2(!a, w.name.c_str());
      continue;
    }
    QVERIFY2(a, a ? "" : a.error().describe().c_str());
    const auto x = decodeAll(*a.value()), y = decodeAll(*b.value());
    QCOMPARE(x.size(), y.size());
    QVERIFY2(std::memcmp(x.data(), y.data(), x.size() * sizeof(float)) == 0, w.name.c_str());
  }
  QCOMPARE(part.tensors.size(), expected);
}

// The issue codes the opening recorded, in order.
std::vector<ErrorCode> issueCodes(const Checkpoint& c) {
  std::vector<ErrorCode> v;
  for (const auto& e : c.issues) v.push_back(e.code);
  return v;
}

}  // namespace

class TstPartialOpen : public QObject {
  Q_OBJECT

 private slots:
  void cutSafetensorsShowsItsWholeCatalog() {
    const std::string src = wstest::fixture("hf/mixtral/model.safetensors");
    auto whole = wstest::openOrFail(src);
    // Cut in the middle of some tensor: a partial download.
    const uint64_t cutAt = whole->files[0].dataStart + (whole->files[0].size - whole->files[0].dataStart) / 2 + 3;
    wstest::TempDir d;
    copyPrefix(src, d.file("model.safetensors"), cutAt);

    auto strict = openCheckpoint(d.file("model.safetensors"));
    QVERIFY(!strict);
    QCOMPARE(strict.error().code, ErrorCode::MetadataIncompleteBuffer);

    auto part = openCheckpointPartial(d.file("model.safetensors"));
    QVERIFY2(part, part ? "" : part.error().describe().c_str());
    const Checkpoint& c = *part.value();
    compareWithWhole(c, *whole, cutAt);
    QVERIFY(c.incomplete);
    QCOMPARE(issueCodes(c), std::vector<ErrorCode>{ErrorCode::MetadataIncompleteBuffer});
    // The finding names the first tensor (in file order) whose bytes are not all there.
    const TensorRecord* first = nullptr;
    for (const auto& t : c.tensors)
      if (t.cut && (!first || t.offset < first->offset)) first = &t;
    QVERIFY(first);
    const auto findings = val::openingFindings(c);
    QCOMPARE(findings.size(), size_t(1));
    QCOMPARE(findings[0].code, std::string("WS-I011"));
    QCOMPARE(findings[0].tensor, first->name);
    QCOMPARE(*findings[0].offset, cutAt);
  }

  void headerOnlyCopyListsEveryTensorAsCut() {
    const std::string src = wstest::fixture("hf/qwen3_moe_fp8/model.safetensors");
    auto whole = wstest::openOrFail(src);
    wstest::TempDir d;
    copyPrefix(src, d.file("model.safetensors"), whole->files[0].dataStart);
    auto part = openCheckpointPartial(d.file("model.safetensors"));
    QVERIFY2(part, part ? "" : part.error().describe().c_str());
    compareWithWhole(*part.value(), *whole, whole->files[0].dataStart);
    // Scheme recognition needs names and shapes only: it is the same as the whole file's.
    for (const auto& l : whole->logical) {
      const TensorRecord* t = part.value()->find(whole->tensors[l.members.front()].name);
      QCOMPARE(part.value()->logical[t->logical].schemeName, l.schemeName);
    }
    // Validation reads no byte of a cut tensor (it would crash on the mapping if it did).
    auto rep = val::validateCheckpoint(part.value(), val::ValidateOptions{});
    QVERIFY(rep.count(val::Severity::Error) >= 1);
  }

  void cutGgufShowsItsWholeCatalog() {
    const std::string src = wstest::fixture("gguf/tiny-qwen3moe-kquants.gguf");
    auto whole = wstest::openOrFail(src);
    const uint64_t cutAt = whole->files[0].size * 2 / 3 + 1;
    wstest::TempDir d;
    copyPrefix(src, d.file("m.gguf"), cutAt);
    auto strict = openCheckpoint(d.file("m.gguf"));
    QVERIFY(!strict);
    QCOMPARE(strict.error().code, ErrorCode::GgufTruncated);
    auto part = openCheckpointPartial(d.file("m.gguf"));
    QVERIFY2(part, part ? "" : part.error().describe().c_str());
    compareWithWhole(*part.value(), *whole, cutAt);
    QCOMPARE(issueCodes(*part.value()), std::vector<ErrorCode>{ErrorCode::GgufTruncated});
    QCOMPARE(part.value()->model.architecture, whole->model.architecture);
  }

  void loneGgufSplitPartOpensOnItsOwn() {
    const std::string first = wstest::fixture("gguf/tiny-qwen3moe-kquants-00001-of-00002.gguf");
    auto whole = wstest::openOrFail(first);
    std::set<std::string> inSecond;
    for (const auto& t : whole->tensors)
      if (t.file == 1) inSecond.insert(t.name);
    QVERIFY(!inSecond.empty());
    wstest::TempDir d;
    fs::copy_file(wstest::fixture("gguf/tiny-qwen3moe-kquants-00002-of-00002.gguf"), d.file("m-00002-of-00002.gguf"));
    QVERIFY(!openCheckpoint(d.file("m-00002-of-00002.gguf")));
    auto part = openCheckpointPartial(d.file("m-00002-of-00002.gguf"));
    QVERIFY2(part, part ? "" : part.error().describe().c_str());
    compareWithWhole(*part.value(), *whole, UINT64_MAX, inSecond);
    QCOMPARE(issueCodes(*part.value()), std::vector<ErrorCode>{ErrorCode::MissingShard});
    QCOMPARE(part.value()->issues[0].file, d.file("m-00001-of-00002.gguf"));
    // Opened through the folder, the same.
    auto viaFolder = openCheckpointPartial(d.path());
    QVERIFY(viaFolder);
    QCOMPARE(viaFolder.value()->tensors.size(), inSecond.size());
  }

  void loneSafetensorsShardListsTheOthers() {
    const std::string dir = wstest::fixture("hf/qwen3_moe");
    auto whole = wstest::openOrFail(dir);
    std::set<std::string> inShard;
    for (const auto& t : whole->tensors)
      if (fs::path(whole->files[t.file].path).filename() == "model-00002-of-00004.safetensors") inShard.insert(t.name);
    wstest::TempDir d;
    fs::copy_file(dir + "/model-00002-of-00004.safetensors", d.file("model-00002-of-00004.safetensors"));
    QVERIFY(!openCheckpoint(d.file("model-00002-of-00004.safetensors")));
    auto part = openCheckpointPartial(d.file("model-00002-of-00004.safetensors"));
    QVERIFY2(part, part ? "" : part.error().describe().c_str());
    compareWithWhole(*part.value(), *whole, UINT64_MAX, inShard);
    std::vector<std::string> missing;
    for (const auto& e : part.value()->issues) {
      QCOMPARE(e.code, ErrorCode::MissingShard);
      missing.push_back(fs::path(e.file).filename().string());
    }
    QCOMPARE(missing, (std::vector<std::string>{"model-00001-of-00004.safetensors", "model-00003-of-00004.safetensors", "model-00004-of-00004.safetensors"}));
  }

  void shardMissingFromAnIndexLeavesTheRestReadable() {
    const std::string dir = wstest::fixture("hf/qwen3_moe");
    auto whole = wstest::openOrFail(dir);
    wstest::TempDir d;
    std::set<std::string> kept;
    for (const auto& e : fs::directory_iterator(dir))
      if (e.path().filename() != "model-00003-of-00004.safetensors") fs::copy_file(e.path(), d.file(e.path().filename().string()));
    for (const auto& t : whole->tensors)
      if (fs::path(whole->files[t.file].path).filename() != "model-00003-of-00004.safetensors") kept.insert(t.name);
    auto part = openCheckpointPartial(d.path());
    QVERIFY2(part, part ? "" : part.error().describe().c_str());
    compareWithWhole(*part.value(), *whole, UINT64_MAX, kept);
    QCOMPARE(issueCodes(*part.value()), std::vector<ErrorCode>{ErrorCode::MissingShard});
    // The index says which tensors the missing shard holds.
    QCOMPARE(part.value()->unreadable.size(), whole->tensors.size() - kept.size());
  }

  void nothingReadableIsAFailure() {
    wstest::TempDir d;
    wstest::writeFile(d.file("broken.safetensors"), std::vector<uint8_t>{1, 2, 3});
    auto r = openCheckpointPartial(d.file("broken.safetensors"));
    QVERIFY(!r);
    QCOMPARE(r.error().code, ErrorCode::HeaderTooSmall);
    // Validation still takes it, as a finding.
    auto t = openCheckpointTolerant(d.file("broken.safetensors"));
    QVERIFY(t);
    QCOMPARE(issueCodes(*t.value()), std::vector<ErrorCode>{ErrorCode::HeaderTooSmall});
  }
};

QTEST_GUILESS_MAIN(TstPartialOpen)
#include "tst_partial_open.moc"
