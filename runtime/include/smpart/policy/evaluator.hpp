// Offline prediction of a plan's outcome from isolated profile curves, so
// policies can be compared without a GPU. See runtime/policies/README.md
// ("Evaluate model") for the model and its limits.
#pragma once

#include "smpart/policy/plan.hpp"
#include "smpart/policy/profile.hpp"

#include <string>
#include <vector>

namespace smpart::policy {

struct KernelEvaluation {
  std::string name;
  double alone_ms = 0;     // all SMs, default CTAs per SM
  double predicted_ms = 0; // under the plan
  double np = 0;           // alone_ms / predicted_ms
};

struct Evaluation {
  std::vector<KernelEvaluation> kernels;
  double stp = 0;      // sum of NP
  double antt = 0;     // mean of 1/NP
  double fairness = 0; // min NP / max NP
  std::vector<std::string> notes;
};

/// Throws InputError (naming \p PlanSource or the profile file) when the
/// plan does not match the profiles or a curve needed is missing.
Evaluation evaluatePlan(const Plan &P, const ProfileSet &Set,
                        const std::string &PlanSource);

nlohmann::ordered_json evaluationToJson(const Evaluation &E);

} // namespace smpart::policy
