// RUN: %smpart %s -- %stubflags | FileCheck %s
// All three dimensions are logical: the locals are whole uint3/dim3 values,
// and uses of .y and .z are left as written.
#include "cuda.h"

__global__ void volume(float *v) {
  unsigned plane = blockIdx.z * gridDim.y + blockIdx.y;
  v[plane * gridDim.x + blockIdx.x] = 1.0f;
}

// CHECK: {{^}}    const uint3 blockIdx = smpart_cta.blockIdx();
// CHECK-NEXT: {{^}}    const dim3 gridDim = smpart_cta.gridDim();
// CHECK: {{^}}  unsigned plane = blockIdx.z * gridDim.y + blockIdx.y;
// CHECK-NEXT: {{^}}  v[plane * gridDim.x + blockIdx.x] = 1.0f;
