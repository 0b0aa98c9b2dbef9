#include <cuda_runtime.h>
#include "scale.cuh"
__global__ void saxpy_b(int n, const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] += scaled(x[i]);
}
void run_b(int n, const float *x, float *y) { saxpy_b<<<(n + 255) / 256, 256>>>(n, x, y); }
