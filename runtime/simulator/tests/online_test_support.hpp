// What the simulator tests of the online policies share: the bundled mixes
// with profiles made wrong on purpose, a wrapper that records what the
// policy under test saw and did, and the convergence and hysteresis checks
// every online policy must pass on such a record.
#pragma once

#include "corun.hpp"
#include "report_kernels.hpp"

#include "smpart/controller_epoch.hpp"
#include "smpart/policy/policy.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace smpart::sim::testing {

/// The bundled mix \p Name (runtime/simulator/mixes) with the controller's
/// profiles off by \p ProfileError (misprofile; the model keeps the truth).
inline Mix mix(const std::string &Name, double ProfileError = 0) {
  Mix M = loadMix(std::string(SMPART_MIXES) + "/" + Name + ".json");
  misprofile(M, ProfileError);
  return M;
}

/// Does \p Policy tell the epoch its kernel set converged (convergedAt())?
template <class Policy, class = void>
struct HasConvergedAt : std::false_type {};
template <class Policy>
struct HasConvergedAt<
    Policy, std::void_t<decltype(std::declval<const Policy &>().convergedAt())>>
    : std::true_type {};

/// Forwards to the online policy under test; a test derives from it to
/// change what the policy sees.
template <class Policy> class Forwarding : public OnlinePolicy {
public:
  explicit Forwarding(std::shared_ptr<Policy> P) : Inner(std::move(P)) {}
  std::string_view name() const override { return Inner->name(); }
  std::optional<policy::Plan> onEpoch(const EpochReport &R,
                                      const policy::Plan &C) override {
    return Inner->onEpoch(R, C);
  }
  std::optional<policy::Plan>
  onReplan(std::string_view Trigger, const policy::Plan &Offline,
           const std::vector<FinishingKernel> &Finishing) override {
    return Inner->onReplan(Trigger, Offline, Finishing);
  }

  std::shared_ptr<Policy> Inner;
};

/// Nothing more to record of a policy.
struct NoExtra {};

/// Forwards to the online policy under test and records what it saw and
/// did: every epoch (its report, the policy's convergedAt() where it has
/// one, the plan it returned) and every re-plan. \p Extra is more of the
/// policy's state to record per epoch, as the function given to the
/// constructor reads it; Entry derives from it, so its fields read as
/// Entry's.
template <class Policy, class Extra = NoExtra>
class Watch final : public OnlinePolicy {
public:
  struct Entry : Extra {
    EpochReport report;
    std::optional<unsigned long long> converged;
    std::optional<policy::Plan> plan;
  };
  struct Replan {
    std::string trigger;
    /// The policy's plan, or the offline one where it kept that.
    policy::Plan applied;
    std::vector<FinishingKernel> finishing;
    bool amended = false;
  };
  using Snapshot = std::function<Extra(const Policy &)>;

  explicit Watch(std::shared_ptr<Policy> P, Snapshot S = {})
      : Inner(std::move(P)), Snap(std::move(S)) {}
  std::string_view name() const override { return Inner->name(); }
  std::optional<policy::Plan> onEpoch(const EpochReport &R,
                                      const policy::Plan &C) override {
    std::optional<policy::Plan> P = Inner->onEpoch(R, C);
    Entry E;
    if (Snap)
      static_cast<Extra &>(E) = Snap(*Inner);
    E.report = R;
    if constexpr (HasConvergedAt<Policy>::value)
      E.converged = Inner->convergedAt();
    E.plan = P;
    Log.push_back(std::move(E));
    return P;
  }
  std::optional<policy::Plan>
  onReplan(std::string_view Trigger, const policy::Plan &Offline,
           const std::vector<FinishingKernel> &Finishing) override {
    std::optional<policy::Plan> P =
        Inner->onReplan(Trigger, Offline, Finishing);
    Replans.push_back(
        {std::string(Trigger), P ? *P : Offline, Finishing, P.has_value()});
    return P;
  }

  std::shared_ptr<Policy> Inner;
  std::vector<Entry> Log;
  std::vector<Replan> Replans;

private:
  Snapshot Snap;
};

/// A co-run under a watched online policy.
template <class Policy, class Extra = NoExtra> struct OnlineRun {
  RunResult result;
  std::shared_ptr<Watch<Policy, Extra>> watch;
};

/// Expects each run of \p Log's epochs with the same two or more kernels
/// that lasts \p Epochs epochs or more to have converged within its first
/// \p Epochs; returns how many such kernel sets it checked. \p What names
/// the co-run in failures.
template <class Entry>
int expectConvergedWithin(const std::vector<Entry> &Log,
                          unsigned long long Epochs, const std::string &What) {
  using online::kernelIds;
  int Checked = 0;
  std::size_t Start = 0;
  for (std::size_t I = 1; I <= Log.size(); ++I) {
    if (I < Log.size() &&
        kernelIds(Log[I].report) == kernelIds(Log[Start].report))
      continue;
    const EpochReport &First = Log[Start].report;
    if (First.kernels.size() >= 2 && I - Start >= Epochs) {
      const std::optional<unsigned long long> &At =
          Log[Start + Epochs - 1].converged;
      EXPECT_TRUE(At.has_value()) << What << " from epoch " << First.index;
      if (At) {
        EXPECT_LE(*At, First.index + Epochs - 1) << What;
      }
      ++Checked;
    }
    Start = I;
  }
  return Checked;
}

/// Did a kernel's SMs change between samples \p A and \p B?
inline bool smsMoved(const EpochSample &A, const EpochSample &B) {
  return A.sms != B.sms;
}

/// Expects the hysteresis bound of \p Log: once a kernel set converged,
/// no kernel's knobs change (\p Changed of its samples in two consecutive
/// epochs) more than \p MaxChanges times within any \p Window epochs.
/// Returns how many converged epochs it checked.
template <class Entry, class ChangedFn>
int expectChangeBound(const std::vector<Entry> &Log, ChangedFn Changed,
                      unsigned long long Window, std::size_t MaxChanges,
                      const std::string &What) {
  using online::kernelIds;
  int Checked = 0;
  // Epoch indices of the changes per kernel, once its set converged.
  std::map<unsigned long long, std::vector<unsigned long long>> At;
  for (std::size_t I = 1; I < Log.size(); ++I) {
    if (kernelIds(Log[I].report) != kernelIds(Log[I - 1].report) ||
        !Log[I - 1].converged)
      continue;
    ++Checked;
    for (std::size_t K = 0; K < Log[I].report.kernels.size(); ++K) {
      const EpochSample &B = Log[I].report.kernels[K];
      if (Changed(Log[I - 1].report.kernels[K], B))
        At[B.id].push_back(Log[I].report.index);
    }
  }
  for (const auto &[Id, Epochs] : At)
    for (std::size_t A = 0; A < Epochs.size(); ++A) {
      std::size_t InWindow = 0;
      for (std::size_t B = A; B < Epochs.size(); ++B)
        InWindow += Epochs[B] < Epochs[A] + Window;
      EXPECT_LE(InWindow, MaxChanges)
          << What << " kernel #" << Id << " from epoch " << Epochs[A];
    }
  return Checked;
}

} // namespace smpart::sim::testing
