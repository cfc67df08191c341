// Plots of bytes read best in one binary unit chosen from the largest value: KiB for a test
// fixture, GiB for a real checkpoint.
#pragma once

#include <QString>
#include <cstdint>

namespace ws::ui {

struct ByteUnit {
  double divisor = 1;
  QString name = "B";
};

inline ByteUnit byteUnitFor(double largest) {
  const char* names[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  ByteUnit u;
  for (int i = 1; i < 5 && largest >= 1024.0 * u.divisor; ++i) u = {u.divisor * 1024.0, names[i]};
  return u;
}

}  // namespace ws::ui
