#pragma once
#include "smpart/policy/policy.hpp"

namespace smpart::policy {

/// CD-search (cd-search-ics18.txt) Sec. 4: classify with the off-SM bandwidth
/// model, then performance mode (memory + compute), power mode (memory only)
/// or even partitioning (compute only); N kernels as in Sec. 7.4.3.
class CdSearchPolicy final : public Policy {
public:
  std::string_view name() const override { return "cd-search"; }
  std::string_view summary() const override {
    return "CD-search: off-SM bandwidth classifier, performance / power / "
           "even modes";
  }
  Plan decide(const ProfileSet &Set, const PolicyOptions &O) const override;
};

/// Eq. 1: BW_Per_SM = IPC_max * APKI_LLC / 1000 * Size_CacheLine * Freq_SM
/// (GB/s when Freq is in GHz).
double cdBandwidthPerSm(double IpcMax, double LlcApki, double LineBytes,
                        double ClockGhz);

/// Eq. 2: min(BW_NoC, BW_LLC * HitRate + BW_MEM * (1 - HitRate) * BW_Util).
double cdOffSmBandwidth(double NocGbs, double LlcGbs, double MemGbs,
                        double MemUtil, double LlcHitRate);

/// Power mode's two-stage search for one kernel holding \p Half SMs:
/// tentative n = ceil(perf(Half)/perf(1)), then +1 until perf(n) is within
/// \p Loss of perf(Half). Steps are appended to \p Steps when non-null.
int cdPowerModeSms(const KernelProfile &K, int Half, double Loss,
                   std::vector<std::string> *Steps);

/// Performance mode for one memory kernel: from \p Start SMs, remove two at a
/// time while perf stays within \p Loss of perf(Start).
int cdPerformanceModeSms(const KernelProfile &K, int Start, double Loss,
                         std::vector<std::string> *Steps);

} // namespace smpart::policy
