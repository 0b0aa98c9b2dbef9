// RUN: %smpart %s -- %stubflags | FileCheck %s
// Code under `#ifdef __CUDA_ARCH__` is seen by the device-side parse only;
// its `return` and gridDim use are still handled, which shows the facts of
// both parses are merged.
#include "cuda.h"

__global__ void guarded(int n, unsigned *p) {
  int i = threadIdx.x;
#ifdef __CUDA_ARCH__
  if (i >= n) return;
  p[i] = gridDim.x;
#endif
}

// CHECK: {{^}}    const dim3 gridDim = smpart_cta.gridDim();
// CHECK: {{^}}  if (i >= n) goto smpart_next_block;
// CHECK-NEXT: {{^}}  p[i] = gridDim.x;
// CHECK: {{^}}    } smpart_next_block:;
