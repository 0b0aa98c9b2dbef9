// RUN: %smpart %s -- %stubflags | FileCheck %s
// `__shared__` and local arrays are not global memory: their loads stay.
#include "cuda.h"

__global__ void tiles(float *y) {
  __shared__ float tile[32];
  float local[4] = {1, 2, 3, 4};
  float *sp = tile;
  tile[threadIdx.x] = threadIdx.x;
  __syncthreads();
  y[threadIdx.x] = tile[31 - threadIdx.x] + local[threadIdx.x & 3] + sp[0];
}

// The kernel is transformed; its loads are not.
// CHECK: {{^}}__global__ void tiles(smpart::LaunchControl smpart_ctl, float *y) {
// CHECK: {{^}}  y[threadIdx.x] = tile[31 - threadIdx.x] + local[threadIdx.x & 3] + sp[0];
