#include <cuda_runtime.h>
#include "local.cuh"
#include "scale.cuh"
__global__ void saxpy_a(int n, const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  y[i] = scaled(x[i]) + offset();
}
void run_a(int n, const float *x, float *y) { saxpy_a<<<(n + 255) / 256, 256>>>(n, x, y); }
