// REQUIRES: nvcc, cuda-toolkit
// RUN: rm -rf %t && mkdir -p %t
// RUN: %smpart %s -o %t/out.cu --cuda-path=%cuda_path --
// RUN: FileCheck %s < %t/out.cu
// RUN: %nvcc -arch=sm_90 -c -I %runtime_include %t/out.cu -o %t/out.o
// The rewritten launch keeps its C++ meaning: it is still a void
// expression (`return k<<<...>>>(...);` in a void function), and null
// pointer constants passed to pointer parameters (NULL, 0) still convert
// once they are captured.
#include <cuda_runtime.h>
#include <cstddef>

__global__ void scale(float *y, const float *mask, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] *= mask ? mask[i] : 2.0f;
}

void forward(float *y, int n) { return scale<<<(n + 255) / 256, 256>>>(y, NULL, n); }
// CHECK: void forward(float *y, int n) { return smpart::launchRewritten({"scale",
// CHECK-SAME: std::make_tuple(y, nullptr, n)

void zero(float *y, int n) { scale<<<1, 256>>>(y, 0, n); }
// CHECK: void zero(float *y, int n) { smpart::launchRewritten({"scale",
// CHECK-SAME: std::make_tuple(y, nullptr, n)
