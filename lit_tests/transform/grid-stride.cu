// RUN: %smpart %s -- %stubflags | FileCheck %s
// A grid-stride loop strides by the logical grid, so it stays correct when
// fewer CTAs run than the launch asked for.
#include "cuda.h"

__global__ void add(int n, const float *x, float *y) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += blockDim.x * gridDim.x)
    y[i] += 1.0f;
}

// CHECK: {{^}}    const uint3 blockIdx = smpart_cta.blockIdx();
// CHECK-NEXT: {{^}}    const dim3 gridDim = smpart_cta.gridDim();
// CHECK: {{^}}  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
// CHECK-NEXT: {{^}}       i += blockDim.x * gridDim.x)
