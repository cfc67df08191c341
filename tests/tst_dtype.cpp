// The dtype registry: exact byte sizes for every safetensors dtype and ggml type id.
#include <QtTest>
#include <QFile>
#include <QJsonObject>
#include <QJsonDocument>

#include "core/model/dtype.h"
#include "test_paths.h"

using namespace ws;

class TstDtype : public QObject {
  Q_OBJECT
 private slots:
  void safetensorsBitSizes() {
    // bits per element from the reference reader's Dtype::bitsize() (formats.md 1.3)
    const std::pair<const char*, int> bits[] = {{"BOOL", 8}, {"F4", 4}, {"F6_E2M3", 6}, {"F6_E3M2", 6}, {"U8", 8}, {"I8", 8},
                                                {"F8_E5M2", 8}, {"F8_E4M3", 8}, {"F8_E8M0", 8}, {"F8_E4M3FNUZ", 8}, {"F8_E5M2FNUZ", 8},
                                                {"I16", 16}, {"U16", 16}, {"F16", 16}, {"BF16", 16}, {"I32", 32}, {"U32", 32},
                                                {"F32", 32}, {"C64", 64}, {"F64", 64}, {"I64", 64}, {"U64", 64}};
    for (auto [name, b] : bits) {
      const DType* d = dtypeFromSafetensors(name);
      QVERIFY2(d, name);
      QCOMPARE(int(d->blockBytes * 8 / d->blockElems), b);
      QCOMPARE(*d->bytesFor(8), uint64_t(b));  // 8 elements -> b bytes
    }
    QVERIFY(!dtypeFromSafetensors("F8_E4M3FN"));
    QVERIFY(!dtypeFromSafetensors("Q4_K"));  // a GGUF type is not a safetensors dtype
  }

  void subByteCountsMustFillBytes() {
    QVERIFY(!dtypeFromSafetensors("F4")->bytesFor(3));
    QCOMPARE(*dtypeFromSafetensors("F4")->bytesFor(4), uint64_t(2));
    QVERIFY(!dtypeFromSafetensors("F6_E2M3")->bytesFor(6));
    QCOMPARE(*dtypeFromSafetensors("F6_E2M3")->bytesFor(12), uint64_t(9));
  }

  void ggmlBlockSizes() {
    // (id, name, elements per block, bytes per block): ggml-common.h, formats.md 2.4/2.5
    struct Row { int id; const char* name; uint32_t elems, bytes; };
    const Row rows[] = {{0, "F32", 1, 4}, {1, "F16", 1, 2}, {2, "Q4_0", 32, 18}, {3, "Q4_1", 32, 20}, {6, "Q5_0", 32, 22},
                        {7, "Q5_1", 32, 24}, {8, "Q8_0", 32, 34}, {9, "Q8_1", 32, 36}, {10, "Q2_K", 256, 84}, {11, "Q3_K", 256, 110},
                        {12, "Q4_K", 256, 144}, {13, "Q5_K", 256, 176}, {14, "Q6_K", 256, 210}, {15, "Q8_K", 256, 292},
                        {16, "IQ2_XXS", 256, 66}, {17, "IQ2_XS", 256, 74}, {18, "IQ3_XXS", 256, 98}, {19, "IQ1_S", 256, 50},
                        {20, "IQ4_NL", 32, 18}, {21, "IQ3_S", 256, 110}, {22, "IQ2_S", 256, 82}, {23, "IQ4_XS", 256, 136},
                        {24, "I8", 1, 1}, {25, "I16", 1, 2}, {26, "I32", 1, 4}, {27, "I64", 1, 8}, {28, "F64", 1, 8},
                        {29, "IQ1_M", 256, 56}, {30, "BF16", 1, 2}, {34, "TQ1_0", 256, 54}, {35, "TQ2_0", 256, 66},
                        {39, "MXFP4", 32, 17}, {40, "NVFP4", 64, 36}, {41, "Q1_0", 128, 18}, {42, "Q2_0", 64, 18}};
    for (const auto& r : rows) {
      const DType* d = dtypeFromGgml(r.id);
      QVERIFY2(d, r.name);
      QCOMPARE(std::string(d->name), std::string(r.name));
      QCOMPARE(d->blockElems, r.elems);
      QCOMPARE(d->blockBytes, r.bytes);
    }
    QVERIFY(!dtypeFromGgml(4));   // Q4_2, removed
    QVERIFY(!dtypeFromGgml(5));   // Q4_3, removed
    QVERIFY(!dtypeFromGgml(43));  // past GGML_TYPE_COUNT of the fixtures' writer
    QVERIFY(!dtypeFromGgml(-1));
    QVERIFY(QString::fromStdString(ggmlIdProblem(4)).contains("removed"));
    QVERIFY(QString::fromStdString(ggmlIdProblem(99)).contains("not a type ggml or ik_llama.cpp"));  // ik's in-memory Q8_2_X4
    QVERIFY(QString::fromStdString(ggmlIdProblem(400)).contains("out of range"));
  }

