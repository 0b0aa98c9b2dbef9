// The Policy interface and the registry smpart-plan looks names up in.
// A policy maps a ProfileSet to a Plan; it is deterministic (same input,
// same output) and throws InputError when a field it needs is missing.
#pragma once

#include "smpart/policy/plan.hpp"
#include "smpart/policy/profile.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace smpart::policy {

struct PolicyOptions {
  bool explain = false;        // add classification/mode/steps to notes
  double fair_threshold = 0.9; // HSM-Fair: act when min/max NP below this
  double qos_target = 0.8;     // HSM-QoS: NP target when np_target absent
  double cd_loss = 0.05;       // CD-search: tolerated performance loss
};

class Policy {
public:
  virtual ~Policy() = default;
  virtual std::string_view name() const = 0;
  virtual std::string_view summary() const = 0;
  virtual Plan decide(const ProfileSet &Set,
                      const PolicyOptions &Options) const = 0;
};

/// Every policy, in a stable order.
const std::vector<const Policy *> &allPolicies();
/// nullptr when \p Name is unknown.
const Policy *findPolicy(std::string_view Name);

/// printf-style helper for notes.
std::string formatNote(const char *Fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

} // namespace smpart::policy
