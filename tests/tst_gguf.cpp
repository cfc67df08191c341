// GGUF reading: the fixtures ggml wrote, split sets, and malformed headers with exact codes.
#include <QtTest>

#include <cstring>

#include "core/formats/gguf.h"
#include "core/io/mapped_file.h"
#include "test_support.h"

using namespace ws;

namespace {

// Builds GGUF bytes field by field.
struct G {
  std::vector<uint8_t> b;
  template <class T>
  G& put(T v) {
    const uint8_t* p = reinterpret_cast<const uint8_t*>(&v);
    b.insert(b.end(), p, p + sizeof v);
    return *this;
  }
  G& str(const std::string& s) {
    put<uint64_t>(s.size());
    b.insert(b.end(), s.begin(), s.end());
    return *this;
  }
  G& header(int64_t nTensors, int64_t nKv, uint32_t version = 3) {
    b = {'G', 'G', 'U', 'F'};
    return put<uint32_t>(version).put<int64_t>(nTensors).put<int64_t>(nKv);
  }
  // Room after the counts, so the cheap count-versus-size check passes and the field under test
  // is the one that fails.
  G& tail(size_t n = 256) {
    b.resize(b.size() + n, 0);
    return *this;
  }
  G& pad(size_t to) {
    while (b.size() % to) b.push_back(0);
    return *this;
  }
};

Error parseError(const std::vector<uint8_t>& bytes) {
  try {
    parseGguf(bytes, "t.gguf");
  } catch (const CoreError& e) {
    return e.error();
  }
  return Error{ErrorCode::Usage, "no error", {}, std::nullopt, {}};
}

// One F32 tensor "w" of ne=[n], with the given type and offset, after `kv` KV bytes.
G oneTensor(int32_t type, int64_t ne0, uint64_t offset, uint64_t dataBytes) {
  G g;
  g.header(1, 0).str("w").put<uint32_t>(1).put<int64_t>(ne0).put<int32_t>(type).put<uint64_t>(offset).pad(32);
  g.b.resize(g.b.size() + dataBytes, 0);
  return g;
}

}  // namespace

class TstGguf : public QObject {
  Q_OBJECT
 private slots:
  void fixtureHeader() {
    auto map = MappedFile::open(wstest::fixture("gguf/tiny-qwen3moe-kquants.gguf"));
    GgufFile g = parseGguf(map->bytes(), map->path());
    QCOMPARE(g.version, 3u);
    QCOMPARE(g.tensors.size(), size_t(27));
    QCOMPARE(g.alignment, 32u);
    QCOMPARE(*g.find("general.architecture")->asString(), std::string("qwen3moe"));
    QCOMPARE(*g.find("qwen3moe.expert_count")->asInt(), int64_t(8));
    QCOMPARE(g.find("qwen3moe.expert_count")->type, GgufType::U32);
    // Data of every tensor lies inside the file, aligned, and offsets are canonical.
    uint64_t expected = 0;
    for (const auto& t : g.tensors) {
      QCOMPARE(t.relOffset, expected);
      expected += (t.bytes + 31) / 32 * 32;
      QVERIFY(g.dataStart + t.relOffset + t.bytes <= map->size());
    }
    QVERIFY(g.notes.empty());
  }

  void splitKeys() {
    auto map = MappedFile::open(wstest::fixture("gguf/tiny-qwen3moe-kquants-00002-of-00002.gguf"));
    GgufFile g = parseGguf(map->bytes(), map->path());
    QCOMPARE(g.find("split.no")->type, GgufType::U16);
    QCOMPARE(*g.find("split.no")->asInt(), int64_t(1));
    QCOMPARE(g.find("split.tensors.count")->type, GgufType::I32);
    QCOMPARE(*g.find("split.tensors.count")->asInt(), int64_t(27));
    QVERIFY(!g.find("general.architecture"));  // model KV only in the first split
  }

  void minimalFileParses() {
    auto g = oneTensor(0, 4, 0, 32);
    GgufFile f = parseGguf(g.b, "t.gguf");
    QCOMPARE(f.tensors[0].bytes, uint64_t(16));
  }

