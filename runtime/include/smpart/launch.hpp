// What code rewritten by smpart-transform calls: the launch entry point,
// the kernel registration, the relaunch closure's parameters and the
// confined stream of a refused kernel. Every rewritten translation unit
// includes this header (and smpart/device.cuh), so it is kept light on
// purpose: no <functional>, <memory> or <string>, which the full host API
// (smpart/runtime.hpp) needs and which nvcc parses three times per file
// (cudafe++, cicc, the host compiler): about 2 s of build time added to
// every rewritten file (bench/tool/README.md, "Build cost").
#pragma once

#include "smpart/control.hpp"

#include <cuda_runtime.h>

#include <cstddef>
#include <tuple> // rewritten launches capture their arguments in a tuple
#include <type_traits>
#include <utility> // and expand them with std::apply

namespace smpart {

/// What a rewritten launch knows about its kernel. `fn` is the kernel's
/// address when the tool could name it (for occupancy queries), else null.
/// `has_original`: smpart-transform kept the kernel's original definition
/// beside the rewritten one, and the launch's closure can launch it
/// (LaunchParams::original). `max_threads_per_block`: the largest block the
/// original kernel's `__launch_bounds__` allows, which the rewritten
/// kernel's bound may exceed (the same register cap without ptxas'
/// padding, README.md); a launch of larger blocks fails as CUDA fails it
/// for the original. 0: no limit beyond the kernel's own.
struct KernelInfo {
  const char *name;
  const void *fn;
  bool has_original = false;
  unsigned max_threads_per_block = 0;
};

/// The physical launch the runtime asks a relaunch closure to perform.
/// With `original` set (only for a KernelInfo with has_original), the
/// closure launches the original kernel instead, with grid, block, smem
/// and stream as given and without `ctl`: the original launch, unchanged.
struct LaunchParams {
  dim3 grid;
  dim3 block;
  std::size_t smem;
  cudaStream_t stream;
  LaunchControl ctl;
  bool original = false;
};

namespace detail {

/// Called at static initialisation by each translation unit that
/// smpart-transform rewrote, once per kernel it defines: the first
/// transformed launch in each context loads every registered kernel before
/// it is enqueued, and one registered later (dlopen) is loaded at once into
/// every context that launched, so that CUDA's
/// lazy module loading never has to load a kernel while a preempted
/// kernel's anchor spins (runtime/README.md, "Lazy module loading").
bool registerKernel(const void *fn, const char *name);

/// Stream 0 means the legacy default stream to libsmpart, which is
/// compiled on its own; in a translation unit built with
/// `--default-stream per-thread` it means the thread's stream. Resolved
/// here, in the caller's translation unit.
inline cudaStream_t callerStream(cudaStream_t s) {
#if defined(CUDA_API_PER_THREAD_DEFAULT_STREAM)
  if (s == nullptr)
    return cudaStreamPerThread;
#endif
  return s;
}

/// A rewritten launch's relaunch closure, owned and type-erased: what
/// std::function would do, without its header (see the top of this file).
/// The runtime calls it for the first instance and for every relaunch.
class LaunchClosure {
public:
  template <class F, class Fn = std::decay_t<F>,
            class = std::enable_if_t<!std::is_same<Fn, LaunchClosure>::value>>
  explicit LaunchClosure(F &&f)
      : self_(new Fn(std::forward<F>(f))),
        call_([](void *self, const LaunchParams &p) {
          (*static_cast<Fn *>(self))(p);
        }),
        destroy_([](void *self) { delete static_cast<Fn *>(self); }) {}
  LaunchClosure(LaunchClosure &&o) noexcept
      : self_(o.self_), call_(o.call_), destroy_(o.destroy_) {
    o.self_ = nullptr;
  }
  LaunchClosure(const LaunchClosure &) = delete;
  LaunchClosure &operator=(const LaunchClosure &) = delete;
  LaunchClosure &operator=(LaunchClosure &&) = delete;
  ~LaunchClosure() {
    if (self_)
      destroy_(self_);
  }

  void operator()(const LaunchParams &p) const { call_(self_, p); }

private:
  void *self_;
  void (*call_)(void *, const LaunchParams &);
  void (*destroy_)(void *);
};

void launchRewritten(const KernelInfo &kernel, dim3 grid, dim3 block,
                     std::size_t smem, cudaStream_t stream,
                     LaunchClosure relaunch);

} // namespace detail

/// What smpart-transform writes for `k<<<grid, block, smem, stream>>>(args)`:
/// smpart::launch() (smpart/runtime.hpp) without its handle, as a `<<<>>>`
/// has no value. The launch is the same; a controller reaches it through
/// its LaunchObserver or activeKernels(), and a failure through
/// smpart::getLastError() and, when the closure can make the original
/// launch, cudaGetLastError().
template <class Closure>
void launchRewritten(const KernelInfo &kernel, dim3 grid, dim3 block,
                     std::size_t smem, cudaStream_t stream,
                     Closure &&relaunch) {
  detail::launchRewritten(
      kernel, grid, block, smem, detail::callerStream(stream),
      detail::LaunchClosure(std::forward<Closure>(relaunch)));
}

} // namespace smpart

// What smpart-transform writes into launches of kernels it refused.
#include "smpart/confined.hpp"
