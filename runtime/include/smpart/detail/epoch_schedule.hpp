// When the next controller epoch is due, for the clocks that close epochs
// (smpart::EpochTimer, smpartd's loop). CUDA-free, so that a unit test can
// drive it.
#pragma once

namespace smpart {
namespace detail {

/// The deadline of the epoch after the one due at \p Due, which closed at
/// \p Now: a period later, or, when a stall (a descheduled or suspended
/// process, an epoch slower than its period) overran that, a period after
/// \p Now. Never a burst of back-to-back epochs that measure nothing (an
/// online policy would act on their noise).
template <class TimePoint, class Duration>
TimePoint nextEpochDue(TimePoint Due, TimePoint Now, Duration Period) {
  const TimePoint Next = Due + Period;
  return Next <= Now ? Now + Period : Next;
}

} // namespace detail
} // namespace smpart
