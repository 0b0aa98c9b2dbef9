// Element-wise vector kernels: SAXPY, vector add and a fused
// scale-and-offset, the simplest memory-bound kernels in GPU sharing studies.
#include <cuda_runtime.h>

// y = a * x + y. Out-of-range threads leave through an early return.
__global__ void saxpy(int n, float a, const float *__restrict__ x,
                      float *__restrict__ y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  y[i] = a * x[i] + y[i];
}

// c = a + b, guarded with an if instead of a return.
__global__ void vector_add(const float *a, const float *b, float *c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    c[i] = a[i] + b[i];
}

// out = x * scale + offset[i % period]; two early returns (bounds and an
// empty offset table).
__global__ void scale_offset(const float *x, const float *offset, int period,
                             float scale, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  if (period <= 0) {
    out[i] = x[i] * scale;
    return;
  }
  out[i] = x[i] * scale + offset[i % period];
}

#if !defined(SMPART_EMULATION)
// Host launchers; not compiled by the CPU emulation.
void launch_saxpy(int n, float a, const float *x, float *y,
                  cudaStream_t stream) {
  const int block = 256;
  const int grid = (n + block - 1) / block;
  saxpy<<<grid, block, 0, stream>>>(n, a, x, y);
}

void launch_vector_add(const float *a, const float *b, float *c, int n) {
  int grid = (n + 127) / 128;
  vector_add<<<grid, 128>>>(a, b, c, n);
}

void launch_scale_offset(const float *x, const float *offset, int period,
                         float scale, float *out, int n) {
  dim3 block(512);
  dim3 grid((n + block.x - 1) / block.x);
  scale_offset<<<grid, block>>>(x, offset, period, scale, out, n);
}
#endif
