// What the online policies read of a report kernel, shared so that they
// agree on it.
#pragma once

#include "smpart/controller_epoch.hpp"
#include "smpart/policy/curves.hpp"
#include "smpart/policy/policy.hpp"
#include "smpart/policy/profile.hpp"

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace smpart::online {

/// The kernel a report or plan name stands for: "name#instance" names one
/// launch of kernel "name" (the controller's policyInput()).
inline std::string_view baseName(std::string_view Name) {
  return Name.substr(0, Name.find('#'));
}

/// The profile of report kernel \p Name ("name#instance" names one launch
/// of the profiled kernel); nullptr without one. Called for every kernel
/// several times per epoch: no copy of the name.
inline const policy::KernelProfile *
profileNamed(const policy::ProfileSet &Profiles, std::string_view Name) {
  const std::string_view Base = baseName(Name);
  for (const policy::KernelProfile &K : Profiles.kernels)
    if (K.name == Base)
      return &K;
  return nullptr;
}

/// The same if it has an SM curve, which every online model needs; nullptr
/// otherwise (the kernel keeps what it was given).
inline const policy::KernelProfile *
profileWithCurve(const policy::ProfileSet &Profiles, std::string_view Name) {
  const policy::KernelProfile *K = profileNamed(Profiles, Name);
  return K && !K->by_sms.empty() ? K : nullptr;
}

/// Measured private rate over the profile's, per kernel name: what the
/// online policies learn of profiles that are too slow (calibrateProfile).
using ProfileCalibration = std::map<std::string, double>;

/// Co-runners only slow a kernel down: a steady sample of profiled kernel
/// \p P measured faster than its profile's isolated rate at the same
/// allocation (EpochSample::profile_rate), beyond the noise (3 %), proves
/// the profile's times too long by at least that much; \p C keeps the
/// largest such factor. A sample of the kernel alone (nothing contended
/// with it) is its isolated rate: it sets the factor either way, so a
/// profile too fast is corrected too, which a co-run sample cannot tell
/// from contention. One factor scales the whole curve (privateRateOf
/// applies it on every SM), as a misprofiled time does.
inline void calibrateProfile(ProfileCalibration &C,
                             const policy::KernelProfile &P,
                             const EpochSample &S) {
  if (!S.steady || S.preempted || !(S.profile_rate > 0) || !(S.rate > 0))
    return;
  const double Measured = S.rate / S.profile_rate;
  double &K = C.try_emplace(P.name, 1.0).first->second;
  if (S.alone || Measured > 1.03 * K)
    K = Measured;
}

/// Private-mode rate of sample \p S of profiled kernel \p P: blocks per
/// microsecond alone on all \p NumSms SMs at its occupancy (the SM curve
/// was measured there), calibrated by \p C; 0 when the profile gives no
/// time.
inline double privateRateOf(const policy::KernelProfile &P,
                            const EpochSample &S, double NumSms,
                            const ProfileCalibration &C) {
  const double Total = P.total_blocks ? static_cast<double>(*P.total_blocks)
                                      : static_cast<double>(S.total);
  const double Ms = policy::timeAtSms(P, NumSms);
  const auto K = C.find(P.name);
  return Total > 0 && Ms > 0
             ? Total / (Ms * 1000.0) * (K != C.end() ? K->second : 1.0)
             : 0;
}

/// The report's kernel ids in report order: a change of them is an
/// arrival or a departure.
inline std::vector<unsigned long long> kernelIds(const EpochReport &R) {
  std::vector<unsigned long long> Ids;
  for (const EpochSample &S : R.kernels)
    Ids.push_back(S.id);
  return Ids;
}

/// A decision that gives sample \p S \p Sms SMs and keeps its CTA knobs.
inline policy::KernelDecision keepCtas(const EpochSample &S, int Sms) {
  policy::KernelDecision D;
  D.name = S.name;
  D.sms = Sms;
  D.ctas_per_sm = static_cast<int>(S.ctas_per_sm);
  D.bypass_ctas_per_sm = static_cast<int>(S.bypass_ctas_per_sm);
  return D;
}

} // namespace smpart::online
