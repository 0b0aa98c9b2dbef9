// RUN: %smpart %s -- %stubflags | FileCheck %s
// A kernel that reads blockIdx gets the logical index as a local that
// shadows the builtin; gridDim, unused, gets no local.
#include "cuda.h"

__global__ void copy(const int *x, int *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  y[i] = 1;
}

// CHECK: {{^}}  for (smpart::detail::Cta smpart_cta(smpart_ctl); smpart_cta.next();) {
// CHECK-NEXT: {{^}}    const uint3 blockIdx = smpart_cta.blockIdx();
// CHECK-NEXT: {{^}}    {
// CHECK: {{^}}  int i = blockIdx.x * blockDim.x + threadIdx.x;
