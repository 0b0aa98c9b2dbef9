// Offline evaluation of a plan from isolated profile curves.
//
// Model: a kernel's time alone is its isolated time on all SMs at its
// default CTAs per SM (by_sms at num_sms, else by_ctas_per_sm at the CTAs
// that fit). Under the plan its time is
//     alone * T_sms(s) / T_sms(num_sms) * T_ctas(c) / T_ctas(c_default)
// with each factor taken from the curve when it exists (linear-in-SMs
// N / s when by_sms is absent; 1 when by_ctas_per_sm is absent), using
// curves.hpp's interpolation. NP = alone / predicted, STP = sum NP,
// ANTT = mean 1/NP, fairness = min NP / max NP.
//
// Limits (also in the README): no interference between co-runners through
// the LLC, NoC or DRAM (optimistic for memory + memory mixes); no
// redistribution of SMs when a co-runner finishes; kernels sharing SMs are
// only charged for their own CTA count; rounds (power-aware queues) are
// evaluated per kernel, not as a schedule; executed_blocks is ignored.
#include "smpart/policy/evaluator.hpp"

#include "smpart/policy/curves.hpp"
#include "smpart/policy/policy.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace smpart::policy {

Evaluation evaluatePlan(const Plan &P, const ProfileSet &Set,
                        const std::string &PlanSource) {
  const int NumSms = Set.gpu.num_sms;
  if (P.num_sms != 0 && P.num_sms != NumSms)
    throw InputError(PlanSource, "num_sms",
                     formatNote("expected %d (gpu.num_sms of %s), got %d",
                                NumSms, Set.source.c_str(), P.num_sms));
  Evaluation E;
  for (std::size_t I = 0; I < P.kernels.size(); ++I) {
    const KernelDecision &D = P.kernels[I];
    std::string Path = "kernels[" + std::to_string(I) + "]";
    auto It =
        std::find_if(Set.kernels.begin(), Set.kernels.end(),
                     [&](const KernelProfile &K) { return K.name == D.name; });
    if (It == Set.kernels.end())
      throw InputError(PlanSource, Path + ".name",
                       "expected a kernel named in " + Set.source + ", got \"" +
                           D.name + "\"");
    if (D.sm_first + D.sms > NumSms)
      throw InputError(PlanSource, Path + ".sms",
                       formatNote("expected sm_first + sms <= %d, got %d",
                                  NumSms, D.sm_first + D.sms));
    const KernelProfile &K = *It;
    std::size_t KI = static_cast<std::size_t>(It - Set.kernels.begin());
    if (K.by_sms.empty() && K.by_ctas.empty())
      throw InputError(Set.source, kernelPath(KI) + ".isolated",
                       "expected by_sms or by_ctas_per_sm for --evaluate");

    int DefaultCtas = defaultCtasPerSm(Set.gpu, K);
    if (DefaultCtas == 0 && !K.by_ctas.empty())
      DefaultCtas = K.by_ctas.back().ctas;
    double Alone =
        !K.by_sms.empty() ? timeAtSms(K, NumSms) : timeAtCtas(K, DefaultCtas);
    KernelEvaluation KE;
    KE.name = D.name;
    KE.alone_ms = Alone;
    if (D.sms == 0) {
      KE.predicted_ms = std::numeric_limits<double>::infinity();
      KE.np = 0;
      E.notes.push_back(D.name + " has no SMs: it never progresses");
    } else {
      double SmFactor = !K.by_sms.empty()
                            ? timeAtSms(K, D.sms) / timeAtSms(K, NumSms)
                            : double(NumSms) / double(D.sms);
      double CtaFactor = 1;
      if (!K.by_ctas.empty() && D.ctas_per_sm > 0 && DefaultCtas > 0)
        CtaFactor = timeAtCtas(K, D.ctas_per_sm) / timeAtCtas(K, DefaultCtas);
      KE.predicted_ms = Alone * SmFactor * CtaFactor;
      KE.np = Alone / KE.predicted_ms;
      // The loader's bounds keep these finite; should a profile still
      // overflow, it is the input that is wrong, not a null in the output.
      if (!std::isfinite(KE.predicted_ms) || !std::isfinite(KE.np) ||
          !(KE.np > 0))
        throw InputError(Set.source, kernelPath(KI) + ".isolated",
                         "expected times that give a finite prediction");
    }
    E.kernels.push_back(KE);
  }
  double Min = std::numeric_limits<double>::infinity(), Max = 0, InvSum = 0;
  for (const KernelEvaluation &K : E.kernels) {
    E.stp += K.np;
    InvSum += K.np > 0 ? 1.0 / K.np : std::numeric_limits<double>::infinity();
    Min = std::min(Min, K.np);
    Max = std::max(Max, K.np);
  }
  E.antt = InvSum / static_cast<double>(E.kernels.size());
  E.fairness = Max > 0 ? Min / Max : 0;
  for (const KernelProfile &K : Set.kernels)
    if (std::none_of(P.kernels.begin(), P.kernels.end(),
                     [&](const KernelDecision &D) { return D.name == K.name; }))
      E.notes.push_back(K.name + " is in the profiles but not in the plan");
  return E;
}

nlohmann::ordered_json evaluationToJson(const Evaluation &E) {
  // Six significant digits: the model is not more precise than that, and
  // 1.525 reads better than 1.5250000000000001.
  auto Num = [](double V) -> nlohmann::ordered_json {
    if (!std::isfinite(V))
      return nullptr; // JSON has no infinity (a kernel without SMs)
    char Text[32];
    std::snprintf(Text, sizeof Text, "%.6g", V);
    return std::strtod(Text, nullptr);
  };
  nlohmann::ordered_json Kernels = nlohmann::ordered_json::array();
  for (const KernelEvaluation &K : E.kernels)
    Kernels.push_back({{"name", K.name},
                       {"alone_ms", Num(K.alone_ms)},
                       {"predicted_ms", Num(K.predicted_ms)},
                       {"np", Num(K.np)}});
  return {{"schema", "smpart.evaluation/1"},
          {"kernels", Kernels},
          {"stp", Num(E.stp)},
          {"antt", Num(E.antt)},
          {"fairness", Num(E.fairness)},
          {"notes", E.notes}};
}

} // namespace smpart::policy
