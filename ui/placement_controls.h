// The placement and remainder choosers that the EP Ranks and Full Load tabs share: placement
// linear, round-robin or an EPLB map file (chosen in a dialog; cancelling it goes back to the
// previous choice), and who takes the remainder. spec() is the core's plan::PlacementSpec, the
// same one `plan`, `load` and `validate --full-load` parse from their options.
#pragma once

#include <QObject>
#include <QString>

#include "core/plan/placement.h"

class QComboBox;

namespace ws::ui {

class PlacementControls : public QObject {
  Q_OBJECT
 public:
  // `settingsKey` remembers the remainder choice (QSettings) under that key.
  PlacementControls(QWidget* parent, const QString& settingsKey);
  QComboBox* placementBox() const { return placement_; }
  QComboBox* remainderBox() const { return remainder_; }
  plan::PlacementSpec spec() const;
  // Places by an EPLB map file, as choosing "EPLB map file..." does after its dialog.
  void setMapFile(const QString& path);

 signals:
  void changed();

 private:
  QWidget* parent_;
  QComboBox *placement_, *remainder_;
  QString mapFile_;
  int lastPlacement_ = 0;  // to go back to when the map file dialog is cancelled
};

}  // namespace ws::ui
