// CD-search (cd-search-ics18.txt Sec. 4 and 7.4.3).
//
// Readings:
//  * Classification (Sec. 4.1.2) is done with each kernel holding its even
//    share of the SMs (half for two kernels, as the paper's classification
//    phase does), so BW_Total_SMs = BW_Per_SM * share. APKI is per kilo
//    instruction, hence the /1000 in Eq. 1; Freq in GHz gives GB/s.
//  * BW_Util in Eq. 2 is gpu.mem_bw_util; when absent we use the paper's
//    50% and say so in the notes.
//  * "Performance" is 1 / isolated time, interpolated from by_sms; profiling
//    probes on the GPU become look-ups in that curve.
//  * Performance mode (Sec. 4.2): starting from the memory kernel's share,
//    remove two SMs at a time while the performance stays within 5% of the
//    share's performance; the last probe within 5% is kept. The compute
//    kernel(s) get every remaining SM (evenly, remainder to the first).
//  * Power mode (Sec. 4.3): stage 1 measures perf(1) and perf(share); the
//    tentative count is ceil(perf(share) / perf(1)), the SM count at which
//    linear scaling from one SM would reach the share's performance
//    (clamped to [1, share]). Stage 2 adds one SM at a time until the
//    performance is within 5% of perf(share). Unused SMs are gated.
//  * N kernels (Sec. 7.4.3): each memory kernel starts from its even share;
//    the compute kernels split what the memory kernels free.
#include "smpart/policy/cd_search_policy.hpp"

#include "smpart/policy/curves.hpp"
#include "smpart/policy/even_policy.hpp"

#include <algorithm>
#include <cmath>

