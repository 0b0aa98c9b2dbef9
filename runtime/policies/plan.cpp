#include "smpart/policy/plan.hpp"

#include "json_reader.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <utility>

namespace smpart::policy {

using detail::JsonNode;

nlohmann::ordered_json planToJson(const Plan &P) {
  nlohmann::ordered_json Kernels = nlohmann::ordered_json::array();
  for (const KernelDecision &K : P.kernels) {
    nlohmann::ordered_json J = {{"name", K.name},
                                {"sms", K.sms},
                                {"sm_first", K.sm_first},
                                {"ctas_per_sm", K.ctas_per_sm},
                                {"bypass_ctas_per_sm", K.bypass_ctas_per_sm},
                                {"class", K.klass}};
    if (K.predicted_np)
      J["predicted_np"] = *K.predicted_np;
    if (K.round)
      J["round"] = *K.round;
    J["kind"] = K.kind;
    if (K.kind == KindOpaque)
      J["held_sm_ids"] = K.held_sm_ids;
    Kernels.push_back(std::move(J));
  }
  nlohmann::ordered_json Doc = {{"schema", PlanSchema},
                                {"policy", P.policy},
                                {"mode", P.mode},
                                {"num_sms", P.num_sms}};
  if (P.gpu_sms > 0)
    Doc["gpu_sms"] = P.gpu_sms;
  Doc["kernels"] = std::move(Kernels);
  Doc["gated_sms"] = P.gated_sms;
  Doc["notes"] = P.notes;
  return Doc;
}

Plan parsePlan(const std::string &Text, const std::string &Source,
               std::vector<std::string> *Warnings) {
  std::vector<std::string> Ignored;
  std::vector<std::string> &Unknown = Warnings ? *Warnings : Ignored;
  nlohmann::json Doc = detail::parseJsonDocument(Text, Source);
  JsonNode Root(Doc, Source, "");
  Root.checkMembers({"schema", "policy", "mode", "num_sms", "gpu_sms",
                     "kernels", "gated_sms", "notes"},
                    Unknown);
  JsonNode Schema = Root.member("schema");
  if (Schema.asString() != PlanSchema)
    Schema.fail(std::string("expected \"") + PlanSchema + "\", got \"" +
                Schema.asString() + "\"");
  Plan P;
  if (auto N = Root.optionalMember("policy"))
    P.policy = N->asString();
  if (auto M = Root.optionalMember("mode"))
    P.mode = M->asString();
  // 0 only when opaque partitions hold every SM (gpu_sms says how many).
  if (auto N = Root.optionalMember("num_sms"))
    P.num_sms =
        static_cast<int>(N->asInteger(0, 1 << 16, "a non-negative integer"));
  if (auto G = Root.optionalMember("gpu_sms"))
    P.gpu_sms =
        static_cast<int>(G->asInteger(1, 1 << 16, "a positive integer"));
  if (auto G = Root.optionalMember("gated_sms"))
    P.gated_sms =
        static_cast<int>(G->asInteger(0, 1 << 16, "a non-negative integer"));
  JsonNode Kernels = Root.member("kernels");
  std::size_t N = Kernels.arraySize();
  if (N == 0)
    Kernels.fail("expected at least one kernel");
  std::set<std::pair<std::string, std::string>> Seen; // kind, name
  for (std::size_t I = 0; I < N; ++I) {
    JsonNode K = Kernels.element(I);
    K.checkMembers({"name", "sms", "sm_first", "ctas_per_sm",
                    "bypass_ctas_per_sm", "class", "predicted_np", "round",
                    "kind", "held_sm_ids"},
                   Unknown);
    KernelDecision D;
    D.name = K.member("name").asString();
    D.sms = static_cast<int>(
        K.member("sms").asInteger(0, 1 << 16, "a non-negative integer"));
    D.sm_first = static_cast<int>(
        K.member("sm_first").asInteger(0, 1 << 16, "a non-negative integer"));
    if (auto C = K.optionalMember("ctas_per_sm"))
      D.ctas_per_sm =
          static_cast<int>(C->asInteger(0, 1 << 16, "a non-negative integer"));
    if (auto B = K.optionalMember("bypass_ctas_per_sm"))
      D.bypass_ctas_per_sm =
          static_cast<int>(B->asInteger(0, 1 << 16, "a non-negative integer"));
    if (auto C = K.optionalMember("class"))
      D.klass = C->asString();
    if (auto NP = K.optionalMember("predicted_np"))
      D.predicted_np = NP->asNumber(0, 1e9);
    if (auto R = K.optionalMember("round"))
      D.round =
          static_cast<int>(R->asInteger(0, 1 << 16, "a non-negative integer"));
    if (auto Kind = K.optionalMember("kind")) {
      D.kind = Kind->asString();
      if (D.kind != KindRewritten && D.kind != KindOpaque)
        Kind->fail(std::string("expected \"") + KindRewritten + "\" or \"" +
                   KindOpaque + "\", got \"" + D.kind + "\"");
    }
    if (auto H = K.optionalMember("held_sm_ids")) {
      if (D.kind != KindOpaque)
        H->fail("expected only on an entry of kind \"opaque\"");
      for (std::size_t J = 0, M = H->arraySize(); J < M; ++J)
        D.held_sm_ids.push_back(static_cast<unsigned>(H->element(J).asInteger(
            0, 1 << 16, "a non-negative integer (a real SM id)")));
    }
    // Entries are found by name: a second one would be counted twice.
    if (!Seen.emplace(D.kind, D.name).second)
      K.member("name").fail("expected a unique " + D.kind + " entry name, \"" +
                            D.name + "\" repeats");
    P.kernels.push_back(std::move(D));
  }
  return P;
}

void layOutContiguously(Plan &P) {
  int Next = 0;
  for (KernelDecision &K : P.kernels) {
    K.sm_first = Next;
    Next += K.sms;
  }
}

void layOutInTheOrderOf(Plan &P, const Plan &Current) {
  // Where each kernel starts now; past every SM when it holds none.
  std::map<std::string, std::vector<int>> Starts;
  for (const KernelDecision &K : Current.kernels)
    Starts[K.name].push_back(K.sms > 0 ? K.sm_first
                                       : std::numeric_limits<int>::max());
  std::map<std::string, std::size_t> Seen;
  std::vector<std::pair<int, std::size_t>> Order; // (start now, index)
  for (std::size_t I = 0; I < P.kernels.size(); ++I) {
    const std::vector<int> &S = Starts[P.kernels[I].name];
    const std::size_t K = Seen[P.kernels[I].name]++;
    Order.emplace_back(K < S.size() ? S[K] : std::numeric_limits<int>::max(),
                       I);
  }
  std::stable_sort(Order.begin(), Order.end());
  int Next = 0;
  for (const auto &O : Order) {
    P.kernels[O.second].sm_first = Next;
    Next += P.kernels[O.second].sms;
  }
}

} // namespace smpart::policy
