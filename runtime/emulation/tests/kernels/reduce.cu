// Emulation test kernels (original form). reduce.smpart.cu is this file as
// smpart-transform rewrites it, kept so the emulation tests do not depend
// on building the tool.
#include <cuda_runtime.h>

// Reads the block index from a device function (rewritten to
// smpart::blockIdx()/smpart::gridDim()).
__device__ unsigned tileId() { return blockIdx.y * gridDim.x + blockIdx.x; }

// 2-D grid, shared memory, barriers, an early return after the last
// barrier, atomics.
__global__ void rowSums(const float *in, float *out, float *total, int width,
                        int height) {
  __shared__ float partial[64];
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y;
  partial[threadIdx.x] = (x < width && y < height) ? in[y * width + x] : 0.f;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s)
      partial[threadIdx.x] += partial[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x != 0)
    return;
  out[tileId()] = partial[0];
  atomicAdd(total, partial[0]);
}

// 3-D grid, warp shuffle, early return.
__global__ void smooth3d(const float *in, float *out, int nx, int ny,
                         int /*nz*/) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int i = (blockIdx.z * ny + blockIdx.y) * nx + x;
  const float v = x < nx ? in[i] : 0.f;
  const float right = __shfl_down_sync(0xffffffffu, v, 1);
  if (x >= nx)
    return;
  out[i] = v + 0.5f * right + static_cast<float>(blockIdx.z);
}

#if !defined(SMPART_EMULATION)
void runReduce(const float *in, float *out, float *total, int width, int height,
               cudaStream_t s) {
  rowSums<<<dim3((width + 63) / 64, height), 64, 0, s>>>(in, out, total, width,
                                                         height);
}
#endif
