// HSM-Fair and HSM-QoS (hsm-asplos20.txt Sec. 4.3) as one-shot planners.
//
// Readings:
//  * The paper repartitions once per epoch; a planner has no next epoch, so
//    HSM-Fair repeats its pairwise step (max-NP kernel gives SMs to the
//    min-NP kernel, x = (NP_max - NP_min) / (g_max + g_min) rounded to the
//    nearest whole SM) on the predicted NPs until min/max NP reaches the
//    threshold, no whole SM moves, or a step would not improve fairness.
//    With two kernels this is exactly the paper's single step.
//  * SMs no kernel held in the sampled epoch (sum of shared.sms below
//    gpu.num_sms) go one at a time to the kernel with the lowest predicted NP
//    before the fairness step (Fair) or into the spread (QoS).
//  * HSM-QoS: the high-priority kernel gets ceil(np_target / g) SMs (its
//    np_target, or --qos-target when absent), leaving at least one SM per
//    other kernel. The paper's two cases (below target: take SMs; above 0.9:
//    give back SMs beyond the target) both reduce to this count. The rest
//    goes one SM at a time to the kernel whose predicted NP gains most
//    (capped at 1), which maximises the sum of NPs on the linear model; once
//    every gain is zero the remaining SMs are dealt round-robin rather than
//    left idle.
#include "smpart/policy/hsm_policies.hpp"

#include "smpart/policy/curves.hpp"
#include "smpart/policy/hsm_model.hpp"

#include <algorithm>
#include <cmath>

