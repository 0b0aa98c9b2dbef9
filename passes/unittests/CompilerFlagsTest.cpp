#include "pipeline/CompilerFlags.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace smpart {
namespace {

bool has(const std::vector<std::string> &Args, const std::string &A) {
  return std::find(Args.begin(), Args.end(), A) != Args.end();
}

TEST(CompilerFlags, NvccCommandBecomesClang) {
  std::vector<std::string> Out = translateNvccArgs(
      {"/usr/local/cuda/bin/nvcc", "-arch=sm_80", "--expt-relaxed-constexpr",
       "-Xcompiler", "-Wall,-fPIC", "-I", "inc", "-DX=1", "-lineinfo",
       "-ccbin", "g++-12", "-c", "a.cu", "-o", "a.o"});
  EXPECT_EQ(Out[0], "clang++");
  EXPECT_TRUE(has(Out, "--cuda-gpu-arch=sm_80"));
  EXPECT_TRUE(has(Out, "-Wall"));
  EXPECT_TRUE(has(Out, "-fPIC"));
  EXPECT_TRUE(has(Out, "-DX=1"));
  EXPECT_TRUE(has(Out, "inc"));
  EXPECT_FALSE(has(Out, "--expt-relaxed-constexpr"));
  EXPECT_FALSE(has(Out, "-lineinfo"));
  EXPECT_FALSE(has(Out, "g++-12"));
  EXPECT_FALSE(has(Out, "-arch=sm_80"));
}

TEST(CompilerFlags, GencodePicksTheRealArch) {
  std::vector<std::string> Out = translateNvccArgs(
      {"nvcc", "-gencode", "arch=compute_90,code=sm_90", "a.cu"});
  EXPECT_TRUE(has(Out, "--cuda-gpu-arch=sm_90"));
  EXPECT_FALSE(has(Out, "arch=compute_90,code=sm_90"));
}

TEST(CompilerFlags, ClangCommandPassesThrough) {
  std::vector<std::string> In = {"clang++", "-x", "cuda", "-O2", "a.cu"};
  EXPECT_EQ(translateNvccArgs(In), In);
}

TEST(CompilerFlags, AdjusterSetsOneSideAndOneArch) {
  CudaSetup Setup{"/opt/cuda", "sm_90", "/res"};
  auto Host = cudaAdjuster(Setup, /*DeviceSide=*/false)(
      {"clang++", "--cuda-gpu-arch=sm_80", "--cuda-gpu-arch=sm_90",
       "--cuda-device-only", "a.cu"},
      "a.cu");
  EXPECT_TRUE(has(Host, "--cuda-host-only"));
  EXPECT_FALSE(has(Host, "--cuda-device-only"));
  EXPECT_TRUE(has(Host, "--cuda-gpu-arch=sm_80"));
  EXPECT_FALSE(has(Host, "--cuda-gpu-arch=sm_90"));
  EXPECT_TRUE(has(Host, "--cuda-path=/opt/cuda"));
  EXPECT_TRUE(has(Host, "-resource-dir=/res"));
  auto Device = cudaAdjuster(Setup, /*DeviceSide=*/true)({"clang++", "a.cu"},
                                                         "a.cu");
  EXPECT_TRUE(has(Device, "--cuda-device-only"));
  EXPECT_TRUE(has(Device, "--cuda-gpu-arch=sm_90"));
}

} // namespace
} // namespace smpart
