// libsmpart host runtime: the kernels rewritten translation units register
// at static initialisation, loaded before any smpart kernel can spin (see
// smpart/detail/preload.hpp for why: lazy module loading).
#include "kernel.hpp"

#include "smpart/detail/preload.hpp"

#include <algorithm>
#include <iterator>
#include <map>

namespace smpart {
namespace detail {

namespace {

/// What one CUDA context loaded: a context has its own modules, so a
/// device's new context after cudaDeviceReset, or a second GPU, loads
/// every registered kernel again at its first launch.
struct ContextLoads {
  int device = -1;
  PreloadRegistry<const void *> preload;
};

struct Registry {
  std::mutex mu;
  std::vector<const void *> registered;                ///< in order, each once
  std::map<unsigned long long, ContextLoads> contexts; ///< by DeviceCtx serial
};

/// Never destroyed, like the runtime's registry; built on first use, so
/// registration from any translation unit's static initialisation is safe.
Registry &registry() {
  static Registry *r = new Registry;
  return *r;
}

/// Loads `fns` into the calling thread's current context
/// (cudaFuncGetAttributes loads a kernel under lazy loading). In relaxed
/// capture mode: the caller may be capturing, in any mode, and a load is no
/// stream operation. A failure is left for the kernel's own launch to
/// report; the CUDA error it sets is cleared only if it is new.
void load(ContextLoads &c, const std::vector<const void *> &fns) {
  if (fns.empty())
    return;
  CaptureModeRelaxed relaxed;
  for (const void *fn : fns) {
    KeepLastError keep;
    cudaFuncAttributes attr{};
    (void)cudaFuncGetAttributes(&attr, fn);
    c.preload.loaded(fn);
  }
}

} // namespace

bool registerKernel(const void *fn, const char *) {
  if (!fn)
    return false;
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  if (std::find(r.registered.begin(), r.registered.end(), fn) !=
      r.registered.end())
    return true;
  r.registered.push_back(fn);
  // Before the first launch no context knows of smpart yet: no CUDA call
  // (this runs at static initialisation). After it, at once, on each
  // context that launched (a library opened with dlopen).
  for (auto &[serial, c] : r.contexts) {
    const std::vector<const void *> fns = c.preload.registerKernel(fn);
    if (fns.empty())
      continue;
    CurrentDevice device(c.device);
    load(c, fns);
  }
  return true;
}

void preloadBeforeLaunch(const void *fn, const DeviceCtx &ctx) {
  const int device = ctx.info.device;
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto [it, fresh] = r.contexts.try_emplace(ctx.serial);
  ContextLoads &c = it->second;
  if (fresh) {
    // The device's previous context (before a reset) is gone.
    for (auto old = r.contexts.begin(); old != r.contexts.end();)
      old = old->second.device == device && old->first != ctx.serial
                ? r.contexts.erase(old)
                : std::next(old);
    c.device = device;
    for (const void *k : r.registered)
      c.preload.registerKernel(k);
  }
  load(c, c.preload.beforeLaunch(fn));
}

} // namespace detail
} // namespace smpart
