// smpart::Controller: applies a policy's plan to running kernels.
//
// It holds a policy (any of smpart::policy::allPolicies()), a profile set and
// the GPU's real SM ids, and re-plans on kernel arrival, on the early
// notification (last block taken), on departure and on request. Each
// re-plan reads every kernel's progress (executed logical blocks, SiM Eq. 1:
// the policy sees executed_blocks/total_blocks), asks the policy for a plan
// and turns it into knob writes:
//  - SM ranges [sm_first, sm_first + sms) are ordinal positions, mapped onto
//    the real SM ids (ascending, not dense); spatial policies' sets are
//    disjoint at every moment, on the host and on the device: every kernel
//    first shrinks to (old ∩ new), and an SM a kernel gave up goes to
//    another only once the first one acknowledged the shrink
//    (KernelControl::knobsApplied: none of its CTAs can take a block there
//    any more). Until then the receiving kernel runs on the SMs it already
//    may use (preempted if none), and the grant completes on
//    onKnobsApplied();
//  - ctas_per_sm (0 = the kernel's occupancy) and bypass_ctas_per_sm;
//  - sms == 0 or a later power-aware round: preempt; back in the plan: resume;
//  - more SMs or more CTAs per SM than before: grow().
// Kernels whose last block was taken keep their knobs and leave the plan
// (no change can speed them up; SiM Sec. 3.2). Kernels without a profile get
// an even share of the SMs (their own range) and one warning per name; the
// profiled ones are planned by the policy on the remaining SMs. A policy that
// refuses the inputs (a field missing, too many kernels) makes the decision
// fall back to `even`, with the policy's message as a one-time warning.
//
// Epochs of measurement (smpart/controller_epoch.hpp): epoch(NowUs) closes
// one; it reads every kernel's progress, derives per-kernel rates,
// normalised progress and TLP sampling periods, traces them and hands them
// to the online policy, if any, whose plan is applied like a re-plan.
//
// Opaque partitions (addOpaque; runtime/controller/README.md "Opaque
// partitions"): tenants of work smpart cannot rewrite (library calls,
// refused kernels), confined by the runtime to green contexts. They are
// planned with the rewritten kernels in one plan, change size only at
// their launch boundaries (holdOpaque), and the real SM ids they hold are
// never in a rewritten kernel's mask: rewritten kernels are planned over
// the GPU's SMs minus every held id, and an SM goes to a partition only
// once the rewritten kernels leaving it acknowledged.
//
// Thread-safe: every entry point takes one mutex; knob calls are made with it
// held (KernelControl implementations must not call back into the controller).
#pragma once

#include "smpart/controller_epoch.hpp"
#include "smpart/kernel_control.hpp"
#include "smpart/policy/plan.hpp"
#include "smpart/policy/policy.hpp"
#include "smpart/policy/profile.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace smpart {

namespace trace {
class TraceWriter;
}

struct ControllerOptions {
  policy::PolicyOptions policy_options;
  /// Where decisions, knob writes and kernel events go (may be null).
  trace::TraceWriter *trace = nullptr;
  /// One-line warnings; default: "smpart: warning: ..." on stderr.
  std::function<void(const std::string &)> warn;
  /// Epoch length (SMPART_EPOCH_US): how often the clock's owner should
  /// call epoch(). The controller only reports it.
  double epoch_us = DefaultEpochUs;
  /// Acts on each epoch's measurements (may be null: measure only).
  std::shared_ptr<OnlinePolicy> online;
  /// The trace keeps every event in memory: without an online policy, an
  /// epoch is traced only when this much time passed since the last one
  /// traced (0: every epoch). With one, every epoch is traced: its
  /// decisions need them.
  double trace_epoch_us = 10000;
};

/// What the controller last applied to one kernel.
struct KernelAllocation {
  unsigned long long id = 0;
  std::string name;
  SmMask mask;
  /// SMs the plan gives the kernel that wait for another kernel's
  /// acknowledgement (not in `mask` yet; a kernel with only waiting SMs is
  /// preempted meanwhile).
  SmMask waiting;
  unsigned ctas_per_sm = 0;
  unsigned bypass_ctas_per_sm = 0;
  bool preempted = false;
  bool profiled = false;
  bool last_block_taken = false;
};