  // ik_llama.cpp's own types, held to the type table its built library reports
  // (tests/data/ik_llama/types.json, made by make_ik_llama_reference.py from
  // ggml_internal_get_type_traits at 8337e4c): every id it has that files can hold is ours with the
  // same block size, bytes and row meta; every ik row of ours is one of its. Its q8_K* / q8_KV /
  // q8_*_x4 types quantize activations in memory and are left unknown. Ids below 43 are ggml's,
  // with ggml's sizes - except 36, which ik_llama.cpp reuses for BitNet's I2_S (a size ggml.c
  // special-cases), where ggml files hold the removed IQ4_NL_4_4, and 15, Q8_K, whose ik block is
  // 296 bytes against ggml's 292 (an activation type, not written to model files by either).
  // An ik_llama.cpp file holding either is read with ggml's sizes (no such file has been seen).
  void ikLlamaTypesAreIkLlamasOwn() {
    QFile f(QString::fromStdString(wstest::sourceDir() + "/tests/data/ik_llama/types.json"));
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QJsonObject types = QJsonDocument::fromJson(f.readAll()).object();
    QVERIFY(types.size() > 60);
    int ours = 0;
    for (auto it = types.begin(); it != types.end(); ++it) {
      const int id = it.key().toInt();
      const QJsonObject t = it.value().toObject();
      const std::string name = t["name"].toString().toUpper().toStdString();
      const DType* d = dtypeFromGgml(id);
      if (id == 36 || id == 15) continue;  // ik's own meanings of a ggml id: see above
      if (id >= 43 && (name.rfind("Q8_K", 0) == 0 || name.rfind("Q8_0_X4", 0) == 0 || name.rfind("Q8_1_X4", 0) == 0 || name.rfind("Q8_2_X4", 0) == 0) &&
          name != "Q8_K_R8" && name != "Q8_K_R16" && name != "Q8_KV_R8") {
        QVERIFY2(!d, name.c_str());
        continue;
      }
      QVERIFY2(d, (std::to_string(id) + " " + name).c_str());
      QCOMPARE(d->blockElems, uint32_t(t["blck_size"].toInteger()));
      QCOMPARE(d->blockBytes, uint32_t(t["type_size"].toInteger()));
      QCOMPARE(d->rowMetaBytes, uint32_t(t["row_meta_size"].toInteger()));
      if (id >= 43) {
        QCOMPARE(std::string(d->name), name);
        QVERIFY(d->ikLlama);
        ++ours;
      }
    }
    int ikRows = 0;
    for (int id = 43; id < 400; ++id)
      if (const DType* d = dtypeFromGgml(id)) {
        QVERIFY2(d->ikLlama && types.contains(QString::number(id)), d->name.data());
        ++ikRows;
      }
    QCOMPARE(ours, ikRows);
    // A row's meta bytes count once a row: IQ4_KS [8 rows x 512] is 8 x (4 + 2 x 136) bytes.
    QCOMPARE(*dtypeByName("IQ4_KS")->bytesForRows(8 * 512, 512), uint64_t(8 * (4 + 2 * 136)));
    QVERIFY(!dtypeByName("IQ4_KS")->bytesForRows(8 * 512 + 256, 512));  // not whole rows
  }

  void overflowIsCaught() {
    QVERIFY(!dtypeByName("F32")->bytesFor(UINT64_MAX / 2));
    QVERIFY(!dtypeByName("Q4_K")->bytesFor(255));  // not a whole block
  }
};

QTEST_GUILESS_MAIN(TstDtype)
#include "tst_dtype.moc"
