// RUN: %smpart %s -o %t.cu -- %stubflags 2>&1 | FileCheck --check-prefix=WARN %s
// RUN: FileCheck %s < %t.cu
// A device function that reads blockIdx serves either only transformed
// kernels or none: a transformed caller of a function that a refused kernel
// also calls is refused too.
#include "cuda.h"

__device__ unsigned row() { return blockIdx.x; }
__global__ void plain(unsigned *p) { p[row()] = 1; }
__global__ void synced(unsigned *p) {
  p[row()] = 2;
  cooperative_groups::this_grid().sync();
}
// WARN: {{^}}{{.*}}shared-device-function.cu:[[@LINE-5]]:17: warning: smpart: kernel 'plain' not transformed: calls 'row', which reads blockIdx/gridDim and is also called from kernel 'synced', which is not transformed
// WARN-NEXT: {{^}}{{.*}}shared-device-function.cu:[[@LINE-7]]:21: note: 'row' declared here

// CHECK: {{^}}__device__ unsigned row() { return blockIdx.x; }
// CHECK-NEXT: {{^}}__global__ void plain(unsigned *p) { p[row()] = 1; }
