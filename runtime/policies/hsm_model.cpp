// HSM (hsm-asplos20.txt Sec. 2, 4.2).
//
// Readings:
//  * Eq. 2's I_max ("the maximum number of instructions a kernel can execute
//    during E cycles") is ipc_max_per_sm * S_k * E: the kernel holds S_k SMs
//    in the sampled epoch. MemAccesses is shared.mem_accesses (row-buffer
//    accesses in the epoch), ReqSize is gpu.cache_line_bytes, f is
//    gpu.clock_ghz and E is shared.cycles (or gpu.hsm.epoch_cycles).
//  * Eq. 4's sigma_k (private-mode SMs) is gpu.num_sms.
//  * Eq. 5 can exceed 1 when shared-mode utilisation is above the predicted
//    private-mode utilisation; NP is a fraction of private-mode progress, so
//    predictions are capped at 1.
//  * The gradient g = NP / S (Sec. 4.2, line through the origin) uses the
//    capped NP.
#include "smpart/policy/hsm_model.hpp"

#include "smpart/policy/policy.hpp"

#include <algorithm>
#include <cmath>

namespace smpart::policy {

double hsmDemandGbs(double IpcMaxPerSm, int Sms, double EpochCycles,
                    double Instructions, double MemAccesses, double ReqBytes,
                    double ClockGhz) {
  double IMax = IpcMaxPerSm * Sms * EpochCycles;
  double BytesPerSecond = (IMax / Instructions) * MemAccesses * ReqBytes *
                          (ClockGhz * 1e9 / EpochCycles);
  return BytesPerSecond / 1e9;
}

double hsmPotentialGbs(double MemBwGbs, double C1, double C2, double Rbh) {
  return MemBwGbs * (C1 * Rbh + C2);
}

std::vector<HsmKernelState> hsmAnalyse(const ProfileSet &Set,
                                       const std::string &Who) {
  const GpuSpec &G = Set.gpu;
  double IpcMax =
      requireField(G.ipc_max_per_sm, Set, "gpu.ipc_max_per_sm", Who);
  double Line =
      requireField(G.cache_line_bytes, Set, "gpu.cache_line_bytes", Who);
  double Clock = requireField(G.clock_ghz, Set, "gpu.clock_ghz", Who);
  double MemBw = requireField(G.mem_bw_gbs, Set, "gpu.mem_bw_gbs", Who);
  double C1 = requireField(G.hsm.c1, Set, "gpu.hsm.c1", Who);
  double C2 = requireField(G.hsm.c2, Set, "gpu.hsm.c2", Who);

  std::vector<HsmKernelState> Out;
  Out.reserve(Set.kernels.size());
  long long SumSms = 0;
  for (std::size_t I = 0; I < Set.kernels.size(); ++I) {
    const KernelProfile &K = Set.kernels[I];
    std::string Path = kernelPath(I) + ".shared";
    const SharedSample &S = requireField(K.shared, Set, Path, Who);
    int Sms = requireField(S.sms, Set, Path + ".sms", Who);
    double Insts =
        requireField(S.instructions, Set, Path + ".instructions", Who);
    double Accesses =
        requireField(S.mem_accesses, Set, Path + ".mem_accesses", Who);
    double BwUtil = requireField(S.bw_util, Set, Path + ".bw_util", Who);
    double Rbh = requireField(S.rbh, Set, Path + ".rbh", Who);
    double Epoch = S.cycles ? *S.cycles
                            : requireField(G.hsm.epoch_cycles, Set,
                                           "gpu.hsm.epoch_cycles", Who);
    double PredictedUtil = C1 * Rbh + C2;
    if (!(PredictedUtil > 0))
      throw InputError(Set.source, "gpu.hsm",
                       formatNote("expected c1 * rbh + c2 > 0 for %s "
                                  "(rbh %g gives %g)",
                                  kernelPath(I).c_str(), Rbh, PredictedUtil));
    SumSms += Sms;

    HsmKernelState St;
    St.sms = Sms;
    St.demand_gbs =
        hsmDemandGbs(IpcMax, Sms, Epoch, Insts, Accesses, Line, Clock);
    St.potential_gbs = hsmPotentialGbs(MemBw, C1, C2, Rbh);
    St.memory_bound = St.demand_gbs > St.potential_gbs;
    double Np = St.memory_bound ? BwUtil / PredictedUtil           // Eq. 5
                                : double(Sms) / double(G.num_sms); // Eq. 4
    St.np = std::clamp(Np, 0.0, 1.0);
    St.gradient = St.np / Sms;
    Out.push_back(St);
  }
  if (SumSms > G.num_sms)
    throw InputError(Set.source, "kernels[*].shared.sms",
                     "expected the sampled SM counts to sum to at most "
                     "gpu.num_sms (" +
                         std::to_string(G.num_sms) + "), got " +
                         std::to_string(SumSms));
  return Out;
}

double hsmPredictNp(const HsmKernelState &K, int Sms) {
  return std::min(1.0, K.gradient * Sms);
}

HsmFit fitHsmConstants(const std::vector<double> &Rbh,
                       const std::vector<double> &BwUtil) {
  HsmFit Fit;
  Fit.samples = Rbh.size();
  double N = static_cast<double>(Rbh.size());
  double SX = 0, SY = 0, SXX = 0, SXY = 0;
  for (std::size_t I = 0; I < Rbh.size(); ++I) {
    SX += Rbh[I];
    SY += BwUtil[I];
    SXX += Rbh[I] * Rbh[I];
    SXY += Rbh[I] * BwUtil[I];
  }
  double Den = N * SXX - SX * SX;
  Fit.c1 = (N * SXY - SX * SY) / Den;
  Fit.c2 = (SY - Fit.c1 * SX) / N;
  double Mean = SY / N, SSTot = 0, SSRes = 0;
  for (std::size_t I = 0; I < Rbh.size(); ++I) {
    double R = BwUtil[I] - (Fit.c1 * Rbh[I] + Fit.c2);
    SSRes += R * R;
    SSTot += (BwUtil[I] - Mean) * (BwUtil[I] - Mean);
  }
  Fit.r2 = SSTot > 0 ? 1.0 - SSRes / SSTot : 1.0;
  return Fit;
}

HsmFit fitHsmConstants(const ProfileSet &Set) {
  const std::string Who = "--fit-hsm";
  std::vector<double> X, Y;
  for (std::size_t I = 0; I < Set.kernels.size(); ++I) {
    const KernelMetrics &M = Set.kernels[I].metrics;
    std::string Path = kernelPath(I) + ".metrics.";
    X.push_back(requireField(M.rbh, Set, Path + "rbh", Who));
    Y.push_back(requireField(M.bw_util, Set, Path + "bw_util", Who));
  }
  bool Distinct = false;
  for (double V : X)
    Distinct |= std::fabs(V - X.front()) > 1e-12;
  if (X.size() < 2 || !Distinct)
    throw InputError(Set.source, "kernels",
                     "expected at least two private-mode samples with "
                     "different metrics.rbh for a least-squares fit");
  return fitHsmConstants(X, Y);
}

} // namespace smpart::policy
