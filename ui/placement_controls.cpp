#include "ui/placement_controls.h"

#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QSignalBlocker>

#include "ui/remembered.h"

namespace ws::ui {

PlacementControls::PlacementControls(QWidget* parent, const QString& settingsKey)
    : QObject(parent), parent_(parent), placement_(new QComboBox(parent)), remainder_(new QComboBox(parent)) {
  placement_->addItem(tr("linear (contiguous blocks)"), int(plan::PlacementKind::Linear));
  placement_->addItem(tr("round-robin"), int(plan::PlacementKind::RoundRobin));
  placement_->addItem(tr("EPLB map file..."), int(plan::PlacementKind::Map));
  placement_->setToolTip(tr("How routed experts are spread over the EP ranks"));
  remainder_->addItem(tr("first ranks (vLLM)"), int(plan::Remainder::First));
  remainder_->addItem(tr("last rank (seed runtime)"), int(plan::Remainder::Last));
  remainder_->addItem(tr("strict (SGLang: must divide)"), int(plan::Remainder::Strict));
  remainder_->setToolTip(tr("Who takes the experts left over when they do not divide evenly over the ranks"));
  remember(remainder_, settingsKey);
  connect(placement_, &QComboBox::currentIndexChanged, this, [this](int index) {
    if (placement_->itemData(index).toInt() == int(plan::PlacementKind::Map)) {
      const QString path = QFileDialog::getOpenFileName(parent_, tr("EPLB placement map"), {}, tr("JSON (*.json);;All files (*)"));
      if (path.isEmpty()) {
        const QSignalBlocker block(placement_);
        placement_->setCurrentIndex(lastPlacement_);
        return;
      }
      mapFile_ = path;
      placement_->setItemText(index, tr("map: %1").arg(QFileInfo(path).fileName()));
    }
    lastPlacement_ = index;
    emit changed();
  });
  connect(remainder_, &QComboBox::currentIndexChanged, this, &PlacementControls::changed);
}

plan::PlacementSpec PlacementControls::spec() const {
  plan::PlacementSpec s;
  s.kind = plan::PlacementKind(placement_->currentData().toInt());
  s.remainder = plan::Remainder(remainder_->currentData().toInt());
  if (s.kind == plan::PlacementKind::Map) s.mapFile = mapFile_.toStdString();
  return s;
}

void PlacementControls::setMapFile(const QString& path) {
  mapFile_ = path;
  const int index = placement_->findData(int(plan::PlacementKind::Map));
  placement_->setItemText(index, tr("map: %1").arg(QFileInfo(path).fileName()));
  lastPlacement_ = index;
  {
    const QSignalBlocker block(placement_);
    placement_->setCurrentIndex(index);
  }
  emit changed();
}

}  // namespace ws::ui
