#include "objective.hpp"

#include "smpart/policy/policy.hpp"

#include <algorithm>

namespace smpart::sim {

Objective objectiveOf(std::string_view Name) {
  if (Name == "hsm-fair" || Name == "hsm-fair-online")
    return Objective::Fairness;
  if (Name == "hsm-qos" || Name == "hsm-qos-online")
    return Objective::Qos;
  return Objective::Stp;
}

const char *objectiveName(Objective G) {
  switch (G) {
  case Objective::Fairness:
    return "fairness";
  case Objective::Qos:
    return "QoS";
  case Objective::Stp:
    break;
  }
  return "STP";
}

std::string ObjectiveValue::describe() const {
  if (goal != Objective::Qos)
    return policy::formatNote("%.3f", value);
  if (met())
    return policy::formatNote("%.3f (met)", value);
  return policy::formatNote("%.3f (%.2f of target)", value, qos_ratio);
}

ObjectiveValue evaluate(const Mix &M, const RunResult &R, Objective G) {
  ObjectiveValue V;
  V.goal = G;
  if (G == Objective::Stp) {
    V.value = R.metrics.stp;
    return V;
  }
  if (G == Objective::Fairness) {
    V.value = R.metrics.fairness;
    return V;
  }
  double Ratio = 1e300;
  bool High = false;
  for (const KernelResult &K : R.kernels) {
    const policy::KernelProfile *P = nullptr;
    for (const policy::KernelProfile &X : M.truth.kernels)
      if (X.name == K.name)
        P = &X;
    if (P && P->priority == policy::Priority::High) {
      High = true;
      Ratio = std::min(Ratio, K.np / P->np_target.value_or(DefaultQosTarget));
    } else {
      V.value += K.np;
    }
  }
  V.qos_ratio = High ? Ratio : 1;
  return V;
}

bool better(const ObjectiveValue &A, const ObjectiveValue &B) {
  if (A.goal == Objective::Qos && (A.met() != B.met() || !A.met()))
    return A.met() != B.met() ? A.met() : A.qos_ratio > B.qos_ratio;
  return A.value > B.value;
}

bool level(const ObjectiveValue &A, const ObjectiveValue &B, double Margin) {
  auto Close = [&](double X, double Y) {
    return X <= Y * (1 + Margin) && Y <= X * (1 + Margin);
  };
  if (A.goal == Objective::Qos && (A.met() != B.met() || !A.met()))
    return A.met() == B.met() && Close(A.qos_ratio, B.qos_ratio);
  return Close(A.value, B.value);
}

bool within(const ObjectiveValue &A, const ObjectiveValue &Best,
            double Tolerance) {
  if (A.goal == Objective::Qos) {
    if (!Best.met())
      return A.qos_ratio >= (1 - Tolerance) * Best.qos_ratio;
    if (!A.met())
      return false;
  }
  return A.value >= (1 - Tolerance) * Best.value;
}

} // namespace smpart::sim
