// Block-level tree reductions in dynamic (extern) shared memory, as in the
// CUDA samples' reduction kernels: a two-pass float sum (deterministic, no
// float atomics) and an integer minimum combined across blocks with atomicMin.
#include <climits>
#include <cuda_runtime.h>

// Each block sums 2 * blockDim.x consecutive inputs and writes one partial
// sum. blockDim.x must be a power of two; shared memory: blockDim.x floats.
// Running it again on the partials (one block) gives the total.
__global__ void reduce_sum(const float *in, float *partial, int n) {
  extern __shared__ float sdata[];
  const unsigned int tid = threadIdx.x;
  const unsigned int i = blockIdx.x * (blockDim.x * 2) + threadIdx.x;
  const unsigned int count = n > 0 ? static_cast<unsigned int>(n) : 0u;

  float v = 0.0f;
  if (i < count)
    v = in[i];
  if (i + blockDim.x < count)
    v += in[i + blockDim.x];
  sdata[tid] = v;
  __syncthreads();

  for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s)
      sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid == 0)
    partial[blockIdx.x] = sdata[0];
}

// Grid-stride minimum over n ints; one atomicMin per block into *result
// (which the caller initialises to INT_MAX). Shared memory: blockDim.x ints.
__global__ void reduce_min_int(const int *in, int n, int *result) {
  extern __shared__ int smin[];
  const unsigned int tid = threadIdx.x;

  int m = INT_MAX;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += blockDim.x * gridDim.x) {
    const int v = in[i];
    m = v < m ? v : m;
  }
  smin[tid] = m;
  __syncthreads();

  for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s && smin[tid + s] < smin[tid])
      smin[tid] = smin[tid + s];
    __syncthreads();
  }
  if (tid == 0 && smin[0] != INT_MAX)
    atomicMin(result, smin[0]);
}

#if !defined(SMPART_EMULATION)
// Host launchers; not compiled by the CPU emulation.

// Returns the number of partial sums written.
int launch_reduce_sum(const float *in, float *partial, int n, int block,
                      cudaStream_t stream) {
  const int grid = (n + 2 * block - 1) / (2 * block);
  const size_t smem = block * sizeof(float);
  reduce_sum<<<grid, block, smem, stream>>>(in, partial, n);
  return grid;
}

void launch_reduce_sum_final(const float *partial, float *total, int count) {
  // One block folds up to 2 * 512 partial sums.
  reduce_sum<<<1, 512, 512 * sizeof(float)>>>(partial, total, count);
}

void launch_reduce_min_int(const int *in, int n, int *result,
                           cudaStream_t stream) {
  const int block = 256;
  int grid = (n + block - 1) / block;
  if (grid > 120)
    grid = 120;
  if (grid < 1)
    grid = 1;
  reduce_min_int<<<grid, block, block * sizeof(int), stream>>>(in, n, result);
}
#endif
