// SiM greedy allocation (adaptive-multitenancy-sim.txt Sec. 3.5-3.6, Alg. 1).
//
// Readings:
//  * Alg. 1 line 5 reads "while marked <= size"; that would index past the
//    list, so the loop runs while marked < size (every kernel marked ends it).
//  * "Allocate the minimum resources" is each kernel's smallest profiled
//    configuration after pruning (one CTA per SM when that was profiled).
//  * Resources that must fit are per SM: every kernel runs on every SM, so
//    an SM holds ctas_k CTAs of every kernel k; threads, registers, shared
//    memory and block slots are summed over kernels (register allocation
//    granularity is ignored).
//  * "Re-sort from marked onwards": only the advanced kernel's remaining time
//    changed (it went down), so it is moved later until the list is sorted
//    again; ties keep input order, which makes the result deterministic.
#include "smpart/policy/greedy_policy.hpp"

#include "smpart/policy/curves.hpp"

#include <algorithm>

namespace smpart::policy {

std::vector<CtaPoint> pruneConfigurations(std::vector<CtaPoint> Points) {
  std::stable_sort(
      Points.begin(), Points.end(),
      [](const CtaPoint &A, const CtaPoint &B) { return A.ctas < B.ctas; });
  std::vector<CtaPoint> Kept;
  for (const CtaPoint &P : Points)
    if (Kept.empty() || P.time_ms < Kept.back().time_ms)
      Kept.push_back(P);
  return Kept;
}

double remainingTime(double IsolatedMs, long long TotalBlocks,
                     long long ExecutedBlocks) {
  return IsolatedMs * static_cast<double>(TotalBlocks - ExecutedBlocks) /
         static_cast<double>(TotalBlocks);
}

namespace {
struct KernelState {
  std::size_t index;
  std::vector<CtaPoint> configs;
  std::size_t at = 0;
  double left_fraction = 1; // (TB_t - TB_e) / TB_t
  double remaining() const { return configs[at].time_ms * left_fraction; }
};

void requireSmLimits(const ProfileSet &Set, const std::string &Who) {
  const GpuSpec &G = Set.gpu;
  requireField(G.max_threads_per_sm, Set, "gpu.max_threads_per_sm", Who);
  requireField(G.max_blocks_per_sm, Set, "gpu.max_blocks_per_sm", Who);
  requireField(G.regs_per_sm, Set, "gpu.regs_per_sm", Who);
  requireField(G.smem_per_sm, Set, "gpu.smem_per_sm", Who);
}
} // namespace

Plan GreedyPolicy::decide(const ProfileSet &Set, const PolicyOptions &O) const {
  const std::string Who = "policy greedy";
  requireSmLimits(Set, Who);
  const std::size_t N = Set.kernels.size();
  std::vector<KernelState> States;
  States.reserve(N);
  for (std::size_t I = 0; I < N; ++I) {
    const KernelProfile &K = Set.kernels[I];
    std::string Path = kernelPath(I);
    requireField(K.block, Set, Path + ".block", Who);
    requireField(K.total_blocks, Set, Path + ".total_blocks", Who);
    if (K.by_ctas.empty())
      throw InputError(Set.source, Path + ".isolated.by_ctas_per_sm",
                       "missing; required by " + Who +
                           " (expected at least one configuration)");
    KernelState S{I, pruneConfigurations(K.by_ctas)};
    S.left_fraction = remainingTime(1.0, *K.total_blocks, K.executed_blocks);
    States.push_back(std::move(S));
  }

  Plan P;
  P.policy = "greedy";
  P.mode = "shared-sm";
  P.num_sms = Set.gpu.num_sms;

  SmLoad Load;
  for (const KernelState &S : States)
    Load.add(*Set.kernels[S.index].block, S.configs[0].ctas);

  if (!fitsSm(Set.gpu, Load)) {
    // Paper: "If no feasible configuration exists, we simply launch all
    // kernels with one CTA"; the block scheduler queues what does not fit.
    P.mode = "fallback-one-cta";
    P.notes.push_back("the smallest configurations do not fit one SM "
                      "together; every kernel gets one CTA per SM and the "
                      "block scheduler queues the rest");
    for (const KernelState &S : States) {
      KernelDecision D;
      D.name = Set.kernels[S.index].name;
      D.sms = Set.gpu.num_sms;
      D.ctas_per_sm = 1;
      P.kernels.push_back(std::move(D));
    }
    return P;
  }

  // Sorted descending by remaining time; ties by input order.
  std::vector<std::size_t> Order(N);
  for (std::size_t I = 0; I < N; ++I)
    Order[I] = I;
  auto Before = [&](std::size_t A, std::size_t B) {
    double RA = States[A].remaining(), RB = States[B].remaining();
    return RA > RB || (RA == RB && A < B);
  };
  std::stable_sort(Order.begin(), Order.end(), Before);

  std::size_t Marked = 0;
  while (Marked < N) {
    KernelState &S = States[Order[Marked]];
    const BlockShape &Block = *Set.kernels[S.index].block;
    const std::string &Name = Set.kernels[S.index].name;
    if (S.at + 1 >= S.configs.size()) {
      if (O.explain)
        P.notes.push_back(formatNote("%s: no faster configuration than %d "
                                     "CTAs/SM; marked",
                                     Name.c_str(), S.configs[S.at].ctas));
      ++Marked;
      continue;
    }
    int Extra = S.configs[S.at + 1].ctas - S.configs[S.at].ctas;
    SmLoad Next = Load;
    Next.add(Block, Extra);
    if (!fitsSm(Set.gpu, Next)) {
      if (O.explain)
        P.notes.push_back(formatNote(
            "%s: %d CTAs/SM would exceed the per-SM resources (threads %lld, "
            "regs %lld, smem %lld, blocks %lld); rolled back and marked",
            Name.c_str(), S.configs[S.at + 1].ctas, Next.threads, Next.regs,
            Next.smem, Next.blocks));
      ++Marked;
      continue;
    }
    Load = Next;
    ++S.at;
    if (O.explain)
      P.notes.push_back(formatNote("%s: advanced to %d CTAs/SM, remaining "
                                   "time %.6g ms (Eq. 1)",
                                   Name.c_str(), S.configs[S.at].ctas,
                                   S.remaining()));
    // Its remaining time only went down: bubble it towards the end.
    for (std::size_t J = Marked; J + 1 < N && Before(Order[J + 1], Order[J]);
         ++J)
      std::swap(Order[J], Order[J + 1]);
  }

  double MaxRemaining = 0;
  for (const KernelState &S : States) {
    KernelDecision D;
    D.name = Set.kernels[S.index].name;
    D.sms = Set.gpu.num_sms;
    D.ctas_per_sm = S.configs[S.at].ctas;
    MaxRemaining = std::max(MaxRemaining, S.remaining());
    P.kernels.push_back(std::move(D));
  }
  if (O.explain)
    P.notes.push_back(
        formatNote("maximum estimated remaining time %.6g ms", MaxRemaining));
  return P;
}

} // namespace smpart::policy
