// Power-aware SM allocation (power-aware-sm-allocation.txt Sec. 2.2-2.3,
// Alg. 1).
//
// Readings (Alg. 1's listing is garbled around lines 12-21; we follow the
// prose of Sec. 2.3.2):
//  * opt = the by_sms point with the best IPC/W (powEf); ties go to fewer
//    SMs. powEf_opt compares the two kernels.
//  * If opt1 + opt2 <= total, each gets its opt and the surplus is gated.
//  * Otherwise a kernel whose opt is all SMs first asks for total - 5
//    (never below 1). Then, while the two do not fit, the kernel with the
//    lower powEf_opt shrinks by 5 (the pseudo-code's "case" test is strict,
//    so on a tie the first kernel shrinks). It never goes below one SM; if it
//    is at one SM and they still do not fit, the other kernel shrinks by one.
//  * ALLOCATING SMS: kernel 1 gets SMs [0, k1), kernel 2 [k1, k1 + k2), the
//    rest is clock-gated.
//  * Pairing (Sec. 2.3.1 uses the ILP of its ref. [7], not reproduced in the
//    paper): the predicted slowdown of a kernel given k SMs is
//    T(k) / T(num_sms) from by_sms (interpolated); a pair costs the sum of
//    its two slowdowns after partitioning; an odd kernel out runs alone on
//    its opt SMs. Up to 12 kernels the minimum-total matching is found
//    exactly (dynamic programming over subsets); beyond that pairs are taken
//    greedily, cheapest first. Pairs run one after the other ("round"),
//    cheapest first, each laid out from SM 0.
#include "smpart/policy/power_aware_policy.hpp"

#include "smpart/policy/curves.hpp"

#include <algorithm>
#include <limits>

