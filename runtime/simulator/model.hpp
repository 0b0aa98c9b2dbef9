// The co-run contention model (README "Model"): how fast each kernel runs,
// in logical blocks per microsecond, given the knobs the device follows.
// Alone it reproduces the kernel's profile curves exactly; beside other
// kernels it adds three terms: SM issue slots shared by kernels on one SM,
// L1 pollution between kernels on one SM (relieved by bypassing CTAs), and
// DRAM bandwidth split among all kernels (max-min fair).
#pragma once

#include "smpart/detail/plan.hpp"
#include "smpart/policy/profile.hpp"

#include <vector>

namespace smpart::sim {

/// What the model knows of one kernel, derived once from its profile.
struct KernelTraits {
  const policy::KernelProfile *profile = nullptr;
  int num_sms = 0;
  unsigned occupancy = 1;
  double total = 0;
  /// Fraction of its time the kernel waits on DRAM alone (metrics.bw_util).
  double mem = 0;
  /// DRAM GB/s per block/us (its demand alone on the whole GPU is
  /// mem x gpu.mem_bw_gbs).
  double gbs_per_rate = 0;
  /// L1: how much it loses to others' lines (intensity x reuse) and how
  /// much it pollutes (intensity x misses).
  double l1_sensitivity = 0, l1_pollution = 0;
  /// Issue-slot share of one SM with c CTAs: rate at c over the best rate
  /// (index c, 0..occupancy).
  std::vector<double> issue;

  /// Blocks per microsecond alone on \p Sms SMs with \p Ctas CTAs per SM.
  double isolatedRate(double Sms, unsigned Ctas) const;
  /// Microseconds alone on the whole GPU at its occupancy.
  double aloneUs() const;
};

/// Throws policy::InputError when the profile has no by_sms curve or no
/// total_blocks.
KernelTraits traitsOf(const policy::ProfileSet &Set, std::size_t Index);

/// One kernel as the device runs it now.
struct Placement {
  const KernelTraits *traits = nullptr;
  SmMask mask;
  unsigned ctas = 0, bypass = 0;
};

/// The three contention factors of one kernel (1 = no slowdown).
struct Slowdown {
  double issue = 1, l1 = 1, dram = 1;
};

class ContentionModel {
public:
  explicit ContentionModel(const policy::GpuSpec &Gpu);
  /// Rates (blocks/us) of every placement, and their factors when
  /// \p Factors is given.
  void rates(const std::vector<Placement> &Ks, std::vector<double> &Out,
             std::vector<Slowdown> *Factors = nullptr) const;

  /// A bypassing CTA misses what it would have hit: its time grows by this
  /// times its kernel's L1 sensitivity.
  static constexpr double BypassCost = 0.5;
  /// Weight of co-runners' pollution on a non-bypassing CTA.
  static constexpr double PollutionWeight = 1.0;

private:
  double MemBwGbs;
};

} // namespace smpart::sim
