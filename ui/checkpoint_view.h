// What the main window hands every view of its table: the open checkpoint. A view doing work for
// the previous checkpoint drops that work when a new one arrives.
#pragma once

#include <memory>

#include "core/model/checkpoint.h"

namespace ws::ui {

class CheckpointView {
 public:
  virtual ~CheckpointView() = default;
  virtual void setCheckpoint(std::shared_ptr<const Checkpoint> c) = 0;
};

}  // namespace ws::ui
