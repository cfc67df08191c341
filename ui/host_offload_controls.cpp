#include "ui/host_offload_controls.h"

#include <QComboBox>
#include <QFormLayout>
#include <QSpinBox>

#include "core/plan/host_offload.h"
#include "core/plan/kt_offload.h"
#include "core/plan/residency_rules.h"
#include "ui/remembered.h"

namespace ws::ui {

void HostOffloadChoice::apply(plan::PlanOptions& opt) const {
  if (mode == "n-cpu-moe") {
    opt.nCpuMoe = amount;
  } else if (mode == "vllm" || mode == "sglang") {
    opt.cpuOffloadCap = plan::cpuOffloadCap(amount);
    opt.cpuOffloadEngine = mode;
    if (const plan::ResidencyRules* r = plan::findResidencyRules(mode)) opt.rules = r;  // as plan --runtime MODE
  } else if (mode == "kt") {
    plan::KtOptions kt;  // N a layer
    kt.gpuExperts = amount, kt.method = ktMethod, kt.numaNodes = numaNodes, kt.strategy = ktPlacement;
    opt.kt = kt;
  }
}

QString HostOffloadChoice::flags() const {
  if (mode == "n-cpu-moe") return QString("llama.cpp --n-cpu-moe %1").arg(amount);
  if (mode == "vllm") return QString("vLLM --cpu-offload-gb %1").arg(amount);
  if (mode == "sglang") return QString("SGLang --cpu-offload-gb %1").arg(amount);
  if (mode == "kt")
    return QString("KTransformers --kt-num-gpu-experts %1 --kt-method %2 --kt-threadpool-count %3%4")
        .arg(amount)
        .arg(QString::fromStdString(ktMethod))
        .arg(numaNodes)
        .arg(ktPlacement == "uniform" ? QString() : " --kt-expert-placement-strategy " + QString::fromStdString(ktPlacement));
  return {};
}

HostOffloadControls::HostOffloadControls(QWidget* parent)
    : QObject(parent), mode_(new QComboBox(parent)), amount_(new QSpinBox(parent)), ktMethod_(new QComboBox(parent)), ktPlacement_(new QComboBox(parent)),
      numa_(new QSpinBox(parent)), hostMemory_(new QComboBox(parent)) {
  mode_->addItem(tr("none: all on the GPU"), QString());
  mode_->addItem(tr("llama.cpp --n-cpu-moe"), QString("n-cpu-moe"));
  mode_->addItem(tr("vLLM --cpu-offload-gb"), QString("vllm"));
  mode_->addItem(tr("SGLang --cpu-offload-gb"), QString("sglang"));
  mode_->addItem(tr("KTransformers (kt-kernel)"), QString("kt"));
  mode_->setToolTip(tr("What the engine keeps in host memory instead of on the GPU (plan --n-cpu-moe, --cpu-offload-gb, --kt-num-gpu-experts)"));
  remember(mode_, "ranks/hostOffload");
  amount_->setRange(0, 1'000'000);
  remember(amount_, "ranks/hostOffloadAmount");
  for (const auto& m : plan::ktMethods()) ktMethod_->addItem(QString::fromStdString(m));
  ktMethod_->setToolTip(tr("kt-kernel's --kt-method: AMXINT4 / AMXINT8 convert the experts, the others keep them as stored"));
  remember(ktMethod_, "ranks/ktMethod");
  // The fork's planned placements (core/plan/kt_offload.h); frequency reads a torch .pt, not offered.
  for (const char* p : {"uniform", "front-loading", "random"}) ktPlacement_->addItem(QString::fromLatin1(p));
  ktPlacement_->setToolTip(tr("--kt-expert-placement-strategy: uniform (the first N of every MoE layer), front-loading (whole layers from the first) "
                              "or random (torch.randperm, seed 42, over every MoE layer's experts)"));
  remember(ktPlacement_, "ranks/ktPlacement");
  numa_->setRange(1, 64);
  numa_->setToolTip(tr("--kt-threadpool-count: the NUMA nodes each routed expert is split over"));
  remember(numa_, "ranks/numaNodes");
  hostMemory_->setEditable(true);
  hostMemory_->addItem(tr("no host budget"));
  for (const char* s : {"256GiB", "512GiB", "768GiB", "1TiB", "1.5TiB", "2TiB"}) hostMemory_->addItem(QString::fromLatin1(s));
  hostMemory_->setToolTip(tr("Host memory to hold what the engine moves there (plan --host-mem): a size such as 512GiB"));
  remember(hostMemory_, "ranks/hostMemory");

  connect(mode_, &QComboBox::currentIndexChanged, this, &HostOffloadControls::modeChanged);
  connect(amount_, &QSpinBox::valueChanged, this, &HostOffloadControls::changed);
  connect(ktMethod_, &QComboBox::currentTextChanged, this, &HostOffloadControls::changed);
  connect(ktPlacement_, &QComboBox::currentTextChanged, this, &HostOffloadControls::changed);
  connect(numa_, &QSpinBox::valueChanged, this, &HostOffloadControls::changed);
  connect(hostMemory_, &QComboBox::currentTextChanged, this, &HostOffloadControls::changed);
}

void HostOffloadControls::addRows(QFormLayout* form) {
  form_ = form;
  form->addRow(tr("&Host offload"), mode_);
  form->addRow(tr("Offload &amount"), amount_);
  form->addRow(tr("KT &method"), ktMethod_);
  form->addRow(tr("KT p&lacement"), ktPlacement_);
  form->addRow(tr("NUMA n&odes"), numa_);
  form->addRow(tr("Hos&t memory"), hostMemory_);
  modeChanged();
}

// The amount's unit follows the mode; the KTransformers rows show only for it.
void HostOffloadControls::modeChanged() {
  const QString m = mode_->currentData().toString();
  amount_->setEnabled(!m.isEmpty());
  amount_->setSuffix(m == "n-cpu-moe" ? tr(" block(s)") : m == "kt" ? tr(" GPU expert(s) a layer") : m.isEmpty() ? QString() : tr(" GiB a rank"));
  amount_->setToolTip(m == "n-cpu-moe" ? tr("The routed experts of blocks 0 .. N-1 in host memory")
                      : m == "kt"      ? tr("--kt-num-gpu-experts: the first N routed experts of each MoE layer also on the GPU")
                                       : tr("--cpu-offload-gb: this much of each rank's decoder-layer weights in host memory, the first layers first"));
  if (form_) {
    form_->setRowVisible(ktMethod_, m == "kt");
    form_->setRowVisible(ktPlacement_, m == "kt");
    form_->setRowVisible(numa_, m == "kt");
  }
  emit changed();
}

HostOffloadChoice HostOffloadControls::choice() const {
  HostOffloadChoice c;
  c.mode = mode_->currentData().toString().toStdString();
  c.amount = amount_->value();
  c.ktMethod = ktMethod_->currentText().toStdString();
  c.ktPlacement = ktPlacement_->currentText().toStdString();
  c.numaNodes = numa_->value();
  c.hostMemory = hostMemory_->currentText() == hostMemory_->itemText(0) ? QString() : hostMemory_->currentText().trimmed();
  return c;
}

}  // namespace ws::ui
