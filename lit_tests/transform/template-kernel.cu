// RUN: %smpart %s -- %stubflags | FileCheck %s
// A kernel template is rewritten once, in its pattern, however many times
// it is instantiated; explicit instantiations name the new parameter list.
#include "cuda.h"

template <typename T> __global__ void fill(T *p, T v) {
  p[blockIdx.x] = v;
}

template __global__ void fill<int>(int *, int);
template __global__ void fill<float>(float *, float);

// CHECK: {{^}}template <typename T> __global__ void fill(smpart::LaunchControl smpart_ctl, T *p, T v) {
// CHECK-NEXT: {{^}}  // smpart: this CTA
// CHECK-NEXT: {{^}}  for (smpart::detail::Cta smpart_cta(smpart_ctl); smpart_cta.next();) {
// CHECK-NEXT: {{^}}    const uint3 blockIdx = smpart_cta.blockIdx();
// CHECK-NEXT: {{^}}    {
// CHECK-NEXT: {{^}}#line [[@LINE-12]]
// CHECK-EMPTY:
// CHECK-NEXT: {{^}}  p[blockIdx.x] = v;
// CHECK-EMPTY:
// CHECK-NEXT: {{^}}    }{{$}}
// CHECK-NEXT: {{^}}  }{{$}}
// CHECK-NEXT: {{^}}#line [[@LINE-16]]
// CHECK-NEXT: {{^}}}{{$}}
// CHECK-EMPTY:
// CHECK-NEXT: {{^}}template __global__ void fill<int>(smpart::LaunchControl smpart_ctl, int *, int);
// CHECK-NEXT: {{^}}template __global__ void fill<float>(smpart::LaunchControl smpart_ctl, float *, float);
