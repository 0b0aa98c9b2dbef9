// The online policies' registry (online_policies.hpp).
#include "online_policies.hpp"

#include "cd_search_online_policy.hpp"
#include "hsm_online_policy.hpp"
#include "priority_policy.hpp"
#include "tlp_dynamic_policy.hpp"

namespace smpart::online {

const std::vector<OnlinePolicyInfo> &onlinePolicies() {
  static const std::vector<OnlinePolicyInfo> All = {
      {"hsm-fair-online", "hsm-fair",
       "HSM-Fair every epoch: equalise measured NP by moving SMs (online "
       "only)"},
      {"hsm-qos-online", "hsm-qos",
       "HSM-QoS every epoch: SMs for the high-priority kernel's measured NP "
       "target, the rest for the sum of NP (online only)"},
      {"priority", "even",
       "plain priority: a high-priority kernel gets the SMs its curve needs "
       "at its arrival, best-effort kernels the rest (preempted if none) "
       "until it leaves (online only)"},
      {"cd-search-online", "even",
       "CD-search live: classify on the even share, then the mode's search "
       "step by step, each step measured for an epoch (online only)"},
      {"tlp-dynamic", "tlp",
       "TLP modulation every sampling period: Alg. 1's start, CTAs per SM "
       "from measured pipeline trends, bypass learning (online only)"},
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
  if (Info.name == "cd-search-online") {
    CdSearchOnlineOptions O;
    O.loss = Options.cd_loss;
    return std::make_shared<CdSearchOnlinePolicy>(std::move(Profiles), O);
  }
  if (Info.name == "tlp-dynamic")
    return std::make_shared<TlpDynamicPolicy>(std::move(Profiles));
  if (Info.name == "priority")
    return std::make_shared<PriorityPolicy>(std::move(Profiles));
  HsmOnlineOptions O;
  O.qos = Info.base == "hsm-qos";
  // HSM-Fair's projected final NP needs each kernel's time alone, which a
  // memory-bound kernel's co-run cannot show (README, "Calibration"); for
  // HSM-QoS the epoch alone would take the SMs of the high-priority kernel
  // or give it a co-runner's, so it keeps the profile's level.
  O.probe = !O.qos;
  // The paper's 0.9 spares preemptions; online a step costs one chunk, so
  // the online default is HsmOnlineOptions's (controller README, "Online
  // HSM"), unless a threshold was asked for.
  if (Options.fair_threshold != policy::PolicyOptions{}.fair_threshold)
    O.fair_threshold = Options.fair_threshold;
  O.qos_target = Options.qos_target;
  auto Hsm = std::make_shared<HsmOnlinePolicy>(Profiles, O);
  if (!O.qos)
    return Hsm;
  // Its latency-critical kernel keeps its SMs until it leaves.
  return std::make_shared<HighPriorityHold>(std::move(Hsm),
                                            std::move(Profiles));
}

} // namespace smpart::online
