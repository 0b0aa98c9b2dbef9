// Runs a mix under a policy: the real smpart::Controller drives SimKernels
// through KernelControl while the contention model moves them, on a
// simulated clock (trace timestamps included). Checks the controller's
// invariants at every step.
#pragma once

#include "mix.hpp"

#include "smpart/controller_epoch.hpp"
#include "smpart/policy/policy.hpp"

#include <memory>
#include <string>
#include <vector>

namespace smpart {
namespace trace {
class TraceWriter;
}
namespace sim {

struct RunOptions {
  trace::TraceWriter *trace = nullptr; ///< its clock becomes the simulated one
  bool noise = true;
  double epoch_us = DefaultEpochUs;
  std::shared_ptr<OnlinePolicy> online;
  /// Check that kernels that may take blocks never share an SM (spatial
  /// policies).
  bool spatial = false;
  /// The papers' methodology (CD-search Sec. 6; power-aware SM
  /// allocation, its execution scenario): a one-shot launch that finishes while
  /// a first run of the mix goes on is launched again (a departure, then an
  /// arrival of the same kernel, as a program's next launch is), so every first
  /// run has its co-runners from its arrival to its end; only first runs are
  /// reported, and the run ends with the last of them. Off: each launch runs
  /// once, and a kernel that finishes early leaves its SMs to the others (the
  /// tail of the mix runs alone). Periodic streams are never re-launched:
  /// they are a schedule of their own.
  bool relaunch = false;
};

struct KernelResult {
  std::string name;
  unsigned long long id = 0;
  double arrival_us = 0, finish_us = 0;
  double alone_us = 0; ///< alone on the whole GPU, no noise
  double np = 0;       ///< alone_us / (finish_us - arrival_us)
};

struct Metrics {
  double stp = 0;      ///< sum of NP
  double antt = 0;     ///< mean of 1 / NP
  double fairness = 0; ///< min NP / max NP
};
Metrics metricsOf(const std::vector<KernelResult> &Ks);

struct RunResult {
  std::vector<KernelResult> kernels; ///< launch order
  Metrics metrics;
  double end_us = 0;
  unsigned long long decisions = 0, epochs = 0, deferred_grants = 0;
  unsigned long long relaunches = 0; ///< RunOptions::relaunch
  /// Steps where two kernels that could take blocks shared an SM
  /// (checked when RunOptions::spatial).
  unsigned long long shared_sm_steps = 0;
  /// Blocks run twice or never, events repeated or missing.
  unsigned long long exactly_once_violations = 0;
  bool completed = false; ///< every kernel finished before sim.max_us
};

/// Spatial policies give disjoint SM ranges (DESIGN.md "Decision").
bool isSpatialPolicy(std::string_view Name);

RunResult runMix(const Mix &M, const policy::Policy &P,
                 const RunOptions &O = {});

/// Runs the policy named \p Name: an offline one, or an online one
/// (online_policies.hpp: a fresh instance on the controller's profiles,
/// beside its offline base). Throws std::invalid_argument when unknown.
RunResult runPolicy(const Mix &M, std::string_view Name, RunOptions O = {});

/// Offline and online policy names, the order of the table.
std::vector<std::string> policyNames();

} // namespace sim
} // namespace smpart