namespace smpart::policy {

std::size_t powerOptIndex(const ProfileSet &Set, std::size_t Kernel) {
  const KernelProfile &K = Set.kernels[Kernel];
  const std::string Who = "policy power-aware";
  // Paths are built only on the error path: this runs for every kernel of
  // every decision and strings would dominate its cost.
  auto Path = [&] { return kernelPath(Kernel) + ".isolated.by_sms"; };
  if (K.by_sms.empty())
    throw InputError(Set.source, Path(), "missing; required by " + Who);
  std::size_t Best = 0;
  double BestEf = -1;
  for (std::size_t J = 0; J < K.by_sms.size(); ++J) {
    const SmPoint &Pt = K.by_sms[J];
    if (!Pt.ipc || !Pt.power_w)
      throw InputError(Set.source,
                       Path() + "[" + std::to_string(J) + "]" +
                           (Pt.ipc ? ".power_w" : ".ipc"),
                       "missing; required by " + Who);
    double Ef = *Pt.ipc / *Pt.power_w;
    if (Ef > BestEf) {
      BestEf = Ef;
      Best = J;
    }
  }
  return Best;
}

std::pair<int, int> powerPartition(int Opt1, double PowEf1, int Opt2,
                                   double PowEf2, int Total) {
  if (Opt1 + Opt2 <= Total)
    return {Opt1, Opt2};
  int K1 = Opt1 == Total ? std::max(1, Total - 5) : Opt1;
  int K2 = Opt2 == Total ? std::max(1, Total - 5) : Opt2;
  bool FavourFirst = PowEf1 > PowEf2; // "case 1": App2 shrinks
  int &Shrink = FavourFirst ? K2 : K1;
  int &Keep = FavourFirst ? K1 : K2;
  while (K1 + K2 > Total) {
    if (Shrink > 1)
      Shrink = std::max(1, Shrink - 5);
    else
      --Keep;
  }
  return {K1, K2};
}

namespace {
struct Candidate {
  int k1 = 0, k2 = 0;
  double cost = 0;
};
} // namespace

Plan PowerAwarePolicy::decide(const ProfileSet &Set,
                              const PolicyOptions &O) const {
  const int Total = Set.gpu.num_sms;
  const std::size_t N = Set.kernels.size();
  std::vector<int> Opt(N);
  std::vector<double> Ef(N);
  std::vector<std::string> Notes;
  for (std::size_t I = 0; I < N; ++I) {
    const KernelProfile &K = Set.kernels[I];
    const SmPoint &Pt = K.by_sms[powerOptIndex(Set, I)];
    Opt[I] = Pt.sms;
    Ef[I] = *Pt.ipc / *Pt.power_w;
    if (O.explain)
      Notes.push_back(formatNote("%s: opt = %d SMs (IPC/W %.6g)",
                                 K.name.c_str(), Opt[I], Ef[I]));
  }
  auto Slowdown = [&](std::size_t I, int Sms) {
    return timeAtSms(Set.kernels[I], Sms) / timeAtSms(Set.kernels[I], Total);
  };
  auto PairOf = [&](std::size_t A, std::size_t B) {
    auto [K1, K2] = powerPartition(Opt[A], Ef[A], Opt[B], Ef[B], Total);
    return Candidate{K1, K2, Slowdown(A, K1) + Slowdown(B, K2)};
  };

  // Groups of one or two kernels (indices in input order within a group).
  std::vector<std::vector<std::size_t>> Groups;
  if (N <= 2) {
    std::vector<std::size_t> G;
    for (std::size_t I = 0; I < N; ++I)
      G.push_back(I);
    Groups.push_back(G);
  } else if (N <= 12) {
    // Exact minimum-cost matching; odd N lets one kernel run alone.
    std::size_t Full = (std::size_t(1) << N) - 1;
    std::vector<double> PairCost(N * N, 0.0);
    for (std::size_t A = 0; A < N; ++A)
      for (std::size_t B = A + 1; B < N; ++B)
        PairCost[A * N + B] = PairOf(A, B).cost;
    std::vector<double> Best(Full + 1, std::numeric_limits<double>::infinity());
    std::vector<std::pair<int, int>> Choice(Full + 1, {-1, -1});
    Best[0] = 0;
    for (std::size_t Mask = 1; Mask <= Full; ++Mask) {
      std::size_t First = 0;
      while (!(Mask >> First & 1))
        ++First;
      std::size_t Rest = Mask & ~(std::size_t(1) << First);
      // A subset with an odd number of kernels holds exactly one kernel
      // that runs alone; an even one holds none.
      if (__builtin_popcountll(Mask) % 2 == 1) {
        double C = Best[Rest] + Slowdown(First, Opt[First]);
        if (C < Best[Mask]) {
          Best[Mask] = C;
          Choice[Mask] = {int(First), -1};
        }
      }
      for (std::size_t J = First + 1; J < N; ++J) {
        if (!(Rest >> J & 1))
          continue;
        double C =
            Best[Rest & ~(std::size_t(1) << J)] + PairCost[First * N + J];
        if (C < Best[Mask]) {
          Best[Mask] = C;
          Choice[Mask] = {int(First), int(J)};
        }
      }
    }
    for (std::size_t Mask = Full; Mask;) {
      auto [A, B] = Choice[Mask];
      if (B < 0) {
        Groups.push_back({std::size_t(A)});
        Mask &= ~(std::size_t(1) << A);
      } else {
        Groups.push_back({std::size_t(A), std::size_t(B)});
        Mask &= ~((std::size_t(1) << A) | (std::size_t(1) << B));
      }
    }
  } else {
    std::vector<bool> Used(N, false);
    std::vector<std::tuple<double, std::size_t, std::size_t>> Pairs;
    for (std::size_t A = 0; A < N; ++A)
      for (std::size_t B = A + 1; B < N; ++B)
        Pairs.emplace_back(PairOf(A, B).cost, A, B);
    std::sort(Pairs.begin(), Pairs.end());
    for (auto &[C, A, B] : Pairs)
      if (!Used[A] && !Used[B]) {
        Used[A] = Used[B] = true;
        Groups.push_back({A, B});
      }
    for (std::size_t I = 0; I < N; ++I)
      if (!Used[I])
        Groups.push_back({I});
  }

  // Cost of each group; run the cheapest first.
  std::vector<std::pair<double, std::size_t>> ByCost;
  std::vector<std::vector<int>> GroupSms(Groups.size());
  for (std::size_t G = 0; G < Groups.size(); ++G) {
    const auto &Members = Groups[G];
    if (Members.size() == 2) {
      Candidate C = PairOf(Members[0], Members[1]);
      GroupSms[G] = {C.k1, C.k2};
      ByCost.emplace_back(C.cost, G);
    } else if (Members.size() == 1) {
      GroupSms[G] = {Opt[Members[0]]};
      ByCost.emplace_back(Slowdown(Members[0], Opt[Members[0]]), G);
    }
  }
  std::stable_sort(
      ByCost.begin(), ByCost.end(),
      [](const auto &A, const auto &B) { return A.first < B.first; });

  Plan P;
  P.policy = "power-aware";
  P.mode = N > 2 ? "paired-queue" : "pair";
  P.num_sms = Total;
  std::vector<KernelDecision> Decisions(N);
  for (std::size_t R = 0; R < ByCost.size(); ++R) {
    std::size_t G = ByCost[R].second;
    int First = 0;
    for (std::size_t M = 0; M < Groups[G].size(); ++M) {
      std::size_t I = Groups[G][M];
      KernelDecision &D = Decisions[I];
      D.name = Set.kernels[I].name;
      D.sms = GroupSms[G][M];
      D.sm_first = First;
      First += D.sms;
      D.ctas_per_sm = defaultCtasPerSm(Set.gpu, Set.kernels[I]);
      D.predicted_np = 1.0 / Slowdown(I, D.sms);
      if (N > 2)
        D.round = static_cast<int>(R);
    }
    if (R == 0)
      P.gated_sms = Total - First;
    if (O.explain || N > 2) {
      std::string Names;
      for (std::size_t I : Groups[G])
        Names += (Names.empty() ? "" : " + ") + Set.kernels[I].name;
      Notes.push_back(formatNote(
          "round %zu: %s on %d SMs, %d gated, predicted total slowdown %.4f", R,
          Names.c_str(), First, Total - First, ByCost[R].first));
    }
  }
  P.kernels = std::move(Decisions);
  P.notes = std::move(Notes);
  return P;
}

} // namespace smpart::policy
