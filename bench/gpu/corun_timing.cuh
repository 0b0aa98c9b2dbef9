// How the co-run benchmarks (bench-corun, bench-opaque) run jobs together
// and time them without ever waiting past a deadline: the end of the run
// (--max-seconds), CUDA events that are destroyed on every path, and one
// co-run of interleaved launches timed within one deadline.
#pragma once

#include "bounded_wait.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <utility>
#include <vector>

namespace smpart_bench {

using Clock = std::chrono::steady_clock;

/// Deadline of one co-run (every job of a scenario) and of any other single
/// wait: a healthy one takes well under a second.
constexpr double kDeadlineS = 10;

/// The end of the run (--max-seconds) and what is left of it.
class RunDeadline {
public:
  void start(double seconds) {
    end = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                             std::chrono::duration<double>(seconds));
  }
  double secondsLeft() const {
    return std::chrono::duration<double>(end - Clock::now()).count();
  }
  /// The deadline of one wait: \p most seconds, never past the end of the
  /// run.
  double limit(double most) const {
    return std::max(0.0, std::min(most, secondsLeft()));
  }

private:
  Clock::time_point end = Clock::time_point::max();
};

/// A CUDA event destroyed with its owner. Destroying an event that is
/// recorded but not reached yet never blocks: it is released once reached.
class Event {
public:
  Event() { cudaEventCreate(&event); }
  ~Event() {
    if (event)
      cudaEventDestroy(event);
  }
  Event(const Event &) = delete;
  Event &operator=(const Event &) = delete;
  Event(Event &&Other) noexcept : event(std::exchange(Other.event, nullptr)) {}
  Event &operator=(Event &&) = delete;
  operator cudaEvent_t() const { return event; }

private:
  cudaEvent_t event = nullptr;
};

/// One job of a co-run: how many launches it makes, how to enqueue one on
/// a stream, the stream its next launch goes to and the one its last
/// launch went to (the same for a plain stream; a partition may switch
/// streams between launches).
struct Lane {
  int launches = 1;
  std::function<void(cudaStream_t)> launch;
  std::function<cudaStream_t()> next, last;
};

/// A co-run's outcome: each lane's time in ms (start of all to the end of
/// its last launch), or the error of the wait that failed
/// (cudaErrorTimeout: not finished within `limit` seconds).
struct CorunTimes {
  cudaError_t error = cudaSuccess;
  double limit = 0;
  std::vector<double> ms;
};

/// Runs the lanes together, all started by one event (recorded on lane 0's
/// stream; the others wait for it), their launches interleaved so that
/// every lane has work queued early. The waits for their ends share one
/// deadline: at most \p mostSeconds, never past the end of \p run.
inline CorunTimes runLanes(const std::vector<Lane> &lanes,
                           const RunDeadline &run, double mostSeconds) {
  Event start;
  std::vector<Event> ends(lanes.size());
  const cudaStream_t first = lanes[0].next();
  cudaEventRecord(start, first);
  for (std::size_t i = 1; i < lanes.size(); ++i)
    cudaStreamWaitEvent(lanes[i].next(), start, 0);
  int most = 0;
  for (const Lane &lane : lanes)
    most = std::max(most, lane.launches);
  for (int l = 0; l < most; ++l)
    for (std::size_t i = 0; i < lanes.size(); ++i)
      if (l < lanes[i].launches)
        lanes[i].launch(l == 0 && i == 0 ? first : lanes[i].next());
  for (std::size_t i = 0; i < lanes.size(); ++i)
    cudaEventRecord(ends[i], lanes[i].last());
  CorunTimes out;
  out.limit = run.limit(mostSeconds);
  out.ms.resize(lanes.size());
  const Clock::time_point t0 = Clock::now();
  for (std::size_t i = 0; i < lanes.size() && out.error == cudaSuccess; ++i) {
    const double used =
        std::chrono::duration<double>(Clock::now() - t0).count();
    out.error =
        smpart_test::syncEvent(ends[i], std::max(0.0, out.limit - used));
    float t = 0;
    cudaEventElapsedTime(&t, start, ends[i]);
    out.ms[i] = t;
  }
  return out;
}

} // namespace smpart_bench
