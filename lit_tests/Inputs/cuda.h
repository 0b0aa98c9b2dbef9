// Minimal CUDA declarations for lit tests parsed with -nocudainc -nocudalib,
// in the manner of clang's own test/SemaCUDA/Inputs/cuda.h. A system
// header, like the toolkit's: bodiless functions declared here are CUDA's.
#pragma once
#pragma clang system_header
#include <stddef.h>

#define __host__ __attribute__((host))
#define __device__ __attribute__((device))
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))
#define __cluster_dims__(...) __attribute__((cluster_dims(__VA_ARGS__)))

struct dim3 {
  unsigned x, y, z;
  __host__ __device__ dim3(unsigned x = 1, unsigned y = 1, unsigned z = 1)
      : x(x), y(y), z(z) {}
};
struct uint3 { unsigned x, y, z; };
struct float4 { float x, y, z, w; };

typedef struct cudaStream *cudaStream_t;
typedef enum cudaError { cudaSuccess } cudaError_t;
extern "C" int cudaConfigureCall(dim3 gridSize, dim3 blockSize,
                                 size_t sharedSize = 0,
                                 cudaStream_t stream = 0);
extern "C" int __cudaPushCallConfiguration(dim3 gridSize, dim3 blockSize,
                                           size_t sharedSize = 0,
                                           cudaStream_t stream = 0);
extern "C" cudaError_t cudaLaunchKernel(const void *func, dim3 gridDim,
                                        dim3 blockDim, void **args,
                                        size_t sharedMem, cudaStream_t stream);

// Device-side launches (dynamic parallelism, -fgpu-rdc) lower to these.
extern "C" __device__ void *cudaGetParameterBuffer(size_t alignment,
                                                  size_t size);
extern "C" __device__ cudaError_t cudaLaunchDevice(void *func, void *params,
                                                  dim3 gridDim, dim3 blockDim,
                                                  unsigned sharedMem,
                                                  cudaStream_t stream);

struct __cuda_builtin_vars_t {
  __device__ operator uint3() const;
  __device__ operator dim3() const;
  unsigned x, y, z;
};
extern const __device__ __cuda_builtin_vars_t threadIdx;
extern const __device__ __cuda_builtin_vars_t blockIdx;
extern const __device__ __cuda_builtin_vars_t blockDim;
extern const __device__ __cuda_builtin_vars_t gridDim;

__device__ void __syncthreads();
__device__ void __syncwarp(unsigned mask = 0xffffffffu);
__device__ int __shfl_down_sync(unsigned mask, int v, unsigned delta,
                                int width = 32);
__device__ unsigned __ballot_sync(unsigned mask, int pred);
__device__ float sqrtf(float);
__device__ int atomicAdd(int *, int);
__device__ float atomicAdd(float *, float);

namespace cooperative_groups {
struct grid_group {
  __device__ void sync();
  __device__ unsigned long long block_rank();
};
struct thread_block {
  __device__ void sync();
  __device__ dim3 group_index();
};
template <unsigned Size> struct thread_block_tile {
  __device__ void sync();
  __device__ int shfl_down(int v, unsigned delta);
};
template <unsigned Size>
__device__ thread_block_tile<Size> tiled_partition(const thread_block &);
struct cluster_group {
  __device__ void sync();
  __device__ unsigned block_rank();
};
__device__ grid_group this_grid();
__device__ thread_block this_thread_block();
__device__ cluster_group this_cluster();
} // namespace cooperative_groups
