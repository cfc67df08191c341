#include "core/numerics/device_dequant.h"

#include <memory>
#include <mutex>
#include <utility>

namespace ws::num {

namespace {

std::mutex gMutex;
std::shared_ptr<const DeviceDequantFn> gFn;
std::string gName;
std::function<void()> gProbe;  // run once, outside the lock (it registers)

}  // namespace

void registerDeviceDequant(DeviceDequantFn fn, std::string deviceName) {
  std::lock_guard lock(gMutex);
  gFn = std::make_shared<DeviceDequantFn>(std::move(fn));
  gName = std::move(deviceName);
  gProbe = nullptr;
}

void unregisterDeviceDequant() {
  std::lock_guard lock(gMutex);
  gFn.reset();
  gName.clear();
  gProbe = nullptr;
}

void setDeviceDequantProbe(std::function<void()> probe) {
  std::lock_guard lock(gMutex);
  gProbe = std::move(probe);
}

std::pair<std::shared_ptr<const DeviceDequantFn>, std::string> deviceDequant() {
  std::function<void()> probe;
  {
    std::lock_guard lock(gMutex);
    probe = std::exchange(gProbe, nullptr);
  }
  if (probe) probe();
  std::lock_guard lock(gMutex);
  return {gFn, gName};
}

}  // namespace ws::num
