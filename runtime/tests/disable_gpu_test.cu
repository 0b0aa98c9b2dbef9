// SMPART_DISABLE=1 on a GPU (label gpu; skips without one): a rewritten
// launch whose kernel keeps its original definition runs that original
// kernel with the original grid, block, dynamic shared memory and stream,
// in stream order, and computes what the original launch computes. ctest
// runs this binary with SMPART_DISABLE=1 (read once per process).
#include "smpart/device.cuh"
#include "smpart/runtime.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <vector>

namespace {

/// What one thread of a launch saw.
struct Seen {
  unsigned grid_x, block_x, smem;
};

// A kernel and its rewritten overload, as smpart-transform leaves them:
// the original kept beside the persistent form.
__global__ void scale(float *y, Seen *seen, int n) {
  extern __shared__ float tile[];
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned smem = 0;
  asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(smem));
  tile[threadIdx.x] = i < n ? y[i] : 0.f;
  __syncthreads();
  if (i < n) {
    y[i] = 2.f * tile[threadIdx.x] + 1.f;
    seen[i] = {gridDim.x, blockDim.x, smem};
  }
}
__global__ void scale(smpart::LaunchControl smpart_ctl, float *y, Seen *seen,
                      int n) {
  // Never runs under SMPART_DISABLE=1: marks every element it would touch.
  for (smpart::detail::Cta smpart_cta(smpart_ctl); smpart_cta.next();) {
    const int i = smpart_cta.blockIdx().x * blockDim.x + threadIdx.x;
    if (i < n)
      seen[i] = {0xdeadu, 0xdeadu, 0xdeadu};
  }
}

#define CHECK_CUDA(x) ASSERT_EQ((x), cudaSuccess) << #x

TEST(GpuDisabled, RewrittenLaunchRunsTheOriginalUnchanged) {
  ASSERT_STREQ(std::getenv("SMPART_DISABLE"), "1")
      << "run through ctest, which sets SMPART_DISABLE=1";
  if (const smpart::Status st = smpart::init(); !st.ok())
    GTEST_SKIP() << st.message();
  const int n = 1000, block = 128, grid = (n + block - 1) / block;
  const std::size_t smem = block * sizeof(float);
  cudaStream_t s = nullptr;
  CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  float *y = nullptr;
  Seen *seen = nullptr;
  CHECK_CUDA(cudaMalloc(&y, n * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&seen, n * sizeof(Seen)));
  std::vector<float> in(n), out(n);
  for (int i = 0; i < n; ++i)
    in[i] = static_cast<float>(i % 17);
  // Stream order: the copy in before the launch, the copy out after it.
  CHECK_CUDA(cudaMemcpyAsync(y, in.data(), n * sizeof(float),
                             cudaMemcpyHostToDevice, s));
  CHECK_CUDA(cudaMemsetAsync(seen, 0, n * sizeof(Seen), s));
  // The launch smpart-transform writes for scale<<<grid, block, smem, s>>>.
  const smpart::KernelHandle h = smpart::launch(
      {"scale",
       reinterpret_cast<const void *>(
           static_cast<void (*)(smpart::LaunchControl, float *, Seen *, int)>(
               &scale)),
       true},
      grid, block, smem, s,
      [smpart_args =
           std::make_tuple(y, seen, n)](const smpart::LaunchParams &smpart_p) {
        std::apply(
            [&](const auto &...smpart_a) {
              if (smpart_p.original)
                scale<<<smpart_p.grid, smpart_p.block, smpart_p.smem,
                        smpart_p.stream>>>(smpart_a...);
              else
                scale<<<smpart_p.grid, smpart_p.block, smpart_p.smem,
                        smpart_p.stream>>>(smpart_p.ctl, smpart_a...);
            },
            smpart_args);
      });
  EXPECT_FALSE(h.valid()) << "no control block under SMPART_DISABLE";
  CHECK_CUDA(cudaGetLastError());
  std::vector<Seen> got(n);
  CHECK_CUDA(cudaMemcpyAsync(out.data(), y, n * sizeof(float),
                             cudaMemcpyDeviceToHost, s));
  CHECK_CUDA(cudaMemcpyAsync(got.data(), seen, n * sizeof(Seen),
                             cudaMemcpyDeviceToHost, s));
  CHECK_CUDA(cudaStreamSynchronize(s));
  for (int i = 0; i < n; ++i) {
    ASSERT_EQ(out[i], 2.f * in[i] + 1.f) << "element " << i;
    ASSERT_EQ(got[i].grid_x, static_cast<unsigned>(grid)) << "element " << i;
    ASSERT_EQ(got[i].block_x, static_cast<unsigned>(block)) << "element " << i;
    ASSERT_EQ(got[i].smem, smem) << "element " << i;
  }
  cudaFree(y);
  cudaFree(seen);
  cudaStreamDestroy(s);
}

} // namespace
