// The EP Ranks tab's host-offload choosers: what an engine keeps in host memory instead of on the
// GPU - llama.cpp's --n-cpu-moe (blocks), vLLM's or SGLang's --cpu-offload-gb (GiB per rank), or
// KTransformers' split (--kt-num-gpu-experts, --kt-method, --kt-expert-placement-strategy,
// --kt-threadpool-count NUMA nodes) - and
// the host memory to hold it in. choice() is a plain value for the plan job; it fills the core's
// plan::PlanOptions exactly as `plan`'s flags of the same names do (core/plan/host_offload.h,
// kt_offload.h), so the core refuses what it refuses there.
#pragma once

#include <QObject>
#include <QString>
#include <cstdint>
#include <optional>
#include <string>

#include "core/plan/ep_plan.h"

class QComboBox;
class QFormLayout;
class QSpinBox;

namespace ws::ui {

struct HostOffloadChoice {
  std::string mode;       // "" none, "n-cpu-moe", "vllm", "sglang" (--cpu-offload-gb), "kt"
  int amount = 0;         // blocks, GiB, or GPU experts a layer, by mode
  std::string ktMethod;   // --kt-method
  std::string ktPlacement = "uniform";  // --kt-expert-placement-strategy: uniform, front-loading, random
  int numaNodes = 1;      // --kt-threadpool-count
  QString hostMemory;     // "" none, else a size ("512GiB")
  // Fills the plan options as plan's flags do.
  void apply(plan::PlanOptions& opt) const;
  // The flags it stands for, for the caption ("--n-cpu-moe 2").
  QString flags() const;
};

class HostOffloadControls : public QObject {
  Q_OBJECT
 public:
  explicit HostOffloadControls(QWidget* parent);
  // Adds its rows to the tab's form; the KTransformers rows show only when that mode is chosen.
  void addRows(QFormLayout* form);
  HostOffloadChoice choice() const;
  QComboBox* modeBox() const { return mode_; }
  QSpinBox* amountBox() const { return amount_; }
  QComboBox* ktMethodBox() const { return ktMethod_; }
  QComboBox* ktPlacementBox() const { return ktPlacement_; }
  QSpinBox* numaNodesBox() const { return numa_; }
  QComboBox* hostMemoryBox() const { return hostMemory_; }

 signals:
  void changed();

 private:
  void modeChanged();

  QComboBox* mode_;
  QSpinBox* amount_;
  QComboBox* ktMethod_;
  QComboBox* ktPlacement_;
  QSpinBox* numa_;
  QComboBox* hostMemory_;
  QFormLayout* form_ = nullptr;
};

}  // namespace ws::ui
