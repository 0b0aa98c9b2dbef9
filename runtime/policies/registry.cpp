// The registry: one static instance per policy, in the order --list-policies
// prints them.
#include "smpart/policy/cd_search_policy.hpp"
#include "smpart/policy/even_policy.hpp"
#include "smpart/policy/greedy_policy.hpp"
#include "smpart/policy/hsm_policies.hpp"
#include "smpart/policy/power_aware_policy.hpp"
#include "smpart/policy/tlp_policy.hpp"

#include <cstdarg>
#include <cstdio>

namespace smpart::policy {

const std::vector<const Policy *> &allPolicies() {
  // Never destroyed: a controller holds its policy by reference, and
  // libsmpart's notice thread may still re-plan through it while static
  // objects are destroyed at exit (a destroyed policy's virtual call
  // aborts the process).
  static const std::vector<const Policy *> *All =
      new std::vector<const Policy *>{new EvenPolicy,      new GreedyPolicy,
                                      new CdSearchPolicy,  new HsmFairPolicy,
                                      new HsmQosPolicy,    new TlpPolicy,
                                      new PowerAwarePolicy};
  return *All;
}

const Policy *findPolicy(std::string_view Name) {
  for (const Policy *P : allPolicies())
    if (P->name() == Name)
      return P;
  return nullptr;
}

std::string formatNote(const char *Fmt, ...) {
  char Buf[512];
  va_list Args;
  va_start(Args, Fmt);
  int N = std::vsnprintf(Buf, sizeof(Buf), Fmt, Args);
  va_end(Args);
  if (N < 0)
    return {};
  if (static_cast<std::size_t>(N) < sizeof(Buf))
    return std::string(Buf, static_cast<std::size_t>(N));
  std::string Out(static_cast<std::size_t>(N) + 1, '\0');
  va_start(Args, Fmt);
  std::vsnprintf(Out.data(), Out.size(), Fmt, Args);
  va_end(Args);
  Out.resize(static_cast<std::size_t>(N));
  return Out;
}

} // namespace smpart::policy
