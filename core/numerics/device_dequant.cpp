#include "core/numerics/device_dequant.h"

#include <memory>
#include <mutex>

namespace ws::num {

namespace {

std::mutex gMutex;
std::shared_ptr<const DeviceDequantFn> gFn;
std::string gName;

}  // namespace

void registerDeviceDequant(DeviceDequantFn fn, std::string deviceName) {
  std::lock_guard lock(gMutex);
  gFn = std::make_shared<DeviceDequantFn>(std::move(fn));
  gName = std::move(deviceName);
}

void unregisterDeviceDequant() {
  std::lock_guard lock(gMutex);
  gFn.reset();
  gName.clear();
}

std::pair<std::shared_ptr<const DeviceDequantFn>, std::string> deviceDequant() {
  std::lock_guard lock(gMutex);
  return {gFn, gName};
}

}  // namespace ws::num
