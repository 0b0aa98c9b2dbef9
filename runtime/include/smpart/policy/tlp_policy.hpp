#pragma once
#include "smpart/policy/policy.hpp"

namespace smpart::policy {

/// Static TLP modulation (tlp-modulation-cache-bypass.txt Sec. 4.1-4.2,
/// Alg. 1): kernels share every SM; CTAs per SM from kernel types.
class TlpPolicy final : public Policy {
public:
  std::string_view name() const override { return "tlp"; }
  std::string_view summary() const override {
    return "static TLP modulation (Alg. 1): Down/Optimal kernels at opt(k), "
           "the other kernel in the remaining per-SM resources";
  }
  Plan decide(const ProfileSet &Set, const PolicyOptions &O) const override;
};

/// Sec. 4.1 from a CTA curve: best time at the largest measured TLP -> Up,
/// at the smallest -> Down, in between -> Optimal. Ties go to fewer CTAs.
TlpType classifyTlp(const std::vector<CtaPoint> &Curve);

} // namespace smpart::policy
