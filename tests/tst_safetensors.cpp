// safetensors header checks in the reference reader's order, each with its error code and a
// message that names the file and the tensor or offset.
#include <QtTest>

#include <cstring>
#include <fcntl.h>
#include <linux/magic.h>
#include <optional>
#include <sys/statfs.h>
#include <unistd.h>

#include "core/formats/safetensors.h"
#include "core/io/mapped_file.h"
#include "core/io/mapped_read_guard.h"
#include "core/numerics/dequant.h"
#include "test_support.h"

using namespace ws;

namespace {

Error parseError(const std::vector<uint8_t>& bytes) {
  try {
    parseSafetensors(bytes, "t.safetensors");
  } catch (const CoreError& e) {
    return e.error();
  }
  return Error{ErrorCode::Usage, "no error", {}, std::nullopt, {}};
}

std::string tensor(const char* name, const char* dtype, const char* shape, uint64_t b, uint64_t e) {
  return "\"" + std::string(name) + "\":{\"dtype\":\"" + dtype + "\",\"shape\":" + shape + ",\"data_offsets\":[" + std::to_string(b) + "," +
         std::to_string(e) + "]}";
}

}  // namespace

class TstSafetensors : public QObject {
  Q_OBJECT
 private slots:
  // What MLX writes: "__metadata__": null and a header length that is not a multiple of 8. The
  // safetensors library reads both (its metadata is an Option, and it asks for no padding), and so
  // do both of our parsers.
  void mlxHeaderParses() {
    const std::string h = "{\"__metadata__\":null," + tensor("w", "BF16", "[3]", 0, 6) + "}";
    QVERIFY(h.size() % 8 != 0);
    const auto bytes = wstest::safetensorsBytes(h, 6);
    for (auto parser : {HeaderParser::Auto, HeaderParser::Reference}) {
      auto hdr = parseSafetensors(bytes, "mlx.safetensors", parser);
      QCOMPARE(hdr.tensors.size(), size_t(1));
      QVERIFY(hdr.metadata.empty());
      QCOMPARE(hdr.dataStart, uint64_t(8 + h.size()));
    }
    // null anywhere else is still refused, naming where
    const auto bad = wstest::safetensorsBytes("{\"w\":null}", 0);
    QCOMPARE(parseError(bad).code, ErrorCode::InvalidHeaderJson);
  }

  // Where the fast path and the reference-order parser used to disagree, both now read what the
  // safetensors library (serde) reads: an unknown tensor field is ignored whatever its value and
  // however often it appears; a repeated __metadata__ key keeps its last value; a known field
  // given twice is refused.
  void parsersAgreeWithSerde() {
    const std::string w = "\"w\":{\"dtype\":\"BF16\",\"shape\":[2],\"data_offsets\":[0,4]";
    for (const std::string extra : {",\"x\":1.5}", ",\"x\":-3}", ",\"x\":1,\"x\":2}", ",\"x\":[1,-2.5,{\"y\":null}]}"}) {
      const auto bytes = wstest::safetensorsBytes("{" + w + extra + "}", 4);
      for (auto parser : {HeaderParser::Auto, HeaderParser::Reference})
        QCOMPARE(parseSafetensors(bytes, "t.safetensors", parser).tensors.size(), size_t(1));
    }
    const auto meta = wstest::safetensorsBytes("{\"__metadata__\":{\"k\":\"a\",\"k\":\"b\"}," + w + "}}", 4);
    for (auto parser : {HeaderParser::Auto, HeaderParser::Reference}) QCOMPARE(parseSafetensors(meta, "t.safetensors", parser).metadata.at("k"), std::string("b"));
    const auto twice = wstest::safetensorsBytes("{" + w + ",\"dtype\":\"F16\"}}", 4);
    for (auto parser : {HeaderParser::Auto, HeaderParser::Reference}) QVERIFY_THROWS_EXCEPTION(CoreError, parseSafetensors(twice, "t.safetensors", parser));
  }

