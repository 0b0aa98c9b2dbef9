#include "sim_kernel.hpp"

#include <algorithm>
#include <cmath>

namespace smpart::sim {

SimKernel::SimKernel(unsigned long long Id, std::string Name,
                     const KernelTraits &T, double Total, const SmMask &AllSms,
                     const double &NowUs, double AckUs)
    : Id(Id), Name(std::move(Name)), Traits(&T), Now(&NowUs), AckUs(AckUs),
      Total(Total) {
  // initKnobs: every SM, the kernel's occupancy.
  Knobs.mask = AllSms;
  Knobs.ctas_per_sm = T.occupancy;
  Device = Knobs;
}

Status SimKernel::setKnobs(const KnobSet &S) {
  Knobs = S;
  if (!Started) {
    Device = Knobs; // nothing ran yet: the first CTAs read these
    return {};
  }
  // Growth takes effect at once (new CTAs launch with the new knobs);
  // a shrink or a preemption only once the running CTAs poll them.
  Acked = false;
  AckAt = *Now + AckUs;
  if (Device.preempt) {
    // No CTA of it runs anywhere: the old mask holds nothing.
    Device.mask = S.mask;
    Device.ctas_per_sm = S.ctas_per_sm;
  } else {
    Device.mask |= S.mask;
    Device.ctas_per_sm = std::max(Device.ctas_per_sm, S.ctas_per_sm);
  }
  Device.bypass_ctas_per_sm = S.bypass_ctas_per_sm;
  if (!S.preempt)
    Device.preempt = false;
  return {};
}

Status SimKernel::setSmMask(const SmMask &M) {
  KnobSet S = Knobs;
  S.mask = M;
  return setKnobs(S);
}
Status SimKernel::setCtasPerSm(unsigned N) {
  KnobSet S = Knobs;
  S.ctas_per_sm = N;
  return setKnobs(S);
}
Status SimKernel::setBypassCtasPerSm(unsigned N) {
  KnobSet S = Knobs;
  S.bypass_ctas_per_sm = N;
  return setKnobs(S);
}
Status SimKernel::preempt() {
  KnobSet S = Knobs;
  S.preempt = true;
  return setKnobs(S);
}
Status SimKernel::resume() {
  KnobSet S = Knobs;
  S.preempt = false;
  return setKnobs(S);
}

void SimKernel::started() {
  Started = true;
  Device = Knobs;
  Acked = true;
}

bool SimKernel::settle() {
  if (Acked || *Now < AckAt)
    return false;
  Acked = true;
  Device = Knobs;
  return true;
}

SmMask SimKernel::reach() const {
  return finished() || Device.preempt ? SmMask() : Device.mask;
}

double SimKernel::run(double Blocks) {
  const double Before = Done;
  Done = std::min(Total, Done + std::max(0.0, Blocks));
  // Blocks in flight: one per resident CTA. Once the last one is taken it
  // stays taken, whatever the knobs do next.
  const double Resident =
      static_cast<double>(Device.mask.count()) * Device.ctas_per_sm;
  LastTaken = LastTaken || Done + Resident >= Total;
  return Done - Before;
}

bool SimKernel::lastBlockTaken() const { return LastTaken || finished(); }

Status SimKernel::progress(ControlProgress &Out) const {
  const auto Blocks = static_cast<unsigned long long>(Total);
  Out.total = Blocks;
  Out.done = static_cast<unsigned long long>(std::floor(Done));
  Out.taken = lastBlockTaken() ? Blocks : Out.done;
  Out.finished = finished();
  return {};
}

} // namespace smpart::sim
