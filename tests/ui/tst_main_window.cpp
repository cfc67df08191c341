// Drives the main window: open a fixture off the GUI thread, filter the tree, select a tensor,
// follow an expert-map click into the tree, change the EP size and see the rank map follow, run a
// dequant preview and compare it with ggml's own output, start and cancel a full load, validate
// and follow a finding, export the report, see an outlier scale in the histogram; and get a clear
// failure for a path that is not a checkpoint. Checks state, not pixels.
#include <QAbstractItemModelTester>
#include <QAction>
#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QLabel>
#include <QLineEdit>
#include <QMimeData>
#include <QProcess>
#include <QProgressBar>
#include <QPushButton>
#include <QSemaphore>
#include <QSettings>
#include <QSpinBox>
#include <QTableView>
#include <QTextBrowser>
#include <QThreadPool>
#include <QTreeWidget>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QTabWidget>
#include <QTimer>
#include <QTreeView>
#include <QtTest>

#include <atomic>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <set>

#include <nlohmann/json.hpp>
#include <qcustomplot.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/io/http_client.h"
#include "ui/engine_log_view.h"
#include "core/load/device_backend.h"
#include "core/numerics/dequant.h"
#include "core/numerics/device_dequant.h"
#include "core/report/inspect_report.h"
#include "core/report/validate_report.h"
#include "test_support.h"
#include "ui/expert_map_view.h"
#include "ui/findings_model.h"
#include "ui/host_offload_controls.h"
#include "ui/findings_view.h"
#include "ui/gui_main.h"
#include "ui/heatmap_plot.h"
#include "ui/load_view.h"
#include "ui/main_window.h"
#include "ui/metadata_model.h"
#include "ui/metadata_view.h"
#include "ui/open_progress.h"
#include "ui/placement_controls.h"
#include "ui/preview_view.h"
#include "ui/rank_map_view.h"
#include "ui/scale_histogram_view.h"
#include "ui/scale_pass.h"
#include "ui/view_table.h"
#include "ui/tensor_tree_model.h"

using namespace ws;

namespace {

int countLeaves(const QAbstractItemModel* m, const QModelIndex& parent = {}) {
  int n = 0;
  for (int r = 0; r < m->rowCount(parent); ++r) {
    QModelIndex i = m->index(r, 0, parent);
    n += m->rowCount(i) == 0 ? 1 : countLeaves(m, i);
  }
  return n;
}

// Opens `path` in `w` and waits until it is shown.
bool openAndWait(ui::MainWindow& w, const std::string& path) {
  QSignalSpy opened(&w, &ui::MainWindow::checkpointOpened);
  w.openPath(QString::fromStdString(path));
  return opened.wait(wstest::kPatienceMs);
}

uint32_t tensorIndex(const Checkpoint& c, const std::string& name) {
  const TensorRecord* t = c.find(name);
  if (!t) qFatal("no tensor %s", name.c_str());
  return uint32_t(t - c.tensors.data());
}

// A host "device" whose uploads wait at a gate: the test can cancel while the load is surely in
// flight, without racing a load that takes milliseconds. `gone` (when given) counts the backends
// destroyed, i.e. the loads that are really over.
class GatedBackend : public load::HostBackend {
 public:
  GatedBackend(QSemaphore& entered, std::shared_ptr<std::pair<std::mutex, std::condition_variable>> gate, std::shared_ptr<bool> open,
               std::shared_ptr<std::atomic<int>> gone = nullptr)
      : entered_(entered), gate_(std::move(gate)), open_(std::move(open)), gone_(std::move(gone)) {}
  ~GatedBackend() override {
    if (gone_) ++*gone_;
  }
  Result<bool> upload(const load::DeviceBuffer& b, uint64_t offset, const void* src, uint64_t bytes, int stream) override {
    entered_.release();
    std::unique_lock lock(gate_->first);
    gate_->second.wait(lock, [&] { return *open_; });
    return HostBackend::upload(b, offset, src, bytes, stream);
  }

 private:
  QSemaphore& entered_;
  std::shared_ptr<std::pair<std::mutex, std::condition_variable>> gate_;
  std::shared_ptr<bool> open_;
  std::shared_ptr<std::atomic<int>> gone_;
};

// A copy of the FP8 fixture in which one expert's block scales are 2^12 times its peers'.
std::string fp8WithOutlierScale(const wstest::TempDir& d, const std::string& scaleName) {
  namespace fs = std::filesystem;
  for (const auto& e : fs::directory_iterator(wstest::fixture("hf/qwen3_moe_fp8")))
    fs::copy_file(e.path(), d.path() + "/" + e.path().filename().string());
  fs::permissions(d.file("model.safetensors"), fs::perms::owner_write, fs::perm_options::add);
  uint64_t at = 0, elements = 0;
  {
    auto c = wstest::openOrFail(d.path());
    const TensorRecord* t = c->find(scaleName);
    if (!t || t->dtype->name != "F32") qFatal("no F32 tensor %s", scaleName.c_str());
    at = t->offset;
    elements = t->elements();
  }
  std::fstream f(d.file("model.safetensors"), std::ios::in | std::ios::out | std::ios::binary);
  std::vector<float> v(elements);
  f.seekg(std::streamoff(at));
  f.read(reinterpret_cast<char*>(v.data()), std::streamsize(elements * 4));
  for (float& x : v) x *= 32.0f;  // 5 octaves: a WS-V007 outlier, not a far one (WS-V011)
  f.seekp(std::streamoff(at));
  f.write(reinterpret_cast<const char*>(v.data()), std::streamsize(elements * 4));
  return d.path();
}

// Shortcuts go to the active window: a test that sends one needs this to be true.
bool activate(QWidget& w) {
  w.activateWindow();
  QApplication::setActiveWindow(&w);
  return QTest::qWaitForWindowActive(&w);
}

int visibleRows(const QTableView* t) { return t->model()->rowCount(); }

}  // namespace