  void validFileParses() {
    std::string h = "{\"__metadata__\":{\"format\":\"pt\"}," + tensor("b", "F32", "[2]", 16, 24) + "," + tensor("a", "BF16", "[2,4]", 0, 16) +
                    "," + tensor("s", "F32", "[]", 24, 28) + "," + tensor("e", "F4", "[0]", 28, 28) + "}";
    auto bytes = wstest::safetensorsBytes(h, 28);
    auto hdr = parseSafetensors(bytes, "t.safetensors");
    QCOMPARE(hdr.tensors.size(), size_t(4));
    QCOMPARE(hdr.tensors[0].name, std::string("a"));  // offset order, not key order
    QCOMPARE(hdr.dataStart, uint64_t(8 + h.size()));
    QCOMPARE(hdr.metadata.at("format"), std::string("pt"));
    QCOMPARE(hdr.tensors[2].shape.size(), size_t(0));  // scalar
  }

  void extraTensorFieldsAreIgnoredLikeTheReference() {
    std::string h = "{" + std::string("\"a\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[0,2],\"extra\":{\"x\":[1,2]}}") + "}";
    QCOMPARE(parseSafetensors(wstest::safetensorsBytes(h, 2), "t").tensors.size(), size_t(1));
  }

  void errors_data() {
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<int>("code");
    QTest::addColumn<QString>("mustMention");
    auto add = [](const char* tag, const std::vector<uint8_t>& b, ErrorCode c, const char* mention) {
      QTest::newRow(tag) << QByteArray(reinterpret_cast<const char*>(b.data()), qsizetype(b.size())) << int(c) << QString(mention);
    };
    add("shorter than 8 bytes", {1, 2, 3}, ErrorCode::HeaderTooSmall, "shorter");
    std::vector<uint8_t> huge(16, 0);
    uint64_t n = 100'000'001;
    std::memcpy(huge.data(), &n, 8);
    add("header over 100 MB", huge, ErrorCode::HeaderTooLarge, "100 MB");
    // Exactly 100,000,000 is still allowed (the reference reader refuses n > MAX_HEADER_SIZE): this
    // 16-byte file then fails for running past its end, not for the limit.
    std::vector<uint8_t> atLimit(16, 0);
    n = 100'000'000;
    std::memcpy(atLimit.data(), &n, 8);
    add("header of exactly 100 MB", atLimit, ErrorCode::InvalidHeaderLength, "past the end");
    std::vector<uint8_t> past(16, 0);
    n = 64;
    std::memcpy(past.data(), &n, 8);
    add("header past end", past, ErrorCode::InvalidHeaderLength, "past the end");
    add("not utf8", wstest::safetensorsBytes("{\"\xff\":1}", 0), ErrorCode::InvalidHeaderUtf8, "UTF-8");
    add("not json", wstest::safetensorsBytes("{\"a\":", 0), ErrorCode::InvalidHeaderJson, "not a valid");
    add("deep nesting", wstest::safetensorsBytes(std::string(200, '[') + std::string(200, ']'), 0), ErrorCode::InvalidHeaderJson, "");
    add("duplicate name", wstest::safetensorsBytes("{" + tensor("a", "U8", "[1]", 0, 1) + "," + tensor("a", "U8", "[1]", 1, 2) + "}", 2),
        ErrorCode::DuplicateTensor, "'a'");
    add("unknown dtype", wstest::safetensorsBytes("{" + tensor("w", "F7", "[1]", 0, 1) + "}", 1), ErrorCode::UnknownDtype, "'w'");
    add("gap", wstest::safetensorsBytes("{" + tensor("a", "U8", "[1]", 0, 1) + "," + tensor("b", "U8", "[1]", 2, 3) + "}", 3),
        ErrorCode::InvalidOffset, "'b'");
    add("overlap", wstest::safetensorsBytes("{" + tensor("a", "U8", "[2]", 0, 2) + "," + tensor("b", "U8", "[2]", 1, 3) + "}", 3),
        ErrorCode::InvalidOffset, "'b'");
    add("end before begin", wstest::safetensorsBytes("{" + tensor("a", "U8", "[0]", 0, 0) + "," + tensor("b", "U8", "[0]", 0, 0) + "," +
                                                         tensor("c", "U8", "[1]", 1, 0) + "}", 1),
        ErrorCode::InvalidOffset, "");
    add("shape overflow", wstest::safetensorsBytes("{" + tensor("a", "U8", "[4294967296,4294967296,2]", 0, 1) + "}", 1),
        ErrorCode::ValidationOverflow, "'a'");
    add("odd F4 count", wstest::safetensorsBytes("{" + tensor("a", "F4", "[3]", 0, 2) + "}", 2), ErrorCode::MisalignedSlice, "'a'");
    add("length mismatch", wstest::safetensorsBytes("{" + tensor("a", "F32", "[2]", 0, 4) + "}", 4), ErrorCode::TensorInvalidInfo, "'a'");
    add("trailing bytes", wstest::safetensorsBytes("{" + tensor("a", "U8", "[2]", 0, 2) + "}", 5), ErrorCode::MetadataIncompleteBuffer,
        "trailing");
    add("truncated data", wstest::safetensorsBytes("{" + tensor("a", "U8", "[8]", 0, 8) + "}", 5), ErrorCode::MetadataIncompleteBuffer,
        "truncated");
    add("metadata not string", wstest::safetensorsBytes("{\"__metadata__\":{\"k\":1}}", 0), ErrorCode::InvalidHeaderJson, "__metadata__");
    add("negative dim", wstest::safetensorsBytes("{" + tensor("a", "U8", "[-1]", 0, 0) + "}", 0), ErrorCode::InvalidHeaderJson, "'a'");
    add("missing offsets", wstest::safetensorsBytes("{\"a\":{\"dtype\":\"U8\",\"shape\":[1]}}", 0), ErrorCode::InvalidHeaderJson, "data_offsets");
  }

