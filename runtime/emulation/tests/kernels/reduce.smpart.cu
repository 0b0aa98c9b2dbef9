// reduce.cu as smpart-transform rewrites it (format of the tool's output,
// #line directives dropped). rowSums is rewritten by hand: the tool refuses
// it today (it treats the loop's barrier as reachable after the early
// return), but the rewrite below is what the contract requires, and the
// emulation checks it against the original. Its device function tileId()
// reads smpart::blockIdx(), so it publishes each block (PublishingCta).
#include "smpart/device.cuh"
#include "smpart/runtime.hpp"
#include <cuda_runtime.h>

__device__ unsigned tileId() {
  return smpart::blockIdx().y * smpart::gridDim().x + smpart::blockIdx().x;
}

__global__ void rowSums(smpart::LaunchControl smpart_ctl, const float *in,
                        float *out, float *total, int width, int height) {
  // smpart: this CTA runs logical blocks until the grid is done or it must
  // yield
  for (smpart::detail::PublishingCta smpart_cta(smpart_ctl);
       smpart_cta.next();) {
    const uint3 blockIdx = smpart_cta.blockIdx();
    {
      __shared__ float partial[64];
      const int x = blockIdx.x * blockDim.x + threadIdx.x;
      const int y = blockIdx.y;
      partial[threadIdx.x] =
          (x < width && y < height)
              ? smpart::load(&in[y * width + x], smpart_cta.bypass())
              : 0.f;
      __syncthreads();
      for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s)
          partial[threadIdx.x] += partial[threadIdx.x + s];
        __syncthreads();
      }
      if (threadIdx.x != 0)
        goto smpart_next_block;
      out[tileId()] = partial[0];
      atomicAdd(total, partial[0]);
    }
  smpart_next_block:;
  }
}

__global__ void smooth3d(smpart::LaunchControl smpart_ctl, const float *in,
                         float *out, int nx, int ny, int /*nz*/) {
  // smpart: this CTA runs logical blocks until the grid is done or it must
  // yield
  for (smpart::detail::Cta smpart_cta(smpart_ctl); smpart_cta.next();) {
    const uint3 blockIdx = smpart_cta.blockIdx();
    {
      const int x = blockIdx.x * blockDim.x + threadIdx.x;
      const int i = (blockIdx.z * ny + blockIdx.y) * nx + x;
      const float v = x < nx ? smpart::load(&in[i], smpart_cta.bypass()) : 0.f;
      const float right = __shfl_down_sync(0xffffffffu, v, 1);
      if (x >= nx)
        goto smpart_next_block;
      out[i] = v + 0.5f * right + static_cast<float>(blockIdx.z);
    }
  smpart_next_block:;
  }
}

#if !defined(SMPART_EMULATION)
void runReduce(const float *in, float *out, float *total, int width, int height,
               cudaStream_t s) {
  smpart::launch({"rowSums", reinterpret_cast<const void *>(&rowSums)},
                 dim3((width + 63) / 64, height), 64, 0, s,
                 [smpart_args = std::make_tuple(in, out, total, width, height)](
                     const smpart::LaunchParams &smpart_p) {
                   std::apply(
                       [&](const auto &...smpart_a) {
                         rowSums<<<smpart_p.grid, smpart_p.block, smpart_p.smem,
                                   smpart_p.stream>>>(smpart_p.ctl,
                                                      smpart_a...);
                       },
                       smpart_args);
                 });
}
#endif
