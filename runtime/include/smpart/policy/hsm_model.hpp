// The Hybrid Slowdown Model (hsm-asplos20.txt Sec. 2 and 4.2): classifier
// (Eq. 2-3), NP predictors (Eq. 4-5), and the linear NP(S) = g * S through
// the origin used to predict the effect of moving SMs.
#pragma once

#include "smpart/policy/profile.hpp"

#include <string>
#include <vector>

namespace smpart::policy {

struct HsmKernelState {
  bool memory_bound = false;
  double demand_gbs = 0;    // Eq. 2, B^d
  double potential_gbs = 0; // Eq. 3, B^p
  double np = 0;            // Eq. 4 or Eq. 5 (clamped to [0, 1])
  int sms = 0;              // S_k, SMs held in the sampled epoch
  double gradient = 0;      // NP / S_k
};

/// Eq. 2: B^d = (I_max / I_k) * MemAccesses * ReqSize * (f / E), in GB/s,
/// where I_max = ipc_max_per_sm * S_k * E.
double hsmDemandGbs(double IpcMaxPerSm, int Sms, double EpochCycles,
                    double Instructions, double MemAccesses, double ReqBytes,
                    double ClockGhz);

/// Eq. 3: B^p = B_max * (c1 * RBH + c2), in GB/s.
double hsmPotentialGbs(double MemBwGbs, double C1, double C2, double Rbh);

/// Classifies and predicts NP for every kernel from its `shared` sample.
/// \p Who names the policy for missing-field errors.
std::vector<HsmKernelState> hsmAnalyse(const ProfileSet &Set,
                                       const std::string &Who);

/// Predicted NP with \p Sms SMs on the linear model, capped at 1.
double hsmPredictNp(const HsmKernelState &K, int Sms);

/// Least-squares fit of bw_util = c1 * rbh + c2 over private-mode samples.
struct HsmFit {
  double c1 = 0, c2 = 0, r2 = 0;
  std::size_t samples = 0;
};
HsmFit fitHsmConstants(const std::vector<double> &Rbh,
                       const std::vector<double> &BwUtil);
/// Fit from kernels[].metrics.{rbh,bw_util} (private-mode values).
HsmFit fitHsmConstants(const ProfileSet &Set);

} // namespace smpart::policy