/// A tenant of opaque work: kernels smpart cannot rewrite, launched on a
/// green context of the partition's size.
struct OpaqueTenant {
  std::string name;
  /// Smallest partition the device (minSmPartitionSize) or the work allows.
  unsigned min_sms = 1;
  /// Partition sizes are multiples of this (smCoscheduledAlignment).
  unsigned granularity = 1;
  /// Share of the SMs relative to a rewritten kernel's 1 when the tenant
  /// has no profile.
  double weight = 1.0;
};

/// What the controller knows of one opaque partition.
struct OpaqueAllocation {
  OpaqueTenant tenant;
  /// SMs the plan gives its next launch (0: nothing fits).
  unsigned target = 0;
  /// Real SM ids it holds now (holdOpaque).
  SmMask held;
  /// Planned from a profile under its name (else its weighted share).
  bool profiled = false;
  /// What holdOpaque last answered: every rewritten kernel acknowledged
  /// leaving `held`.
  bool clear = true;
};

class Controller {
public:
  /// \p SmIds: the GPU's real SM ids (any order; sorted here). Must not be
  /// empty. \p Profiles may hold no kernels (every kernel then gets an even
  /// share); its gpu spec is used for occupancy, num_sms is taken from SmIds.
  Controller(const policy::Policy &Policy, policy::ProfileSet Profiles,
             std::vector<unsigned> SmIds, ControllerOptions Options = {});

  void onArrival(std::shared_ptr<KernelControl> Kernel);
  /// \p SuccessorQueued: a later launch on the kernel's stream is already
  /// enqueued (KernelHandle::successorQueued()). Its SMs are then left for
  /// that launch, which arrives when the stream reaches it, instead of
  /// going to the other kernels: a stream of short launches would
  /// otherwise take SMs back from a long kernel at every launch and wait
  /// for its acknowledgement each time (README "Stream successors"). Not
  /// while a kernel the plan preempted or an opaque partition below its
  /// target may be waiting for a re-plan: the next launch might wait for
  /// them.
  void onLastBlockTaken(unsigned long long Id, bool SuccessorQueued = false);
  void onDeparture(unsigned long long Id, bool SuccessorQueued = false);
  /// A kernel acknowledged its knobs: grants that waited for SMs that are
  /// now acknowledged (by this kernel or any other) go out.
  void onKnobsApplied(unsigned long long Id);
  /// Re-plans now (e.g. after new profiles or on a timer).
  void replan();

  /// Declares (or updates) a tenant of opaque work; re-plans.
  void addOpaque(const OpaqueTenant &T);
  /// Forgets the tenant; the SMs it held go back to rewritten kernels at
  /// once (its work must have drained); re-plans.
  void removeOpaque(const std::string &Name);
  /// SM count the plan gives it now (a multiple of granularity, >= min_sms;
  /// 0 = not planned / nothing fits).
  unsigned opaqueTarget(const std::string &Name) const;
  /// Called by the runtime at a launch boundary: the partition now uses
  /// exactly these real SM ids (chosen by the driver, probed; not
  /// necessarily contiguous; include a previous context's ids while work
  /// launched on it may still run). Rewritten kernels are moved off them
  /// with the ack rule (shrink; an SM goes to the opaque partition only
  /// once acknowledged) and never given them while held; SMs no longer
  /// held go back to rewritten kernels. Returns true once every rewritten
  /// kernel acknowledged leaving them (false for an undeclared tenant);
  /// idempotent (the caller polls with a deadline).
  bool holdOpaque(const std::string &Name,
                  const std::vector<unsigned> &RealSmIds);
  /// Declared opaque partitions, in declaration order.
  std::vector<OpaqueAllocation> opaqueAllocations() const;
  /// Closes the epoch that ends at \p NowUs (any monotonic clock, in
  /// microseconds): measures every tracked kernel, traces the samples and
  /// runs the online policy. The first call only opens an epoch.
  void epoch(double NowUs);
  double epochUs() const { return Opts.epoch_us; }
  /// The last epoch closed (index 0 and no kernels before the first).
  EpochReport lastEpoch() const;