  void errors() {
    QFETCH(QByteArray, bytes);
    QFETCH(int, code);
    QFETCH(QString, mustMention);
    std::vector<uint8_t> b(bytes.begin(), bytes.end());
    Error e = parseError(b);
    QCOMPARE(errorCodeName(e.code), errorCodeName(ErrorCode(code)));
    QString text = QString::fromStdString(e.describe());
    QVERIFY2(text.contains("t.safetensors"), qPrintable(text));
    QVERIFY2(text.contains(mustMention), qPrintable(text));
  }

  // The seed's one weight map keyed by name (docs/seeds.md S5): Checkpoint::find answers every
  // stored name with its own record, across shards, and a name the checkpoint lacks with nothing;
  // findLogical, what dequant and the previews look names up with, fails naming it.
  void lookupByNameNamesAMissingWeight() {
    auto c = wstest::openOrFail(wstest::fixture("hf/qwen3_moe"));
    for (const auto& t : c->tensors) {
      const TensorRecord* found = c->find(t.name);
      QVERIFY2(found == &t, t.name.c_str());
    }
    const std::string missing = "model.layers.0.mlp.experts.99.up_proj.weight";
    QVERIFY(c->find(missing) == nullptr);
    auto r = num::findLogical(*c, missing);
    QVERIFY(!r.ok());
    QCOMPARE(errorCodeName(r.error().code), errorCodeName(ErrorCode::Usage));
    QVERIFY2(r.error().describe().find("no tensor named '" + missing + "'") != std::string::npos, r.error().describe().c_str());
    auto norm = num::findLogical(*c, "model.norm.weight");
    QVERIFY(norm.ok());
    QCOMPARE(c->tensors[uint32_t(c->logical[norm.value()].weight)].name, std::string("model.norm.weight"));
  }

