#pragma once
#include "smpart/policy/policy.hpp"

namespace smpart::policy {

/// HSM-Fair (hsm-asplos20.txt Sec. 4.3).
class HsmFairPolicy final : public Policy {
public:
  std::string_view name() const override { return "hsm-fair"; }
  std::string_view summary() const override {
    return "HSM-Fair: move SMs from the max-NP to the min-NP kernel until "
           "min/max NP reaches the threshold";
  }
  Plan decide(const ProfileSet &Set, const PolicyOptions &O) const override;
};

/// HSM-QoS (hsm-asplos20.txt Sec. 4.3).
class HsmQosPolicy final : public Policy {
public:
  std::string_view name() const override { return "hsm-qos"; }
  std::string_view summary() const override {
    return "HSM-QoS: SMs for the high-priority kernel's NP target, the rest "
           "to maximise the sum of NPs";
  }
  Plan decide(const ProfileSet &Set, const PolicyOptions &O) const override;
};

} // namespace smpart::policy
