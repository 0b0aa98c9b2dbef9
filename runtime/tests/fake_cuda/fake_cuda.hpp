// A CUDA runtime stand-in for host-runtime tests without a GPU (test
// support only). fake_cuda.cpp defines the CUDA runtime API functions that
// libsmpart calls; linked into a test executable, they take precedence
// over libcudart's. "Device" memory is host memory, streams are FIFO
// queues run eagerly on the calling thread (cudaStreamPerThread is one per
// thread), and what a real GPU would refuse the fake refuses the same way:
//
// * Stream capture: work on a capturing stream becomes graph nodes. A call
//   that CUDA calls potentially unsafe (cudaMalloc, cudaHostAlloc,
//   cudaMemset, cudaEventQuery, synchronisation) fails with
//   cudaErrorStreamCaptureUnsupported and invalidates the capture under
//   the rules of cudaThreadExchangeStreamCaptureMode (global, thread-local,
//   relaxed). Any use of the legacy stream while a blocking stream (the
//   per-thread default stream included) is capturing fails with
//   cudaErrorStreamCaptureImplicit and invalidates that capture. Events
//   fork and join as in CUDA: a stream that waits for an event recorded
//   in a capture joins that capture (until its origin ends it, which fails
//   with cudaErrorStreamCaptureUnjoined unless the origin waited for each
//   forked stream's last work, directly or through other streams); a
//   capturing stream that waits for work outside its capture, or another
//   capture's event, fails with cudaErrorStreamCaptureIsolation and
//   invalidates the capture. Querying a capturing stream invalidates its
//   capture, and querying an event recorded in a capture in progress is
//   cudaErrorCapturedEvent, in every capture mode.
// * Graphs: cudaMallocAsync/cudaFreeAsync under capture are allocation and
//   free nodes (fresh, non-zero contents at every replay); a graph holding
//   one can have only one executable graph at a time; launches of one
//   executable graph are ordered; user objects retained by a graph are
//   released when the graph and its executable graphs are gone.
// * Kernels: an empty grid or block, or more than 1024 threads per block,
//   is cudaErrorInvalidConfiguration, as on a GPU. cudaLaunchKernel runs
//   the host function registered for the
//   kernel address; an unregistered kernel of 1024-thread CTAs is taken
//   for libsmpart's SM-id probe, which sets the configured %smid bits.
//   Kernels and probes can be held (not finished) until released.
//   cudaFuncGetAttributes records the kernel as loaded (loaded()).
//   cudaFuncGetName answers the symbol nameKernel() gave, else
//   cudaErrorInvalidDeviceFunction; cudaFuncGetAttributes reports the
//   cluster width requireCluster() gave.
#pragma once

#include <cuda_runtime.h>

#include <functional>
#include <vector>

namespace fake_cuda {

/// A kernel launch as the fake runs it: `start` when it reaches the head
/// of its stream, then `finish` once `held()` returns false.
struct KernelRun {
  std::function<void()> start;
  std::function<bool()> held;
  std::function<void()> finish;
};
/// Makes the run of one launch from its arguments (copy what it needs:
/// `args` lives only during cudaLaunchKernel).
using KernelMaker =
    std::function<KernelRun(void **args, dim3 grid, dim3 block)>;

/// Forgets everything (as after cudaDeviceReset) and sets the device up:
/// one device, current on the calling thread.
void reset(unsigned num_sms = 4, bool memory_pools = true);
/// cudaSetDevice accepts ordinals below `count` (one GPU under each).
void setDeviceCount(int count);
void registerKernel(const void *fn, KernelMaker make);
/// The symbol cudaFuncGetName gives for `fn` (mangled, as the driver's).
void nameKernel(const void *fn, const char *symbol);
/// cudaFuncGetAttributes reports a required cluster width for `fn`.
void requireCluster(const void *fn, int width);
/// %smid values the probe sees, run by run (the last entry repeats).
void setProbeRuns(std::vector<std::vector<unsigned>> runs);
/// Probes stay unfinished while held.
void holdProbes(bool hold);
/// Runs whatever became runnable (after a test changed a hold).
void pump();
/// The graph allocation behind `p` exists now (between its allocation
/// node and its free node in the current replay).
bool allocationLive(const void *p);
/// Probe kernels launched so far.
unsigned probeLaunches();
/// Whether cudaFuncGetAttributes loaded `fn` (lazy module loading).
bool loaded(const void *fn);
/// Events created and not destroyed yet.
long liveEvents();
/// Called on the loading thread, outside the fake's lock, each time
/// cudaFuncGetAttributes loads a kernel (where a real load may wait for
/// every running kernel); reset() removes it.
void onLoad(std::function<void(const void *fn)> hook);

} // namespace fake_cuda
