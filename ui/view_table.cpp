#include "ui/view_table.h"

#include <QTreeView>

#include "ui/expert_map_view.h"
#include "ui/findings_view.h"
#include "ui/load_view.h"
#include "ui/metadata_view.h"
#include "ui/main_window.h"
#include "ui/preview_view.h"
#include "ui/rank_map_view.h"
#include "ui/scale_histogram_view.h"

namespace ws::ui {

namespace {

// The first routed-expert weight (the tensor a preview of an MoE is most often about), else the
// first weight.
uint32_t tensorToPreview(const Checkpoint& c) {
  for (uint32_t i = 0; i < c.tensors.size(); ++i)
    if (c.tensors[i].role == Role::RoutedExpert && c.tensors[i].component == Component::Weight) return i;
  for (uint32_t i = 0; i < c.tensors.size(); ++i)
    if (c.tensors[i].component == Component::Weight) return i;
  return 0;
}

// Calls done() once `sender` emits `signal` (the view's own "finished work" signal).
template <class Sender, class Signal>
void whenEmitted(Sender* sender, Signal signal, const std::function<void()>& done) {
  QObject::connect(sender, signal, sender, [done] { done(); }, Qt::SingleShotConnection);
}

std::vector<ViewSpec>& table() {
  static std::vector<ViewSpec> views = {
      {"tree", QObject::tr("&Tensors"), QObject::tr("Tensors"), [](MainWindow& w) { return w.makeTreePage(); },
       [](MainWindow&, const std::function<void()>& done) { done(); }},
      {"experts", QObject::tr("&Experts"), QObject::tr("Expert Map"), [](MainWindow& w) -> QWidget* { return new ExpertMapView(w.scalePass()); },
       [](MainWindow&, const std::function<void()>& done) { done(); }},
      {"ranks", QObject::tr("EP &Ranks"), QObject::tr("EP Ranks"), [](MainWindow&) -> QWidget* { return new RankMapView; },
       [](MainWindow& w, const std::function<void()>& done) {  // replans by itself on open
         if (w.rankMap()->result()) done();
         else whenEmitted(w.rankMap(), &RankMapView::planned, done);
       }},
      {"histogram", QObject::tr("&Scales"), QObject::tr("Scales"), [](MainWindow& w) -> QWidget* { return new ScaleHistogramView(w.scalePass()); },
       [](MainWindow& w, const std::function<void()>& done) {  // computed when the tab is first shown
         whenEmitted(w.histograms(), &ScaleHistogramView::computed, done);
       }},
      {"preview", QObject::tr("&Preview"), QObject::tr("Preview"), [](MainWindow&) -> QWidget* { return new PreviewView; },
       [](MainWindow& w, const std::function<void()>& done) {
         whenEmitted(w.preview(), &PreviewView::previewReady, done);
         const uint32_t t = tensorToPreview(*w.checkpoint());
         w.selectTensor(t);  // its details beside the preview
         w.preview()->showTensor(t);
         w.showTab(MainWindow::PreviewTab);
       }},
      {"findings", QObject::tr("&Findings"), QObject::tr("Findings"), [](MainWindow&) -> QWidget* { return new FindingsView; },
       [](MainWindow& w, const std::function<void()>& done) {
         whenEmitted(w.findings(), &FindingsView::finished, done);
         w.findings()->run();
       }},
      {"residency", QObject::tr("Full &Load"), QObject::tr("Full Load"), [](MainWindow&) -> QWidget* { return new LoadView; },
       [](MainWindow& w, const std::function<void()>& done) {
         whenEmitted(w.loadView(), &LoadView::finished, done);
         w.loadView()->start();
       }},
      {"metadata", QObject::tr("&Metadata"), QObject::tr("Metadata"), [](MainWindow&) -> QWidget* { return new MetadataView; },
       [](MainWindow&, const std::function<void()>& done) { done(); }},
  };
  return views;
}

}  // namespace

const std::vector<ViewSpec>& viewTable() { return table(); }

int viewIndex(const QString& name) {
  const auto& v = table();
  for (size_t i = 0; i < v.size(); ++i)
    if (v[i].name == name) return int(i);
  return -1;
}

std::string screenshotViewNames() {
  QStringList names;
  for (const auto& v : table()) names << v.name;
  names << "diff";
  return names.join(' ').toStdString();
}

ViewRegistration::ViewRegistration(ViewSpec spec) : name_(spec.name) { table().push_back(std::move(spec)); }

ViewRegistration::~ViewRegistration() {
  auto& v = table();
  for (auto it = v.begin(); it != v.end(); ++it)
    if (it->name == name_) {
      v.erase(it);
      return;
    }
}

}  // namespace ws::ui
