// What the online policies learn of a wrong profile from the samples the
// controller takes (online/report_kernels.hpp: calibrateProfile).
#include "fake_kernel.hpp"
#include "report_kernels.hpp"

#include "smpart/controller.hpp"
#include "smpart/policy/profile_loader.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

using namespace smpart;
using smpart::online::calibrateProfile;
using smpart::online::privateRateOf;
using smpart::online::ProfileCalibration;
using smpart::testing::FakeKernel;

namespace {

/// sgemm's profile: 20000 blocks in 10 ms on 132 SMs at its occupancy (4
/// CTAs per SM), 20 ms on 66: 2 and 1 blocks per us.
struct Sgemm {
  std::vector<unsigned> Ids;
  policy::ProfileSet Profiles = policy::loadProfiles(
      std::string(SMPART_POLICY_EXAMPLES) + "/compute_memory_pair.json");
  const policy::KernelProfile &P = *online::profileWithCurve(Profiles, "sgemm");
  std::unique_ptr<Controller> C;
  std::shared_ptr<FakeKernel> A;
  Sgemm() {
    for (unsigned I = 0; I < 132; ++I)
      Ids.push_back(I);
    ControllerOptions O;
    O.warn = [](const std::string &) {};
    C = std::make_unique<Controller>(*policy::findPolicy("even"), Profiles, Ids,
                                     O);
    A = std::make_shared<FakeKernel>(1, "sgemm", 100000000, 4, Ids, nullptr);
    C->onArrival(A);
    C->epoch(0);
  }
  /// One epoch of 1000 us in which sgemm runs \p Steps advances.
  EpochSample epoch(double &Now, unsigned Steps) {
    A->advance(Steps);
    Now += 1000;
    C->epoch(Now);
    return C->lastEpoch().kernels[0];
  }
};

TEST(ProfileCalibration, ACoRunSampleOnlyProvesAProfileTooSlow) {
  Sgemm K;
  auto B = std::make_shared<FakeKernel>(2, "stream_triad", 100000000, 8, K.Ids,
                                        nullptr);
  K.C->onArrival(B); // 66 SMs each
  double Now = 0;
  K.epoch(Now, 1); // the allocation moved during this one
  ProfileCalibration C;
  // 264 blocks per ms on 66 SMs against the profile's 1000: contention, or
  // a profile too fast; a co-run cannot tell.
  EpochSample S = K.epoch(Now, 1);
  ASSERT_TRUE(S.steady);
  EXPECT_FALSE(S.alone);
  EXPECT_NEAR(S.profile_rate, 1.0, 1e-9);
  calibrateProfile(C, K.P, S);
  EXPECT_NEAR(privateRateOf(K.P, S, 132, C), 2.0, 1e-9);
  // Faster than the profile allows alone: it is too slow by that much.
  S = K.epoch(Now, 5); // 1320 blocks per ms
  calibrateProfile(C, K.P, S);
  EXPECT_NEAR(privateRateOf(K.P, S, 132, C), 2.0 * 1.32, 1e-9);
}

TEST(ProfileCalibration, AnEpochAloneCorrectsAProfileTooFast) {
  Sgemm K;
  double Now = 0;
  // Alone on 132 SMs: 528 blocks per ms, a quarter of what the profile
  // says. The controller learns the rate at this allocation at once, so
  // the sample's isolated rate is that learned one (NP 1); its profile
  // rate still measures the profile.
  const EpochSample S = K.epoch(Now, 1);
  ASSERT_TRUE(S.steady);
  ASSERT_TRUE(S.alone);
  EXPECT_EQ(S.isolated_source, IsolatedSource::Learned);
  EXPECT_NEAR(S.np, 1.0, 1e-9);
  EXPECT_NEAR(S.profile_rate, 2.0, 1e-9);
  ProfileCalibration C;
  calibrateProfile(C, K.P, S);
  EXPECT_NEAR(privateRateOf(K.P, S, 132, C), 0.528, 1e-9);
  // Not alone any more: slower co-run samples leave the factor.
  auto B = std::make_shared<FakeKernel>(2, "stream_triad", 100000000, 8, K.Ids,
                                        nullptr);
  K.C->onArrival(B);
  K.epoch(Now, 1);
  const EpochSample T = K.epoch(Now, 1);
  ASSERT_TRUE(T.steady);
  calibrateProfile(C, K.P, T);
  EXPECT_NEAR(privateRateOf(K.P, T, 132, C), 0.528, 1e-9);
}

} // namespace
