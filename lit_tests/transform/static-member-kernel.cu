// RUN: %smpart %s -- %stubflags | FileCheck %s
// A static member kernel defined in its class is rewritten in place.
#include "cuda.h"

struct Ops {
  static __global__ void clear(int *p) { p[threadIdx.x] = 0; }
};

// CHECK: {{^}}  static __global__ void clear(smpart::LaunchControl smpart_ctl, int *p) {
// CHECK-NEXT: {{^}}  // smpart: this CTA runs logical blocks
// CHECK: {{^}} p[threadIdx.x] = 0;
// CHECK: {{^}}};
