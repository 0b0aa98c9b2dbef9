// The online policies' registry (online_policies.hpp).
#include "online_policies.hpp"

#include "hsm_online_policy.hpp"

namespace smpart::online {

const std::vector<OnlinePolicyInfo> &onlinePolicies() {
  static const std::vector<OnlinePolicyInfo> All = {
      {"hsm-fair-online", "hsm-fair",
       "HSM-Fair every epoch: equalise measured NP by moving SMs (online "
       "only)"},
      {"hsm-qos-online", "hsm-qos",
       "HSM-QoS every epoch: SMs for the high-priority kernel's measured NP "
       "target, the rest for the sum of NP (online only)"},
  };
  return All;
}

const OnlinePolicyInfo *findOnlinePolicy(std::string_view Name) {
  for (const OnlinePolicyInfo &I : onlinePolicies())
    if (I.name == Name)
      return &I;
  return nullptr;
}

std::shared_ptr<OnlinePolicy>
makeOnlinePolicy(const OnlinePolicyInfo &Info, policy::ProfileSet Profiles,
                 const policy::PolicyOptions &Options) {
  HsmOnlineOptions O;
  O.qos = Info.base == "hsm-qos";
  O.fair_threshold = Options.fair_threshold;
  O.qos_target = Options.qos_target;
  return std::make_shared<HsmOnlinePolicy>(std::move(Profiles), O);
}

} // namespace smpart::online
