#include "smpart/profiler.hpp"

#include <algorithm>

namespace smpart::profiler {

std::vector<SweepStep> defaultSchedule(unsigned NumSms, unsigned Occupancy,
                                       unsigned MaxSteps) {
  std::vector<SweepStep> S;
  const unsigned Ctas = std::max(1u, Occupancy);
  for (unsigned N = NumSms; N >= 1 && S.size() < MaxSteps; N /= 2)
    S.push_back({N, Ctas});
  for (unsigned C = Ctas; C-- > 1 && S.size() < 2 * MaxSteps;)
    S.push_back({NumSms, C});
  return S;
}

double estimateRate(const std::vector<std::pair<double, double>> &P) {
  if (P.size() < 2)
    return 0;
  double MT = 0, MD = 0;
  for (auto &[T, D] : P) {
    MT += T;
    MD += D;
  }
  MT /= static_cast<double>(P.size());
  MD /= static_cast<double>(P.size());
  double Num = 0, Den = 0;
  for (auto &[T, D] : P) {
    Num += (T - MT) * (D - MD);
    Den += (T - MT) * (T - MT);
  }
  return Den > 0 ? std::max(0.0, Num / Den) : 0;
}

LiveSweep::LiveSweep(SweepOptions O) : Opts(std::move(O)) {
  if (Opts.steps.empty())
    Done = true;
}

void LiveSweep::closeStep() {
  const double Settle = Opts.dwell_ms * Opts.settle_fraction;
  std::vector<std::pair<double, double>> Window;
  for (auto &P : Points)
    if (P.first - StepStartMs >= Settle)
      Window.push_back(P);
  if (Window.size() >= std::max(2u, Opts.min_points)) {
    RateSample S;
    S.step = Opts.steps[Index];
    S.ms = Window.back().first - Window.front().first;
    S.blocks = estimateRate(Window) * S.ms;
    if (S.ms > 0)
      Samples.push_back(S);
  }
  Points.clear();
}

std::optional<SweepStep> LiveSweep::observe(double NowMs,
                                            const ControlProgress &P) {
  if (Done)
    return std::nullopt;
  const bool Finished = P.finished || (P.total > 0 && P.done >= P.total);
  if (StepStartMs < 0)
    StepStartMs = NowMs;
  Points.emplace_back(NowMs, static_cast<double>(P.done));
  if (Finished) {
    // The last window ran into the end of the kernel: its tail is not the
    // steady rate of this configuration, so it is dropped.
    Done = true;
    return std::nullopt;
  }
  if (NowMs - StepStartMs >= Opts.dwell_ms) {
    closeStep();
    ++Index;
    StepStartMs = NowMs;
    Points.emplace_back(NowMs, static_cast<double>(P.done));
    const double Left = P.total > 0 ? 1.0 - static_cast<double>(P.done) /
                                                static_cast<double>(P.total)
                                    : 1.0;
    if (Index >= Opts.steps.size() || Left < Opts.reserve_fraction) {
      Done = true;
      return std::nullopt;
    }
  }
  return Opts.steps[Index];
}

SweepDriver::SweepDriver(KernelControl &K, std::vector<unsigned> Ids,
                         SweepOptions O)
    : K(K), SmIds(std::move(Ids)), Sweep(std::move(O)) {
  std::sort(SmIds.begin(), SmIds.end());
}

bool SweepDriver::tick(double NowMs) {
  if (Restored)
    return false;
  ControlProgress P;
  if (!K.progress(P).ok())
    return false;
  std::optional<SweepStep> Next = Sweep.observe(NowMs, P);
  auto maskOf = [&](unsigned N) {
    SmMask M;
    for (unsigned I = 0; I < N && I < SmIds.size(); ++I)
      if (SmIds[I] < kMaxSms)
        M.set(SmIds[I]);
    return M;
  };
  if (!Next) {
    // Back to the launch configuration: every SM, the occupancy.
    K.setSmMask(maskOf(static_cast<unsigned>(SmIds.size())));
    if (K.occupancy() > 0)
      K.setCtasPerSm(std::min(K.occupancy(), kMaxCtasPerSm));
    if (!(P.finished || (P.total > 0 && P.done >= P.total)))
      K.grow();
    Restored = true;
    return false;
  }
  if (!Current || Current->sms != Next->sms ||
      Current->ctas_per_sm != Next->ctas_per_sm) {
    const bool Grows = Current && (Next->sms > Current->sms ||
                                   Next->ctas_per_sm > Current->ctas_per_sm);
    K.setSmMask(maskOf(Next->sms));
    K.setCtasPerSm(Next->ctas_per_sm);
    if (Grows)
      K.grow();
    Current = Next;
  }
  return true;
}

} // namespace smpart::profiler
