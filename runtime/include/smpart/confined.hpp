// smpart::confined: what smpart-transform writes into the launches of a
// kernel it refused to rewrite (--confine-refused), so that the kernel
// still runs on the SMs the plan gives it:
//
//   k<<<grid, block, smem, stream>>>(args)
//   -> k<<<grid, block, smem, smpart::confined("k", stream)>>>(args)
//
// and into a launch through a kernel pointer (a table, a variable), where
// the kernel is known only when the launch runs:
//
//   fp<<<grid, block, smem, stream>>>(args)
//   -> fp<<<grid, block, smem, smpart::confined(fp, stream)>>>(args)
//
// The launch is otherwise unchanged. The temporary lives until the end of
// the full expression: built before the launch, it orders the partition's
// lane for `stream` (smpart::Partition::streamFor, of the partition named
// after the kernel) after `stream` and is the launch's stream; destroyed
// after it, it orders `stream` after the kernel. So later work on `stream`
// waits for the kernel exactly as if it had been launched there, launches
// from other streams never wait for it, and stream capture sees an
// ordinary fork and join that takes in only this stream's lane.
//
// The partition: one the program opened under the kernel's name (for a
// pointer, the name CUDA gives the kernel it points to, cudaFuncGetName,
// demangled and without parameters or template arguments: the name a
// direct launch of that kernel uses), else,
// in a process with a plan (SMPART_POLICY, SMPART_SERVICE: see
// smpart::processPlanner()), one opened on first use. Without a plan and
// without such a partition the launch is unchanged: nothing would keep
// rewritten kernels off the partition, and a partition smaller than the
// GPU would only slow the kernel down. SMPART_DISABLE=1, or a GPU or driver
// without green contexts: the launch goes to `stream` unchanged.
#pragma once

#include "smpart/launch.hpp"

#include <cuda_runtime.h>

namespace smpart {

class ConfinedStream {
public:
  ConfinedStream(const char *kernel, cudaStream_t stream) noexcept;
  /// A launch through a pointer: the partition of the kernel at
  /// `kernel_fn`. A pointer CUDA does not know as a kernel launches
  /// unchanged (and the launch reports the error), and so does a kernel
  /// whose CTAs form clusters (a partition may not hold them).
  ConfinedStream(const void *kernel_fn, cudaStream_t stream) noexcept;
  ~ConfinedStream();
  ConfinedStream(const ConfinedStream &) = delete;
  ConfinedStream &operator=(const ConfinedStream &) = delete;

  /// The stream the launch goes on.
  operator cudaStream_t() const noexcept { return launch_; }
  bool confined() const noexcept { return launch_ != user_; }

private:
  void enter(const char *kernel) noexcept;

  cudaStream_t user_;
  cudaStream_t launch_;
  void *lease_ = nullptr; // the lane, until joined (Partition::leaseLane)
};

/// Stream 0 is resolved in the caller's translation unit (per-thread
/// default streams), as for every rewritten launch.
inline ConfinedStream confined(const char *kernel,
                               cudaStream_t stream) noexcept {
  return ConfinedStream(kernel, detail::callerStream(stream));
}

/// A launch through a kernel pointer. (A template, not `const void *`: the
/// tool passes the launch's callee as written, of whatever function type.)
template <class... Params>
ConfinedStream confined(void (*kernel)(Params...),
                        cudaStream_t stream) noexcept {
  return ConfinedStream(reinterpret_cast<const void *>(kernel),
                        detail::callerStream(stream));
}

} // namespace smpart
