// Dynamic TLP modulation with cache-bypass learning
// (tlp-modulation-cache-bypass.txt Sec. 4.3-4.4). Every kernel shares every
// SM; the knobs are CTAs per SM (Tb) and bypassing CTAs per SM (By). The
// offline `tlp` policy (Alg. 1) gives the static start on every arrival and
// departure; at the end of each sampling period this policy measures the
// configuration, keeps or backs off the last step, and takes the next one:
// first CTA-per-SM steps in the direction the PUCT/PUHP rule picks, then
// bypass learning Steps 1-4. Controller README, "TLP dynamic", says what
// substitutes the paper's pipeline utilisation and stall counters.
#pragma once

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

struct TlpDynamicOptions {
  /// Bypass learning (Sec. 4.4, Steps 1-4); off leaves By at 0.
  bool bypass_learning = true;
  /// A step is kept when it raises the measured throughput (projected STP)
  /// by more than this fraction; otherwise it is backed off.
  double min_gain = 0.003;
  /// CTA-per-SM steps per kernel set before bypass learning starts.
  unsigned max_tlp_steps = 4;
  /// No trial when the first kernel is projected to finish within this
  /// many epochs: the trial's epoch would cost more than the rest gains.
  double min_horizon_epochs = 4;
  /// Once converged, a measured throughput this far below the converged
  /// one restarts learning (a phase change), within the hysteresis bound.
  double relearn_drop = 0.1;
  /// An epoch right after a CTA/bypass step still measures the step when
  /// the sampling period is at most this fraction of it (the old CTAs
  /// drain within one sampling period).
  double transition_share = 0.25;
  /// Hysteresis once converged: at most max_changes knob changes per
  /// kernel within any `window` epochs.
  unsigned window = 10;
  unsigned max_changes = 2;
};

class TlpDynamicPolicy final : public OnlinePolicy {
public:
  TlpDynamicPolicy(policy::ProfileSet Profiles, TlpDynamicOptions O = {});
  std::string_view name() const override { return "tlp-dynamic"; }
  std::optional<policy::Plan> onEpoch(const EpochReport &Report,
                                      const policy::Plan &Current) override;

  /// Where the learning of the current kernel set stands.
  enum class Phase { Start, Tlp, Bypass, Converged };
  Phase phase() const { return L.State; }
  /// Epoch index at which the current kernel set converged.
  std::optional<unsigned long long> convergedAt() const { return Converged; }
  unsigned long long steps() const { return Steps; }
  /// The measured throughput of the configuration kept last.
  double throughput() const { return L.HisJ; }
  /// Projected STP of one report (README): exposed for tests.
  double projectedStp(const EpochReport &R) const;

private:
  struct Knobs {
    unsigned ctas = 0, bypass = 0;
    bool operator==(const Knobs &O) const {
      return ctas == O.ctas && bypass == O.bypass;
    }
  };
  /// What the trial in flight changed, so its outcome can steer the next.
  enum class Move { None, Grow, Bypass };
  const policy::KernelProfile *profileOf(const std::string &Name) const;
  /// Private-mode rate (alone, whole GPU, occupancy), blocks per us.
  double privateRate(const EpochSample &S) const;
  /// Learns private rates from what a sample proves (unprofiled kernels,
  /// profiles too slow; any profile when the kernel runs alone).
  void learn(const EpochSample &S);
  double memShare(const EpochSample &S) const;
  unsigned occupancyOf(const EpochSample &S) const;
  bool fits(const EpochReport &R, const std::vector<Knobs> &K) const;
  /// The CTA step the PUCT/PUHP rule picks from the kept configuration
  /// (grow the kernel preferring the critical pipeline, shrink the one
  /// preferring the other until Eq. 1 holds); nullopt when none fits.
  std::optional<std::vector<Knobs>> tlpStep(const EpochReport &R,
                                            bool CriticalSp);
  /// Next bypass trial (Steps 2-4) from the kept configuration.
  std::optional<std::vector<Knobs>> bypassStep(const EpochReport &R);
  bool usable(const EpochReport &R) const;
  bool allowed(const EpochReport &R, const std::vector<Knobs> &K) const;
  void reset(const EpochReport &R);
  std::optional<policy::Plan> emit(const EpochReport &R,
                                   const policy::Plan &Current,
                                   const std::vector<Knobs> &K,
                                   std::vector<std::string> Notes);

  policy::ProfileSet Profiles;
  TlpDynamicOptions Opts;
  unsigned NumSms = 0;
  std::vector<unsigned long long> Ids;
  std::optional<unsigned long long> Converged;
  unsigned long long Steps = 0;
  std::optional<unsigned long long> WrittenAt;
  /// Where the learning stands: one value, so that a step the change
  /// budget refuses leaves it as it was and the next sampling period
  /// decides again.
  struct Learning {
    Phase State = Phase::Start;
    /// The kept configuration and its measurement (the paper's history).
    std::vector<Knobs> His;
    double HisJ = 0, HisSp = 0, HisLdst = 0;
    /// The trial in flight (the knobs asked for).
    std::optional<std::vector<Knobs>> Trial;
    Move TrialMove = Move::None;
    /// CTA steps: the direction (critical pipeline SP?) and whether the
    /// other one was tried.
    bool DirSp = true, TriedOther = false;
    unsigned TlpSteps = 0;
    /// Bypass learning: the next Step 2-3 candidate, the best one so far
    /// (its measurement and knobs), and the kernel Step 3 chose.
    std::size_t NextCandidate = 0;
    std::optional<std::size_t> BestCand;
    double BestCandJ = 0;
    std::vector<Knobs> BestTrial;
    std::optional<std::size_t> Bypasser;
    /// Converged: sampling periods in a row below the kept throughput.
    unsigned Drops = 0;
  };
  Learning L;
  /// First epoch start each kernel id was seen (its arrival, within one
  /// epoch) and the highest rate an unprofiled kernel reached.
  std::map<unsigned long long, double> Arrived;
  std::map<unsigned long long, double> BestRate;
  ProfileCalibration Kappa;
  /// Base names of the kernel set, and the sets (sorted names) seen to
  /// come back: a kernel launched again beside the same co-runners (a
  /// program's loop). Such a co-run (Recurs: the current set is one) is
  /// judged by its throughput now, not by the STP it would reach if it ran
  /// once.
  std::vector<std::string> Names;
  std::set<std::vector<std::string>> Recurring;
  bool Recurs = false;
  /// The kernels' knob changes, for the hysteresis bound.
  ChangeBudget Changes;
};

const char *tlpPhaseName(TlpDynamicPolicy::Phase P);

} // namespace smpart::online
