// RUN: %smpart %s -- %stubflags | FileCheck %s
// An empty body `{}` gets the prologue and the epilogue at one place.
#include "cuda.h"

__global__ void nothing(int *p) {}

// CHECK: {{^}}__global__ void nothing(smpart::LaunchControl smpart_ctl, int *p) {
// CHECK-NEXT: {{^}}  // smpart: this CTA runs logical blocks until the grid is done or it must yield
// CHECK-NEXT: {{^}}  for (smpart::detail::Cta smpart_cta(smpart_ctl); smpart_cta.next();) {
// CHECK-NEXT: {{^}}    {
// CHECK-NEXT: {{^}}#line [[@LINE-6]] "{{.*}}empty-body.cu"
// CHECK-EMPTY:
// CHECK-NEXT: {{^}}    }
// CHECK-NEXT: {{^}}  }
// CHECK-NEXT: {{^}}#line [[@LINE-10]] "{{.*}}empty-body.cu"
// CHECK-NEXT: {{^}}}
