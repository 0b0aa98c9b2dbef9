// Block identity read inside __device__ helpers rather than in the kernel
// body: linearised 3-D block and thread ids, a last-block test, and a 3-D
// volume kernel indexed with blockIdx.z.
#include <cuda_runtime.h>

__device__ inline unsigned int linear_block_id() {
  return blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
}

__device__ inline unsigned int total_blocks() {
  return gridDim.x * gridDim.y * gridDim.z;
}

__device__ inline unsigned int threads_per_block() {
  return blockDim.x * blockDim.y * blockDim.z;
}

// Calls another helper: the chain must see the same block identity.
__device__ inline unsigned int linear_thread_id() {
  const unsigned int in_block =
      threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  return linear_block_id() * threads_per_block() + in_block;
}

__device__ inline bool is_last_block() {
  return blockIdx.x == gridDim.x - 1 && blockIdx.y == gridDim.y - 1 &&
         blockIdx.z == gridDim.z - 1;
}

// Every thread writes its linear block id; thread 0 of each block writes the
// block's (x, y, z) coordinates; the last block also records the grid size.
__global__ void record_block_ids(unsigned int *thread_block,
                                 unsigned int *block_coords,
                                 unsigned int *grid_info) {
  const unsigned int tid = linear_thread_id();
  thread_block[tid] = linear_block_id();
  if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
    const unsigned int b = linear_block_id();
    block_coords[3 * b + 0] = blockIdx.x;
    block_coords[3 * b + 1] = blockIdx.y;
    block_coords[3 * b + 2] = blockIdx.z;
    if (is_last_block()) {
      grid_info[0] = total_blocks();
      grid_info[1] = threads_per_block();
    }
  }
}

// out = s * in over an nx * ny * nz volume, one thread per voxel on a 3-D
// grid of 3-D blocks.
__global__ void volume_scale3d(const float *in, float *out, int nx, int ny,
                               int nz, float s) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  const int z = blockIdx.z * blockDim.z + threadIdx.z;
  if (x >= nx || y >= ny || z >= nz)
    return;
  const int idx = (z * ny + y) * nx + x;
  out[idx] = s * in[idx];
}

// 7-point Laplacian on a 3-D volume; interior only, boundary set to 0.
__global__ void laplacian3d(const float *in, float *out, int nx, int ny,
                            int nz) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  const int z = blockIdx.z * blockDim.z + threadIdx.z;
  if (x < nx && y < ny && z < nz) {
    const int idx = (z * ny + y) * nx + x;
    if (x == 0 || y == 0 || z == 0 || x == nx - 1 || y == ny - 1 ||
        z == nz - 1) {
      out[idx] = 0.0f;
    } else {
      const int sy = nx;
      const int sz = nx * ny;
      out[idx] = in[idx - 1] + in[idx + 1] + in[idx - sy] + in[idx + sy] +
                 in[idx - sz] + in[idx + sz] - 6.0f * in[idx];
    }
  }
}

// A stage per block picked from a table of device function pointers; the
// one the odd blocks reach reads the block index itself.
typedef unsigned int (*block_stage_t)(unsigned int);
__device__ unsigned int stage_scale(unsigned int v) { return 3u * v; }
__device__ unsigned int stage_offset(unsigned int v) {
  return v + 1000u * linear_block_id();
}
__device__ block_stage_t block_stages[2] = {stage_scale, stage_offset};

__global__ void staged_by_pointer(const unsigned int *in, unsigned int *out,
                                  int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  out[i] = block_stages[blockIdx.x & 1u](in[i]);
}

#if !defined(SMPART_EMULATION)
// Host launchers; not compiled by the CPU emulation.
void launch_record_block_ids(dim3 grid, dim3 block, unsigned int *thread_block,
                             unsigned int *block_coords,
                             unsigned int *grid_info, cudaStream_t stream) {
  record_block_ids<<<grid, block, 0, stream>>>(thread_block, block_coords,
                                               grid_info);
}

void launch_volume_scale3d(const float *in, float *out, int nx, int ny, int nz,
                           float s) {
  dim3 block(8, 8, 4);
  dim3 grid((nx + 7) / 8, (ny + 7) / 8, (nz + 3) / 4);
  volume_scale3d<<<grid, block>>>(in, out, nx, ny, nz, s);
}

void launch_laplacian3d(const float *in, float *out, int nx, int ny, int nz,
                        cudaStream_t stream) {
  const dim3 block(16, 4, 4);
  const dim3 grid((nx + block.x - 1) / block.x, (ny + block.y - 1) / block.y,
                  (nz + block.z - 1) / block.z);
  laplacian3d<<<grid, block, 0, stream>>>(in, out, nx, ny, nz);
}

void launch_staged_by_pointer(const unsigned int *in, unsigned int *out, int n,
                              cudaStream_t stream) {
  staged_by_pointer<<<(n + 127) / 128, 128, 0, stream>>>(in, out, n);
}
#endif
