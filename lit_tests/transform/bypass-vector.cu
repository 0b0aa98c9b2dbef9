// RUN: %smpart %s -- %stubflags | FileCheck %s
// Vector types (float4, ...) are loaded whole through smpart::load.
#include "cuda.h"

__global__ void vec(const float4 *v, float *y) {
  float4 f = v[threadIdx.x];
  y[threadIdx.x] = f.x + f.w;
}

// CHECK: {{^}}  float4 f = smpart::load(&v[threadIdx.x], true);
