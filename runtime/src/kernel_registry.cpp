// libsmpart host runtime: the kernels rewritten translation units register
// at static initialisation, loaded before any smpart kernel can spin (see
// smpart/detail/preload.hpp for why: lazy module loading).
#include "kernel.hpp"

#include "smpart/detail/preload.hpp"

namespace smpart {
namespace detail {

namespace {

struct Registry {
  std::mutex mu;
  PreloadRegistry<const void *> preload;
};

/// Never destroyed, like the runtime's registry; built on first use, so
/// registration from any translation unit's static initialisation is safe.
Registry &registry() {
  static Registry *r = new Registry;
  return *r;
}

/// Loads `fns` (cudaFuncGetAttributes loads a kernel under lazy loading).
/// In relaxed capture mode: the caller may be capturing, in any mode, and
/// a load is no stream operation. A failure is left for the kernel's own
/// launch to report; the CUDA error it sets is cleared only if it is new.
void load(Registry &r, const std::vector<const void *> &fns) {
  if (fns.empty())
    return;
  CaptureModeRelaxed relaxed;
  for (const void *fn : fns) {
    const cudaError_t before = cudaPeekAtLastError();
    cudaFuncAttributes attr{};
    if (cudaFuncGetAttributes(&attr, fn) != cudaSuccess &&
        before == cudaSuccess)
      cudaGetLastError();
    r.preload.loaded(fn);
  }
}

} // namespace

bool registerKernel(const void *fn, const char *) {
  if (!fn)
    return false;
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  load(r, r.preload.registerKernel(fn));
  return true;
}

void preloadBeforeLaunch(const void *fn) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  load(r, r.preload.beforeLaunch(fn));
}

} // namespace detail
} // namespace smpart
