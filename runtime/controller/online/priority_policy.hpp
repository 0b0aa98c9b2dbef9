// Plain priority mode (controller README, "Latency-critical co-location"):
// the co-location every GPU-sharing system is judged by, short
// latency-critical kernels (profile "priority": "high", inference)
// arriving beside long best-effort ones (training).
//
//  - At the re-plan of an arrival (OnlinePolicy::onReplan, not an epoch
//    later: a latency-critical kernel is often over within one epoch), each
//    high-priority kernel gets the fewest SMs at which its profile curve
//    runs within `slack` of its time on every SM the plan hands out; the
//    best-effort kernels shrink to the rest, preempted when none is left.
//  - Until it leaves, the SMs it runs on stay its own: a small kernel
//    takes its last block almost at once (its grid fits its CTAs), and
//    SiM's early release of those SMs would put best-effort CTAs beside
//    its last blocks. When it leaves, the offline plan of the kernels left
//    stands: the best-effort work gets its SMs back.
//  - Every epoch, a high-priority kernel whose steady rate on its own SMs
//    falls below its isolated rate there by more than `slack` suffers from
//    what SMs do not isolate (DRAM, L2): the best-effort kernels are
//    preempted while it runs, and from then on whenever that kernel runs.
#pragma once

#include "smpart/controller_epoch.hpp"
#include "smpart/policy/profile.hpp"

#include <memory>
#include <set>
#include <string>
#include <utility>

namespace smpart::online {

struct PriorityOptions {
  /// A high-priority kernel's SMs may cost it this much time against every
  /// SM the plan hands out (its profile curve). With one chunk of
  /// preemption latency (~40 us) on a kernel of a few hundred us, 5 %
  /// keeps it within the 1.25x latency target the README quotes.
  double slack = 0.05;
};

class PriorityPolicy final : public OnlinePolicy {
public:
  PriorityPolicy(policy::ProfileSet Profiles, PriorityOptions O = {});
  std::string_view name() const override { return "priority"; }
  std::optional<policy::Plan>
  onReplan(std::string_view Trigger, const policy::Plan &Offline,
           const std::vector<FinishingKernel> &Finishing) override;
  std::optional<policy::Plan> onEpoch(const EpochReport &Report,
                                      const policy::Plan &Current) override;

  /// The SMs a high-priority kernel with profile \p P needs out of
  /// \p Budget (exposed for tests).
  int neededSms(const policy::KernelProfile &P, int Budget) const;
  /// Kernel names whose runs preempt the best-effort work (learned).
  const std::set<std::string> &exclusive() const { return Exclusive; }

private:
  bool isHigh(const policy::KernelDecision &D) const;
  /// \p Offline with every high-priority kernel given its SMs and the
  /// best-effort ones the rest, none on \p Held; nullopt when nothing
  /// changes.
  std::optional<policy::Plan> prioritise(const policy::Plan &Offline,
                                         const char *Why,
                                         const std::set<int> &Held) const;

  policy::ProfileSet Profiles;
  PriorityOptions Opts;
  std::set<std::string> Exclusive;
};

/// SM ordinals that high-priority kernels of \p Profiles still run on
/// after taking their last block.
std::set<int> heldByHighPriority(const policy::ProfileSet &Profiles,
                                 const std::vector<FinishingKernel> &Finishing);
/// The longest run of ordinals in [0, \p Budget) outside \p Held, as
/// [first, end).
std::pair<int, int> freeRun(int Budget, const std::set<int> &Held);

/// Gives any online policy the priority mode's hold: while a high-priority
/// kernel finishes its last blocks, the re-plans of the wrapped policy keep
/// the others off its SMs (their shares scaled into the SMs left).
/// `hsm-qos-online` runs wrapped: HSM-QoS sizes the latency-critical
/// kernel, the hold keeps its tail its own.
class HighPriorityHold final : public OnlinePolicy {
public:
  HighPriorityHold(std::shared_ptr<OnlinePolicy> Inner,
                   policy::ProfileSet Profiles)
      : Inner(std::move(Inner)), Profiles(std::move(Profiles)) {}
  std::string_view name() const override { return Inner->name(); }
  std::optional<policy::Plan> onEpoch(const EpochReport &Report,
                                      const policy::Plan &Current) override {
    return Inner->onEpoch(Report, Current);
  }
  std::optional<policy::Plan>
  onReplan(std::string_view Trigger, const policy::Plan &Offline,
           const std::vector<FinishingKernel> &Finishing) override;

private:
  std::shared_ptr<OnlinePolicy> Inner;
  policy::ProfileSet Profiles;
};

} // namespace smpart::online