  void errors_data() {
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<int>("code");
    QTest::addColumn<QString>("mustMention");
    auto add = [](const char* tag, const G& g, ErrorCode c, const char* mention) {
      QTest::newRow(tag) << QByteArray(reinterpret_cast<const char*>(g.b.data()), qsizetype(g.b.size())) << int(c) << QString(mention);
    };
    G g;
    g.b = {'G', 'G', 'U', 'X', 3, 0, 0, 0};
    add("bad magic", g, ErrorCode::GgufBadMagic, "magic");
    add("version 1", G().header(0, 0, 1), ErrorCode::GgufBadVersion, "v1");
    add("version 4", G().header(0, 0, 4), ErrorCode::GgufBadVersion, "newer");
    add("other endianness", G().header(0, 0, 0x03000000), ErrorCode::GgufBadVersion, "byte order");
    add("tensor count 2^63-1", G().header(INT64_MAX, 0), ErrorCode::GgufBadValue, "impossible");
    add("kv count negative", G().header(0, -1), ErrorCode::GgufBadValue, "impossible");
    add("string length 2^64-1", G().header(0, 1).put<uint64_t>(UINT64_MAX).tail(), ErrorCode::GgufBadValue, "1 GiB");
    add("key past end", G().header(0, 1).put<uint64_t>(100).put<uint32_t>(0).put<uint8_t>(0), ErrorCode::GgufTruncated, "remain");
    add("unknown kv type", G().header(0, 1).str("k").put<int32_t>(13).put<uint32_t>(0), ErrorCode::GgufBadValue, "unknown value type");
    add("duplicate key", G().header(0, 2).str("k").put<int32_t>(4).put<uint32_t>(1).str("k").put<int32_t>(4).put<uint32_t>(1),
        ErrorCode::DuplicateKey, "'k'");
    add("nested array", G().header(0, 1).str("k").put<int32_t>(9).put<int32_t>(9).put<uint64_t>(1), ErrorCode::GgufBadValue, "nested");
    add("array beyond file", G().header(0, 1).str("k").put<int32_t>(9).put<int32_t>(4).put<uint64_t>(1000000), ErrorCode::GgufTruncated,
        "past the end");
    add("alignment wrong type", G().header(0, 1).str("general.alignment").put<int32_t>(5).put<int32_t>(32), ErrorCode::GgufBadValue,
        "UINT32");
    add("alignment not power of two", G().header(0, 1).str("general.alignment").put<int32_t>(4).put<uint32_t>(48), ErrorCode::GgufBadValue,
        "power of two");
    add("alignment zero", G().header(0, 1).str("general.alignment").put<int32_t>(4).put<uint32_t>(0), ErrorCode::GgufBadValue,
        "power of two");
    add("n_dims 5", G().header(1, 0).str("w").put<uint32_t>(5).tail(), ErrorCode::GgufBadTensorInfo, "'w'");
    add("negative ne", G().header(1, 0).str("w").put<uint32_t>(1).put<int64_t>(-4).tail(), ErrorCode::GgufBadTensorInfo, "'w'");
    add("type out of range", oneTensor(4000, 4, 0, 32), ErrorCode::UnknownDtype, "out of range");
    add("type of no file", oneTensor(77, 4, 0, 32), ErrorCode::UnknownDtype, "ggml type id 77 is not a type ggml or ik_llama.cpp");
    add("removed type", oneTensor(4, 32, 0, 32), ErrorCode::UnknownDtype, "removed");
    add("row not whole blocks", oneTensor(12, 100, 0, 256), ErrorCode::GgufBadTensorInfo, "block size");
    add("misaligned offset", oneTensor(0, 4, 4, 64), ErrorCode::GgufBadTensorInfo, "alignment");
    add("data past end", oneTensor(0, 64, 0, 32), ErrorCode::GgufTruncated, "'w'");
    add("element overflow", G().header(1, 0).str("w").put<uint32_t>(2).put<int64_t>(INT64_MAX).put<int64_t>(4).tail(), ErrorCode::ValidationOverflow,
        "'w'");
  }

  void errors() {
    QFETCH(QByteArray, bytes);
    QFETCH(int, code);
    QFETCH(QString, mustMention);
    Error e = parseError(std::vector<uint8_t>(bytes.begin(), bytes.end()));
    QCOMPARE(errorCodeName(e.code), errorCodeName(ErrorCode(code)));
    QString text = QString::fromStdString(e.describe());
    QVERIFY2(text.contains("t.gguf"), qPrintable(text));
    QVERIFY2(text.contains(mustMention), qPrintable(text));
  }

  void hugeCountsFailFast() {
    // A declared count must be checked against the bytes left before anything is allocated.
    auto g = G().header(0, 1).str("k").put<int32_t>(9).put<int32_t>(8).put<uint64_t>(1ull << 29);
    QCOMPARE(parseError(g.b).code, ErrorCode::GgufTruncated);
  }
};

QTEST_GUILESS_MAIN(TstGguf)
#include "tst_gguf.moc"
