// RUN: %smpart %s -- %stubflags | FileCheck %s
// A device function that no transformed kernel reaches keeps the builtins.
#include "cuda.h"

__device__ unsigned unused() { return blockIdx.x + gridDim.x; }
__device__ unsigned used() { return blockIdx.x; }

__global__ void k(unsigned *out) { out[threadIdx.x] = used(); }

// CHECK: {{^}}__device__ unsigned unused() { return blockIdx.x + gridDim.x; }
// CHECK-NEXT: {{^}}__device__ unsigned used() { return smpart::blockIdx().x; }
