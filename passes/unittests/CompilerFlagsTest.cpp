#include "nvcc/CompilerFlags.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

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
       "-Xcompiler", "-Wall,-fPIC", "-I", "inc", "-DX=1", "-lineinfo", "-ccbin",
       "g++-12", "-c", "a.cu", "-o", "a.o"});
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

TEST(CompilerFlags, SeparateCompilationBecomesGpuRdc) {
  for (std::vector<std::string> Rdc :
       {std::vector<std::string>{"nvcc", "-rdc=true", "-c", "a.cu"},
        {"nvcc", "-rdc", "true", "-c", "a.cu"},
        {"nvcc", "--relocatable-device-code=true", "-c", "a.cu"},
        {"nvcc", "-dc", "a.cu"},
        {"nvcc", "--device-c", "a.cu"}}) {
    std::vector<std::string> Out = translateNvccArgs(Rdc);
    EXPECT_TRUE(has(Out, "-fgpu-rdc")) << Rdc[1];
    EXPECT_TRUE(has(Out, "-c")) << Rdc[1];
    EXPECT_FALSE(has(Out, "true")) << Rdc[1];
  }
  std::vector<std::string> Whole =
      translateNvccArgs({"nvcc", "-rdc=false", "-c", "a.cu"});
  EXPECT_FALSE(has(Whole, "-fgpu-rdc"));
  EXPECT_FALSE(has(Whole, "-rdc=false"));
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

TEST(CompilerFlags, CMakeNinjaNvccEntry) {
  // CMake's Ninja generator writes this for nvcc; clang knows none of
  // -forward-unknown-to-host-compiler, -x cu, --generate-code.
  std::vector<std::string> Out = translateNvccArgs(
      {"/usr/local/cuda/bin/nvcc", "-forward-unknown-to-host-compiler", "-DX",
       "-O3", "--generate-code=arch=compute_80,code=[compute_80,sm_80]", "-x",
       "cu", "-c", "a.cu", "-o", "a.o"});
  EXPECT_FALSE(has(Out, "-forward-unknown-to-host-compiler"));
  EXPECT_FALSE(has(Out, "cu"));
  EXPECT_TRUE(has(Out, "--cuda-gpu-arch=sm_80"));
  EXPECT_TRUE(has(Out, "-DX"));
}

TEST(CompilerFlags, OptionsFileIsReadRelativeToTheEntry) {
  // CMake's Makefiles generator: includes in --options-file includes_CUDA.rsp.
  llvm::SmallString<128> Dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("smpart-flags", Dir));
  {
    std::error_code EC;
    llvm::raw_fd_ostream OS((Dir + "/includes_CUDA.rsp").str(), EC);
    OS << "-I/opt/one \"-I/opt/two words\"\n-isystem /opt/sys";
  }
  std::vector<std::string> Out = translateNvccArgs(
      {"nvcc", "--options-file", "includes_CUDA.rsp", "-arch=sm_75", "a.cu"},
      Dir);
  EXPECT_TRUE(has(Out, "-I/opt/one"));
  EXPECT_TRUE(has(Out, "-I/opt/two words"));
  EXPECT_TRUE(has(Out, "/opt/sys"));
  EXPECT_TRUE(has(Out, "--cuda-gpu-arch=sm_75"));
  EXPECT_FALSE(has(Out, "--options-file"));
  llvm::sys::fs::remove_directories(Dir);
}

TEST(CompilerFlags, NvccOnlyFlagsAfterDashDashAreTranslated) {
  // `smpart-transform a.cu -- -arch=sm_80 ...`: the program is not nvcc,
  // but these spellings exist only in nvcc.
  std::vector<std::string> Out = translateNvccArgs(
      {"clang-tool", "-arch=sm_80", "--expt-relaxed-constexpr", "-Xcompiler",
       "-fopenmp", "-Werror", "-x", "cuda", "-G", "a.cu"});
  EXPECT_TRUE(has(Out, "--cuda-gpu-arch=sm_80"));
  EXPECT_FALSE(has(Out, "-arch=sm_80"));
  EXPECT_FALSE(has(Out, "--expt-relaxed-constexpr"));
  EXPECT_TRUE(has(Out, "-fopenmp"));
  // Clang's own meanings stay.
  EXPECT_TRUE(has(Out, "-Werror"));
  EXPECT_TRUE(has(Out, "cuda"));
  EXPECT_TRUE(has(Out, "-G"));
}

TEST(CompilerFlags, AdjusterSetsOneSideAndOneArch) {
  CudaSetup Setup;
  Setup.CudaPath = "/opt/cuda";
  Setup.GpuArch = "sm_90";
  Setup.ResourceDir = "/res";
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
  auto Device =
      cudaAdjuster(Setup, /*DeviceSide=*/true)({"clang++", "a.cu"}, "a.cu");
  EXPECT_TRUE(has(Device, "--cuda-device-only"));
  EXPECT_TRUE(has(Device, "--cuda-gpu-arch=sm_90"));
}

TEST(CompilerFlags, NvccMacrosComeFromTheToolkitVersion) {
  llvm::SmallString<128> Dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("smpart-cuda", Dir));
  ASSERT_FALSE(llvm::sys::fs::create_directory(Dir + "/include"));
  {
    std::error_code EC;
    llvm::raw_fd_ostream OS((Dir + "/include/cuda.h").str(), EC);
    OS << "#ifndef __cuda_cuda_h__\n#define CUDA_VERSION 12040\n";
  }
  std::vector<std::string> Macros = nvccMacros(std::string(Dir));
  EXPECT_TRUE(has(Macros, "-D__CUDACC_VER_MAJOR__=12"));
  EXPECT_TRUE(has(Macros, "-D__CUDACC_VER_MINOR__=4"));
  EXPECT_TRUE(has(Macros, "-D__CUDA_API_VER_MAJOR__=12"));
  EXPECT_TRUE(has(Macros, "-D_CG_CLUSTER_INTRINSICS_AVAILABLE"));
  // cccl would take clang for nvcc and use nvcc's builtins.
  EXPECT_FALSE(has(Macros, "-D__NVCC__"));
  llvm::sys::fs::remove_directories(Dir);
  // No cuda.h: no version to claim.
  EXPECT_FALSE(has(nvccMacros("/no/such/cuda"), "-D__CUDACC_VER_MAJOR__=12"));
}

TEST(CompilerFlags, CompatHeaderOnlyWithTheToolkitHeaders) {
  CudaSetup Setup;
  Setup.CudaPath = "/opt/cuda";
  Setup.GpuArch = "sm_90";
  Setup.ResourceDir = "/res";
  Setup.CompatHeader = "/share/smpart-transform/include/nvcc_compat.h";
  auto With = cudaAdjuster(Setup, false)({"clang++", "a.cu"}, "a.cu");
  auto At = std::find(With.begin(), With.end(), Setup.CompatHeader);
  ASSERT_NE(At, With.end());
  EXPECT_EQ(*(At - 1), "-include");
  EXPECT_TRUE(has(With, "-D_CG_CLUSTER_INTRINSICS_AVAILABLE"));
  auto Without = cudaAdjuster(Setup, false)(
      {"clang++", "-nocudainc", "-nocudalib", "a.cu"}, "a.cu");
  EXPECT_FALSE(has(Without, Setup.CompatHeader));
  EXPECT_FALSE(has(Without, "-D_CG_CLUSTER_INTRINSICS_AVAILABLE"));
}

} // namespace
} // namespace smpart
