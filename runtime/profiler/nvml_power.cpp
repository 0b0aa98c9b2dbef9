// NVML through dlopen: no link-time dependency on the driver's library, so
// libsmpart loads on machines without it and says why power is absent.
#include "smpart/profiler.hpp"

#include <dlfcn.h>

namespace smpart::profiler {

namespace {
using nvmlReturn_t = int;
using nvmlDevice_t = void *;
using InitFn = nvmlReturn_t (*)();
using HandleFn = nvmlReturn_t (*)(unsigned, nvmlDevice_t *);
using PowerFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned *);
constexpr const char *LibName = "libnvidia-ml.so.1";
} // namespace

NvmlPower &NvmlPower::instance() {
  static NvmlPower *P = new NvmlPower();
  return *P;
}

NvmlPower::NvmlPower() {
  Lib = dlopen(LibName, RTLD_NOW | RTLD_LOCAL);
  if (!Lib) {
    const char *E = dlerror();
    Reason = std::string("NVML power absent: dlopen(\"") + LibName +
             "\") failed: " + (E ? E : "unknown error");
    return;
  }
  auto Init = reinterpret_cast<InitFn>(dlsym(Lib, "nvmlInit_v2"));
  GetHandle = dlsym(Lib, "nvmlDeviceGetHandleByIndex_v2");
  GetPower = dlsym(Lib, "nvmlDeviceGetPowerUsage");
  if (!Init || !GetHandle || !GetPower) {
    Reason = std::string("NVML power absent: ") + LibName +
             " lacks nvmlInit_v2/nvmlDeviceGetHandleByIndex_v2/"
             "nvmlDeviceGetPowerUsage";
    return;
  }
  if (nvmlReturn_t R = Init(); R != 0) {
    Reason = std::string("NVML power absent: nvmlInit_v2 returned ") +
             std::to_string(R);
    return;
  }
  Available = true;
}

bool NvmlPower::sampleWatts(unsigned Device, double &Watts,
                            std::string *Error) const {
  if (!Available) {
    if (Error)
      *Error = Reason;
    return false;
  }
  nvmlDevice_t D = nullptr;
  if (nvmlReturn_t R = reinterpret_cast<HandleFn>(GetHandle)(Device, &D);
      R != 0) {
    if (Error)
      *Error = "nvmlDeviceGetHandleByIndex_v2(" + std::to_string(Device) +
               ") returned " + std::to_string(R);
    return false;
  }
  unsigned MilliWatts = 0;
  if (nvmlReturn_t R = reinterpret_cast<PowerFn>(GetPower)(D, &MilliWatts);
      R != 0) {
    if (Error)
      *Error = "nvmlDeviceGetPowerUsage returned " + std::to_string(R) +
               " (not supported on this board?)";
    return false;
  }
  Watts = MilliWatts / 1000.0;
  return true;
}

} // namespace smpart::profiler
