// The malformed-input corpus (tests/data/malformed, written by make_corpus.py): every file fails to
// open with exactly its error code, and the error names the file and the offending tensor or byte
// offset; files that must open do, with the expected validation finding. Opening any of them
// allocates O(file size) memory, and the ones that declare absurd counts (2^63 tensors, a 2^64-1
// byte string) are refused before anything is allocated from the count.
#include <QtTest>

#include <malloc.h>
#include <sys/stat.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <new>

#include <nlohmann/json.hpp>

#include "core/formats/open_checkpoint.h"
#include "core/validate/validator.h"
#include "test_support.h"

// Live and peak heap bytes of this process, so a test can bound what one call allocates.
namespace {
std::atomic<int64_t> gLive{0}, gPeak{0}, gCalls{0};
void noteAlloc(void* p) {
  if (!p) return;
  gCalls.fetch_add(1);
  int64_t now = gLive.fetch_add(int64_t(malloc_usable_size(p))) + int64_t(malloc_usable_size(p));
  for (int64_t peak = gPeak.load(); now > peak && !gPeak.compare_exchange_weak(peak, now);) {
  }
}
}  // namespace

// Every replaceable form, so no allocation bypasses the count and no block is freed by another
// allocator than the one that made it (AddressSanitizer checks that).
namespace {
void* countedAlloc(size_t n, size_t align = 0) {
  void* p = align > alignof(std::max_align_t) ? std::aligned_alloc(align, (n + align - 1) / align * align) : std::malloc(n ? n : 1);
  noteAlloc(p);
  return p;
}
void countedFree(void* p) {
  if (p) gLive.fetch_sub(int64_t(malloc_usable_size(p)));
  std::free(p);
}
void* orThrow(void* p) {
  if (!p) throw std::bad_alloc();
  return p;
}
}  // namespace

