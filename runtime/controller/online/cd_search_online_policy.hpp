// CD-search online (cd-search-ics18.txt Sec. 4): classify the co-running
// kernels while they run, each on its even share of the SMs (half for two:
// the arrival plan of the base policy `even`), then apply the mode's search
// one step per iteration, each step measured before the next, until the
// paper's stop rule holds. Controller README, "Online CD-search", says what
// is measured and what substitutes the paper's counters and preemption.
#pragma once

#include "report_kernels.hpp"

#include "smpart/controller_epoch.hpp"
#include "smpart/policy/profile.hpp"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace smpart::online {

struct CdSearchOnlineOptions {
  /// The paper's stop threshold: a memory kernel's rate may fall at most
  /// this much below its rate on the even share (5 %).
  double loss = 0.05;
  /// Classification: a kernel whose measured rate on its share is below
  /// (1 - loss) of its isolated rate there is starved by the off-SM
  /// system (Eq. 1 > Eq. 2); so is one whose profile curve gains less than
  /// this factor from the second half of its share (saturated alone).
  double saturated_gain = 1.5;
  /// Performance mode: a probe beyond the loss is still kept when the
  /// compute kernels' measured gain from the SMs it gave them exceeds its
  /// own measured loss by more than this (normalised progress against
  /// private rates, alone on the whole GPU); 0 keeps the paper's threshold
  /// alone (README, "Online CD-search", why the threshold is measured).
  double gain_margin = 0.01;
};

class CdSearchOnlinePolicy final : public OnlinePolicy {
public:
  /// What the classification phase found for a kernel.
  enum class Class { Unknown, Compute, Memory, Cache };
  static const char *className(Class C);

  CdSearchOnlinePolicy(policy::ProfileSet Profiles, CdSearchOnlineOptions O);
  std::string_view name() const override { return "cd-search-online"; }
  std::optional<policy::Plan> onEpoch(const EpochReport &Report,
                                      const policy::Plan &Current) override;
  /// At an arrival of kernels this policy has searched (a re-launch, or a
  /// program launching the same kernels in a loop): their partition at
  /// once, instead of the even one (the search does not start over).
  std::optional<policy::Plan>
  onReplan(std::string_view Trigger, const policy::Plan &Offline,
           const std::vector<FinishingKernel> &Finishing) override;

  /// The class of each kernel (by id) of the current kernel set, once
  /// classified.
  const std::map<unsigned long long, Class> &classes() const { return Classes; }
  /// "classify", "even", "performance" or "power" for the current set.
  const std::string &mode() const { return Mode; }
  /// Epoch index at which the current kernel set converged.
  std::optional<unsigned long long> convergedAt() const { return Converged; }
  unsigned long long steps() const { return Steps; }

private:
  enum class Phase { Classify, Search, Done };
  /// Per kernel of the current set.
  struct State {
    Class klass = Class::Unknown;
    const policy::KernelProfile *profile = nullptr;
    int share = 0;    ///< SMs in the classification phase
    double ref = 0;   ///< rate measured on the share
    double np = 0;    ///< NP measured on the share
    int good = 0;     ///< the fewest SMs kept (within the loss, or paid)
    int probe = 0;    ///< SMs of the step being measured
    bool done = true; ///< its search ended (compute kernels: always)
    int target = 0;   ///< SMs of the last plan made for it (0: none yet)
    /// Rate and SMs on the partition the search kept last.
    double kept_rate = 0;
    int kept_sms = 0;
  };
  /// A kernel set by what it runs, not by launch: its sorted base names
  /// ("name#instance" is one launch of "name").
  struct NameSet {
    std::string key;                ///< the sorted names, joined
    std::vector<std::size_t> order; ///< kernel indices in sorted order
  };
  static NameSet nameSet(const std::vector<std::string> &Names);
  /// \p From (kernel order of \p Set) in the set's sorted order, and back.
  static std::vector<State> sorted(const std::vector<State> &From,
                                   const NameSet &Set);
  static std::vector<State> unsorted(const std::vector<State> &From,
                                     const NameSet &Set);
  /// A plan that puts every kernel back on its target, if one moved.
  std::optional<policy::Plan> backToTargets(const EpochReport &R,
                                            const char *Why);

  const policy::KernelProfile *profileOf(const std::string &Name) const;
  Class classify(const EpochSample &S, int NumSms, std::string &Why) const;
  /// One step of the mode's search from the epoch's measurements; fills
  /// the next SM count of every searched kernel. True if it found a kernel
  /// classified memory to be compute (power mode): the mode is then chosen
  /// again.
  bool searchStep(const EpochReport &R, std::vector<std::string> &Notes);
  /// Each kernel's private rate (alone on the whole GPU, blocks per us,
  /// calibrated), 0 for a kernel without a profile curve.
  std::vector<double> privateRates(const EpochReport &R) const;
  policy::Plan planFor(const EpochReport &R, const std::vector<int> &Sms,
                       std::vector<std::string> Notes);

  policy::ProfileSet Profiles;
  CdSearchOnlineOptions Opts;
  std::vector<unsigned long long> Ids; // the kernel set being searched
  NameSet Set;                         // ... by kernel name
  std::vector<State> Kernels;          // report order
  /// What each converged search found, by NameSet::key, in sorted order:
  /// a later run of the same kernels starts from it, converged.
  std::map<std::string, std::pair<std::string, std::vector<State>>> Learned;
  std::map<unsigned long long, Class> Classes;
  Phase At = Phase::Classify;
  std::string Mode = "classify";
  int NumSms = 0;
  /// SMs of one of the paper's steps: 1 SM of its 24-SM GPU, scaled.
  int Unit = 1;
  /// Once converged the partition holds until the kernel set changes (the
  /// paper searches again only on an arrival of another kernel): no knob
  /// changes at all.
  std::optional<unsigned long long> Converged;
  unsigned long long Steps = 0;
  /// Profiles found too slow by steady epochs (calibrateProfile).
  ProfileCalibration Kappa;
};

} // namespace smpart::online
