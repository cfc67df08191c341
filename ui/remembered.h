// View options that outlive the session: a control bound here starts from the value saved under
// its key (QSettings) and saves every change, so the user's colormap, filter mode, EP size or
// budget are there again next time.
#pragma once

#include <QCheckBox>
#include <QComboBox>
#include <QSettings>
#include <QSpinBox>

namespace ws::ui {

// Remembers the chosen entry by its text (stable across reorderings); an editable box also
// remembers typed text.
inline void remember(QComboBox* box, const QString& key) {
  const QString saved = QSettings().value(key).toString();
  if (!saved.isEmpty()) {
    if (int i = box->findText(saved); i >= 0) box->setCurrentIndex(i);
    else if (box->isEditable()) box->setEditText(saved);
  }
  QObject::connect(box, &QComboBox::currentTextChanged, box, [key](const QString& t) { QSettings().setValue(key, t); });
}

inline void remember(QCheckBox* box, const QString& key) {
  box->setChecked(QSettings().value(key, box->isChecked()).toBool());
  QObject::connect(box, &QCheckBox::toggled, box, [key](bool on) { QSettings().setValue(key, on); });
}

inline void remember(QSpinBox* box, const QString& key) {
  box->setValue(QSettings().value(key, box->value()).toInt());
  QObject::connect(box, &QSpinBox::valueChanged, box, [key](int v) { QSettings().setValue(key, v); });
}

}  // namespace ws::ui
