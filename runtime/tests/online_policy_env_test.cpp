// SMPART_POLICY naming an online policy, as README's "Sharing the GPU"
// runs it: the first launch reads the environment and must take the name
// for what it is. (It once checked only the offline names, and read an
// online one as unknown: the controller never started, with a line about
// SM ids.) One test in a binary of its own: the environment is read once
// per process. ctest sets SMPART_POLICY=hsm-fair-online and SMPART_PROFILES.
#include "smpart/runtime.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

bool gpuPresent() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

TEST(OnlinePolicyEnvironment, FirstLaunchTakesTheOnlinePolicyName) {
  if (gpuPresent())
    GTEST_SKIP() << "a GPU is present; runtime_gpu_test runs the controller";
  testing::internal::CaptureStderr();
  smpart::KernelHandle h =
      smpart::launch({"scale", nullptr}, dim3(4), dim3(64), 0, nullptr,
                     [](const smpart::LaunchParams &) {});
  EXPECT_EQ(h.status().code(), smpart::Errc::kNoDevice);
  const std::string err = testing::internal::GetCapturedStderr();
  // Without a GPU the controller cannot start; the line says that, not
  // that the policy is unknown or that the SM ids are.
  EXPECT_EQ(err.find("unknown policy"), std::string::npos) << err;
  EXPECT_EQ(err.find("SM ids are unknown"), std::string::npos) << err;
  EXPECT_NE(err.find("; running without the controller"), std::string::npos)
      << err;
}

} // namespace
