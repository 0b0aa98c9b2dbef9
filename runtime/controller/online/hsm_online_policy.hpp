// HSM-Fair and HSM-QoS online (hsm-asplos20.txt Sec. 4.2-4.3): at the end
// of every epoch, predict each running kernel's normalised progress (NP,
// against private mode: alone on the whole GPU) from what the epoch
// measured, and repartition the SMs to equalise NP (fair) or to give the
// high-priority kernel just enough SMs for its NP target and the rest to
// the others for the largest sum of NP (qos). Controller README, "Online
// HSM", says what is measured and what substitutes the paper's counters.
#pragma once

#include "arrival_estimates.hpp"
#include "change_budget.hpp"
#include "report_kernels.hpp"

#include "smpart/controller_epoch.hpp"
#include "smpart/policy/policy.hpp"
#include "smpart/policy/profile.hpp"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace smpart::online {

struct HsmOnlineOptions {
  bool qos = false;
  /// HSM-Fair acts while min/max NP is below this (the paper uses 0.9 to
  /// spare preemptions; a step here costs one chunk, README).
  double fair_threshold = 0.95;
  /// HSM-QoS: NP target of a high-priority kernel without np_target.
  double qos_target = 0.8;
  /// HSM-QoS gives SMs back once the high-priority kernel's NP exceeds
  /// its target by this much (the paper's 0.9 for a 0.8 target).
  double qos_slack = 0.1;
  /// A repartition must improve the predicted objective by this much.
  double min_gain = 0.02;
  /// Hysteresis once converged: at most max_changes knob changes per
  /// kernel within any `window` epochs.
  unsigned window = 10;
  unsigned max_changes = 2;
  /// Measure each memory-bound kernel's private-mode rate once, in one
  /// steady epoch alone on the GPU (README, "Calibration"). The registry
  /// turns it on for hsm-fair-online: its projected final NP needs each
  /// kernel's time alone, and the profile's may be wrong.
  bool probe = false;
  /// HSM-Fair equalises each kernel's projected *final* NP (its time
  /// alone over its projected turnaround: time so far plus blocks left
  /// over the rate the allocation is predicted to give, SiM's remaining
  /// time) rather than the epoch's NP, so that a kernel left alone on the
  /// GPU after its co-runner finished does not break fairness (README,
  /// "Online HSM"). HSM-QoS judges the others' SMs by their projected
  /// final NP while a high-priority kernel runs.
  bool project = true;
};

class HsmOnlinePolicy final : public OnlinePolicy {
public:
  HsmOnlinePolicy(policy::ProfileSet Profiles, HsmOnlineOptions O);
  std::string_view name() const override {
    return Opts.qos ? "hsm-qos-online" : "hsm-fair-online";
  }
  std::optional<policy::Plan> onEpoch(const EpochReport &Report,
                                      const policy::Plan &Current) override;

  /// HSM's NP of one sample against private mode (README): exposed for
  /// tests. 0 when the kernel has no profile curve.
  double predictNp(const EpochSample &S, unsigned NumSms) const;
  /// Epoch index at which the current kernel set converged (no change
  /// needed); nullopt while converging.
  std::optional<unsigned long long> convergedAt() const { return Converged; }
  unsigned long long steps() const { return Steps; }
  /// Measured private rate over the profile's, per calibrated kernel name.
  const ProfileCalibration &calibration() const { return Kappa; }

private:
  const policy::KernelProfile *profileOf(const std::string &Name) const;
  bool memoryBound(const policy::KernelProfile &P, unsigned NumSms) const;
  /// May every kernel whose SM count changes in \p Sms change again?
  bool allowed(const EpochReport &R, const std::vector<int> &Sms) const;
  /// Starts, waits for or ends a calibration epoch; nullopt when none.
  std::optional<std::optional<policy::Plan>> calibrate(const EpochReport &R,
                                                       unsigned NumSms);
  /// The plan that measures the next memory-bound kernel not yet measured
  /// alone (nullopt: none); \p Chained: from another one's calibration
  /// epoch, so the allocation to resume stays the co-run's.
  std::optional<policy::Plan> startProbe(const EpochReport &R, unsigned NumSms,
                                         bool Chained);
  /// One repartitioning decision from a report of steady co-run samples.
  std::optional<policy::Plan> decide(const EpochReport &R, unsigned NumSms,
                                     const policy::Plan &Current);
  /// What a sample proves of its profile (calibrateProfile).
  void learnFrom(const EpochSample &S);

  policy::ProfileSet Profiles;
  ArrivalEstimates Arrivals;
  HsmOnlineOptions Opts;
  std::vector<unsigned long long> Ids; // the kernel set being optimised
  std::optional<unsigned long long> Converged;
  /// The kernels' SM changes, for the hysteresis bound.
  ChangeBudget Changes;
  unsigned long long Steps = 0;
  ProfileCalibration Kappa;
  std::set<std::string> Probed;
  /// The kernel being measured alone, and the plan to return to.
  std::optional<unsigned long long> Probing;
  /// The last step: the objective before it, what the model predicted for
  /// it and each kernel's SMs before it. A step that delivers under half
  /// of its predicted gain ends the search (the model cannot see further),
  /// except that HSM-Fair plans once more from the new measurement where
  /// the step lost nothing beyond the noise; one that lost more is undone.
  struct Step {
    double before = 0, predicted = 0;
    std::vector<int> from;
  };
  std::optional<Step> Expected;
  /// HSM-Fair: the last step was planned after one that gained under half
  /// of its prediction (README, "Online HSM"): the search ends with it.
  bool AfterShortStep = false;
  /// The objective when the kernel set converged: once converged, only a
  /// measured drop below it by min_gain starts a new step (hysteresis).
  double Band = 0;
  /// HSM-QoS once the model's step failed to lift a high-priority kernel
  /// short of its target (its curve does not see what holds it back, e.g.
  /// a co-runner's bandwidth): the SMs it was measured short and at target
  /// on, which measured steps bisect instead (README, "Online HSM").
  struct Bracket {
    bool measured = false;
    int short_at = 0; ///< SMs it was last measured short on (0: none)
    int met_at = 0;   ///< the fewest SMs measured at target since (0: none)
  } QosBracket;
  policy::Plan Resume;
  /// The last epoch in which every kernel co-ran steadily: what a decision
  /// after calibration epochs measures the resumed allocation by.
  std::optional<EpochReport> CoRun;
};

} // namespace smpart::online
