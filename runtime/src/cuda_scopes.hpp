// Scopes for the runtime's own CUDA calls: capture mode, current device,
// the caller's last error.
#pragma once

#include <cuda_runtime.h>

namespace smpart {
namespace detail {

/// Relaxed stream-capture mode for the calling thread, for one scope: the
/// runtime's own set-up calls (allocations, queries of its own events)
/// then do not invalidate a capture in progress on the caller's stream or,
/// in global mode, on another thread. Only calls that cannot conflict with
/// a capture belong in such a scope: nothing on the legacy stream, no
/// query or synchronisation of a capturing stream.
class CaptureModeRelaxed {
public:
  CaptureModeRelaxed() { cudaThreadExchangeStreamCaptureMode(&mode_); }
  ~CaptureModeRelaxed() { cudaThreadExchangeStreamCaptureMode(&mode_); }
  CaptureModeRelaxed(const CaptureModeRelaxed &) = delete;
  CaptureModeRelaxed &operator=(const CaptureModeRelaxed &) = delete;

private:
  cudaStreamCaptureMode mode_ = cudaStreamCaptureModeRelaxed;
};

/// Leaves the calling thread's last CUDA error as the scope found it,
/// where it was cudaSuccess: a lookup the runtime makes on its own behalf
/// (a pointer, a stream's capture state, a kernel's name) that fails is no
/// error of the caller's next cudaGetLastError. (An error already pending
/// stays pending, unless a failing lookup replaced it: CUDA keeps one.)
class KeepLastError {
public:
  KeepLastError() : before_(cudaPeekAtLastError()) {}
  ~KeepLastError() {
    if (before_ == cudaSuccess)
      (void)cudaGetLastError();
  }
  KeepLastError(const KeepLastError &) = delete;
  KeepLastError &operator=(const KeepLastError &) = delete;

private:
  cudaError_t before_;
};

/// Whether `s` is being captured; a stream whose capture state cannot be
/// read counts as captured (nothing is recorded on it or queried then).
inline bool capturing(cudaStream_t s) {
  KeepLastError keep;
  cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
  return cudaStreamIsCapturing(s, &cs) != cudaSuccess ||
         cs != cudaStreamCaptureStatusNone;
}

/// Makes `device` the calling thread's current device for one scope, then
/// restores the one before. For the runtime's calls on helper threads (the
/// notice thread, a controller's): streams, events and launches go to the
/// current device, which there is device 0, not the kernel's.
class CurrentDevice {
public:
  explicit CurrentDevice(int device) {
    if (device >= 0 && cudaGetDevice(&prev_) == cudaSuccess && prev_ != device)
      switched_ = cudaSetDevice(device) == cudaSuccess;
  }
  ~CurrentDevice() {
    if (switched_)
      cudaSetDevice(prev_);
  }
  CurrentDevice(const CurrentDevice &) = delete;
  CurrentDevice &operator=(const CurrentDevice &) = delete;

private:
  int prev_ = -1;
  bool switched_ = false;
};

/// cudaEventQuery in relaxed capture mode. Every event the runtime queries
/// was recorded outside any capture, but in the default (global) mode the
/// query is a "potentially unsafe" call: while any thread captures in
/// global mode, CUDA refuses it and invalidates that capture. The notice
/// thread queries every 10 us and user threads wait and drain, so without
/// this a program capturing graphs beside smpart kernels would fail at
/// random.
inline cudaError_t queryEvent(cudaEvent_t e) {
  CaptureModeRelaxed relaxed;
  return cudaEventQuery(e);
}

} // namespace detail
} // namespace smpart
