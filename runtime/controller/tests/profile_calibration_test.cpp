// What the online policies learn of a wrong profile from the samples they
// see (online/report_kernels.hpp).
#include "report_kernels.hpp"

#include <gtest/gtest.h>

#include <utility>

using smpart::EpochSample;
using smpart::IsolatedSource;
using smpart::online::calibrateProfile;
using smpart::online::privateRateOf;
using smpart::online::ProfileCalibration;

namespace {

smpart::policy::KernelProfile profile() {
  smpart::policy::KernelProfile P;
  P.name = "k";
  P.total_blocks = 1000;
  for (const auto &[Sms, Ms] : {std::pair{66, 2.0}, std::pair{132, 1.0}}) {
    smpart::policy::SmPoint Point;
    Point.sms = Sms;
    Point.time_ms = Ms; // 1 block per us alone on 132 SMs
    P.by_sms.push_back(Point);
  }
  return P;
}

EpochSample sample(double Np, bool Alone = false) {
  EpochSample S;
  S.name = "k";
  S.steady = true;
  S.isolated_source = IsolatedSource::Profile;
  S.np = Np;
  S.alone = Alone;
  return S;
}

TEST(ProfileCalibration, ACoRunSampleOnlyProvesAProfileTooSlow) {
  const auto P = profile();
  ProfileCalibration C;
  calibrateProfile(C, P, sample(0.6)); // contention or a profile too fast
  EXPECT_DOUBLE_EQ(privateRateOf(P, sample(0.6), 132, C), 1.0);
  calibrateProfile(C, P, sample(1.02)); // within the noise
  EXPECT_DOUBLE_EQ(privateRateOf(P, sample(1.02), 132, C), 1.0);
  calibrateProfile(C, P, sample(1.2)); // faster than alone: too slow
  EXPECT_DOUBLE_EQ(privateRateOf(P, sample(1.2), 132, C), 1.2);
  calibrateProfile(C, P, sample(0.6));
  EXPECT_DOUBLE_EQ(privateRateOf(P, sample(0.6), 132, C), 1.2);
}

TEST(ProfileCalibration, ASampleAloneIsTheIsolatedRateEitherWay) {
  const auto P = profile();
  ProfileCalibration C;
  calibrateProfile(C, P, sample(0.7, /*Alone=*/true)); // profile too fast
  EXPECT_DOUBLE_EQ(privateRateOf(P, sample(0.7), 132, C), 0.7);
  calibrateProfile(C, P, sample(1.3, /*Alone=*/true));
  EXPECT_DOUBLE_EQ(privateRateOf(P, sample(1.3), 132, C), 1.3);
  // Not steady (its allocation moved during the epoch): nothing learnt.
  EpochSample Moving = sample(0.5, true);
  Moving.steady = false;
  calibrateProfile(C, P, Moving);
  EXPECT_DOUBLE_EQ(privateRateOf(P, Moving, 132, C), 1.3);
}

} // namespace
