// What a program without a usable GPU, or with a bad SMPART_POLICY, hears of
// its rewritten launches: the first failure of the process is one line on
// stderr naming the kernel and the cause, an unknown policy is named
// although there is no GPU, and CUDA's cudaGetLastError() reports each
// launch as the <<<>>> it replaced would have. One test in a binary of its
// own: both lines are printed once per process. ctest sets
// SMPART_POLICY=bogus.
#include "smpart/runtime.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

namespace {

bool gpuPresent() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

/// Stands for the original kernel: the address the closure launches.
void originalKernel(float *) {}

unsigned count(const std::string &text, const std::string &what) {
  unsigned n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos;
       at = text.find(what, at + 1))
    ++n;
  return n;
}

TEST(LaunchFailure, FirstFailureIsOneLineAndCudaSeesEachLaunch) {
  if (gpuPresent())
    GTEST_SKIP() << "a GPU is present; this test covers the no-GPU path";
  setenv("SMPART_POLICY", "bogus", 0);
  // What CUDA says of a launch here, and clears.
  float *data = nullptr;
  void *args[] = {&data};
  const cudaError_t expected =
      cudaLaunchKernel(reinterpret_cast<const void *>(&originalKernel), dim3(4),
                       dim3(64), args, 0, nullptr);
  ASSERT_NE(expected, cudaSuccess);
  cudaGetLastError();

  unsigned original_launches = 0;
  auto closure = [&](const smpart::LaunchParams &p) {
    if (!p.original)
      return;
    ++original_launches;
    void *argv[] = {&data};
    cudaLaunchKernel(reinterpret_cast<const void *>(&originalKernel), p.grid,
                     p.block, argv, p.smem, p.stream);
  };
  testing::internal::CaptureStderr();
  for (int i = 0; i < 2; ++i) {
    smpart::KernelHandle h = smpart::launch({"scale", nullptr, true}, dim3(4),
                                            dim3(64), 0, nullptr, closure);
    EXPECT_EQ(h.status().code(), smpart::Errc::kNoDevice);
    // Every launch, not only the first: the original launch ran instead,
    // and CUDA reports it as it reports a <<<>>> launch.
    EXPECT_EQ(cudaGetLastError(), expected) << "launch " << i;
    EXPECT_EQ(smpart::getLastError().code(), smpart::Errc::kNoDevice);
  }
  // A kernel without its original: no original launch, no second line.
  smpart::KernelHandle h = smpart::launch({"plain", nullptr}, dim3(4), dim3(64),
                                          0, nullptr, closure);
  EXPECT_EQ(h.status().code(), smpart::Errc::kNoDevice);
  const std::string err = testing::internal::GetCapturedStderr();

  EXPECT_EQ(original_launches, 2u);
  EXPECT_EQ(count(err, "smpart: kernel '"), 1u) << err;
  EXPECT_NE(err.find("smpart: kernel 'scale': no usable CUDA GPU"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("launched the original kernel instead"), std::string::npos)
      << err;
  // The unknown policy is named, with the valid ones, without a GPU.
  EXPECT_EQ(count(err, "SMPART_POLICY=bogus: unknown policy (one of: "), 1u)
      << err;
}

} // namespace
