// Shared arithmetic over profile curves and per-SM resources: interpolation
// of isolated time between measured SM counts / CTA counts, occupancy, even
// splits. Kept in one place so every policy and the evaluator agree.
#pragma once

#include "smpart/policy/profile.hpp"

#include <vector>

namespace smpart::policy {

/// Isolated time on \p Sms SMs from `by_sms` (must be non-empty).
/// Throughput (1/time) is interpolated linearly between measured points,
/// extrapolated linearly through the origin below the first point, and held
/// at the last point's value above it (saturation; conservative).
double timeAtSms(const KernelProfile &K, double Sms);
/// 1 / timeAtSms.
double perfAtSms(const KernelProfile &K, double Sms);

/// Isolated time with \p Ctas CTAs per SM from `by_ctas_per_sm` (non-empty);
/// same interpolation rules as timeAtSms.
double timeAtCtas(const KernelProfile &K, double Ctas);

/// Per-SM resource demand of some CTAs of one kernel.
struct SmLoad {
  long long threads = 0, regs = 0, smem = 0, blocks = 0;
  void add(const BlockShape &B, long long Ctas);
};

/// True when \p Load fits every per-SM limit the GPU spec gives.
bool fitsSm(const GpuSpec &Gpu, const SmLoad &Load);

/// Largest CTA count of \p B that fits next to \p Used on one SM (0 if none).
/// Limits absent from the spec do not constrain; with no limit known at all
/// the result is \p Unbounded.
long long ctasThatFit(const GpuSpec &Gpu, const BlockShape &B,
                      const SmLoad &Used = {}, long long Unbounded = 0);

/// True when all four per-SM limits are given.
bool hasAllSmLimits(const GpuSpec &Gpu);

/// Splits \p Total into \p Parts integers differing by at most one, the
/// larger ones first ("remainder to the first kernels").
std::vector<int> evenSplit(int Total, int Parts);

/// Occupancy of kernel \p K when alone: CTAs per SM that fit, or 0 when the
/// block shape or every per-SM limit is unknown (launch default).
int defaultCtasPerSm(const GpuSpec &Gpu, const KernelProfile &K);

} // namespace smpart::policy
