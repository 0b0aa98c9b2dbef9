// RUN: %smpart %s -- %stubflags | FileCheck %s
// An early `return` ends the current logical block only: it becomes a jump
// to the end of the loop body, where the label is emitted.
#include "cuda.h"

__global__ void saxpy(int n, float a, const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  y[i] = a * x[i];
}
// CHECK: {{^}}__global__ void saxpy(smpart::LaunchControl smpart_ctl, int n,
// CHECK: {{^}}  for (smpart::detail::Cta smpart_cta(smpart_ctl); smpart_cta.next();) {
// CHECK: {{^}}  if (i >= n) goto smpart_next_block;
// CHECK-NOT: {{^}}  if (i >= n) return;
// CHECK: {{^}}    } smpart_next_block:;
