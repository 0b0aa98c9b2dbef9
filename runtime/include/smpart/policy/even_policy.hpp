#pragma once
#include "smpart/policy/policy.hpp"

namespace smpart::policy {

/// Equal contiguous SM ranges, remainder to the first kernels; each kernel
/// runs as many CTAs per SM as fit when alone.
class EvenPolicy final : public Policy {
public:
  std::string_view name() const override { return "even"; }
  std::string_view summary() const override {
    return "equal contiguous SM ranges, max CTAs per SM that fit";
  }
  Plan decide(const ProfileSet &Set, const PolicyOptions &O) const override;
};

/// The even plan, reused by CD-search's compute-only mode.
Plan evenPlan(const ProfileSet &Set, std::string PolicyName);

} // namespace smpart::policy
