// Grid-stride loops (the "monolithic vs grid-stride" idiom): kernels launched
// with a fixed, small grid that stride by blockDim * gridDim over data larger
// than the grid, in 1-D and 2-D, plus a kernel with default arguments.
#include <cuda_runtime.h>

__global__ void saxpy_grid_stride(int n, float a, const float *x, float *y) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += blockDim.x * gridDim.x)
    y[i] = a * x[i] + y[i];
}

// data[i] = clamp(data[i] * scale, lo, hi); lo and hi have defaults.
__global__ void scale_clamp(float *data, int n, float scale, float lo = 0.0f,
                            float hi = 1.0f) {
  const int stride = blockDim.x * gridDim.x;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
    data[i] = fminf(fmaxf(data[i] * scale, lo), hi);
}

// 2-D grid-stride copy with a row-sum side product: rows stride by
// blockDim.y * gridDim.y, columns by blockDim.x * gridDim.x.
__global__ void copy2d_grid_stride(const float *in, float *out, int rows,
                                   int cols, int ld_in, int ld_out) {
  for (int r = blockIdx.y * blockDim.y + threadIdx.y; r < rows;
       r += blockDim.y * gridDim.y) {
    for (int c = blockIdx.x * blockDim.x + threadIdx.x; c < cols;
         c += blockDim.x * gridDim.x)
      out[r * ld_out + c] = in[r * ld_in + c];
  }
}

// Counts elements above a threshold; grid-stride loop plus an early return
// for blocks that have nothing to do (more blocks than data).
__global__ void count_above(const float *x, int n, float threshold,
                            unsigned int *count) {
  const int first = blockIdx.x * blockDim.x;
  if (first >= n)
    return;
  unsigned int local = 0;
  for (int i = first + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    local += x[i] > threshold ? 1u : 0u;
  if (local != 0)
    atomicAdd(count, local);
}

#if !defined(SMPART_EMULATION)
// Host launchers; not compiled by the CPU emulation.
void launch_saxpy_grid_stride(int n, float a, const float *x, float *y,
                              cudaStream_t stream) {
  int device = 0;
  int num_sms = 32;
  if (cudaGetDevice(&device) == cudaSuccess)
    cudaDeviceGetAttribute(&num_sms, cudaDevAttrMultiProcessorCount, device);
  saxpy_grid_stride<<<4 * num_sms, 256, 0, stream>>>(n, a, x, y);
}

void launch_scale_clamp(float *data, int n, float scale) {
  scale_clamp<<<48, 256>>>(data, n, scale);
}

void launch_scale_clamp_range(float *data, int n, float scale, float lo,
                              float hi) {
  scale_clamp<<<48, 256>>>(data, n, scale, lo, hi);
}

void launch_copy2d_grid_stride(const float *in, float *out, int rows, int cols,
                               int ld_in, int ld_out) {
  copy2d_grid_stride<<<dim3(8, 8), dim3(32, 4)>>>(in, out, rows, cols, ld_in,
                                                  ld_out);
}

void launch_count_above(const float *x, int n, float threshold,
                        unsigned int *count) {
  count_above<<<64, 128>>>(x, n, threshold, count);
}
#endif
