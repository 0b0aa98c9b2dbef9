// RUN: %smpart %s -- %stubflags | FileCheck %s
// A pointer cast of a global pointer still points to global memory.
#include "cuda.h"

__global__ void reinterpret(const float *x, int *y) {
  const int *bits = (const int *)x;
  y[threadIdx.x] = bits[threadIdx.x];
}

// CHECK: {{^}}  y[threadIdx.x] = smpart::load(&bits[threadIdx.x], true);
