// What each policy optimises, measured on a finished co-run (README
// "Objectives"): STP (sum of NP), fairness (min NP / max NP: HSM-Fair) or
// QoS (HSM-QoS: every high-priority launch at or above its NP target, then
// the largest sum of NP of the others). The table judges each policy by
// its own objective against the best static configuration by the same.
#pragma once

#include "corun.hpp"
#include "mix.hpp"

#include <string>
#include <string_view>

namespace smpart::sim {

enum class Objective { Stp, Fairness, Qos };

/// The objective the policy named \p Name optimises: hsm-fair and
/// hsm-fair-online fairness, hsm-qos and hsm-qos-online QoS, the others
/// STP (priority's own objective is latency, latency.hpp).
Objective objectiveOf(std::string_view Name);
const char *objectiveName(Objective G);

/// NP target of a high-priority kernel without np_target (HSM-QoS's
/// default, policy::PolicyOptions::qos_target).
inline constexpr double DefaultQosTarget = 0.8;

/// One run's value of one objective.
struct ObjectiveValue {
  Objective goal = Objective::Stp;
  /// STP, fairness, or (QoS) the STP of the kernels that are not high
  /// priority.
  double value = 0;
  /// QoS: the lowest NP of a high-priority launch over its target (1 or
  /// more: met; 1 without a high-priority kernel).
  double qos_ratio = 1;
  bool met() const { return qos_ratio >= 1; }
  /// A table cell: "1.234", or "0.912 (met)" / "0.912 (0.71 of target)".
  std::string describe() const;
};

ObjectiveValue evaluate(const Mix &M, const RunResult &R, Objective G);

/// Is \p A strictly better than \p B (same objective)? QoS: meeting the
/// target first, then the others' STP; both short: the higher ratio.
bool better(const ObjectiveValue &A, const ObjectiveValue &B);

/// Are \p A and \p B level: neither better by more than \p Margin (0.005:
/// 0.5 %)? QoS: both meet the target (or both miss it) and their others'
/// STP (their ratios) differ by less than the margin. A policy "beats"
/// another only when it is better and not level: a run-to-run difference
/// of a few tenths of a percent is a different decision in one epoch, not
/// a better policy.
bool level(const ObjectiveValue &A, const ObjectiveValue &B, double Margin);

/// Is \p A within \p Tolerance (0.05: 5 %) of \p Best? QoS: \p A meets the
/// target and its others' STP is within the tolerance of \p Best's (where
/// \p Best misses it too, its ratio within the tolerance of \p Best's).
bool within(const ObjectiveValue &A, const ObjectiveValue &Best,
            double Tolerance);

} // namespace smpart::sim
