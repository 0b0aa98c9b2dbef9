#include "smpart/policy/even_policy.hpp"

#include "smpart/policy/curves.hpp"

namespace smpart::policy {

Plan evenPlan(const ProfileSet &Set, std::string PolicyName) {
  Plan P;
  P.policy = std::move(PolicyName);
  P.mode = "even";
  P.num_sms = Set.gpu.num_sms;
  std::vector<int> Shares =
      evenSplit(Set.gpu.num_sms, static_cast<int>(Set.kernels.size()));
  for (std::size_t I = 0; I < Set.kernels.size(); ++I) {
    const KernelProfile &K = Set.kernels[I];
    KernelDecision D;
    D.name = K.name;
    D.sms = Shares[I];
    D.ctas_per_sm = defaultCtasPerSm(Set.gpu, K);
    if (!K.by_sms.empty())
      D.predicted_np = perfAtSms(K, D.sms) / perfAtSms(K, Set.gpu.num_sms);
    P.kernels.push_back(std::move(D));
  }
  layOutContiguously(P);
  return P;
}

Plan EvenPolicy::decide(const ProfileSet &Set, const PolicyOptions &O) const {
  Plan P = evenPlan(Set, "even");
  if (O.explain) {
    P.notes.push_back(formatNote(
        "%d SMs split evenly over %zu kernels, remainder to the first",
        Set.gpu.num_sms, Set.kernels.size()));
    for (const KernelDecision &D : P.kernels)
      if (D.ctas_per_sm == 0)
        P.notes.push_back(D.name + ": block shape or per-SM limits unknown; "
                                   "ctas_per_sm 0 = launch default");
  }
  return P;
}

} // namespace smpart::policy
