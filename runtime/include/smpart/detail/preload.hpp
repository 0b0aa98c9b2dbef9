// Which kernels the runtime loads before they are launched. CUDA-free:
// libsmpart (launch.cpp, kernel_registry.cpp) and the CPU stream model
// (runtime/emulation/queue/) make the same decisions through this.
//
// Under CUDA's default lazy module loading (CUDA_MODULE_LOADING=LAZY) the
// first launch of a kernel loads it, and loading may synchronise the
// context: it waits for every running kernel. A preempted smpart kernel's
// anchor CTA runs until the host resumes it, and a controller resumes it
// when the kernel it launched meanwhile is done: if that launch loads its
// kernel, neither ever finishes. CUDA's remedy (Programming Guide, Lazy
// Loading, "concurrent execution") is to load every kernel that may run
// concurrently before launching any of them. Each rewritten translation
// unit registers its kernels at static initialisation (the tool emits the
// call); the first transformed launch loads every registered kernel before
// it is enqueued (nothing of smpart spins yet), and a kernel registered
// later (a library opened with dlopen) is loaded when it registers.
#pragma once

#include <cstddef>
#include <set>
#include <vector>

namespace smpart {
namespace detail {

template <class Fn> class PreloadRegistry {
public:
  /// A kernel registered by a rewritten translation unit. Returns what
  /// must be loaded now: nothing before the first transformed launch (no
  /// CUDA call at static initialisation), the kernel itself after it.
  std::vector<Fn> registerKernel(Fn fn) {
    if (!known_.insert(fn).second || loaded_.count(fn))
      return {};
    if (!launched_)
      return {};
    return {fn};
  }

  /// A transformed launch of `fn` (null: unknown address) is about to be
  /// enqueued: returns what must be loaded first. The first launch loads
  /// every registered kernel; any launch loads its own kernel if it is not
  /// loaded yet (a template instance no translation unit registered: only
  /// the launch names it).
  std::vector<Fn> beforeLaunch(Fn fn) {
    std::vector<Fn> out;
    if (!launched_) {
      launched_ = true;
      for (Fn k : known_)
        if (!loaded_.count(k))
          out.push_back(k);
    }
    if (fn != Fn() && !loaded_.count(fn) && known_.insert(fn).second)
      out.push_back(fn);
    return out;
  }

  /// `fn` was loaded (or its load failed: it is not tried again; its own
  /// launch reports the failure).
  void loaded(Fn fn) { loaded_.insert(fn); }
  bool isLoaded(Fn fn) const { return loaded_.count(fn) != 0; }
  std::size_t registered() const { return known_.size(); }

private:
  bool launched_ = false;
  std::set<Fn> known_;
  std::set<Fn> loaded_;
};

} // namespace detail
} // namespace smpart
