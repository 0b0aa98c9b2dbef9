// Waits with a deadline for the GPU tests and benchmarks. CUDA's own
// synchronisation calls and KernelHandle::wait()/drain() block for as long
// as the kernel runs; a kernel that never finishes (a liveness bug, a
// wedged GPU) must fail the check that waits on it, with a message, and
// never hang the run. Each helper polls a query that cannot block and gives
// up after its deadline.
#pragma once

#include "smpart/runtime.hpp"

#include <cuda_runtime.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <mutex>
#include <string>
#include <thread>

namespace smpart_test {

/// Deadline of one wait: far above any healthy wait here (milliseconds),
/// and below ctest's 45 s per GPU test, so that the failure names the wait
/// that hung instead of ctest killing the test.
inline constexpr double kWaitSeconds = 10;

/// Calls `done()` until it returns true or `seconds` pass; false on
/// timeout. Spins first (benchmarks time some of these waits), then sleeps
/// so that a long wait leaves the CPU to the runtime's threads.
template <class Done> bool pollFor(double seconds, Done &&done) {
  const auto end =
      std::chrono::steady_clock::now() +
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(
          std::chrono::duration<double>(seconds));
  for (unsigned polls = 0;; ++polls) {
    if (done())
      return true;
    if (std::chrono::steady_clock::now() >= end)
      return false;
    if (polls < 2000)
      std::this_thread::yield();
    else
      std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

/// Polls a CUDA query (cudaStreamQuery, cudaEventQuery) until it stops
/// answering cudaErrorNotReady: its answer, or cudaErrorTimeout after
/// `seconds`.
template <class Query> cudaError_t queryFor(double seconds, Query &&query) {
  cudaError_t e = cudaErrorNotReady;
  pollFor(seconds, [&] {
    e = query();
    return e != cudaErrorNotReady;
  });
  return e == cudaErrorNotReady ? cudaErrorTimeout : e;
}

/// cudaStreamSynchronize with a deadline.
inline cudaError_t syncStream(cudaStream_t s, double seconds = kWaitSeconds) {
  return queryFor(seconds, [&] { return cudaStreamQuery(s); });
}

/// cudaEventSynchronize with a deadline.
inline cudaError_t syncEvent(cudaEvent_t e, double seconds = kWaitSeconds) {
  return queryFor(seconds, [&] { return cudaEventQuery(e); });
}

/// cudaDeviceSynchronize with a deadline, for the work on `streams` (there
/// is no device-wide query): one deadline for all of them.
inline cudaError_t syncStreams(std::initializer_list<cudaStream_t> streams,
                               double seconds = kWaitSeconds) {
  const auto start = std::chrono::steady_clock::now();
  for (cudaStream_t s : streams) {
    const double used =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    const cudaError_t e = syncStream(s, seconds > used ? seconds - used : 0);
    if (e != cudaSuccess)
      return e;
  }
  return cudaSuccess;
}

/// Why a wait on `h` gave up: the deadline and where the kernel stood.
inline smpart::Status timedOut(const smpart::KernelHandle &h, const char *what,
                               double seconds) {
  smpart::Progress p;
  h.progress(p);
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "%s(%s): no answer within %.0f s (taken %llu of %llu logical "
                "blocks, done %llu, %u resident CTAs%s%s)",
                what, h.name(), seconds, p.taken, p.total, p.done,
                p.resident_ctas, p.parked ? ", parked" : "",
                h.knobs().preempt ? ", preempted" : "");
  return smpart::Status(smpart::Errc::kCuda, buf,
                        static_cast<int>(cudaErrorTimeout));
}

/// KernelHandle::wait() with a deadline. wait() is called only once it
/// answers at once: the kernel completed on its stream, or it is preempted
/// and drained (wait() then says kPreempted).
inline smpart::Status waitKernel(smpart::KernelHandle &h,
                                 double seconds = kWaitSeconds) {
  if (!h.valid() || !h.status().ok() || h.captured() || !h.doneEvent())
    return h.wait(); // answers without waiting
  const bool ready = pollFor(seconds, [&] {
    if (cudaEventQuery(h.doneEvent()) != cudaErrorNotReady)
      return true;
    smpart::Progress p;
    return h.progress(p).ok() && !p.finished && h.knobs().preempt &&
           (!p.started || (p.parked && p.resident_ctas == 0));
  });
  return ready ? h.wait() : timedOut(h, "wait", seconds);
}

/// KernelHandle::drain() with a deadline: no CTA works on the kernel any
/// more (only the parked anchor is left, or it finished or never started).
inline smpart::Status drainKernel(smpart::KernelHandle &h,
                                  double seconds = kWaitSeconds) {
  if (!h.valid() || !h.status().ok() || !h.doneEvent())
    return h.drain();
  const bool ready = pollFor(seconds, [&] {
    if (cudaEventQuery(h.doneEvent()) != cudaErrorNotReady)
      return true;
    smpart::Progress p;
    return h.progress(p).ok() &&
           (p.finished || !p.started || (p.parked && p.resident_ctas == 0));
  });
  return ready ? h.drain() : timedOut(h, "drain", seconds);
}

/// Ends the process with a message if it is still alive `seconds` after
/// construction and before destruction: the last resort for a call no
/// helper above can bound (a CUDA call inside a test input's launcher). A
/// test that hangs then fails with the name of what hung, before ctest's
/// own timeout kills it without one. std::_Exit: the hung thread still
/// holds CUDA and runtime state that destructors could wait on forever.
class Watchdog {
public:
  Watchdog(std::string what, double seconds) : what_(std::move(what)) {
    thread_ = std::thread([this, seconds] {
      std::unique_lock<std::mutex> lock(mu_);
      if (!cv_.wait_for(lock, std::chrono::duration<double>(seconds),
                        [this] { return stop_; })) {
        std::fprintf(stderr,
                     "\n%s: FAILED: still running after %.0f s (hung); "
                     "ending the process\n",
                     what_.c_str(), seconds);
        std::fflush(stdout);
        std::fflush(stderr);
        std::_Exit(1);
      }
    });
  }
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_one();
    thread_.join();
  }
  Watchdog(const Watchdog &) = delete;
  Watchdog &operator=(const Watchdog &) = delete;

private:
  std::string what_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

} // namespace smpart_test
