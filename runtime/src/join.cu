// The join kernel: how a launch keeps the semantics of the user's stream.
//
// A transformed kernel may finish part of its logical grid in relaunched
// instances on runtime-owned streams (resume, grow). The runtime enqueues
// this one-thread kernel on the user's stream right after the first
// instance; it returns once every logical block is done, so later work in
// the stream waits for all of them. In the common case (no relaunch still
// running) it finds the counter complete and exits at once.
//
// While it spins it holds one CTA slot (one warp, no shared memory) on one
// SM. Relaunched instances can still use every other slot; the join never
// blocks progress, since it only waits for the counter, but a kernel
// confined to that single SM with an occupancy of exactly one CTA per SM
// limited by threads would lose that SM for the wait. A stream memory
// operation (cuStreamWaitValue64) would avoid the slot but needs the
// driver API; the runtime links only the CUDA runtime.
#include "smpart/control.hpp"

#include <cuda_runtime.h>

namespace smpart {
namespace detail {

__global__ void joinKernel(const State *state, unsigned long long total) {
  const volatile unsigned long long *done = &state->blocks_done;
  while (*done < total)
    __nanosleep(2000);
  __threadfence();
}

cudaError_t launchJoin(const State *state, unsigned long long total,
                       cudaStream_t stream) {
  // cudaLaunchKernel returns this launch's error without touching the
  // thread's last-error state, which belongs to the user's own launches.
  void *args[] = {&state, &total};
  return cudaLaunchKernel(reinterpret_cast<const void *>(&joinKernel),
                          dim3(1), dim3(1), args, 0, stream);
}

} // namespace detail
} // namespace smpart
