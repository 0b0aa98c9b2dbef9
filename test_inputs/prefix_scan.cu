// Exclusive prefix sum of ints (GPU Gems 3, ch. 39, Blelloch work-efficient
// scan): each block scans 2 * blockDim.x elements in dynamic shared memory
// and emits its total; a second pass adds the scanned block totals back.
#include <cuda_runtime.h>

// blockDim.x must be a power of two. Shared memory: 2 * blockDim.x ints.
// block_sums may be null when a single block covers the input.
__global__ void scan_block_exclusive(const int *in, int *out, int *block_sums,
                                     int n) {
  extern __shared__ int temp[];
  const int tid = threadIdx.x;
  const int m = 2 * blockDim.x;
  const int base = blockIdx.x * m;

  temp[2 * tid] = base + 2 * tid < n ? in[base + 2 * tid] : 0;
  temp[2 * tid + 1] = base + 2 * tid + 1 < n ? in[base + 2 * tid + 1] : 0;

  // Up-sweep.
  int offset = 1;
  for (int d = m >> 1; d > 0; d >>= 1) {
    __syncthreads();
    if (tid < d) {
      const int ai = offset * (2 * tid + 1) - 1;
      const int bi = offset * (2 * tid + 2) - 1;
      temp[bi] += temp[ai];
    }
    offset *= 2;
  }

  if (tid == 0) {
    if (block_sums)
      block_sums[blockIdx.x] = temp[m - 1];
    temp[m - 1] = 0;
  }

  // Down-sweep.
  for (int d = 1; d < m; d *= 2) {
    offset >>= 1;
    __syncthreads();
    if (tid < d) {
      const int ai = offset * (2 * tid + 1) - 1;
      const int bi = offset * (2 * tid + 2) - 1;
      const int t = temp[ai];
      temp[ai] = temp[bi];
      temp[bi] += t;
    }
  }
  __syncthreads();

  if (base + 2 * tid < n)
    out[base + 2 * tid] = temp[2 * tid];
  if (base + 2 * tid + 1 < n)
    out[base + 2 * tid + 1] = temp[2 * tid + 1];
}

// out[i] += scanned_sums[block of i]; elements per block = 2 * blockDim.x.
__global__ void scan_add_offsets(int *out, const int *scanned_sums, int n) {
  const int i = blockIdx.x * (2 * blockDim.x) + threadIdx.x;
  const int add = scanned_sums[blockIdx.x];
  if (i < n)
    out[i] += add;
  if (i + static_cast<int>(blockDim.x) < n)
    out[i + blockDim.x] += add;
}

#if !defined(SMPART_EMULATION)
// Host launchers; not compiled by the CPU emulation.

// First pass; returns the number of block sums written.
int launch_scan_block_exclusive(const int *in, int *out, int *block_sums, int n,
                                int block, cudaStream_t stream) {
  const int per_block = 2 * block;
  const int grid = (n + per_block - 1) / per_block;
  scan_block_exclusive<<<grid, block, per_block * sizeof(int), stream>>>(
      in, out, block_sums, n);
  return grid;
}

void launch_scan_add_offsets(int *out, const int *scanned_sums, int n,
                             int block, cudaStream_t stream) {
  const int grid = (n + 2 * block - 1) / (2 * block);
  scan_add_offsets<<<grid, block, 0, stream>>>(out, scanned_sums, n);
}
#endif