  const policy::Policy &policy() const { return *Pol; }
  /// The last plan applied (empty kernels before the first decision).
  policy::Plan lastPlan() const;
  /// Kernels the controller tracks (arrived, not departed), arrival order.
  std::vector<KernelAllocation> allocations() const;
  unsigned long long decisionCount() const;
  /// Grants that had to wait for another kernel's acknowledgement, and
  /// how many of them are still waiting.
  unsigned long long deferredGrants() const;
  std::size_t pendingGrants() const;

private:
  struct Tracked {
    std::shared_ptr<KernelControl> control;
    KernelAllocation alloc;
    ControlProgress progress;
    const policy::KernelProfile *profile = nullptr;
    /// SMs taken away from the kernel that it has not acknowledged yet:
    /// its CTAs may still take blocks there.
    SmMask releasing;
    /// SMs a fresh kernel's first knobs took from it: it may run there
    /// until it acknowledges if it started before it was announced. Only
    /// opaque partitions wait for them (opaqueClear).
    SmMask first_knobs;
    /// The plan's allocation, while part of it waits for other kernels'
    /// acknowledgements.
    std::optional<KernelAllocation> pending;
    /// Arrived, not planned yet: announced before its first CTA, so it
    /// holds no SM although its knobs still name every one.
    bool fresh = true;
    /// Epoch bookkeeping: blocks done when the epoch opened (none before
    /// the kernel's first epoch), knobs written since, epochs measured.
    std::optional<unsigned long long> epoch_done;
    bool knobs_written = true;
    bool applied_at_start = false;
    unsigned long long epochs = 0;
    /// Isolated rates this kernel's name was measured at (learned), keyed
    /// by sms << 16 | ctas_per_sm; a node of Controller::Learned.
    std::map<unsigned, double> *learned = nullptr;
  };

  /// A declared opaque tenant (opaque.cpp).
  struct Opaque {
    OpaqueTenant tenant;
    const policy::KernelProfile *profile = nullptr;
    unsigned target = 0;
    SmMask held;
    /// The last clear state traced.
    bool traced_clear = true;
  };

  /// Re-plans. \p KeepOnlinePlan: nothing the plan covers changed (a
  /// kernel that had left it departed); if the current allocation is an
  /// online epoch step's for exactly these kernels and the policy amends
  /// nothing, it stands (only waiting grants go out) instead of being
  /// replaced by the offline policy's plan, which would undo the online
  /// search with nothing to show for it.
  void decideAndApply(const char *Trigger, bool KeepOnlinePlan = false);
  /// Reads \p T's progress. A kernel whose blocks are all taken (claimed
  /// ahead of the device's notification, or finished) has its last block
  /// taken from now on, traced as if it had been notified.
  void readProgress(Tracked &T);
  /// Sets every opaque tenant's target for the current kernels (opaque.cpp).
  void planOpaque(const std::vector<Tracked *> &Active,
                  std::vector<std::string> &Notes);
  /// Plan entries of the opaque partitions (kind "opaque").
  void appendOpaque(policy::Plan &P) const;
  /// Recomputes FreeIds and HeldByOpaque from the partitions' held ids.
  void updateFree();
  /// No rewritten kernel may still run on \p O's held SMs.
  bool opaqueClear(const Opaque &O);
  /// Grants that waited for acknowledgements go out.
  void grantPending();
  /// The SMs of a kernel whose stream's next launch is queued may wait
  /// for that launch: no kernel the plan preempted and no opaque partition
  /// below its target depends on a re-plan now.
  bool successorMayWait() const;
  Opaque *findOpaque(const std::string &Name);
  /// Traces \p P (one decision per Active kernel, same order) and applies
  /// it: shrink every kernel, then grow.
  void applyPlan(policy::Plan P, const std::vector<Tracked *> &Active,
                 const char *Trigger);
  /// epoch() helpers (epochs.cpp).
  void measure(Tracked &T, EpochSample &S, double Us, bool Alone);
  double isolatedRate(const Tracked &T, unsigned Sms, unsigned Ctas,
                      IsolatedSource &Source) const;
  /// The most CTAs per SM \p T can hold: its occupancy, capped by the
  /// knob's range (0 when the occupancy is unknown).
  static unsigned occupancyOf(const Tracked &T) {
    return std::min(T.control->occupancy(), kMaxCtasPerSm);
  }
  /// The profile curves' isolated rate (EpochSample::profile_rate).
  double profileRate(const Tracked &T, unsigned Sms, unsigned Ctas) const;
  void traceEpoch();
  void runOnline();
  policy::Plan planFor(std::vector<Tracked *> &Active, const char *Trigger,
                       std::vector<std::string> &Notes);
  /// A profiled kernel as the policy sees it: live progress (SiM Eq. 1),
  /// a second launch of one kernel renamed `name#id` (\p Seen counts).
  static policy::KernelProfile policyInput(const Tracked &T,
                                           std::map<std::string, int> &Seen);
  SmMask maskFor(int First, int Count) const;
  void applyShrink(Tracked &T, const KernelAllocation &Target);
  void applyGrow(Tracked &T, const KernelAllocation &Target);
  /// Writes `Next` as one knob set if it differs from the allocation.
  void writeKnobs(Tracked &T, const KnobSet &Next);
  /// SMs that kernels other than \p T gave up without acknowledging it.
  SmMask releasedByOthers(const Tracked &T) const;
  /// Forgets the releasing SMs of kernels that acknowledged (or took their
  /// last block); true if any were.
  bool forgetAcknowledged();
  void warnOnce(const std::string &Key, const std::string &Message);
  void check(Tracked &T, const Status &S, const char *What);

