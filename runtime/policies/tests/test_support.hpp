// Helpers for the policy tests: profiles are written as JSON (readable next
// to the hand arithmetic) and go through the real loader.
#pragma once

#include "smpart/policy/plan.hpp"
#include "smpart/policy/policy.hpp"
#include "smpart/policy/profile_loader.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace smpart::policy::test {

using nlohmann::json;

/// A GPU with \p Sms SMs and H200-like per-SM limits and bandwidths.
json gpu(int Sms = 132);

/// {"schema":..., "gpu": Gpu, "kernels": Kernels} through parseProfiles.
ProfileSet profiles(const json &Gpu, const json &Kernels);

/// Loads runtime/policies/examples/NAME.
ProfileSet example(const std::string &Name);

/// Runs policy \p Name.
Plan decide(const std::string &Name, const ProfileSet &Set,
            bool Explain = false);

/// The message of the InputError thrown by \p F, or "" if none.
template <typename F> std::string errorOf(F &&Fn) {
  try {
    Fn();
  } catch (const InputError &E) {
    return E.what();
  }
  return "";
}

const KernelDecision &find(const Plan &P, const std::string &Name);

} // namespace smpart::policy::test
