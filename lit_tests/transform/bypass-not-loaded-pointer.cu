// RUN: %smpart %s -- %stubflags | FileCheck %s
// A pointer loaded from memory may point anywhere (shared, local): loads
// through it are left alone.
#include "cuda.h"

__global__ void indirect(float **table, float *y) {
  float *row = table[blockIdx.x];
  y[threadIdx.x] = row[threadIdx.x];
}

// CHECK: {{^}}  float *row = table[blockIdx.x];
// CHECK-NEXT: {{^}}  y[threadIdx.x] = row[threadIdx.x];