namespace smpart::policy {

double cdBandwidthPerSm(double IpcMax, double LlcApki, double LineBytes,
                        double ClockGhz) {
  return IpcMax * (LlcApki / 1000.0) * LineBytes * ClockGhz;
}

double cdOffSmBandwidth(double NocGbs, double LlcGbs, double MemGbs,
                        double MemUtil, double LlcHitRate) {
  double LlcMem = LlcGbs * LlcHitRate + MemGbs * (1.0 - LlcHitRate) * MemUtil;
  return std::min(NocGbs, LlcMem);
}

int cdPerformanceModeSms(const KernelProfile &K, int Start, double Loss,
                         std::vector<std::string> *Steps) {
  double Ref = perfAtSms(K, Start);
  int Sms = Start;
  while (Sms - 2 >= 1) {
    double Perf = perfAtSms(K, Sms - 2);
    bool Within = Perf >= (1.0 - Loss) * Ref;
    if (Steps)
      Steps->push_back(formatNote(
          "%s: probe %d SMs: perf %.4f of %d-SM perf -> %s", K.name.c_str(),
          Sms - 2, Perf / Ref, Start, Within ? "within loss" : "stop"));
    if (!Within)
      break;
    Sms -= 2;
  }
  return Sms;
}

int cdPowerModeSms(const KernelProfile &K, int Half, double Loss,
                   std::vector<std::string> *Steps) {
  double P1 = perfAtSms(K, 1), PHalf = perfAtSms(K, Half);
  double Ratio = PHalf / P1;
  int Tentative = static_cast<int>(std::ceil(Ratio - 1e-9));
  Tentative = std::clamp(Tentative, 1, Half);
  if (Steps)
    Steps->push_back(
        formatNote("%s: stage 1: perf(%d)/perf(1) = %.4f -> tentative %d SMs",
                   K.name.c_str(), Half, Ratio, Tentative));
  int Sms = Tentative;
  while (true) {
    double Perf = perfAtSms(K, Sms);
    bool Within = Perf >= (1.0 - Loss) * PHalf;
    if (Steps)
      Steps->push_back(formatNote("%s: stage 2: probe %d SMs: perf %.4f of "
                                  "%d-SM perf -> %s",
                                  K.name.c_str(), Sms, Perf / PHalf, Half,
                                  Within ? "keep" : "add one SM"));
    if (Within || Sms >= Half)
      break;
    ++Sms;
  }
  return Sms;
}

Plan CdSearchPolicy::decide(const ProfileSet &Set,
                            const PolicyOptions &O) const {
  const std::string Who = "policy cd-search";
  const GpuSpec &G = Set.gpu;
  double IpcMax =
      requireField(G.ipc_max_per_sm, Set, "gpu.ipc_max_per_sm", Who);
  double Line =
      requireField(G.cache_line_bytes, Set, "gpu.cache_line_bytes", Who);
  double Clock = requireField(G.clock_ghz, Set, "gpu.clock_ghz", Who);
  double Noc = requireField(G.noc_bw_gbs, Set, "gpu.noc_bw_gbs", Who);
  double Llc = requireField(G.llc_bw_gbs, Set, "gpu.llc_bw_gbs", Who);
  double Mem = requireField(G.mem_bw_gbs, Set, "gpu.mem_bw_gbs", Who);
  double Util = G.mem_bw_util.value_or(0.5);

  const int NumSms = G.num_sms;
  const std::size_t N = Set.kernels.size();
  std::vector<int> Share = evenSplit(NumSms, static_cast<int>(N));
  std::vector<bool> Memory(N);
  std::vector<std::string> Notes;
  if (O.explain && !G.mem_bw_util)
    Notes.push_back("gpu.mem_bw_util absent: Eq. 2 uses the paper's 50%");
  std::size_t NumMemory = 0;
  for (std::size_t I = 0; I < N; ++I) {
    const KernelProfile &K = Set.kernels[I];
    std::string Path = kernelPath(I) + ".metrics.";
    double Apki = requireField(K.metrics.llc_apki, Set, Path + "llc_apki", Who);
    double Hit =
        requireField(K.metrics.llc_hit_rate, Set, Path + "llc_hit_rate", Who);
    double Demand = cdBandwidthPerSm(IpcMax, Apki, Line, Clock) * Share[I];
    double Supply = cdOffSmBandwidth(Noc, Llc, Mem, Util, Hit);
    Memory[I] = Demand > Supply;
    NumMemory += Memory[I];
    if (O.explain)
      Notes.push_back(formatNote(
          "%s: demand %.6g GB/s on %d SMs (Eq. 1) vs off-SM supply %.6g GB/s "
          "(Eq. 2) -> %s",
          K.name.c_str(), Demand, Share[I], Supply,
          Memory[I] ? "memory-intensive" : "compute-intensive"));
    if (Memory[I] && K.by_sms.empty())
      throw InputError(Set.source, kernelPath(I) + ".isolated.by_sms",
                       "missing; required by " + Who +
                           " for a memory-intensive kernel");
  }

  Plan P;
  if (NumMemory == 0) {
    P = evenPlan(Set, "cd-search");
    P.mode = "even";
    if (O.explain)
      Notes.push_back("only compute-intensive kernels: even partitioning");
  } else {
    P.policy = "cd-search";
    P.num_sms = NumSms;
    bool PowerMode = NumMemory == N;
    P.mode = PowerMode ? "power" : "performance";
    if (O.explain)
      Notes.push_back(PowerMode
                          ? "only memory-intensive kernels: power mode "
                            "(two-stage search, gate the rest)"
                          : "memory + compute mix: performance mode (take SMs "
                            "from memory kernels in steps of two)");
    std::vector<int> Sms(N, 0);
    int Used = 0;
    for (std::size_t I = 0; I < N; ++I) {
      if (!Memory[I])
        continue;
      std::vector<std::string> *Steps = O.explain ? &Notes : nullptr;
      Sms[I] = PowerMode
                   ? cdPowerModeSms(Set.kernels[I], Share[I], O.cd_loss, Steps)
                   : cdPerformanceModeSms(Set.kernels[I], Share[I], O.cd_loss,
                                          Steps);
      Used += Sms[I];
    }
    if (!PowerMode) {
      std::vector<int> Rest =
          evenSplit(NumSms - Used, static_cast<int>(N - NumMemory));
      std::size_t C = 0;
      for (std::size_t I = 0; I < N; ++I)
        if (!Memory[I]) {
          Sms[I] = Rest[C++];
          Used += Sms[I];
        }
    }
    P.gated_sms = NumSms - Used;
    for (std::size_t I = 0; I < N; ++I) {
      const KernelProfile &K = Set.kernels[I];
      KernelDecision D;
      D.name = K.name;
      D.sms = Sms[I];
      D.ctas_per_sm = defaultCtasPerSm(G, K);
      if (!K.by_sms.empty())
        D.predicted_np = perfAtSms(K, D.sms) / perfAtSms(K, NumSms);
      P.kernels.push_back(std::move(D));
    }
    layOutContiguously(P);
  }
  for (std::size_t I = 0; I < N; ++I)
    P.kernels[I].klass = Memory[I] ? "memory" : "compute";
  P.notes.insert(P.notes.begin(), Notes.begin(), Notes.end());
  return P;
}

} // namespace smpart::policy
