#include "static_search.hpp"

#include "smpart/policy/curves.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>

namespace smpart::sim {

std::string StaticConfig::describe() const {
  std::string S = sharing ? "shared SMs:" : "SM shares:";
  for (const auto &[Name, Sh] : shares) {
    S += " " + Name + "=";
    if (!sharing)
      S += policy::formatNote("%g", Sh.weight) + "/";
    S += std::to_string(Sh.ctas_per_sm) + "c";
    if (Sh.bypass_ctas_per_sm)
      S += "+" + std::to_string(Sh.bypass_ctas_per_sm) + "b";
  }
  return S;
}

policy::Plan StaticPolicy::decide(const policy::ProfileSet &Set,
                                  const policy::PolicyOptions &) const {
  policy::Plan P;
  P.policy = "static";
  P.mode = Config.sharing ? "sharing" : "spatial";
  P.num_sms = Set.gpu.num_sms;
  const int Budget = Set.gpu.num_sms;
  const bool Alone = Set.kernels.size() == 1;
  std::vector<double> W;
  for (const policy::KernelProfile &K : Set.kernels) {
    const std::string Base = K.name.substr(0, K.name.find('#'));
    auto It = Config.shares.find(Base);
    const StaticShare Sh =
        It != Config.shares.end() ? It->second : StaticShare{};
    policy::KernelDecision D;
    D.name = K.name;
    D.klass = "static";
    if (!Alone) {
      D.ctas_per_sm = Sh.ctas_per_sm;
      D.bypass_ctas_per_sm = Sh.bypass_ctas_per_sm;
    }
    P.kernels.push_back(D);
    W.push_back(std::max(1e-9, Sh.weight));
  }
  if (Config.sharing || Alone) {
    for (policy::KernelDecision &D : P.kernels) {
      D.sm_first = 0;
      D.sms = Budget;
    }
    return P;
  }
  // Shares in proportion to the weights, largest remainders first, at
  // least one SM each.
  const double Sum = std::accumulate(W.begin(), W.end(), 0.0);
  std::vector<double> Exact;
  int Given = 0;
  for (std::size_t I = 0; I < W.size(); ++I) {
    Exact.push_back(Budget * W[I] / Sum);
    P.kernels[I].sms = std::max(1, static_cast<int>(std::floor(Exact[I])));
    Given += P.kernels[I].sms;
  }
  std::vector<std::size_t> Order(W.size());
  std::iota(Order.begin(), Order.end(), 0);
  std::sort(Order.begin(), Order.end(), [&](std::size_t A, std::size_t B) {
    return Exact[A] - std::floor(Exact[A]) > Exact[B] - std::floor(Exact[B]);
  });
  for (std::size_t I = 0; Given < Budget; I = (I + 1) % Order.size(), ++Given)
    ++P.kernels[Order[I]].sms;
  while (Given > Budget) {
    auto Big = std::max_element(
        P.kernels.begin(), P.kernels.end(),
        [](const auto &A, const auto &B) { return A.sms < B.sms; });
    --Big->sms;
    --Given;
  }
  policy::layOutContiguously(P);
  return P;
}

namespace {
/// Distinct kernel names of the mix, launch order.
std::vector<const policy::KernelProfile *> kernelsOf(const Mix &M) {
  std::vector<const policy::KernelProfile *> Out;
  for (const Launch &L : M.launches)
    for (const policy::KernelProfile &K : M.truth.kernels)
      if (K.name == L.kernel &&
          std::find(Out.begin(), Out.end(), &K) == Out.end())
        Out.push_back(&K);
  return Out;
}

/// CTA counts worth trying for one kernel: its occupancy, the best point of
/// its CTA curve, and (for sharing) a few smaller counts.
std::vector<int> ctaChoices(const policy::GpuSpec &G,
                            const policy::KernelProfile &K, bool Sharing,
                            std::size_t Kernels) {
  int Occ = policy::defaultCtasPerSm(G, K);
  if (Occ <= 0)
    Occ = K.by_ctas.empty() ? 8 : K.by_ctas.back().ctas;
  std::vector<int> C = {Occ};
  if (!K.by_ctas.empty()) {
    auto Best = std::min_element(
        K.by_ctas.begin(), K.by_ctas.end(),
        [](const auto &A, const auto &B) { return A.time_ms < B.time_ms; });
    C.push_back(std::min(Occ, Best->ctas));
  }
  if (Sharing)
    for (int X : {1, 2, 4, 6})
      if (X < Occ && (Kernels <= 3 || X != 6))
        C.push_back(X);
  std::sort(C.begin(), C.end());
  C.erase(std::unique(C.begin(), C.end()), C.end());
  return C;
}
} // namespace

std::vector<StaticConfig> staticGrid(const Mix &M) {
  const auto Ks = kernelsOf(M);
  const std::size_t N = Ks.size();
  std::vector<StaticConfig> Out;
  if (N == 0)
    return Out;
  const policy::GpuSpec &G = M.truth.gpu;
  // Spatial: weights in units (132 SMs: 4 SMs a unit for two kernels, 11
  // for three, 16.5 for four), each kernel at its occupancy or its best
  // CTA count.
  const int Units = N <= 2 ? 33 : N == 3 ? 12 : 8;
  std::vector<int> W(N, 1);
  std::function<void(std::size_t, int)> Split = [&](std::size_t I, int Left) {
    if (I + 1 == N) {
      W[I] = Left;
      std::vector<std::vector<int>> Choices;
      for (const auto *K : Ks)
        Choices.push_back(ctaChoices(G, *K, false, N));
      std::vector<std::size_t> Pick(N, 0);
      while (true) {
        StaticConfig C;
        for (std::size_t J = 0; J < N; ++J)
          C.shares[Ks[J]->name] = {static_cast<double>(W[J]),
                                   Choices[J][Pick[J]], 0};
        Out.push_back(C);
        std::size_t J = 0;
        while (J < N && ++Pick[J] == Choices[J].size())
          Pick[J++] = 0;
        if (J == N)
          break;
      }
      return;
    }
    for (int X = 1; X <= Left - static_cast<int>(N - I - 1); ++X) {
      W[I] = X;
      Split(I + 1, Left - X);
    }
  };
  if (N > 1)
    Split(0, Units);
  // Every policy's own configuration for the whole mix, so that the search
  // never loses to a policy only because the grid is coarse.
  policy::ProfileSet Set = M.truth;
  Set.kernels.clear();
  for (const auto *K : Ks)
    Set.kernels.push_back(*K);
  for (const policy::Policy *P : policy::allPolicies()) {
    policy::Plan Plan;
    try {
      Plan = P->decide(Set, {});
    } catch (const std::exception &) {
      continue;
    }
    if (Plan.kernels.size() != N || N < 2)
      continue;
    StaticConfig C;
    C.sharing = Plan.kernels[0].sms == Set.gpu.num_sms;
    bool Usable = true;
    for (const policy::KernelDecision &D : Plan.kernels) {
      Usable = Usable && D.sms > 0 && !(D.round && *D.round > 0);
      C.shares[D.name] = {static_cast<double>(D.sms), D.ctas_per_sm,
                          D.bypass_ctas_per_sm};
    }
    if (Usable)
      Out.push_back(C);
  }
  // Sharing: every kernel on every SM, CTA counts that fit one SM together,
  // and (two or three kernels) bypassing CTAs: none, half, all.
  std::vector<std::vector<int>> Choices;
  for (const auto *K : Ks)
    Choices.push_back(ctaChoices(G, *K, true, N));
  std::vector<std::size_t> Pick(N, 0);
  while (true) {
    policy::SmLoad Load;
    bool Shaped = true;
    for (std::size_t J = 0; J < N; ++J) {
      if (!Ks[J]->block) {
        Shaped = false;
        break;
      }
      Load.add(*Ks[J]->block, Choices[J][Pick[J]]);
    }
    if (!Shaped || policy::fitsSm(G, Load)) {
      std::vector<std::vector<int>> Bypass;
      for (std::size_t J = 0; J < N; ++J) {
        const int C = Choices[J][Pick[J]];
        if (N <= 3 && N > 1)
          Bypass.push_back({0, C / 2, C});
        else
          Bypass.push_back({0});
        std::sort(Bypass.back().begin(), Bypass.back().end());
        Bypass.back().erase(
            std::unique(Bypass.back().begin(), Bypass.back().end()),
            Bypass.back().end());
      }
      std::vector<std::size_t> B(N, 0);
      while (true) {
        StaticConfig C;
        C.sharing = true;
        for (std::size_t J = 0; J < N; ++J)
          C.shares[Ks[J]->name] = {1.0, Choices[J][Pick[J]], Bypass[J][B[J]]};
        Out.push_back(C);
        std::size_t J = 0;
        while (J < N && ++B[J] == Bypass[J].size())
          B[J++] = 0;
        if (J == N)
          break;
      }
    }
    std::size_t J = 0;
    while (J < N && ++Pick[J] == Choices[J].size())
      Pick[J++] = 0;
    if (J == N)
      break;
  }
  return Out;
}

std::vector<SearchResult>
searchBestStatics(const Mix &M, const RunOptions &O,
                  const std::vector<Objective> &Goals) {
  std::vector<SearchResult> Best(Goals.size());
  std::vector<ObjectiveValue> Score(Goals.size());
  std::vector<bool> Any(Goals.size(), false);
  std::size_t Evaluated = 0;
  for (const StaticConfig &C : staticGrid(M)) {
    StaticPolicy P(C);
    RunOptions RO = O;
    RO.trace = nullptr;
    RO.online = nullptr;
    RO.spatial = !C.sharing;
    const RunResult R = runMix(M, P, RO);
    ++Evaluated;
    if (!R.completed)
      continue;
    for (std::size_t G = 0; G < Goals.size(); ++G) {
      const ObjectiveValue V = evaluate(M, R, Goals[G]);
      if (!Any[G] || better(V, Score[G])) {
        Best[G].best = C;
        Best[G].result = R;
        Score[G] = V;
        Any[G] = true;
      }
      std::optional<StaticRun> &Space =
          C.sharing ? Best[G].sharing : Best[G].spatial;
      if (!Space || better(V, evaluate(M, Space->result, Goals[G])))
        Space = StaticRun{C, R};
    }
  }
  for (SearchResult &B : Best)
    B.evaluated = Evaluated;
  return Best;
}

SearchResult searchBestStatic(const Mix &M, const RunOptions &O,
                              Objective Goal) {
  return searchBestStatics(M, O, {Goal}).front();
}

} // namespace smpart::sim
