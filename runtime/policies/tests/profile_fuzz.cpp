// libFuzzer entry point: the loader, every policy, the plan round trip and
// the evaluator must either succeed or raise InputError on any input.
// Build with -DSMPART_BUILD_FUZZERS=ON and clang; run e.g.
//   smpart_profile_fuzz -max_total_time=300 corpus/ runtime/policies/examples
#include "smpart/policy/evaluator.hpp"
#include "smpart/policy/policy.hpp"
#include "smpart/policy/profile_loader.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

using namespace smpart::policy;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  std::string Text(reinterpret_cast<const char *>(Data), Size);
  ProfileSet S;
  try {
    S = parseProfiles(Text, "fuzz.json");
  } catch (const InputError &) {
    return 0;
  }
  for (const Policy *Pol : allPolicies()) {
    try {
      PolicyOptions O;
      O.explain = true;
      Plan P = Pol->decide(S, O);
      Plan Back = parsePlan(planToJson(P).dump(), "plan.json");
      evaluationToJson(evaluatePlan(Back, S, "plan.json")).dump();
    } catch (const InputError &) {
    }
  }
  return 0;
}