  void mappedFileIsReadOnlyAndNamesMissingFiles() {
    bool threw = false;
    try {
      MappedFile::open("/nonexistent/weights.safetensors");
    } catch (const CoreError& e) {
      threw = true;
      QVERIFY(QString::fromStdString(e.error().describe()).contains("/nonexistent/weights.safetensors"));
    }
    QVERIFY(threw);
  }

  // cached() is what spares a warm scan its read-ahead advice (MappedFile::willNeed): true for a
  // page just read, false once the kernel was told to drop the file's clean pages.
  void cachedTellsResidentPages() {
    wstest::TempDir d;
    const std::string path = d.file("pages.bin");
    wstest::writeFile(path, std::string(1 << 20, 'x'));
    auto f = MappedFile::open(path);
    std::vector<uint8_t> buf(4096);
    f->readAt(600000, buf.data(), buf.size());
    QVERIFY(f->cached(600000));
    QVERIFY(!f->cached(1 << 20));  // past the end
    if (!wstest::dropFromPageCache(path)) QSKIP("tmpfs keeps its pages: the dropped case cannot be seen here");
    QVERIFY(!f->cached(600000));
    f->readAt(0, buf.data(), buf.size());
    QVERIFY(f->cached(0));
  }

  // Opening a file cold reads its header, not the kernel's read-around window: parsing through the
  // mapping faults on its first page, and that fault reads read_ahead_kb around it (8 MiB a shard
  // on the development machine). The header is read ahead as one range first
  // (parseSafetensors(MappedFile)); a pread's own read-ahead of a few pages is allowed.
  void aColdOpenReadsTheHeaderNotTheReadAroundWindow() {
    wstest::TempDir d;
    const std::string path = d.file("model.safetensors");
    const uint64_t dataBytes = 16 << 20;
    wstest::SafetensorsBuilder().add("w", "U8", {dataBytes}, std::vector<uint8_t>(dataBytes, 1)).write(path);
    const uint64_t page = uint64_t(::sysconf(_SC_PAGESIZE)), allowance = (256 << 10) / page;
    if (!wstest::dropFromPageCache(path)) QSKIP("tmpfs keeps its pages: a cold open cannot be seen here");
    // The pages cached once the file is opened cold, and the header's. Cold is checked, not assumed,
    // and checked twice: under load the kernel keeps some of a file's pages through one DONTNEED
    // (writeback still in flight), and a read-ahead still in flight is not counted by mincore until
    // it lands - those pages would be counted as read by the open (the flakes this guards: 516 and
    // 1010 pages, once in 40 runs each). A few tries, then a skip that says so.
    auto pagesReadToOpen = [&](bool throughMapping) -> std::optional<std::pair<uint64_t, uint64_t>> {
      for (int attempt = 0; attempt < 5; ++attempt) {
        wstest::dropFromPageCache(path);
        auto f = MappedFile::open(path);
        const bool coldNow = wstest::cachedPages(*f) == 0;
        QThread::msleep(50);  // what was in flight lands now, and shows
        if (!coldNow || wstest::cachedPages(*f) != 0) {
          QThread::msleep(100);
          continue;
        }
        const SafetensorsHeader h = throughMapping ? parseSafetensors(f->bytes(), path) : parseSafetensors(*f);
        return std::pair{wstest::cachedPages(*f), (h.dataStart + page - 1) / page};
      }
      return std::nullopt;
    };
    // The open measured first, before any fault on a mapping has started a read-around that could
    // still be landing; then what the test guards against: a fault on the mapping reading around.
    const auto cold = pagesReadToOpen(false);
    if (!cold) QSKIP("the kernel kept some of the file's pages through five drops: no cold open to measure");
    const auto around = pagesReadToOpen(true);
    if (!around) QSKIP("the kernel kept some of the file's pages through five drops: no cold open to measure");
    const auto [aroundPages, headerPages] = *around;
    if (aroundPages <= headerPages + allowance)
      QSKIP(qPrintable(QString("this device reads %1 pages around a fault (read_ahead_kb %2): too few to tell from the header's")
                           .arg(aroundPages)
                           .arg(wstest::readAheadWindow(path) / 1024)));
    const auto [pages, header] = *cold;
    QVERIFY2(pages >= header, "the header itself is read");
    QVERIFY2(pages <= header + allowance, qPrintable(QString("%1 pages cached after the open; the header is %2").arg(pages).arg(header)));
  }