void* operator new(size_t n) { return orThrow(countedAlloc(n)); }
void* operator new[](size_t n) { return orThrow(countedAlloc(n)); }
void* operator new(size_t n, const std::nothrow_t&) noexcept { return countedAlloc(n); }
void* operator new[](size_t n, const std::nothrow_t&) noexcept { return countedAlloc(n); }
void* operator new(size_t n, std::align_val_t a) { return orThrow(countedAlloc(n, size_t(a))); }
void* operator new[](size_t n, std::align_val_t a) { return orThrow(countedAlloc(n, size_t(a))); }
void* operator new(size_t n, std::align_val_t a, const std::nothrow_t&) noexcept { return countedAlloc(n, size_t(a)); }
void* operator new[](size_t n, std::align_val_t a, const std::nothrow_t&) noexcept { return countedAlloc(n, size_t(a)); }
void operator delete(void* p) noexcept { countedFree(p); }
void operator delete[](void* p) noexcept { countedFree(p); }
void operator delete(void* p, size_t) noexcept { countedFree(p); }
void operator delete[](void* p, size_t) noexcept { countedFree(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { countedFree(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { countedFree(p); }
void operator delete(void* p, std::align_val_t) noexcept { countedFree(p); }
void operator delete[](void* p, std::align_val_t) noexcept { countedFree(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { countedFree(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept { countedFree(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { countedFree(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { countedFree(p); }

using namespace ws;

namespace {

const std::string kCorpus = wstest::sourceDir() + "/tests/data/malformed";

nlohmann::json manifest() {
  std::ifstream in(kCorpus + "/manifest.json");
  return nlohmann::json::parse(in);
}

}  // namespace

class TstMalformedCorpus : public QObject {
  Q_OBJECT
 private slots:
  void corpusIsComplete() {
    const auto m = manifest();
    QVERIFY2(m.size() >= 30, "the issue asks for at least 30 failure classes");
    std::set<std::string> files;
    for (const auto& e : m) files.insert(e["file"].get<std::string>());
    QCOMPARE(files.size(), m.size());
    for (const auto& f : files) QVERIFY2(QFileInfo::exists(QString::fromStdString(kCorpus + "/" + f)), f.c_str());
  }

  void eachFile_data() {
    QTest::addColumn<QString>("entry");
    for (const auto& e : manifest()) QTest::newRow(e["file"].get<std::string>().c_str()) << QString::fromStdString(e.dump());
  }

  void eachFile() {
    QFETCH(QString, entry);
    const auto e = nlohmann::json::parse(entry.toStdString());
    const std::string path = kCorpus + "/" + e["file"].get<std::string>();
    const uint64_t size = wstest::fileSize(path);

    const int64_t before = gLive.load(), callsBefore = gCalls.load();
    gPeak.store(before);
    auto opened = openCheckpoint(path);
    const int64_t peak = gPeak.load() - before, calls = gCalls.load() - callsBefore;
    // O(N) memory and O(N) allocations: a few hundred bytes of input may not cost more than
    // bookkeeping, however large a count or length the file declares. (A loop over a declared 2^63
    // count that allocates nothing would hang instead: CTest's time limit for this suite catches
    // that, not a clock in the test.)
    QVERIFY2(peak <= int64_t(64 * size + (1 << 20)), qPrintable(QString("opening allocated %1 bytes at peak").arg(peak)));
    QVERIFY2(calls <= int64_t(8 * size + 4096), qPrintable(QString("opening made %1 allocations for %2 bytes of input").arg(calls).arg(size)));

    if (e.contains("code")) {
      QVERIFY2(!opened, "the file must not open");
      const Error& err = opened.error();
      const std::string text = err.describe();
      QCOMPARE(errorCodeName(err.code), e["code"].get<std::string>().c_str());
      QCOMPARE(err.file, path);
      if (e.contains("tensor")) {
        QCOMPARE(err.tensor, e["tensor"].get<std::string>());
        QVERIFY2(text.find("'" + err.tensor + "'") != std::string::npos, text.c_str());
      }
      if (e.contains("mention")) QVERIFY2(text.find(e["mention"].get<std::string>()) != std::string::npos, text.c_str());
      if (e.contains("offset")) {
        QVERIFY2(err.offset.has_value(), text.c_str());
        QCOMPARE(*err.offset, e["offset"].get<uint64_t>());
        QVERIFY2(text.find("offset " + std::to_string(*err.offset)) != std::string::npos, text.c_str());
      }
    } else {
      QVERIFY2(opened, opened ? "" : opened.error().describe().c_str());
    }

    // Validation never stops at a damaged file: it reports it, naming the same tensor.
    auto report = val::validatePath(path, val::ValidateOptions{});
    QVERIFY2(report, report ? "" : report.error().describe().c_str());
    const auto& findings = report.value().findings;
    if (e.contains("code")) QVERIFY(report.value().count(val::Severity::Error) >= 1);
    const std::string want = e.value("finding", "");
    if (!want.empty()) {
      bool found = false;
      // On the named tensor, or (a file-level problem) wherever validate reports it.
      for (const auto& f : findings) found |= f.code == want && (!e.contains("tensor") || f.tensor == e["tensor"].get<std::string>());
      QVERIFY2(found, ("no " + want + " finding" + (e.contains("tensor") ? " on the tensor" : "")).c_str());
    } else if (e.value("opens", false)) {
      QCOMPARE(report.value().count(val::Severity::Error), size_t(0));
    }
  }

  // Hostile inputs that need a folder rather than one file.
  void aFifoIsRefusedNotWaitedFor() {
    wstest::TempDir d;
    QCOMPARE(::mkfifo(d.file("model.safetensors").c_str(), 0600), 0);
    QVERIFY(!openCheckpoint(d.path()));  // a folder listing skips it: not a checkpoint
    auto r = openCheckpoint(d.file("model.safetensors"));  // open(2) without O_NONBLOCK would block here forever
    QVERIFY(!r);
    QCOMPARE(r.error().code, ErrorCode::Io);
    QVERIFY2(r.error().message.find("not a regular file") != std::string::npos, r.error().describe().c_str());

    wstest::TempDir e;
    wstest::SafetensorsBuilder().add("w", "F32", {2}).write(e.file("model.safetensors"));
    QCOMPARE(::mkfifo(e.file("config.json").c_str(), 0600), 0);
    auto v = val::validatePath(e.path(), {});
    QVERIFY(v);
    bool named = false;
    for (const auto& f : v.value().findings) named |= f.file.find("config.json") != std::string::npos;
    QVERIFY2(named, "the FIFO config.json is reported");
  }

  void indexShardsMustBePlainFileNames() {
    for (const char* shard : {"../model.safetensors", "/dev/zero", "sub/model.safetensors", ".."}) {
      wstest::TempDir d;
      wstest::SafetensorsBuilder().add("w", "F32", {2}).write(d.file("model.safetensors"));
      wstest::writeFile(d.file("model.safetensors.index.json"), std::string("{\"weight_map\": {\"w\": \"") + shard + "\"}}");
      auto r = openCheckpoint(d.path());
      QVERIFY2(!r, shard);
      QCOMPARE(r.error().code, ErrorCode::InvalidHeaderJson);
      QCOMPARE(r.error().tensor, std::string("w"));
      QVERIFY2(r.error().message.find("plain file name") != std::string::npos, r.error().describe().c_str());
    }
  }

  void absurdCountsAreErrorsNotLoops() {
    wstest::TempDir d;
    wstest::SafetensorsBuilder().add("w", "F32", {2}).write(d.file("model.safetensors"));
    wstest::writeFile(d.file("config.json"), std::string("{\"model_type\": \"qwen3_moe\", \"num_hidden_layers\": 1000000000000000000}"));
    const int64_t before = gLive.load();
    gPeak.store(before);
    auto r = openCheckpoint(d.path());
    QVERIFY(gPeak.load() - before < (int64_t(1) << 24));  // nothing allocated per declared layer
    QVERIFY(!r);
    QCOMPARE(r.error().code, ErrorCode::InvalidHeaderJson);
    QVERIFY2(r.error().message.find("num_hidden_layers") != std::string::npos, r.error().describe().c_str());
  }
};

QTEST_GUILESS_MAIN(TstMalformedCorpus)
#include "tst_malformed_corpus.moc"