class TstMainWindow : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    qputenv("WEIGHTSCOPE_NO_DIALOGS", "1");
    // Settings of this process only (the suite also runs on Xvfb at the same time).
    QCoreApplication::setOrganizationName(QString("WeightscopeTest-%1").arg(QCoreApplication::applicationPid()));
  }
  void init() { QSettings().clear(); }  // every test starts from the defaults
  void cleanupTestCase() {
    QSettings s;
    s.clear();
    QFile::remove(s.fileName());
    QDir().rmdir(QFileInfo(s.fileName()).absolutePath());  // the process's own folder, now empty
  }

  // The proxies the window puts over its models (the tree's sort and filter, the findings'
  // severity filter) pass the model checker on every fixture through open, filter, sort and
  // validation.
  void proxiesOnEveryFixture_data() {
    QTest::addColumn<QString>("path");
    for (const std::string& p : wstest::fixtureCheckpoints()) QTest::newRow(p.c_str()) << QString::fromStdString(wstest::fixture(p));
  }
  void proxiesOnEveryFixture() {
    QFETCH(QString, path);
    ui::MainWindow w;
    QAbstractItemModelTester tree(w.treeView()->model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    QAbstractItemModelTester findings(w.findings()->table()->model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    QVERIFY(openAndWait(w, path.toStdString()));
    w.treeView()->sortByColumn(ui::TensorTreeModel::Bytes, Qt::DescendingOrder);
    w.filterEdit()->setText("weight");
    w.filterModeBox()->setCurrentText("glob");
    w.filterEdit()->setText("*.1.*");
    w.filterEdit()->clear();
    QSignalSpy finished(w.findings(), &ui::FindingsView::finished);
    w.findings()->run();
    QVERIFY(finished.wait(wstest::kPatienceMs));
    QVERIFY(w.findings()->report());
    for (auto s : {val::Severity::Error, val::Severity::Warning, val::Severity::Info}) {
      w.findings()->setMinimumSeverity(s);
      int expected = 0;
      for (const auto& f : w.findings()->report()->findings) expected += f.severity >= s;
      QCOMPARE(w.findings()->table()->model()->rowCount(), expected);
    }
  }

  // The Experts tab's health maps draw the last validation's value pass: nothing before Validate,
  // then each routed expert's cell the report's expert_health cell for it (norm octaves, nearest
  // cosine), the shared / dense column and dense layers empty; a new checkpoint clears them.
  void expertHealthMaps() {
    ui::MainWindow w;
    w.show();
    QVERIFY(openAndWait(w, wstest::fixture("hf/qwen3_moe")));
    ui::ExpertMapView* v = w.expertMap();
    w.showTab(ui::MainWindow::ExpertsTab);
    v->setMetric(ui::ExpertMapView::NearestCosine);
    QVERIFY(std::isnan(v->cellValue(1, 0)));
    QSignalSpy finished(w.findings(), &ui::FindingsView::finished);
    w.findings()->run();
    QVERIFY(finished.wait(wstest::kPatienceMs));
    const auto& cells = w.findings()->report()->expertHealth;
    QCOMPARE(cells.size(), size_t(2 * 8));  // MoE layers 1 and 2
    for (const auto& h : cells) {
      v->setMetric(ui::ExpertMapView::NearestCosine);
      QCOMPARE(v->cellValue(h.layer, h.expert), h.nearestCosine);
      v->setMetric(ui::ExpertMapView::NormOctaves);
      QCOMPARE(v->cellValue(h.layer, h.expert), h.normOctaves);
    }
    QVERIFY(std::isnan(v->cellValue(1, -1)) && std::isnan(v->cellValue(0, 0)));
    QVERIFY(openAndWait(w, wstest::fixture("hf/mixtral")));
    QVERIFY(std::isnan(v->cellValue(1, 0)));
  }

  // The Experts tab draws exactly inspect --json's "experts" section (one core grid), every
  // metric of it, on every fixture.
  void expertMapEqualsInspectJson_data() { proxiesOnEveryFixture_data(); }
  void expertMapEqualsInspectJson() {
    QFETCH(QString, path);
    ui::MainWindow w;
    QVERIFY(openAndWait(w, path.toStdString()));
    const nlohmann::json experts = inspectJson(*w.checkpoint(), {})["experts"];
    auto* plot = w.expertMap()->plot();
    if (experts["layers"].get<int>() == 0) {
      QCOMPARE(plot->rows(), 0);
      return;
    }
    QCOMPARE(plot->rows(), experts["layers"].get<int>());
    QCOMPARE(plot->cols(), experts["experts"].get<int>() + 1);
    const std::pair<ui::ExpertMapView::Metric, const char*> metrics[] = {
        {ui::ExpertMapView::Bytes, "bytes"}, {ui::ExpertMapView::Parameters, "parameters"}, {ui::ExpertMapView::Tensors, "tensors"}, {ui::ExpertMapView::ScaleBytes, "scale_bytes"}};
    for (const auto& [metric, key] : metrics) {
      w.expertMap()->setMetric(metric);
      std::set<int> listed;
      for (const auto& row : experts["rows"]) {
        const int layer = row["layer"].get<int>();
        listed.insert(layer);
        QCOMPARE(w.expertMap()->grid().isDense(layer), row["dense"].get<bool>());
        for (int col = 0; col < plot->cols(); ++col) {
          const uint64_t want = row[key][size_t(col)].get<uint64_t>();
          const bool empty = row["tensors"][size_t(col)].get<uint64_t>() == 0 || (metric == ui::ExpertMapView::ScaleBytes && want == 0);
          const double drawn = plot->valueAt(layer, col);
          if (empty) QVERIFY2(std::isnan(drawn), qPrintable(QString("%1 layer %2 col %3").arg(key).arg(layer).arg(col)));
          else QCOMPARE(drawn, double(want));
        }
      }
      for (int layer = 0; layer < plot->rows(); ++layer)  // a layer the JSON leaves out is empty on the map
        if (!listed.count(layer))
          for (int col = 0; col < plot->cols(); ++col) QVERIFY(std::isnan(plot->valueAt(layer, col)));
    }
  }

  // A view added through the view table alone: a tab, a View menu entry with its Alt shortcut, the
  // checkpoint handed to it, a --view name for --help, and a --screenshot of it.
  void throwawayViewThroughTheTable() {
    struct Throwaway : QLabel, ui::CheckpointView {
      std::shared_ptr<const Checkpoint> seen;
      void setCheckpoint(std::shared_ptr<const Checkpoint> c) override {
        seen = c;
        setText(QString::number(c->tensors.size()));
      }
    };
    Throwaway* page = nullptr;
    bool started = false;
    ui::ViewRegistration registration({"throwaway", "T&hrowaway", "Throwaway View", [&](ui::MainWindow&) -> QWidget* { return page = new Throwaway; },
                                       [&](ui::MainWindow&, const std::function<void()>& done) {
                                         started = true;
                                         done();
                                       }});
    QVERIFY(QString::fromStdString(ui::screenshotViews()).split(' ').contains("throwaway"));  // what --help lists
    ui::MainWindow w;
    const int last = w.tabs()->count() - 1;
    QCOMPARE(w.tabs()->widget(last), static_cast<QWidget*>(page));
    QCOMPARE(w.tabs()->tabText(last), QString("T&hrowaway"));
    QAction* entry = nullptr;
    for (QAction* a : w.findChildren<QAction*>())
      if (a->text() == "Throwaway View") entry = a;
    QVERIFY(entry);
    QCOMPARE(entry->shortcut(), QKeySequence(Qt::ALT | Qt::Key(Qt::Key_1 + last)));
    wstest::TempDir d;
    const QString png = QString::fromStdString(d.file("throwaway.png"));
    QCOMPARE(ui::screenshotInWindow(*static_cast<QApplication*>(QCoreApplication::instance()), w, QString::fromStdString(wstest::fixture("hf/qwen3_moe")), "throwaway", png), 0);
    QVERIFY(started);
    QVERIFY(page->seen);
    QCOMPARE(page->text(), QString::number(page->seen->tensors.size()));
    QCOMPARE(w.tabs()->currentIndex(), last);
    QVERIFY(QFileInfo(png).size() > 0);
    QCOMPARE(ui::screenshotInWindow(*static_cast<QApplication*>(QCoreApplication::instance()), w, {}, "nonsense", png), 2);
  }

  // View options come back in the next window.
  void optionsAreRemembered() {
    {
      ui::MainWindow w;
      w.filterModeBox()->setCurrentText("regex");
      w.preview()->colormapBox()->setCurrentIndex(2);
      w.rankMap()->budgetBox()->setEditText("96GiB");
      w.expertMap()->metricBox()->setCurrentIndex(1);
      w.findings()->setMinimumSeverity(val::Severity::Warning);
      w.histograms()->logY()->setChecked(true);
    }
    ui::MainWindow w;
    QCOMPARE(w.filterModeBox()->currentText(), QString("regex"));
    QCOMPARE(w.preview()->colormapBox()->currentIndex(), 2);
    QCOMPARE(w.rankMap()->budgetBox()->currentText(), QString("96GiB"));
    QCOMPARE(w.expertMap()->metricBox()->currentIndex(), 1);
    QCOMPARE(w.findings()->severityBox()->currentData().toInt(), int(val::Severity::Warning));
    QVERIFY(w.histograms()->logY()->isChecked());
  }

  void opensAndFilters() {
    ui::MainWindow w;
    w.show();
    // The sorting and filtering proxy the tree shows is an item model too.
    QAbstractItemModelTester tester(w.treeView()->model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    QSignalSpy opened(&w, &ui::MainWindow::checkpointOpened);
    w.openPath(QString::fromStdString(wstest::fixture("hf/qwen3_moe")));
    QVERIFY(opened.wait(wstest::kPatienceMs));
    QVERIFY(w.checkpoint());
    QCOMPARE(w.checkpoint()->tensors.size(), size_t(80));
    QCOMPARE(countLeaves(w.treeView()->model()), 80);

    QTest::keyClicks(w.filterEdit(), "experts.7.down");
    QCOMPARE(countLeaves(w.treeView()->model()), 2);  // layers 1 and 2

    w.filterEdit()->clear();
    QCOMPARE(countLeaves(w.treeView()->model()), 80);
    QVERIFY(w.windowTitle().contains("qwen3_moe"));

    // Glob: the whole name; regex: anywhere; a broken regex keeps the last filter and says so.
    w.filterModeBox()->setCurrentIndex(1);
    QTest::keyClicks(w.filterEdit(), "model.layers.?.mlp.experts.[37].*_proj.weight");
    QCOMPARE(countLeaves(w.treeView()->model()), 2 * 2 * 3);  // layers 1-2, experts 3 and 7, 3 projections
    w.filterEdit()->setText("experts.3");  // a glob without * matches only the whole name
    QCOMPARE(countLeaves(w.treeView()->model()), 0);
    w.filterModeBox()->setCurrentIndex(2);
    w.filterEdit()->setText(R"(layers\.[12]\.mlp\.experts\.(0|5)\.down)");
    QCOMPARE(countLeaves(w.treeView()->model()), 4);
    w.filterEdit()->setText(R"(layers\.[12)");
    QCOMPARE(countLeaves(w.treeView()->model()), 4);
    QVERIFY(w.filterEdit()->toolTip().contains("Not a regular expression"));
    w.filterModeBox()->setCurrentIndex(0);
    w.filterEdit()->clear();
    QCOMPARE(countLeaves(w.treeView()->model()), 80);
    QVERIFY(w.filterEdit()->toolTip().isEmpty());
  }

  // The per-expert map: layers x experts of bytes; a click on a cell selects its tensor in the tree.
  void expertMapClickSelectsInTree() {
    ui::MainWindow w;
    w.show();
    QSignalSpy opened(&w, &ui::MainWindow::checkpointOpened);
    w.openPath(QString::fromStdString(wstest::fixture("hf/qwen3_moe")));
    QVERIFY(opened.wait(wstest::kPatienceMs));
    w.tabs()->setCurrentIndex(1);
    auto* plot = w.expertMap()->plot();
    QCOMPARE(plot->rows(), 3);  // layers 0-2
    QCOMPARE(plot->cols(), 9);  // the dense MLP / shared column, then experts 0-7
    QVERIFY(std::isnan(plot->valueAt(0, 3)));          // layer 0 is dense: no routed experts
    QCOMPARE(plot->valueAt(1, 5), double(3 * 64 * 1024));  // gate, up, down of expert 4: 64 KiB each
    QVERIFY(plot->valueAt(0, 0) > 0);                   // the dense MLP of layer 0
    QCOMPARE(w.expertMap()->denseLayers(), std::vector<int>{0});
    w.expertMap()->setMetric(ui::ExpertMapView::Parameters);
    QCOMPARE(plot->valueAt(1, 5), double(3 * 128 * 256));  // gate, up, down of expert 4: [128, 256] each
    w.expertMap()->setMetric(ui::ExpertMapView::Tensors);
    QCOMPARE(plot->valueAt(1, 5), 3.0);
    w.expertMap()->setMetric(ui::ExpertMapView::Bytes);
    QTest::mouseClick(plot, Qt::LeftButton, Qt::NoModifier, plot->cellCentre(2, 8));  // layer 2, expert 7
    QCOMPARE(w.tabs()->currentIndex(), 0);
    const QModelIndex cur = w.treeView()->currentIndex();
    QVERIFY(cur.isValid());
    const uint32_t t = cur.data(ui::TensorTreeModel::TensorIndexRole).toUInt();
    QCOMPARE(w.checkpoint()->tensors[t].layer, 2);
    QCOMPARE(w.checkpoint()->tensors[t].expert, 7);
  }

  // EP ranks: the map follows the EP size, a click lists the rank's experts, a budget is applied,
  // and a strict remainder that does not divide is refused with the reason.
  // An engine's log dropped on the EP Ranks tab (plan --engine-log): llama.cpp's own log of
  // creating a context for the gpt-oss conversion agrees with the tab's prediction cache for
  // cache; GLM's log, held to the gpt-oss file, differs and says so in red.
  void rankMapTakesADroppedEngineLog() {
    ui::MainWindow w;
    w.show();
    QSignalSpy planned(w.rankMap(), &ui::RankMapView::planned);
    QVERIFY(openAndWait(w, wstest::sourceDir() + "/tests/data/llama_cpp/gpt-oss-bf16.gguf"));
    QVERIFY(planned.count() || planned.wait(wstest::kPatienceMs));
    w.showTab(ui::MainWindow::RanksTab);
    ui::RankMapView* v = w.rankMap();
    auto drop = [&](const std::string& log) {
      QMimeData mime;
      mime.setUrls({QUrl::fromLocalFile(QString::fromStdString(wstest::sourceDir() + "/tests/data/llama_cpp/logs/" + log))});
      QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
      QApplication::sendEvent(v, &enter);
      QVERIFY(enter.isAccepted());
      QDropEvent dropped(QPointF(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
      QApplication::sendEvent(v, &dropped);
    };
    auto verdicts = [&](const QString& figure) {
      QStringList out;
      QTreeWidget* t = v->engineLog()->table();
      for (int i = 0; i < t->topLevelItemCount(); ++i)
        if (t->topLevelItem(i)->text(0).startsWith(figure)) out << t->topLevelItem(i)->text(5);
      return out;
    };
    drop("gpt-oss-bf16-c4096-np4-kvu-f16.log");
    QCOMPARE(verdicts("llama_kv_cache"), QStringList({"agrees", "agrees"}));
    QVERIFY2(v->engineLog()->status()->text().contains("no KV figure differs"), qPrintable(v->engineLog()->status()->text()));
    drop("glm-4.5-bf16-c4096-np1-f16.log");
    QVERIFY(verdicts("llama_kv_cache").contains("differs"));
    QVERIFY(v->engineLog()->status()->text().contains("differ</b>"));
    QCOMPARE(v->engineLog()->table()->topLevelItem(0)->text(0), QString("weights loaded"));
  }

  // The EP Ranks tab's engine: SGLang splits the 8 experts over EP 3 unevenly and refuses (its
  // FusedMoE asserts they divide) - and would load the fixture's dense layer 0 broken besides
  // (WS-E009: it builds every Qwen3-MoE layer sparse); vLLM gives the remainder to the first
  // ranks and loads. The caption says which, as plan --runtime does.
  void rankMapEngineRefusals() {
    ui::MainWindow w;
    w.show();
    QSignalSpy planned(w.rankMap(), &ui::RankMapView::planned);
    QVERIFY(openAndWait(w, wstest::fixture("hf/qwen3_moe_fp8")));
    QVERIFY(planned.count() || planned.wait(wstest::kPatienceMs));
    w.showTab(ui::MainWindow::RanksTab);
    ui::RankMapView* v = w.rankMap();
    QVERIFY(!v->engineCheck());
    auto settle = [&](const std::function<void()>& change) {
      planned.clear();
      change();
      return planned.count() || planned.wait(wstest::kPatienceMs);
    };
    QVERIFY(settle([&] { v->epSizeBox()->setValue(3); }));
    QVERIFY(settle([&] { v->budgetBox()->setCurrentText("H200-141GB"); }));
    QVERIFY(settle([&] { v->engineBox()->setCurrentIndex(v->engineBox()->findData("sglang")); }));
    QVERIFY(v->engineCheck() && v->engineCheck()->refuses());
    QCOMPARE(v->engineCheck()->verdict, std::string("SGLang 0.5.23, TP 3 x DP 3, EP 3 on H200-141GB (SM 9.0): refuses: 1 reason (WS-E004); broken besides: 2 reasons (WS-E009)"));
    QVERIFY(v->caption()->text().contains("8 routed experts do not divide over EP 3"));
    // SGLang's headroom replaces vLLM's reserves, as plan --runtime sglang: on the H200 (nvidia-smi
    // 143,771 MiB) at --tp-size 3 --attn-dp-size 3, reserved 512 + 8192 x 1.5 + 3 / 8 x 1024 + 256 x 2
    // + 58 prefill graphs x 8 + DP attention 256 x 3 x 3 = 16,464 MiB: a share of 0.885 (0.88549).
    QVERIFY(v->kvBudget() && v->kvBudget()->reserves.size() == 1 && v->kvBudget()->reserves.front().name == "sglang_headroom");
    const uint64_t usable = (uint64_t(143155) << 20) - (uint64_t(512) << 20);
    QCOMPARE(v->kvBudget()->reserves.front().bytes, uint64_t(std::floor(double(usable) * (1 - 0.885))));
    QVERIFY(settle([&] { v->engineBox()->setCurrentIndex(v->engineBox()->findData("vllm")); }));
    QVERIFY(v->engineCheck() && !v->engineCheck()->refuses());
    QVERIFY(v->caption()->text().contains("vLLM 0.11.0, TP 1 x DP 3, EP 3 on H200-141GB (SM 9.0): loads"));
  }

  // The host-offload choosers fill the plan as plan's flags do, and the panel beside the ranks
  // draws what goes to host memory. llama.cpp's --n-cpu-moe 1 on the llama.cpp-written GGUF: block
  // 0's routed expert tensors (blk.0.ffn_*_exps, found here by name), gone from the rank; a host
  // budget one byte short says so. KTransformers on the transformers-written qwen3_moe, BF16 over
  // two NUMA nodes: the nodes together hold every routed expert as stored (its mlp.experts.*
  // tensors), the first 2 experts of each layer also on the GPU.
  void rankMapHostOffload() {
    ui::MainWindow w;
    w.show();
    QSignalSpy planned(w.rankMap(), &ui::RankMapView::planned);
    QVERIFY(openAndWait(w, wstest::fixture("gguf/tiny-qwen3moe-kquants.gguf")));
    QVERIFY(planned.count() || planned.wait(wstest::kPatienceMs));
    w.showTab(ui::MainWindow::RanksTab);
    ui::RankMapView* v = w.rankMap();
    ui::HostOffloadControls* h = v->hostOffload();
    auto settle = [&](const std::function<void()>& change) {
      planned.clear();
      change();
      return planned.count() || planned.wait(wstest::kPatienceMs);
    };
    QVERIFY(settle([&] { v->epSizeBox()->setValue(1); }));
    QVERIFY(!v->hostBars());
    const uint64_t before = v->result()->ranks[0].resident;
    QVERIFY(settle([&] { h->modeBox()->setCurrentIndex(h->modeBox()->findData("n-cpu-moe")); }));
    QVERIFY(settle([&] { h->amountBox()->setValue(1); }));
    uint64_t block0 = 0;
    const QRegularExpression exps("^blk\\.0\\.ffn_(up|down|gate|gate_up)_(ch|)exps");
    for (const auto& t : w.checkpoint()->tensors)
      if (exps.match(QString::fromStdString(t.name)).hasMatch()) block0 += t.bytes;
    QVERIFY(block0 > 0);
    QCOMPARE(v->result()->ranks[0].host, block0);
    QCOMPARE(v->result()->ranks[0].resident, before - block0);
    QVERIFY(v->hostBars());
    QCOMPARE(v->hostBytes(), std::vector<uint64_t>{block0});
    QCOMPARE(v->hostBars()->dataCount(), 1);
    QVERIFY2(v->caption()->text().contains("Host memory (llama.cpp --n-cpu-moe 1)"), qPrintable(v->caption()->text()));
    QVERIFY(settle([&] { h->hostMemoryBox()->setEditText(QString::number(block0 - 1)); }));
    QVERIFY2(v->caption()->text().contains("does NOT fit</b> the host's"), qPrintable(v->caption()->text()));
    QVERIFY(settle([&] { h->hostMemoryBox()->setEditText(QString::number(block0)); }));
    QVERIFY2(v->caption()->text().contains("fits the host's"), qPrintable(v->caption()->text()));
    QVERIFY(settle([&] { h->modeBox()->setCurrentIndex(0); }));
    QVERIFY(!v->hostBars());  // nothing on the host: no panel

    QVERIFY(openAndWait(w, wstest::fixture("hf/qwen3_moe")));
    QTRY_VERIFY_WITH_TIMEOUT(v->result() && v->result()->ranks.size() == 8, wstest::kPatienceMs);
    QVERIFY(settle([&] { v->epSizeBox()->setValue(1); }));
    h->ktPlacementBox()->setCurrentText("uniform");  // whatever an earlier session left (settings are remembered)
    QVERIFY(settle([&] { h->ktMethodBox()->setCurrentText("BF16"); }));
    QVERIFY(settle([&] { h->numaNodesBox()->setValue(2); }));
    QVERIFY(settle([&] { h->amountBox()->setValue(2); }));
    QVERIFY(settle([&] { h->modeBox()->setCurrentIndex(h->modeBox()->findData("kt")); }));
    QVERIFY2(v->result(), qPrintable(v->caption()->text()));
    uint64_t routed = 0;
    for (const auto& t : w.checkpoint()->tensors)
      if (QString::fromStdString(t.name).contains(".mlp.experts.")) routed += t.bytes;
    QCOMPARE(v->hostBytes().size(), size_t(2));
    QCOMPARE(v->hostBars()->dataCount(), 2);
    QCOMPARE(v->hostBytes()[0] + v->hostBytes()[1], routed);
    // 8 experts a layer, of equal size: 2 of them on the GPU.
    QCOMPARE(v->result()->ranks[0].bytes[plan::RoutedExperts], routed / 4);
    QVERIFY2(v->caption()->text().contains("--kt-num-gpu-experts 2 --kt-method BF16 --kt-threadpool-count 2"), qPrintable(v->caption()->text()));
    // The random placement: the same count, other experts - the host-only ones are no longer
    // every expert past the second of a layer.
    auto hostOnly = [&] {
      std::set<uint32_t> tensors;
      for (const auto& t : plan::notUploaded(*v->result()))
        if (t.reason == "host") tensors.insert(t.tensor);
      return tensors;
    };
    const std::set<uint32_t> uniform = hostOnly();
    QVERIFY(settle([&] { h->ktPlacementBox()->setCurrentText("random"); }));
    QVERIFY2(v->caption()->text().contains("--kt-threadpool-count 2 --kt-expert-placement-strategy random"), qPrintable(v->caption()->text()));
    // torch.randperm(24, seed 42) starts 6, 15, 22, 2, 10, 19: two picks fall on the fork's row for
    // the dense layer 0, experts 2 and 7 of layer 1 and 3 and 6 of layer 2 - four on the GPU, as
    // uniform's first two of layers 1 and 2, but others.
    QVERIFY(hostOnly() != uniform && hostOnly().size() == uniform.size());
    QVERIFY(settle([&] { h->ktPlacementBox()->setCurrentText("uniform"); }));
    QCOMPARE(hostOnly(), uniform);
    // KTransformers plans one rank: EP 2 is refused by the core, with its reason.
    QVERIFY(settle([&] { v->epSizeBox()->setValue(2); }));
    QVERIFY(!v->result() && !v->hostBars());
    QVERIFY2(v->caption()->text().contains("plans one expert-parallel rank"), qPrintable(v->caption()->text()));
  }

  void rankMapFollowsEpSize() {
    ui::MainWindow w;
    w.show();
    QSignalSpy planned(w.rankMap(), &ui::RankMapView::planned);
    QVERIFY(openAndWait(w, wstest::fixture("hf/qwen3_moe")));
    QVERIFY(planned.wait(wstest::kPatienceMs));
    w.showTab(ui::MainWindow::RanksTab);
    ui::RankMapView* v = w.rankMap();
    QCOMPARE(v->result()->ranks.size(), size_t(8));  // 8 experts: EP 8 by default

    planned.clear();
    v->epSizeBox()->selectAll();
    QTest::keyClicks(v->epSizeBox(), "4");
    QVERIFY(planned.count() || planned.wait(wstest::kPatienceMs));
    QCOMPARE(v->result()->ranks.size(), size_t(4));
    for (int i = 0; i < v->plot()->plottableCount(); ++i)
      if (auto* bars = qobject_cast<QCPBars*>(v->plot()->plottable(i))) QCOMPARE(bars->dataCount(), 4);
    // Rank 2 of 4 holds experts 4 and 5: gate, up and down of 64 KiB each in MoE layers 1 and 2.
    QTest::mouseClick(v->plot(), Qt::LeftButton, Qt::NoModifier, v->barCentre(2));
    QCOMPARE(v->selectedRank(), 2);
    QCOMPARE(v->result()->ranks[2].experts, (std::vector<int64_t>{4, 5}));
    QCOMPARE(v->result()->ranks[2].bytes[plan::RoutedExperts], uint64_t(2 * 2 * 3 * 64 * 1024));
    QStringList listed;
    for (int i = 0; i < v->rankDetails()->topLevelItemCount(); ++i) {
      QTreeWidgetItem* top = v->rankDetails()->topLevelItem(i);
      if (top->text(0).contains("routed expert"))
        for (int k = 0; k < top->childCount(); ++k) listed << top->child(k)->text(0);
    }
    QCOMPARE(listed, (QStringList{"expert 4", "expert 5"}));
    // The rank's tensors are listed when their row is opened; activating one shows it in the tree.
    QTreeWidgetItem* held = nullptr;
    for (int i = 0; i < v->rankDetails()->topLevelItemCount(); ++i)
      if (v->rankDetails()->topLevelItem(i)->text(0).contains("held")) held = v->rankDetails()->topLevelItem(i);
    QVERIFY(held);
    QCOMPARE(held->childCount(), 0);
    held->setExpanded(true);
    QCOMPARE(size_t(held->childCount()), v->result()->ranks[2].held.size());
    QTreeWidgetItem* last = held->child(held->childCount() - 1);
    emit v->rankDetails()->itemActivated(last, 0);
    QCOMPARE(w.tabs()->currentIndex(), int(ui::MainWindow::TensorsTab));
    QCOMPARE(QString::fromStdString(w.checkpoint()->tensors[size_t(w.selectedTensor())].name), last->text(0));
    w.showTab(ui::MainWindow::RanksTab);

    planned.clear();
    v->budgetBox()->setEditText("1MiB");  // less than any rank needs
    QVERIFY(planned.count() || planned.wait(wstest::kPatienceMs));
    QVERIFY(v->result()->ranks[0].fits.has_value() && !*v->result()->ranks[0].fits);
    QVERIFY2(v->caption()->text().contains("0 of 4 ranks fit"), qPrintable(v->caption()->text()));

    planned.clear();
    v->remainderBox()->setCurrentIndex(v->remainderBox()->findData(int(plan::Remainder::Strict)));
    QVERIFY(planned.count() || planned.wait(wstest::kPatienceMs));
    planned.clear();
    v->epSizeBox()->setValue(3);
    QVERIFY(planned.count() || planned.wait(wstest::kPatienceMs));
    QVERIFY(!v->result());
    QVERIFY2(v->caption()->text().contains("do not divide"), qPrintable(v->caption()->text()));
  }

  // The KV-cache controls feed the same core the plan command uses: the cache at the chosen context
  // length and dtype, each rank's share of the requests drawn above its weights and reserves, the
  // tokens that fit per rank, and the fewest GPUs for the requests (plan --fit's answer).
  void rankMapKvCacheAndFit() {
    ui::MainWindow w;
    w.show();
    QSignalSpy planned(w.rankMap(), &ui::RankMapView::planned);
    QVERIFY(openAndWait(w, wstest::fixture("hf/qwen3_moe")));
    QVERIFY(planned.wait(wstest::kPatienceMs));
    w.showTab(ui::MainWindow::RanksTab);
    ui::RankMapView* v = w.rankMap();
    auto settle = [&] { QTRY_VERIFY_WITH_TIMEOUT(!planned.isEmpty(), wstest::kPatienceMs); };
    planned.clear();
    v->epSizeBox()->setValue(4);
    settle();
    planned.clear();
    v->contextBox()->setValue(4096);
    settle();
    planned.clear();
    v->kvDtypeBox()->setCurrentText("fp8");
    settle();
    planned.clear();
    v->requestsBox()->setValue(40);
    settle();
    planned.clear();
    v->budgetBox()->setEditText("160MiB");
    settle();
    QTRY_VERIFY_WITH_TIMEOUT(v->kvBudget() && v->kvBudget()->cache && v->fit(), wstest::kPatienceMs);

    plan::KvOptions ko;
    ko.maxModelLen = 4096;
    ko.dtype = "fp8";
    // vLLM's own defaults for a 160 MiB device, as plan takes them: 2048 batched tokens, 256 sequences.
    ko.maxNumBatchedTokens = 2048, ko.defaultMaxNumSeqs = 256;
    const plan::KvBudget want = plan::kvBudgetFor(w.checkpoint()->model, ko, 0);
    QVERIFY(want.cache);
    QCOMPARE(v->kvBudget()->cache->maxModelLen, int64_t(4096));
    QCOMPARE(v->kvBudget()->cache->bytesPerToken, want.cache->bytesPerToken);
    QCOMPARE(v->kvBudget()->reserveBytes(), want.reserveBytes());
    // The KV bars: 40 requests over 4 ranks, 10 a rank, of 4,096 tokens each.
    QCPBars* kvBars = nullptr;
    for (int i = 0; i < v->plot()->plottableCount(); ++i)
      if (auto* b = qobject_cast<QCPBars*>(v->plot()->plottable(i)); b && b->name().startsWith("KV cache")) kvBars = b;
    QVERIFY(kvBars);
    QVERIFY2(kvBars->name().contains("10 request"), qPrintable(kvBars->name()));
    const QString label = v->plot()->yAxis->label();
    const double divisor = label.contains("(GiB)") ? double(1 << 30) : label.contains("(MiB)") ? double(1 << 20) : label.contains("(KiB)") ? 1024.0 : 1.0;
    const double drawn = kvBars->data()->at(0)->mainValue() * divisor;
    QVERIFY2(std::fabs(drawn - double(10 * 4096 * want.cache->bytesPerToken)) < 1e-3, qPrintable(QString::number(drawn) + " " + label));
    // The fit: the same search plan --fit runs.
    plan::PlanOptions base = *v->planOptions();
    auto fit = plan::fitDeployment(*w.checkpoint(), base, plan::PlacementSpec{}, ko, 0, 40);
    QVERIFY(fit.ok());
    QCOMPARE(fit.value().tried.size(), v->fit()->tried.size());
    QCOMPARE(bool(fit.value().answer), bool(v->fit()->answer));
    if (fit.value().answer) {
      const QString line = QString("40 requests fit on EP %1 x TP %2").arg(fit.value().answer->ep).arg(fit.value().answer->tp);
      QVERIFY2(v->caption()->text().contains(line), qPrintable(v->caption()->text()));
    } else {
      QVERIFY2(v->caption()->text().contains("40 requests do not fit"), qPrintable(v->caption()->text()));
    }
    // Each rank's room for the cache, in its details.
    const plan::KvFit f = v->kvBudget()->fit(*v->planOptions(), v->result()->ranks[0]);
    v->selectRank(0);
    QVERIFY(!v->rankDetails()->findItems(QString::number(f.tokensFit), Qt::MatchExactly | Qt::MatchRecursive, 1).isEmpty());
    qInfo("%s", qPrintable(v->caption()->text()));
  }

  // The Metadata tab on a vocabulary GGUF of 256,000 tokens (written here, byte by byte, as GGUF
  // v3 lays out key-value pairs): every key listed with its GGUF type, the token array opens into
  // its elements and scrolls to the last one reading only the rows shown, the search narrows the
  // keys, and the chat template shows whole in the detail pane.
  void metadataTab() {
    wstest::TempDir d;
    const std::string path = d.file("vocab.gguf");
    const std::string tmpl = "{%- for m in messages %}{{ '<|im_start|>' + m['role'] }}\n{{ m['content'] }}{%- endfor %}{# end #}";
    {
      std::ofstream f(path, std::ios::binary);
      auto u32 = [&](uint32_t v) { f.write(reinterpret_cast<const char*>(&v), 4); };
      auto u64 = [&](uint64_t v) { f.write(reinterpret_cast<const char*>(&v), 8); };
      auto str = [&](const std::string& v) { u64(v.size()); f.write(v.data(), std::streamsize(v.size())); };
      f.write("GGUF", 4);
      u32(3);
      u64(0);  // tensors
      u64(4);  // key-value pairs
      str("general.architecture"), u32(8), str("llama");
      str("tokenizer.ggml.model"), u32(8), str("gpt2");
      str("tokenizer.ggml.tokens"), u32(9), u32(8), u64(256000);
      for (int i = 0; i < 256000; ++i) str("tok" + std::to_string(i));
      str("tokenizer.chat_template"), u32(8), str(tmpl);
    }
    ui::MainWindow w;
    w.show();
    QVERIFY(openAndWait(w, path));
    w.showTab(ui::MainWindow::MetadataTab);
    auto* v = qobject_cast<ui::MetadataView*>(w.tabs()->currentWidget());
    QVERIFY(v);
    QVERIFY2(v->tokenizerLabel()->text().contains("256000 tokens"), qPrintable(v->tokenizerLabel()->text()));
    QCOMPARE(v->model()->rowCount(), 4);
    QCOMPARE(v->model()->index(2, ui::MetadataModel::Type).data().toString(), QString("ARRAY of STRING"));
    const QModelIndex tokens = v->proxy()->index(2, 0);
    QCOMPARE(v->proxy()->rowCount(tokens), 256000);
    v->tree()->expand(tokens);
    v->tree()->scrollToBottom();
    QApplication::processEvents();
    QCOMPARE(v->proxy()->index(255999, ui::MetadataModel::Value, tokens).data().toString(), QString("tok255999"));
    QVERIFY2(v->model()->elementsRead() < 2000, qPrintable(QString::number(v->model()->elementsRead())));  // the rows shown, not 256,000
    v->searchEdit()->setText("chat");
    QCOMPARE(v->proxy()->rowCount(), 1);
    v->tree()->setCurrentIndex(v->proxy()->index(0, 0));
    QCOMPARE(v->detail()->toPlainText(), QString::fromStdString(tmpl));
    v->searchEdit()->clear();
    QAbstractItemModelTester tester(v->proxy(), QAbstractItemModelTester::FailureReportingMode::QtTest);
  }

  // An EPLB map with replicas of the hot experts: the ranks hold the slots it names.
  void rankMapFromEplbMap() {
    wstest::TempDir d;
    wstest::writeFile(d.file("eplb.json"), std::string(R"({"physical_to_logical": [0, 1, 2, 3, 4, 5, 6, 7, 0, 0, 1, 1, 2, 2, 3, 3]})"));
    ui::MainWindow w;
    QSignalSpy planned(w.rankMap(), &ui::RankMapView::planned);
    QVERIFY(openAndWait(w, wstest::fixture("hf/qwen3_moe")));
    QVERIFY(planned.wait(wstest::kPatienceMs));
    ui::RankMapView* v = w.rankMap();
    v->epSizeBox()->setValue(4);
    QVERIFY(planned.wait(wstest::kPatienceMs));
    planned.clear();
    v->setMapFile(QString::fromStdString(d.file("eplb.json")));
    QVERIFY(planned.count() || planned.wait(wstest::kPatienceMs));
    QVERIFY2(v->result(), qPrintable(v->caption()->text()));
    QCOMPARE(v->result()->ranks.size(), size_t(4));
    QCOMPARE(v->result()->ranks[0].experts, (std::vector<int64_t>{0, 1, 2, 3}));
    QCOMPARE(v->result()->ranks[3].experts, (std::vector<int64_t>{2, 2, 3, 3}));
    QVERIFY(v->placementBox()->currentText().contains("eplb.json"));
    v->selectRank(3);
    QStringList listed;
    for (int i = 0; i < v->rankDetails()->topLevelItemCount(); ++i) {
      QTreeWidgetItem* top = v->rankDetails()->topLevelItem(i);
      if (top->text(0).contains("routed expert"))
        for (int k = 0; k < top->childCount(); ++k) listed << top->child(k)->text(0);
    }
    QCOMPARE(listed, (QStringList{"expert 2", "expert 2", "expert 3", "expert 3"}));
  }

  // Preview: Ctrl+P on a stacked Q6_K tensor, then a tile of expert 3; the values equal ggml's own
  // dequantization in the expected fixture, bit for bit, and the device used is shown.
  void previewMatchesGgml() {
    ui::MainWindow w;
    w.show();
    QVERIFY(openAndWait(w, wstest::fixture("gguf/tiny-qwen3moe-kquants.gguf")));
    const std::string name = "blk.0.ffn_down_exps.weight";
    w.selectTensor(tensorIndex(*w.checkpoint(), name));
    QSignalSpy ready(w.preview(), &ui::PreviewView::previewReady);
    QVERIFY(activate(w));  // shortcuts go to the active window
    QTest::keyClick(w.treeView(), Qt::Key_P, Qt::ControlModifier);
    QCOMPARE(w.tabs()->currentIndex(), int(ui::MainWindow::PreviewTab));
    QVERIFY(ready.wait(wstest::kPatienceMs));
    ready.clear();
    w.preview()->setTile(3, 10, 20, 64);
    QVERIFY(ready.wait(wstest::kPatienceMs));
    ui::PreviewView* p = w.preview();
    QVERIFY2(p->error().isEmpty(), qPrintable(p->error()));
    QCOMPARE(p->tileRows(), 64);
    QCOMPARE(p->tileCols(), 64);
    QVERIFY(p->deviceLabel()->text().contains("CPU"));  // no GPU dequantizer in this test

    auto expected = wstest::openOrFail(wstest::fixture("gguf/tiny-qwen3moe-kquants.expected.gguf"));
    auto ref = num::dequantize(*expected, {expected->find(name)->logical, 3, 10, 74});
    QVERIFY(ref);
    const auto& e = ref.value();
    QCOMPARE(e.shape, (std::vector<uint64_t>{64, 256}));
    for (int r = 0; r < 64; ++r)
      for (int c = 0; c < 64; ++c) {
        const float got = p->tileValues()[size_t(r) * 64 + c], want = e.values[size_t(r) * 256 + 20 + c];
        if (std::memcmp(&got, &want, 4) != 0) QFAIL(qPrintable(QString("[%1, %2]: %3 != %4").arg(r).arg(c).arg(got).arg(want)));
        QCOMPARE(p->plot()->valueAt(r, c), double(want));
      }
    // The value under the cursor. On a real X display the pointer is warped and its motion event
    // comes back later (under load, after the check): move again until the label has followed.
    QElapsedTimer moving;
    moving.start();
    do {
      QTest::mouseMove(p->plot(), p->plot()->cellCentre(5, 7));
      QTest::qWait(20);
    } while (!p->valueLabel()->text().contains("[15, 27]") && moving.elapsed() < wstest::kPatienceMs);
    QVERIFY2(p->valueLabel()->text().contains("[15, 27]"), qPrintable(p->valueLabel()->text()));
    QVERIFY(p->valueLabel()->text().contains(QString::number(double(e.values[size_t(5) * 256 + 27]), 'g', 7)));

    // With a GPU dequantizer registered (a stand-in here: the GPU session checks the real one
    // against the CPU), the preview asks it for exactly the tile's rows and says where it ran.
    std::vector<std::pair<uint64_t, uint64_t>> asked;
    num::registerDeviceDequant(
        [&asked](const Checkpoint& c, uint32_t logical, uint64_t first, uint64_t rows) -> Result<std::vector<float>> {
          asked.push_back({first, rows});
          auto d = num::makeDecoder(c, logical);
          if (!d) return d.error();
          std::vector<float> out(rows * d.value()->cols());
          d.value()->decode(first, rows, out.data());
          return out;
        },
        "stand-in:0");
    ready.clear();
    p->setTile(3, 10, 20, 64);
    QVERIFY(ready.wait(wstest::kPatienceMs));
    num::unregisterDeviceDequant();
    QCOMPARE(asked, (std::vector<std::pair<uint64_t, uint64_t>>{{3 * 256 + 10, 64}}));  // expert 3's rows 10..73
    QVERIFY2(p->deviceLabel()->text().contains("stand-in:0 (GPU)"), qPrintable(p->deviceLabel()->text()));
    for (int r = 0; r < 64; ++r)
      for (int c = 0; c < 64; ++c) QCOMPARE(p->tileValues()[size_t(r) * 64 + c], e.values[size_t(r) * 256 + 20 + c]);
  }

  // Preview with the KTransformers numerics: the tile of an FP8 expert is what dequant --numerics kt
  // gives (that arithmetic is checked against numpy in reference_dequant.py), not the reference,
  // the label says so, and switching back shows the reference again.
  void previewKtNumerics() {
    ui::MainWindow w;
    w.show();
    QVERIFY(openAndWait(w, wstest::fixture("hf/qwen3_moe_fp8")));
    const std::string name = "model.layers.1.mlp.experts.2.down_proj.weight";
    w.showTab(ui::MainWindow::PreviewTab);
    ui::PreviewView* p = w.preview();
    QSignalSpy ready(p, &ui::PreviewView::previewReady);
    p->showTensor(tensorIndex(*w.checkpoint(), name));
    QVERIFY(ready.wait(wstest::kPatienceMs));
    ready.clear();
    p->setTile(-1, 0, 0, 64);
    QVERIFY(ready.wait(wstest::kPatienceMs));
    const auto tileOf = [&](num::Numerics n) {
      num::DequantRequest req{w.checkpoint()->find(name)->logical, -1, 0, 64};
      req.numerics = n;
      auto r = num::dequantize(*w.checkpoint(), req);
      if (!r) qFatal("%s", r.error().describe().c_str());
      std::vector<float> t;
      const uint64_t cols = r.value().shape.back();
      for (uint64_t i = 0; i < 64; ++i)
        for (uint64_t j = 0; j < 64; ++j) t.push_back(r.value().values[i * cols + j]);
      return t;
    };
    const auto reference = tileOf(num::Numerics::Reference), kt = tileOf(num::Numerics::Kt);
    QVERIFY(reference != kt);  // the fixture's scales are not BF16-exact
    QCOMPARE(p->tileValues(), reference);
    ready.clear();
    p->numericsBox()->setCurrentIndex(p->numericsBox()->findData(int(num::Numerics::Kt)));
    QVERIFY(ready.wait(wstest::kPatienceMs));
    QCOMPARE(p->tileValues(), kt);
    QVERIFY2(p->deviceLabel()->text().contains("numerics kt"), qPrintable(p->deviceLabel()->text()));
    ready.clear();
    p->numericsBox()->setCurrentIndex(p->numericsBox()->findData(int(num::Numerics::Reference)));
    QVERIFY(ready.wait(wstest::kPatienceMs));
    QCOMPARE(p->tileValues(), reference);
  }

  // Full load: start, cancel while uploads are in flight, and nothing is left allocated; then a
  // load that runs to the end and measures what the planner predicted.
  void loadStartAndCancel() {
    ui::MainWindow w;
    w.show();
    QVERIFY(openAndWait(w, wstest::fixture("hf/qwen3_moe")));
    w.showTab(ui::MainWindow::LoadTab);
    ui::LoadView* v = w.loadView();
    QSemaphore entered;
    auto gate = std::make_shared<std::pair<std::mutex, std::condition_variable>>();
    auto open = std::make_shared<bool>(false);
    v->setBackendFactory([&entered, gate, open](const std::string& device) -> Result<std::unique_ptr<load::DeviceBackend>> {
      if (device != "host") return Error{ErrorCode::Usage, "unexpected device " + device, {}, std::nullopt, {}};
      return std::unique_ptr<load::DeviceBackend>(std::make_unique<GatedBackend>(entered, gate, open));
    });
    v->deviceBox()->setCurrentIndex(0);
    QSignalSpy finished(v, &ui::LoadView::finished);
    QTest::mouseClick(v->startButton(), Qt::LeftButton);
    QVERIFY(entered.tryAcquire(1, wstest::kPatienceMs));  // an upload is waiting at the gate
    QVERIFY(v->running());
    QVERIFY(!v->startButton()->isEnabled());
    QVERIFY(v->cancelButton()->isEnabled());
    QTest::mouseClick(v->cancelButton(), Qt::LeftButton);
    {
      std::lock_guard lock(gate->first);
      *open = true;
    }
    gate->second.notify_all();
    QVERIFY(finished.wait(wstest::kPatienceMs));
    QVERIFY(!v->report());
    QVERIFY2(v->error().contains("cancelled"), qPrintable(v->error()));
    QVERIFY2(v->status()->text().contains("Allocations left on the device: 0"), qPrintable(v->status()->text()));
    QVERIFY(v->startButton()->isEnabled());
    QVERIFY(!v->cancelButton()->isEnabled());

    // Again, to the end: everything resident, measured equal to predicted, per category too.
    v->setBackendFactory(load::makeBackend);
    finished.clear();
    QTest::mouseClick(v->startButton(), Qt::LeftButton);
    QVERIFY(finished.wait(wstest::kPatienceMs));
    QVERIFY2(v->report(), qPrintable(v->error()));
    QCOMPARE(v->report()->resident, w.checkpoint()->totalBytes());
    QCOMPARE(v->report()->residentDifference, int64_t(0));
    QCOMPARE(v->report()->bytes, v->report()->predicted.bytes);
    QTreeWidgetItem* top = v->residency()->topLevelItem(0);
    QCOMPARE(top->text(1), top->text(2));  // measured, predicted
    QCOMPARE(top->text(3), QString("0"));

    // EP 4, rank 1, fused gate+up derived: 2 experts x 2 MoE layers, one [2I, H] buffer each.
    v->epSizeBox()->setValue(4);
    v->epRankBox()->setValue(1);
    v->fusedGateUpBox()->setChecked(true);
    finished.clear();
    QTest::mouseClick(v->startButton(), Qt::LeftButton);
    QVERIFY(finished.wait(wstest::kPatienceMs));
    QVERIFY2(v->report(), qPrintable(v->error()));
    QCOMPARE(v->report()->epRank, 1);
    QCOMPARE(v->report()->epSize, 4);
    QCOMPARE(v->report()->bytes[plan::RoutedExperts], uint64_t(2 * 2 * 3 * 64 * 1024));
    QCOMPARE(v->report()->derivedBytes, uint64_t(2 * 2 * 2 * 64 * 1024));
    QVERIFY(!v->report()->residency.mismatch);
    QCOMPARE(v->report()->residency.arenas, uint64_t(2));  // one for the tensors, one for the derived buffers
    QTreeWidgetItem* derived = v->residency()->topLevelItem(1);
    QCOMPARE(derived->childCount(), 4);
    QVERIFY(derived->child(0)->text(0).contains("fused-gate-up"));

    // Freeing the derived buffers right after the load hands their arena back, and the view says so.
    v->freeGlobEdit()->setText("*gate_up*");
    finished.clear();
    QTest::mouseClick(v->startButton(), Qt::LeftButton);
    QVERIFY(finished.wait(wstest::kPatienceMs));
    QVERIFY2(v->report(), qPrintable(v->error()));
    const auto freedItems = v->residency()->findItems("freed *gate_up*", Qt::MatchStartsWith | Qt::MatchRecursive);
    QCOMPARE(freedItems.size(), 1);
    QVERIFY(freedItems[0]->text(0).contains("4 tensor(s)/buffer(s)"));
    QCOMPARE(freedItems[0]->text(1), QString("512.00 KiB"));
    QVERIFY(freedItems[0]->child(0)->text(0).startsWith("1 arena(s)"));
    v->freeGlobEdit()->clear();

    // Round-robin from the tab's placement chooser (the one the EP Ranks tab has): rank 1 of 4
    // now holds experts 1 and 5.
    QComboBox* placement = v->placement()->placementBox();
    placement->setCurrentIndex(placement->findData(int(plan::PlacementKind::RoundRobin)));
    finished.clear();
    QTest::mouseClick(v->startButton(), Qt::LeftButton);
    QVERIFY(finished.wait(wstest::kPatienceMs));
    QVERIFY2(v->report(), qPrintable(v->error()));
    QCOMPARE(v->report()->predicted.experts, (std::vector<int64_t>{1, 5}));
  }

  // A second checkpoint opened while every view's job runs: the window waits for none of them (the
  // load is provably still held at its gate when the new checkpoint is shown - a wait would never
  // return), and none of their results shows up once they do finish. The longest event-loop stall
  // while opening is printed: a measurement for the record, not an assertion.
  void secondCheckpointWhileJobsRun() {
    ui::MainWindow w;
    w.show();
    QVERIFY(openAndWait(w, wstest::fixture("hf/qwen3_moe_fp8")));
    ui::LoadView* load = w.loadView();
    QSemaphore entered;
    auto gate = std::make_shared<std::pair<std::mutex, std::condition_variable>>();
    auto open = std::make_shared<bool>(false);
    auto gone = std::make_shared<std::atomic<int>>(0);
    load->setBackendFactory([&entered, gate, open, gone](const std::string&) -> Result<std::unique_ptr<load::DeviceBackend>> {
      return std::unique_ptr<load::DeviceBackend>(std::make_unique<GatedBackend>(entered, gate, open, gone));
    });
    load->deviceBox()->setCurrentIndex(0);
    // Every view busy at once: validation, the scale pass (Scales tab), a preview, a plan, a load.
    w.findings()->run();
    w.showTab(ui::MainWindow::ScalesTab);
    w.preview()->showTensor(0);
    w.rankMap()->epSizeBox()->setValue(2);
    w.showTab(ui::MainWindow::LoadTab);
    load->start();
    QVERIFY(entered.tryAcquire(1, wstest::kPatienceMs));
    QVERIFY(load->running());

    QElapsedTimer clock;
    qint64 last = 0, stall = 0;
    QTimer tick;
    tick.setInterval(1);
    connect(&tick, &QTimer::timeout, &tick, [&] {
      const qint64 now = clock.elapsed();
      stall = std::max(stall, now - last);
      last = now;
    });
    clock.start();
    tick.start();
    QVERIFY(openAndWait(w, wstest::fixture("hf/deepseek_v3")));
    tick.stop();
    stall = std::max(stall, clock.elapsed() - last);
    qInfo("longest event-loop stall while opening a second checkpoint over 5 running jobs: %lld ms", (long long)stall);
    QCOMPARE(QString::fromStdString(w.checkpoint()->root), QString::fromStdString(wstest::fixture("hf/deepseek_v3")));
    QCOMPARE(gone->load(), 0);  // the first load is still held at its gate: nobody waited for it
    QVERIFY(!load->running());
    QVERIFY(load->startButton()->isEnabled());

    // Let the old load finish; what it and the other old jobs deliver is dropped.
    {
      std::lock_guard lock(gate->first);
      *open = true;
    }
    gate->second.notify_all();
    QTRY_VERIFY_WITH_TIMEOUT(gone->load() == 1, wstest::kPatienceMs);
    QTRY_VERIFY_WITH_TIMEOUT(w.rankMap()->result(), wstest::kPatienceMs);  // the new checkpoint's plan
    // Every background job has finished (QtConcurrent's pool is idle) and what each posted to the
    // GUI thread has been delivered: a result still on its way can no longer arrive after the checks.
    QVERIFY(QThreadPool::globalInstance()->waitForDone(wstest::kPatienceMs));
    for (int i = 0; i < 3; ++i) QCoreApplication::sendPostedEvents(), QCoreApplication::processEvents();
    QVERIFY(!load->report());
    QVERIFY(load->error().isEmpty());
    QVERIFY(!w.findings()->report());
    QVERIFY(w.preview()->tileValues().empty());
    QVERIFY(!w.scalePass()->result() || w.scalePass()->checkpoint().get() == w.checkpoint());
    QCOMPARE(int(w.rankMap()->result()->ranks.size()), w.rankMap()->epSizeBox()->value());
    uint64_t routed = 0;
    for (const auto& r : w.rankMap()->result()->ranks) routed += r.bytes[plan::RoutedExperts];
    uint64_t want = 0;
    for (const auto& t : w.checkpoint()->tensors) want += t.role == Role::RoutedExpert ? t.bytes : 0;
    QCOMPARE(routed, want);  // the plan is the new checkpoint's, not the old one's
  }

  // Validation: an outlier scale is found, the severity filter hides what is below it, a click goes
  // to the tensor, the details pane and the scale histogram show it, and the report exports.
  void findingsAndHistogram() {
    wstest::TempDir d;
    const std::string scale = "model.layers.2.mlp.experts.3.gate_proj.weight_scale_inv";
    const std::string path = fp8WithOutlierScale(d, scale);
    ui::MainWindow w;
    w.show();
    QSignalSpy computed(w.histograms(), &ui::ScaleHistogramView::computed);
    QVERIFY(openAndWait(w, path));
    w.showTab(ui::MainWindow::FindingsTab);
    ui::FindingsView* f = w.findings();
    QAbstractItemModelTester tester(f->table()->model(), QAbstractItemModelTester::FailureReportingMode::QtTest);  // the severity proxy
    QSignalSpy finished(f, &ui::FindingsView::finished);
    QTest::mouseClick(f->runButton(), Qt::LeftButton);
    QVERIFY(finished.wait(wstest::kPatienceMs));
    const val::ValidationReport* rep = f->report();
    QVERIFY(rep);
    QCOMPARE(f->model()->rowCount(), int(rep->findings.size()));
    int outlierRow = -1;
    for (int r = 0; r < f->model()->rowCount(); ++r)
      if (f->model()->index(r, ui::FindingsModel::Code).data() == "WS-V007") {
        QCOMPARE(outlierRow, -1);  // only the patched tensor
        outlierRow = r;
      }
    QVERIFY(outlierRow >= 0);
    QCOMPARE(f->model()->index(outlierRow, ui::FindingsModel::Tensor).data().toString().toStdString(), scale);

    f->setMinimumSeverity(val::Severity::Error);
    QCOMPARE(visibleRows(f->table()), int(rep->count(val::Severity::Error)));
    f->setMinimumSeverity(val::Severity::Warning);
    QCOMPARE(visibleRows(f->table()), int(rep->count(val::Severity::Error) + rep->count(val::Severity::Warning)));
    QVERIFY(rep->count(val::Severity::Warning) >= 1);
    f->setMinimumSeverity(val::Severity::Info);
    QCOMPARE(visibleRows(f->table()), int(rep->findings.size()));

    // A click on the finding selects its tensor in the tree; the details pane lists the finding.
    const QModelIndex cell = f->table()->model()->index(outlierRow, ui::FindingsModel::Tensor);
    f->table()->scrollTo(cell);
    QTest::mouseClick(f->table()->viewport(), Qt::LeftButton, Qt::NoModifier, f->table()->visualRect(cell).center());
    QCOMPARE(w.tabs()->currentIndex(), int(ui::MainWindow::TensorsTab));
    QCOMPARE(w.selectedTensor(), int64_t(tensorIndex(*w.checkpoint(), scale)));
    auto* details = w.findChild<QTextBrowser*>();
    QVERIFY(details && details->toPlainText().contains("WS-V007"));

    // Export: the JSON file is the validator's own report.
    QCOMPARE(f->exportTo(QString::fromStdString(d.file("report.json"))), QString());
    std::ifstream in(d.file("report.json"));
    const auto j = nlohmann::json::parse(in);
    QCOMPARE(j, validateJson(*rep, val::Severity::Info));
    QVERIFY(!f->exportTo(QString::fromStdString(d.file("report.txt"))).isEmpty());  // unknown type: refused

    // The whole checkpoint's block scales: the patched tensor's 2 values sit in red outlier bins.
    ui::ScaleHistogramView* h = w.histograms();
    QVERIFY(!h->report());  // scale statistics wait until someone looks
    w.showTab(ui::MainWindow::ScalesTab);
    QVERIFY(computed.wait(wstest::kPatienceMs));
    h->kindBox()->setCurrentText("scale");
    uint64_t inOutliers = 0, total = 0;
    for (size_t i = 0; i < h->histogram().counts.size(); ++i) {
      total += h->histogram().counts[i];
      if (h->outlierBins()[i]) inOutliers += h->histogram().counts[i];
    }
    QCOMPARE(inOutliers, w.checkpoint()->find(scale)->elements());
    QCOMPARE(total, h->report()->groups.at("checkpoint").at("scale").stats.count);
    QVERIFY(h->findingsList()->findItems(QString::fromStdString(scale), Qt::MatchExactly, 1).size() == 1);

    // Another grouping comes from the same pass over the scales, not a second read.
    const num::ScaleReport* pass = w.scalePass()->result().get();
    QVERIFY(pass);
    computed.clear();
    h->groupingBox()->setCurrentIndex(h->groupingBox()->findData(int(num::ScaleGrouping::Layer)));
    QVERIFY(computed.wait(wstest::kPatienceMs));
    QCOMPARE(w.scalePass()->result().get(), pass);
    QVERIFY(h->report()->groups.count("layer 2"));
    uint64_t layer2 = 0;  // the scale values stored in layer 2, from the catalog
    for (const auto& t : w.checkpoint()->tensors)
      if (t.layer == 2 && t.component == Component::Scale) layer2 += t.elements();
    QCOMPARE(h->report()->groups.at("layer 2").at("scale").stats.count, layer2);

    // The expert map coloured by typical scale: layer 2, expert 3 stands out (its gate scales are
    // 5 octaves up, so the cell's count-weighted mean over gate, up and down is 5/3 octaves up).
    QSignalSpy drawn(w.expertMap(), &ui::ExpertMapView::drawn);
    w.expertMap()->setMetric(ui::ExpertMapView::TypicalScale);  // the Scales tab's pass serves it at once
    QVERIFY(drawn.count() || drawn.wait(wstest::kPatienceMs));
    QCOMPARE(w.scalePass()->result().get(), pass);  // the same read of the scales
    ui::HeatmapPlot* map = w.expertMap()->plot();
    const double patched = map->valueAt(2, 4);
    for (int layer = 1; layer <= 2; ++layer)
      for (int e = 0; e < 8; ++e)
        if (!(layer == 2 && e == 3)) QVERIFY2(patched > map->valueAt(layer, e + 1) + 1.5, qPrintable(QString("layer %1 expert %2").arg(layer).arg(e)));

    // Ctrl+H on the tensor: its own histogram, nothing an outlier within one tensor.
    computed.clear();
    QVERIFY(activate(w));
    QTest::keyClick(w.treeView(), Qt::Key_H, Qt::ControlModifier);
    QCOMPARE(w.tabs()->currentIndex(), int(ui::MainWindow::ScalesTab));
    QVERIFY(computed.wait(wstest::kPatienceMs));
    QCOMPARE(h->groupBox()->currentText().toStdString(), w.checkpoint()->logical[w.checkpoint()->find(scale)->logical].name);
    uint64_t n = 0;
    for (uint64_t c : h->histogram().counts) n += c;
    QCOMPARE(n, w.checkpoint()->find(scale)->elements());
  }

  // The Findings tab's deployment row: vLLM at TP 2 x EP 2 on an H200 refuses the FP8 fixture
  // (its k_proj shards are half a block), and the verdict heads the tab as it heads the report; a
  // TP past the heads is said there and nothing runs; the layout boxes are for serving engines only.
  void findingsDeploymentRow() {
    ui::MainWindow w;
    w.show();
    QVERIFY(openAndWait(w, wstest::fixture("hf/qwen3_moe_fp8")));
    w.showTab(ui::MainWindow::FindingsTab);
    ui::FindingsView* f = w.findings();
    QVERIFY(!f->tpBox()->isEnabled());
    f->runtimeBox()->setCurrentIndex(f->runtimeBox()->findData("vllm"));
    QVERIFY(f->tpBox()->isEnabled() && f->gpuBox()->isEnabled());
    f->tpBox()->setValue(2);
    f->epBox()->setValue(2);
    f->gpuBox()->setCurrentIndex(f->gpuBox()->findData("H200-141GB"));
    QSignalSpy finished(f, &ui::FindingsView::finished);
    QTest::mouseClick(f->runButton(), Qt::LeftButton);
    QVERIFY(finished.wait(wstest::kPatienceMs));
    QVERIFY(f->report());
    QCOMPARE(f->report()->verdict, std::string("vLLM 0.11.0, TP 2, EP 2 on H200-141GB (SM 9.0): refuses: 1 reason (WS-E005)"));
    QVERIFY(f->verdict()->isVisible());
    QVERIFY(f->verdict()->text().contains("refuses: 1 reason (WS-E005)"));
    bool listed = false;
    for (int r = 0; r < f->model()->rowCount(); ++r) listed |= f->model()->index(r, ui::FindingsModel::Code).data() == "WS-E005";
    QVERIFY(listed);
    f->tpBox()->setValue(8);
    f->epBox()->setValue(1);
    QTest::mouseClick(f->runButton(), Qt::LeftButton);
    QVERIFY(!finished.wait(300));  // refused before any run starts
    QVERIFY(f->verdict()->text().contains("larger than the model's 4 attention heads"));
  }

  // Tools > Verify Against Hub: the open folder's files against the Hub's record, served by
  // tests/scripts/hub_server.py from the fixture itself (sizes, LFS sha256, git blob sha1); the
  // copy has one byte flipped inside a tensor of one shard, which the findings name.
  void verifiesAgainstTheHub() {
    if (!httpAvailable()) QSKIP("built without libcurl: no Hub to ask");
    const std::string fixture = wstest::fixture("hf/qwen3_moe");
    wstest::TempDir d;
    std::string shard;
    for (const auto& e : std::filesystem::directory_iterator(fixture)) {
      std::filesystem::copy_file(e.path(), d.file(e.path().filename().string()));
      if (e.path().extension() == ".safetensors" && (shard.empty() || e.path().filename().string() > shard)) shard = e.path().filename().string();
    }
    {
      std::fstream f(d.file(shard), std::ios::in | std::ios::out | std::ios::binary);
      f.seekg(-100, std::ios::end);
      const char b = char(f.get() ^ 0x40);
      f.seekp(-100, std::ios::end);
      f.put(b);
    }
    QProcess server;
    server.start("python3", {QString::fromStdString(wstest::sourceDir() + "/tests/scripts/hub_server.py"), "0", QString::fromStdString("org/model=" + fixture)});
    QVERIFY(server.waitForReadyRead(wstest::kPatienceMs));
    const QByteArray port = server.readLine().trimmed();
    qputenv("HF_ENDPOINT", "http://127.0.0.1:" + port);
    ui::MainWindow w;
    w.show();
    QVERIFY(openAndWait(w, d.path()));
    ui::FindingsView* f = w.findings();
    QSignalSpy finished(f, &ui::FindingsView::finished);
    f->runAgainstHub("hf://org/model");
    QVERIFY(finished.wait(wstest::kPatienceMs));
    qunsetenv("HF_ENDPOINT");
    server.kill();
    server.waitForFinished();
    QVERIFY2(f->report(), qPrintable(f->summary()->text()));
    QVERIFY(std::all_of(f->report()->rulesRun.begin(), f->report()->rulesRun.end(), [](const std::string& c) { return c.rfind("WS-H", 0) == 0; }));
    QCOMPARE(f->model()->rowCount(), 1);
    QCOMPARE(f->model()->index(0, ui::FindingsModel::Code).data().toString(), QString("WS-H001"));
    QCOMPARE(QString::fromStdString(f->report()->findings[0].file), QString::fromStdString(d.file(shard)));
    QVERIFY(QString::fromStdString(f->report()->findings[0].message).contains("sha256"));
  }

  // A remote open waits on a server that took the connection and says nothing. The status bar
  // shows the open with Cancel; Cancel (also File > Stop Opening, Esc) gives the window back at
  // once - the checkpoint shown stays, nothing is reported later - and aborts the request in
  // flight: the client closes its connection (libcurl asks about once a second) instead of
  // waiting out the 60-second low-speed timeout, which is what the 30 s below tells apart.
  void cancelsARemoteOpen() {
    if (!httpAvailable()) QSKIP("built without libcurl: no remote open to cancel");
    wstest::TempDir cache;
    qputenv("XDG_CACHE_HOME", QByteArray::fromStdString(cache.path()));
    const int server = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    QVERIFY(server >= 0 && ::bind(server, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 && ::listen(server, 4) == 0);
    QVERIFY(::getsockname(server, reinterpret_cast<sockaddr*>(&addr), &len) == 0);

    ui::MainWindow w;
    QSignalSpy opened(&w, &ui::MainWindow::checkpointOpened), failed(&w, &ui::MainWindow::openFailed);
    w.openPath(QString::fromStdString(wstest::fixture("hf/mixtral")));
    QVERIFY(opened.wait(wstest::kPatienceMs));
    const Checkpoint* shown = w.checkpoint();
    opened.clear();

    w.openPath(QString("http://127.0.0.1:%1/stalled/model.safetensors").arg(ntohs(addr.sin_port)));
    QVERIFY(w.opening() && !w.openProgress()->isHidden());
    pollfd waiting{server, POLLIN, 0};
    QVERIFY2(::poll(&waiting, 1, wstest::kPatienceMs) == 1, "the open made no request");
    const int client = ::accept4(server, nullptr, nullptr, SOCK_CLOEXEC);  // the request is on its way
    QVERIFY(client >= 0);
    w.openProgress()->cancelButton()->click();
    QVERIFY(!w.opening() && w.openProgress()->isHidden());
    QCOMPARE(w.checkpoint(), shown);

    pollfd p{client, POLLIN, 0};
    char byte;
    bool closed = false;
    for (int waited = 0; waited < 30000 && !closed; waited += 100) {
      if (::poll(&p, 1, 100) > 0)
        while (!closed) {
          const ssize_t n = ::recv(client, &byte, 1, MSG_DONTWAIT);  // the request's bytes, then the close
          if (n == 0) closed = true;
          if (n < 0) break;
        }
    }
    ::close(client);
    ::close(server);
    QVERIFY2(closed, "the cancelled open kept its request waiting on the server");
    QVERIFY(QThreadPool::globalInstance()->waitForDone(wstest::kPatienceMs));
    QCoreApplication::processEvents();
    QCOMPARE(opened.count(), 0);
    QCOMPARE(failed.count(), 0);  // its "cancelled" is dropped, not shown
    QCOMPARE(w.checkpoint(), shown);
    // Nothing but the location's lock file (mirror_lock.h) may be left: no mirror, whole or partial.
    bool mirrorLeft = false;
    std::error_code ec;
    for (const auto& e : std::filesystem::recursive_directory_iterator(cache.path(), ec)) {
      const std::string rel = std::filesystem::relative(e.path(), cache.path()).string();
      mirrorLeft |= e.is_directory() ? rel != "weightscope" && rel != "weightscope/remote" : e.path().extension() != ".lock";
    }
    QVERIFY2(!mirrorLeft, "the cancelled open left a partial mirror in the cache");
    qunsetenv("XDG_CACHE_HOME");
  }

  // The status bar's part follows the open's state: busy and silent until something is counted,
  // then the phase and the count the remote open reports; gone when stopped.
  void openProgressFollowsTheOpen() {
    ui::OpenProgress p;
    auto state = std::make_shared<ui::JobState>();
    p.start(state);
    QVERIFY(!p.isHidden() && p.text().isEmpty());
    state->phase = "fetching headers";
    state->total = 163;
    state->done = 12;
    QTRY_COMPARE_WITH_TIMEOUT(p.text(), QString("fetching headers: 12 of 163"), wstest::kPatienceMs);
    auto* bar = p.findChild<QProgressBar*>();
    QVERIFY(bar && bar->maximum() == 163 && bar->value() == 12);
    p.stop();
    QVERIFY(p.isHidden());
  }

  void reportsBadInput() {
    ui::MainWindow w;
    QSignalSpy failed(&w, &ui::MainWindow::openFailed);
    wstest::TempDir d;
    wstest::writeFile(d.file("broken.safetensors"), std::vector<uint8_t>{1, 2, 3});
    w.openPath(QString::fromStdString(d.file("broken.safetensors")));
    QVERIFY(failed.wait(wstest::kPatienceMs));
    QString msg = failed.first().first().toString();
    QVERIFY2(msg.contains("broken.safetensors") && msg.contains("HEADER_TOO_SMALL"), qPrintable(msg));
    QVERIFY(!w.checkpoint());
  }
};

QTEST_MAIN(TstMainWindow)
#include "tst_main_window.moc"
