#pragma once
#include "smpart/policy/policy.hpp"

#include <utility>

namespace smpart::policy {

/// Power-aware SM allocation (power-aware-sm-allocation.txt Sec. 2.2-2.3,
/// Alg. 1) with pairing for queues of more than two kernels.
class PowerAwarePolicy final : public Policy {
public:
  std::string_view name() const override { return "power-aware"; }
  std::string_view summary() const override {
    return "power-aware: each kernel its best-IPC/W SM count, shrink the "
           "less efficient in steps of 5, gate the surplus; pairs queues";
  }
  Plan decide(const ProfileSet &Set, const PolicyOptions &O) const override;
};

/// Index into by_sms of the best IPC/W point (ties: fewer SMs).
std::size_t powerOptIndex(const ProfileSet &Set, std::size_t Kernel);

/// Alg. 1 PARTITIONING SMS for two kernels with opt SM counts and power
/// efficiencies at opt; returns {kappa1, kappa2}.
std::pair<int, int> powerPartition(int Opt1, double PowEf1, int Opt2,
                                   double PowEf2, int TotalSms);

} // namespace smpart::policy
