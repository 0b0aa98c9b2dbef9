#include "smpart/policy/curves.hpp"

#include <algorithm>
#include <limits>

namespace smpart::policy {

namespace {
// Interpolates throughput (1/time) over a sorted curve of (x, time) pairs.
template <typename Point, typename XOf>
double interpolateTime(const std::vector<Point> &Curve, double X, XOf XOfP) {
  const Point &First = Curve.front();
  if (X <= XOfP(First)) {
    // Linear through the origin: half the SMs, half the throughput.
    double Perf = (1.0 / First.time_ms) * (X / XOfP(First));
    return Perf > 0 ? 1.0 / Perf : std::numeric_limits<double>::infinity();
  }
  const Point &Last = Curve.back();
  if (X >= XOfP(Last))
    return Last.time_ms; // saturated beyond the last measurement
  auto Hi =
      std::upper_bound(Curve.begin(), Curve.end(), X,
                       [&](double V, const Point &P) { return V < XOfP(P); });
  auto Lo = Hi - 1;
  double X0 = XOfP(*Lo), X1 = XOfP(*Hi);
  double P0 = 1.0 / Lo->time_ms, P1 = 1.0 / Hi->time_ms;
  double Perf = P0 + (P1 - P0) * (X - X0) / (X1 - X0);
  return 1.0 / Perf;
}
} // namespace

double timeAtSms(const KernelProfile &K, double Sms) {
  return interpolateTime(K.by_sms, Sms,
                         [](const SmPoint &P) { return double(P.sms); });
}

double perfAtSms(const KernelProfile &K, double Sms) {
  return 1.0 / timeAtSms(K, Sms);
}

double timeAtCtas(const KernelProfile &K, double Ctas) {
  return interpolateTime(K.by_ctas, Ctas,
                         [](const CtaPoint &P) { return double(P.ctas); });
}

void SmLoad::add(const BlockShape &B, long long Ctas) {
  threads += B.threads * Ctas;
  regs += B.threads * B.regs_per_thread * Ctas;
  smem += B.smem_bytes * Ctas;
  blocks += Ctas;
}

bool fitsSm(const GpuSpec &Gpu, const SmLoad &L) {
  if (Gpu.max_threads_per_sm && L.threads > *Gpu.max_threads_per_sm)
    return false;
  if (Gpu.max_blocks_per_sm && L.blocks > *Gpu.max_blocks_per_sm)
    return false;
  if (Gpu.regs_per_sm && L.regs > *Gpu.regs_per_sm)
    return false;
  if (Gpu.smem_per_sm && L.smem > *Gpu.smem_per_sm)
    return false;
  return true;
}

long long ctasThatFit(const GpuSpec &Gpu, const BlockShape &B,
                      const SmLoad &Used, long long Unbounded) {
  long long Best = std::numeric_limits<long long>::max();
  bool Limited = false;
  auto Limit = [&](const std::optional<long long> &Cap, long long Have,
                   long long Per) {
    if (!Cap)
      return;
    Limited = true;
    long long Left = *Cap - Have;
    if (Left < 0)
      Left = 0;
    if (Per > 0)
      Best = std::min(Best, Left / Per);
  };
  Limit(Gpu.max_threads_per_sm, Used.threads, B.threads);
  Limit(Gpu.max_blocks_per_sm, Used.blocks, 1);
  Limit(Gpu.regs_per_sm, Used.regs, B.threads * B.regs_per_thread);
  Limit(Gpu.smem_per_sm, Used.smem, B.smem_bytes);
  if (!Limited || Best == std::numeric_limits<long long>::max())
    return Unbounded;
  return Best;
}

bool hasAllSmLimits(const GpuSpec &Gpu) {
  return Gpu.max_threads_per_sm && Gpu.max_blocks_per_sm && Gpu.regs_per_sm &&
         Gpu.smem_per_sm;
}

std::vector<int> evenSplit(int Total, int Parts) {
  std::vector<int> Out(static_cast<std::size_t>(Parts),
                       Parts ? Total / Parts : 0);
  for (int I = 0; I < (Parts ? Total % Parts : 0); ++I)
    ++Out[static_cast<std::size_t>(I)];
  return Out;
}

int defaultCtasPerSm(const GpuSpec &Gpu, const KernelProfile &K) {
  if (!K.block)
    return 0;
  long long N = ctasThatFit(Gpu, *K.block, {}, 0);
  return static_cast<int>(std::min<long long>(N, 1 << 16));
}

} // namespace smpart::policy
