// Static TLP modulation (tlp-modulation-cache-bypass.txt Sec. 4.1-4.2,
// Alg. 1). Every kernel runs on every SM; the decision is CTAs per SM.
//
// Readings:
//  * Kernel type: metrics.type when given (the profiler's judgement), else
//    from by_ctas_per_sm: best time at the largest measured TLP -> Up, at
//    the smallest -> Down, in between -> Optimal (ties: fewer CTAs).
//  * opt(k): Up -> the CTAs per SM that fit alone (max TLP); otherwise
//    metrics.opt_ctas_per_sm, else the curve's best point, else (Down) 1.
//  * Compute_Remain(B): the most CTAs of B that fit in the per-SM threads,
//    registers, shared memory and block slots left after Tb_A CTAs of A.
//  * Alg. 1's table is equivalent to: Down kernels first, then Optimal
//    kernels, each at min(opt, what remains), then Up kernels with what
//    remains. We keep one CTA's worth of room for every later kernel, so
//    each kernel is resident (Alg. 1 is silent when opt(A) leaves no room).
//  * Both Up -> "default concurrency", the GPU's LeftOver policy: the first
//    kernel takes what it would alone, the next what is left. Persistent CTAs
//    never leave, so a literal LeftOver would starve the second kernel; we
//    again keep one CTA of room for it.
//  * More than two kernels (Sec. 4.6 runs pairs from a pool): we apply the
//    same ordering to all of them at once so one plan covers the pool; the
//    paper's pairwise execution is what you get by planning two at a time.
//  * Several Up kernels after Down/Optimal ones share the remainder one CTA
//    at a time in input order.
//  * Bypass CTAs are learned online (Sec. 4.4) by the runtime; the static
//    plan leaves bypass_ctas_per_sm at 0.
#include "smpart/policy/tlp_policy.hpp"

#include "smpart/policy/curves.hpp"

#include <algorithm>

