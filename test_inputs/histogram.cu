// Histograms (Parboil histo style): a 256-bin byte histogram privatised per
// block in shared memory, and a float histogram updated directly in global
// memory. Integer atomics only, so the result is independent of their order.
#include <cuda_runtime.h>

#define HIST_BINS 256

// Grid-stride loop over the input; per-block bins in shared memory are
// merged into the global bins once. Any block and grid size works.
__global__ void histogram256(const unsigned char *data, int n,
                             unsigned int *bins) {
  __shared__ unsigned int local[HIST_BINS];
  for (int b = threadIdx.x; b < HIST_BINS; b += blockDim.x)
    local[b] = 0;
  __syncthreads();

  const int stride = blockDim.x * gridDim.x;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
    atomicAdd(&local[data[i]], 1u);
  __syncthreads();

  for (int b = threadIdx.x; b < HIST_BINS; b += blockDim.x) {
    const unsigned int c = local[b];
    if (c != 0)
      atomicAdd(&bins[b], c);
  }
}

// Histogram of floats over [lo, hi) into nbins global bins. Values outside
// the range are counted in *outliers; NaNs are skipped (early return).
__global__ void histogram_range(const float *values, int n, float lo, float hi,
                                int nbins, int *bins, int *outliers) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  const float v = values[i];
  if (v != v)
    return;
  if (v < lo || v >= hi) {
    atomicAdd(outliers, 1);
    return;
  }
  int b = static_cast<int>((v - lo) / (hi - lo) * nbins);
  b = b < nbins ? b : nbins - 1;
  atomicAdd(&bins[b], 1);
}

#if !defined(SMPART_EMULATION)
// Host launchers; not compiled by the CPU emulation.

// 1-D launch of KERNEL over N items with BLOCK threads on STREAM.
#define HIST_LAUNCH_1D(KERNEL, N, BLOCK, STREAM, ...)                          \
  KERNEL<<<((N) + (BLOCK) - 1) / (BLOCK), (BLOCK), 0, (STREAM)>>>(__VA_ARGS__)

void launch_histogram256(const unsigned char *data, int n, unsigned int *bins,
                         int num_blocks) {
  histogram256<<<num_blocks, 256>>>(data, n, bins);
}

void launch_histogram_range(const float *values, int n, float lo, float hi,
                            int nbins, int *bins, int *outliers,
                            cudaStream_t stream) {
  HIST_LAUNCH_1D(histogram_range, n, 256, stream, values, n, lo, hi, nbins,
                 bins, outliers);
}
#endif
