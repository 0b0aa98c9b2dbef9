// Epochs of measurement: what smpart::Controller measures of each running
// kernel once per epoch (from the progress the runtime mirrors to host
// memory), and the hook an online policy implements to act on it.
//
// The controller's epoch(NowUs) closes an epoch; whoever owns the clock
// calls it every epochUs() (libsmpart: a timer thread, never the launch
// path; the co-run simulator: its simulated clock).
#pragma once

#include "smpart/policy/plan.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace smpart {

/// SMPART_EPOCH_US's default (controller README, "Epochs"): long enough
/// that a knob step is acknowledged (<= ~80 us) and measured over many
/// logical blocks, short enough for ten steps of an online search within a
/// typical 10-100 ms co-run.
inline constexpr double DefaultEpochUs = 1000.0;
/// Shorter epochs cannot see a knob step before the next one.
inline constexpr double MinEpochUs = 100.0;

/// Where an isolated rate came from.
enum class IsolatedSource {
  None,    ///< unknown: no profile curve, never measured alone here
  Profile, ///< the profile's scaling curves at this allocation
  Learned, ///< measured in steady epochs when the kernel ran alone
};
const char *isolatedSourceName(IsolatedSource S);

/// One kernel over one epoch.
struct EpochSample {
  unsigned long long id = 0;
  std::string name;
  /// The allocation at the end of the epoch.
  unsigned sms = 0, ctas_per_sm = 0, bypass_ctas_per_sm = 0;
  bool preempted = false;
  /// No knob of this kernel was written during the epoch and it had
  /// acknowledged every earlier write at its start: the rate belongs to
  /// this allocation (the first epoch of a kernel is never steady).
  bool steady = false;
  /// No other kernel was tracked during the epoch and no opaque partition
  /// held SMs: nothing contended with it.
  bool alone = false;
  /// Preempted only while SMs other kernels are leaving await their
  /// acknowledgement: the plan gives it SMs (its wait is microseconds).
  bool awaiting_sms = false;
  /// Logical blocks executed in the epoch (SiM Eq. 1's TB_e, difference).
  unsigned long long blocks = 0;
  unsigned long long done = 0, total = 0;
  /// Blocks per microsecond over the epoch.
  double rate = 0;
  /// Blocks per microsecond alone on the GPU at the same SMs and CTAs per
  /// SM; 0 when unknown.
  double isolated_rate = 0;
  IsolatedSource isolated_source = IsolatedSource::None;
  /// Blocks per microsecond the profile's curves give alone at the same
  /// SMs and CTAs per SM, whatever the controller learned; 0 where the
  /// profile cannot say (no SM curve; CTAs per SM other than the
  /// occupancy its SM curve was timed at, and no CTA curve).
  double profile_rate = 0;
  /// Normalised progress rate / isolated_rate (HSM's NP); 0 when unknown.
  double np = 0;
  /// TLP modulation's sampling period (tlp-modulation-cache-bypass Sec.
  /// 4.3: the lifetime of the kernel's resident thread blocks): resident
  /// CTAs / rate, the time one generation of the logical blocks its
  /// persistent CTAs hold takes (Little's law); 0 without progress.
  double sampling_period_us = 0;
  /// Epochs this kernel has been measured in, this one included.
  unsigned long long epochs = 0;
};

/// One epoch: the kernels still planned (arrived, last block not taken),
/// in arrival order.
struct EpochReport {
  unsigned long long index = 0;
  double start_us = 0, end_us = 0;
  std::vector<EpochSample> kernels;
};

/// A kernel the controller still tracks but no longer plans: its last
/// block was taken, and its CTAs finish their blocks on these SMs.
struct FinishingKernel {
  std::string name;
  std::vector<int> sms; ///< SM ordinals, as in plans
};

/// An online policy: called by the controller at the end of every epoch.
class OnlinePolicy {
public:
  virtual ~OnlinePolicy() = default;
  virtual std::string_view name() const = 0;
  /// \p Current is the plan applied last (its kernels need not match the
  /// report's). Return nothing to keep every knob, or a plan with exactly
  /// one decision per report kernel, in the report's order, with SM
  /// ordinals over the whole GPU: the controller applies it like any
  /// re-plan (shrink before grow; SMs move only once acknowledged) and
  /// traces it with trigger "epoch" and the plan's notes. Called with the
  /// controller's lock held: must not call back into the controller.
  virtual std::optional<policy::Plan> onEpoch(const EpochReport &Report,
                                              const policy::Plan &Current) = 0;
  /// Called when the offline policy re-planned an event (\p Trigger:
  /// "arrival", "last_block_taken", "departure", "request") with its plan:
  /// an online policy reacts there, not an epoch later (a short kernel may
  /// be over by then). \p Finishing: the kernels that took their last
  /// block and still run (the offline plan may give their SMs away).
  /// Return nothing to apply \p Offline, or a plan naming the same kernels
  /// in the same order with SM ordinals over the whole GPU (else the
  /// offline plan stands, with one warning). Same lock rule as onEpoch.
  virtual std::optional<policy::Plan>
  onReplan(std::string_view Trigger, const policy::Plan &Offline,
           const std::vector<FinishingKernel> &Finishing) {
    (void)Trigger;
    (void)Offline;
    (void)Finishing;
    return std::nullopt;
  }
};

} // namespace smpart
