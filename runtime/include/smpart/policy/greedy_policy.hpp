#pragma once
#include "smpart/policy/policy.hpp"

#include <vector>

namespace smpart::policy {

/// SiM (adaptive-multitenancy-sim.txt) Sec. 3.5-3.6, Alg. 1: every kernel on
/// every SM, CTAs per SM chosen greedily to minimise the maximum remaining
/// time (Eq. 1) while per-SM threads, registers, shared memory and block
/// slots fit.
class GreedyPolicy final : public Policy {
public:
  std::string_view name() const override { return "greedy"; }
  std::string_view summary() const override {
    return "SiM Alg. 1: grow the kernel with the largest remaining time "
           "(Eq. 1) while per-SM resources fit; all kernels on all SMs";
  }
  Plan decide(const ProfileSet &Set, const PolicyOptions &O) const override;
};

/// Sec. 3.5: sort by CTAs and keep only configurations whose time strictly
/// decreases.
std::vector<CtaPoint> pruneConfigurations(std::vector<CtaPoint> Points);

/// Eq. 1: T_m^c = T_i^c * (TB_t - TB_e) / TB_t.
double remainingTime(double IsolatedMs, long long TotalBlocks,
                     long long ExecutedBlocks);

} // namespace smpart::policy