  // A file cut short under its mapping: a guarded read of the pages past the new end survives
  // the SIGBUS, and check() fails it, naming the file and where it now ends.
  void aGuardedReadOfACutFileFails() {
    wstest::TempDir d;
    const std::string path = d.file("cut.bin");
    wstest::writeFile(path, std::string(64 << 10, 'x'));
    auto f = MappedFile::open(path);
    const uint64_t cut = 10000, page = uint64_t(::sysconf(_SC_PAGESIZE));
    QVERIFY(::truncate(path.c_str(), off_t(cut)) == 0);
    MappedReadGuard guard;
    uint64_t sum = 0;
    for (uint64_t i = 40000; i < 50000; ++i) sum += f->bytes()[i];
    QCOMPARE(sum, uint64_t(0));  // pages past the end: zeros, and no SIGBUS
    guard.check(*f, 0, cut / page * page);  // what is still in the file passes
    try {
      guard.check(*f, 40000, 10000, "t");
      QFAIL("a read past the new end passed its check");
    } catch (const CoreError& e) {
      QCOMPARE(QString::fromStdString(e.error().file), QString::fromStdString(path));
      QCOMPARE(e.error().offset.value_or(0), uint64_t(40000));
      QCOMPARE(QString::fromStdString(e.error().tensor), QString("t"));
      QVERIFY2(e.error().message.find("file ended early") != std::string::npos, e.error().message.c_str());
    }
  }

  // The fault itself is remembered, not only the file's size: the file grown back to its length
  // before the check, the bytes that read as zeros still fail it - also after a check of other
  // bytes of the file. The file is then mapped back over those pages, and reads its own bytes.
  void aFaultedReadFailsItsCheckAndTheMappingHeals() {
    wstest::TempDir d;
    const std::string path = d.file("cut.bin");
    std::string bytes(64 << 10, 'x');
    for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = char('a' + i % 26);
    wstest::writeFile(path, bytes);
    auto f = MappedFile::open(path);
    QVERIFY(::truncate(path.c_str(), 10000) == 0);
    auto sum = [&](uint64_t from, uint64_t to) {
      uint64_t s = 0;
      for (uint64_t i = from; i < to; ++i) s += f->bytes()[i];
      return s;
    };
    uint64_t expected = 0;
    for (uint64_t i = 40000; i < 50000; ++i) expected += uint8_t(bytes[i]);
    MappedReadGuard guard;
    QCOMPARE(sum(40000, 50000), uint64_t(0));
    wstest::writeFile(path, bytes);  // the same inode, its length back
    guard.check(*f, 0, 8192);        // other bytes: passes, and leaves the fault be
    try {
      guard.check(*f, 40000, 10000, "t");
      QFAIL("bytes that read as zeros passed their check");
    } catch (const CoreError& e) {
      QVERIFY2(e.error().message.find("could not be read through the file's mapping") != std::string::npos, e.error().message.c_str());
      QVERIFY2(e.error().offset.value_or(0) >= 40000 && e.error().offset.value_or(0) < 40000 + uint64_t(::sysconf(_SC_PAGESIZE)),
               std::to_string(e.error().offset.value_or(0)).c_str());
    }
    QCOMPARE(sum(40000, 50000), expected);
    guard.check(*f, 0, bytes.size());
  }
};

QTEST_GUILESS_MAIN(TstSafetensors)
#include "tst_safetensors.moc"