  const policy::Policy *Pol;
  const policy::Policy *Fallback;
  policy::ProfileSet Profiles;
  std::vector<unsigned> SmIds;
  ControllerOptions Opts;
  /// Opaque partitions (declaration order), the SMs they hold and the SM
  /// ids rewritten kernels are planned over (SmIds minus HeldByOpaque).
  std::vector<Opaque> Opaques;
  SmMask HeldByOpaque;
  std::vector<unsigned> FreeIds;

  mutable std::mutex Mu;
  std::vector<Tracked> Kernels; // arrival order
  policy::Plan Last;
  unsigned long long Decisions = 0;
  unsigned long long Deferred = 0;
  /// Keys of the warnings given (warnOnce); at most MaxWarnings, then one
  /// last warning says the rest are not given: a long-running service
  /// whose tenants name kernels anew each time must not grow without
  /// bound.
  std::set<std::string> Warned;
  static constexpr std::size_t MaxWarnings = 1024;
  /// A last block or departure left its SMs to its stream's queued next
  /// launch instead of re-planning, at the close of this epoch index
  /// (Report.index): no re-plan since. Other work between the two
  /// launches (an event wait, a copy) can hold that launch back; a whole
  /// epoch later the re-plan happens anyway (epoch()).
  std::optional<unsigned long long> SuccessorAwaitedSince;
  /// Ids of the kernels the current allocation was planned for, when an
  /// online policy's epoch step planned it; empty after any re-plan (an
  /// online policy's amendment of one, such as a hold of a finishing
  /// kernel's SMs, expects the next re-plan to undo it).
  std::vector<unsigned long long> OnlinePlanned;
  // Epochs.
  double EpochStart = -1;
  double LastTracedEpoch = -1e300;
  /// Most kernels tracked at once since the epoch opened, and whether an
  /// opaque partition held SMs meanwhile ("alone").
  std::size_t EpochPeak = 0;
  bool EpochOpaque = false;
  EpochReport Report; // reused: no allocation per epoch once warm
  std::vector<Tracked *> ReportKernels;
  /// Isolated rates learned per kernel name. Names no tracked kernel
  /// uses are forgotten once there are more than MaxLearnedNames (the same
  /// bound as Warned's reason).
  std::map<std::string, std::map<unsigned, double>> Learned;
  static constexpr std::size_t MaxLearnedNames = 1024;
};

namespace controller {

/// The outcome of reading SMPART_POLICY / SMPART_PROFILES / SMPART_TRACE /
/// SMPART_PROFILE.
struct EnvConfig {
  std::string error; ///< one line; empty when the settings are valid
  std::unique_ptr<Controller> controller; ///< null unless SMPART_POLICY is set
  bool trace = false;      ///< SMPART_TRACE opened (trace::global())
  std::string profile_out; ///< SMPART_PROFILE, when set
  bool active() const {
    return controller != nullptr || trace || !profile_out.empty();
  }
};

/// Whether SMPART_POLICY may say \p Name: an offline policy, or an online
/// one (`smpart-plan --list-policies` lists both).
bool isPolicyName(const std::string &Name);

/// CUDA-free part of initFromEnvironment(): validates the settings read
/// through \p GetEnv for a GPU with \p SmIds, loads the profiles, opens the
/// trace (installing it as trace::global()) and builds the controller. On
/// any invalid setting nothing is activated and `error` says why, naming the
/// variable. Never throws.
EnvConfig configureFromEnvironment(
    const std::function<const char *(const char *)> &GetEnv,
    const std::vector<unsigned> &SmIds);

/// Reads the environment, asks the runtime for the device's SM ids and
/// installs the controller as the runtime's launch observer. Returns "" or
/// the one-line error (the application then runs without the controller).
/// Never aborts. Defined in runtime_glue.cpp (needs the CUDA runtime).
std::string initFromEnvironment();

} // namespace controller
} // namespace smpart
