// RUN: %smpart %s -- %stubflags | FileCheck %s
// A load through a kernel pointer parameter goes through smpart::load with
// the CTA's bypass tag.
#include "cuda.h"

__global__ void copy(const float *x, float *y) {
  y[threadIdx.x] = x[threadIdx.x];
}

// CHECK: {{^}}  y[threadIdx.x] = smpart::load(&x[threadIdx.x], true);
