// RUN: %smpart %s -- %stubflags | FileCheck %s
// The body runs once per logical block inside the persistent loop; a kernel
// that reads neither blockIdx nor gridDim gets neither local.
#include "cuda.h"

__global__ void zero(float *y) {
  y[threadIdx.x] = 0.0f;
}

// CHECK: {{^}}__global__ void zero(smpart::LaunchControl smpart_ctl, float *y) {
// CHECK-NEXT: {{^}}  // smpart: this CTA runs logical blocks until the grid is done or it must yield
// CHECK-NEXT: {{^}}  for (smpart::detail::Cta smpart_cta(smpart_ctl); smpart_cta.next();) {
// CHECK-NEXT: {{^}}    {
// CHECK-NEXT: {{^}}#line
// CHECK-EMPTY:
// CHECK-NEXT: {{^}}  y[threadIdx.x] = 0.0f;
// CHECK-EMPTY:
// CHECK-NEXT: {{^}}    }
// CHECK-NEXT: {{^}}  }
// CHECK-NEXT: {{^}}#line
// CHECK-NEXT: {{^}}}
