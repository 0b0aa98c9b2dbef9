// How often the notice thread (runtime/src/notices.cpp) looks at the
// host-mapped words the device writes. CUDA-free, so that a unit test can
// drive it.
//
// A controller reacts to a device event no sooner than the notice thread
// sees it, and the event that gates the most is a knob acknowledgement: a
// controller grants the SMs it took from one kernel to another only once
// the giver acknowledged (controller README, "Safety"), so those SMs idle
// until the notice thread looks. Its usual period (10 us on a condition
// variable, woken by Linux 5-10 us late) made that wait 10 us at the
// median and 20 us at p99 on an H200, most of the controller's reaction
// time. While a knob write awaits its acknowledgement the thread therefore
// looks every microsecond instead (yielding in between), for at most
// kUrgentBudget after the set of awaited writes last changed: a write the
// device never acknowledges (a kernel that cannot start) then costs a core
// for that long, not for ever. Acknowledgements and the kernel's end are
// words in host memory; CUDA event queries (a kernel that never ran, a
// stream reaching a launch, an opaque kernel's end) take the driver lock
// the program's own CUDA calls need, so they stay at one round per idle
// period while the thread polls fast.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

namespace smpart {
namespace detail {

class NoticePace {
public:
  using Clock = std::chrono::steady_clock;
  /// The period with nothing awaited, on a condition variable.
  static constexpr std::chrono::microseconds kIdle{10};
  /// The period while a write awaits its acknowledgement, spent yielding.
  static constexpr std::chrono::microseconds kUrgent{1};
  static constexpr std::chrono::milliseconds kUrgentBudget{2};

  /// One knob write that awaits its acknowledgement, as a term of the
  /// summary next() takes: a new write, or an acknowledged one leaving,
  /// changes the sum of these terms.
  static std::uint64_t awaited(std::uint64_t kernel, std::uint32_t epoch) {
    std::uint64_t x = (kernel << 32) ^ epoch;
    x ^= x >> 33; // a 64-bit finaliser: sums of distinct terms differ
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x | 1u; // never 0, which means "nothing awaited"
  }

  /// The period until the next look, given the sum of awaited() over the
  /// writes awaiting acknowledgement now (0: none).
  std::chrono::microseconds next(Clock::time_point now, std::uint64_t sum) {
    if (sum == 0) {
      last_ = 0;
      return kIdle;
    }
    if (sum != last_) {
      last_ = sum;
      since_ = now;
    }
    return now - since_ < kUrgentBudget ? kUrgent : kIdle;
  }

  /// Whether this look may query CUDA events: at most once per kIdle.
  bool eventsDue(Clock::time_point now) {
    if (events_ && now - *events_ < kIdle)
      return false;
    events_ = now;
    return true;
  }

private:
  std::uint64_t last_ = 0;
  Clock::time_point since_{};
  std::optional<Clock::time_point> events_;
};

} // namespace detail
} // namespace smpart
