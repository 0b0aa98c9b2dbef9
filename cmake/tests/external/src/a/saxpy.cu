#include "ext/scale.cuh"
#ifndef EXT_FACTOR
#error "EXT_FACTOR must come from target_compile_definitions"
#endif
#if EXT_A != 1 || EXT_B != 2
#error "the list-valued generator expression was split"
#endif
namespace a {
__global__ void saxpy(int n, float k, const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = EXT_SCALE(k) * x[i] + y[i];
}
void run(int n, const float *x, float *y) {
  saxpy<<<(n + 255) / 256, 256>>>(n, 2.0f, x, y);
}
} // namespace a