namespace smpart::policy {

namespace {
std::size_t argExtreme(const std::vector<double> &V, bool Max) {
  std::size_t Best = 0;
  for (std::size_t I = 1; I < V.size(); ++I)
    if (Max ? V[I] > V[Best] : V[I] < V[Best])
      Best = I;
  return Best;
}

double fairnessOf(const std::vector<double> &Np) {
  double Mx = *std::max_element(Np.begin(), Np.end());
  double Mn = *std::min_element(Np.begin(), Np.end());
  return Mx > 0 ? Mn / Mx : 1.0;
}

Plan spatialPlan(const ProfileSet &Set, const std::string &Policy,
                 const std::string &Mode,
                 const std::vector<HsmKernelState> &States,
                 const std::vector<int> &Sms) {
  Plan P;
  P.policy = Policy;
  P.mode = Mode;
  P.num_sms = Set.gpu.num_sms;
  int Used = 0;
  for (std::size_t I = 0; I < Set.kernels.size(); ++I) {
    KernelDecision D;
    D.name = Set.kernels[I].name;
    D.sms = Sms[I];
    D.ctas_per_sm = defaultCtasPerSm(Set.gpu, Set.kernels[I]);
    D.klass = States[I].memory_bound ? "memory" : "compute";
    D.predicted_np = hsmPredictNp(States[I], Sms[I]);
    Used += Sms[I];
    P.kernels.push_back(std::move(D));
  }
  P.gated_sms = Set.gpu.num_sms - Used;
  layOutContiguously(P);
  return P;
}

void explainStates(const ProfileSet &Set,
                   const std::vector<HsmKernelState> &States,
                   std::vector<std::string> &Notes) {
  for (std::size_t I = 0; I < States.size(); ++I) {
    const HsmKernelState &S = States[I];
    Notes.push_back(formatNote(
        "%s: demand %.6g GB/s (Eq. 2) vs potential %.6g GB/s (Eq. 3) -> %s; "
        "NP %.4f on %d SMs (Eq. %d), gradient %.6g per SM",
        Set.kernels[I].name.c_str(), S.demand_gbs, S.potential_gbs,
        S.memory_bound ? "memory-bound" : "compute-bound", S.np, S.sms,
        S.memory_bound ? 5 : 4, S.gradient));
  }
}
} // namespace

Plan HsmFairPolicy::decide(const ProfileSet &Set,
                           const PolicyOptions &O) const {
  std::vector<HsmKernelState> States = hsmAnalyse(Set, "policy hsm-fair");
  const std::size_t N = States.size();
  std::vector<std::string> Notes;
  if (O.explain)
    explainStates(Set, States, Notes);

  std::vector<int> Sms(N);
  std::vector<double> Np(N);
  int Used = 0;
  for (std::size_t I = 0; I < N; ++I) {
    Sms[I] = States[I].sms;
    Np[I] = States[I].np;
    Used += Sms[I];
  }
  for (; Used < Set.gpu.num_sms; ++Used) {
    std::size_t Low = argExtreme(Np, false);
    ++Sms[Low];
    Np[Low] = hsmPredictNp(States[Low], Sms[Low]);
    if (O.explain)
      Notes.push_back(formatNote("unheld SM to %s (lowest NP)",
                                 Set.kernels[Low].name.c_str()));
  }

  double Fair = fairnessOf(Np);
  if (O.explain)
    Notes.push_back(formatNote("fairness min/max NP = %.4f, threshold %.4f",
                               Fair, O.fair_threshold));
  for (std::size_t Step = 0; Step < 4 * N + 8 && Fair < O.fair_threshold;
       ++Step) {
    std::size_t A = argExtreme(Np, true), B = argExtreme(Np, false);
    double GA = States[A].gradient, GB = States[B].gradient;
    if (GA + GB <= 0)
      break;
    double Exact = (GA * Sms[A] - GB * Sms[B]) / (GA + GB);
    int Move = static_cast<int>(std::lround(Exact));
    Move = std::min(Move, Sms[A] - 1);
    if (Move < 1) {
      if (O.explain)
        Notes.push_back("no whole SM improves fairness further");
      break;
    }
    std::vector<int> TrySms = Sms;
    std::vector<double> TryNp = Np;
    TrySms[A] -= Move;
    TrySms[B] += Move;
    TryNp[A] = hsmPredictNp(States[A], TrySms[A]);
    TryNp[B] = hsmPredictNp(States[B], TrySms[B]);
    double TryFair = fairnessOf(TryNp);
    if (TryFair <= Fair) {
      if (O.explain)
        Notes.push_back(formatNote("moving %d SMs %s -> %s would not improve "
                                   "fairness (%.4f); stop",
                                   Move, Set.kernels[A].name.c_str(),
                                   Set.kernels[B].name.c_str(), TryFair));
      break;
    }
    Sms = TrySms;
    Np = TryNp;
    Fair = TryFair;
    if (O.explain)
      Notes.push_back(formatNote(
          "move %d SMs %s -> %s (exact %.3f): NP %.4f / %.4f, fairness %.4f",
          Move, Set.kernels[A].name.c_str(), Set.kernels[B].name.c_str(), Exact,
          Np[A], Np[B], Fair));
  }
  Plan P = spatialPlan(Set, "hsm-fair", "fair", States, Sms);
  P.notes = std::move(Notes);
  return P;
}

Plan HsmQosPolicy::decide(const ProfileSet &Set, const PolicyOptions &O) const {
  std::vector<HsmKernelState> States = hsmAnalyse(Set, "policy hsm-qos");
  const std::size_t N = States.size();
  const int NumSms = Set.gpu.num_sms;
  std::vector<std::string> Notes;
  if (O.explain)
    explainStates(Set, States, Notes);

  std::vector<std::size_t> High, Low;
  for (std::size_t I = 0; I < N; ++I)
    (Set.kernels[I].priority == Priority::High ? High : Low).push_back(I);
  if (High.empty())
    throw InputError(Set.source, "kernels[*].priority",
                     "missing; policy hsm-qos needs one kernel with "
                     "\"priority\": \"high\"");

  std::vector<int> Sms(N, 0);
  int Free = NumSms;
  std::size_t Waiting = N; // kernels still needing at least one SM
  for (std::size_t H : High) {
    --Waiting;
    double Target = Set.kernels[H].np_target.value_or(O.qos_target);
    double G = States[H].gradient;
    int MaxSms = Free - static_cast<int>(Waiting);
    int Need = G > 0 ? static_cast<int>(std::ceil(Target / G - 1e-9)) : MaxSms;
    Need = std::clamp(Need, 1, MaxSms);
    Sms[H] = Need;
    Free -= Need;
    double Predicted = hsmPredictNp(States[H], Need);
    if (O.explain)
      Notes.push_back(formatNote("%s (high priority): target NP %.4f needs "
                                 "ceil(%.4f / %.6g) -> %d SMs, predicted NP "
                                 "%.4f",
                                 Set.kernels[H].name.c_str(), Target, Target, G,
                                 Need, Predicted));
    if (Predicted + 1e-12 < Target)
      Notes.push_back(formatNote("%s: NP target %.4f not reachable on the "
                                 "model (%.4f with %d SMs)",
                                 Set.kernels[H].name.c_str(), Target, Predicted,
                                 Need));
  }
  std::vector<std::size_t> &Spread = Low.empty() ? High : Low;
  if (!Low.empty())
    for (std::size_t L : Low) {
      Sms[L] = 1;
      --Free;
    }
  std::size_t RoundRobin = 0;
  for (; Free > 0; --Free) {
    std::size_t Best = Spread.size();
    double BestGain = 0;
    for (std::size_t J = 0; J < Spread.size(); ++J) {
      std::size_t K = Spread[J];
      double Gain =
          hsmPredictNp(States[K], Sms[K] + 1) - hsmPredictNp(States[K], Sms[K]);
      if (Gain > BestGain + 1e-15) {
        BestGain = Gain;
        Best = J;
      }
    }
    if (Best == Spread.size() || Low.empty())
      Best = RoundRobin++ % Spread.size();
    ++Sms[Spread[Best]];
  }
  if (O.explain)
    for (std::size_t L : Low)
      Notes.push_back(formatNote("%s: %d SMs, predicted NP %.4f",
                                 Set.kernels[L].name.c_str(), Sms[L],
                                 hsmPredictNp(States[L], Sms[L])));
  Plan P = spatialPlan(Set, "hsm-qos", "qos", States, Sms);
  P.notes = std::move(Notes);
  return P;
}

} // namespace smpart::policy
