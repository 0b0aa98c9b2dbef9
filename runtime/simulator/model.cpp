#include "model.hpp"

#include "smpart/policy/curves.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <numeric>

namespace smpart::sim {

double KernelTraits::isolatedRate(double Sms, unsigned Ctas) const {
  if (Sms <= 0 || Ctas == 0)
    return 0;
  // by_sms was measured at the kernel's occupancy; by_ctas_per_sm scales
  // it to other CTA counts (the curves' separable model, as the
  // controller's epochs use it).
  double Ms = policy::timeAtSms(*profile, Sms);
  if (!profile->by_ctas.empty())
    Ms *= policy::timeAtCtas(*profile, Ctas) /
          policy::timeAtCtas(*profile, occupancy);
  return total / (Ms * 1000.0);
}

double KernelTraits::aloneUs() const {
  return total / isolatedRate(num_sms, occupancy);
}

KernelTraits traitsOf(const policy::ProfileSet &Set, std::size_t Index) {
  const policy::KernelProfile &K = Set.kernels[Index];
  const std::string Path = policy::kernelPath(Index);
  if (K.by_sms.empty())
    throw policy::InputError(Set.source, Path + ".isolated.by_sms",
                             "missing; required by the simulator");
  KernelTraits T;
  T.profile = &K;
  T.num_sms = Set.gpu.num_sms;
  T.total = static_cast<double>(policy::requireField(
      K.total_blocks, Set, Path + ".total_blocks", "the simulator"));
  int Occ = policy::defaultCtasPerSm(Set.gpu, K);
  if (Occ <= 0)
    Occ = K.by_ctas.empty() ? 8 : K.by_ctas.back().ctas;
  T.occupancy = static_cast<unsigned>(std::min(Occ, 32));
  T.mem = std::clamp(K.metrics.bw_util.value_or(0.2), 0.0, 1.0);
  const double MemBw = Set.gpu.mem_bw_gbs.value_or(1000.0);
  T.gbs_per_rate = T.mem * MemBw / T.isolatedRate(T.num_sms, T.occupancy);
  const double Intensity =
      std::clamp(K.metrics.llc_apki.value_or(10.0) / 100.0, 0.0, 1.0);
  const double Hit = std::clamp(K.metrics.llc_hit_rate.value_or(0.5), 0.0, 1.0);
  T.l1_sensitivity = Intensity * Hit;
  T.l1_pollution = Intensity * (1 - Hit);
  double Best = 0;
  for (unsigned C = 1; C <= T.occupancy; ++C)
    Best = std::max(Best, T.isolatedRate(T.num_sms, C));
  T.issue.assign(T.occupancy + 1, 0.0);
  for (unsigned C = 1; C <= T.occupancy; ++C)
    T.issue[C] = T.isolatedRate(T.num_sms, C) / Best;
  return T;
}

ContentionModel::ContentionModel(const policy::GpuSpec &Gpu)
    : MemBwGbs(Gpu.mem_bw_gbs.value_or(1000.0)) {}

void ContentionModel::rates(const std::vector<Placement> &Ks,
                            std::vector<double> &Out,
                            std::vector<Slowdown> *Factors) const {
  const std::size_t N = Ks.size();
  Out.assign(N, 0.0);
  std::vector<Slowdown> F(N);
  // SMs grouped by the set of kernels on them: every SM of a group sees
  // the same co-runners.
  std::map<std::uint64_t, unsigned> Groups;
  SmMask Any;
  for (const Placement &P : Ks)
    Any |= P.mask;
  for (unsigned S = 0; S < kMaxSms; ++S) {
    if (!Any.test(S))
      continue;
    std::uint64_t Sig = 0;
    for (std::size_t I = 0; I < N && I < 64; ++I)
      if (Ks[I].ctas > 0 && Ks[I].mask.test(S))
        Sig |= std::uint64_t(1) << I;
    if (Sig)
      ++Groups[Sig];
  }
  std::vector<double> IssueSum(N, 0.0), L1Sum(N, 0.0), SmsOf(N, 0.0);
  for (const auto &[Sig, Count] : Groups) {
    double Load = 0, Ctas = 0;
    for (std::size_t I = 0; I < N; ++I)
      if (Sig >> I & 1) {
        const KernelTraits &T = *Ks[I].traits;
        const unsigned C = std::min(Ks[I].ctas, T.occupancy);
        Load += (1 - T.mem) * T.issue[C];
        Ctas += C;
      }
    // Issue slots: the compute part of co-resident kernels shares the SM.
    const double Phi = Load > 1 ? 1 / Load : 1;
    for (std::size_t I = 0; I < N; ++I) {
      if (!(Sig >> I & 1))
        continue;
      const KernelTraits &T = *Ks[I].traits;
      const double C = std::min(Ks[I].ctas, T.occupancy);
      const double B = std::min<double>(Ks[I].bypass, C);
      double Pollution = 0;
      for (std::size_t J = 0; J < N; ++J)
        if (J != I && (Sig >> J & 1)) {
          const double CJ = std::min(Ks[J].ctas, Ks[J].traits->occupancy);
          const double BJ = std::min<double>(Ks[J].bypass, CJ);
          Pollution += (CJ - BJ) * Ks[J].traits->l1_pollution;
        }
      Pollution /= Ctas;
      // Cached CTAs lose to co-runners' lines; bypassing ones lose their
      // own hits but neither suffer nor cause pollution.
      const double L1 =
          ((C - B) / (1 + PollutionWeight * T.l1_sensitivity * Pollution) +
           B / (1 + BypassCost * T.l1_sensitivity)) /
          C;
      const double Issue = 1 / ((1 - T.mem) / Phi + T.mem);
      IssueSum[I] += Count * Issue;
      L1Sum[I] += Count * L1;
      SmsOf[I] += Count;
    }
  }
  std::vector<double> Demand(N, 0.0);
  for (std::size_t I = 0; I < N; ++I) {
    if (SmsOf[I] == 0)
      continue;
    const KernelTraits &T = *Ks[I].traits;
    F[I].issue = IssueSum[I] / SmsOf[I];
    F[I].l1 = L1Sum[I] / SmsOf[I];
    Out[I] = T.isolatedRate(SmsOf[I], std::min(Ks[I].ctas, T.occupancy)) *
             F[I].issue * F[I].l1;
    Demand[I] = T.gbs_per_rate * Out[I];
  }
  // DRAM: max-min fair shares of the bandwidth (light demands are met, the
  // heavy ones split the rest evenly); a kernel then waits longer on the
  // memory part of its time.
  std::vector<std::size_t> Order(N);
  std::iota(Order.begin(), Order.end(), 0);
  std::sort(Order.begin(), Order.end(), [&](std::size_t A, std::size_t B) {
    return Demand[A] < Demand[B];
  });
  double Left = MemBwGbs;
  std::size_t Rest = 0;
  for (std::size_t I : Order)
    Rest += Demand[I] > 0;
  for (std::size_t I : Order) {
    if (Demand[I] <= 0)
      continue;
    const double Share = Left / static_cast<double>(Rest--);
    const double Got = std::min(Demand[I], Share);
    Left -= Got;
    const double R = Got / Demand[I];
    const double M = Ks[I].traits->mem;
    F[I].dram = 1 / ((1 - M) + M / R);
    Out[I] *= F[I].dram;
  }
  if (Factors)
    *Factors = std::move(F);
}

} // namespace smpart::sim