namespace smpart::policy {

TlpType classifyTlp(const std::vector<CtaPoint> &Curve) {
  std::size_t Best = 0;
  for (std::size_t I = 1; I < Curve.size(); ++I)
    if (Curve[I].time_ms < Curve[Best].time_ms)
      Best = I;
  if (Best + 1 == Curve.size())
    return TlpType::Up;
  if (Best == 0)
    return TlpType::Down;
  return TlpType::Optimal;
}

namespace {
struct TlpKernel {
  std::size_t index;
  TlpType type;
  long long alone; // CTAs per SM that fit alone
  long long opt;
  long long ctas = 0;
};
} // namespace

Plan TlpPolicy::decide(const ProfileSet &Set, const PolicyOptions &O) const {
  const std::string Who = "policy tlp";
  const GpuSpec &G = Set.gpu;
  requireField(G.max_threads_per_sm, Set, "gpu.max_threads_per_sm", Who);
  requireField(G.max_blocks_per_sm, Set, "gpu.max_blocks_per_sm", Who);
  requireField(G.regs_per_sm, Set, "gpu.regs_per_sm", Who);
  requireField(G.smem_per_sm, Set, "gpu.smem_per_sm", Who);

  const std::size_t N = Set.kernels.size();
  std::vector<TlpKernel> Ks;
  std::vector<std::string> Notes;
  for (std::size_t I = 0; I < N; ++I) {
    const KernelProfile &K = Set.kernels[I];
    std::string Path = kernelPath(I);
    const BlockShape &B = requireField(K.block, Set, Path + ".block", Who);
    TlpKernel T{I, TlpType::Up, ctasThatFit(G, B), 0};
    if (T.alone < 1)
      throw InputError(Set.source, Path + ".block",
                       "expected a block that fits on one SM");
    if (K.metrics.type)
      T.type = *K.metrics.type;
    else if (K.by_ctas.size() >= 2)
      T.type = classifyTlp(K.by_ctas);
    else
      throw InputError(Set.source, Path + ".metrics.type",
                       "missing; " + Who +
                           " needs metrics.type or a by_ctas_per_sm curve "
                           "with at least two points");
    if (T.type == TlpType::Up) {
      T.opt = T.alone;
    } else if (K.metrics.opt_ctas_per_sm) {
      T.opt = *K.metrics.opt_ctas_per_sm;
    } else if (!K.by_ctas.empty()) {
      std::size_t Best = 0;
      for (std::size_t J = 1; J < K.by_ctas.size(); ++J)
        if (K.by_ctas[J].time_ms < K.by_ctas[Best].time_ms)
          Best = J;
      T.opt = K.by_ctas[Best].ctas;
    } else if (T.type == TlpType::Down) {
      T.opt = 1;
    } else {
      throw InputError(Set.source, Path + ".metrics.opt_ctas_per_sm",
                       "missing; " + Who +
                           " needs opt(k) for an Optimal kernel");
    }
    T.opt = std::clamp<long long>(T.opt, 1, T.alone);
    if (O.explain)
      Notes.push_back(
          formatNote("%s: type %s (%s), opt %lld CTAs/SM, %lld "
                     "fit alone",
                     K.name.c_str(), tlpTypeName(T.type),
                     K.metrics.type ? "metrics.type" : "by_ctas_per_sm curve",
                     T.opt, T.alone));
    Ks.push_back(T);
  }

  bool AllUp = std::all_of(Ks.begin(), Ks.end(), [](const TlpKernel &T) {
    return T.type == TlpType::Up;
  });
  // Down first, then Optimal, then Up; stable so ties keep input order.
  std::vector<std::size_t> Order(N);
  for (std::size_t I = 0; I < N; ++I)
    Order[I] = I;
  std::stable_sort(
      Order.begin(), Order.end(), [&](std::size_t A, std::size_t B) {
        auto Rank = [](TlpType T) {
          return T == TlpType::Down ? 0 : T == TlpType::Optimal ? 1 : 2;
        };
        return Rank(Ks[A].type) < Rank(Ks[B].type);
      });

  // Room kept for one CTA of every kernel after position Pos.
  auto Reserve = [&](std::size_t Pos) {
    SmLoad R;
    for (std::size_t J = Pos + 1; J < N; ++J)
      R.add(*Set.kernels[Ks[Order[J]].index].block, 1);
    return R;
  };

  Plan P;
  P.policy = "tlp";
  P.mode = AllUp ? "default-concurrency" : "static-tlp";
  P.num_sms = G.num_sms;
  SmLoad Load;
  bool Oversubscribed = false;
  std::vector<std::size_t> UpLater;
  for (std::size_t Pos = 0; Pos < N; ++Pos) {
    TlpKernel &T = Ks[Order[Pos]];
    const BlockShape &B = *Set.kernels[T.index].block;
    if (T.type == TlpType::Up && !AllUp) {
      UpLater.push_back(Order[Pos]);
      continue;
    }
    SmLoad WithReserve = Load;
    SmLoad R = Reserve(Pos);
    WithReserve.threads += R.threads;
    WithReserve.regs += R.regs;
    WithReserve.smem += R.smem;
    WithReserve.blocks += R.blocks;
    long long Remain = ctasThatFit(G, B, WithReserve);
    T.ctas = std::min(T.opt, Remain);
    if (T.ctas < 1) {
      T.ctas = 1;
      Oversubscribed = true;
    }
    Load.add(B, T.ctas);
    if (O.explain)
      Notes.push_back(formatNote(
          "%s: Compute_Remain = %lld (one CTA kept for each later kernel) -> "
          "Tb = %s(%lld) = %lld",
          Set.kernels[T.index].name.c_str(), Remain,
          AllUp ? "LeftOver" : "min(opt, Compute_Remain)",
          AllUp ? Remain : T.opt, T.ctas));
  }
  // Up kernels after Down/Optimal ones: Tb_B = Compute_Remain(B), shared one
  // CTA at a time when several Up kernels are waiting.
  for (std::size_t U : UpLater) {
    const BlockShape &B = *Set.kernels[Ks[U].index].block;
    if (ctasThatFit(G, B, Load) >= 1) {
      Ks[U].ctas = 1;
      Load.add(B, 1);
    } else {
      Ks[U].ctas = 1;
      Oversubscribed = true;
      Load.add(B, 1);
    }
  }
  for (bool Grew = !Oversubscribed; Grew;) {
    Grew = false;
    for (std::size_t U : UpLater) {
      const BlockShape &B = *Set.kernels[Ks[U].index].block;
      if (Ks[U].ctas < Ks[U].alone && ctasThatFit(G, B, Load) >= 1) {
        ++Ks[U].ctas;
        Load.add(B, 1);
        Grew = true;
      }
    }
  }
  if (O.explain)
    for (std::size_t U : UpLater)
      Notes.push_back(formatNote("%s (Up): Tb = Compute_Remain -> %lld",
                                 Set.kernels[Ks[U].index].name.c_str(),
                                 Ks[U].ctas));
  if (Oversubscribed)
    Notes.push_back("one CTA of every kernel does not fit one SM; the block "
                    "scheduler queues what does not fit");

  for (const TlpKernel &T : Ks) {
    KernelDecision D;
    D.name = Set.kernels[T.index].name;
    D.sms = G.num_sms;
    D.ctas_per_sm = static_cast<int>(T.ctas);
    D.klass = tlpTypeName(T.type);
    P.kernels.push_back(std::move(D));
  }
  P.notes = std::move(Notes);
  return P;
}

} // namespace smpart::policy
