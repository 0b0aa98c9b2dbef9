// RUN: %smpart %s -- %stubflags | FileCheck %s
// A kernel that reads only gridDim gets only the logical grid size.
#include "cuda.h"

__global__ void count(unsigned *out) {
  out[threadIdx.x] = gridDim.x;
}

// CHECK: {{^}}  for (smpart::detail::Cta smpart_cta(smpart_ctl); smpart_cta.next();) {
// CHECK-NEXT: {{^}}    const dim3 gridDim = smpart_cta.gridDim();
// CHECK-NEXT: {{^}}    {
// CHECK: {{^}}  out[threadIdx.x] = gridDim.x;
