// When each kernel arrived, estimated from what the epochs show: the
// controller hears of a launch between two epochs, and an online policy
// that projects a kernel's whole run (its final NP, its turnaround) needs
// the time it has run already.
#pragma once

#include "smpart/controller_epoch.hpp"

#include <algorithm>
#include <map>
#include <optional>

namespace smpart::online {

class ArrivalEstimates {
public:
  /// Notes the kernels in their first epoch and estimates the arrival of
  /// those measured steady since; forgets kernels no longer reported.
  void observe(const EpochReport &R) {
    for (const EpochSample &S : R.kernels)
      if (S.epochs == 1)
        Seen[S.id] = {R.start_us, R.end_us, S.done,
                      S.preempted && !S.awaiting_sms, std::nullopt};
    for (auto It = Seen.begin(); It != Seen.end();)
      It = std::none_of(R.kernels.begin(), R.kernels.end(),
                        [&](const EpochSample &S) { return S.id == It->first; })
               ? Seen.erase(It)
               : std::next(It);
    for (const EpochSample &S : R.kernels)
      estimate(S);
  }

  /// Its arrival on the epoch clock, once a steady epoch measured the rate
  /// it ran its first blocks at; nullopt before.
  std::optional<double> of(const EpochSample &S) const {
    auto It = Seen.find(S.id);
    return It != Seen.end() ? It->second.arrival_us : std::nullopt;
  }

private:
  struct FirstSeen {
    double start_us = 0, end_us = 0;
    unsigned long long done = 0;
    bool waited = false; ///< the plan preempted it at the epoch's end
    std::optional<double> arrival_us;
  };

  void estimate(const EpochSample &S) {
    auto It = Seen.find(S.id);
    if (It == Seen.end())
      return;
    FirstSeen &F = It->second;
    if (F.arrival_us || !S.steady || S.sms == 0 || !(S.rate > 0))
      return;
    // It ran its first blocks at about the rate it runs now (this first
    // steady sample). One that finished none in its first epoch either
    // waited (the plan preempted it): dated half the epoch back; or it
    // arrived at most one block lifetime before the end (this sample's
    // sampling period), its SMs perhaps still on their way from other
    // kernels: dated half of that back.
    const double Epoch = F.end_us - F.start_us;
    const double Ran = F.done > 0 ? static_cast<double>(F.done) / S.rate
                       : F.waited ? 0.5 * Epoch
                                  : 0.5 * std::min(S.sampling_period_us, Epoch);
    F.arrival_us = std::clamp(F.end_us - Ran, F.start_us, F.end_us);
  }

  std::map<unsigned long long, FirstSeen> Seen;
};

} // namespace smpart::online
