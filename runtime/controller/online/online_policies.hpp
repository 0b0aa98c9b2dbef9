// Online policies selectable by name (SMPART_POLICY, the simulator's
// --policy): each pairs an offline policy, which plans on arrival and
// departure from the profiles, with an OnlinePolicy that corrects the plan
// every epoch from measurements.
#pragma once

#include "smpart/controller_epoch.hpp"
#include "smpart/policy/policy.hpp"
#include "smpart/policy/profile.hpp"

#include <memory>
#include <string_view>
#include <vector>

namespace smpart::online {

struct OnlinePolicyInfo {
  std::string_view name;
  std::string_view base; ///< the offline policy planning arrivals
  std::string_view summary;
};

/// Every online policy, in a stable order.
const std::vector<OnlinePolicyInfo> &onlinePolicies();
/// nullptr when \p Name is not an online policy.
const OnlinePolicyInfo *findOnlinePolicy(std::string_view Name);

/// A fresh instance (online policies keep per-run state).
std::shared_ptr<OnlinePolicy>
makeOnlinePolicy(const OnlinePolicyInfo &Info, policy::ProfileSet Profiles,
                 const policy::PolicyOptions &Options);

} // namespace smpart::online
